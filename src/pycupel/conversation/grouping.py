"""Grouping parsed messages into units, and each unit's candidate item.

* **Grouping.** Every message from one issuing a tool call up to the one answering it forms
  one unit (overlapping spans merge), so the output is a sequence of whole input spans.
* **Checking the pairing.** A result for a call never issued (or already answered), and a
  call id used twice, raise :class:`~pycupel.errors.MessageFormatError` naming the location;
  an unanswered call too, unless the caller allows it.
* **Items.** A unit's item holds the rendered text of its messages, the counted text plus
  the format's fixed costs as its tokens, and a timestamp that follows the message order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from datetime import datetime, timedelta
from itertools import accumulate, repeat
from types import MappingProxyType
from typing import NamedTuple, cast

from pycupel.conversation.parsed import CallRef, ParsedMessage, message_tokens
from pycupel.conversation.units import SYNTHETIC_EPOCH, MessageUnit
from pycupel.conversation.validate import fail
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextItem, ContextKind, ContextSource, utc_micros
from pycupel.tokens import TokenCounter

__all__ = ["build_units", "make_unit"]

_STEP = timedelta(seconds=1)

# --------------------------------------------------------------------------- building


def build_units(
    parsed: Sequence[ParsedMessage],
    *,
    source: str,
    counter: TokenCounter,
    message_count: int,
    pin_system: bool,
    pin_latest_user: bool,
    timestamps: Sequence[datetime] | None,
    allow_unanswered: bool,
) -> tuple[MessageUnit, ...]:
    """Group parsed messages into units and build their items.

    Args:
        parsed: the messages in conversation order (a system prompt passed beside the list,
            if any, first, with ``index=None``).
        source: names the input in error messages (``"openai messages"``).
        counter: counts the text of every message in one batch call.
        message_count: length of the provider's message list (for ``timestamps``).
        pin_system: pin units holding a system/developer message.
        pin_latest_user: pin the unit holding the latest user turn.
        timestamps: one aware datetime per message of the provider's list, or None for
            synthetic, strictly increasing ones.
        allow_unanswered: keep units with unanswered tool calls instead of raising.
    """
    stamps = _message_timestamps(timestamps, message_count)
    spans, unanswered = _pair_tool_calls(parsed, source=source, allow_unanswered=allow_unanswered)
    tokens = message_tokens(parsed, counter)
    latest_user = max(
        (position for position, message in enumerate(parsed) if message.user_turn), default=-1
    )
    maker = _UnitMaker(stamps, pin_system)
    units: list[MessageUnit] = []
    start = 0
    end = -1
    last = len(parsed) - 1
    for position, message in enumerate(parsed):
        if position > end:
            start = end = position
        if spans:
            end = max(end, spans.get(position, position))
        if message.joins_next and position < last and position + 1 > end:
            end = position + 1
        if position != end:
            continue
        pinned_user = pin_latest_user and start <= latest_user <= end
        if start == end and not message.tool_names and position not in unanswered:
            # The common unit: one message, no tool involved.
            units.append(maker.single(message, tokens[position], pinned_user))
        else:
            units.append(
                maker.unit(
                    parsed[start : end + 1],
                    sum(tokens[start : end + 1]),
                    pinned_user,
                    _unanswered_in(unanswered, start, end) if unanswered else (),
                )
            )
    return tuple(units)


def _unanswered_in(unanswered: dict[int, list[str]], start: int, end: int) -> tuple[str, ...]:
    return tuple(
        call_id for position in range(start, end + 1) for call_id in unanswered.get(position, ())
    )


def _pair_tool_calls(
    parsed: Sequence[ParsedMessage], *, source: str, allow_unanswered: bool
) -> tuple[dict[int, int], dict[int, list[str]]]:
    """Check that calls and results pair up one to one, in order.

    Returns ``spans`` (position of a message issuing calls -> last position answering one of
    them) and ``unanswered`` (position -> ids of its calls nobody answers).
    """
    open_calls: dict[str, tuple[int, CallRef]] = {}
    answered: dict[str, str] = {}
    issued: dict[str, str] = {}
    spans: dict[int, int] = {}
    unanswered: dict[int, list[str]] = {}
    for position, message in enumerate(parsed):
        # Answers first: a message can never answer a call it issues itself.
        for answer in message.answers:
            opened = open_calls.pop(answer.call_id, None)
            if opened is not None:
                call_position = opened[0]
                spans[call_position] = max(spans.get(call_position, call_position), position)
                answered[answer.call_id] = answer.location
            elif answer.call_id in answered:
                fail(
                    source,
                    answer.location,
                    f"answers tool call {answer.call_id!r} a second time "
                    f"(already answered at {answered[answer.call_id]})",
                )
            else:
                fail(
                    source,
                    answer.location,
                    f"tool result for {answer.call_id!r} does not answer any earlier tool call "
                    f"(orphaned tool result; providers reject it)",
                )
        for call in message.calls:
            if call.call_id in issued:
                fail(
                    source,
                    call.location,
                    f"tool call id {call.call_id!r} is used twice "
                    f"(first at {issued[call.call_id]}); ids must be unique in a history",
                )
            issued[call.call_id] = call.location
            open_calls[call.call_id] = (position, call)
    for call_id, (position, call) in open_calls.items():
        if not allow_unanswered:
            fail(
                source,
                call.location,
                f"tool call {call_id!r} ({call.name}) has no tool result later in the history; "
                f"providers reject unanswered tool calls",
            )
        unanswered.setdefault(position, []).append(call_id)
    return spans, unanswered


class _Stamps(NamedTuple):
    """Each message's timestamp in UTC and in microseconds, and the oldest one."""

    utc: list[datetime]
    micros: list[int]
    oldest: datetime
    oldest_micros: int


