"""The policy model: validation with paths, canonical names, immutability, equality."""

from __future__ import annotations

import dataclasses
import pickle
from datetime import UTC, datetime, timedelta

import pytest

from pycupel.errors import PolicyError, PolicyProblem
from pycupel.model import OverflowStrategy
from pycupel.policy import (
    CountQuotaSpec,
    CurveSpec,
    Policy,
    QuotaSpec,
    ScorerSpec,
    SlicerSpec,
    StepWindowSpec,
)
from pycupel.policy.registry import MAX_NESTING_DEPTH, PLACERS, SCORERS, SLICERS


def problems_of(exc: pytest.ExceptionInfo[PolicyError]) -> list[str]:
    return [str(problem) for problem in exc.value.problems]


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "spelling", ["u-shaped", "u_shaped", "UShaped", "ushaped", "U-SHAPED", "UShapedPlacer"]
)
def test_placer_spellings_are_accepted_and_canonicalised(spelling: str) -> None:
    policy = Policy(name="p", scorers=[ScorerSpec("recency")], placer=spelling)
    assert policy.placer == "u-shaped"


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("Recency", "recency"),
        ("RecencyScorer", "recency"),
        ("metadata-trust", "metadata_trust"),
        ("MetadataTrust", "metadata_trust"),
        ("METADATA_KEY", "metadata_key"),
        ("metadatakey", "metadata_key"),
    ],
)
def test_scorer_spellings(spelling: str, canonical: str) -> None:
    options = {"key": "k", "value": "v", "boost": 2.0} if canonical == "metadata_key" else {}
    assert ScorerSpec(spelling, 1.0, options).type == canonical


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("GreedySlice", "greedy"),
        ("Knapsack", "knapsack"),
        ("count-quota", "count_quota"),
        ("CountQuotaSlice", "count_quota"),
        ("CountConstrainedKnapsack", "count_constrained_knapsack"),
        ("count-constrained-knapsack-slicer", "count_constrained_knapsack"),
        ("Packer", "packer"),
    ],
)
def test_slicer_spellings(spelling: str, canonical: str) -> None:
    assert SlicerSpec(spelling).type == canonical


@pytest.mark.parametrize("spelling", ["u--shaped", "u shaped", "shaped-u", "", "chrono"])
def test_other_placer_spellings_are_refused(spelling: str) -> None:
    with pytest.raises(PolicyError) as exc:
        Policy(name="p", scorers=[ScorerSpec("recency")], placer=spelling)
    assert exc.value.problems[0].path == "placer"
    assert exc.value.problems[0].message.startswith("unknown placer")


def test_unknown_scorer_suggests_the_closest_name() -> None:
    with pytest.raises(PolicyError) as exc:
        ScorerSpec("recnecy")
    assert problems_of(exc) == ["type: unknown scorer 'recnecy' (did you mean 'recency'?)"]


def test_unknown_scorer_without_close_match_lists_the_types() -> None:
    with pytest.raises(PolicyError) as exc:
        ScorerSpec("zzzzzz")
    message = exc.value.problems[0].message
    assert message.startswith("unknown scorer 'zzzzzz' (expected one of: recency, priority")


def test_canonical_names_are_what_the_registry_declares() -> None:
    assert SCORERS.names == (
        "recency",
        "priority",
        "kind",
        "tag",
        "frequency",
        "reflexive",
        "relevance",
        "retrieval_score",
        "scaled",
        "composite",
        "decay",
        "metadata_trust",
        "metadata_key",
    )
    assert SLICERS.names == (
        "greedy",
        "knapsack",
        "quota",
        "count_quota",
        "count_constrained_knapsack",
        "optimal",
        "packer",
    )
    assert PLACERS.names == ("chronological", "u-shaped")


# --------------------------------------------------------------------------- validation


def test_scorer_weight_rules() -> None:
    for bad, rule in [(0, "must be > 0, got 0"), (-1, "must be > 0, got -1")]:
        with pytest.raises(PolicyError) as exc:
            ScorerSpec("recency", bad)
        assert problems_of(exc) == [f"weight: {rule}"]
    for bad in (float("nan"), float("inf")):
        with pytest.raises(PolicyError) as exc:
            ScorerSpec("recency", bad)
        assert problems_of(exc)[0].startswith("weight: must be a finite number")
    with pytest.raises(PolicyError) as exc:
        ScorerSpec("recency", True)  # a bool is not a number here
    assert problems_of(exc) == ["weight: must be a number, got true"]


