"""The pipeline: classify, score, deduplicate, sort, slice, place.

A :class:`Pipeline` holds configuration only (budget, scorer, slicer, placer, deduplication,
overflow strategy), validated once at construction. Every call to :meth:`Pipeline.run` works on
its own local data, so one instance can serve many threads at once.

Stages, in the specification's fixed order:

1. **Classify** — items with negative ``tokens`` are excluded first (even pinned ones); the rest
   split into pinned and scoreable, keeping input order. Pinned tokens above
   ``max_tokens - output_reserve`` raise :class:`~pycupel.errors.PinnedBudgetError`.
2. **Score** — the scorer scores the scoreable items (the batch form, once per run). A NaN or
   infinite score raises :class:`~pycupel.errors.NonFiniteScoreError`.
3. **Deduplicate** — byte-exact duplicate contents keep their best-scored item (the earliest on
   ties); survivors keep input order. On by default.
4. **Sort** — score descending, input order on ties (stable).
5. **Slice** — the slicer chooses from the sorted items within the effective budget
   (:func:`~pycupel.model.compute_effective_budget`).
6. **Place** — pinned items (score 1.0) then the sliced items in the slicer's output order (with
   their scores, matched by identity) are merged, as the specification's pseudocode does; if
   they exceed the *original* ``target_tokens`` the overflow strategy applies (THROW raises
   :class:`~pycupel.errors.BudgetOverflowError`, TRUNCATE drops non-pinned items that no longer
   fit, walking from the front, PROCEED keeps all and reports an
   :class:`~pycupel.diagnostics.OverflowEvent`); the placer then orders the result.

Diagnostics: with an enabled collector each stage emits one stage event after it completes
(Sort emits none). Its ``item_count`` is the number of items the stage *received*: Classify all
candidates, Score the scoreable items, Deduplicate the scored items, Slice the sorted
(deduplicated) items, Place the merged pinned and sliced items (before any truncation). Item
events, one per exclusion, precede their stage's event. With no collector, or a disabled one,
no event, reason or report object is built.

A budget exclusion is blamed on the pinned items (``PinnedOverride``) only when they made the
item impossible: at Slice, when it is larger than the slicer's effective target yet would fit
the target of the same budget without pinned items; at Place (TRUNCATE), when it would have
fit without the pinned tokens. Anything else is ``BudgetExceeded``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import attrgetter, itemgetter, not_
from time import perf_counter
from typing import TYPE_CHECKING, NoReturn

import numpy as np

from pycupel._checks import check_bool
from pycupel._identity import by_id, identity_key, same_by_identity
from pycupel.diagnostics.collector import (
    DiagnosticTraceCollector,
    TraceCollector,
    TraceDetailLevel,
)
from pycupel.diagnostics.events import OverflowEvent, PipelineStage, TraceEvent
from pycupel.diagnostics.reasons import (
    BudgetExceeded,
    Deduplicated,
    ExclusionReason,
    InclusionReason,
    NegativeTokens,
    PinnedOverride,
    QuotaCapExceeded,
)
from pycupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport
from pycupel.errors import (
    BudgetOverflowError,
    PinnedBudgetError,
    PipelineConfigError,
    PlacerConfigError,
    ScorerConfigError,
    SlicerConfigError,
)
from pycupel.model import (
    ContextBudget,
    ContextItem,
    OverflowStrategy,
    ScoredItem,
    compute_effective_budget,
)
from pycupel.placers import ColumnPlacer, Placer
from pycupel.scorers.base import Scorer, as_scorer, check_finite_scores, score_array
from pycupel.slicers import GreedySlice
from pycupel.slicers._common import ColumnSlicer, token_column
from pycupel.slicers.base import (
    CapExclusion,
    CountRequirementShortfall,
    PackingStats,
    Slicer,
    SliceResult,
    SolverStats,
    TokenRequirementShortfall,
)

if TYPE_CHECKING:
    from pycupel.policy import Policy
    from pycupel.scorers.base import FloatArray

__all__ = ["DryRunResult", "Pipeline", "PipelineResult"]

_PINNED_SCORE = 1.0
_TOKENS = attrgetter("tokens")
_PINNED = attrgetter("pinned")
_ITEM = itemgetter(0)
_SCORE = itemgetter(1)
_PLAIN_TYPES = frozenset({ContextItem})
_COLUMN_SLICE: object = ColumnSlicer.slice
_COLUMN_PLACE: object = ColumnPlacer.place
_tuple_new = tuple.__new__


@dataclass(frozen=True, slots=True)
class PipelineResult:
    """What a run selected.

    Attributes:
        items: the selected items in placed order (the context window, top to bottom).
        total_tokens: sum of ``tokens`` over ``items``.
        overflow: the overflow event when the strategy is PROCEED and the selection exceeds
            ``target_tokens``; None otherwise.
        shortfalls: count requirements the slicer could not meet.
        token_shortfalls: token requirements the slicer could not meet.
        packing: the packer's statistics, when the slicer reports them.
        solver: the optimiser's statistics, when the slicer reports them.
    """

    items: tuple[ContextItem, ...]
    total_tokens: int
    overflow: OverflowEvent | None
    shortfalls: tuple[CountRequirementShortfall, ...]
    token_shortfalls: tuple[TokenRequirementShortfall, ...]
    packing: PackingStats | None
    solver: SolverStats | None


@dataclass(frozen=True, slots=True)
class DryRunResult(PipelineResult):
    """A run's result plus its item-level :class:`~pycupel.diagnostics.SelectionReport`."""

    report: SelectionReport


