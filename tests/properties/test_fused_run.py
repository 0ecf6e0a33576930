"""The fused run of a small untraced batch gives exactly what the staged run gives.

``Pipeline.run`` takes :func:`pycupel.pipeline.fused.run_fused` for at most ``SMALL_BATCH``
candidates with built-in parts and no diagnostics; :func:`pycupel.pipeline.run.execute` is the
staged run every other call takes. Both are run here on the same generated inputs: the same
items in the same order, the same totals and overflow, or the same error.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pipeline_strategies import budgets, item_lists, scorers

from pycupel.errors import CupelError
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy
from pycupel.pipeline import Pipeline, PipelineResult
from pycupel.pipeline import fused as fused_module
from pycupel.pipeline.run import execute
from pycupel.placers import ChronologicalPlacer, SystemFirstPlacer, UShapedPlacer
from pycupel.scorers import (
    CompositeScorer,
    FrequencyScorer,
    KindScorer,
    PriorityScorer,
    RecencyScorer,
)
from pycupel.scorers.base import SMALL_BATCH
from pycupel.slicers import GreedySlice

PLACERS = (UShapedPlacer(), ChronologicalPlacer(), SystemFirstPlacer(UShapedPlacer()))


def staged(pipeline: Pipeline, items: list[Any], budget: ContextBudget) -> PipelineResult:
    """The staged run of ``pipeline`` on ``items`` (what ``run`` does without the fused path)."""
    return execute(
        tuple(items),
        budget,
        None,
        pipeline.scorer,
        pipeline.slicer,
        pipeline._column_slicer,
        pipeline.placer,
        pipeline._column_placer,
        pipeline.deduplicate,
        pipeline.overflow_strategy,
    )


def outcome(action: Any) -> tuple[object, ...]:
    """What a run returned (items by identity, totals, overflow) or raised (type, message)."""
    try:
        result = action()
    except CupelError as error:
        return ("error", type(error), str(error))
    overflow = result.overflow
    return (
        [id(item) for item in result.items],
        result.total_tokens,
        None if overflow is None else (overflow.tokens_over_budget, overflow.overflowing_items),
        result.shortfalls,
        result.token_shortfalls,
        result.packing,
        result.solver,
    )


def assert_alike(pipeline: Pipeline, items: list[Any], budget: ContextBudget) -> None:
    fused_calls: list[object] = []
    real = fused_module.run_fused

    def counting(*args: Any) -> PipelineResult | None:
        fused_calls.append(args)
        return real(*args)

    fused_module_run = "pycupel.pipeline.pipeline.run_fused"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fused_module_run, counting)
        got = outcome(lambda: pipeline.run(items, budget=budget))
        # The pipeline's own budget: the limits it computed once when it was built.
        got_own = outcome(lambda: pipeline.run(items))
    assert got == outcome(lambda: staged(pipeline, items, budget))
    assert got_own == outcome(lambda: staged(pipeline, items, pipeline.budget))
    if pipeline._fused is not None and len(items) <= SMALL_BATCH:
        assert len(fused_calls) == 2  # the fused path was tried (it may hand over)
    else:
        assert fused_calls == []


@settings(max_examples=300, deadline=None)
@given(
    items=item_lists,
    budget=budgets(),
    scorer=scorers,
    placer=st.sampled_from(PLACERS),
    deduplicate=st.booleans(),
    strategy=st.sampled_from(list(OverflowStrategy)),
    repeat=st.booleans(),
)
def test_fused_and_staged_runs_agree(  # noqa: PLR0917 (Hypothesis passes them by keyword)
    items: list[ContextItem],
    budget: ContextBudget,
    scorer: Any,
    placer: Any,
    deduplicate: bool,
    strategy: OverflowStrategy,
    repeat: bool,
) -> None:
    if repeat and items:
        items = [*items, items[0]]  # one object twice: an error either way
    pipeline = Pipeline(
        budget=budget,
        scorer=scorer,
        slicer=GreedySlice(),
        placer=placer,
        deduplicate=deduplicate,
        overflow_strategy=strategy,
    )
    assert_alike(pipeline, items, budget)


def benchmark_like(size: int, seed: int) -> list[ContextItem]:
    """Items like the benchmark's, with ties, missing fields, zero counts and duplicates."""
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    return [
        ContextItem(
            f"item {rng.randint(0, size)}",
            tokens=rng.choice([0, rng.randint(1, 400), rng.randint(1, 400)]),
            kind=rng.choice(["Message", "Document", "ToolOutput", "Memory", "SystemPrompt"]),
            priority=None if rng.random() < 0.2 else rng.randint(0, 100),
            tags=rng.sample([f"topic-{i}" for i in range(12)] + ["Topic-1"], rng.randint(0, 3)),
            timestamp=None if rng.random() < 0.1 else start + timedelta(hours=rng.randint(0, 50)),
            pinned=rng.random() < 0.02,
        )
        for _ in range(size)
    ]


@pytest.mark.parametrize("size", [1, 2, 10, 30, SMALL_BATCH - 1, SMALL_BATCH, SMALL_BATCH + 1])
@pytest.mark.parametrize("placer", PLACERS, ids=lambda placer: type(placer).__name__)
def test_both_sides_of_the_small_batch_limit(size: int, placer: Any) -> None:
    for seed in range(3):
        items = benchmark_like(size, seed)
        total = sum(item.tokens for item in items)
        window = max(total // 4, sum(item.tokens for item in items if item.pinned))
        budget = ContextBudget(max_tokens=window, target_tokens=window)
        scorer = CompositeScorer(
            [
                (RecencyScorer(), 3.0),
                (PriorityScorer(), 2.0),
                (KindScorer(), 1.0),
                (FrequencyScorer(), 1.0),
            ]
        )
        pipeline = Pipeline(budget=budget, scorer=scorer, placer=placer)
        assert_alike(pipeline, items, budget)


def test_a_custom_part_takes_the_staged_run() -> None:
    class OwnGreedy(GreedySlice):
        __slots__ = ()

    class OwnScorer:
        def score_all(self, items: Any) -> list[float]:
            return [1.0] * len(items)

    budget = ContextBudget(max_tokens=500, target_tokens=500)
    assert Pipeline(budget=budget, scorer=KindScorer())._fused is not None
    assert Pipeline(budget=budget, scorer=KindScorer(), slicer=OwnGreedy())._fused is None
    assert Pipeline(budget=budget, scorer=OwnScorer())._fused is None
    items = benchmark_like(10, seed=1)
    for pipeline in (
        Pipeline(budget=budget, scorer=KindScorer(), slicer=OwnGreedy()),
        Pipeline(budget=budget, scorer=OwnScorer()),
    ):
        assert_alike(pipeline, items, budget)