def test_every_problem_of_one_spec_is_reported() -> None:
    with pytest.raises(PolicyError) as exc:
        ScorerSpec("metadata_key", -2, {"boost": 0, "colour": "red"})
    assert problems_of(exc) == [
        "weight: must be > 0, got -2",
        "boost: must be > 0, got 0",
        "colour: unknown key for scorer 'metadata_key' (allowed: type, weight, key, value, boost)",
        "key: is required for scorer 'metadata_key'",
        "value: is required for scorer 'metadata_key'",
    ]


def test_kind_weights_refuse_negative_and_case_duplicates() -> None:
    with pytest.raises(PolicyError) as exc:
        ScorerSpec.of("kind", weights={"Message": -0.5, "Memory": 1.0, "MEMORY": 2.0, " ": 1})
    assert problems_of(exc) == [
        "weights.Message: must be >= 0, got -0.5",
        "weights.MEMORY: kind 'MEMORY' is already given as 'Memory' (names are compared "
        "case-insensitively)",
        "weights: kind names must be non-blank strings, got ' '",
    ]


def test_tag_weights_must_have_a_finite_sum() -> None:
    with pytest.raises(PolicyError) as exc:
        ScorerSpec.of("tag", weights={"a": 1e308, "b": 1e308})
    assert problems_of(exc) == ["weights: the sum of the weights must be finite"]


def test_composite_children_weights_must_have_a_finite_sum() -> None:
    with pytest.raises(PolicyError) as exc:
        ScorerSpec.of("composite", scorers=[ScorerSpec("recency", 1e308)] * 2)
    assert problems_of(exc) == ["scorers: the sum of the weights must be finite"]


def test_scaled_inner_has_no_weight() -> None:
    with pytest.raises(PolicyError) as exc:
        ScorerSpec.of("scaled", inner={"type": "priority", "weight": 2})
    assert problems_of(exc) == ["inner.weight: is not allowed here: an inner scorer has no weight"]
    with pytest.raises(PolicyError) as exc:
        ScorerSpec.of("scaled", inner=ScorerSpec("priority", 2))
    assert problems_of(exc) == ["inner.weight: is not allowed here: an inner scorer has no weight"]
    spec = ScorerSpec.of("scaled", inner="priority")
    assert spec.options["inner"] == ScorerSpec("priority")


def test_decay_clock_and_reference_time_are_exclusive() -> None:
    curve = CurveSpec.of("window", max_age=timedelta(hours=1))
    with pytest.raises(PolicyError) as exc:
        ScorerSpec.of("decay", curve=curve, clock="system", reference_time="2025-01-01T00:00:00Z")
    assert problems_of(exc) == [
        "reference_time: give either clock = 'system' or a fixed reference_time, not both"
    ]


def test_decay_reference_time_needs_an_offset() -> None:
    curve = {"type": "exponential", "half_life": "1h"}
    with pytest.raises(PolicyError) as exc:
        ScorerSpec.of("decay", curve=curve, reference_time="2025-01-01T00:00:00")
    assert problems_of(exc)[0].startswith("reference_time: must be a date-time with a UTC offset")
    spec = ScorerSpec.of("decay", curve=curve, reference_time="2025-01-01T02:00:00+02:00")
    assert spec.options["reference_time"] == datetime(2025, 1, 1, tzinfo=UTC)


def test_durations_in_every_form() -> None:
    for given in ("1h30m", 5400, 5400.0, timedelta(minutes=90), "90m", "5400s", "0.0625d"):
        curve = CurveSpec.of("exponential", half_life=given)
        assert curve.options["half_life"] == timedelta(minutes=90), given
    for bad, rule in [
        ("0s", "must be > 0"),
        (-5, "must be > 0"),
        ("1x", "must be a positive duration"),
        ("0.0000001s", "must be a whole number of microseconds"),
        (float("inf"), "must be a positive duration"),
        ("9999999999d", "must be at most 999999999 days"),
    ]:
        with pytest.raises(PolicyError) as exc:
            CurveSpec.of("window", max_age=bad)
        assert exc.value.problems[0].message.startswith(rule), bad