class Pipeline:
    """A configured, reusable, thread-safe Cupel pipeline.

    Args:
        budget: the default budget of every run (a run may pass its own).
        scorer: any :class:`~pycupel.scorers.Scorer`, or a plain function ``item -> float``.
        slicer: the slicer (default :class:`~pycupel.slicers.GreedySlice`); any object with
            ``slice(items, budget)`` returning a :class:`~pycupel.slicers.SliceResult` (or a
            sequence of the selected items, the specification's interface).
        placer: the placer (default :class:`~pycupel.placers.ChronologicalPlacer`).
        deduplicate: remove byte-exact duplicate contents (default True).
        overflow_strategy: THROW (default), TRUNCATE or PROCEED; a name string is accepted.

    Raises:
        PipelineConfigError: a component is not what it must be, or a flag has the wrong type.
    """

    __slots__ = (
        "_budget",
        "_deduplicate",
        "_overflow_strategy",
        "_placer",
        "_scorer",
        "_slicer",
    )

    _budget: ContextBudget
    _scorer: Scorer
    _slicer: Slicer
    _placer: Placer
    _deduplicate: bool
    _overflow_strategy: OverflowStrategy

    def __init__(
        self,
        *,
        budget: ContextBudget,
        scorer: Scorer | Callable[[ContextItem], float],
        slicer: Slicer | None = None,
        placer: Placer | None = None,
        deduplicate: bool = True,
        overflow_strategy: OverflowStrategy | str = OverflowStrategy.THROW,
    ) -> None:
        _check_budget(budget, "budget")
        try:
            checked_scorer = as_scorer(scorer)
        except ScorerConfigError as exc:
            raise PipelineConfigError("scorer", scorer, exc.rule) from exc
        if slicer is None:
            slicer = GreedySlice()
        elif not callable(getattr(slicer, "slice", None)):
            raise PipelineConfigError(
                "slicer", slicer, "must be a slicer with a slice(items, budget) method"
            )
        if placer is None:
            from pycupel.placers import ChronologicalPlacer  # noqa: PLC0415

            placer = ChronologicalPlacer()
        elif not callable(getattr(placer, "place", None)):
            raise PipelineConfigError(
                "placer", placer, "must be a placer with a place(items) method"
            )
        check_bool(PipelineConfigError, "deduplicate", deduplicate)
        strategy = OverflowStrategy.parse(overflow_strategy)

        setter = object.__setattr__
        setter(self, "_budget", budget)
        setter(self, "_scorer", checked_scorer)
        setter(self, "_slicer", slicer)
        setter(self, "_placer", placer)
        setter(self, "_deduplicate", deduplicate)
        setter(self, "_overflow_strategy", strategy)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Pipeline is immutable; cannot set {name!r}")

    @classmethod
    def from_policy(cls, policy: Policy, *, budget: ContextBudget) -> Pipeline:
        """The pipeline ``policy`` describes, for ``budget``::

        Pipeline.from_policy(presets.chat(), budget=ContextBudget(max_tokens=8000,
                                                                   target_tokens=6000))
        """
        from pycupel.policy import Policy  # noqa: PLC0415 (the policy package builds pipelines)

        if not isinstance(policy, Policy):
            raise PipelineConfigError("policy", policy, "must be a Policy")
        return policy.build(budget)

    # ------------------------------------------------------------------ configuration

    @property
    def budget(self) -> ContextBudget:
        """The default budget of a run."""
        return self._budget

    @property
    def scorer(self) -> Scorer:
        return self._scorer

    @property
    def slicer(self) -> Slicer:
        return self._slicer

    @property
    def placer(self) -> Placer:
        return self._placer

    @property
    def deduplicate(self) -> bool:
        return self._deduplicate

    @property
    def overflow_strategy(self) -> OverflowStrategy:
        return self._overflow_strategy

    def __repr__(self) -> str:
        return (
            f"Pipeline(budget={self._budget!r}, scorer={self._scorer!r}, "
            f"slicer={self._slicer!r}, placer={self._placer!r}, "
            f"deduplicate={self._deduplicate}, "
            f"overflow_strategy={self._overflow_strategy.name})"
        )

    # ------------------------------------------------------------------ running

    def run(
        self,
        items: Sequence[ContextItem],
        *,
        budget: ContextBudget | None = None,
        collector: TraceCollector | None = None,
    ) -> PipelineResult:
        """Select and order ``items`` for the context window.

        Args:
            items: the candidates, a sequence of :class:`~pycupel.ContextItem` (never mutated).
            budget: this run's budget; the pipeline's own when None.
            collector: where to send diagnostics; None or a disabled collector costs nothing.

        Raises:
            PipelineConfigError: ``items``, ``budget`` or ``collector`` is invalid.
            PinnedBudgetError: pinned items need more than ``max_tokens - output_reserve``.
            BudgetOverflowError: the selection exceeds ``target_tokens`` under THROW.
            ScorerConfigError, SlicerConfigError, PlacerConfigError: a component returned
                something invalid (wrong number of scores, items not from its input...).
        """
        run_budget = self._budget if budget is None else _check_budget(budget, "budget")
        candidates = _check_sequence(items)
        trace: _Trace | None = None
        if collector is not None and _collector_enabled(collector):
            trace = _Trace(collector)
        return self._execute(candidates, run_budget, trace)

    def dry_run(
        self, items: Sequence[ContextItem], *, budget: ContextBudget | None = None
    ) -> DryRunResult:
        """Run with item-level diagnostics and return the result with its report.

        Same arguments and errors as :meth:`run`.
        """
        collector = DiagnosticTraceCollector(TraceDetailLevel.ITEM)
        result = self.run(items, budget=budget, collector=collector)
        return DryRunResult(
            items=result.items,
            total_tokens=result.total_tokens,
            overflow=result.overflow,
            shortfalls=result.shortfalls,
            token_shortfalls=result.token_shortfalls,
            packing=result.packing,
            solver=result.solver,
            report=collector.build_report(),
        )

    def _execute(
        self, candidates: Sequence[ContextItem], budget: ContextBudget, trace: _Trace | None
    ) -> PipelineResult:
        # ---- 1. Classify
        started = perf_counter() if trace is not None else 0.0
        pinned: list[ContextItem] = []
        negative: list[ContextItem] = []
        scoreable: Sequence[ContextItem]
        # The common case, every candidate a plain scoreable ContextItem, is checked with
        # C-level passes; it also lets item sets below key on the items themselves.
        plain = _all_plain_scoreable(candidates)
        if plain:
            scoreable = candidates
        else:
            scoreable = []
            for item in candidates:
                if type(item) is not ContextItem and not isinstance(item, ContextItem):
                    _reject_item(candidates)
                if item.tokens < 0:
                    negative.append(item)
                elif item.pinned:
                    pinned.append(item)
                else:
                    scoreable.append(item)
        pinned_tokens = sum(map(_TOKENS, pinned))
        available_for_pinned = budget.max_tokens - budget.output_reserve
        if pinned_tokens > available_for_pinned:
            raise PinnedBudgetError(pinned_tokens, available_for_pinned)
        if trace is not None:
            ended = perf_counter()
            if trace.decisions:
                for item in negative:
                    trace.exclude(item, 0.0, NegativeTokens(item.tokens))
                trace.flush_items(PipelineStage.CLASSIFY)
            trace.stage(PipelineStage.CLASSIFY, started, ended, len(candidates))

        # ---- 2. Score
        if trace is not None:
            started = perf_counter()
        scoreable_tuple = tuple(scoreable)
        scores = self._score(scoreable_tuple)
        if trace is not None:
            trace.stage(PipelineStage.SCORE, started, perf_counter(), len(scoreable_tuple))

        # ---- 3. Deduplicate
        if trace is not None:
            started = perf_counter()
        survivors: Sequence[ContextItem] = scoreable_tuple
        scored_scores = scores
        keep: list[int] | None = None
        if self._deduplicate and len(scoreable_tuple) > 1:
            keep = _deduplicate(scoreable_tuple, scores)
            if keep is not None:
                survivors = [scoreable_tuple[i] for i in keep]
                scores = scores[np.asarray(keep, dtype=np.intp)]
        if trace is not None:
            ended = perf_counter()
            if trace.decisions and keep is not None:
                _explain_duplicates(trace, scoreable_tuple, scored_scores, keep)
                trace.flush_items(PipelineStage.DEDUPLICATE)
            trace.stage(PipelineStage.DEDUPLICATE, started, ended, len(scoreable_tuple))

        # ---- 4. Sort (score descending, input order on ties; no diagnostic event)
        order = np.argsort(-scores, kind="stable")
        sorted_score_array = scores[order]
        sorted_scores: list[float] = sorted_score_array.tolist()
        sorted_items = list(map(survivors.__getitem__, order.tolist()))
        # A built-in columnar slicer decides from the token and score columns alone; the
        # (item, score) pairs are built only for any other slicer.
        columnar = _column_slicer(self._slicer)
        scored: tuple[ScoredItem, ...] | None = None
        if columnar is None:
            scored = _scored_items(sorted_items, sorted_scores)

        # ---- 5. Slice
        if trace is not None:
            started = perf_counter()
        effective = compute_effective_budget(budget, pinned_tokens)
        # `positions`: where each selected item sits in the sorted list, in the slicer's output
        # order (the order the specification's Place stage merges them in).
        positions: list[int] | None = None
        if columnar is not None:
            positions = []
            if sorted_items and effective.target_tokens > 0:
                tokens = token_column(list(map(_TOKENS, sorted_items)))
                positions = columnar.select_positions(tokens, sorted_score_array, effective)
            slice_result = SliceResult(tuple(map(sorted_items.__getitem__, positions)))
        else:
            assert scored is not None
            slice_result = _slice(self._slicer, scored, effective)
        selected = slice_result.selected
        keys = identity_key(selected) if plain else by_id
        selected_keys = set(keys(selected))
        selected_tokens = sum(map(_TOKENS, selected))
        if len(selected_keys) != len(selected):
            _check_no_repeats(candidates)
            raise SlicerConfigError(
                f"{type(self._slicer).__name__}.slice",
                f"{len(selected)} items, {len(selected_keys)} distinct",
                "must return each selected item once",
            )
        # Which sorted entries were chosen, tested in C (no Python frame per item).
        is_chosen = list(map(selected_keys.__contains__, keys(sorted_items)))
        chosen_count = sum(is_chosen)
        if chosen_count != len(selected_keys):
            _check_no_repeats(candidates)
            raise SlicerConfigError(
                f"{type(self._slicer).__name__}.slice",
                f"{len(selected_keys) - chosen_count} items not among its input",
                "must return only items it was given",
            )
        if positions is None:
            # A custom slicer returned items: find them in the sorted list by identity.
            position_of = dict(zip(keys(sorted_items), range(len(sorted_items)), strict=True))
            positions = list(map(position_of.__getitem__, keys(selected)))
        # The chosen items with their scores, in the slicer's output order: the specification
        # merges them so (Place: merged[pinned + i] <- slicedScored[i]), and the placers'
        # index tie-breaks and TRUNCATE's walk follow that order.
        chosen_items = list(map(sorted_items.__getitem__, positions))
        chosen_scores = list(map(sorted_scores.__getitem__, positions))
        if trace is not None:
            ended = perf_counter()
            if trace.decisions:
                is_rejected = list(map(not_, is_chosen))
                _explain_slice(
                    trace,
                    list(compress(sorted_items, is_rejected)),
                    list(compress(sorted_scores, is_rejected)),
                    slice_result,
                    budget=budget,
                    effective_target=effective.target_tokens,
                    selected_tokens=selected_tokens,
                    pinned=pinned,
                    slicer_name=type(self._slicer).__name__,
                )
                trace.flush_items(PipelineStage.SLICE)
            trace.stage(PipelineStage.SLICE, started, ended, len(sorted_items))

        # ---- 6. Place
        if trace is not None:
            started = perf_counter()
        merged_tokens = pinned_tokens + selected_tokens
        target = budget.target_tokens
        overflow: OverflowEvent | None = None
        truncated: list[tuple[ScoredItem, int]] = []
        column_placer = _column_placer(self._placer)
        if merged_tokens <= target and column_placer is not None:
            # Nothing to truncate: a built-in placer orders the plain lists, and its positions
            # are a permutation by construction.
            merged_items = pinned + chosen_items
            merged_scores = [_PINNED_SCORE] * len(pinned) + chosen_scores
            positions = column_placer.order_positions(merged_items, merged_scores)
            placed = tuple(map(merged_items.__getitem__, positions))
            merged_count = len(merged_items)
            total_tokens = merged_tokens
        else:
            merged = [_tuple_new(ScoredItem, (item, _PINNED_SCORE)) for item in pinned]
            if scored is not None:
                merged.extend(map(scored.__getitem__, positions))
            else:
                merged.extend(_scored_items(chosen_items, chosen_scores))
            if merged_tokens > target:
                strategy = self._overflow_strategy
                if strategy is OverflowStrategy.THROW:
                    raise BudgetOverflowError(merged_tokens, target)
                if strategy is OverflowStrategy.TRUNCATE:
                    merged, truncated = _truncate(merged, target)
                else:
                    overflow = OverflowEvent(
                        merged_tokens - target, tuple(entry.item for entry in merged), budget
                    )
            merged_count = len(merged) + len(truncated)
            to_place = tuple(merged)
            placed = self._place(to_place)
            merged_items = list(map(_ITEM, to_place))
            merged_scores = list(map(_SCORE, to_place))
            # The placer only reorders: the total is that of the (possibly truncated) merge.
            total_tokens = merged_tokens - sum(entry.item.tokens for entry, _ in truncated)
        if trace is not None:
            ended = perf_counter()
            if trace.decisions:
                _explain_truncation(trace, truncated, target, pinned_tokens, pinned)
                trace.flush_items(PipelineStage.PLACE)
            trace.stage(PipelineStage.PLACE, started, ended, merged_count)
            if trace.recorder is not None:
                trace.recorder(
                    included=_included(placed, merged_items, merged_scores, len(pinned)),
                    excluded=trace.excluded,
                    count_requirement_shortfalls=slice_result.shortfalls,
                    token_requirement_shortfalls=slice_result.token_shortfalls,
                    packing=slice_result.packing,
                    solver=slice_result.solver,
                )

        return PipelineResult(
            items=placed,
            total_tokens=total_tokens,
            overflow=overflow,
            shortfalls=tuple(slice_result.shortfalls),
            token_shortfalls=tuple(slice_result.token_shortfalls),
            packing=slice_result.packing,
            solver=slice_result.solver,
        )

    # ------------------------------------------------------------------ stage helpers

    def _score(self, items: tuple[ContextItem, ...]) -> FloatArray:
        if not items:
            # The specification: an empty scoreable list is never passed to the scorer.
            return np.empty(0, dtype=np.float64)
        scores = np.asarray(score_array(self._scorer, items), dtype=np.float64)
        if scores.shape != (len(items),):
            raise ScorerConfigError(
                f"{type(self._scorer).__name__}.score_array",
                f"array of shape {scores.shape}",
                f"must return exactly one score per item ({len(items)})",
            )
        check_finite_scores(self._scorer, items, scores)
        return scores

    def _place(self, merged: tuple[ScoredItem, ...]) -> tuple[ContextItem, ...]:
        placer = self._placer
        placed = tuple(placer.place(merged))
        if len(placed) != len(merged) or not same_by_identity(placed, list(map(_ITEM, merged))):
            raise PlacerConfigError(
                f"{type(placer).__name__}.place",
                f"{len(placed)} items for {len(merged)} given",
                "must return exactly the items it was given, each once, reordered",
            )
        return placed


