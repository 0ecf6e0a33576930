"""Repair mode: fix what providers reject instead of raising, and report every fix.

Without repair, a history that a provider would reject raises
:class:`~pycupel.errors.MessageFormatError` naming the location. ``fit_messages(...,
repair=True)`` fixes it instead, and every fix is an exclusion in the report with reason
``Filtered``:

* an **orphaned tool result** (a result answering no earlier, still open call): its message is
  left out, reported as ``Filtered("orphan-tool-result")`` (a message holding other content
  beside the orphan goes with it; a call it also answered is then unanswered, see below);
* **calls left unanswered** (at the end of the history, or anywhere): their unit is left out,
  reported as ``Filtered("unanswered-tool-call")``;
* a **leading assistant turn** where the format needs a user turn first (Anthropic, Gemini):
  left out, reported as ``Filtered("start-with-user")``;
* **consecutive same-role turns** where the format forbids them (Gemini): merged into one turn.

Duplicate call ids and malformed messages are not guessed at: they still raise.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pycupel._checks import check_bool
from pycupel.conversation.grouping import build_units
from pycupel.conversation.parsed import ParsedMessage, message_tokens
from pycupel.conversation.units import MessageUnit
from pycupel.diagnostics import ExcludedItem, Filtered
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextItem, ContextKind, ContextSource
from pycupel.tokens import TokenCounter

__all__ = ["ORPHAN_FILTER", "drop_orphans", "group_units"]

ORPHAN_FILTER = "orphan-tool-result"
"""``Filtered.filter_name`` of messages left out because a tool result in them is orphaned."""


def drop_orphans(
    parsed: Sequence[ParsedMessage],
) -> tuple[list[ParsedMessage], list[ParsedMessage]]:
    """Split messages into the kept ones and those holding a result that answers no open call.

    A call is open from the message issuing it until its first answer; a second answer to the
    same call is an orphan too.
    """
    open_calls: set[str] = set()
    kept: list[ParsedMessage] = []
    dropped: list[ParsedMessage] = []
    for message in parsed:
        if any(answer.call_id not in open_calls for answer in message.answers):
            dropped.append(message)
            continue
        for answer in message.answers:
            open_calls.discard(answer.call_id)
        open_calls.update(call.call_id for call in message.calls)
        kept.append(message)
    return kept, dropped


def group_units(
    parsed: Sequence[ParsedMessage],
    *,
    repair: bool,
    source: str,
    counter: TokenCounter,
    message_count: int,
    pin_system: bool,
    pin_latest_user: bool,
    timestamps: Sequence[datetime] | None,
    allow_unanswered: bool,
) -> tuple[tuple[MessageUnit, ...], tuple[ExcludedItem, ...]]:
    """:func:`~pycupel.conversation.units.build_units`, or with ``repair`` the units of the
    messages left after dropping orphaned results (unanswered calls then allowed, flagged for
    :func:`~pycupel.conversation.fit.fit_units` to filter) and the exclusions reporting the
    dropped messages."""
    check_bool(PipelineConfigError, "repair", repair)
    if not repair:
        plain = build_units(
            parsed,
            source=source,
            counter=counter,
            message_count=message_count,
            pin_system=pin_system,
            pin_latest_user=pin_latest_user,
            timestamps=timestamps,
            allow_unanswered=allow_unanswered,
        )
        return plain, ()
    kept, dropped = drop_orphans(parsed)
    units = build_units(
        kept,
        source=source,
        counter=counter,
        message_count=message_count,
        pin_system=pin_system,
        pin_latest_user=pin_latest_user,
        timestamps=timestamps,
        allow_unanswered=True,
    )
    if not dropped:
        return units, ()
    tokens = message_tokens(dropped, counter)
    excluded = tuple(
        ExcludedItem(_dropped_item(message, count), 0.0, Filtered(ORPHAN_FILTER))
        for message, count in zip(dropped, tokens, strict=True)
    )
    return units, excluded


def _dropped_item(message: ParsedMessage, tokens: int) -> ContextItem:
    indices = () if message.index is None else (message.index,)
    return ContextItem(
        message.rendered(),
        tokens=tokens,
        kind=ContextKind.TOOL_OUTPUT,
        source=ContextSource.TOOL,
        tags={f"role:{message.role}": None, "orphan-tool-result": None},
        metadata={"message_indices": indices, "roles": (message.role,)},
    )
