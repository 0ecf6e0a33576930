"""A conversation's history as a session sees it: parsed, counted and grouped once.

Each turn the caller passes the whole history again. :meth:`History.sync` compares it with what
was seen before (cheaply: each known message against a snapshot of its content, taken when it
was first parsed), parses and counts only the messages that are new, groups them into units
(a tool call and its results stay together, as in :mod:`pycupel.adapters._units`).

An earlier message that changed, disappeared or was replaced by a different one is an *edit*:
everything from the unit holding it on is forgotten and parsed again, and the caller is told
where the edit happened so that it can report the cache break.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Generic, TypeVar

from pycupel.adapters._format import MAX_MESSAGES, expect_list, fail
from pycupel.adapters._units import (
    SYNTHETIC_EPOCH,
    CallRef,
    MessageOverhead,
    MessageUnit,
    ParsedMessage,
    _make_unit,
    message_tokens,
)
from pycupel.tokens import TokenCounter

__all__ = ["NO_SYSTEM", "History", "MessageFormat", "ParseState", "Sync"]

M = TypeVar("M")

_STEP = timedelta(seconds=1)

NO_SYSTEM: object = object()
"""Marks a format without a system prompt beside the messages (OpenAI, LangChain)."""


class ParseState:
    """What a provider's parser carries from one message to the next (tool names by call id,
    legacy function calls waiting for their result)."""

    __slots__ = ("pending", "tool_names")

    def __init__(self) -> None:
        self.tool_names: dict[str, str] = {}
        self.pending: list[str] = []


@dataclass(frozen=True, slots=True)
class MessageFormat(Generic[M]):
    """How a session reads one provider's messages: the adapter-side part of a session.

    Attributes:
        provider: ``"openai"``, ``"anthropic"``, ``"langchain"``...
        source: names the input in error messages (``"openai messages"``).
        overhead: the format's fixed token costs.
        parse: parses message ``index`` (the adapter's own message parser).
        snapshot: a copy of a message's content that compares equal (``==``) to the message
            for as long as the message is unchanged.
        same: whether a message still matches its snapshot; defaults to ``message == snapshot``.
        parse_system: parses a system prompt passed beside the messages (Anthropic).
        drops_leading: a unit that must not open the window's messages (Anthropic: one that
            starts with an assistant message); compaction leaves such units out.
    """

    provider: str
    source: str
    overhead: MessageOverhead
    parse: Callable[[int, M, ParseState], ParsedMessage]
    snapshot: Callable[[M], object]
    same: Callable[[M, object], bool] | None = None
    parse_system: Callable[[object], ParsedMessage] | None = None
    drops_leading: Callable[[MessageUnit], bool] | None = None


@dataclass(frozen=True, slots=True)
class Sync:
    """What changed since the previous turn.

    Attributes:
        edited_at: position of the first earlier message that changed (the system prompt
            counts as position 0), or None when the history only grew.
        kept_units: how many units of the previous turn are still valid (unchanged).
    """

    edited_at: int | None
    kept_units: int


@dataclass(slots=True, eq=False)
class _Pairing:
    """Tool calls issued and answered so far, checked as each message arrives."""

    open_calls: dict[str, CallRef] = field(default_factory=dict)
    issued: dict[str, str] = field(default_factory=dict)
    answered: dict[str, str] = field(default_factory=dict)


class History(Generic[M]):
    """The parsed, counted and grouped history of one conversation (see the module docs).

    Not thread-safe on its own: a session guards it with its lock.
    """

    def __init__(self, fmt: MessageFormat[M], *, counter: TokenCounter, pin_system: bool) -> None:
        self.format = fmt
        self._counter = counter
        self._pin_system = pin_system
        self._reset(NO_SYSTEM)

    def _reset(self, system: object) -> None:
        self._started = False
        self.system: object = system
        self._system_snapshot: object = None
        self.snapshots: list[object] = []
        self.parsed: list[ParsedMessage] = []
        self.tokens: list[int] = []
        self._stamps: list[datetime] = []
        self.units: list[MessageUnit] = []
        self.latest_user_unit = -1
        self._open_start = 0
        self._state = ParseState()
        self._pairing = _Pairing()

    # ------------------------------------------------------------------ syncing

    @property
    def message_count(self) -> int:
        """Messages seen so far."""
        return len(self.parsed)

    def sync(self, messages: Sequence[M], system: object = NO_SYSTEM) -> Sync:
        """Bring the history up to ``messages`` (and ``system``); see the module docs."""
        fmt = self.format
        history = expect_list(fmt.source, "messages", messages, limit=MAX_MESSAGES)
        if not self._started:
            try:
                self._started = True
                self._ingest_system(system)
                self._ingest(history, 0)
            except BaseException:
                self._reset(NO_SYSTEM)
                raise
            return Sync(None, 0)
        edited_at = self._first_change(history, system)
        kept_units = len(self.units)
        try:
            if edited_at is not None:
                kept_units = self._truncate(history, system, edited_at)
            self._ingest(history, len(self.parsed))
        except BaseException:
            self._reset(NO_SYSTEM)  # half-ingested state is never reused
            raise
        return Sync(edited_at, kept_units)

    def _first_change(self, history: Sequence[M], system: object) -> int | None:
        if system is not self.system and not self._same_system(system):
            return 0
        same = self.format.same
        snapshots = self.snapshots
        known = min(len(history), len(snapshots))
        if same is None:
            for position in range(known):
                if history[position] != snapshots[position]:
                    return position
        else:
            for position in range(known):
                if not same(history[position], snapshots[position]):
                    return position
        return len(history) if len(history) < len(snapshots) else None

    def _same_system(self, system: object) -> bool:
        if system is NO_SYSTEM or self.system is NO_SYSTEM:
            return system is self.system
        if system is None or self.system is None:
            return system is self.system
        return system == self._system_snapshot

    def _truncate(self, history: Sequence[M], system: object, edited_at: int) -> int:
        """Forget the edited part; returns how many units are still valid."""
        if system is not self.system and not self._same_system(system):
            self._reset(system)
            self._started = True
            self._ingest_system(system)
            return 0
        # Units are whole spans: re-read everything from the first unit touching the edit.
        kept = 0
        for position, unit in enumerate(self.units):
            indices = unit.message_indices
            if indices and indices[-1] >= edited_at:
                break
            kept = position + 1
        keep_messages = max(
            (unit.message_indices[-1] + 1 for unit in self.units[:kept] if unit.message_indices),
            default=0,
        )
        self._reset(self.system)
        self._started = True
        self._ingest_system(system)
        self._ingest(history[:keep_messages], 0)
        return kept

    def _ingest_system(self, system: object) -> None:
        self.system = system
        if system is NO_SYSTEM or system is None:
            return
        parse_system = self.format.parse_system
        assert parse_system is not None  # only formats with a system parameter pass one
        parsed = parse_system(system)
        self._system_snapshot = _freeze(system)
        tokens = message_tokens([parsed], self._counter)
        self._close_unit([parsed], tokens, system_unit=True)

    def _ingest(self, history: Sequence[M], start: int) -> None:
        fmt = self.format
        new = history[start:]
        if not new:
            return
        parsed = [fmt.parse(start + offset, raw, self._state) for offset, raw in enumerate(new)]
        tokens = message_tokens(parsed, self._counter)
        self.snapshots.extend(fmt.snapshot(raw) for raw in new)
        for message, count in zip(parsed, tokens, strict=True):
            position = len(self.parsed)
            self.parsed.append(message)
            self.tokens.append(count)
            self._stamps.append(SYNTHETIC_EPOCH + _STEP * (position + 1))
            self._pair(message)
            if not self._pairing.open_calls:
                start_at = self._open_start
                self._close_unit(self.parsed[start_at:], self.tokens[start_at:])
                self._open_start = len(self.parsed)

    def _pair(self, message: ParsedMessage) -> None:
        source = self.format.source
        pairing = self._pairing
        for answer in message.answers:
            if pairing.open_calls.pop(answer.call_id, None) is not None:
                pairing.answered[answer.call_id] = answer.location
            elif answer.call_id in pairing.answered:
                fail(
                    source,
                    answer.location,
                    f"answers tool call {answer.call_id!r} a second time "
                    f"(already answered at {pairing.answered[answer.call_id]})",
                )
            else:
                fail(
                    source,
                    answer.location,
                    f"tool result for {answer.call_id!r} does not answer any earlier tool call "
                    f"(orphaned tool result; providers reject it)",
                )
        for call in message.calls:
            if call.call_id in pairing.issued:
                fail(
                    source,
                    call.location,
                    f"tool call id {call.call_id!r} is used twice "
                    f"(first at {pairing.issued[call.call_id]}); ids must be unique in a history",
                )
            pairing.issued[call.call_id] = call.location
            pairing.open_calls[call.call_id] = call

    def _close_unit(
        self, parsed: Sequence[ParsedMessage], tokens: Sequence[int], *, system_unit: bool = False
    ) -> None:
        unit = _make_unit(
            parsed,
            tokens,
            self._stamps,
            SYNTHETIC_EPOCH,
            pinned_user=False,
            pin_system=self._pin_system,
            unanswered=(),
        )
        if any(message.user_turn for message in parsed) and not system_unit:
            self.latest_user_unit = len(self.units)
        self.units.append(unit)

    def check_complete(self) -> None:
        """Raise MessageFormatError when a tool call of the history has no result yet."""
        for call_id, call in self._pairing.open_calls.items():
            fail(
                self.format.source,
                call.location,
                f"tool call {call_id!r} ({call.name}) has no tool result later in the history; "
                f"providers reject unanswered tool calls",
            )

    def latest_user_text(self) -> str:
        """The text of the latest unit holding a user turn ('' when there is none)."""
        if self.latest_user_unit < 0:
            return ""
        unit = self.units[self.latest_user_unit]
        return "\n".join(
            self.parsed[index].text
            for index in unit.message_indices
            if self.parsed[index].user_turn
        )


def _freeze(value: object) -> object:
    """A structural copy of JSON-like data: dicts and lists copied, leaves shared."""
    if isinstance(value, dict):
        return {key: _freeze(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_freeze(item) for item in value]
    return value


def snapshot_json(message: object) -> object:
    """The default snapshot of a JSON-like message (mappings and lists copied)."""
    return _freeze(message)