def _scored_items(items: list[ContextItem], scores: list[float]) -> tuple[ScoredItem, ...]:
    # ScoredItem is a NamedTuple: build the tuples directly, without a Python-level loop.
    return tuple(map(_tuple_new, repeat(ScoredItem), zip(items, scores, strict=True)))


def _column_slicer(slicer: Slicer) -> ColumnSlicer | None:
    """``slicer`` when it decides from the columns alone and its ``slice`` is the columnar
    one (a subclass that overrides ``slice`` keeps its own), else None."""
    if isinstance(slicer, ColumnSlicer) and getattr(type(slicer), "slice", None) is _COLUMN_SLICE:
        return slicer
    return None


def _column_placer(placer: Placer) -> ColumnPlacer | None:
    """``placer`` when it is a built-in columnar placer whose ``place`` is not overridden."""
    if isinstance(placer, ColumnPlacer) and getattr(type(placer), "place", None) is _COLUMN_PLACE:
        return placer
    return None


def _all_plain_scoreable(items: Sequence[object]) -> bool:
    """Whether every element is exactly a ContextItem, with ``tokens >= 0`` and not pinned.

    Then Classify passes the list on whole, and the items hash by identity.
    """
    if not items or set(map(type, items)) != _PLAIN_TYPES:
        return False
    return min(map(_TOKENS, items)) >= 0 and not any(map(_PINNED, items))


