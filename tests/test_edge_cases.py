"""Numerical and structural edge cases, each with its defined outcome (docs/edge-cases.md)."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime, timedelta, timezone

import pytest

from pycupel.diagnostics import Deduplicated, InclusionReason
from pycupel.errors import (
    BudgetOverflowError,
    BudgetValidationError,
    ItemValidationError,
    NonFiniteScoreError,
    PinnedBudgetError,
    SliceInputError,
)
from pycupel.model import ContextBudget, ContextItem, ContextKind, OverflowStrategy, ScoredItem
from pycupel.pipeline import Pipeline
from pycupel.placers import ChronologicalPlacer, UShapedPlacer
from pycupel.scorers import (
    CompositeScorer,
    DecayScorer,
    ExponentialDecay,
    FixedClock,
    KindScorer,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    ScaledScorer,
)
from pycupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    GreedySlice,
    KnapsackSlice,
    OptimalSlice,
    PackerSlice,
    QuotaEntry,
    QuotaSlice,
    Slicer,
)

SLICERS: dict[str, Slicer] = {
    "greedy": GreedySlice(),
    "knapsack": KnapsackSlice(bucket_size=1),
    "quota": QuotaSlice([QuotaEntry("Document", 10, 60)]),
    "count-quota": CountQuotaSlice([CountQuotaEntry("Document", 1, 3)]),
    "count-knapsack": CountConstrainedKnapsackSlice([CountQuotaEntry("Document", 1, 3)]),
    "packer": PackerSlice(None),
    "optimal": OptimalSlice(),
}
NUMPY_SLICERS = ["greedy", "knapsack", "quota", "count-quota", "count-knapsack", "optimal"]
PLACERS = {"chronological": ChronologicalPlacer(), "u-shaped": UShapedPlacer()}
NOW = datetime(2024, 6, 1, tzinfo=UTC)


def pipeline(
    slicer: str = "greedy",
    placer: str = "chronological",
    *,
    scorer: object = None,
    max_tokens: int = 1000,
    target: int | None = None,
    strategy: OverflowStrategy = OverflowStrategy.THROW,
) -> Pipeline:
    return Pipeline(
        budget=ContextBudget(
            max_tokens=max_tokens, target_tokens=max_tokens if target is None else target
        ),
        scorer=scorer or PriorityScorer(),  # type: ignore[arg-type]
        slicer=SLICERS[slicer],
        placer=PLACERS[placer],
        overflow_strategy=strategy,
    )


def every_combination() -> list[tuple[str, str]]:
    return [(s, p) for s in SLICERS for p in PLACERS]


# --------------------------------------------------------------------------- non-finite scores


@pytest.mark.parametrize(("slicer", "placer"), every_combination())
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_custom_scores_are_refused_naming_scorer_and_item(
    slicer: str, placer: str, bad: float
) -> None:
    scores = {"a": 0.3, "b": bad, "c": 0.9}

    def custom(item: ContextItem) -> float:
        return scores.get(item.content, 0.5)

    items = [
        ContextItem("pinned", tokens=5, pinned=True),  # not scored
        ContextItem("negative", tokens=-1),  # excluded before scoring
        *(ContextItem(content, tokens=10, kind="Document") for content in scores),
    ]
    with pytest.raises(NonFiniteScoreError) as caught:
        pipeline(slicer, placer, scorer=custom).dry_run(items)
    error = caught.value
    assert (error.scorer, error.index, error.content) == ("FunctionScorer", 1, "b")
    assert repr(error.score) == repr(bad)
    assert "FunctionScorer.score_all(items)[1]" in str(error)


def test_non_finite_inner_scores_surface_through_combinators() -> None:
    def nan_for_b(item: ContextItem) -> float:
        return {"a": 0.2, "b": math.nan}.get(item.content, 0.8)

    # Three items: with only one finite inner score ScaledScorer's degenerate rule gives 0.5.
    items = [ContextItem(c, tokens=1) for c in "abc"]
    for scorer in (CompositeScorer([(nan_for_b, 1.0)]), ScaledScorer(nan_for_b)):
        with pytest.raises(NonFiniteScoreError) as caught:
            pipeline(scorer=scorer).run(items)
        assert caught.value.scorer == type(scorer).__name__
        assert caught.value.index == 1


@pytest.mark.parametrize(("slicer", "placer"), every_combination())
def test_non_finite_hints_score_zero_through_every_component(slicer: str, placer: str) -> None:
    items = [
        ContextItem(f"h{index}", tokens=10, kind="Document", future_relevance_hint=hint)
        for index, hint in enumerate([math.nan, math.inf, -math.inf, 0.7, None])
    ]
    result = pipeline(slicer, placer, scorer=ReflexiveScorer(), target=25).dry_run(items)
    assert result.total_tokens <= 25
    scores = {e.item.content: e.score for e in (*result.report.included, *result.report.excluded)}
    assert scores == {"h0": 0.0, "h1": 0.0, "h2": 0.0, "h3": 0.7, "h4": 0.0}


def test_u_shaped_placer_ranks_a_nan_score_lowest_when_called_directly() -> None:
    a, b, c, d = (ContextItem(x, tokens=1) for x in "abcd")
    placed = UShapedPlacer().place(
        [ScoredItem(a, math.nan), ScoredItem(b, 0.9), ScoredItem(c, 0.5), ScoredItem(d, 0.1)]
    )
    # Ranks: b, c, d, a (NaN last) -> left b, d; right c, a reversed -> [b, d, a, c].
    assert placed == [b, d, a, c]


# --------------------------------------------------------------------------- huge token counts


@pytest.mark.parametrize("slicer", NUMPY_SLICERS)
@pytest.mark.parametrize("tokens", [2**62, 2**63, 2**70, 3 * 2**61])
def test_token_sums_beyond_int64_are_refused_not_wrapped(slicer: str, tokens: int) -> None:
    items = [ContextItem(f"big{n}", tokens=tokens, kind="Document") for n in range(3)]
    items.append(ContextItem("small", tokens=5, priority=9, kind="Document"))
    budget = 2**63 - 1 if slicer == "optimal" else 2**72
    with pytest.raises(SliceInputError, match=r"2\*\*62") as caught:
        pipeline(slicer, max_tokens=2**72, target=budget, strategy="proceed").run(items)  # type: ignore[arg-type]
    assert caught.value.field in ("items[].item.tokens", "budget.target_tokens")


def test_packer_walks_python_integers_and_handles_huge_counts() -> None:
    items = [ContextItem(f"big{n}", tokens=2**62, priority=n) for n in range(3)]
    result = pipeline("packer", max_tokens=2**63).run(items)
    assert result.total_tokens == 2**63  # two fit exactly: an int64 sum would have wrapped
    assert len(pipeline("packer", max_tokens=2**63 - 1).run(items).items) == 1


@pytest.mark.parametrize("slicer", ["greedy", "knapsack", "quota", "count-quota", "packer"])
def test_huge_budgets_with_ordinary_items_select_everything(slicer: str) -> None:
    items = [ContextItem(f"d{n}", tokens=100 + n, future_relevance_hint=0.5) for n in range(5)]
    result = pipeline(slicer, max_tokens=2**80, scorer=ReflexiveScorer()).run(items)
    assert len(result.items) == 5


def test_optimal_slice_refuses_a_budget_beyond_int64() -> None:
    items = [ContextItem("a", tokens=1)]
    with pytest.raises(SliceInputError, match=r"budget\.target_tokens"):
        pipeline("optimal", max_tokens=2**64).run(items)


def test_pinned_token_sums_are_exact_python_integers() -> None:
    items = [ContextItem(f"p{n}", tokens=2**62, pinned=True) for n in range(4)]
    with pytest.raises(PinnedBudgetError) as caught:
        pipeline(max_tokens=2**63).run(items)
    assert caught.value.pinned_tokens == 2**64


# --------------------------------------------------------------------------- budgets and sizes


@pytest.mark.parametrize(("slicer", "placer"), every_combination())
def test_zero_budget_keeps_only_pinned_zero_token_items(slicer: str, placer: str) -> None:
    free = ContextItem("free", tokens=0)
    pinned_free = ContextItem("pinned free", tokens=0, pinned=True)
    items = [free, pinned_free, ContextItem("x", tokens=1)]
    result = pipeline(slicer, placer, max_tokens=0).dry_run(items)
    # Slicers select nothing at target 0 (the specification), even zero-token items.
    assert result.items == (pinned_free,)
    assert result.total_tokens == 0


@pytest.mark.parametrize(("slicer", "placer"), every_combination())
def test_every_item_zero_token(slicer: str, placer: str) -> None:
    items = [ContextItem(f"z{n}", tokens=0) for n in range(6)]  # no count cap applies
    result = pipeline(slicer, placer, max_tokens=10).dry_run(items)
    if slicer == "quota":
        # The specification: a kind with candidates but zero token mass gets no proportional
        # share, so its inner slicer is never called.
        assert result.items == ()
        return
    assert {id(i) for i in result.items} == {id(i) for i in items}
    assert all(e.reason is InclusionReason.ZERO_TOKEN for e in result.report.included)


@pytest.mark.parametrize(("slicer", "placer"), every_combination())
def test_empty_input(slicer: str, placer: str) -> None:
    result = pipeline(slicer, placer).dry_run([])
    assert (result.items, result.total_tokens) == ((), 0)
    assert result.report.total_candidates == 0


@pytest.mark.parametrize(("slicer", "placer"), every_combination())
def test_single_item(slicer: str, placer: str) -> None:
    only = ContextItem("only", tokens=10, future_relevance_hint=0.5)
    scorer = ReflexiveScorer()
    assert pipeline(slicer, placer, scorer=scorer).run([only]).items == (only,)
    assert pipeline(slicer, placer, scorer=scorer, target=9).run([only]).items == ()


@pytest.mark.parametrize("slicer", ["count-quota", "count-knapsack"])
def test_count_requirements_commit_regardless_of_the_budget(slicer: str) -> None:
    """The specification's phase 1 commits required items whatever the budget; the overflow
    strategy then decides: THROW raises, TRUNCATE drops, PROCEED reports."""
    only = ContextItem("only", tokens=10, kind="Document", future_relevance_hint=0.5)
    scorer = ReflexiveScorer()
    with pytest.raises(BudgetOverflowError):
        pipeline(slicer, scorer=scorer, target=9).run([only])
    truncated = pipeline(slicer, scorer=scorer, target=9, strategy=OverflowStrategy.TRUNCATE)
    assert truncated.run([only]).items == ()
    proceed = pipeline(slicer, scorer=scorer, target=9, strategy=OverflowStrategy.PROCEED)
    result = proceed.run([only])
    assert result.items == (only,)
    assert result.overflow is not None
    assert result.overflow.tokens_over_budget == 1


@pytest.mark.parametrize(("slicer", "placer"), every_combination())
def test_all_pinned(slicer: str, placer: str) -> None:
    items = [ContextItem(f"p{n}", tokens=10, pinned=True) for n in range(5)]
    result = pipeline(slicer, placer, max_tokens=50).dry_run(items)
    assert {id(i) for i in result.items} == {id(i) for i in items}
    assert all(e.reason is InclusionReason.PINNED for e in result.report.included)
    with pytest.raises(PinnedBudgetError):
        pipeline(slicer, placer, max_tokens=49).run(items)


def test_one_hundred_thousand_identical_contents_deduplicate_quickly() -> None:
    items = [ContextItem("same", tokens=1, priority=n % 7) for n in range(100_000)]
    started = time.perf_counter()
    result = pipeline(max_tokens=10).dry_run(items)
    elapsed = time.perf_counter() - started
    assert len(result.items) == 1
    # The best-scored (highest priority), earliest on ties, survives.
    assert result.items[0] is items[6]
    assert sum(isinstance(e.reason, Deduplicated) for e in result.report.excluded) == 99_999
    assert elapsed < 10.0


def test_kinds_differing_only_by_case_are_one_kind() -> None:
    items = [
        ContextItem(f"k{n}", tokens=10, kind=k) for n, k in enumerate(["document", "DOCUMENT"])
    ]
    assert items[0].kind == items[1].kind == ContextKind.DOCUMENT
    scores = KindScorer({"Document": 0.8}).score_all(items)
    assert scores == [0.8, 0.8]
    result = Pipeline(
        budget=ContextBudget(max_tokens=100, target_tokens=100),
        scorer=PriorityScorer(),
        slicer=CountQuotaSlice([CountQuotaEntry("Document", 0, 1)]),
    ).dry_run(items)
    assert len(result.items) == 1  # one cap for both spellings
    with pytest.raises(BudgetValidationError, match="same kind twice"):
        ContextBudget(max_tokens=10, target_tokens=5, reserved_slots={"Memory": 1, "MEMORY": 2})


# --------------------------------------------------------------------------- timestamps


def test_timestamps_at_the_limits_of_datetime() -> None:
    oldest = ContextItem("oldest", tokens=1, timestamp=datetime.min.replace(tzinfo=UTC))
    newest = ContextItem("newest", tokens=1, timestamp=datetime.max.replace(tzinfo=UTC))
    middle = ContextItem("middle", tokens=1, timestamp=NOW)
    items = [newest, middle, oldest]
    for scorer in (
        RecencyScorer(),
        DecayScorer(FixedClock(NOW), ExponentialDecay(timedelta(hours=1))),
    ):
        result = pipeline(scorer=scorer).run(items)
        assert result.items == (oldest, middle, newest)  # chronological placement
    recency = RecencyScorer().score_all(items)
    assert recency[0] > recency[1] > recency[2]
    decay = DecayScorer(FixedClock(NOW), ExponentialDecay(timedelta(hours=1))).score_all(items)
    assert all(0.0 <= score <= 1.0 for score in decay)


@pytest.mark.parametrize(
    "moment",
    [
        datetime.min.replace(tzinfo=timezone(timedelta(hours=1))),
        datetime.max.replace(tzinfo=timezone(timedelta(hours=-1))),
    ],
)
def test_timestamps_outside_utc_range_are_refused(moment: datetime) -> None:
    with pytest.raises(ItemValidationError, match="representable in UTC"):
        ContextItem("x", tokens=1, timestamp=moment)


def test_non_utc_time_zones_compare_by_instant() -> None:
    tokyo = timezone(timedelta(hours=9))
    new_york = timezone(timedelta(hours=-5))
    early = ContextItem("early", tokens=1, timestamp=datetime(2024, 6, 1, 8, 0, tzinfo=tokyo))
    late = ContextItem("late", tokens=1, timestamp=datetime(2024, 5, 31, 19, 30, tzinfo=new_york))
    same = ContextItem("same", tokens=1, timestamp=datetime(2024, 5, 31, 23, 0, tzinfo=UTC))
    assert early.timestamp_micros == same.timestamp_micros
    assert late.timestamp_micros is not None
    assert same.timestamp_micros is not None
    assert late.timestamp_micros > same.timestamp_micros
    assert early.timestamp is not None
    assert early.timestamp.tzinfo is UTC
    placed = pipeline().run([late, early, same]).items
    assert placed == (early, same, late)  # equal instants keep input order
    assert RecencyScorer().score_all([late, early, same])[1:] == [0.0, 0.0]
