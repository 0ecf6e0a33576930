"""The provider-neutral session: one conversation, one call per turn, a cache-stable window.

A request is three zones, in this order::

    [ stable prefix ][ recall zone ][ tail: the latest turn ]

* **Append-only between compactions.** New units are appended to the tail. As long as the
  window stays under the high watermark (``compact_at`` x budget) and the recall zone does not
  move, each request extends the previous one message for message, so the provider serves the
  whole previous request from its prompt cache.
* **Compaction.** When the stable prefix and tail reach the high watermark, the window is
  selected once from the whole history down to the low watermark (``compact_to`` x budget)
  with the adapters' structure-aware selection (:mod:`pycupel.conversation.structure`): system
  prompt and latest user turn pinned, an unbroken run of recent units, the rest by the
  policy's relevance to the latest user message. The recent run starts at a message
  position rounded up to a multiple of ``grid``, so compactions land on the same boundaries
  (a rebuilt or restarted session cuts where the previous one did). The cache is given up
  once, for many cheap turns after. Only the pinned units are forced in: when the latest
  turn alone is too large, its older units are left out (tool calls with their results, as
  ``fit_messages`` does), and when the pinned units alone exceed the budget
  :class:`~pycupel.errors.PinnedBudgetError` is raised; a window never exceeds the budget.
* **Recall zone.** When a new user message arrives, dropped units relevant to it come back
  (:mod:`pycupel.session.recall`: the structure-aware relevance of ``fit_messages``, with
  question/answer neighbours and dated headers). They go after the stable prefix, right
  before the latest turn (chronological inside the zone), within ``recall_share`` x budget
  and what the budget leaves beside the window (less :data:`RECALL_HEADROOM`): relevance
  never touches the cached prefix, and when the zone changes only it and the latest turn
  are re-sent. A zone that already holds the best match for a new user message stays in
  place, and the tail grows after it.
* **Recall on need.** A new user message re-decides the zone when it asks something (it
  holds a question mark) or when its best match lies outside the request and the best match
  inside scores under :data:`RECALL_MARGIN` of it. A message that only comments on what the
  window already shows (most turns of a chat) leaves the zone in place, so the request
  extends the previous one; ``recall_every_turn=True`` re-decides it for every new user
  message.
* **Relevance pressure.** When the best match for a new user message does not fit the
  recall zone and the window is above the low watermark, the session compacts on that turn,
  for that message (``compact_for_recall``, on by default): the compaction due soon comes
  a few turns early, and keeps what the question needs.
* **Edits.** A changed, removed or replaced earlier message is detected (each known message
  against a snapshot of its content); the window keeps only the units before the edit, the
  rest is re-read, and the report names the edit and the cache break. Nothing crashes.
* **Calibration.** Token limits are applied in the provider's count. Each recorded usage
  teaches the session the provider's tokens of the units it had not seen reported before
  (the reported count minus what the already known units account for, shared out in
  proportion to their estimates), so a stable prefix is predicted from what the provider
  itself counted; units never reported are predicted with the calibration ratio
  (:mod:`pycupel.session.calibration`), and checked against the watermarks with its upper
  ratio.

Thread rules: a session serves one conversation. ``fit`` and ``record_usage`` hold the
session's lock, so sharing a session between threads cannot corrupt it, but interleaving two
conversations in one session makes every turn an edit: give each conversation its own session.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from operator import attrgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from pycupel._checks import check_bool, check_float, check_int
from pycupel.conversation.fit import LeadingFilter, fit_units, resolve_counter
from pycupel.conversation.structure import Structure, session_headers
from pycupel.conversation.units import MessageUnit, MessageUnits
from pycupel.diagnostics import SelectionReport
from pycupel.errors import PinnedBudgetError, SessionConfigError
from pycupel.model import ContextBudget, ContextKind
from pycupel.pipeline import Pipeline
from pycupel.scorers.base import Scorer
from pycupel.session.calibration import Calibration
from pycupel.session.history import NO_SYSTEM, History, MessageFormat
from pycupel.session.recall import Recall, RecallScores, choose_recall, score_recall
from pycupel.session.shrink import (
    ScaledCounter,
    ShownVersions,
    resolve_session_shrink,
    scaled_editor,
)
from pycupel.session.summary import RunningSummary, start_summary
from pycupel.session.usage import ProviderUsage, read_usage
from pycupel.session.window import CacheBreak, SessionReport, SessionWindow
from pycupel.tokens import TokenCounter
from pycupel.tokens.asynchronous import AsyncTokenCounter, precount

if TYPE_CHECKING:
    from pycupel.conversation.summary import OnSummaryError, Summarize
    from pycupel.conversation.versions import Shrink
    from pycupel.policy import Policy

__all__ = [
    "DEFAULT_COMPACT_AT",
    "DEFAULT_COMPACT_TO",
    "DEFAULT_GRID",
    "DEFAULT_RECALL_SHARE",
    "CoreWindow",
    "SessionCore",
]

M = TypeVar("M")

DEFAULT_COMPACT_AT = 0.9
"""High watermark: share of the budget at which the window compacts."""
DEFAULT_COMPACT_TO = 0.4
"""Low watermark: share of the budget a compaction cuts the window down to."""
DEFAULT_GRID = 8
"""Compaction cut points are rounded up to a multiple of this many messages."""
DEFAULT_RECALL_SHARE = 0.15
"""Largest share of the budget the recall zone may take."""
RECALL_HEADROOM = 0.01
"""Share of the budget the recall zone leaves free: the provider's count of a regrouped
window can exceed the calibrated prediction by a few percent."""
TAIL_SHARE = 0.6
"""Share of the low watermark a compaction keeps as the unbroken run of newest units."""
RECALL_MARGIN = 0.5
"""A message that asks nothing re-decides the recall zone only when the best match inside
the request scores under this share of the best match outside it."""
QUESTION_MARKS = ("?", "\uff1f")
"""A user message holding one of these asks something (the full-width mark of Chinese and
Japanese text included)."""


@dataclass(frozen=True, slots=True)
class CoreWindow:
    """A turn's window in provider-neutral terms; the adapter turns it into messages.

    Attributes:
        units: the request's units in order (a system-parameter unit first when present).
        message_indices: positions in the history of the request's messages, in order.
        stable_messages: how many leading entries of ``message_indices`` form the stable
            prefix; the recall zone follows them.
        recall_messages: how many entries after those are the recall zone.
        tokens, cached_tokens, compacted, report: as in
            :class:`~pycupel.session.window.SessionWindow`.
        overrides: history position -> the shorter version of that message the window
            shows (:mod:`pycupel.session.shrink`).
        summary: the running summary's message (:mod:`pycupel.session.summary`), shown at
            ``summary_at`` among the window's messages; it is counted in
            ``stable_messages``.
    """

    units: tuple[MessageUnit, ...]
    message_indices: tuple[int, ...]
    stable_messages: int
    recall_messages: int
    tokens: int
    cached_tokens: int
    compacted: bool
    report: SessionReport
    overrides: Mapping[int, Any] = field(default_factory=lambda: MappingProxyType({}))
    summary: Any = None
    summary_at: int = 0

    def entries(self, messages: Sequence[M]) -> list[tuple[int | None, M]]:
        """The window's messages with their history positions (``None`` for the summary)."""
        shown = self.overrides
        entries: list[tuple[int | None, M]] = [
            (index, shown.get(index, messages[index])) for index in self.message_indices
        ]
        if self.summary is not None:
            entries.insert(self.summary_at, (None, self.summary))
        return entries

    def messages(self, messages: Sequence[M]) -> list[M]:
        """The window's messages, taken from ``messages`` (the history this window was
        fitted for), with the shorter versions and the summary in place."""
        if not self.overrides and self.summary is None:
            return list(map(messages.__getitem__, self.message_indices))
        return [message for _, message in self.entries(messages)]

    def window(self, messages: Sequence[M]) -> SessionWindow[M]:
        """The window of ``messages`` (the history this window was fitted for), unmarked."""
        return SessionWindow(
            messages=self.messages(messages),
            report=self.report,
            tokens=self.tokens,
            cached_tokens=self.cached_tokens,
            compacted=self.compacted,
        )


