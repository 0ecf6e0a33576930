"""Each stage of the pipeline against the specification, with simple stand-in components."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from pipeline_fakes import (
    AsGivenPlacer,
    FunctionPlacer,
    FunctionSlice,
    InOrderSlice,
    TakeAllSlice,
    by_priority,
)

from pycupel.diagnostics import DiagnosticTraceCollector, PipelineStage
from pycupel.errors import (
    BudgetOverflowError,
    NonFiniteScoreError,
    PinnedBudgetError,
    PlacerConfigError,
    ScorerConfigError,
    SlicerConfigError,
)
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy, ScoredItem
from pycupel.pipeline import Pipeline, PipelineResult
from pycupel.placers import ChronologicalPlacer
from pycupel.slicers import GreedySlice
from pycupel.slicers.base import (
    CountRequirementShortfall,
    PackingStats,
    SliceResult,
    TokenRequirementShortfall,
)


def item(content: str, tokens: int = 10, priority: int | None = None, **kw: object) -> ContextItem:
    return ContextItem(content, tokens=tokens, priority=priority, **kw)  # type: ignore[arg-type]


def budget(target: int, max_tokens: int = 1000, **kw: object) -> ContextBudget:
    return ContextBudget(max_tokens=max_tokens, target_tokens=target, **kw)  # type: ignore[arg-type]


def contents(items: Sequence[ContextItem]) -> list[str]:
    return [i.content for i in items]


class CountingScorer:
    """Records every batch it scores."""

    def __init__(self) -> None:
        self.calls: list[tuple[ContextItem, ...]] = []

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        self.calls.append(tuple(items))
        return [by_priority(i) for i in items]


def pipeline(**kw: object) -> Pipeline:
    options: dict[str, object] = {
        "budget": budget(500),
        "scorer": by_priority,
        "slicer": InOrderSlice(),
        "placer": AsGivenPlacer(),
    }
    options.update(kw)
    return Pipeline(**options)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- classify


def test_negative_tokens_are_excluded_even_when_pinned() -> None:
    pinned_negative = item("p", -50, pinned=True)
    ok = item("a", 10, 5)
    slicer = InOrderSlice()
    result = pipeline(slicer=slicer).run([pinned_negative, ok])
    assert result.items == (ok,)
    # The negative pinned item did not reduce the effective budget either.
    assert slicer.seen[0][1].target_tokens == 500


def test_pinned_budget_is_checked_against_max_minus_reserve() -> None:
    items = [item("p1", 300, pinned=True), item("p2", 400, pinned=True)]
    # 700 pinned > target 500 but <= 1000 - 200: allowed (overflow handling decides later).
    fine = pipeline(budget=budget(500, output_reserve=300), overflow_strategy="proceed").run(items)
    assert fine.total_tokens == 700
    with pytest.raises(PinnedBudgetError) as caught:
        pipeline(budget=budget(500, output_reserve=301)).run(items)
    assert (caught.value.pinned_tokens, caught.value.available_tokens) == (700, 699)
    assert "700" in str(caught.value)
    assert "699" in str(caught.value)


def test_zero_token_items_are_classified_normally() -> None:
    zero = item("z", 0, 1)
    zero_pinned = item("zp", 0, pinned=True)
    result = pipeline(budget=budget(0, max_tokens=0)).run([zero, zero_pinned])
    assert set(contents(result.items)) == {"z", "zp"}


def test_partitions_keep_input_order() -> None:
    items = [
        item("p2", 5, pinned=True),
        item("x", 5, 1),
        item("p1", 5, pinned=True),
        item("y", 5, 1),
    ]
    placer = AsGivenPlacer()
    slicer = InOrderSlice()
    pipeline(slicer=slicer, placer=placer).run(items)
    assert contents([e.item for e in slicer.seen[0][0]]) == ["x", "y"]
    assert contents([e.item for e in placer.seen[0]]) == ["p2", "p1", "x", "y"]


def test_empty_input() -> None:
    scorer = CountingScorer()
    result = pipeline(scorer=scorer).run([])
    assert result == PipelineResult((), 0, None, (), (), None, None)
    assert scorer.calls == []


# --------------------------------------------------------------------------- score


def test_scorer_sees_only_scoreable_items_once() -> None:
    scorer = CountingScorer()
    items = [item("p", 5, pinned=True), item("n", -1), item("a", 5, 3), item("b", 5, 4)]
    pipeline(scorer=scorer).run(items)
    assert len(scorer.calls) == 1
    assert contents(scorer.calls[0]) == ["a", "b"]


def test_all_pinned_never_calls_the_scorer() -> None:
    scorer = CountingScorer()
    result = pipeline(scorer=scorer).run([item("p", 5, pinned=True)])
    assert scorer.calls == []
    assert contents(result.items) == ["p"]


def test_wrong_number_of_scores_is_a_scorer_error() -> None:
    class Short:
        def score_all(self, items: Sequence[ContextItem]) -> list[float]:
            return [0.5]

    with pytest.raises(ScorerConfigError, match="exactly one score per item"):
        pipeline(scorer=Short()).run([item("a"), item("b")])


# --------------------------------------------------------------------------- deduplicate


def test_duplicates_keep_best_score_and_survivors_keep_input_order() -> None:
    low = item("dup", 10, 1)
    other = item("other", 10, 5)
    high = item("dup", 10, 9)
    slicer = InOrderSlice()
    pipeline(slicer=slicer, deduplicate=True).run([low, other, high])
    offered = [e.item for e in slicer.seen[0][0]]
    assert offered == [high, other]  # sorted by score; `low` is gone


def test_duplicate_tie_keeps_the_earliest() -> None:
    first = item("dup", 10, 5)
    second = item("dup", 20, 5, kind="Document")  # other fields do not matter
    result = pipeline().run([first, second])
    assert result.items == (first,)


def test_deduplication_is_byte_exact() -> None:
    variants = ["Café", "Cafe\u0301", "café", "Café ", "\ufeffCafé"]
    result = pipeline().run([item(text, 10, 1) for text in variants])
    assert contents(result.items) == variants


def test_deduplication_can_be_disabled() -> None:
    items = [item("dup", 10, 1), item("dup", 10, 2)]
    result = pipeline(deduplicate=False).run(items)
    assert result.items == (items[1], items[0])


def test_all_identical_contents_leave_one() -> None:
    items = [item("same", 10, p) for p in (3, 8, 8, 1)]
    assert pipeline().run(items).items == (items[1],)


# --------------------------------------------------------------------------- sort


def test_sort_is_score_descending_and_stable() -> None:
    items = [item(f"i{n}", 1, p) for n, p in enumerate([2, 5, 2, 9, 5, 0])]
    slicer = InOrderSlice()
    pipeline(slicer=slicer).run(items)
    offered = [(e.item.content, e.score) for e in slicer.seen[0][0]]
    assert offered == [("i3", 0.9), ("i1", 0.5), ("i4", 0.5), ("i0", 0.2), ("i2", 0.2), ("i5", 0.0)]
    assert all(isinstance(e, ScoredItem) for e in slicer.seen[0][0])


def test_nan_scores_are_refused_before_sorting() -> None:
    values = {"a": 0.1, "b": math.nan, "c": 0.7}
    slicer = InOrderSlice()
    with pytest.raises(NonFiniteScoreError) as caught:
        pipeline(scorer=lambda i: values[i.content], slicer=slicer).run([item(c) for c in values])
    assert (caught.value.index, caught.value.content) == (1, "b")
    assert not slicer.seen


# --------------------------------------------------------------------------- slice


def test_slicer_receives_the_effective_budget() -> None:
    slicer = InOrderSlice()
    run_budget = ContextBudget(
        max_tokens=1000,
        target_tokens=800,
        output_reserve=100,
        reserved_slots={"Memory": 50},
        estimation_safety_margin_percent=10.0,
    )
    pipeline(slicer=slicer).run([item("p", 120, pinned=True), item("a")], budget=run_budget)
    effective = slicer.seen[0][1]
    # target: 800 - 120 - 50 = 630 (<= max 1000-100-120-50 = 730), then 90%: floor -> 567, 657.
    assert (effective.max_tokens, effective.target_tokens) == (657, 567)
    assert effective.output_reserve == 0
    assert not effective.reserved_slots


def test_per_run_budget_overrides_the_configured_one() -> None:
    slicer = InOrderSlice()
    p = pipeline(slicer=slicer)
    p.run([item("a")], budget=budget(42))
    p.run([item("a")])
    assert [b.target_tokens for _, b in slicer.seen] == [42, 500]


def test_slicer_returning_a_plain_list_is_accepted() -> None:
    slicer = FunctionSlice(lambda items, b: [e.item for e in items][:1])
    result = pipeline(slicer=slicer).run([item("a", 5, 1), item("b", 5, 2)])
    assert contents(result.items) == ["b"]


@pytest.mark.parametrize(
    ("pick", "message"),
    [
        (lambda items, b: SliceResult((items[0].item, items[0].item)), "each selected item once"),
        (
            lambda items, b: SliceResult((ContextItem("alien", tokens=1),)),
            "only items it was given",
        ),
        (lambda items, b: {"a"}, "must return a SliceResult"),
        (lambda items, b: ["a"], "must return ContextItem instances"),
    ],
)
def test_buggy_slicer_is_caught(pick: object, message: str) -> None:
    with pytest.raises(SlicerConfigError, match=message):
        pipeline(slicer=FunctionSlice(pick)).run([item("a"), item("b")])  # type: ignore[arg-type]


def test_slice_result_facts_reach_the_result() -> None:
    shortfall = CountRequirementShortfall(kind=item("x").kind, required_count=2, satisfied_count=1)
    token_shortfall = TokenRequirementShortfall(item("x").kind, 40, 10)
    packing = PackingStats(1, 10, 0.5, 1, True, False)
    slicer = FunctionSlice(
        lambda items, b: SliceResult(
            (items[0].item,),
            shortfalls=(shortfall,),
            token_shortfalls=(token_shortfall,),
            packing=packing,
        )
    )
    result = pipeline(slicer=slicer).run([item("a", 10, 5), item("b", 10, 1)])
    assert result.shortfalls == (shortfall,)
    assert result.token_shortfalls == (token_shortfall,)
    assert result.packing is packing
    assert result.solver is None


# --------------------------------------------------------------------------- place


def test_merge_puts_pinned_first_with_score_one_then_sliced_in_slicer_order() -> None:
    # The slicer answers in reverse; the merge keeps its order (the spec's
    # merged[pinned + i] <- slicedScored[i]) and re-associates each item's score by identity.
    slicer = FunctionSlice(lambda items, b: SliceResult(tuple(e.item for e in reversed(items))))
    placer = AsGivenPlacer()
    items = [item("low", 5, 1), item("pin", 5, pinned=True), item("high", 5, 8), item("mid", 5, 4)]
    pipeline(slicer=slicer, placer=placer).run(items)
    merged = [(e.item.content, e.score) for e in placer.seen[0]]
    assert merged == [("pin", 1.0), ("low", 0.1), ("mid", 0.4), ("high", 0.8)]


def test_overflow_throw_names_the_numbers() -> None:
    items = [item("p", 100, pinned=True), item("a", 300, 5), item("b", 200, 4)]
    with pytest.raises(BudgetOverflowError) as caught:
        pipeline(budget=budget(500), slicer=TakeAllSlice()).run(items)
    assert (caught.value.merged_tokens, caught.value.target_tokens) == (600, 500)
    assert "600" in str(caught.value)
    assert "500" in str(caught.value)


def test_overflow_is_checked_against_the_original_target() -> None:
    # Slicer gets 500 - 100 = 400 and the fake takes exactly 400: merged 500 == target, no overflow.
    items = [item("p", 100, pinned=True), item("a", 250, 5), item("b", 150, 4)]
    result = pipeline(budget=budget(500)).run(items)
    assert result.total_tokens == 500
    assert result.overflow is None


def test_overflow_truncate_walks_from_the_front_and_keeps_pinned() -> None:
    items = [
        item("p", 150, pinned=True),
        item("a", 100, 9),
        item("b", 200, 8),
        item("c", 50, 7),
        item("z", 0, 1),
    ]
    result = pipeline(budget=budget(300), slicer=TakeAllSlice(), overflow_strategy="truncate").run(
        items
    )
    # p(150) kept; a: 250 <= 300 kept; b: 450 > 300 dropped; c: 300 <= 300 kept; z: 0 kept.
    assert contents(result.items) == ["p", "a", "c", "z"]
    assert result.total_tokens == 300
    assert result.overflow is None


def test_truncate_cannot_remove_pinned_items() -> None:
    items = [item("p1", 200, pinned=True), item("p2", 200, pinned=True), item("a", 10, 5)]
    result = pipeline(budget=budget(300), slicer=TakeAllSlice(), overflow_strategy="truncate").run(
        items
    )
    assert contents(result.items) == ["p1", "p2"]
    assert result.total_tokens == 400


def test_overflow_proceed_keeps_everything_and_reports() -> None:
    run_budget = budget(300)
    items = [item("p", 150, pinned=True), item("a", 100, 9), item("b", 200, 8)]
    result = pipeline(budget=run_budget, slicer=TakeAllSlice(), overflow_strategy="proceed").run(
        items
    )
    assert contents(result.items) == ["p", "a", "b"]
    assert result.overflow is not None
    assert result.overflow.tokens_over_budget == 150
    assert contents(result.overflow.overflowing_items) == ["p", "a", "b"]
    assert result.overflow.budget is run_budget


def test_no_overflow_event_without_overflow_or_under_other_strategies() -> None:
    items = [item("a", 100, 9)]
    for strategy in OverflowStrategy:
        assert pipeline(overflow_strategy=strategy).run(items).overflow is None


def test_placer_output_is_the_result_order() -> None:
    stamp = datetime(2024, 1, 1, tzinfo=UTC)
    items = [item("a", 5, 1, timestamp=stamp), item("b", 5, 9)]
    placer = FunctionPlacer(
        lambda merged: sorted((e.item for e in merged), key=lambda i: i.content)
    )
    assert contents(pipeline(placer=placer).run(items).items) == ["a", "b"]


@pytest.mark.parametrize(
    "order",
    [
        lambda merged: [e.item for e in merged][:-1],
        lambda merged: [merged[0].item] * len(merged),
        lambda merged: [*(e.item for e in merged[1:]), ContextItem("x", tokens=1)],
    ],
)
def test_buggy_placer_is_caught(order: object) -> None:
    placer = FunctionPlacer(order)  # type: ignore[arg-type]
    with pytest.raises(PlacerConfigError, match="exactly the items it was given"):
        pipeline(placer=placer).run([item("a", 5, 1), item("b", 5, 2)])


def test_caller_list_is_not_mutated_and_result_is_frozen() -> None:
    items = [item("b", 300, 1), item("a", 300, 9), item("p", 5, pinned=True)]
    snapshot = list(items)
    result = pipeline().run(items)
    assert items == snapshot
    assert result.total_tokens == sum(i.tokens for i in result.items)
    with pytest.raises(AttributeError):
        result.total_tokens = 0  # type: ignore[misc]


def test_tuple_input_is_accepted() -> None:
    assert contents(pipeline().run((item("a", 5, 1),)).items) == ["a"]


@pytest.mark.parametrize(
    ("pick", "value", "rule"),
    [
        (
            lambda items, b: SliceResult((items[0].item, items[1].item, items[0].item)),
            "3 items, 2 distinct",
            "must return each selected item once",
        ),
        (
            lambda items, b: SliceResult((items[0].item, ContextItem("alien", tokens=1))),
            "1 items not among its input",
            "must return only items it was given",
        ),
        (lambda items, b: {"a"}, {"a"}, "must return a SliceResult or a sequence of items"),
        (lambda items, b: [items[0].item, "a"], "a", "must return ContextItem instances"),
    ],
)
def test_buggy_slicer_error_names_the_slicer_the_value_and_the_rule(
    pick: object, value: object, rule: str
) -> None:
    for plain in (True, False):  # plain candidates and ones with a pinned item take two paths
        extra = [] if plain else [item("pin", 1, pinned=True)]
        with pytest.raises(SlicerConfigError) as info:
            pipeline(slicer=FunctionSlice(pick)).run(  # type: ignore[arg-type]
                [item("a", 10, 2), item("b", 10, 1), *extra]
            )
        assert info.value.field == "FunctionSlice.slice"
        assert info.value.value == value
        assert info.value.rule == rule


def test_custom_slicer_output_order_sets_the_merge_positions() -> None:
    # the slicer returns its picks in reverse score order; the placer keeps that order
    slicer = FunctionSlice(lambda items, b: [e.item for e in items][::-1][:2])
    candidates = [item("a", 5, 1), item("b", 5, 3), item("c", 5, 2)]
    assert contents(pipeline(slicer=slicer).run(candidates).items) == ["a", "c"]
    pinned = [*candidates, item("pin", 1, pinned=True)]
    assert contents(pipeline(slicer=slicer).run(pinned).items) == ["pin", "a", "c"]


class FirstOnlyGreedy(GreedySlice):
    """A built-in columnar slicer whose ``slice`` is overridden: the override must run."""

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        return SliceResult((items[-1].item,))


def test_an_overridden_slice_of_a_built_in_slicer_is_used() -> None:
    result = pipeline(slicer=FirstOnlyGreedy()).run([item("a", 5, 1), item("b", 5, 3)])
    assert contents(result.items) == ["a"]
    greedy = pipeline(slicer=GreedySlice()).run([item("a", 5, 1), item("b", 5, 3)])
    assert sorted(contents(greedy.items)) == ["a", "b"]


def test_a_target_of_one_token_still_runs_a_built_in_slicer() -> None:
    result = pipeline(slicer=GreedySlice(), budget=budget(1)).run(
        [item("a", 1, 1), item("b", 2, 3)]
    )
    assert contents(result.items) == ["a"]


@pytest.mark.parametrize(
    ("order", "value", "rule"),
    [
        (
            lambda merged: 42,
            42,
            "must return the items it was given, reordered (a sequence of ContextItem)",
        ),
        (
            lambda merged: [e.item for e in merged][:-1],
            "1 items for 2 given",
            "must return exactly the items it was given, each once, reordered",
        ),
    ],
)
def test_buggy_placer_error_names_the_placer_the_value_and_the_rule(
    order: object, value: object, rule: str
) -> None:
    with pytest.raises(PlacerConfigError) as info:
        pipeline(placer=FunctionPlacer(order)).run(  # type: ignore[arg-type]
            [item("a", 5, 1), item("b", 5, 2)]
        )
    assert info.value.field == "FunctionPlacer.place"
    assert info.value.value == value
    assert info.value.rule == rule


class ReversedChronological(ChronologicalPlacer):
    """A built-in columnar placer whose ``place`` is overridden: the override must run."""

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        return [entry.item for entry in items][::-1]


def test_an_overridden_place_of_a_built_in_placer_is_used() -> None:
    candidates = [item("a", 5, 1), item("b", 5, 3)]
    own = pipeline(placer=ReversedChronological(), slicer=GreedySlice()).run(candidates)
    built_in = pipeline(placer=ChronologicalPlacer(), slicer=GreedySlice()).run(candidates)
    assert contents(own.items) == contents(built_in.items)[::-1]
    assert contents(own.items) != contents(built_in.items)


def test_place_stage_counts_the_merge_before_truncation() -> None:
    collector = DiagnosticTraceCollector()
    result = pipeline(
        slicer=TakeAllSlice(),
        budget=budget(15),
        overflow_strategy=OverflowStrategy.TRUNCATE,
    ).run([item("a", 10, 3), item("b", 10, 2), item("c", 10, 1)], collector=collector)
    assert contents(result.items) == ["a"]
    (place_event,) = [
        e for e in collector.events if e.stage is PipelineStage.PLACE and not e.message
    ]
    assert place_event.item_count == 3