def _message_timestamps(timestamps: object, count: int) -> _Stamps:
    if timestamps is None:
        # Synthetic: strictly increasing seconds after the epoch, computed exactly.
        epoch, epoch_micros = utc_micros(SYNTHETIC_EPOCH)
        return _Stamps(
            # One second after another (exact datetime arithmetic, summed in C).
            cast("list[datetime]", list(accumulate(repeat(_STEP, count), initial=epoch))[1:]),
            list(
                range(epoch_micros + 1_000_000, epoch_micros + 1_000_000 * (count + 1), 1_000_000)
            ),
            epoch,
            epoch_micros,
        )
    if isinstance(timestamps, str | bytes) or not isinstance(timestamps, Sequence):
        raise PipelineConfigError("timestamps", timestamps, "must be a sequence of datetimes")
    if len(timestamps) != count:
        raise PipelineConfigError(
            "timestamps",
            f"<{len(timestamps)} timestamps>",
            f"must hold exactly one timestamp per message ({count})",
        )
    utc: list[datetime] = []
    micros: list[int] = []
    for index, stamp in enumerate(timestamps):
        if not isinstance(stamp, datetime):
            raise PipelineConfigError(f"timestamps[{index}]", stamp, "must be a datetime")
        if stamp.tzinfo is None or stamp.utcoffset() is None:
            raise PipelineConfigError(
                f"timestamps[{index}]", stamp, "must be timezone-aware (naive times are ambiguous)"
            )
        try:
            converted, stamp_micros = utc_micros(stamp)
        except OverflowError as exc:
            raise PipelineConfigError(
                f"timestamps[{index}]", stamp, "must be representable in UTC (within year 1..9999)"
            ) from exc
        utc.append(converted)
        micros.append(stamp_micros)
    if not micros:
        epoch, epoch_micros = utc_micros(SYNTHETIC_EPOCH)
        return _Stamps(utc, micros, epoch, epoch_micros)
    # A system prompt beside the list is the oldest part of the conversation.
    first = micros.index(min(micros))
    return _Stamps(utc, micros, utc[first], micros[first])


class _UnitMaker:
    """Builds the units of one conversion: the item fields shared by many units are made once.

    The items are built with :meth:`ContextItem._prevalidated`: every field comes from a
    validated message, a checked count or a checked timestamp.
    """

    __slots__ = ("_pin_system", "_role_fields", "_stamps")

    def __init__(self, stamps: _Stamps, pin_system: bool) -> None:
        self._stamps = stamps
        self._pin_system = pin_system
        # role -> (its tags, its roles tuple): equal immutable tuples shared by many items.
        self._role_fields: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def _timestamp(self, indices: Sequence[int]) -> tuple[datetime, int]:
        # A unit is as recent as its latest message.
        stamps = self._stamps
        if not indices:
            return stamps.oldest, stamps.oldest_micros
        micros = stamps.micros
        latest = indices[0]
        for index in indices[1:]:
            if micros[index] > micros[latest]:
                latest = index
        return stamps.utc[latest], micros[latest]

    def single(self, message: ParsedMessage, tokens: int, pinned_user: bool) -> MessageUnit:
        """The unit of one message that neither issues nor answers a tool call."""
        role = message.role
        fields = self._role_fields.get(role)
        if fields is None:
            fields = self._role_fields[role] = ((f"role:{role}",), (role,))
        tags, roles = fields
        index = message.index
        stamps = self._stamps
        if index is None:
            indices: tuple[int, ...] = ()
            timestamp, micros = stamps.oldest, stamps.oldest_micros
        else:
            indices = (index,)
            timestamp, micros = stamps.utc[index], stamps.micros[index]
        system = message.category == "system"
        if system:
            kind, source = ContextKind.SYSTEM_PROMPT, ContextSource.CHAT
        elif message.answers:
            kind, source = ContextKind.TOOL_OUTPUT, ContextSource.TOOL
        else:
            kind, source = ContextKind.MESSAGE, ContextSource.CHAT
        item = ContextItem._prevalidated(
            message.rendered(),
            tokens=tokens,
            kind=kind,
            source=source,
            tags=tags,
            metadata=MappingProxyType({"message_indices": indices, "roles": roles}),
            timestamp=timestamp,
            timestamp_micros=micros,
            pinned=(self._pin_system and system) or pinned_user or message.anchor,
        )
        calls = message.calls
        # _new_unit, inlined: this runs once per message.
        unit = object.__new__(MessageUnit)
        _unit_item(unit, item)
        _unit_indices(unit, indices)
        _unit_roles(unit, roles)
        _unit_system_parameter(unit, index is None)
        _unit_call_ids(unit, tuple([call.call_id for call in calls]) if calls else ())
        _unit_unanswered(unit, ())
        _unit_user_text(unit, message.text if message.user_turn else "")
        return unit

    def unit(
        self,
        messages: Sequence[ParsedMessage],
        tokens: int,
        pinned_user: bool,
        unanswered: tuple[str, ...],
    ) -> MessageUnit:
        """The unit of any span of messages (a tool call with its results, say)."""
        indices = tuple(message.index for message in messages if message.index is not None)
        return _span_unit(
            messages,
            tokens,
            self._timestamp(indices),
            pin_system=self._pin_system,
            pinned_user=pinned_user,
            unanswered=unanswered,
        )