def _collector_enabled(collector: object) -> bool:
    # Duck-typed on purpose: a runtime Protocol isinstance check costs more than a small run.
    enabled = getattr(collector, "is_enabled", None)
    if not isinstance(enabled, bool) or not (
        callable(getattr(collector, "record_stage_event", None))
        and callable(getattr(collector, "record_item_event", None))
    ):
        raise PipelineConfigError(
            "collector",
            collector,
            "must be a TraceCollector (is_enabled, record_stage_event, record_item_event)",
        )
    return enabled


def _check_budget(budget: object, field: str) -> ContextBudget:
    if not isinstance(budget, ContextBudget):
        raise PipelineConfigError(field, budget, "must be a ContextBudget")
    return budget


def _check_sequence(items: object) -> Sequence[ContextItem]:
    # The elements are checked by Classify, in its single pass over the input.
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise PipelineConfigError(
            "items", items, "must be a sequence (list or tuple) of ContextItem"
        )
    return items


def _reject_item(items: Sequence[object]) -> NoReturn:
    for index, value in enumerate(items):
        if not isinstance(value, ContextItem):
            raise PipelineConfigError(f"items[{index}]", value, "must be a ContextItem")
    raise AssertionError("unreachable: an element failed the ContextItem check")


def _check_no_repeats(items: Sequence[ContextItem]) -> None:
    """Reject the same item object given twice (the pipeline tells items apart by identity)."""
    first: dict[int, int] = {}
    for index, item in enumerate(items):
        earlier = first.setdefault(id(item), index)
        if earlier != index:
            raise PipelineConfigError(
                f"items[{index}]",
                item,
                f"is the same object as items[{earlier}]; pass each candidate once "
                "(item.replace() makes a distinct copy)",
            )


