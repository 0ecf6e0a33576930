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
* **Recall first.** With ``prefer="recall"``, a new user message that re-decides the recall
  zone is served by a one-off fresh fit when that keeps what the window lacks
  (:mod:`pycupel.session.fresh`); the next turn goes back to the cached window.
* **Provider compaction.** When the provider compacts the conversation itself (an
  Anthropic ``compaction`` block, after which the API drops what comes before it), the
  history's start moves to that message: the window keeps only what the provider reads,
  and the report names the cache break ``provider-compaction``.
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

import threading
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import numpy.typing as npt

from pycupel._checks import MAX_BUDGET, check_bool, check_float, check_int
from pycupel.conversation.arguments import resolve_counter
from pycupel.conversation.recall import Recall as ConversationRecall
from pycupel.conversation.units import MessageUnit
from pycupel.diagnostics import SelectionReport
from pycupel.errors import SessionConfigError
from pycupel.model import ContextBudget
from pycupel.pipeline import Pipeline
from pycupel.scorers.base import Scorer
from pycupel.session.calibration import Calibration
from pycupel.session.format import NO_SYSTEM, MessageFormat
from pycupel.session.fresh import PREFER, FreshFits, Prefer
from pycupel.session.history import History
from pycupel.session.recall import Recall
from pycupel.session.shrink import (
    ShownVersions,
    resolve_session_shrink,
)
from pycupel.session.summary import RunningSummary, start_summary
from pycupel.session.usage import ProviderUsage, read_usage
from pycupel.session.window import CacheBreak, CoreWindow
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
RECALL_MARGIN = 0.5
"""A message that asks nothing re-decides the recall zone only when the best match inside
the request scores under this share of the best match outside it."""
QUESTION_MARKS = ("?", "\uff1f")
"""A user message holding one of these asks something (the full-width mark of Chinese and
Japanese text included)."""


class SessionCore(FreshFits[M]):
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
        prefer: Prefer = "cost",
        pin_system: bool = True,
        shrink: Shrink | bool | None = None,
        summarize: Summarize | None = None,
        on_summary_error: OnSummaryError = "raise",
        recall: ConversationRecall | None = None,
    ) -> None:
        err = SessionConfigError
        per_request = fmt.overhead.per_request
        self.budget = check_int(err, "budget", budget, minimum=per_request + 1, maximum=MAX_BUDGET)
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
        if prefer not in PREFER:
            raise SessionConfigError("prefer", prefer, "must be 'cost' or 'recall'")
        self.prefer: Prefer = prefer
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
        self._one_off_units: list[int] | None = None
        self._cached_prefixes: list[int] = []
        self._pending_break: CacheBreak | None = None
        # Shrinking and the running summary (None when not asked for). With a recall the
        # model can fetch what an excerpt elides, so shorter versions are on by default.
        self.recall = _session_recall(recall, shrink)
        self.shrink = resolve_session_shrink(
            True if shrink is None and recall is not None else shrink, policy
        )
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
            if self._one_off_units is None:
                # A one-off request (prefer="recall") shows units as the window does not:
                # it calibrates the ratio, and teaches nothing about single units.
                self._learn(read.prompt_tokens)
            self._recorded_turn = self._turn
        return read

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
        previous_units = history.accepted_units
        sync = history.sync(messages, system)
        history.check_complete()
        history.accept()
        units = history.units
        self._turn += 1
        first = self._turn == 1 or (not self._previous and self._pending_break is None)
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
            self._cached_prefixes = []
            cache_break = "edit"
        self._tail.extend(range(previous_units, len(units)))
        if sync.edited_at is not None:
            self._restore_latest_turn()
        if sync.start_moved:
            # The provider compacted the conversation: it reads the history from a later
            # message on, and the window starts over from there.
            self._shift_start()
            if cache_break is None:
                cache_break = "provider-compaction"

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
        # prefer="recall": whether this turn's new user message re-decides what it needs
        # (then a fresh fit may serve it, see pycupel.session.fresh).
        fresh = False
        if (recall_cap > 0 or self.prefer == "recall") and (
            new_message or (self._recall and not zone_fits)
        ):
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
                fresh = new_message and self.prefer == "recall"
                if recall_cap > 0:
                    recall = self._choose_recall(scores, min(recall_cap, limit - window_tokens))
                else:
                    self._recall_query = latest
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

        one_off = self._fresh_request(messages) if fresh else None
        window = self._window(
            messages_in=len(messages),
            valid_below=valid_below,
            compacted=compacted,
            cache_break=cache_break,
            edited_at=sync.edited_at,
            selection=selection,
            unsent=one_off is not None,
        )
        if one_off is not None:
            return self._one_off(one_off, window)
        return window


def _session_recall(recall: object, shrink: object) -> ConversationRecall | None:
    """The ``recall=`` option of a session: a :class:`~pycupel.conversation.Recall` (which
    needs shorter versions: they are what it recalls) or None."""
    if recall is None:
        return None
    if not isinstance(recall, ConversationRecall):
        raise SessionConfigError(
            "recall", recall, "must be a pycupel.conversation.Recall (its scope and store) or None"
        )
    if shrink is False:
        raise SessionConfigError(
            "recall",
            recall,
            "needs shorter versions: leave shrink= on (shrink=False elides nothing)",
        )
    return recall


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
