"""The conformance runner: loading, building, comparing, and failing cleanly.

Components other than the placers are replaced by small fakes installed in ``sys.modules``, so
these tests pin down the runner's own behaviour (what it builds, how it compares, what it
reports) independently of the real scorers, slicers and pipeline.
"""

from __future__ import annotations

import enum
import importlib.abc
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import pycupel.conformance.build as build_module
import pycupel.conformance.run as run_module
from pycupel.conformance import (
    VectorResult,
    discover_vectors,
    load_vector,
    run_file,
    run_paths,
)
from pycupel.errors import ConformanceVectorError, ScorerConfigError, SlicerConfigError
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy, ScoredItem
from pycupel.slicers.base import CapExclusion, CountRequirementShortfall, SliceResult


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run_text(tmp_path: Path, text: str, name: str = "vector.toml") -> VectorResult:
    return run_file(write(tmp_path, name, text))


# =========================================================================== fakes


@dataclass
class Calls:
    """What the fake constructors were called with."""

    log: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)

    def named(self, name: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [(args, kwargs) for n, args, kwargs in self.log if n == name]


class FakeComponent:
    """Base of the fake scorers/slicers: records its constructor arguments."""

    calls: Calls
    label: str

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.calls.log.append((self.label, args, kwargs))
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        return f"Fake{self.label}()"


def fake_class(calls: Calls, name: str, **methods: Callable[..., Any]) -> type:
    return type(name, (FakeComponent,), {"calls": calls, "label": name, **methods})


def scores_by_content(table: dict[str, float]) -> Callable[..., list[float]]:
    def score_all(self: Any, items: Sequence[ContextItem]) -> list[float]:
        return [table[item.content] for item in items]

    return score_all


@pytest.fixture
def calls() -> Calls:
    return Calls()


@pytest.fixture
def fake_scorers(monkeypatch: pytest.MonkeyPatch, calls: Calls) -> types.ModuleType:
    """A stand-in ``pycupel.scorers`` whose scorers all score 0.25 unless told otherwise."""
    module = types.ModuleType("pycupel.scorers")
    constant = scores_by_content_default(0.25)
    for name in (
        "RecencyScorer",
        "PriorityScorer",
        "FrequencyScorer",
        "ReflexiveScorer",
        "KindScorer",
        "TagScorer",
        "CompositeScorer",
        "ScaledScorer",
        "DecayScorer",
        "MetadataTrustScorer",
        "MetadataKeyScorer",
    ):
        setattr(module, name, fake_class(calls, name, score_all=constant))
    for name in ("FixedClock", "ExponentialDecay", "StepDecay", "WindowDecay"):
        setattr(module, name, fake_class(calls, name))
    monkeypatch.setitem(sys.modules, "pycupel.scorers", module)
    return module


def scores_by_content_default(value: float) -> Callable[..., list[float]]:
    def score_all(self: Any, items: Sequence[ContextItem]) -> list[float]:
        return [value] * len(items)

    return score_all


class FakeScarcity:
    DEGRADE = "DEGRADE-MEMBER"
    THROW = "THROW-MEMBER"


@pytest.fixture
def fake_slicers(monkeypatch: pytest.MonkeyPatch, calls: Calls) -> types.ModuleType:
    """A stand-in ``pycupel.slicers``; every slicer selects the items scoring >= 0.5."""

    def slice_(self: Any, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        calls.log.append(("slice", (list(items), budget), {}))
        return SliceResult.of(s.item for s in items if s.score >= 0.5)

    module = types.ModuleType("pycupel.slicers")
    for name in (
        "GreedySlice",
        "KnapsackSlice",
        "QuotaSlice",
        "CountQuotaSlice",
        "CountConstrainedKnapsackSlice",
    ):
        setattr(module, name, fake_class(calls, name, slice=slice_))
    for name in ("QuotaEntry", "CountQuotaEntry"):
        setattr(module, name, fake_class(calls, name))
    module.ScarcityBehavior = FakeScarcity  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pycupel.slicers", module)
    return module


# =========================================================================== scoring


SCORING_HEAD = """
[test]
name = "fake scoring"
stage = "scoring"
scorer = "recency"

[[items]]
content = "a"
tokens = 10

[[items]]
content = "b"
tokens = 10
"""


def test_scoring_passes_when_scores_match(tmp_path: Path, fake_scorers: Any) -> None:
    fake_scorers.RecencyScorer.score_all = scores_by_content({"a": 0.0, "b": 0.5})
    result = run_text(
        tmp_path,
        SCORING_HEAD
        + """
[[expected]]
content = "b"
score_approx = 0.5

[[expected]]
content = "a"
score_approx = 0.0
""",
    )
    assert result == VectorResult(
        str(tmp_path / "vector.toml"), "fake scoring", "scoring", True, ""
    )


def test_scoring_mismatch_lists_every_differing_item(tmp_path: Path, fake_scorers: Any) -> None:
    fake_scorers.RecencyScorer.score_all = scores_by_content({"a": 0.1, "b": 0.6})
    result = run_text(
        tmp_path,
        SCORING_HEAD
        + """
[[expected]]
content = "a"
score_approx = 0.0

[[expected]]
content = "b"
score_approx = 0.5
""",
    )
    assert not result.passed
    lines = result.message.splitlines()
    assert lines[0] == "scores differ (epsilon = 1e-09):"
    assert "'a': expected 0.0, got 0.1 (|diff| = 0.1)" in lines[1]
    assert "'b': expected 0.5, got 0.6 (|diff| = 0.1)" in lines[2]


@pytest.mark.parametrize(("actual", "passed"), [(0.74, True), (0.75, False)])
def test_scoring_epsilon_is_a_strict_bound(
    tmp_path: Path, fake_scorers: Any, actual: float, passed: bool
) -> None:
    # |0.75 - 0.25| = 0.5 exactly: abs(a - e) < eps must fail at eps = 0.5.
    fake_scorers.RecencyScorer.score_all = scores_by_content({"a": actual, "b": 0.0})
    result = run_text(
        tmp_path,
        SCORING_HEAD
        + """
[[expected]]
content = "a"
score_approx = 0.25

[tolerance]
score_epsilon = 0.5
""",
    )
    assert result.passed is passed


def test_scoring_uses_the_batch_api_once(tmp_path: Path, fake_scorers: Any) -> None:
    seen: list[list[str]] = []

    def score_all(self: Any, items: Sequence[ContextItem]) -> list[float]:
        seen.append([i.content for i in items])
        return [0.25] * len(items)

    fake_scorers.RecencyScorer.score_all = score_all
    assert run_text(tmp_path, SCORING_HEAD).passed
    assert seen == [["a", "b"]]


def test_scoring_wrong_number_of_scores(tmp_path: Path, fake_scorers: Any) -> None:
    fake_scorers.RecencyScorer.score_all = lambda self, items: [0.0]
    result = run_text(tmp_path, SCORING_HEAD)
    assert result.message == "score_all returned 1 scores for 2 items"


def test_scoring_non_numeric_score(tmp_path: Path, fake_scorers: Any) -> None:
    fake_scorers.RecencyScorer.score_all = lambda self, items: ["x", 0.0]
    result = run_text(
        tmp_path, SCORING_HEAD + '\n[[expected]]\ncontent = "a"\nscore_approx = 0.0\n'
    )
    assert not result.passed
    assert "'a': expected 0.0, got 'x'" in result.message


def test_scorer_exception_is_a_failed_result(tmp_path: Path, fake_scorers: Any) -> None:
    def boom(self: Any, items: Sequence[ContextItem]) -> list[float]:
        raise RuntimeError("boom")

    fake_scorers.RecencyScorer.score_all = boom
    result = run_text(tmp_path, SCORING_HEAD)
    assert not result.passed
    assert result.message == "scoring raised RuntimeError: boom"


# --------------------------------------------------------------------------- construction errors

CONSTRUCTION = """
[test]
name = "boost must be positive"
stage = "scoring"
scorer = "metadata_key"
expect_construction_error = true

[config]
key = "k"
value = "v"
boost = 0.0
"""


def test_expected_construction_error_passes(tmp_path: Path, fake_scorers: Any) -> None:
    def reject(self: Any, *args: Any) -> None:
        raise ScorerConfigError("boost", args[2], "must be > 0")

    fake_scorers.MetadataKeyScorer.__init__ = reject
    result = run_text(tmp_path, CONSTRUCTION)
    assert result.passed
    assert result.message.startswith("construction rejected as expected: ScorerConfigError: boost")


def test_expected_construction_error_that_does_not_happen(
    tmp_path: Path, fake_scorers: Any
) -> None:
    result = run_text(tmp_path, CONSTRUCTION)
    assert not result.passed
    assert result.message.startswith(
        "expected a construction error (expect_construction_error = true), but construction "
        "succeeded"
    )


def test_construction_error_must_be_a_cupel_error(tmp_path: Path, fake_scorers: Any) -> None:
    def reject(self: Any, *args: Any) -> None:
        raise TypeError("wrong")

    fake_scorers.MetadataKeyScorer.__init__ = reject
    result = run_text(tmp_path, CONSTRUCTION)
    assert not result.passed
    assert result.message == "construction raised TypeError: wrong (not a CupelError)"


def test_unexpected_construction_error_fails(tmp_path: Path, fake_scorers: Any) -> None:
    def reject(self: Any, *args: Any) -> None:
        raise ScorerConfigError("boost", 0.0, "must be > 0")

    fake_scorers.MetadataKeyScorer.__init__ = reject
    result = run_text(tmp_path, CONSTRUCTION.replace("expect_construction_error = true", ""))
    assert not result.passed
    assert result.message == "construction failed: ScorerConfigError: boost: must be > 0, got 0.0"


# --------------------------------------------------------------------------- unavailable parts


def test_missing_scorer_class_fails_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pycupel.scorers", types.ModuleType("pycupel.scorers"))
    result = run_text(tmp_path, SCORING_HEAD)
    assert not result.passed
    assert result.message == (
        "scorer 'recency' is not available: pycupel.scorers has no RecencyScorer"
    )


def test_unimportable_pipeline_fails_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_scorers: Any, fake_slicers: Any
) -> None:
    monkeypatch.setitem(sys.modules, "pycupel.pipeline", None)
    result = run_text(tmp_path, PIPELINE)
    assert not result.passed
    assert result.message.startswith(
        "the pipeline is not available: cannot import pycupel.pipeline"
    )


class _BrokenPackageFinder(importlib.abc.MetaPathFinder):
    """Makes importing one module raise, as a half-written component would."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname == self.name:
            raise NameError("name 'half_written' is not defined")


def test_component_failing_at_import_fails_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_scorers: Any, fake_slicers: Any
) -> None:
    monkeypatch.delitem(sys.modules, "pycupel.pipeline", raising=False)
    monkeypatch.setattr(
        sys, "meta_path", [_BrokenPackageFinder("pycupel.pipeline"), *sys.meta_path]
    )
    result = run_text(tmp_path, PIPELINE)
    assert result.message == (
        "the pipeline is not available: cannot import pycupel.pipeline "
        "(NameError: name 'half_written' is not defined)"
    )


def test_loader_bug_is_a_failed_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(document: object, path: Path) -> None:
        raise RuntimeError("loader bug")

    monkeypatch.setattr(run_module, "parse_vector", explode)
    result = run_text(tmp_path, '[test]\nname = "n"\nstage = "placing"')
    assert (result.passed, result.name, result.stage) == (False, "n", "placing")
    assert result.message == "could not load vector: RuntimeError: loader bug"


def test_missing_slicer_fails_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pycupel.slicers", types.ModuleType("pycupel.slicers"))
    result = run_text(tmp_path, slicing("knapsack"))
    assert (
        result.message == "slicer 'knapsack' is not available: pycupel.slicers has no KnapsackSlice"
    )


# --------------------------------------------------------------------------- what gets built


def scorer_vector(scorer: str, config: str) -> str:
    return f"""
[test]
name = "build {scorer}"
stage = "scoring"
scorer = "{scorer}"

{config}

[[items]]
content = "only"
tokens = 1
"""


def test_builds_kind_scorer_with_default_or_custom_weights(
    tmp_path: Path, fake_scorers: Any, calls: Calls
) -> None:
    assert run_text(tmp_path, scorer_vector("kind", "[config]\nuse_default_weights = true")).passed
    assert run_text(tmp_path, scorer_vector("kind", "")).passed
    custom = '[[config.weights]]\nkind = "Document"\nweight = 2.5\n'
    assert run_text(tmp_path, scorer_vector("kind", custom)).passed
    assert run_text(tmp_path, scorer_vector("kind", "[config]\nuse_default_weights = false")).passed
    assert [args for args, _ in calls.named("KindScorer")] == [
        (None,),
        (None,),
        ({"Document": 2.5},),
        ({},),
    ]


def test_builds_tag_scorer(tmp_path: Path, fake_scorers: Any, calls: Calls) -> None:
    config = (
        '[[config.tag_weights]]\ntag = "x"\nweight = 2\n'
        '[[config.tag_weights]]\ntag = "X"\nweight = 1.5\n'
    )
    assert run_text(tmp_path, scorer_vector("tag", config)).passed
    assert calls.named("TagScorer") == [(({"x": 2.0, "X": 1.5},), {})]


def test_builds_nested_composite_and_scaled(
    tmp_path: Path, fake_scorers: Any, calls: Calls
) -> None:
    config = """
[[config.scorers]]
type = "composite"
weight = 2.0

[[config.scorers.children]]
type = "recency"
weight = 1.0

[[config.scorers.children]]
type = "scaled"
weight = 3
inner_scorer = "priority"

[[config.scorers]]
type = "scaled"
weight = 1.0

[config.scorers.inner_scorer]
type = "tag"

[[config.scorers.inner_scorer.tag_weights]]
tag = "t"
weight = 1.0
"""
    assert run_text(tmp_path, scorer_vector("composite", config)).passed
    composites = calls.named("CompositeScorer")
    # Children are built before their parent: the inner composite first, then the outer one.
    assert len(composites) == 2
    inner_entries = composites[0][0][0]
    assert [(type(s).__name__, w) for s, w in inner_entries] == [
        ("RecencyScorer", 1.0),
        ("ScaledScorer", 3.0),
    ]
    assert type(inner_entries[1][0].args[0]).__name__ == "PriorityScorer"
    outer_entries = composites[1][0][0]
    assert [(type(s).__name__, w) for s, w in outer_entries] == [
        ("CompositeScorer", 2.0),
        ("ScaledScorer", 1.0),
    ]
    scaled_tag = outer_entries[1][0].args[0]
    assert type(scaled_tag).__name__ == "TagScorer"
    assert scaled_tag.args == ({"t": 1.0},)


def test_named_inner_scorer_reads_the_same_config(
    tmp_path: Path, fake_scorers: Any, calls: Calls
) -> None:
    config = '[config]\ninner_scorer = "kind"\n[[config.weights]]\nkind = "Memory"\nweight = 3.0\n'
    assert run_text(tmp_path, scorer_vector("scaled", config)).passed
    assert calls.named("KindScorer") == [(({"Memory": 3.0},), {})]


def test_builds_decay_scorer_with_a_fixed_clock(
    tmp_path: Path, fake_scorers: Any, calls: Calls
) -> None:
    exponential = """
[config]
reference_time = 2025-01-01T12:00:00+02:00
null_timestamp_score = 0.25

[config.curve]
type = "exponential"
half_life_secs = 5400
"""
    assert run_text(tmp_path, scorer_vector("decay", exponential)).passed
    ((clock_args, _),) = calls.named("FixedClock")
    assert clock_args[0] == datetime(2025, 1, 1, 10, tzinfo=UTC)
    assert clock_args[0].utcoffset() == timedelta(hours=2)
    assert calls.named("ExponentialDecay") == [((timedelta(minutes=90),), {})]
    ((decay_args, decay_kwargs),) = calls.named("DecayScorer")
    assert decay_kwargs == {"null_timestamp_score": 0.25}
    assert type(decay_args[0]).__name__ == "FixedClock"

    step = """
[config]
reference_time = 2025-01-01T12:00:00Z

[config.curve]
type = "step"

[[config.curve.windows]]
max_age_secs = 60.0
score = 0.9

[[config.curve.windows]]
max_age_secs = 3600.5
score = 0.1
"""
    assert run_text(tmp_path, scorer_vector("decay", step)).passed
    assert calls.named("StepDecay") == [
        (([(timedelta(seconds=60), 0.9), (timedelta(seconds=3600.5), 0.1)],), {})
    ]
    window = (
        step.split("[config.curve]", maxsplit=1)[0]
        + '[config.curve]\ntype = "window"\nmax_age_secs = 10\n'
    )
    assert run_text(tmp_path, scorer_vector("decay", window)).passed
    assert calls.named("WindowDecay") == [((timedelta(seconds=10),), {})]
    # Without null_timestamp_score the library default applies (no keyword passed).
    assert calls.named("DecayScorer")[1][1] == {}


def test_builds_metadata_scorers(tmp_path: Path, fake_scorers: Any, calls: Calls) -> None:
    assert run_text(tmp_path, scorer_vector("metadata_trust", "")).passed
    assert run_text(
        tmp_path, scorer_vector("metadata_trust", "[config]\ndefault_score = 0.3")
    ).passed
    assert calls.named("MetadataTrustScorer") == [((), {}), ((0.3,), {})]
    key = '[config]\nkey = "cupel:priority"\nvalue = "high"\nboost = 2'
    assert run_text(tmp_path, scorer_vector("metadata_key", key)).passed
    assert calls.named("MetadataKeyScorer") == [(("cupel:priority", "high", 2.0), {})]


def test_items_carry_every_field(tmp_path: Path, fake_scorers: Any) -> None:
    captured: list[ContextItem] = []

    def score_all(self: Any, items: Sequence[ContextItem]) -> list[float]:
        captured.extend(items)
        return [0.0] * len(items)

    fake_scorers.ReflexiveScorer.score_all = score_all
    text = """
[test]
name = "all fields"
stage = "scoring"
scorer = "reflexive"

[[items]]
content = "full"
tokens = -3
kind = "ToolOutput"
source = "Rag"
priority = 4
tags = ["a", "B"]
metadata = { "cupel:trust" = "0.5", nested = { x = 1 } }
timestamp = 2024-01-01T05:30:00+05:30
futureRelevanceHint = 1
pinned = true
originalTokens = 99
unknown_future_field = "ignored"

[[items]]
content = "snake"
tokens = 0
future_relevance_hint = 0.5
original_tokens = 7
"""
    assert run_text(tmp_path, text).passed
    full, snake = captured
    assert full.tokens == -3
    assert full.kind.key == "tooloutput"
    assert full.source.key == "rag"
    assert full.priority == 4
    assert full.tags == ("a", "B")
    assert dict(full.metadata) == {"cupel:trust": "0.5", "nested": {"x": 1}}
    assert full.timestamp == datetime(2024, 1, 1, 0, 0, tzinfo=UTC)
    assert full.future_relevance_hint == 1.0
    assert full.pinned is True
    assert full.original_tokens == 99
    assert snake.future_relevance_hint == 0.5
    assert snake.original_tokens == 7


# =========================================================================== slicing

SLICING = """
[test]
name = "fake slicing"
stage = "slicing"
slicer = "{slicer}"

{config}

[budget]
target_tokens = 300

[[scored_items]]
content = "keep"
tokens = 100
score = 0.9
kind = "Document"

[[scored_items]]
content = "drop"
tokens = 100
score = 0.1

{expected}
"""


def slicing(slicer: str = "greedy", config: str = "", expected: str = "") -> str:
    expected = expected or '[expected]\nselected_contents = ["keep"]'
    return SLICING.format(slicer=slicer, config=config, expected=expected)


def test_slicing_set_comparison_passes_regardless_of_order(
    tmp_path: Path, fake_slicers: Any, calls: Calls
) -> None:
    assert run_text(tmp_path, slicing()).passed
    (items, budget), _ = calls.named("slice")[0]
    assert [(s.item.content, s.score) for s in items] == [("keep", 0.9), ("drop", 0.1)]
    assert budget == ContextBudget(max_tokens=300, target_tokens=300)


def test_slicing_budget_uses_max_tokens_when_given(
    tmp_path: Path, fake_slicers: Any, calls: Calls
) -> None:
    text = slicing().replace("target_tokens = 300", "target_tokens = 300\nmax_tokens = 500")
    assert run_text(tmp_path, text).passed
    assert calls.named("slice")[0][0][1] == ContextBudget(max_tokens=500, target_tokens=300)


def test_slicing_difference_names_missing_and_unexpected(tmp_path: Path, fake_slicers: Any) -> None:
    result = run_text(tmp_path, slicing(expected='[expected]\nselected_contents = ["drop"]'))
    assert not result.passed
    assert result.message.splitlines() == [
        "selection differs (compared as a set): expected ['drop'], got ['keep']",
        "  missing: ['drop']",
        "  unexpected: ['keep']",
    ]


def test_slicing_counts_are_compared(tmp_path: Path, fake_slicers: Any) -> None:
    def slice_(self: Any, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        keep = items[0].item
        return SliceResult(
            selected=(keep,),
            shortfalls=(CountRequirementShortfall(keep.kind, 3, 1),),
            cap_exclusions=(CapExclusion(items[1].item, items[1].item.kind, 0, 1),),
        )

    fake_slicers.GreedySlice.slice = slice_
    ok = '[expected]\nselected_contents = ["keep"]\nshortfall_count = 1\ncap_excluded_count = 1'
    assert run_text(tmp_path, slicing(expected=ok)).passed
    wrong = '[expected]\nselected_contents = ["keep"]\nshortfall_count = 0\ncap_excluded_count = 2'
    result = run_text(tmp_path, slicing(expected=wrong))
    lines = result.message.splitlines()
    assert lines[0].startswith("shortfall_count: expected 0, got 1 (")
    assert lines[1] == "cap_excluded_count: expected 2, got 1 (['drop'])"


def test_slicer_returning_foreign_items_or_wrong_type(tmp_path: Path, fake_slicers: Any) -> None:
    fake_slicers.GreedySlice.slice = lambda self, items, budget: SliceResult.of(
        [ContextItem("keep", tokens=100)]
    )
    result = run_text(tmp_path, slicing())
    assert result.message == "slicer returned items that are not among its inputs: ['keep']"
    fake_slicers.GreedySlice.slice = lambda self, items, budget: [items[0].item]
    assert run_text(tmp_path, slicing()).message == "slice() returned list, not a SliceResult"


def test_builds_quota_slicers(tmp_path: Path, fake_slicers: Any, calls: Calls) -> None:
    quota = """
[config]
inner_slicer = "knapsack"
bucket_size = 10

[[config.quotas]]
kind = "Document"
require = 30
cap = 50.5

[[config.quotas]]
kind = "Message"
"""
    assert run_text(tmp_path, slicing("quota", quota)).passed
    assert calls.named("QuotaEntry") == [
        (("Document",), {"require": 30.0, "cap": 50.5}),
        (("Message",), {}),
    ]
    assert calls.named("KnapsackSlice") == [((10,), {})]
    (entries, inner), _ = calls.named("QuotaSlice")[0]
    assert len(entries) == 2
    assert type(inner).__name__ == "KnapsackSlice"

    count = """
[config]
inner_slicer = "greedy"
scarcity_behavior = "Throw"

[[config.entries]]
kind = "tool"
require_count = 2
cap_count = 4

[[config.entries]]
kind = "memory"
cap_count = 1
"""
    assert run_text(tmp_path, slicing("count_quota", count)).passed
    assert calls.named("CountQuotaEntry") == [
        (("tool",), {"require_count": 2, "cap_count": 4}),
        (("memory",), {"cap_count": 1}),
    ]
    (entries, inner), kwargs = calls.named("CountQuotaSlice")[0]
    assert type(inner).__name__ == "GreedySlice"
    assert kwargs == {"scarcity": "THROW-MEMBER"}

    constrained = (
        '[config]\ninner_slicer = "knapsack"\nbucket_size = 1\n'
        '[[config.entries]]\nkind = "tool"\nrequire_count = 1\n'
    )
    assert run_text(tmp_path, slicing("count_constrained_knapsack", constrained)).passed
    (entries, knapsack), kwargs = calls.named("CountConstrainedKnapsackSlice")[0]
    assert knapsack.args == (1,)
    assert kwargs == {}
    assert run_text(tmp_path, slicing("count_constrained_knapsack", "")).passed
    assert calls.named("CountConstrainedKnapsackSlice")[1][0][1] is None


def test_slicer_construction_error_expected(tmp_path: Path, fake_slicers: Any) -> None:
    def reject(self: Any, *args: Any, **kwargs: Any) -> None:
        raise SlicerConfigError("bucket_size", 0, "must be >= 1")

    fake_slicers.KnapsackSlice.__init__ = reject
    text = """
[test]
name = "bucket size zero"
stage = "slicing"
slicer = "knapsack"
expect_construction_error = true

[config]
bucket_size = 0
"""
    result = run_text(tmp_path, text)
    assert result.passed, result.message


# =========================================================================== placing (real placers)

PLACING = """
[test]
name = "placing"
stage = "placing"
placer = "{placer}"

[[items]]
content = "old"
tokens = 1
score = 0.2
timestamp = 2024-01-01T00:00:00Z

[[items]]
content = "new"
tokens = 1
score = 0.9
timestamp = 2024-06-01T00:00:00Z

[[items]]
content = "none"
tokens = 1
score = 0.5

[expected]
ordered_contents = {order}
"""


@pytest.mark.parametrize(
    ("placer", "order"),
    [("chronological", '["old", "new", "none"]'), ("u-shaped", '["new", "old", "none"]')],
)
def test_placing_with_the_real_placers(tmp_path: Path, placer: str, order: str) -> None:
    result = run_text(tmp_path, PLACING.format(placer=placer, order=order))
    assert result.passed, result.message


def test_placing_order_difference_shows_first_position(tmp_path: Path) -> None:
    text = PLACING.format(placer="chronological", order='["old", "none", "new"]')
    result = run_text(tmp_path, text)
    assert result.message.splitlines() == [
        "placement order differs at position 1: expected 'none', got 'new'",
        "  expected: ['old', 'none', 'new']",
        "  actual:   ['old', 'new', 'none']",
    ]


def test_placing_length_difference(tmp_path: Path) -> None:
    text = PLACING.format(placer="chronological", order='["old", "new"]')
    assert "differs at position 2: expected <end>, got 'none'" in run_text(tmp_path, text).message


def test_placer_that_drops_an_item_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Dropping:
        def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
            return [s.item for s in items][:-1]

    monkeypatch.setattr(build_module, "ChronologicalPlacer", Dropping)
    text = PLACING.format(placer="chronological", order='["old", "new"]')
    result = run_text(tmp_path, text)
    assert result.message == (
        "placer did not return a permutation of its input: got 2 items for 3 inputs, "
        "0 foreign or duplicated, 1 missing"
    )


def test_placers_cannot_fail_construction(tmp_path: Path) -> None:
    text = PLACING.format(placer="u-shaped", order="[]").replace(
        'placer = "u-shaped"', 'placer = "u-shaped"\nexpect_construction_error = true'
    )
    result = run_text(tmp_path, text)
    assert not result.passed
    assert "but construction succeeded: UShapedPlacer()" in result.message


# =========================================================================== pipeline

PIPELINE = """
[test]
name = "fake pipeline"
stage = "pipeline"

[budget]
max_tokens = 1000
target_tokens = 500
output_reserve = 100

[config]
slicer = "knapsack"
bucket_size = 50
placer = "u-shaped"
deduplication = false
overflow_strategy = "Truncate"

[[config.scorers]]
type = "recency"
weight = 2.0

[[config.scorers]]
type = "kind"
weight = 1.0

[[items]]
content = "a"
tokens = 10

[[items]]
content = "b"
tokens = 20
pinned = true

[[expected_output]]
content = "b"

[[expected_output]]
content = "a"
"""


@dataclass(frozen=True)
class FakeReason:
    name: str
    item_tokens: int = 0
    available_tokens: int = 0
    deduplicated_against: str = ""


@dataclass(frozen=True)
class FakeEntry:
    item: ContextItem
    score: float
    reason: Any


class FakeInclusion(enum.StrEnum):
    """Stands for the InclusionReason enum: its value is the wire name."""

    PINNED = "Pinned"


@dataclass
class FakeReport:
    included: list[FakeEntry]
    excluded: list[FakeEntry]
    total_candidates: int
    total_tokens_considered: int


@pytest.fixture
def fake_pipeline(
    monkeypatch: pytest.MonkeyPatch, calls: Calls, fake_scorers: Any, fake_slicers: Any
) -> types.ModuleType:
    """A stand-in ``pycupel.pipeline`` whose Pipeline places items in reverse input order."""

    def run(self: Any, items: Sequence[ContextItem], **kwargs: Any) -> Any:
        calls.log.append(("run", (list(items),), kwargs))
        return types.SimpleNamespace(items=tuple(reversed(items)))

    def dry_run(self: Any, items: Sequence[ContextItem], **kwargs: Any) -> Any:
        calls.log.append(("dry_run", (list(items),), kwargs))
        placed = tuple(reversed(items))
        report = FakeReport(
            included=[FakeEntry(placed[0], 1.0, FakeInclusion.PINNED)],
            excluded=[FakeEntry(placed[1], 0.5, FakeReason("BudgetExceeded", 10, 5))],
            total_candidates=2,
            total_tokens_considered=30,
        )
        return types.SimpleNamespace(items=placed, report=report)

    module = types.ModuleType("pycupel.pipeline")
    module.Pipeline = fake_class(calls, "Pipeline", run=run, dry_run=dry_run)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pycupel.pipeline", module)
    return module


def test_pipeline_builds_and_compares_output(
    tmp_path: Path, fake_pipeline: Any, calls: Calls
) -> None:
    result = run_text(tmp_path, PIPELINE)
    assert result.passed, result.message
    ((args, kwargs),) = calls.named("Pipeline")
    assert args == ()
    assert kwargs["budget"] == ContextBudget(max_tokens=1000, target_tokens=500, output_reserve=100)
    assert kwargs["deduplicate"] is False
    assert kwargs["overflow_strategy"] is OverflowStrategy.TRUNCATE
    assert type(kwargs["slicer"]).__name__ == "KnapsackSlice"
    assert kwargs["slicer"].args == (50,)
    assert type(kwargs["placer"]).__name__ == "UShapedPlacer"
    composite_entries = kwargs["scorer"].args[0]
    assert [(type(s).__name__, w) for s, w in composite_entries] == [
        ("RecencyScorer", 2.0),
        ("KindScorer", 1.0),
    ]
    assert len(calls.named("run")) == 1
    assert calls.named("dry_run") == []


def test_pipeline_defaults_are_left_to_the_library(
    tmp_path: Path, fake_pipeline: Any, calls: Calls
) -> None:
    text = PIPELINE.replace("deduplication = false\n", "").replace(
        'overflow_strategy = "Truncate"\n', ""
    )
    assert run_text(tmp_path, text).passed
    kwargs = calls.named("Pipeline")[0][1]
    assert "deduplicate" not in kwargs
    assert "overflow_strategy" not in kwargs


def test_expected_output_as_plain_array(tmp_path: Path, fake_pipeline: Any) -> None:
    head = PIPELINE.split("[[expected_output]]", maxsplit=1)[0]
    assert run_text(tmp_path, 'expected_output = ["b", "a"]\n' + head).passed
    assert not run_text(tmp_path, 'expected_output = ["a", "b"]\n' + head).passed


def test_pipeline_output_difference(tmp_path: Path, fake_pipeline: Any) -> None:
    text = PIPELINE.replace('content = "b"\n\n[[expected_output]]\ncontent = "a"', 'content = "a"')
    result = run_text(tmp_path, text)
    assert result.message.splitlines()[0] == "output differs at position 0: expected 'a', got 'b'"


DIAGNOSTICS = """
[expected.diagnostics.summary]
total_candidates = 2
total_tokens_considered = 30

[[expected.diagnostics.included]]
content = "b"
score_approx = 1.0
inclusion_reason = "Pinned"

[[expected.diagnostics.excluded]]
content = "a"
score_approx = 0.5
exclusion_reason = "BudgetExceeded"
item_tokens = 10
available_tokens = 5
"""


def test_pipeline_diagnostics_match(tmp_path: Path, fake_pipeline: Any, calls: Calls) -> None:
    result = run_text(tmp_path, PIPELINE + DIAGNOSTICS)
    assert result.passed, result.message
    assert len(calls.named("dry_run")) == 1
    assert calls.named("run") == []


def test_pipeline_diagnostics_differences(tmp_path: Path, fake_pipeline: Any) -> None:
    wrong = (
        DIAGNOSTICS.replace("total_tokens_considered = 30", "total_tokens_considered = 31")
        .replace('inclusion_reason = "Pinned"', 'inclusion_reason = "Scored"')
        .replace("available_tokens = 5", "available_tokens = 6")
        .replace("[expected.diagnostics.summary]", "[expected.diagnostics.summary]\nfoo = 1")
    )
    result = run_text(tmp_path, PIPELINE + wrong)
    assert result.message.splitlines() == [
        "diagnostics.summary.foo: the report has no field 'foo'",
        "diagnostics.summary.total_tokens_considered: expected 31, got 30",
        "diagnostics.included[0] ('b'): reason expected 'Scored', got 'Pinned'",
        "diagnostics.excluded[0] ('a'): available_tokens: expected 6, got 5",
    ]


def test_pipeline_diagnostics_wrong_reason_and_missing_field(
    tmp_path: Path, fake_pipeline: Any
) -> None:
    wrong = DIAGNOSTICS.replace("BudgetExceeded", "Deduplicated").replace(
        "score_approx = 0.5", "score_approx = 0.25"
    )
    result = run_text(tmp_path, PIPELINE + wrong)
    assert result.message.splitlines() == [
        "diagnostics.excluded[0] ('a'): score expected 0.25, got 0.5",
        "diagnostics.excluded[0] ('a'): reason expected 'Deduplicated', got 'BudgetExceeded'",
    ]
    extra = DIAGNOSTICS.replace("available_tokens = 5", "available_tokens = 5\ndisplaced_by = 'x'")
    result = run_text(tmp_path, PIPELINE + extra)
    assert result.message == (
        "diagnostics.excluded[0] ('a'): reason BudgetExceeded has no field 'displaced_by'"
    )


def test_pipeline_diagnostics_list_differences(tmp_path: Path, fake_pipeline: Any) -> None:
    extra = (
        DIAGNOSTICS
        + '\n[[expected.diagnostics.included]]\ncontent = "a"\nscore_approx = 0.5\n'
        + 'inclusion_reason = "Scored"\n'
    )
    result = run_text(tmp_path, PIPELINE + extra)
    assert result.message.splitlines()[0] == (
        "diagnostics.included differs at position 1: expected 'a', got <end>"
    )


def test_empty_pipeline_expectation_means_empty_output(tmp_path: Path, fake_pipeline: Any) -> None:
    text = PIPELINE.split("[[items]]", maxsplit=1)[0]
    assert run_text(tmp_path, text).passed


def test_pipeline_runtime_error_is_a_failed_result(tmp_path: Path, fake_pipeline: Any) -> None:
    def run(self: Any, items: Any, **kwargs: Any) -> Any:
        raise ValueError("overflow")

    fake_pipeline.Pipeline.run = run
    assert run_text(tmp_path, PIPELINE).message == "pipeline raised ValueError: overflow"


# =========================================================================== malformed vectors

MALFORMED: list[tuple[str, str, str]] = [
    ("bad-toml", "[test\nname = 1", "malformed vector: invalid TOML: "),
    ("no-test", 'title = "x"', "malformed vector: test: is required (a [test] table)"),
    ("no-name", '[test]\nstage = "placing"', "malformed vector: test.name: is required (a string)"),
    (
        "name-not-string",
        '[test]\nname = 3\nstage = "placing"',
        "malformed vector: test.name: must be a string, got 3 (integer)",
    ),
    (
        "unknown-stage",
        '[test]\nname = "n"\nstage = "sorting"',
        "malformed vector: test.stage: must be one of scoring, slicing, placing, pipeline, "
        "got 'sorting'",
    ),
    (
        "unknown-scorer",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "vibes"',
        "malformed vector: test.scorer: unknown scorer type 'vibes'; expected one of recency, ",
    ),
    (
        "unknown-child-scorer",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "composite"\n'
        '[[config.scorers]]\ntype = "magic"\nweight = 1.0',
        "malformed vector: config.scorers[0].type: unknown scorer type 'magic'",
    ),
    (
        "unknown-slicer",
        '[test]\nname = "n"\nstage = "slicing"\nslicer = "random"',
        "malformed vector: test.slicer: unknown slicer type 'random'; expected one of greedy, ",
    ),
    (
        "unknown-placer",
        '[test]\nname = "n"\nstage = "placing"\nplacer = "sideways"',
        "malformed vector: test.placer: unknown placer type 'sideways'; expected one of "
        "chronological, u-shaped",
    ),
    (
        "unknown-curve",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "decay"\n[config]\n'
        'reference_time = 2025-01-01T00:00:00Z\n[config.curve]\ntype = "linear"',
        "malformed vector: config.curve.type: unknown curve type 'linear'",
    ),
    (
        "tokens-string",
        '[test]\nname = "n"\nstage = "placing"\nplacer = "u-shaped"\n'
        '[[items]]\ncontent = "a"\ntokens = "100"\nscore = 0.5\n[expected]\nordered_contents = []',
        "malformed vector: items[0].tokens: must be an integer, got '100' (string)",
    ),
    (
        "tokens-missing",
        '[test]\nname = "n"\nstage = "placing"\nplacer = "u-shaped"\n'
        '[[items]]\ncontent = "a"\nscore = 0.5\n[expected]\nordered_contents = []',
        "malformed vector: items[0].tokens: is required (an integer)",
    ),
    (
        "score-bool",
        '[test]\nname = "n"\nstage = "placing"\nplacer = "u-shaped"\n'
        '[[items]]\ncontent = "a"\ntokens = 1\nscore = true\n[expected]\nordered_contents = []',
        "malformed vector: items[0].score: must be a number, got True (boolean)",
    ),
    (
        "tags-not-list",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "tag"\n'
        '[[items]]\ncontent = "a"\ntokens = 1\ntags = "x"',
        "malformed vector: items[0].tags: must be an array of strings, got 'x' (string)",
    ),
    (
        "tag-element",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "tag"\n'
        '[[items]]\ncontent = "a"\ntokens = 1\ntags = ["x", 2]',
        "malformed vector: items[0].tags[1]: must be a string, got 2 (integer)",
    ),
    (
        "local-datetime",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "recency"\n'
        '[[items]]\ncontent = "a"\ntokens = 1\ntimestamp = 2024-01-01T00:00:00',
        "malformed vector: items[0].timestamp: must carry a UTC offset",
    ),
    (
        "date-only",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "recency"\n'
        '[[items]]\ncontent = "a"\ntokens = 1\ntimestamp = 2024-01-01',
        "malformed vector: items[0].timestamp: must be an offset date-time (RFC 3339), got a "
        "date without a time",
    ),
    (
        "empty-content",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "recency"\n'
        '[[items]]\ncontent = ""\ntokens = 1',
        "malformed vector: items[0].content: invalid item: content: must be a non-empty string",
    ),
    (
        "items-not-tables",
        'items = [1, 2]\n[test]\nname = "n"\nstage = "scoring"\nscorer = "recency"',
        "malformed vector: items[0]: must be a table, got 1 (integer)",
    ),
    (
        "duplicate-content",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "recency"\n'
        '[[items]]\ncontent = "a"\ntokens = 1\n[[items]]\ncontent = "a"\ntokens = 2',
        "malformed vector: items[1].content: duplicates items[0].content ('a'); scoring vectors "
        "match expected scores by content, so contents must be unique",
    ),
    (
        "expected-unknown-content",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "recency"\n'
        '[[items]]\ncontent = "a"\ntokens = 1\n[[expected]]\ncontent = "b"\nscore_approx = 0.0',
        "malformed vector: expected[0].content: names no item: 'b' is not in [[items]]",
    ),
    (
        "negative-epsilon",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "recency"\n'
        "[tolerance]\nscore_epsilon = -1e-9",
        "malformed vector: tolerance.score_epsilon: must be a finite number > 0, got -1e-09",
    ),
    (
        "hint-twice",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "reflexive"\n'
        '[[items]]\ncontent = "a"\ntokens = 1\nfutureRelevanceHint = 0.5\n'
        "future_relevance_hint = 0.5",
        "malformed vector: items[0].future_relevance_hint: duplicates 'futureRelevanceHint'",
    ),
    (
        "kind-weights-conflict",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "kind"\n[config]\n'
        'use_default_weights = true\n[[config.weights]]\nkind = "Message"\nweight = 1.0',
        "malformed vector: config.use_default_weights: cannot be true when [[weights]] are also "
        "given",
    ),
    (
        "duplicate-tag-weight",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "tag"\n'
        '[[config.tag_weights]]\ntag = "x"\nweight = 1.0\n[[config.tag_weights]]\ntag = "x"\n'
        "weight = 2.0",
        "malformed vector: config.tag_weights[1].tag: 'x' is already configured by tag_weights[0]",
    ),
    (
        "composite-without-children",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "composite"',
        "malformed vector: config.scorers: a composite scorer needs [[scorers]] (or [[children]])",
    ),
    (
        "scaled-without-inner",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "scaled"',
        "malformed vector: config.inner_scorer: is required",
    ),
    (
        "infinite-seconds",
        '[test]\nname = "n"\nstage = "scoring"\nscorer = "decay"\n[config]\n'
        'reference_time = 2025-01-01T00:00:00Z\n[config.curve]\ntype = "window"\n'
        "max_age_secs = inf",
        "malformed vector: config.curve.max_age_secs: must be a finite number of seconds, got inf",
    ),
    (
        "slicing-without-budget",
        '[test]\nname = "n"\nstage = "slicing"\nslicer = "greedy"\n'
        "[expected]\nselected_contents = []",
        "malformed vector: budget: is required (a [budget] table)",
    ),
    (
        "unknown-inner-slicer",
        '[test]\nname = "n"\nstage = "slicing"\nslicer = "quota"\n[config]\ninner_slicer = "quota"',
        "malformed vector: config.inner_slicer: unknown inner slicer 'quota'; expected one of "
        "greedy, knapsack",
    ),
    (
        "bad-scarcity",
        '[test]\nname = "n"\nstage = "slicing"\nslicer = "count_quota"\n[config]\n'
        'scarcity_behavior = "panic"',
        "malformed vector: config.scarcity_behavior: must be one of degrade, throw, got 'panic'",
    ),
    (
        "constrained-with-greedy",
        '[test]\nname = "n"\nstage = "slicing"\nslicer = "count_constrained_knapsack"\n'
        '[config]\ninner_slicer = "greedy"',
        "malformed vector: config.inner_slicer: count_constrained_knapsack always wraps a "
        "knapsack, got 'greedy'",
    ),
    (
        "pipeline-no-scorers",
        '[test]\nname = "n"\nstage = "pipeline"\n[budget]\nmax_tokens = 10\ntarget_tokens = 5\n'
        '[config]\nslicer = "greedy"\nplacer = "chronological"',
        "malformed vector: config.scorers: needs at least one [[config.scorers]] entry",
    ),
    (
        "pipeline-bad-overflow",
        '[test]\nname = "n"\nstage = "pipeline"\n[budget]\nmax_tokens = 10\ntarget_tokens = 5\n'
        '[config]\nslicer = "greedy"\nplacer = "chronological"\noverflow_strategy = "explode"\n'
        '[[config.scorers]]\ntype = "recency"\nweight = 1.0',
        "malformed vector: config.overflow_strategy: must be one of: throw, truncate, proceed, "
        "got 'explode'",
    ),
    (
        "pipeline-missing-weight",
        '[test]\nname = "n"\nstage = "pipeline"\n[budget]\nmax_tokens = 10\ntarget_tokens = 5\n'
        '[config]\nslicer = "greedy"\nplacer = "chronological"\n'
        '[[config.scorers]]\ntype = "recency"',
        "malformed vector: config.scorers[0].weight: is required (a number)",
    ),
    (
        "summary-table-value",
        '[test]\nname = "n"\nstage = "pipeline"\n[budget]\nmax_tokens = 10\ntarget_tokens = 5\n'
        '[config]\nslicer = "greedy"\nplacer = "chronological"\n'
        '[[config.scorers]]\ntype = "recency"\nweight = 1.0\n'
        "[expected.diagnostics.summary]\ntotal_candidates = [1]",
        "malformed vector: expected.diagnostics.summary.total_candidates: must be a string, "
        "number or boolean, got [1] (array)",
    ),
]


@pytest.mark.parametrize(("label", "text", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_vectors_fail_with_a_clear_message(
    tmp_path: Path, label: str, text: str, message: str
) -> None:
    result = run_text(tmp_path, text, name=f"{label}.toml")
    assert not result.passed
    assert result.message.startswith(message), result.message
    assert result.path == str(tmp_path / f"{label}.toml")


def test_malformed_vector_keeps_its_header_when_readable(tmp_path: Path) -> None:
    result = run_text(tmp_path, '[test]\nname = "Named"\nstage = "scoring"\nscorer = "x"')
    assert (result.name, result.stage) == ("Named", "scoring")
    unreadable = run_text(tmp_path, "= nonsense", name="broken.toml")
    assert (unreadable.name, unreadable.stage) == ("broken.toml", "")
    unknown_stage = run_text(tmp_path, '[test]\nname = "N"\nstage = "sorting"')
    assert (unknown_stage.name, unknown_stage.stage) == ("N", "")


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[test]\nname = "caf\xe9"\n')
    result = run_file(path)
    assert result.message.startswith("malformed vector: not valid UTF-8")


def test_load_vector_raises_the_specific_error(tmp_path: Path) -> None:
    path = write(tmp_path, "v.toml", '[test]\nname = "n"\nstage = "nope"')
    with pytest.raises(ConformanceVectorError) as info:
        load_vector(path)
    assert info.value.source == str(path)
    assert info.value.location == "test.stage"


def test_unknown_keys_are_ignored(tmp_path: Path) -> None:
    text = PLACING.format(placer="chronological", order='["old", "new", "none"]')
    text = text.replace("[expected]", "[future_table]\nanything = 1\n\n[expected]\nextra = true")
    assert run_text(tmp_path, text).passed


def test_toml_1_1_syntax_is_accepted(tmp_path: Path) -> None:
    # TOML 1.1 allows omitting seconds, as the public vectors do.
    text = PLACING.format(placer="chronological", order='["old", "new", "none"]').replace(
        "2024-01-01T00:00:00Z", "2024-01-01T00:00Z"
    )
    assert run_text(tmp_path, text).passed


# =========================================================================== discovery


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    ok = PLACING.format(placer="chronological", order='["old", "new", "none"]')
    write(tmp_path, "b/second.toml", ok)
    write(tmp_path, "a/deep/first.toml", ok)
    write(tmp_path, "a/zz.toml", ok)
    write(tmp_path, "a/notes.txt", "not a vector")
    return tmp_path


def test_discovery_is_recursive_sorted_and_deduplicated(tree: Path) -> None:
    found = discover_vectors([tree, tree / "a" / "zz.toml", tree / "a"])
    assert [p.relative_to(tree).as_posix() for p in found] == [
        "a/deep/first.toml",
        "a/zz.toml",
        "b/second.toml",
    ]


def test_discovery_rejects_missing_paths(tmp_path: Path) -> None:
    with pytest.raises(ConformanceVectorError, match="no such file or directory"):
        discover_vectors([tmp_path / "missing"])


def test_run_paths_returns_one_result_per_file(tree: Path) -> None:
    results = run_paths([str(tree)])
    assert [Path(r.path).name for r in results] == ["first.toml", "zz.toml", "second.toml"]
    assert all(r.passed for r in results)
    assert results[0].to_dict() == {
        "path": str(tree / "a" / "deep" / "first.toml"),
        "name": "placing",
        "stage": "placing",
        "passed": True,
        "message": "",
    }