def _deduplicate(items: tuple[ContextItem, ...], scores: FloatArray) -> list[int] | None:
    """Indices of the survivors in input order, or None when there is no duplicate."""
    contents = [item.content for item in items]
    if len(set(contents)) == len(contents):
        return None
    score_list: list[float] = scores.tolist()
    best: dict[str, int] = {}
    for index, content in enumerate(contents):
        current = best.get(content)
        # A strictly higher score replaces; on a tie the earlier item stays.
        if current is None or score_list[index] > score_list[current]:
            best[content] = index
    return sorted(best.values())


def _slice(slicer: Slicer, items: tuple[ScoredItem, ...], budget: ContextBudget) -> SliceResult:
    result: object = slicer.slice(items, budget)
    if isinstance(result, SliceResult):
        return result
    name = f"{type(slicer).__name__}.slice"
    if isinstance(result, list | tuple):
        for value in result:
            if not isinstance(value, ContextItem):
                raise SlicerConfigError(name, value, "must return ContextItem instances")
        return SliceResult.of(result)
    raise SlicerConfigError(name, result, "must return a SliceResult or a sequence of items")


def _truncate(
    merged: list[ScoredItem], target: int
) -> tuple[list[ScoredItem], list[tuple[ScoredItem, int]]]:
    """The specification's TRUNCATE walk: pinned items always stay; others stay while they fit.

    Returns the kept entries and, for each dropped one, the tokens kept when it was dropped.
    """
    kept: list[ScoredItem] = []
    dropped: list[tuple[ScoredItem, int]] = []
    current = 0
    for entry in merged:
        tokens = entry.item.tokens
        if entry.item.pinned or current + tokens <= target:
            kept.append(entry)
            current += tokens
        else:
            dropped.append((entry, current))
    return kept, dropped


