"""Budget simulation against brute force: marginal items, minimum budget, sweeps."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pycupel.analytics import (
    SweepPoint,
    find_min_budget,
    marginal_items,
    probe_budget,
    sweep_budgets,
)
from pycupel.errors import BudgetSimulationError, NonMonotonicSlicerError
from pycupel.model import ContextBudget, ContextItem, ScoredItem
from pycupel.pipeline import Pipeline
from pycupel.policy import Policy, ScorerSpec, SlicerSpec
from pycupel.scorers import ReflexiveScorer
from pycupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    GreedySlice,
    KnapsackSlice,
    QuotaEntry,
    QuotaSlice,
    SliceResult,
)

BUDGET = ContextBudget(max_tokens=500, target_tokens=400)


def pipeline_with(slicer: object, budget: ContextBudget = BUDGET) -> Pipeline:
    return Pipeline(budget=budget, scorer=ReflexiveScorer(), slicer=slicer)  # type: ignore[arg-type]


def item(content: str, tokens: int, hint: float, *, pinned: bool = False) -> ContextItem:
    return ContextItem(content, tokens=tokens, future_relevance_hint=hint, pinned=pinned)


def included_at(
    pipeline: Pipeline, items: Sequence[ContextItem], budget: ContextBudget
) -> list[ContextItem]:
    return [entry.item for entry in pipeline.dry_run(items, budget=budget).report.included]


# --------------------------------------------------------------------------- strategies

candidate_lists = st.lists(
    st.tuples(st.integers(1, 60), st.floats(0.0, 1.0)), min_size=1, max_size=10
).map(lambda specs: [item(f"c{i}", tokens, hint) for i, (tokens, hint) in enumerate(specs)])
slicers = st.one_of(
    st.just(GreedySlice()), st.integers(1, 7).map(lambda size: KnapsackSlice(bucket_size=size))
)


# --------------------------------------------------------------------------- find_min_budget


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(candidate_lists, slicers, st.data())
def test_find_min_budget_against_brute_force(
    items: list[ContextItem], slicer: object, data: st.DataObject
) -> None:
    pipeline = pipeline_with(slicer)
    target = data.draw(st.sampled_from(items))
    ceiling = data.draw(st.integers(target.tokens, target.tokens + 200))
    found = find_min_budget(pipeline, items, target, ceiling)

    budgets = range(target.tokens, ceiling + 1)
    inclusion = [target in included_at(pipeline, items, probe_budget(b)) for b in budgets]

    # What the binary search guarantees on any input:
    if found is None:
        assert not inclusion[-1]
    else:
        assert inclusion[found - target.tokens]
        assert found == target.tokens or not inclusion[found - target.tokens - 1]
    # Where inclusion is monotonic over the range, the answer is the exact minimum.
    first = next((b for b, flag in zip(budgets, inclusion, strict=True) if flag), None)
    monotonic = first is None or all(inclusion[first - target.tokens :])
    if monotonic:
        assert found == first


def test_item_that_fits_at_its_own_size_is_found_there() -> None:
    # Greedy by density takes B (0.01/token) before A (0.009) and C (0.0067).
    a, b, c = item("A", 100, 0.9), item("B", 50, 0.5), item("C", 30, 0.2)
    pipeline = pipeline_with(GreedySlice())
    # C fits alone from 30 to 49 tokens; the specification's loop alone would answer 31.
    assert find_min_budget(pipeline, [a, b, c], c, 1000) == 30
    # A needs room for B as well (B goes first): 150.
    assert find_min_budget(pipeline, [a, b, c], a, 1000) == 150
    assert find_min_budget(pipeline, [a, b, c], a, 150) == 150
    assert find_min_budget(pipeline, [a, b, c], a, 149) is None
    assert find_min_budget(pipeline, [a, b, c], a, 100) is None


def test_not_reachable_returns_none() -> None:
    big, small = item("big", 100, 0.1), item("small", 10, 0.9)
    pipeline = pipeline_with(KnapsackSlice(bucket_size=1))
    # The knapsack prefers the small item until both fit.
    assert find_min_budget(pipeline, [big, small], big, 500) == 110
    assert find_min_budget(pipeline, [big, small], big, 110) == 110
    assert find_min_budget(pipeline, [big, small], big, 109) is None
    lonely = item("never", 50, 0.0)
    blocker = item("blocker", 50, 1.0)
    assert find_min_budget(pipeline, [lonely, blocker], lonely, 60) is None
    assert find_min_budget(pipeline, [lonely, blocker], lonely, 50) is None
    negative = item("negative", -5, 1.0)
    assert find_min_budget(pipeline, [negative], negative, 10) is None


def test_pinned_items_count_against_each_probe() -> None:
    pinned = item("system", 40, 0.0, pinned=True)
    target = item("target", 30, 0.5)
    pipeline = pipeline_with(GreedySlice())
    # Below 40 tokens the pinned item alone does not fit (PinnedBudgetError): not included.
    assert find_min_budget(pipeline, [pinned, target], target, 500) == 70


def test_find_min_budget_argument_errors() -> None:
    a = item("a", 10, 0.5)
    twin = item("a", 10, 0.5)
    pipeline = pipeline_with(GreedySlice())
    with pytest.raises(BudgetSimulationError, match="target_item: must be an element of items"):
        find_min_budget(pipeline, [a], twin, 100)
    with pytest.raises(BudgetSimulationError, match=r"search_ceiling: must be >= target_item"):
        find_min_budget(pipeline, [a], a, 9)
    with pytest.raises(BudgetSimulationError, match="search_ceiling: must be an integer"):
        find_min_budget(pipeline, [a], a, 10.5)  # type: ignore[arg-type]
    with pytest.raises(BudgetSimulationError, match="pipeline: must be a Pipeline"):
        find_min_budget("pipeline", [a], a, 100)  # type: ignore[arg-type]
    with pytest.raises(BudgetSimulationError, match="items: must be a sequence"):
        find_min_budget(pipeline, "a", a, 100)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- guards

FIND_MESSAGE = (
    "FindMinBudgetFor requires monotonic item inclusion. QuotaSlice and CountQuotaSlice "
    "produce non-monotonic inclusion as budget changes shift allocations. Use a GreedySlice or "
    "KnapsackSlice inner slicer for budget simulation."
)
MARGINAL_MESSAGE = (
    "GetMarginalItems requires monotonic item inclusion. QuotaSlice produces non-monotonic "
    "inclusion as budget changes shift percentage allocations."
)


def test_quota_slicers_are_refused_with_the_specification_messages() -> None:
    a = item("a", 10, 0.5)
    quota = pipeline_with(QuotaSlice([QuotaEntry("Message", 10, 50)]))
    count = pipeline_with(CountQuotaSlice([CountQuotaEntry("Message", 1)]))
    for pipeline in (quota, count):
        with pytest.raises(NonMonotonicSlicerError) as exc:
            find_min_budget(pipeline, [a], a, 100)
        assert str(exc.value) == FIND_MESSAGE
        assert exc.value.operation == "find_min_budget"
        assert exc.value.field == "pipeline.slicer"
        assert isinstance(exc.value, BudgetSimulationError)
    with pytest.raises(NonMonotonicSlicerError) as exc:
        marginal_items(quota, [a], BUDGET, 10)
    assert str(exc.value) == MARGINAL_MESSAGE


def test_other_non_monotonic_slicers_are_refused_too() -> None:
    a = item("a", 10, 0.5)
    ccks = pipeline_with(CountConstrainedKnapsackSlice([CountQuotaEntry("Message", 1)]))
    with pytest.raises(NonMonotonicSlicerError) as exc:
        find_min_budget(ccks, [a], a, 100)
    assert str(exc.value) == (
        "FindMinBudgetFor requires monotonic item inclusion. CountConstrainedKnapsackSlice "
        "produces non-monotonic inclusion as budget changes shift allocations. Use a "
        "GreedySlice or KnapsackSlice for budget simulation."
    )
    count = pipeline_with(CountQuotaSlice([CountQuotaEntry("Message", 1)]))
    with pytest.raises(NonMonotonicSlicerError) as exc:
        marginal_items(count, [a], BUDGET, 10)
    assert str(exc.value) == (
        "GetMarginalItems requires monotonic item inclusion. CountQuotaSlice produces "
        "non-monotonic inclusion as budget changes shift allocations."
    )


class _Undeclared:
    """A custom slicer that says nothing about monotonicity."""

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        return SliceResult.of(s.item for s in items[:1])


class _Declared(_Undeclared):
    budget_monotonic = True


def test_custom_slicers_must_declare_monotonicity() -> None:
    a = item("a", 10, 0.5)
    with pytest.raises(NonMonotonicSlicerError, match="_Undeclared does not declare it"):
        find_min_budget(pipeline_with(_Undeclared()), [a], a, 100)
    assert find_min_budget(pipeline_with(_Declared()), [a], a, 100) == 10


# --------------------------------------------------------------------------- marginal items


@st.composite
def budgets_and_slack(draw: st.DrawFn) -> tuple[ContextBudget, int]:
    max_tokens = draw(st.integers(0, 400))
    target = draw(st.integers(0, max_tokens))
    reserve = draw(st.integers(0, max_tokens))
    slack = draw(st.integers(0, target))
    assume(max_tokens - slack >= reserve)
    return ContextBudget(max_tokens=max_tokens, target_tokens=target, output_reserve=reserve), slack


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(candidate_lists, slicers, budgets_and_slack())
def test_marginal_items_against_brute_force(
    items: list[ContextItem], slicer: object, budget_slack: tuple[ContextBudget, int]
) -> None:
    budget, slack = budget_slack
    pipeline = pipeline_with(slicer)
    found = marginal_items(pipeline, items, budget, slack)
    full = included_at(pipeline, items, budget)
    reduced_budget = ContextBudget(
        max_tokens=budget.max_tokens - slack,
        target_tokens=budget.target_tokens - slack,
        output_reserve=budget.output_reserve,
    )
    reduced = included_at(pipeline, items, reduced_budget)
    assert found == [x for x in full if not any(x is y for y in reduced)]
    assert marginal_items(pipeline, items, budget, 0) == []


def test_marginal_items_example() -> None:
    a, b, c = item("A", 100, 0.9), item("B", 50, 0.5), item("C", 30, 0.2)
    pipeline = pipeline_with(KnapsackSlice(bucket_size=10))
    budget = ContextBudget(max_tokens=200, target_tokens=180)
    assert set(marginal_items(pipeline, [a, b, c], budget, 30)) == {c}
    assert set(marginal_items(pipeline, [a, b, c], budget, 80)) == {b, c}


def test_marginal_items_keeps_reserve_and_slots() -> None:
    a = item("A", 100, 0.9)
    pipeline = pipeline_with(GreedySlice())
    budget = ContextBudget(
        max_tokens=300, target_tokens=200, output_reserve=100, reserved_slots={"Memory": 50}
    )
    # Full run: 200 - 50 slots = 150 for items, A fits; minus 60 slack: 90, A does not.
    assert marginal_items(pipeline, [a], budget, 60) == [a]
    assert marginal_items(pipeline, [a], budget, 50) == []


def test_marginal_items_argument_errors() -> None:
    a = item("a", 10, 0.5)
    pipeline = pipeline_with(GreedySlice())
    budget = ContextBudget(max_tokens=100, target_tokens=50, output_reserve=80)
    with pytest.raises(BudgetSimulationError, match="slack_tokens: must be >= 0"):
        marginal_items(pipeline, [a], budget, -1)
    with pytest.raises(BudgetSimulationError, match=r"must be <= budget.target_tokens \(50\)"):
        marginal_items(pipeline, [a], budget, 51)
    with pytest.raises(BudgetSimulationError, match=r"max_tokens - budget.output_reserve \(20\)"):
        marginal_items(pipeline, [a], budget, 21)
    # Full run: 100 - 80 reserve leaves 20 tokens; reduced run: 80 - 80 leaves none.
    assert marginal_items(pipeline, [a], budget, 20) == [a]
    with pytest.raises(BudgetSimulationError, match="budget: must be a ContextBudget"):
        marginal_items(pipeline, [a], 100, 1)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- sweeps


def test_sweep_matches_individual_runs() -> None:
    items = [item(f"i{n}", 10 * (n + 1), 0.1 * n) for n in range(6)]
    base = ContextBudget(max_tokens=1000, target_tokens=900, output_reserve=5)
    pipeline = pipeline_with(GreedySlice(), base)
    explicit = ContextBudget(max_tokens=80, target_tokens=60)
    points = sweep_budgets(pipeline, items, [5, 50, 100, explicit, 1000])
    assert [p.budget for p in points] == [
        base.replace(max_tokens=5, target_tokens=5),
        base.replace(max_tokens=50, target_tokens=50),
        base.replace(max_tokens=100, target_tokens=100),
        explicit,
        base.replace(max_tokens=1000, target_tokens=1000),
    ]
    for point in points:
        report = pipeline.dry_run(items, budget=point.budget).report
        assert point.selected == tuple(e.item for e in report.included)
        assert point.tokens_used == sum(x.tokens for x in point.selected)
        assert point.total_score == pytest.approx(sum(e.score for e in report.included))
        assert point.included_count == len(report.included)
        assert point.excluded_count == len(report.excluded)
        assert sum(point.kind_counts.values()) == point.included_count
        assert point.feasible
    assert points[-1].included_count == len(items)


def test_sweep_uses_the_base_budget_and_reports_infeasible_points() -> None:
    pinned = item("system", 40, 0.0, pinned=True)
    other = item("other", 10, 0.5)
    pipeline = pipeline_with(GreedySlice())
    base = ContextBudget(max_tokens=10, target_tokens=10)
    points = sweep_budgets(pipeline, [pinned, other], [20, 60], base_budget=base)
    assert points[0] == SweepPoint(points[0].budget, (), 0, 0.0, 0, 2, {}, feasible=False)
    assert points[1].feasible
    assert set(points[1].selected) == {pinned, other}


def test_sweep_checks_every_budget_first() -> None:
    pipeline = pipeline_with(
        GreedySlice(), ContextBudget(max_tokens=100, target_tokens=50, output_reserve=20)
    )
    with pytest.raises(BudgetSimulationError, match=r"budgets\[1\]: must be >= 0"):
        sweep_budgets(pipeline, [], [30, -1])
    with pytest.raises(BudgetSimulationError, match=r"budgets\[0\]: must be >= base output_re"):
        sweep_budgets(pipeline, [], [10])
    with pytest.raises(BudgetSimulationError, match=r"budgets\[0\]: must be an integer"):
        sweep_budgets(pipeline, [], ["100"])
    with pytest.raises(BudgetSimulationError, match="budgets: must be an iterable"):
        sweep_budgets(pipeline, [], 100)  # type: ignore[arg-type]
    assert sweep_budgets(pipeline, [], []) == []


def test_sweep_allows_non_monotonic_slicers() -> None:
    policy = Policy(
        name="q",
        scorers=[ScorerSpec("reflexive")],
        slicer=SlicerSpec.of("quota", quotas=[{"kind": "Message", "cap": 50}]),
    )
    pipeline = policy.build(BUDGET)
    items = [item("a", 10, 0.5), item("b", 30, 0.9)]
    points = sweep_budgets(pipeline, items, [40, 80])
    assert [p.included_count for p in points] == [1, 2]