def test_step_windows_must_increase() -> None:
    with pytest.raises(PolicyError) as exc:
        CurveSpec.of(
            "step",
            windows=[StepWindowSpec(timedelta(hours=2), 0.9), {"max_age": "1h", "score": 0.5}],
        )
    assert problems_of(exc) == [
        "windows[1].max_age: must be greater than the previous window's max_age (2h); windows "
        "go from youngest to oldest, got 1h"
    ]


def test_step_window_record_validation() -> None:
    with pytest.raises(PolicyError) as exc:
        StepWindowSpec(timedelta(0), 1.5)
    assert problems_of(exc) == ["max_age: must be > 0, got 0:00:00", "score: must be <= 1, got 1.5"]


def test_quota_rules() -> None:
    with pytest.raises(PolicyError) as exc:
        QuotaSpec("Message", 60, 50)
    assert problems_of(exc) == ["require: must be <= cap (50), got 60"]
    with pytest.raises(PolicyError) as exc:
        SlicerSpec.of(
            "quota",
            quotas=[QuotaSpec("a", 40), QuotaSpec("b", 60), QuotaSpec("c", 20), QuotaSpec("A")],
        )
    assert problems_of(exc) == [
        "quotas[3].kind: kind 'A' already has an entry (quotas[0]); kinds are compared "
        "case-insensitively",
        "quotas[2].require: sum of requires must be <= 100, got 120",
    ]


def test_quota_require_sum_exactly_100_is_allowed() -> None:
    spec = SlicerSpec.of(
        "quota", quotas=[QuotaSpec("a", 33.3), QuotaSpec("b", 33.3), QuotaSpec("c", 33.4)]
    )
    assert len(spec.options["quotas"]) == 3


def test_count_entry_rules() -> None:
    with pytest.raises(PolicyError) as exc:
        CountQuotaSpec("tool", 3, 2)
    assert problems_of(exc) == ["require_count: must be <= cap_count (2), got 3"]
    with pytest.raises(PolicyError) as exc:
        CountQuotaSpec("tool", 1, 0)
    assert problems_of(exc) == ["require_count: must be <= cap_count (0), got 1"]
    assert CountQuotaSpec("tool", 0, 0).cap_count == 0
    assert CountQuotaSpec("tool", 2).cap_count is None
    with pytest.raises(PolicyError) as exc:
        CountQuotaSpec("tool", 1.0)  # type: ignore[arg-type]
    assert problems_of(exc) == ["require_count: must be an integer, got 1"]


def test_count_quota_refuses_a_knapsack_inner_slicer() -> None:
    with pytest.raises(PolicyError) as exc:
        SlicerSpec.of("count_quota", inner="knapsack")
    assert problems_of(exc) == [
        "inner: slicer 'knapsack' is not allowed here (allowed: greedy, packer); use the "
        "count_constrained_knapsack slicer for knapsack selection"
    ]
    with pytest.raises(PolicyError):
        SlicerSpec.of("count_quota", inner=SlicerSpec("knapsack"))


def test_integers_are_range_checked() -> None:
    with pytest.raises(PolicyError) as exc:
        SlicerSpec.of("knapsack", bucket_size=0)
    assert problems_of(exc) == ["bucket_size: must be >= 1, got 0"]
    with pytest.raises(PolicyError) as exc:
        SlicerSpec.of("knapsack", bucket_size=2**63)
    assert problems_of(exc) == [f"bucket_size: must be <= {2**63 - 1}, got {2**63}"]


def test_packer_skips_accept_unlimited() -> None:
    assert SlicerSpec.of("packer", max_consecutive_skips="Unlimited").options == {
        "max_consecutive_skips": "unlimited"
    }
    with pytest.raises(PolicyError):
        SlicerSpec.of("packer", max_consecutive_skips=0)
    with pytest.raises(PolicyError):
        SlicerSpec.of("packer", max_consecutive_skips=None)


def test_type_and_weight_are_not_options() -> None:
    with pytest.raises(PolicyError) as exc:
        ScorerSpec("recency", 1.0, {"weight": 2})
    assert problems_of(exc) == ["options.weight: is not an option (it is a spec field)"]
    with pytest.raises(PolicyError) as exc:
        ScorerSpec("recency", 1.0, ["not", "a", "mapping"])  # type: ignore[arg-type]
    assert exc.value.problems[0].path == "options"