def _largest(pinned: Sequence[ContextItem]) -> ContextItem | None:
    """The pinned item with the most tokens (the earliest on ties), or None."""
    best: ContextItem | None = None
    for item in pinned:
        if best is None or item.tokens > best.tokens:
            best = item
    return best


def _slice_budget_reason(
    tokens: int,
    available: int,
    effective_target: int,
    unpinned_target: int,
    displaced_by: ContextItem | None,
) -> ExclusionReason:
    """Why the slicer left out an item of ``tokens`` tokens that no count cap removed."""
    # The slicer's target already lacks the pinned tokens, and ``available`` also lacks what the
    # other scored items took. The pinned items are to blame only when they made the item
    # impossible: too big for the slicer's target, but not for the target the same budget gives
    # without pinned items. Losing room to better-scored items is ordinary competition.
    if displaced_by is not None and effective_target < tokens <= unpinned_target:
        return PinnedOverride(displaced_by.content)
    return BudgetExceeded(tokens, available)


def _truncation_budget_reason(
    tokens: int, available: int, pinned_tokens: int, displaced_by: ContextItem | None
) -> ExclusionReason:
    """Why TRUNCATE dropped an item of ``tokens`` tokens with ``available`` tokens left."""
    # The kept tokens counted against the original target include the pinned ones (TRUNCATE
    # never drops those): the pinned items are to blame when the item would have fit without.
    if (
        displaced_by is not None
        and pinned_tokens > 0
        and available < tokens <= available + pinned_tokens
    ):
        return PinnedOverride(displaced_by.content)
    return BudgetExceeded(tokens, available)


