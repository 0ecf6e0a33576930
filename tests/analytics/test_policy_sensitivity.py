"""Policy sensitivity: per-variant reports and the diff of swinging items."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pycupel import presets
from pycupel.analytics import ItemStatus, SensitivityDiff, policy_sensitivity
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextBudget, ContextItem
from pycupel.pipeline import Pipeline
from pycupel.policy import Policy, ScorerSpec
from pycupel.scorers import PriorityScorer, ReflexiveScorer

BUDGET = ContextBudget(max_tokens=50, target_tokens=40)
BY_PRIORITY = Policy(name="priority", scorers=[ScorerSpec("priority")])
BY_HINT = Policy(name="reflexive", scorers=[ScorerSpec("reflexive")])


def spec_example_items() -> list[ContextItem]:
    return [
        ContextItem("item-a", tokens=40, priority=10, future_relevance_hint=0.1),
        ContextItem("item-b", tokens=40, priority=1, future_relevance_hint=0.9),
    ]


def test_two_policies_disagree_on_both_items() -> None:
    items = spec_example_items()
    result = policy_sensitivity(items, BUDGET, [("priority", BY_PRIORITY), ("reflexive", BY_HINT)])
    assert [label for label, _ in result.variants] == ["priority", "reflexive"]
    assert [e.item for e in result.report("priority").included] == [items[0]]
    assert [e.item for e in result.report("reflexive").included] == [items[1]]
    assert result.diffs == (
        SensitivityDiff(
            items[0],
            "item-a",
            (("priority", ItemStatus.INCLUDED), ("reflexive", ItemStatus.EXCLUDED)),
        ),
        SensitivityDiff(
            items[1],
            "item-b",
            (("priority", ItemStatus.EXCLUDED), ("reflexive", ItemStatus.INCLUDED)),
        ),
    )


def test_items_all_variants_agree_on_are_not_listed() -> None:
    items = [*spec_example_items(), ContextItem("tiny", tokens=0)]
    result = policy_sensitivity(items, BUDGET, {"p": BY_PRIORITY, "r": BY_HINT, "p2": BY_PRIORITY})
    assert [d.content for d in result.diffs] == ["item-a", "item-b"]
    assert [label for label, _ in result.diffs[0].statuses] == ["p", "r", "p2"]


def test_pipelines_and_policies_mix_and_use_the_given_budget() -> None:
    items = spec_example_items()
    # The pipeline's own budget would fit both; the comparison budget decides.
    roomy = Pipeline(
        budget=ContextBudget(max_tokens=1000, target_tokens=1000), scorer=ReflexiveScorer()
    )
    result = policy_sensitivity(items, BUDGET, [("pipeline", roomy), ("policy", BY_PRIORITY)])
    assert [e.item.content for e in result.report("pipeline").included] == ["item-b"]
    assert len(result.diffs) == 2


def test_identity_not_content_tells_items_apart() -> None:
    first = ContextItem("same", tokens=30, priority=5, future_relevance_hint=0.1)
    second = ContextItem("same", tokens=30, priority=1, future_relevance_hint=0.9)
    pipelines = [
        ("p", Pipeline(budget=BUDGET, scorer=PriorityScorer(), deduplicate=False)),
        ("r", Pipeline(budget=BUDGET, scorer=ReflexiveScorer(), deduplicate=False)),
    ]
    result = policy_sensitivity([first, second], BUDGET, pipelines)
    assert [d.item for d in result.diffs] == [first, second]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(-3, 3), st.floats(0, 1)), max_size=12),
    st.permutations(presets.names()).map(lambda names: names[:3]),
)
def test_diffs_are_exactly_the_swinging_items_in_input_order(
    specs: list[tuple[int, int, float]], names: list[str]
) -> None:
    items = [
        ContextItem(
            f"i{n}",
            tokens=t,
            priority=p,
            future_relevance_hint=h,
            kind=["Message", "Document", "ToolOutput"][n % 3],
        )
        for n, (t, p, h) in enumerate(specs)
    ]
    budget = ContextBudget(max_tokens=120, target_tokens=100)
    result = policy_sensitivity(items, budget, [(n, presets.by_name(n)) for n in names])
    included = [
        {e.item for e in presets.by_name(n).build(budget).dry_run(items).report.included}
        for n in names
    ]
    expected = [x for x in items if len({x in s for s in included}) == 2]
    assert [d.item for d in result.diffs] == expected
    for diff in result.diffs:
        assert [status for _, status in diff.statuses] == [
            ItemStatus.INCLUDED if diff.item in s else ItemStatus.EXCLUDED for s in included
        ]


def test_argument_errors() -> None:
    items = spec_example_items()
    with pytest.raises(PipelineConfigError, match="at least two variants"):
        policy_sensitivity(items, BUDGET, [("only", BY_PRIORITY)])
    with pytest.raises(PipelineConfigError, match="at least two variants"):
        policy_sensitivity(items, BUDGET, [])
    with pytest.raises(PipelineConfigError, match=r"variants\[1\].label: must be unique"):
        policy_sensitivity(items, BUDGET, [("a", BY_PRIORITY), ("a", BY_HINT)])
    with pytest.raises(PipelineConfigError, match=r"variants\[0\].label: must not be empty"):
        policy_sensitivity(items, BUDGET, [(" ", BY_PRIORITY), ("a", BY_HINT)])
    with pytest.raises(PipelineConfigError, match="must be a Policy or a Pipeline"):
        policy_sensitivity(items, BUDGET, [("a", BY_PRIORITY), ("b", "chat")])  # type: ignore[list-item]
    with pytest.raises(PipelineConfigError, match=r"must be a \(label, policy-or-pipeline\) pair"):
        policy_sensitivity(items, BUDGET, [("a", BY_PRIORITY), BY_HINT])  # type: ignore[list-item]
    with pytest.raises(PipelineConfigError, match="budget: must be a ContextBudget"):
        policy_sensitivity(items, None, [("a", BY_PRIORITY), ("b", BY_HINT)])  # type: ignore[arg-type]
    result = policy_sensitivity(items, BUDGET, [("a", BY_PRIORITY), ("b", BY_HINT)])
    with pytest.raises(PipelineConfigError, match="label: must be the label"):
        result.report("c")
