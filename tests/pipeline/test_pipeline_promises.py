"""Promises the pipeline keeps under abuse: one object given twice is refused in every mode,
the input is read once (a snapshot), the window never exceeds the hard ceiling
``max_tokens - output_reserve``, and components of the wrong shape are refused by name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pycupel.errors import BudgetOverflowError, PipelineConfigError, PlacerConfigError
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy, ScoredItem
from pycupel.pipeline import Pipeline
from pycupel.placers import ChronologicalPlacer, UShapedPlacer
from pycupel.scorers import KindScorer, PriorityScorer
from pycupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    GreedySlice,
)

BUDGET = ContextBudget(max_tokens=1000, target_tokens=800)


def pipeline(**options: object) -> Pipeline:
    return Pipeline(budget=BUDGET, scorer=PriorityScorer(), **options)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- one object twice


@pytest.mark.parametrize("deduplicate", [True, False])
@pytest.mark.parametrize("pinned", [True, False])
@pytest.mark.parametrize("tokens", [5, 0, -3], ids=["positive", "zero", "negative"])
@pytest.mark.parametrize("diagnostics", [False, True], ids=["run", "dry_run"])
def test_the_same_object_twice_is_refused_in_every_mode(
    deduplicate: bool, pinned: bool, tokens: int, diagnostics: bool
) -> None:
    twice = ContextItem("same", tokens=tokens, pinned=pinned)
    items = [ContextItem("first", tokens=4), twice, ContextItem("other", tokens=3), twice]
    runner = pipeline(deduplicate=deduplicate)
    with pytest.raises(PipelineConfigError) as caught:
        runner.dry_run(items) if diagnostics else runner.run(items)
    assert caught.value.field == "items[3]"
    assert "same object as items[1]" in caught.value.rule


def test_equal_but_distinct_objects_are_still_deduplicated() -> None:
    first, copy = ContextItem("same", tokens=5), ContextItem("same", tokens=5)
    result = pipeline().dry_run([first, copy])
    assert result.items == (first,)
    assert [entry.item for entry in result.report.excluded] == [copy]


# --------------------------------------------------------------------------- one snapshot


class Shifting(list[ContextItem]):
    """A list whose length and elements change every time they are read, and which appends a
    pinned item to itself once it has been iterated (as another thread might mid-run)."""

    def __init__(self, items: list[ContextItem]) -> None:
        super().__init__(items)
        self.late = ContextItem("late pinned", tokens=1, pinned=True)

    def __len__(self) -> int:
        return super().__len__() + 7

    def __getitem__(self, index: object) -> ContextItem:  # type: ignore[override]
        raise AssertionError("the pipeline must not index the caller's list")

    def __iter__(self) -> Iterator[ContextItem]:
        items = list(super().__iter__())
        super().append(self.late)
        return iter(items)


def test_the_input_is_read_once_as_a_snapshot() -> None:
    base = [ContextItem(f"m{k}", tokens=10, priority=k) for k in range(5)]
    shifting = Shifting(base)
    result = pipeline().dry_run(shifting)
    # The run saw exactly the five items present when it started, each once.
    assert sorted(item.content for item in result.items) == sorted(i.content for i in base)
    assert result.report.total_candidates == 5
    # The item appended mid-run belongs to the next run, and is pinned there.
    again = pipeline().dry_run(list(shifting))
    assert shifting.late in again.items


# --------------------------------------------------------------------------- the hard ceiling

# max 1000, reserve 400: the ceiling is 600, below the allowed target of 900. Three required
# tools of 250 tokens each are committed by phase 1 whatever the budget: 750 > 600.
CEILING_BUDGET = ContextBudget(max_tokens=1000, target_tokens=900, output_reserve=400)
TOOLS = [ContextItem(f"tool-{k}", tokens=250, kind="ToolOutput", priority=9 - k) for k in range(3)]
SLICERS = {
    "count-quota": CountQuotaSlice([CountQuotaEntry("ToolOutput", 3, 3)]),
    "count-knapsack": CountConstrainedKnapsackSlice([CountQuotaEntry("ToolOutput", 3, 3)]),
}


def ceiling_pipeline(slicer: str, strategy: OverflowStrategy) -> Pipeline:
    return Pipeline(
        budget=CEILING_BUDGET,
        scorer=PriorityScorer(),
        slicer=SLICERS[slicer],
        overflow_strategy=strategy,
    )


@pytest.mark.parametrize("slicer", sorted(SLICERS))
def test_throw_refuses_a_window_above_the_ceiling(slicer: str) -> None:
    with pytest.raises(BudgetOverflowError) as caught:
        ceiling_pipeline(slicer, OverflowStrategy.THROW).run(TOOLS)
    assert caught.value.merged_tokens == 750
    assert caught.value.target_tokens == 900
    assert caught.value.ceiling_tokens == 600
    assert "hard ceiling max_tokens - output_reserve = 600" in str(caught.value)


@pytest.mark.parametrize("slicer", sorted(SLICERS))
def test_truncate_cuts_the_window_to_the_ceiling(slicer: str) -> None:
    result = ceiling_pipeline(slicer, OverflowStrategy.TRUNCATE).dry_run(TOOLS)
    assert result.total_tokens == 500
    assert result.total_tokens <= 600
    assert [item.content for item in result.items] == ["tool-0", "tool-1"]
    (dropped,) = result.report.excluded
    assert dropped.item.content == "tool-2"


@pytest.mark.parametrize("slicer", sorted(SLICERS))
def test_proceed_reports_the_tokens_over_the_ceiling(slicer: str) -> None:
    result = ceiling_pipeline(slicer, OverflowStrategy.PROCEED).run(TOOLS)
    assert result.total_tokens == 750
    assert result.overflow is not None
    assert result.overflow.tokens_over_budget == 150


def test_below_the_ceiling_the_target_still_decides() -> None:
    budget = ContextBudget(max_tokens=1000, target_tokens=500)
    runner = Pipeline(
        budget=budget,
        scorer=PriorityScorer(),
        slicer=SLICERS["count-quota"],
        overflow_strategy=OverflowStrategy.THROW,
    )
    with pytest.raises(BudgetOverflowError) as caught:
        runner.run(TOOLS)
    assert (caught.value.target_tokens, caught.value.ceiling_tokens) == (500, None)


# --------------------------------------------------------------------------- components


@pytest.mark.parametrize(
    ("field", "value"),
    [("slicer", GreedySlice), ("placer", UShapedPlacer), ("placer", ChronologicalPlacer)],
)
def test_a_class_instead_of_an_instance_is_refused(field: str, value: type) -> None:
    with pytest.raises(PipelineConfigError) as caught:
        pipeline(**{field: value})
    assert caught.value.field == field
    assert "instance" in caught.value.rule


class NonePlacer:
    def place(self, items: tuple[ScoredItem, ...]) -> None:
        return None


def test_a_placer_returning_none_is_a_placer_error() -> None:
    runner = Pipeline(budget=BUDGET, scorer=KindScorer(), placer=NonePlacer())  # type: ignore[arg-type]
    with pytest.raises(PlacerConfigError) as caught:
        runner.run([ContextItem("a", tokens=1)])
    assert caught.value.field == "NonePlacer.place"
    assert caught.value.value is None