def _cap_reasons(
    result: SliceResult,
    rejected: Sequence[ContextItem],
    slicer_name: str,
) -> dict[int, ExclusionReason]:
    """QuotaCapExceeded for the items a count cap removed, from the slicer's own records.

    Only the slicer that enforced the cap knows its numbers (the configured cap and how many
    items of the kind it would have taken without it), so they are used as recorded. Each
    record must name an item of the slicer's input that it did not select, once.
    """
    if not result.cap_exclusions:
        return {}
    # The slicer's input minus its selection: exactly the items a record may name.
    rejected_ids = set(map(id, rejected))
    reasons: dict[int, ExclusionReason] = {}
    # Records with equal numbers share one immutable reason.
    shared: dict[tuple[str, int, int], ExclusionReason] = {}
    for index, record in enumerate(result.cap_exclusions):
        field = f"{slicer_name}.slice().cap_exclusions[{index}]"
        if not isinstance(record, CapExclusion):
            raise SlicerConfigError(field, record, "must be a CapExclusion")
        item = record.item
        if id(item) not in rejected_ids:
            raise SlicerConfigError(
                field, item, "must name an item of the slicer's input that it did not select"
            )
        if id(item) in reasons:
            raise SlicerConfigError(field, item, "must not name an item a second time")
        key = (record.kind.value, record.cap, record.actual)
        reason = shared.get(key)
        if reason is None:
            reason = shared[key] = QuotaCapExceeded(*key)
        reasons[id(item)] = reason
    return reasons


def _explain_slice(
    trace: _Trace,
    items: list[ContextItem],
    scores: list[float],
    result: SliceResult,
    *,
    budget: ContextBudget,
    effective_target: int,
    selected_tokens: int,
    pinned: list[ContextItem],
    slicer_name: str,
) -> None:
    """Reasons for the sorted items the slicer left out (``items``, with their ``scores``).

    An item a count cap removed gets the slicer's :class:`QuotaCapExceeded`. Any other item
    gets :class:`PinnedOverride` (naming the largest pinned item) when it is larger than the
    slicer's effective target but no larger than the target the budget gives without pinned
    items, and :class:`BudgetExceeded` otherwise, whose ``available_tokens`` is the effective
    target minus the tokens of everything the slicer selected (the specification's D025
    definition), the same for every item of the stage.
    """
    displaced_by = _largest(pinned)
    unpinned_target = effective_target
    if displaced_by is not None:
        unpinned_target = compute_effective_budget(budget, 0).target_tokens
    caps = _cap_reasons(result, items, slicer_name)
    # Reasons are immutable: items with the same token count share one.
    by_tokens = _ReasonsByTokens(
        effective_target - selected_tokens, effective_target, unpinned_target, displaced_by
    )
    if caps:
        reasons = [caps.get(id(item)) or by_tokens[item.tokens] for item in items]
    else:
        reasons = list(map(by_tokens.__getitem__, map(_TOKENS, items)))
    trace.exclude_all(items, scores, reasons)


class _ReasonsByTokens(dict[int, ExclusionReason]):
    """The slice-stage budget reason for an item of a given token count, built on first use."""

    def __init__(
        self,
        available: int,
        effective_target: int,
        unpinned_target: int,
        displaced_by: ContextItem | None,
    ) -> None:
        super().__init__()
        self.available = available
        self.effective_target = effective_target
        self.unpinned_target = unpinned_target
        self.displaced_by = displaced_by

    def __missing__(self, tokens: int) -> ExclusionReason:
        reason = _slice_budget_reason(
            tokens, self.available, self.effective_target, self.unpinned_target, self.displaced_by
        )
        self[tokens] = reason
        return reason


