"""Slicers and budget simulation against exhaustive oracles on small inputs."""

from __future__ import annotations

import math
from itertools import combinations

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st
from pipeline_strategies import items, scorers

from conftest import reliability_examples
from pycupel.analytics import find_min_budget, marginal_items
from pycupel.analytics.simulation import probe_budget
from pycupel.errors import BudgetOverflowError, PinnedBudgetError
from pycupel.model import ContextBudget, ContextItem, ScoredItem
from pycupel.pipeline import Pipeline
from pycupel.placers import ChronologicalPlacer, UShapedPlacer
from pycupel.slicers import GreedySlice, KnapsackSlice, PackerSlice

EXAMPLES = reliability_examples(200)


def _value(score: float) -> int:
    """The knapsack's integer value of a score: max(0, floor(score * 10000))."""
    return max(0, math.floor(score * 10000))


@st.composite
def scored_lists(draw: st.DrawFn) -> list[ScoredItem]:
    count = draw(st.integers(0, 10))
    entries = [
        ScoredItem(
            ContextItem(f"c{index}", tokens=draw(st.integers(0, 40))),
            draw(st.one_of(st.floats(-0.5, 1.5), st.sampled_from([0.0, 0.5, 1.0]))),
        )
        for index in range(count)
    ]
    # The pipeline hands slicers their input sorted by score, descending, stable.
    return sorted(entries, key=lambda entry: -entry.score)


@settings(max_examples=EXAMPLES)
@given(entries=scored_lists(), target=st.integers(0, 120))
@example(entries=[ScoredItem(ContextItem("free", tokens=0), 0.0)], target=0)
def test_knapsack_at_bucket_one_reaches_the_brute_force_optimum(
    entries: list[ScoredItem], target: int
) -> None:
    budget = ContextBudget(max_tokens=target, target_tokens=target)
    chosen = KnapsackSlice(bucket_size=1).slice(entries, budget).selected
    chosen_ids = {id(item) for item in chosen}
    assert len(chosen_ids) == len(chosen)
    assert chosen_ids <= {id(entry.item) for entry in entries}
    assert sum(item.tokens for item in chosen) <= target
    if target == 0:
        assert not chosen  # the specification: targetTokens <= 0 selects nothing at all
        return
    # Otherwise zero-token items are always included.
    assert all(id(e.item) in chosen_ids for e in entries if e.item.tokens == 0)
    weighted = [e for e in entries if e.item.tokens > 0]
    best = 0
    for size in range(len(weighted) + 1):
        for subset in combinations(weighted, size):
            if sum(e.item.tokens for e in subset) <= target:
                best = max(best, sum(_value(e.score) for e in subset))
    got = sum(_value(e.score) for e in weighted if id(e.item) in chosen_ids)
    # The DP's strict-improvement rule may pick another subset, but never a worse one.
    assert got == best


monotonic_slicers = st.one_of(
    st.just(GreedySlice()),
    st.just(KnapsackSlice(bucket_size=1)),
    st.builds(PackerSlice, st.one_of(st.none(), st.integers(1, 3))),
)


@st.composite
def simulation_cases(draw: st.DrawFn) -> tuple[Pipeline, list[ContextItem], ContextItem, int]:
    candidates = draw(st.lists(items(min_tokens=0, max_tokens=30), min_size=1, max_size=7))
    target = draw(st.sampled_from(candidates))
    ceiling = max(target.tokens, 0) + draw(st.integers(0, 70))
    pipeline = Pipeline(
        budget=ContextBudget(max_tokens=1000, target_tokens=1000),
        scorer=draw(scorers),
        slicer=draw(monotonic_slicers),
        placer=draw(st.sampled_from([ChronologicalPlacer(), UShapedPlacer()])),
        deduplicate=draw(st.booleans()),
    )
    return pipeline, candidates, target, ceiling


def _included(pipeline: Pipeline, candidates: list[ContextItem], tokens: int) -> set[int]:
    try:
        return {id(item) for item in pipeline.run(candidates, budget=probe_budget(tokens)).items}
    except PinnedBudgetError:
        return set()


@settings(max_examples=reliability_examples(100))
@given(case=simulation_cases())
def test_find_min_budget_agrees_with_exhaustive_runs(
    case: tuple[Pipeline, list[ContextItem], ContextItem, int],
) -> None:
    pipeline, candidates, target, ceiling = case
    answer = find_min_budget(pipeline, candidates, target, ceiling)
    budgets = range(target.tokens, ceiling + 1)
    included = [id(target) in _included(pipeline, candidates, b) for b in budgets]
    monotonic = included == sorted(included)
    event(f"monotonic over the range: {monotonic}")
    if answer is not None:
        assert target.tokens <= answer <= ceiling
        assert included[answer - target.tokens]
        assert answer == target.tokens or not included[answer - target.tokens - 1]
    else:
        assert not included[-1]
    if monotonic:
        expected = next((b for b, inside in zip(budgets, included, strict=True) if inside), None)
        assert answer == expected


@settings(max_examples=reliability_examples(100))
@given(
    case=simulation_cases(),
    target_tokens=st.integers(0, 150),
    slack=st.integers(0, 150),
)
def test_marginal_items_agree_with_two_plain_runs(
    case: tuple[Pipeline, list[ContextItem], ContextItem, int],
    target_tokens: int,
    slack: int,
) -> None:
    pipeline, candidates, _, _ = case
    slack = min(slack, target_tokens)
    budget = ContextBudget(max_tokens=target_tokens + 20, target_tokens=target_tokens)
    reduced = ContextBudget(
        max_tokens=budget.max_tokens - slack, target_tokens=target_tokens - slack
    )
    try:
        full_run = pipeline.run(candidates, budget=budget)
        reduced_ids = {id(item) for item in pipeline.run(candidates, budget=reduced).items}
    except (PinnedBudgetError, BudgetOverflowError) as exc:
        # The pinned items alone do not fit one of the budgets: the simulation says so too.
        with pytest.raises(type(exc)):
            marginal_items(pipeline, candidates, budget, slack)
        return
    expected = [item for item in full_run.items if id(item) not in reduced_ids]
    got = marginal_items(pipeline, candidates, budget, slack)
    assert [id(item) for item in got] == [id(item) for item in expected]