class SessionCore(Generic[M]):
    """The session engine shared by every adapter's ``Session`` (see the module docs)."""

    def __init__(
        self,
        fmt: MessageFormat[M],
        *,
        budget: int,
        policy: Policy | Pipeline | None = None,
        counter: TokenCounter | None = None,
        compact_at: float = DEFAULT_COMPACT_AT,
        compact_to: float = DEFAULT_COMPACT_TO,
        grid: int = DEFAULT_GRID,
        recall_share: float = DEFAULT_RECALL_SHARE,
        compact_for_recall: bool = True,
        recall_every_turn: bool = False,
        pin_system: bool = True,
        shrink: Shrink | bool | None = None,
        summarize: Summarize | None = None,
        on_summary_error: OnSummaryError = "raise",
    ) -> None:
        err = SessionConfigError
        per_request = fmt.overhead.per_request
        self.budget = check_int(err, "budget", budget, minimum=per_request + 1)
        self.compact_at = check_float(err, "compact_at", compact_at, positive=True, maximum=1.0)
        self.compact_to = check_float(err, "compact_to", compact_to, positive=True)
        if self.compact_to >= self.compact_at:
            raise SessionConfigError(
                "compact_to", compact_to, f"must be < compact_at ({compact_at})"
            )
        self.grid = check_int(err, "grid", grid, minimum=1)
        self.recall_share = check_float(err, "recall_share", recall_share, minimum=0.0)
        if self.recall_share >= 1.0:
            raise SessionConfigError("recall_share", recall_share, "must be < 1")
        self.compact_for_recall = check_bool(err, "compact_for_recall", compact_for_recall)
        self.recall_every_turn = check_bool(err, "recall_every_turn", recall_every_turn)
        check_bool(err, "pin_system", pin_system)
        if policy is not None and not isinstance(policy, Pipeline) and not _is_policy(policy):
            raise SessionConfigError(
                "policy", policy, "must be a pycupel.policy.Policy, a Pipeline or None"
            )
        self.policy = policy
        # The recall zone scores with the policy's scorer; without a policy, with the
        # conversation preset's relevance from the history's term ids.
        self._scorer: Scorer | None = _policy_scorer(policy, self.budget)
        self.format = fmt
        self.counter = resolve_counter(counter)
        self._lock = threading.Lock()
        self._history: History[M] = History(fmt, counter=self.counter, pin_system=pin_system)
        self._calibration = Calibration()
        self._stable: list[int] = []
        self._recall: list[int] = []
        self._tail: list[int] = []
        self._previous: list[int] = []
        # The previous request's largest unit and its units' counts summed (the counts as
        # the window shows them; kept only without shorter versions).
        self._previous_max = -1
        self._previous_tokens = 0
        # The previous request's units and message positions, and the stable zone whose
        # messages were last counted with that count.
        self._previous_units: tuple[MessageUnit, ...] = ()
        self._previous_indices: tuple[int, ...] = ()
        self._stable_messages: tuple[list[int], int] = ([], 0)
        self._recall_messages: tuple[list[int], tuple[int, ...]] = ([], ())
        self._stable_positions: tuple[list[int], npt.NDArray[np.intp]] = (
            [],
            np.zeros(0, dtype=np.intp),
        )
        self._reported_units: frozenset[int] = frozenset()
        self._recall_query = -1
        self._turn = 0
        self._recorded_turn = 0
        self._last_estimate: int | None = None
        self._learned: dict[int, float] = {}
        # Each unit's session header position (for the recall zone), kept as units arrive.
        self._headers: list[int] = []
        self._previous_summary: object = None
        # Shrinking and the running summary (None when not asked for).
        self.shrink = resolve_session_shrink(shrink, policy)
        summary = start_summary(summarize, on_summary_error, self.budget)
        editor = fmt.editor
        if (self.shrink is not None or summary is not None) and editor is None:
            raise SessionConfigError(
                "shrink", shrink, f"is not available for {fmt.provider} sessions"
            )
        self._shown: ShownVersions[M] | None = None
        self._summary: RunningSummary[M] | None = None
        if editor is not None and self.shrink is not None:
            self._shown = ShownVersions(editor)
        if editor is not None and summary is not None:
            assert fmt.summary_message is not None  # every format with an editor has one
            self._summary = RunningSummary(
                summary, make=fmt.summary_message, editor=editor, counter=self.counter
            )

    # ------------------------------------------------------------------ public

    @property
    def calibration_ratio(self) -> float:
        """The current factor from estimated to predicted tokens."""
        with self._lock:
            return self._calibration.ratio

    def record_usage(self, usage: object) -> ProviderUsage:
        """Calibrate with the provider's usage for the latest window; returns it, read."""
        read = read_usage(usage)
        with self._lock:
            if self._last_estimate is None:
                raise SessionConfigError(
                    "usage", usage, "must follow a fit() call (no window was fitted yet)"
                )
            if self._recorded_turn == self._turn:
                raise SessionConfigError(
                    "usage",
                    usage,
                    f"was already recorded for turn {self._turn}; record each window's usage "
                    f"once, after its request",
                )
            self._calibration.record(
                estimated_tokens=self._last_estimate, reported_tokens=read.prompt_tokens
            )
            self._learn(read.prompt_tokens)
            self._recorded_turn = self._turn
        return read

    def _learn(self, reported: int) -> None:
        """Attribute the reported tokens of the latest request to its units.

        When the request extends the previously reported one, the known units add up to the
        previous report, so the new units are given exactly the rest (shared out by their
        estimates). Otherwise (after a compaction, a recall or an edit) the known units'
        values are only shares of earlier reports: the new units are predicted with the
        calibration ratio and every unit of the request is rescaled to add up to the report,
        so no unit absorbs the others' error.
        """
        learned = self._learned
        request = self._previous
        overhead = self._fixed() * self._calibration.ratio
        unknown = [u for u in request if u not in learned]
        known_total = sum(learned[u] for u in request if u in learned)
        residual = reported - overhead - known_total
        estimate = self._estimate
        estimated = sum(estimate(u) for u in unknown)
        extends = self._reported_units.issubset(request) and all(
            u in self._reported_units for u in request if u in learned
        )
        if unknown and extends and estimated > 0 and residual > 0:
            for u in unknown:
                learned[u] = residual * estimate(u) / estimated
        else:
            ratio = self._calibration.ratio
            for u in unknown:
                learned[u] = estimate(u) * ratio
            total = sum(learned[u] for u in request)
            if total > 0 and reported > overhead:
                factor = (reported - overhead) / total
                for u in request:
                    learned[u] *= factor
        self._reported_units = frozenset(request)

    def _guard(self, unit: int) -> float:
        """The unit's tokens in the provider's count, erring high for units never reported."""
        known = self._learned.get(unit)
        if known is not None:
            return known
        return self._estimate(unit) * self._calibration.upper_ratio

    def _guard_whole(self, unit: int) -> float:
        """:meth:`_guard` of the unit whole, also when the window shows a shorter version."""
        if self._shown is not None and unit in self._shown.variants:
            return self._history.units[unit].item.tokens * self._calibration.upper_ratio
        return self._guard(unit)

    def _estimate(self, unit: int) -> int:
        """The unit's tokens by the session's counter, as the window shows it."""
        whole = self._history.units[unit].item.tokens
        return whole if self._shown is None else self._shown.estimate(unit, whole)

    def _fixed(self) -> int:
        """Tokens every request holds beside its units: the per-request overhead and the
        running summary's message (by the session's counter)."""
        summary = self._summary.tokens if self._summary is not None else 0
        return self.format.overhead.per_request + summary

    def fit(self, messages: Sequence[M], system: object = NO_SYSTEM) -> CoreWindow:
        """This turn's window for the whole history so far (see the module docs)."""
        with self._lock:
            return self._run(self._fit(messages, system))

    def _run(self, turn: Generator[list[M], str | None, CoreWindow]) -> CoreWindow:
        """Finish a turn, calling the summarizer (synchronously) when the turn asks for it."""
        try:
            dropped = next(turn)
            while True:
                summary = self._summary
                assert summary is not None  # a turn asks only when there is a summarizer
                dropped = turn.send(summary.summary.text(dropped, summary.previous))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]  # the generator's return value

    async def afit(
        self, messages: Sequence[M], counter: AsyncTokenCounter, system: object = NO_SYSTEM
    ) -> CoreWindow:
        """:meth:`fit` with the new messages counted by one awaited ``counter`` call.

        Only the texts this turn adds are counted (the rest were counted before); a
        coroutine summarizer is awaited. The lock is not held while awaiting, so the history
        must not change between the steps (one conversation per session, as always). The
        shorter versions a compaction makes are counted with the session's own counter.
        """
        with self._lock:
            texts = self._history.texts_to_count(messages, system)
        counts = await precount(texts, counter)
        with self._lock:
            history = self._history
            own = history.counter
            history.counter = counts
            turn = self._fit(messages, system)
            try:
                dropped = next(turn)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]  # the generator's value
            finally:
                history.counter = own
        while True:
            summary = self._summary
            assert summary is not None  # a turn asks only when there is a summarizer
            marked = await summary.summary.atext(dropped, summary.previous)
            with self._lock:
                try:
                    dropped = turn.send(marked)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]  # the generator's value

    # ------------------------------------------------------------------ the turn

    def _fit(
        self, messages: Sequence[M], system: object
    ) -> Generator[list[M], str | None, CoreWindow]:
        """The turn; yields the messages to summarise when a compaction asks for a summary
        and takes the summary's marked text (or None) back."""
        history = self._history
        previous_units = len(history.units)
        sync = history.sync(messages, system)
        history.check_complete()
        units = history.units
        self._turn += 1
        first = self._turn == 1 or not self._previous
        valid_below = len(units)
        cache_break: CacheBreak | None = "first" if first else None
        if sync.edited_at is not None:
            valid_below = sync.kept_units
            self._stable = [u for u in self._stable if u < valid_below]
            self._recall = [u for u in self._recall if u < valid_below]
            self._tail = [u for u in self._tail if u < valid_below]
            self._learned = {u: t for u, t in self._learned.items() if u < valid_below}
            del self._headers[valid_below:]
            self._reported_units = frozenset(u for u in self._reported_units if u < valid_below)
            if self._recall_query >= valid_below:
                self._recall_query = -1
            if self._shown is not None:
                self._shown.forget_from(valid_below, units)
            if self._summary is not None:
                self._summary.forget_from(sync.edited_at)
            previous_units = valid_below
            cache_break = "edit"
        self._tail.extend(range(previous_units, len(units)))
        if sync.edited_at is not None:
            self._restore_latest_turn()

        # Limits in the provider's count (the per-request overhead counted high).
        upper = self._calibration.upper_ratio
        overhead = self._fixed() * upper
        high = self.compact_at * self.budget - overhead
        low = self.compact_to * self.budget - overhead
        recall_cap = self.recall_share * self.budget

        compacted = False
        selection: SelectionReport | None = None
        grown_tokens = self._tokens(self._stable) + self._tokens(self._tail)
        if grown_tokens > high:
            selection = yield from self._compaction(messages, low, high)
            overhead = self._fixed() * upper
            high = self.compact_at * self.budget - overhead
            compacted = True
            cache_break = "edit" if cache_break == "edit" else "compaction"
            self._recall_query = -1
        latest = history.latest_user_unit
        # The recall zone is no part of the stable prefix: it may use what the budget leaves
        # (within recall_share), not only what the high watermark leaves.
        if compacted or self._learned or self._shown is not None:
            window_tokens = self._tokens(self._stable, self._tail)
        else:
            # Without learned tokens each zone's sum is its count times the ratio, added to
            # 0.0: the two zones summed apart add up to the same float.
            window_tokens = grown_tokens
        limit = self._recall_limit(overhead)
        new_message = latest != self._recall_query
        zone_fits = window_tokens + self._tokens(self._recall) <= limit
        recall: Recall | None = None
        if recall_cap > 0 and (new_message or (self._recall and not zone_fits)):
            query = history.latest_user_text()
            scores = self._score_recall(query)
            if (
                zone_fits
                and not compacted
                and sync.edited_at is None
                and not self.recall_every_turn
                and not _asks(query)
                and (scores is None or scores.window_share >= RECALL_MARGIN)
            ):
                # Recall on need: the message asks nothing, and the window already holds
                # its best match (or one at least RECALL_MARGIN as good): the zone stays,
                # and no zone is chosen.
                self._recall_query = latest
            else:
                recall = self._choose_recall(scores, min(recall_cap, limit - window_tokens))
        if recall is not None:
            if (
                recall.crowded
                and self.compact_for_recall
                and not compacted
                and new_message
                and window_tokens > low
            ):
                # Relevance pressure: the best match for the new user message does not fit
                # beside the window, so the compaction due soon comes now, for this query.
                selection = yield from self._compaction(messages, low, high)
                overhead = self._fixed() * upper
                compacted = True
                cache_break = "edit" if cache_break == "edit" else "compaction"
                window_tokens = self._tokens(self._stable, self._tail)
                limit = self._recall_limit(overhead)
                recall = self._select_recall(min(recall_cap, limit - window_tokens))
            recalled = recall.units
            # A zone that already holds the best match for the new message stays in place
            # (the request then extends the previous one): it changes only when it misses
            # what matters most.
            if (
                not compacted
                and sync.edited_at is None
                and recall.best in self._recall
                and window_tokens + self._tokens(self._recall) <= limit
            ):
                recalled = self._recall
            if recalled != self._recall or sync.edited_at is not None:
                if self._recall and cache_break is None:
                    cache_break = "recall" if recalled else "recall-dropped"
                self._move_recall(recalled)
            self._recall_query = latest

        return self._window(
            messages_in=len(messages),
            valid_below=valid_below,
            compacted=compacted,
            cache_break=cache_break,
            edited_at=sync.edited_at,
            selection=selection,
        )

    def _recall_limit(self, overhead: float) -> float:
        """The window's tokens the recall zone may fill up to (the budget, less headroom)."""
        return (1.0 - RECALL_HEADROOM) * self.budget - overhead

    def _compaction(
        self, messages: Sequence[M], low: float, high: float
    ) -> Generator[list[M], str | None, SelectionReport]:
        """Compact (see :meth:`_compact`); with a running summary, yields the messages the
        summary must take in and installs the marked text sent back."""
        upper = self._calibration.upper_ratio
        overhead = self._fixed() * upper
        # A compaction keeps the summary's reserve instead of the summary it replaces.
        reserve = self._summary.reserve if self._summary is not None else 0
        shift = (self.format.overhead.per_request + reserve) * upper - overhead
        selection = self._compact(low - shift, high - shift, messages, reserve * upper)
        if self._summary is not None:
            kept = [*self._stable, *self._tail]
            pending = self._summary.pending(messages, self._shown_as_given(kept, messages))
            if pending:
                marked = yield [messages[index] for index in pending]
                self._summary.install(marked, pending)
        return selection

    def _guarded_tokens(self) -> list[float] | npt.NDArray[np.float64]:
        """:meth:`_guard` of every unit, in one pass (an array when the history computes
        them in one)."""
        history = self._history
        if self._shown is not None:
            return [self._guard(u) for u in range(len(history.units))]
        return history.guarded_token_array(self._calibration.upper_ratio, self._learned)

    def _restore_latest_turn(self) -> None:
        """After an edit: the latest user turn whole in the tail (a shortened history may
        end on a turn an earlier compaction dropped) and the zones in order around it; the
        recall zone is decided again."""
        latest = self._history.latest_user_unit
        window = {*self._stable, *self._tail, *range(max(latest, 0), len(self._history.units))}
        ordered = sorted(window)
        self._stable = [u for u in ordered if u < latest]
        self._tail = [u for u in ordered if u >= latest]
        self._recall = [u for u in self._recall if u not in window]
        self._recall_query = -1

    def _tokens(self, *zones: Sequence[int]) -> float:
        """Provider tokens of the zones, erring high (see :meth:`_guard`)."""
        return self._sum(zones, self._calibration.upper_ratio)

    def _sum(self, zones: Sequence[Sequence[int]], ratio: float) -> float:
        """Provider tokens of the zones: learned where known, ``ratio`` x estimate elsewhere."""
        learned = self._learned
        shown = self._shown.estimates if self._shown is not None else None
        if not shown:
            return self._history.guarded_sum(zones, ratio, learned)
        total = 0.0
        get = learned.get
        estimate = self._estimate
        for zone in zones:
            for u in zone:
                known = get(u)
                total += estimate(u) * ratio if known is None else known
        return total

    def _shown_as_given(self, kept: Sequence[int], messages: Sequence[M]) -> set[int]:
        """Message positions the window of ``kept`` units shows as the caller gave them."""
        units = self._history.units
        if self._shown is not None:
            return self._shown.originals_shown(units, kept, messages)
        return {index for u in kept for index in units[u].message_indices}

    def _move_recall(self, recalled: list[int]) -> None:
        """Put ``recalled`` between the stable prefix and the latest turn."""
        latest = self._history.latest_user_unit
        window = [*self._stable, *self._tail]  # both ascending, the tail after the prefix
        self._stable = [u for u in window if u < latest]
        self._tail = [u for u in window if u >= latest]
        units = self._history.units
        if all(units[u].system_parameter for u in self._stable):
            recalled = self._drop_leading(recalled)  # the recall zone leads the messages
        self._recall = recalled

    def _select_recall(self, room: float) -> Recall:
        """Dropped units the latest user message needs, ascending, within ``room``
        (:func:`~pycupel.session.recall.select_recall`)."""
        return self._choose_recall(self._score_recall(), room)

    def _score_recall(self, query: str | None = None) -> RecallScores | None:
        """The recall corpus scored for the latest user message (its text ``query`` when
        the caller has it; :func:`~pycupel.session.recall.score_recall`); None when nothing
        open matches."""
        history = self._history
        if query is None:
            query = history.latest_user_text()
        if not query:
            return None
        units = history.units
        # Every unit but the system prompt, pinned units and the latest user turn (kept by
        # the history as units arrive).
        corpus = history.recall_corpus()
        # The stable prefix as an index array, converted again only when the zone was
        # replaced (positions are kept by an edit, and it is never changed in place).
        converted, positions = self._stable_positions
        if converted is not self._stable:
            positions = np.asarray(self._stable, dtype=np.intp)
            self._stable_positions = (self._stable, positions)
        # What the zone may recall: the corpus less the stable prefix and the tail.
        open_units = corpus.copy()
        open_units[positions] = False
        open_units[self._tail] = False
        if not open_units.any():  # the whole corpus is in the window
            return None
        return score_recall(
            units,
            scored=history.recall_units,
            query=query,
            index=history.recall_index,
            vocabulary=history.vocabulary,
            scorer=self._scorer,
            corpus=corpus,
            open_units=open_units,
            linked=history.linked_flags(),
        )

    def _choose_recall(self, scores: RecallScores | None, room: float) -> Recall:
        """The units to recall within ``room`` from :meth:`_score_recall`'s ``scores``
        (:func:`~pycupel.session.recall.choose_recall`)."""
        if scores is None:
            return Recall([], crowded=False)
        history = self._history
        units = history.units
        headers = self._headers
        if len(headers) < len(units):
            start = len(headers)
            items = [unit.item for unit in units[start:]]
            headers.extend(session_headers(items, headers[-1] if headers else -1, start))
        return choose_recall(
            units,
            scores,
            tokens=self._guarded_tokens(),
            room=room,
            headers=headers,
            alone=history.unit_alone,
        )

    def _compact(
        self, low: float, high: float, messages: Sequence[M], reserve: float = 0.0
    ) -> SelectionReport:
        """Cut the window down to ``low`` tokens (``reserve`` kept beside the overhead for
        the summary); sets the zones.

        The selection is the adapters' structure-aware one
        (:func:`~pycupel.conversation.structure.select_structured`), run over the whole history
        in the provider's count: system prompt and latest user turn pinned, an unbroken run
        of the newest units that starts on a grid boundary (within :data:`TAIL_SHARE` of
        ``low``) as its recent tail, and the rest by relevance to the latest user message.
        Nothing else is forced in, so the window never exceeds the budget: a latest turn too
        large to keep whole loses its older units first, as ``fit_messages`` does. With
        ``shrink`` a unit may be kept in a shorter version (:mod:`pycupel.session.shrink`).
        """
        history = self._history
        latest = history.latest_user_unit
        units = self._guarded_units(latest)
        cut = self._tail_cut(low * TAIL_SHARE)
        keep_recent = sum(
            units[u].item.tokens for u in range(cut, len(units)) if not units[u].item.pinned
        )
        position_of = {id(unit): position for position, unit in enumerate(units)}
        candidates: MessageUnits[M] = MessageUnits(
            self.format.provider,
            tuple(messages) if self._shown is not None else (),
            tuple(units),
            self.format.overhead,
        )
        structure = Structure(keep_recent=keep_recent)
        per_request = self.format.overhead.per_request
        # The newest unit is what the next answer builds on: when it does not fit under the
        # low watermark beside the pinned units, the compaction goes as high as it needs.
        pinned = sum(unit.item.tokens for unit in units if unit.item.pinned)
        newest = units[-1].item.tokens if units and not units[-1].item.pinned else 0
        target = min(max(low, pinned + newest), high)
        limits = (
            target,
            high,
            self.budget - per_request * self._calibration.upper_ratio - reserve,
        )
        for attempt, limit in enumerate(limits):
            try:
                fitted = fit_units(
                    candidates,
                    budget=max(int(limit), 0) + per_request,
                    policy=self.policy,
                    deduplicate=False,
                    unanswered_tool_calls="error",
                    query=history.latest_user_text(),
                    structure=structure,
                    **self._shrink_options(),
                )
                break
            except PinnedBudgetError as exc:
                if attempt == len(limits) - 1:
                    # Restated for the whole prompt in the provider's count.
                    raise PinnedBudgetError(
                        exc.pinned_tokens - per_request + int(self.budget - limit),
                        self.budget,
                    ) from exc
        kept = self._drop_leading([position_of[id(unit)] for unit in fitted.units])
        if self._shown is not None:
            still = set(kept)
            chosen = {position_of[id(unit)]: v for unit, v in fitted.variants.items()}
            changed = self._shown.replace(
                {u: v for u, v in chosen.items() if u in still}, history.units, self.counter
            )
            for u in changed:  # what usage taught about a unit was for its other version
                self._learned.pop(u, None)
        self._stable = [u for u in kept if u < latest]
        self._tail = [u for u in kept if u >= latest]
        self._recall = []
        return fitted.report

    def _shrink_options(self) -> dict[str, Any]:
        """``fit_units``' options for a compaction that may keep shorter versions: the
        versions counted in the provider's count, as the whole units are (see
        :mod:`pycupel.session.shrink`)."""
        if self._shown is None or self.shrink is None or self.format.editor is None:
            return {}
        upper = self._calibration.upper_ratio
        drops = self.format.drops_leading
        return {
            "shrink": self.shrink,
            "editor": scaled_editor(self.format.editor, upper),
            "counter": ScaledCounter(self.counter, upper),
            "leading_filter": LeadingFilter("leading", drops) if drops is not None else None,
        }

    def _guarded_units(self, latest: int) -> list[MessageUnit]:
        """The history's units with their tokens in the provider's count (rounded up, as
        :meth:`_guard` errs high) and the latest user turn pinned."""
        result: list[MessageUnit] = []
        for position, unit in enumerate(self._history.units):
            item = unit.item
            tokens = math.ceil(self._guard_whole(position) - 1e-9)
            pinned = item.pinned or position == latest
            if tokens != item.tokens or pinned != item.pinned:
                result.append(replace(unit, item=item.replace(tokens=tokens, pinned=pinned)))
            else:
                result.append(unit)
        return result

    def _drop_leading(self, kept: list[int]) -> list[int]:
        """Leave out leading units the format does not accept first (never pinned ones)."""
        drops = self.format.drops_leading
        if drops is None:
            return kept
        units = self._history.units
        latest = self._history.latest_user_unit
        result: list[int] = []
        leading = True
        for u in kept:
            unit = units[u]
            if leading and not unit.system_parameter:
                if u != latest and not unit.item.pinned and drops(unit):
                    continue
                leading = False
            result.append(u)
        return result

    def _tail_cut(self, tokens: float) -> int:
        """The first unit of the unbroken recent run: as far back as ``tokens`` allow (the
        newest unit always), then forward to the first unit starting on a grid boundary."""
        units = self._history.units
        start = len(units)
        used = 0.0
        while start > 0 and not units[start - 1].system_parameter:
            cost = self._guard_whole(start - 1)
            if used + cost > tokens and start < len(units):
                break
            used += cost
            start -= 1
        while start < len(units) - 1:
            indices = units[start].message_indices
            if indices and indices[0] % self.grid == 0:
                break
            start += 1
        return start

    def _window(
        self,
        *,
        messages_in: int,
        valid_below: int,
        compacted: bool,
        cache_break: CacheBreak | None,
        edited_at: int | None,
        selection: SelectionReport | None,
    ) -> CoreWindow:
        history = self._history
        units = history.units
        request = [*self._stable, *self._recall, *self._tail]
        previous = self._previous
        extends = request[: len(previous)] == previous and (
            not previous or self._previous_max < valid_below
        )
        if extends:
            common = len(previous)  # the request extends the previous one (compared in C)
        else:
            common = 0
            for before, now in zip(previous, request, strict=False):
                if before != now or now >= valid_below:
                    break
                common += 1
        if cache_break is None and common < len(self._previous):
            cache_break = "recall"  # defensive: any shrink of the prefix is reported
        fixed = self._fixed()
        calibration = self._calibration
        ratio = calibration.ratio
        new_units = request[common:] if extends else request
        self._previous_max = max(self._previous_max if extends else -1, *new_units, -1)
        if self._shown is None:
            # The units' counts, summed once: an extending request adds its new units to the
            # previous request's sum (integers, exact).
            if extends:
                common_tokens = self._previous_tokens
                units_tokens = common_tokens + history.tokens_of(new_units)
            else:
                units_tokens = history.tokens_of(request)
                common_tokens = history.tokens_of(request[:common])
            self._previous_tokens = units_tokens
            estimate = units_tokens + fixed
            if not self._learned:
                # What _sum gives from the counts alone: the count times the ratio.
                tokens = round(units_tokens * ratio + fixed * ratio)
                cached = round(common_tokens * ratio)
        else:
            estimate = sum(self._estimate(u) for u in request) + fixed
        if self._shown is not None or self._learned:
            tokens = round(self._sum([request], ratio) + fixed * ratio)
            cached = round(self._sum([request[:common]], ratio))
        # Per unit in C (map, chain). A request that extends the previous one within the
        # same units (no edit re-read them) adds its new units' parts to the previous ones.
        if extends and edited_at is None:
            added = tuple(map(units.__getitem__, new_units))
            request_units = self._previous_units + added
            indices = self._previous_indices + tuple(chain.from_iterable(map(_INDICES, added)))
        else:
            request_units = tuple(map(units.__getitem__, request))
            indices = tuple(chain.from_iterable(map(_INDICES, request_units)))
        self._previous_units = request_units
        self._previous_indices = indices
        # The stable prefix's messages, counted again only when the zone was replaced (it
        # is never changed in place).
        counted, stable = self._stable_messages
        if counted is not self._stable or edited_at is not None:
            stable = sum(map(len, map(_INDICES, map(units.__getitem__, self._stable))))
            self._stable_messages = (self._stable, stable)
        # The recall zone's messages, listed again only when the zone was replaced.
        listed, recall_messages = self._recall_messages
        if listed is not self._recall or edited_at is not None:
            recall_messages = tuple(
                chain.from_iterable(map(_INDICES, map(units.__getitem__, self._recall)))
            )
            self._recall_messages = (self._recall, recall_messages)
        recall = len(recall_messages)
        summary = self._summary.message if self._summary is not None else None
        summary_at = 0
        if summary is not None:
            stable += 1
            leading = 0  # the summary follows the system prompt (parameter or messages)
            for u in request:
                unit = units[u]
                if not unit.system_parameter and unit.item.kind != ContextKind.SYSTEM_PROMPT:
                    break
                leading += 1
                summary_at += len(unit.message_indices)
            if summary is self._previous_summary and common >= leading:
                cached += round(self._summary.tokens * ratio)  # type: ignore[union-attr]
        self._previous_summary = summary
        report = SessionReport(
            turn=self._turn,
            history_messages=messages_in,
            window_messages=len(indices) + (summary is not None),
            stable_messages=stable,
            recall_messages=recall_messages,
            dropped_units=len(units) - len(request),
            compacted=compacted,
            cache_break=cache_break,
            edited_at=edited_at,
            estimated_tokens=estimate,
            calibration_ratio=calibration.ratio,
            selection=selection,
        )
        self._previous = request
        self._last_estimate = estimate
        return CoreWindow(
            units=request_units,
            message_indices=indices,
            stable_messages=stable,
            recall_messages=recall,
            tokens=tokens,
            cached_tokens=cached,
            compacted=compacted,
            report=report,
            overrides=self._shown.overrides if self._shown is not None else MappingProxyType({}),
            summary=summary,
            summary_at=summary_at,
        )


_INDICES = attrgetter("message_indices")
"""A unit's message positions."""


def _asks(text: str) -> bool:
    """Whether a user message asks something (holds a question mark)."""
    return any(mark in text for mark in QUESTION_MARKS)


def _policy_scorer(policy: Policy | Pipeline | None, budget: int) -> Scorer | None:
    if policy is None:
        return None
    if isinstance(policy, Pipeline):
        return policy.scorer
    return policy.build(ContextBudget(max_tokens=budget, target_tokens=budget)).scorer


def _is_policy(value: object) -> bool:
    # The policy package loads every component: imported only when a policy is given.
    from pycupel.policy import Policy  # noqa: PLC0415

    return isinstance(value, Policy)
