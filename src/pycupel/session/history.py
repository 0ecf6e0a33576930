"""A conversation's history as a session sees it: parsed, counted and grouped once.

Each turn the caller passes the whole history again. :meth:`History.sync` compares it with what
was seen before (cheaply: each known message against a snapshot of its content, taken when it
was first parsed), parses and counts only the messages that are new, groups them into units
(a tool call and its results stay together, as in :mod:`pycupel.conversation.units`).

An earlier message that changed, disappeared or was replaced by a different one is an *edit*:
everything from the unit holding it on is forgotten and parsed again, and the caller is told
where the edit happened so that it can report the cache break.

A message the provider reads the history from (an Anthropic assistant turn holding a
``compaction`` block: the API drops what comes before it) moves the history's start
(:attr:`History.start_unit`): the units before it stay parsed, so positions do not change,
but they leave the recall corpus and the latest user turn, and the session leaves them out.
"""

from __future__ import annotations

import bisect
import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Generic, TypeVar

from pycupel.conversation.codec import snapshot_json
from pycupel.conversation.grouping import make_unit
from pycupel.conversation.parsed import CallRef, ParsedMessage, ParseState, message_tokens
from pycupel.conversation.units import SYNTHETIC_EPOCH, MessageUnit
from pycupel.conversation.validate import MAX_MESSAGES, expect_list, fail
from pycupel.scorers._bm25_index import Bm25Index
from pycupel.scorers._lexical import TermVocabulary, words_of
from pycupel.session.columns import UnitColumns
from pycupel.session.format import NO_SYSTEM, MessageFormat
from pycupel.tokens import TokenCounter

__all__ = ["History", "Sync"]

M = TypeVar("M")

_STEP = timedelta(seconds=1)


@dataclass(frozen=True, slots=True)
class Sync:
    """What changed since the previous turn.

    Attributes:
        edited_at: position of the first earlier message that changed (the system prompt
            counts as position 0), or None when the history only grew.
        kept_units: how many units of the previous turn are still valid (unchanged).
        start_moved: whether the first unit the provider reads changed
            (:attr:`History.start_unit`).
    """

    edited_at: int | None
    kept_units: int
    start_moved: bool = False


@dataclass(slots=True, eq=False)
class _Pairing:
    """Tool calls issued and answered so far, checked as each message arrives."""

    open_calls: dict[str, CallRef] = field(default_factory=dict)
    issued: dict[str, str] = field(default_factory=dict)
    answered: dict[str, str] = field(default_factory=dict)


