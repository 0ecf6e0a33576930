"""Policy -> pipeline: every type has a builder, options reach the components, and a
validated policy always builds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from policy_strategies import context_items, policies

from pycupel.errors import BudgetOverflowError, CountRequirementError, PipelineConfigError
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy
from pycupel.pipeline import Pipeline
from pycupel.placers import ChronologicalPlacer, UShapedPlacer
from pycupel.policy import (
    CountQuotaSpec,
    CurveSpec,
    Policy,
    QuotaSpec,
    ScorerSpec,
    SlicerSpec,
    StepWindowSpec,
    build_pipeline,
    build_placer,
    build_scorer,
    build_slicer,
)
from pycupel.policy.build import PLACER_BUILDERS, SCORER_BUILDERS, SLICER_BUILDERS
from pycupel.policy.registry import PLACERS, SCORERS, SLICERS
from pycupel.scorers import CompositeScorer, FixedClock, KindScorer, ScaledScorer
from pycupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaSlice,
    GreedySlice,
    KnapsackSlice,
    PackerSlice,
    QuotaSlice,
    ScarcityBehavior,
)

BUDGET = ContextBudget(max_tokens=1000, target_tokens=800)
NOW = datetime(2025, 1, 1, 12, tzinfo=UTC)


def test_every_registry_type_has_exactly_one_builder() -> None:
    assert tuple(SCORER_BUILDERS) == SCORERS.names
    assert tuple(SLICER_BUILDERS) == SLICERS.names
    assert tuple(PLACER_BUILDERS) == PLACERS.names


def test_pipeline_fields() -> None:
    policy = Policy(
        name="p",
        scorers=[ScorerSpec("recency")],
        slicer=SlicerSpec.of("knapsack", bucket_size=7),
        placer="u-shaped",
        deduplicate=False,
        overflow_strategy=OverflowStrategy.PROCEED,
    )
    pipeline = policy.build(BUDGET)
    assert isinstance(pipeline, Pipeline)
    assert pipeline.budget == BUDGET
    assert isinstance(pipeline.slicer, KnapsackSlice)
    assert pipeline.slicer.bucket_size == 7
    assert isinstance(pipeline.placer, UShapedPlacer)
    assert pipeline.deduplicate is False
    assert pipeline.overflow_strategy is OverflowStrategy.PROCEED
    assert build_pipeline(policy, BUDGET).slicer.bucket_size == 7  # type: ignore[attr-defined]


def test_several_scorers_become_a_weighted_composite() -> None:
    policy = Policy(name="p", scorers=[ScorerSpec("priority", 3), ScorerSpec("kind", 1)])
    scorer = policy.build(BUDGET).scorer
    assert isinstance(scorer, CompositeScorer)
    items = [
        ContextItem("a", tokens=1, priority=1, kind="SystemPrompt"),
        ContextItem("b", tokens=1, priority=9, kind="Message"),
    ]
    # priority ranks a=0.0, b=1.0; default kind weights SystemPrompt 1.0, Message 0.2
    assert scorer.score_all(items) == pytest.approx([0.25, 0.75 + 0.05])


def test_single_scorer_is_used_directly() -> None:
    policy = Policy(name="p", scorers=[ScorerSpec.of("kind", 5, weights={"Note": 2.0})])
    scorer = policy.build(BUDGET).scorer
    assert isinstance(scorer, KindScorer)
    assert scorer.score_all([ContextItem("x", tokens=1, kind="note")]) == [2.0]


def test_scaled_and_nested_composite() -> None:
    spec = ScorerSpec.of(
        "composite",
        scorers=[ScorerSpec.of("scaled", 1, inner="priority"), ScorerSpec("reflexive", 1)],
    )
    scorer = build_scorer(spec)
    assert isinstance(scorer, CompositeScorer)
    assert isinstance(scorer.scorers[0], ScaledScorer)


def test_decay_reference_time_and_clock_override() -> None:
    curve = CurveSpec.of("exponential", half_life="1d")
    item = ContextItem("x", tokens=1, timestamp=NOW - timedelta(days=1))
    fixed = ScorerSpec.of("decay", curve=curve, reference_time=NOW)
    assert build_scorer(fixed).score_all([item]) == pytest.approx([0.5])
    later = FixedClock(NOW + timedelta(days=1))
    # A fixed reference_time wins over the override...
    assert build_scorer(fixed, clock=later).score_all([item]) == pytest.approx([0.5])
    # ...the override replaces the system clock.
    system = ScorerSpec.of("decay", curve=curve, clock="system", null_timestamp_score=0.1)
    assert build_scorer(system, clock=later).score_all([item]) == pytest.approx([0.25])
    no_time = ContextItem("y", tokens=1)
    assert build_scorer(system, clock=later).score_all([no_time]) == [0.1]
    policy = Policy(name="p", scorers=[system])
    assert policy.build(BUDGET, clock=later).scorer.score_all([item]) == pytest.approx([0.25])


def test_step_and_window_curves() -> None:
    windows = [StepWindowSpec(timedelta(hours=1), 0.9), StepWindowSpec(timedelta(hours=24), 0.5)]
    step = ScorerSpec.of("decay", curve=CurveSpec.of("step", windows=windows), reference_time=NOW)
    item = ContextItem("x", tokens=1, timestamp=NOW - timedelta(hours=6))
    assert build_scorer(step).score_all([item]) == [0.5]
    window = ScorerSpec.of("decay", curve={"type": "window", "max_age": "6h"}, reference_time=NOW)
    assert build_scorer(window).score_all([item]) == [0.0]


def test_metadata_scorers_and_tag() -> None:
    item = ContextItem("x", tokens=1, metadata={"cupel:priority": "high"}, tags=["t"])
    key = ScorerSpec.of("metadata_key", key="cupel:priority", value="high", boost=1.5)
    assert build_scorer(key).score_all([item]) == [1.5]
    trust = ScorerSpec.of("metadata_trust", default_score=0.25)
    assert build_scorer(trust).score_all([item]) == [0.25]
    tag = ScorerSpec.of("tag", weights={"t": 1.0, "u": 3.0})
    assert build_scorer(tag).score_all([item]) == [0.25]


def test_slicer_options_reach_the_slicers() -> None:
    quota = build_slicer(
        SlicerSpec.of("quota", quotas=[QuotaSpec("Message", 10, 50)], inner="packer")
    )
    assert isinstance(quota, QuotaSlice)
    assert [(q.kind.value, q.require, q.cap) for q in quota.quotas] == [("Message", 10.0, 50.0)]
    assert isinstance(quota.inner, PackerSlice)
    assert isinstance(build_slicer(SlicerSpec("quota")).inner, GreedySlice)  # type: ignore[attr-defined]

    count = build_slicer(
        SlicerSpec.of("count_quota", entries=[CountQuotaSpec("tool", 1, 2)], scarcity="THROW")
    )
    assert isinstance(count, CountQuotaSlice)
    assert [(e.kind.value, e.require_count, e.cap_count) for e in count.entries] == [("tool", 1, 2)]
    assert count.scarcity is ScarcityBehavior.THROW
    assert isinstance(count.inner, GreedySlice)

    ccks = build_slicer(
        SlicerSpec.of(
            "count_constrained_knapsack",
            entries=[CountQuotaSpec("tool", 0)],
            bucket_size=25,
            max_table_bytes=123456,
        )
    )
    assert isinstance(ccks, CountConstrainedKnapsackSlice)
    assert ccks.knapsack.bucket_size == 25
    assert ccks.knapsack.max_table_bytes == 123456
    assert ccks.scarcity is ScarcityBehavior.DEGRADE
    assert ccks.entries[0].cap_count is None

    packer = build_slicer(SlicerSpec.of("packer", max_consecutive_skips="unlimited"))
    assert isinstance(packer, PackerSlice)
    assert packer.max_consecutive_skips is None
    assert build_slicer(SlicerSpec("packer")).max_consecutive_skips == 3  # type: ignore[attr-defined]
    assert build_slicer(SlicerSpec("knapsack")).bucket_size == 100  # type: ignore[attr-defined]


def test_placers() -> None:
    assert isinstance(build_placer("chronological"), ChronologicalPlacer)
    assert isinstance(build_placer("u-shaped"), UShapedPlacer)
    with pytest.raises(PipelineConfigError):
        build_placer("UShaped")  # policies store canonical names only


def test_bad_arguments() -> None:
    policy = Policy(name="p", scorers=[ScorerSpec("recency")])
    with pytest.raises(PipelineConfigError):
        policy.build({"max_tokens": 10})  # type: ignore[arg-type]
    with pytest.raises(PipelineConfigError):
        build_pipeline("policy", BUDGET)  # type: ignore[arg-type]
    with pytest.raises(PipelineConfigError):
        build_scorer("recency")  # type: ignore[arg-type]
    with pytest.raises(PipelineConfigError):
        build_slicer("greedy")  # type: ignore[arg-type]


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(policy=policies(), items=context_items(max_size=12))
def test_a_validated_policy_always_builds_and_runs(
    policy: Policy, items: list[ContextItem]
) -> None:
    pipeline = policy.build(BUDGET, clock=FixedClock(NOW))
    try:
        result = pipeline.dry_run(items)
    except CountRequirementError:
        # scarcity = "throw" with too few candidates of a required kind: a run-time outcome
        # the policy asked for, not a build failure.
        assert policy.slicer.options.get("scarcity") == "throw"
        return
    except BudgetOverflowError:
        # Count slicers commit required items whatever their size; with overflow THROW an
        # over-budget commitment is reported at run time, as the policy asked.
        assert policy.slicer.type in ("count_quota", "count_constrained_knapsack")
        assert policy.overflow_strategy is OverflowStrategy.THROW
        return
    assert result.report.total_candidates == len(items)


EDGE_POLICIES = [
    Policy(name="huge weight", scorers=[ScorerSpec("recency", 1e308)]),
    Policy(name="tiny weight", scorers=[ScorerSpec("recency", 5e-324), ScorerSpec("kind", 1e307)]),
    Policy(
        name="odd weights",
        scorers=[
            ScorerSpec.of("tag", weights={"": 0.0, " ": 1e308}),
            ScorerSpec.of("kind", weights={}),
            ScorerSpec.of("metadata_key", key="k", value="", boost=5e-324),
        ],
    ),
    Policy(
        name="extreme times",
        scorers=[
            ScorerSpec.of(
                "decay",
                curve={"type": "exponential", "half_life": "999999999d"},
                reference_time="9999-12-31T23:59:59Z",
            ),
            ScorerSpec.of(
                "decay",
                curve={"type": "step", "windows": [{"max_age": 1e-6, "score": 0.0}]},
                reference_time="0001-01-01T00:00:00Z",
            ),
        ],
    ),
    Policy(
        name="full quota",
        scorers=[ScorerSpec("reflexive")],
        slicer=SlicerSpec.of("quota", quotas=[QuotaSpec("Message", 100, 100)], inner="knapsack"),
    ),
    Policy(
        name="zero caps",
        scorers=[ScorerSpec("reflexive")],
        slicer=SlicerSpec.of(
            "count_constrained_knapsack",
            entries=[CountQuotaSpec("Message", 0, 0)],
            bucket_size=2**63 - 1,
            max_table_bytes=1,
        ),
    ),
    Policy(
        name="unlimited packer",
        scorers=[ScorerSpec("reflexive")],
        slicer=SlicerSpec.of("packer", max_consecutive_skips="unlimited"),
    ),
]


@pytest.mark.parametrize("policy", EDGE_POLICIES, ids=lambda p: p.name)
def test_edge_values_build_and_run(policy: Policy) -> None:
    items = [
        ContextItem("a", tokens=10, timestamp=NOW, future_relevance_hint=0.5, tags=[" "]),
        ContextItem("b", tokens=0, metadata={"k": ""}),
    ]
    result = policy.build(BUDGET).dry_run(items)
    assert result.report.total_candidates == 2
