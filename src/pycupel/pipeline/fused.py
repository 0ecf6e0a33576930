"""The fused run: the six stages in one pass of plain lists, for a small untraced run.

A run without diagnostics on at most :data:`~pycupel.scorers.base.SMALL_BATCH` candidates, with
a built-in scorer, a built-in columnar slicer and a built-in columnar placer, spends most of
its time between the stages (stage calls, intermediate tuples and budget objects) rather than
in them. :func:`run_fused` does the same work on lists of positions: the candidates' columns
are read once, survivors, sorted order and selection stay positions into them, and the
effective budget is two integers; :class:`~pycupel.slicers.GreedySlice` fills straight from
those positions (:func:`~pycupel.slicers.greedy.fill_lists`, its own list form).

It computes exactly what the staged run (:func:`~pycupel.pipeline.run.execute`) computes: the
same scores (the same scorer call), the same stable sorts, the same selection, the same
placement, the same errors in the same order; ``tests/properties/test_fused_run.py`` runs both on
generated inputs. Whatever it does not handle itself (a candidate that is not a ContextItem, a
negative token count, a pinned item over the budget, one pinned object given twice, an
overflow) it leaves to the staged run, before scoring or by handing over the stage, so those
rules live in one place.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING

from pycupel.model import (
    ContextBudget,
    ContextItem,
    OverflowStrategy,
    effective_budget_of,
    effective_limits,
)
from pycupel.pipeline.classify import check_no_repeats
from pycupel.pipeline.deduplicate import deduplicate
from pycupel.pipeline.place import PINNED_SCORE, overflow_limit, place
from pycupel.pipeline.result import PipelineResult, new_result
from pycupel.pipeline.score import checked_score_list
from pycupel.placers import UShapedPlacer, u_shaped
from pycupel.slicers._common import TOKEN_TOTAL_LIMIT, check_token_counts
from pycupel.slicers.greedy import GreedySlice, fill_lists

if TYPE_CHECKING:
    from pycupel.placers import ColumnPlacer
    from pycupel.scorers.base import BaseScorer
    from pycupel.scorers.small_batch import SmallBatchScoring
    from pycupel.slicers._common import ColumnSlicer

__all__ = ["budget_limits", "run_fused"]

_TOKENS = attrgetter("tokens")
_PINNED = attrgetter("pinned")
_CONTENT = attrgetter("content")
_NO_SHORTFALLS: tuple[()] = ()


def budget_limits(budget: ContextBudget) -> tuple[int, int]:
    """``(the slicer's target without pinned items, the overflow limit)`` of ``budget``: what
    the fused run reads of a budget, computed once per pipeline for its own budget."""
    return effective_limits(budget, 0)[1], overflow_limit(budget)


def run_fused(  # noqa: PLR0917 (one pass on purpose)
    candidates: tuple[ContextItem, ...],
    budget: ContextBudget,
    scorer: BaseScorer,
    small_scoring: SmallBatchScoring | None,
    slicer: ColumnSlicer,
    placer: ColumnPlacer,
    deduplicate_contents: bool,
    overflow_strategy: OverflowStrategy,
    query: str | None,
    limits: tuple[int, int] | None = None,
) -> PipelineResult | None:
    """The run's result, or None when the staged run must take ``candidates`` (see above).

    ``candidates`` is the run's snapshot, at most ``SMALL_BATCH`` long; ``scorer`` a built-in
    scorer and ``small_scoring`` its :func:`~pycupel.scorers.small_batch.small_batch_scoring`
    (found when the pipeline was built); ``slicer`` and ``placer`` the pipeline's columnar
    slicer and placer; ``limits`` the :func:`budget_limits` of ``budget``, when the pipeline
    computed them once for its own budget.
    """
    if not candidates:
        return None
    # ---- Classify: every candidate a ContextItem (a subclass too) with a count >= 0.
    for cls in set(map(type, candidates)):
        if cls is not ContextItem and not issubclass(cls, ContextItem):
            return None
    all_tokens = list(map(_TOKENS, candidates))
    if min(all_tokens) < 0:
        return None
    # Below the slicers' limit in total, no subset can reach it: their check has nothing to find.
    check_total = sum(all_tokens) >= TOKEN_TOTAL_LIMIT
    pinned: list[ContextItem] = []
    pinned_tokens = 0
    if any(map(_PINNED, candidates)):
        flags = list(map(_PINNED, candidates))
        pinned = [item for item, flag in zip(candidates, flags, strict=True) if flag]
        pinned_tokens = sum(map(_TOKENS, pinned))
        repeated = len(set(map(id, pinned))) != len(pinned)
        if repeated or pinned_tokens > budget.max_tokens - budget.output_reserve:
            return None
        items = tuple([item for item, flag in zip(candidates, flags, strict=True) if not flag])
        tokens = [count for count, flag in zip(all_tokens, flags, strict=True) if not flag]
    else:
        items = candidates
        tokens = all_tokens

    # ---- Score. Contents are read first: distinct contents are distinct objects, which
    # spares a scorer that tells items apart by identity its own check.
    deduplicating = deduplicate_contents and len(items) > 1
    distinct = False
    if deduplicating:
        contents = list(map(_CONTENT, items))
        distinct = len(set(contents)) == len(contents)
    scores: list[float] = []
    if items:
        if small_scoring is not None:
            scores = small_scoring(items, distinct)  # one finite score per item, by its contract
        else:
            scores = checked_score_list(scorer, items, query)

    # ---- Deduplicate
    if deduplicating:
        if not distinct:
            survivors, kept_scores, _ = deduplicate(items, scores)
            check_no_repeats(candidates)
            items = tuple(survivors)
            scores = kept_scores  # type: ignore[assignment]  # a list in, a list out
            tokens = list(map(_TOKENS, items))
    elif not deduplicate_contents:
        check_no_repeats(candidates)

    # ---- Sort and Slice, on the effective target; ``chosen`` are positions in ``items``.
    # The score order (descending, input order on ties: Python's sort is stable in reverse)
    # is what the slicer visits; GreedySlice's fill sorts it by density and builds it only
    # when two densities tie (see fill_lists).
    count = len(items)
    effective_target, overflow_at = limits if limits is not None else budget_limits(budget)
    if pinned_tokens:
        effective_target = effective_limits(budget, pinned_tokens)[1]
    chosen: list[int] = []
    selected_tokens = 0
    if count and effective_target > 0:
        if type(slicer) is GreedySlice:
            if check_total:
                check_token_counts(tokens)  # GreedySlice's own check (only the total can fail)
            chosen, selected_tokens = fill_lists(None, tokens, scores, effective_target)
        else:
            order = sorted(range(count), key=scores.__getitem__, reverse=True)
            sorted_tokens = list(map(tokens.__getitem__, order))
            positions = slicer.select_positions_of_lists(
                sorted_tokens,
                list(map(scores.__getitem__, order)),
                effective_budget_of(budget, pinned_tokens),
            )
            chosen = list(map(order.__getitem__, positions))
            selected_tokens = sum(map(sorted_tokens.__getitem__, positions))

    # ---- Place
    merged_tokens = pinned_tokens + selected_tokens
    if merged_tokens <= overflow_at and not pinned and type(placer) is UShapedPlacer:
        # The U-shaped order straight from the positions: ranked by score (finite here),
        # ties in the slicer's order, as UShapedPlacer.order_positions ranks them.
        ranked = sorted(chosen, key=scores.__getitem__, reverse=True)
        return new_result(tuple(map(items.__getitem__, u_shaped(ranked))), merged_tokens, None)
    chosen_items = list(map(items.__getitem__, chosen))
    chosen_scores = list(map(scores.__getitem__, chosen))
    if merged_tokens > overflow_at:
        # The overflow strategy's rules, from the staged Place.
        placed, total_tokens, overflow, *_ = place(
            placer,
            placer,
            overflow_strategy,
            pinned,
            chosen_items,
            chosen_scores,
            None,
            [],
            merged_tokens,
            budget,
        )
        return new_result(placed, total_tokens, overflow)
    if pinned:
        chosen_items[:0] = pinned
        chosen_scores[:0] = [PINNED_SCORE] * len(pinned)
    placement = placer.order_positions(chosen_items, chosen_scores)
    return new_result(tuple(map(chosen_items.__getitem__, placement)), merged_tokens, None)