def test_policy_reports_every_problem() -> None:
    with pytest.raises(PolicyError) as exc:
        Policy(
            name=" ",
            scorers=[],
            placer="sideways",
            deduplicate="yes",  # type: ignore[arg-type]
            overflow_strategy="explode",  # type: ignore[arg-type]
        )
    assert [p.path for p in exc.value.problems] == [
        "name",
        "scorers",
        "placer",
        "deduplicate",
        "overflow_strategy",
    ]
    assert exc.value.source == "Policy"


def test_nesting_is_limited() -> None:
    spec = ScorerSpec("recency")
    for _ in range(MAX_NESTING_DEPTH - 1):
        spec = ScorerSpec.of("scaled", inner=spec)
    assert Policy(name="deep", scorers=[spec]).scorers[0] is spec
    with pytest.raises(PolicyError) as exc:
        ScorerSpec.of("scaled", inner=spec)
    assert exc.value.problems[0].message == f"nesting is deeper than {MAX_NESTING_DEPTH} levels"
    nested_dict: object = "recency"
    for _ in range(200):
        nested_dict = {"type": "scaled", "inner": nested_dict}
    with pytest.raises(PolicyError) as exc:
        Policy.from_dict({"name": "x", "scorers": [nested_dict]})
    assert "nesting is deeper" in exc.value.problems[0].message


# --------------------------------------------------------------------------- value semantics


def test_specs_are_frozen_hashable_and_compare_by_value() -> None:
    a = ScorerSpec.of("kind", 2, weights={"Message": 1.0})
    b = ScorerSpec("kind", 2.0, {"weights": {"Message": 1}})
    assert a == b
    assert hash(a) == hash(b)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.weight = 3  # type: ignore[misc]
    with pytest.raises((TypeError, AttributeError)):
        a.options["weights"] = {}  # type: ignore[index]
    policy = Policy(name="p", scorers=[a])
    assert {policy: 1}[Policy(name="p", scorers=[b])] == 1


def test_policy_converts_inputs() -> None:
    policy = Policy(
        name="p",
        scorers=[{"type": "recency", "weight": 2}, ScorerSpec("kind")],  # type: ignore[list-item]
        slicer="knapsack",  # type: ignore[arg-type]
        overflow_strategy="Truncate",  # type: ignore[arg-type]
    )
    assert policy.scorers == (ScorerSpec("recency", 2.0), ScorerSpec("kind"))
    assert isinstance(policy.scorers, tuple)
    assert policy.slicer == SlicerSpec("knapsack")
    assert policy.overflow_strategy is OverflowStrategy.TRUNCATE


def test_caller_objects_are_not_changed() -> None:
    scorers = [ScorerSpec("recency")]
    options = {"weights": {"Message": 1}}
    Policy(name="p", scorers=scorers)
    ScorerSpec("kind", 1, options)
    assert scorers == [ScorerSpec("recency")]
    assert options == {"weights": {"Message": 1}}


def test_replace_revalidates() -> None:
    policy = Policy(name="p", scorers=[ScorerSpec("recency")])
    assert dataclasses.replace(policy, placer="UShaped").placer == "u-shaped"
    with pytest.raises(PolicyError):
        dataclasses.replace(policy, name="")


def test_normalized_weights() -> None:
    policy = Policy(name="p", scorers=[ScorerSpec("recency", 3), ScorerSpec("kind", 1)])
    assert policy.normalized_weights == (0.75, 0.25)


def test_pickle_round_trip() -> None:
    policy = Policy(
        name="p",
        scorers=[
            ScorerSpec.of(
                "decay",
                curve=CurveSpec.of("step", windows=[StepWindowSpec(timedelta(hours=1), 0.5)]),
                reference_time="2025-01-01T00:00:00Z",
            )
        ],
        slicer=SlicerSpec.of("count_quota", entries=[CountQuotaSpec("tool", 1, 2)]),
    )
    assert pickle.loads(pickle.dumps(policy)) == policy


def test_describe() -> None:
    assert SlicerSpec.of("knapsack", bucket_size=50).describe() == "knapsack(bucket_size=50)"
    assert SlicerSpec("greedy").describe() == "greedy"
    assert ScorerSpec.of("scaled", inner="priority").describe() == "scaled(inner=priority)"
    curve = CurveSpec.of("exponential", half_life=timedelta(days=1, hours=2))
    assert curve.describe() == "exponential(half_life=1d2h)"


def test_policy_problem_str() -> None:
    assert str(PolicyProblem("a.b", "bad")) == "a.b: bad"
