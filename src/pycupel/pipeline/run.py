"""The run loop: the six stages in the specification's fixed order, and their tracing.

Each stage lives in its own module (:mod:`.classify`, :mod:`.score`, :mod:`.deduplicate`,
:mod:`.sort`, :mod:`.slice`, :mod:`.place`); this loop passes each stage's output to the next
and, only when the run has a :class:`~pycupel.pipeline.trace.Trace`, times the stages and asks
:mod:`.explain` for the reasons of every exclusion.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from operator import not_
from time import perf_counter

from pycupel.diagnostics.events import PipelineStage
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy, ScoredItem
from pycupel.pipeline.classify import check_no_repeats, classify
from pycupel.pipeline.deduplicate import deduplicate
from pycupel.pipeline.explain import (
    explain_duplicates,
    explain_negative,
    explain_slice,
    explain_truncation,
    included,
)
from pycupel.pipeline.place import overflow_limit, place
from pycupel.pipeline.result import PipelineResult
from pycupel.pipeline.score import score
from pycupel.pipeline.slice import chosen_flags, slice_sorted
from pycupel.pipeline.sort import scored_items, sort_by_score
from pycupel.pipeline.trace import Trace
from pycupel.placers import ColumnPlacer, Placer
from pycupel.scorers.base import Scorer
from pycupel.slicers._common import ColumnSlicer
from pycupel.slicers.base import Slicer

__all__ = ["execute"]


def execute(  # noqa: PLR0917 (positional: the per-run entry of the hot path)
    candidates: Sequence[ContextItem],
    budget: ContextBudget,
    trace: Trace | None,
    scorer: Scorer,
    slicer: Slicer,
    columnar_slicer: ColumnSlicer | None,
    placer: Placer,
    columnar_placer: ColumnPlacer | None,
    deduplicate_contents: bool,
    overflow_strategy: OverflowStrategy,
    query: str | None = None,
) -> PipelineResult:
    """Run the stages on ``candidates`` (a checked sequence) within ``budget``.

    ``columnar_slicer`` and ``columnar_placer`` are :func:`.slice.column_slicer` of ``slicer``
    and :func:`.place.column_placer` of ``placer``, found once when the pipeline was built.
    """
    # ---- 1. Classify
    started = perf_counter() if trace is not None else 0.0
    scoreable, pinned, negative, pinned_tokens, plain = classify(candidates, budget)
    if trace is not None:
        ended = perf_counter()
        if trace.decisions:
            explain_negative(trace, negative)
            trace.flush_items(PipelineStage.CLASSIFY)
        trace.stage(PipelineStage.CLASSIFY, started, ended, len(candidates))

    # ---- 2. Score
    if trace is not None:
        started = perf_counter()
    scoreable_tuple = tuple(scoreable)
    scores = score(scorer, scoreable_tuple, query)
    if trace is not None:
        trace.stage(PipelineStage.SCORE, started, perf_counter(), len(scoreable_tuple))

    # ---- 3. Deduplicate
    if trace is not None:
        started = perf_counter()
    survivors: Sequence[ContextItem] = scoreable_tuple
    scored_scores = scores
    keep: list[int] | None = None
    if deduplicate_contents and len(scoreable_tuple) > 1:
        survivors, scores, keep = deduplicate(scoreable_tuple, scores)
        if keep is not None:
            # Equal contents: perhaps one object given twice, which must not pass as its
            # own duplicate. (Distinct contents rule that out at no cost.)
            check_no_repeats(candidates)
    elif not deduplicate_contents:
        check_no_repeats(candidates)
    if trace is not None:
        ended = perf_counter()
        if trace.decisions and keep is not None:
            explain_duplicates(trace, scoreable_tuple, scored_scores, keep)
            trace.flush_items(PipelineStage.DEDUPLICATE)
        trace.stage(PipelineStage.DEDUPLICATE, started, ended, len(scoreable_tuple))

    # ---- 4. Sort (no diagnostic event)
    sorted_items, sorted_scores, sorted_array = sort_by_score(survivors, scores)
    # A built-in columnar slicer decides from the token and score columns alone; the
    # (item, score) pairs are built only for any other slicer.
    scored: tuple[ScoredItem, ...] | None = None
    if columnar_slicer is None:
        scored = scored_items(sorted_items, sorted_scores)

    # ---- 5. Slice
    if trace is not None:
        started = perf_counter()
    slice_result, positions, selected_tokens, effective_target = slice_sorted(
        slicer,
        columnar_slicer,
        sorted_items,
        sorted_scores,
        sorted_array,
        scored,
        budget,
        pinned_tokens,
        candidates,
        plain,
    )
    # The chosen items with their scores, in the slicer's output order: the specification
    # merges them so (Place: merged[pinned + i] <- slicedScored[i]), and the placers'
    # index tie-breaks and TRUNCATE's walk follow that order.
    chosen_items = list(map(sorted_items.__getitem__, positions))
    chosen_scores = list(map(sorted_scores.__getitem__, positions))
    if trace is not None:
        ended = perf_counter()
        if trace.decisions:
            is_rejected = list(map(not_, chosen_flags(positions, len(sorted_items))))
            explain_slice(
                trace,
                list(compress(sorted_items, is_rejected)),
                list(compress(sorted_scores, is_rejected)),
                slice_result,
                budget=budget,
                effective_target=effective_target,
                selected_tokens=selected_tokens,
                pinned=pinned,
                slicer_name=type(slicer).__name__,
            )
            trace.flush_items(PipelineStage.SLICE)
        trace.stage(PipelineStage.SLICE, started, ended, len(sorted_items))

    # ---- 6. Place
    if trace is not None:
        started = perf_counter()
    placed, total_tokens, overflow, truncated, merged_items, merged_scores, merged_count = place(
        placer,
        columnar_placer,
        overflow_strategy,
        pinned,
        chosen_items,
        chosen_scores,
        scored,
        positions,
        pinned_tokens + selected_tokens,
        budget,
    )
    if trace is not None:
        ended = perf_counter()
        if trace.decisions:
            explain_truncation(trace, truncated, overflow_limit(budget), pinned_tokens, pinned)
            trace.flush_items(PipelineStage.PLACE)
        trace.stage(PipelineStage.PLACE, started, ended, merged_count)
        if trace.recorder is not None:
            trace.recorder(
                included=included(placed, merged_items, merged_scores, len(pinned)),
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