def make_unit(
    messages: Sequence[ParsedMessage],
    message_token_counts: Sequence[int],
    stamps: Sequence[datetime],
    oldest: datetime,
    *,
    pinned_user: bool,
    pin_system: bool,
    unanswered: tuple[str, ...],
) -> MessageUnit:
    """The unit of ``messages``, stamped from ``stamps`` (one aware datetime per message index).

    For builders that keep their own list of timestamps (the incremental session).
    """
    indices = [message.index for message in messages if message.index is not None]
    # A unit is as recent as its latest message.
    latest = max((stamps[index] for index in indices), default=oldest)
    return _span_unit(
        messages,
        sum(message_token_counts),
        utc_micros(latest),
        pin_system=pin_system,
        pinned_user=pinned_user,
        unanswered=unanswered,
    )


def _span_unit(
    messages: Sequence[ParsedMessage],
    tokens: int,
    stamp: tuple[datetime, int],
    *,
    pin_system: bool,
    pinned_user: bool,
    unanswered: tuple[str, ...],
) -> MessageUnit:
    """The unit of a span of messages whose tokens and UTC timestamp are known."""
    indices: list[int] = []
    tags: dict[str, None] = {}  # an insertion-ordered set
    all_system = True
    has_system = has_answers = system_parameter = anchor = False
    user_text = ""
    for message in messages:
        if message.user_turn:
            user_text = message.text
        if message.index is None:
            system_parameter = True
        else:
            indices.append(message.index)
        tags[f"role:{message.role}"] = None
        for name in message.tool_names:
            tags[f"tool:{name}"] = None
        if message.category == "system":
            has_system = True
        else:
            all_system = False
        if message.answers:
            has_answers = True
        anchor = anchor or message.anchor
    if unanswered:
        tags["unanswered-tool-call"] = None

    if all_system:
        kind, source = ContextKind.SYSTEM_PROMPT, ContextSource.CHAT
    elif has_answers:
        kind, source = ContextKind.TOOL_OUTPUT, ContextSource.TOOL
    else:
        kind, source = ContextKind.MESSAGE, ContextSource.CHAT
    roles = tuple(message.role for message in messages)
    index_tuple = tuple(indices)
    timestamp, micros = stamp
    item = ContextItem._prevalidated(
        "\n\n".join(message.rendered() for message in messages),
        tokens=tokens,
        kind=kind,
        source=source,
        tags=tuple(tags),
        metadata=MappingProxyType({"message_indices": index_tuple, "roles": roles}),
        timestamp=timestamp,
        timestamp_micros=micros,
        pinned=(pin_system and has_system) or pinned_user or anchor,
    )
    return MessageUnit(
        item=item,
        message_indices=index_tuple,
        roles=roles,
        system_parameter=system_parameter,
        call_ids=tuple(call.call_id for message in messages for call in message.calls),
        unanswered_call_ids=unanswered,
        user_text=user_text,
    )


def _new_unit(
    item: ContextItem,
    indices: tuple[int, ...],
    roles: tuple[str, ...],
    system_parameter: bool,
    call_ids: tuple[str, ...],
    *,
    user_text: str,
) -> MessageUnit:
    """A :class:`MessageUnit` with no unanswered call, set through its slots' own setters
    (the frozen dataclass's ``__init__`` costs more than the rest of a small unit)."""
    unit = object.__new__(MessageUnit)
    _unit_item(unit, item)
    _unit_indices(unit, indices)
    _unit_roles(unit, roles)
    _unit_system_parameter(unit, system_parameter)
    _unit_call_ids(unit, call_ids)
    _unit_unanswered(unit, ())
    _unit_user_text(unit, user_text)
    return unit


# The slot setters in field order; a new MessageUnit field makes this unpacking fail at import
# (and _new_unit must then set it).
(
    _unit_item,
    _unit_indices,
    _unit_roles,
    _unit_system_parameter,
    _unit_call_ids,
    _unit_unanswered,
    _unit_user_text,
) = (getattr(MessageUnit, field.name).__set__ for field in fields(MessageUnit))