def _explain_duplicates(
    trace: _Trace, items: tuple[ContextItem, ...], scores: FloatArray, keep: list[int]
) -> None:
    kept = set(keep)
    score_list: list[float] = scores.tolist()
    for index, item in enumerate(items):
        if index not in kept:
            # The kept item has byte-identical content: that content names it.
            trace.exclude(item, score_list[index], Deduplicated(item.content))


def _explain_truncation(
    trace: _Trace,
    truncated: list[tuple[ScoredItem, int]],
    target: int,
    pinned_tokens: int,
    pinned: list[ContextItem],
) -> None:
    """Reasons for the items TRUNCATE dropped; see :func:`_truncation_budget_reason`."""
    if not truncated:
        return
    displaced_by = _largest(pinned)
    for entry, kept_tokens in truncated:
        reason = _truncation_budget_reason(
            entry.item.tokens, target - kept_tokens, pinned_tokens, displaced_by
        )
        trace.exclude(entry.item, entry.score, reason)


def _included(
    placed: tuple[ContextItem, ...],
    items: list[ContextItem],
    scores: list[float],
    pinned_count: int,
) -> list[IncludedItem]:
    """The placed items with their scores and inclusion reasons, in placed order.

    ``items`` and ``scores`` are the (possibly truncated) merge: pinned items first.
    """
    # Pinned items lead the merge; the others are free when they cost nothing.
    reasons = [InclusionReason.PINNED] * pinned_count
    tokens = list(map(_TOKENS, items[pinned_count:]))
    if 0 in tokens:
        reasons.extend(
            InclusionReason.ZERO_TOKEN if count == 0 else InclusionReason.SCORED for count in tokens
        )
    else:
        reasons.extend([InclusionReason.SCORED] * len(tokens))
    entries = map(_tuple_new, repeat(IncludedItem), zip(items, scores, reasons, strict=True))
    keys = identity_key(items, placed)
    by_key = dict(zip(keys(items), entries, strict=True))
    return list(map(by_key.__getitem__, keys(placed)))


class _Trace:
    """Per-run diagnostic state; exists only when the collector is enabled."""

    __slots__ = (
        "collector",
        "decisions",
        "excluded",
        "item_events",
        "pending",
        "recorder",
    )

    def __init__(self, collector: TraceCollector) -> None:
        self.collector = collector
        # Item events are skipped only when the collector says it would discard them.
        level = getattr(collector, "detail_level", TraceDetailLevel.ITEM)
        self.item_events = not (isinstance(level, int) and level < TraceDetailLevel.ITEM)
        recorder = getattr(collector, "record_selection", None)
        self.recorder: Callable[..., object] | None = recorder if callable(recorder) else None
        # Whether any per-item decision is wanted at all (events or report entries).
        self.decisions = self.item_events or self.recorder is not None
        self.excluded: list[ExcludedItem] = []
        self.pending: list[ExclusionReason] = []

    def exclude(self, item: ContextItem, score: float, reason: ExclusionReason) -> None:
        if self.recorder is not None:
            self.excluded.append(ExcludedItem(item, score, reason))
        if self.item_events:
            self.pending.append(reason)

    def exclude_all(
        self, items: list[ContextItem], scores: list[float], reasons: list[ExclusionReason]
    ) -> None:
        """Record many exclusions at once (same effect as :meth:`exclude` for each)."""
        if self.recorder is not None:
            self.excluded.extend(
                map(_tuple_new, repeat(ExcludedItem), zip(items, scores, reasons, strict=True))
            )
        if self.item_events:
            self.pending.extend(reasons)

    def flush_items(self, stage: PipelineStage) -> None:
        """Emit the item events of ``stage`` (before its stage event)."""
        if not self.pending:
            return
        # A shared reason gives equal (immutable) events: build one per reason object.
        pending = self.pending
        distinct = dict(zip(map(id, pending), pending, strict=True))
        event_of = {key: TraceEvent(stage, 0.0, 1, str(reason)) for key, reason in distinct.items()}
        events = list(map(event_of.__getitem__, map(id, pending)))
        self.pending = []
        record_many = getattr(self.collector, "record_item_events", None)
        if record_many is not None:
            record_many(events)
        else:
            for event in events:
                self.collector.record_item_event(event)

    def stage(self, stage: PipelineStage, started: float, ended: float, count: int) -> None:
        self.collector.record_stage_event(TraceEvent(stage, (ended - started) * 1000.0, count))
