"""Pipeline construction and call-argument validation."""

from __future__ import annotations

import pytest
from pipeline_fakes import AsGivenPlacer, InOrderSlice, by_priority

from pycupel.diagnostics import NullTraceCollector
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy
from pycupel.pipeline import Pipeline
from pycupel.scorers.base import FunctionScorer

BUDGET = ContextBudget(max_tokens=1000, target_tokens=800)


def make(**overrides: object) -> Pipeline:
    options: dict[str, object] = {
        "budget": BUDGET,
        "scorer": by_priority,
        "slicer": InOrderSlice(),
        "placer": AsGivenPlacer(),
    }
    options.update(overrides)
    return Pipeline(**options)  # type: ignore[arg-type]


def test_function_scorer_is_wrapped() -> None:
    pipeline = make()
    assert isinstance(pipeline.scorer, FunctionScorer)
    assert pipeline.deduplicate is True
    assert pipeline.overflow_strategy is OverflowStrategy.THROW
    assert pipeline.budget is BUDGET


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("budget", {"max_tokens": 10}, "must be a ContextBudget"),
        ("scorer", 42, "score_all"),
        ("slicer", object(), "slice(items, budget)"),
        ("placer", "chronological", "place(items)"),
        ("deduplicate", 1, "must be a boolean"),
        ("overflow_strategy", "explode", "must be one of: throw, truncate, proceed"),
        ("overflow_strategy", 3, "must be one of"),
    ],
)
def test_invalid_configuration_names_field_and_rule(field: str, value: object, rule: str) -> None:
    with pytest.raises(PipelineConfigError) as caught:
        make(**{field: value})
    assert caught.value.field == field
    assert rule in str(caught.value)


def test_overflow_strategy_accepts_names() -> None:
    assert make(overflow_strategy="Truncate").overflow_strategy is OverflowStrategy.TRUNCATE


def test_pipeline_is_immutable() -> None:
    pipeline = make()
    with pytest.raises(AttributeError, match="immutable"):
        pipeline._budget = BUDGET  # type: ignore[misc]
    with pytest.raises(AttributeError):
        pipeline.extra = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("items", ["abc", b"abc", 5, {1, 2}, (x for x in ())])
def test_items_must_be_a_sequence(items: object) -> None:
    with pytest.raises(PipelineConfigError) as caught:
        make().run(items)  # type: ignore[arg-type]
    assert caught.value.field == "items"


def test_non_item_is_named_by_index() -> None:
    items = [ContextItem("a", tokens=1), ContextItem("b", tokens=1), {"content": "c"}]
    with pytest.raises(PipelineConfigError, match=r"items\[2\]: must be a ContextItem"):
        make().run(items)  # type: ignore[list-item]


def test_call_budget_and_collector_are_checked() -> None:
    pipeline = make()
    with pytest.raises(PipelineConfigError, match="budget: must be a ContextBudget"):
        pipeline.run([], budget=500)  # type: ignore[arg-type]
    with pytest.raises(PipelineConfigError, match="collector: must be a TraceCollector"):
        pipeline.run([], collector=object())  # type: ignore[arg-type]
    assert pipeline.run([], collector=NullTraceCollector()).items == ()


def test_same_object_twice_is_rejected_when_it_matters() -> None:
    item = ContextItem("a", tokens=10)
    with pytest.raises(PipelineConfigError, match=r"items\[1\]: is the same object as items\[0\]"):
        make(deduplicate=False).run([item, item])


def test_repr_names_the_configuration() -> None:
    text = repr(make(overflow_strategy="proceed"))
    assert "InOrderSlice" in text
    assert "overflow_strategy=PROCEED" in text
