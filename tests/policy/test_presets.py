"""The seven reference presets: exact composition, lookup by name, and that they run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from policy_strategies import context_items

from pycupel import presets
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy
from pycupel.policy import Policy

EXPECTED = {
    "Chat": ([("recency", 3.0), ("kind", 1.0)], "greedy", {}, "chronological"),
    "CodeReview": (
        [("kind", 2.0), ("priority", 2.0), ("recency", 1.0)],
        "greedy",
        {},
        "chronological",
    ),
    "Rag": ([("reflexive", 3.0), ("kind", 1.0)], "greedy", {}, "u-shaped"),
    "DocumentQa": (
        [("kind", 2.0), ("reflexive", 2.0), ("priority", 1.0)],
        "knapsack",
        {"bucket_size": 100},
        "u-shaped",
    ),
    "ToolUse": (
        [("kind", 2.0), ("recency", 2.0), ("priority", 1.0)],
        "greedy",
        {},
        "chronological",
    ),
    "LongRunning": (
        [("recency", 3.0), ("frequency", 1.0), ("kind", 1.0)],
        "greedy",
        {},
        "chronological",
    ),
    "Debugging": (
        [("priority", 3.0), ("kind", 2.0), ("recency", 1.0)],
        "greedy",
        {},
        "chronological",
    ),
}
FUNCTIONS = {
    "Chat": presets.chat,
    "CodeReview": presets.code_review,
    "Rag": presets.rag,
    "DocumentQa": presets.document_qa,
    "ToolUse": presets.tool_use,
    "LongRunning": presets.long_running,
    "Debugging": presets.debugging,
}


def test_names_in_reference_order() -> None:
    assert presets.names() == tuple(EXPECTED)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_preset_composition(name: str) -> None:
    scorers, slicer, slicer_options, placer = EXPECTED[name]
    policy = FUNCTIONS[name]()
    assert policy.name == name
    assert policy.description.strip()
    assert "\n" not in policy.description
    assert [(s.type, s.weight) for s in policy.scorers] == scorers
    # The kind scorer uses the specification's default weights: no options at all.
    assert all(not s.options for s in policy.scorers)
    assert policy.slicer.type == slicer
    assert dict(policy.slicer.options) == slicer_options
    assert policy.placer == placer
    assert policy.deduplicate is True
    assert policy.overflow_strategy is OverflowStrategy.THROW
    assert presets.by_name(name) == policy


@pytest.mark.parametrize(
    "spelling", ["CodeReview", "code-review", "code_review", "codereview", "CODE REVIEW"]
)
def test_by_name_ignores_case_and_separators(spelling: str) -> None:
    assert presets.by_name(spelling).name == "CodeReview"


def test_by_name_unknown() -> None:
    with pytest.raises(PipelineConfigError, match=r"did you mean 'Debugging'\?"):
        presets.by_name("debuging")
    with pytest.raises(PipelineConfigError, match="must be one of: Chat, CodeReview"):
        presets.by_name("nothing-like-it")
    with pytest.raises(PipelineConfigError):
        presets.by_name(3)  # type: ignore[arg-type]


def test_presets_are_fresh_equal_values() -> None:
    assert presets.chat() == presets.chat()
    assert isinstance(presets.chat(), Policy)


BUDGET = ContextBudget(max_tokens=2000, target_tokens=1500, output_reserve=200)


@pytest.mark.parametrize("name", list(EXPECTED))
@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(items=context_items())
def test_every_preset_builds_and_runs(name: str, items: list[ContextItem]) -> None:
    pipeline = presets.by_name(name).build(BUDGET)
    result = pipeline.dry_run(items)
    assert result.total_tokens <= BUDGET.target_tokens
    report = result.report
    assert report.total_candidates == len(items)
    assert {id(i.item) for i in report.included} | {id(e.item) for e in report.excluded} == {
        id(item) for item in items
    }


SUPPORT_CHAT = Path(__file__).resolve().parents[2] / "examples" / "support-chat.json"


@pytest.mark.skipif(not SUPPORT_CHAT.exists(), reason="examples/support-chat.json not present")
@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_preset_runs_on_the_support_chat_example(name: str) -> None:
    from pycupel.itemio import read_items

    items = read_items(str(SUPPORT_CHAT))
    budget = ContextBudget(max_tokens=4000, target_tokens=3000)
    result = presets.by_name(name).build(budget).dry_run(items)
    assert result.total_tokens <= budget.target_tokens
    assert len(result.report.included) + len(result.report.excluded) == len(items)
    assert json.loads(result.report.to_json())["total_candidates"] == len(items)