class History(UnitColumns, Generic[M]):
    """The parsed, counted and grouped history of one conversation (see the module docs),
    with the per-unit columns the window's zones read (:class:`UnitColumns`).

    Not thread-safe on its own: a session guards it with its lock.
    """

    def __init__(self, fmt: MessageFormat[M], *, counter: TokenCounter, pin_system: bool) -> None:
        self.format = fmt
        self.counter = counter
        """Counts new messages (a session swaps in precounted texts for an async fit)."""
        self._pin_system = pin_system
        self._forced_edit: int | None = None
        # What changed since the session last placed the units (see sync), and how many
        # units it placed.
        self._pending: Sync | None = None
        self.accepted_units = 0
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
        # Each unit's terms, analysed once, for the recall zone's BM25 corpus.
        self.vocabulary = TermVocabulary()
        self.unit_terms: list[list[int]] = []
        # The recall corpus: every unit but the system prompt, pinned units and the latest
        # user turn, ascending (``recall_units``) and as BM25 postings (``recall_index``),
        # kept as units arrive so that a turn reads only what its query needs.
        self.recall_units: list[int] = []
        self.recall_index = Bm25Index()
        self._clear_columns()
        self.latest_user_unit = -1
        # The first unit the provider reads (after the system prompt beside the messages),
        # and the position of a message it reads from whose unit is still open.
        self.start_unit = 0
        self._anchor: int | None = None
        self._open_start = 0
        self._provisional = False
        self._state = ParseState()
        self._pairing = _Pairing()

    # ------------------------------------------------------------------ syncing

    @property
    def message_count(self) -> int:
        """Messages seen so far."""
        return len(self.parsed)

    def sync(self, messages: Sequence[M], system: object = NO_SYSTEM) -> Sync:
        """Bring the history up to ``messages`` (and ``system``); see the module docs.

        What changed is counted since the latest :meth:`accept`: when a turn fails after
        syncing (an unanswered tool call, say), the next sync reports that turn's changes
        too, so the session places every unit once; a sync that fails half-way forgets the
        whole history, and the next one reports an edit at position 0.
        """
        fmt = self.format
        history = expect_list(fmt.source, "messages", messages, limit=MAX_MESSAGES)
        forced, self._forced_edit = self._forced_edit, None
        if not self._started:
            try:
                self._started = True
                self._ingest_system(system)
                self._ingest(history, 0)
            except BaseException:
                self._reset(NO_SYSTEM)
                self._forced_edit = forced
                raise
            return self._pending_with(Sync(forced, 0, self.start_unit != 0))
        edited_at = self._first_change(history, system)
        if forced is not None:
            edited_at = forced if edited_at is None else min(edited_at, forced)
        if edited_at is None and self._provisional and len(history) > len(self.snapshots):
            # The trailing unit was closed early (its message joins the next): re-read it.
            edited_at = self.units[-1].message_indices[0]
        kept_units = len(self.units)
        start = self.start_unit
        try:
            if edited_at is not None:
                kept_units = self._truncate(history, system, edited_at)
            self._ingest(history, len(self.parsed))
        except BaseException:
            self._reset(NO_SYSTEM)  # half-ingested state is never reused
            self._pending = Sync(0, 0)  # nothing the session placed is valid any more
            raise
        return self._pending_with(Sync(edited_at, kept_units, self.start_unit != start))

    def _pending_with(self, sync: Sync) -> Sync:
        """``sync`` with the changes of syncs since the latest :meth:`accept` (kept until
        the next one)."""
        pending = self._pending
        if pending is not None:
            before, now = pending.edited_at, sync.edited_at
            edited_at = now if before is None else before if now is None else min(before, now)
            moved = pending.start_moved or sync.start_moved
            sync = Sync(edited_at, min(pending.kept_units, sync.kept_units), moved)
        self._pending = sync
        return sync

    def accept(self) -> None:
        """The session placed the units of the latest sync (its turn went through)."""
        self._pending = None
        self.accepted_units = len(self.units)

    def restore(
        self,
        messages: Sequence[M],
        system: object,
        *,
        tokens: Sequence[int],
        system_tokens: int | None,
        edited_at: int | None,
    ) -> None:
        """Read ``messages`` (and ``system``) with their known ``tokens`` (as a session saved
        them), as :meth:`sync` read them: a session restored from a store continues exactly.

        With ``edited_at`` the messages are the part of a saved history that the history
        given now still matches: the next :meth:`sync` reports the edit there, as it would
        have in the process that saved them. Without it, they are the whole saved history,
        and the trailing unit is closed as the saved turn closed it.
        """
        history = expect_list(self.format.source, "messages", messages, limit=MAX_MESSAGES)
        self._reset(NO_SYSTEM)
        self._forced_edit = edited_at
        try:
            self._started = True
            self._ingest_system(system, tokens=system_tokens)
            self._ingest(history, 0, known=tokens)
            if edited_at is None:
                self.check_complete()
        except BaseException:
            self._forced_edit = None
            self._reset(NO_SYSTEM)
            raise
        self.accept()

    def forget(self) -> None:
        """Forget everything read: the next :meth:`sync` reads the whole history afresh and
        reports an edit at position 0 (a restored session given another system prompt than
        the saved one, as the session that saved it would have reported it)."""
        self._reset(NO_SYSTEM)
        self._forced_edit = 0
        self._pending = None
        self.accepted_units = 0

    def texts_to_count(self, messages: Sequence[M], system: object = NO_SYSTEM) -> list[str]:
        """The texts :meth:`sync` would count for ``messages``, without changing anything.

        An asynchronous fit counts them with one awaited call first, then syncs with those
        counts. Parsing errors surface here, before anything is awaited.
        """
        fmt = self.format
        history = expect_list(fmt.source, "messages", messages, limit=MAX_MESSAGES)
        texts: list[str] = []
        count_system = not self._started
        if not self._started:
            start, state = 0, ParseState()
        else:
            edited_at = self._first_change(history, system)
            forced = self._forced_edit
            if forced is not None:
                edited_at = forced if edited_at is None else min(edited_at, forced)
            if edited_at is None and self._provisional and len(history) > len(self.snapshots):
                edited_at = self.units[-1].message_indices[0]
            if edited_at is None:
                start, state = len(self.parsed), copy.deepcopy(self._state)
            elif system is not self.system and not self._same_system(system):
                start, state, count_system = 0, ParseState(), True
            else:
                start = self._kept_messages(edited_at)
                state = ParseState()
                for position in range(start):
                    fmt.parse(position, history[position], state)
        if count_system and system is not NO_SYSTEM and system is not None:
            assert fmt.parse_system is not None  # only formats with a system parameter pass one
            texts.extend(_texts(fmt.parse_system(system)))
        for position in range(start, len(history)):
            texts.extend(_texts(fmt.parse(position, history[position], state)))
        return texts

    def _kept_messages(self, edited_at: int) -> int:
        """How many leading messages stay valid after an edit at ``edited_at`` (whole units)."""
        kept = 0
        for unit in self.units:
            indices = unit.message_indices
            if indices and indices[-1] >= edited_at:
                break
            if indices:
                kept = indices[-1] + 1
        return kept

    def _first_change(self, history: Sequence[M], system: object) -> int | None:
        if system is not self.system and not self._same_system(system):
            return 0
        same = self.format.same
        snapshots = self.snapshots
        known = min(len(history), len(snapshots))
        # Every known message is checked against its snapshot, by content, in one pass at C
        # speed (list equality, or map); the position of a change is looked for only when
        # there is one.
        if same is None:
            prefix = history[:known]
            if not isinstance(prefix, list):
                prefix = list(prefix)
            unchanged = prefix == (snapshots if known == len(snapshots) else snapshots[:known])
            if not unchanged:
                for position in range(known):
                    if history[position] != snapshots[position]:
                        return position
        elif not all(map(same, history, snapshots)):
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
        keep_messages = self._kept_messages(edited_at)
        # The kept messages are unchanged: their counts are reused, never asked for again.
        known = self.tokens[:keep_messages]
        first = self.units[0] if self.units else None
        system_tokens = first.item.tokens if first is not None and first.system_parameter else None
        self._reset(self.system)
        self._started = True
        self._ingest_system(system, tokens=system_tokens)
        self._ingest(history[:keep_messages], 0, known=known)
        return kept

    def _ingest_system(self, system: object, *, tokens: int | None = None) -> None:
        self.system = system
        if system is NO_SYSTEM or system is None:
            return
        parse_system = self.format.parse_system
        assert parse_system is not None  # only formats with a system parameter pass one
        parsed = parse_system(system)
        self._system_snapshot = snapshot_json(system)
        counts = [tokens] if tokens is not None else message_tokens([parsed], self.counter)
        self._close_unit([parsed], counts, system_unit=True)

    def _ingest(
        self, history: Sequence[M], start: int, *, known: Sequence[int] | None = None
    ) -> None:
        fmt = self.format
        new = history[start:]
        if not new:
            return
        parsed = [fmt.parse(start + offset, raw, self._state) for offset, raw in enumerate(new)]
        tokens = list(known) if known is not None else message_tokens(parsed, self.counter)
        self.snapshots.extend(fmt.snapshot(raw) for raw in new)
        for message, count in zip(parsed, tokens, strict=True):
            position = len(self.parsed)
            self.parsed.append(message)
            self.tokens.append(count)
            self._stamps.append(SYNTHETIC_EPOCH + _STEP * (position + 1))
            if message.anchor:
                self._anchor = position
            self._pair(message)
            if not self._pairing.open_calls and not message.joins_next:
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
        unit = make_unit(
            parsed,
            tokens,
            self._stamps,
            SYNTHETIC_EPOCH,
            pinned_user=False,
            pin_system=self._pin_system,
            unanswered=(),
        )
        number = len(self.units)
        terms = self.vocabulary.id_list(words_of(unit.item.content))
        latest = any(message.user_turn for message in parsed) and not system_unit
        if latest:
            previous = self.latest_user_unit
            self.latest_user_unit = number
            if previous >= 0 and _recallable(self.units[previous]):
                # The former latest user turn joins the corpus, in order (only units after
                # it can be behind it in the list).
                bisect.insort(self.recall_units, previous)
                self.recall_index.add(previous, self.unit_terms[previous])
                self._mark_corpus(previous, True)
        self.units.append(unit)
        self.unit_terms.append(terms)
        self._add_row(unit.item.tokens, alone=bool(unit.call_ids))
        if not latest and _recallable(unit):
            self.recall_units.append(number)
            self.recall_index.add(number, terms)
            self._mark_corpus(number, True)
        if self._anchor is not None and self._anchor in unit.message_indices:
            self._anchor = None
            self._move_start(number)

    def _move_start(self, unit: int) -> None:
        """The provider reads the history from ``unit`` on: the units before it leave the
        recall corpus, and a latest user turn before it is no longer one."""
        self.start_unit = unit
        for u in self.recall_units:
            if u < unit:
                self.recall_index.remove(u)
                self._mark_corpus(u, False)
        self.recall_units = [u for u in self.recall_units if u >= unit]
        if self.latest_user_unit < unit:
            self.latest_user_unit = -1

    def check_complete(self) -> None:
        """Raise MessageFormatError when a tool call of the history has no result yet.

        Trailing messages waiting for the one they join (a Responses reasoning item at the
        end of the input) are closed as a unit of their own, as ``fit_messages`` groups
        them; when the history grows, that unit is re-read with what follows it.
        """
        if not self._pairing.open_calls and self._open_start < len(self.parsed):
            start = self._open_start
            self._close_unit(self.parsed[start:], self.tokens[start:])
            self._open_start = len(self.parsed)
            self._provisional = True
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


def _recallable(unit: MessageUnit) -> bool:
    """Whether the recall zone may bring ``unit`` back (the system prompt and pinned units
    are never dropped)."""
    return not unit.system_parameter and not unit.item.pinned


def _texts(message: ParsedMessage) -> list[str]:
    """The texts a message's count is made of (its text, and its name when it has one)."""
    return [message.text, message.name] if message.name else [message.text]
