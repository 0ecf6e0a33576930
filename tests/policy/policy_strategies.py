"""Hypothesis strategies producing valid policies (every type, every option) and items."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from pycupel.model import ContextItem
from pycupel.policy import (
    CountQuotaSpec,
    CurveSpec,
    Policy,
    QuotaSpec,
    ScorerSpec,
    SlicerSpec,
    StepWindowSpec,
)

KINDS = ("Message", "Document", "ToolOutput", "Memory", "SystemPrompt", "Note")

positive_weights = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)
unit_scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
durations = st.integers(min_value=1, max_value=10**12).map(lambda us: timedelta(microseconds=us))
reference_times = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)


@st.composite
def kind_weights(draw: st.DrawFn) -> dict[str, float]:
    names = draw(st.lists(st.sampled_from(KINDS), unique=True, max_size=5))
    return {name: draw(st.floats(min_value=0.0, max_value=5.0)) for name in names}


@st.composite
def curves(draw: st.DrawFn) -> CurveSpec:
    kind = draw(st.sampled_from(["exponential", "step", "window"]))
    if kind == "exponential":
        return CurveSpec.of("exponential", half_life=draw(durations))
    if kind == "window":
        return CurveSpec.of("window", max_age=draw(durations))
    ages = sorted(draw(st.lists(durations, min_size=1, max_size=4, unique=True)))
    windows = [StepWindowSpec(age, draw(unit_scores)) for age in ages]
    return CurveSpec.of("step", windows=windows)


@st.composite
def decay_options(draw: st.DrawFn) -> dict[str, Any]:
    options: dict[str, Any] = {"curve": draw(curves())}
    if draw(st.booleans()):
        options["null_timestamp_score"] = draw(unit_scores)
    clock = draw(st.sampled_from(["none", "system", "fixed"]))
    if clock == "system":
        options["clock"] = "system"
    elif clock == "fixed":
        options["reference_time"] = draw(reference_times)
    return options


def leaf_scorers(weight: st.SearchStrategy[float]) -> st.SearchStrategy[ScorerSpec]:
    simple = st.sampled_from(["recency", "priority", "frequency", "reflexive"])
    return st.one_of(
        st.builds(ScorerSpec, simple, weight),
        st.builds(lambda w: ScorerSpec("kind", w), weight),
        st.builds(lambda w, ws: ScorerSpec.of("kind", w, weights=ws), weight, kind_weights()),
        st.builds(
            lambda w, ws: ScorerSpec.of("tag", w, weights=ws),
            weight,
            st.dictionaries(st.text(max_size=8), st.floats(0.0, 5.0), max_size=4),
        ),
        st.builds(lambda w, o: ScorerSpec("decay", w, o), weight, decay_options()),
        st.builds(
            lambda w, d: ScorerSpec.of("metadata_trust", w, default_score=d), weight, unit_scores
        ),
        st.builds(
            lambda w, k, v, b: ScorerSpec.of("metadata_key", w, key=k, value=v, boost=b),
            weight,
            st.text(min_size=1, max_size=10).filter(str.strip),
            st.text(max_size=10),
            st.floats(min_value=1e-3, max_value=10.0),
        ),
    )


def scorer_specs(
    weight: st.SearchStrategy[float] = positive_weights,
) -> st.SearchStrategy[ScorerSpec]:
    """Any scorer spec, nesting scaled/composite up to a few levels."""

    def extend(children: st.SearchStrategy[ScorerSpec]) -> st.SearchStrategy[ScorerSpec]:
        unweighted = children.map(lambda spec: ScorerSpec(spec.type, 1.0, spec.options))
        return st.one_of(
            st.builds(lambda w, inner: ScorerSpec.of("scaled", w, inner=inner), weight, unweighted),
            st.builds(
                lambda w, kids: ScorerSpec.of("composite", w, scorers=kids),
                weight,
                st.lists(children, min_size=1, max_size=3),
            ),
        )

    return st.recursive(leaf_scorers(weight), extend, max_leaves=6)


@st.composite
def quota_entries(draw: st.DrawFn) -> list[QuotaSpec]:
    kinds = draw(st.lists(st.sampled_from(KINDS), unique=True, max_size=4))
    budget = 100.0
    entries = []
    for kind in kinds:
        require = draw(st.floats(min_value=0.0, max_value=budget / 2))
        budget -= require
        cap = draw(st.floats(min_value=require, max_value=100.0))
        entries.append(QuotaSpec(kind, require, cap))
    return entries


@st.composite
def count_entries(draw: st.DrawFn) -> list[CountQuotaSpec]:
    kinds = draw(st.lists(st.sampled_from(KINDS), unique=True, max_size=4))
    entries = []
    for kind in kinds:
        require = draw(st.integers(min_value=0, max_value=3))
        cap = draw(st.one_of(st.none(), st.integers(min_value=max(require, 1), max_value=6)))
        entries.append(CountQuotaSpec(kind, require, cap))
    return entries


@st.composite
def slicer_specs(draw: st.DrawFn) -> SlicerSpec:
    kind = draw(
        st.sampled_from(
            ["greedy", "knapsack", "quota", "count_quota", "count_constrained_knapsack", "packer"]
        )
    )
    bucket = st.integers(min_value=1, max_value=200)
    simple_inner = st.sampled_from(
        [SlicerSpec("greedy"), SlicerSpec.of("knapsack", bucket_size=50), SlicerSpec("packer")]
    )
    scarcity = st.sampled_from(["degrade", "throw"])
    if kind == "greedy":
        return SlicerSpec("greedy")
    if kind == "knapsack":
        options: dict[str, Any] = {"bucket_size": draw(bucket)}
        if draw(st.booleans()):
            options["max_table_bytes"] = draw(st.integers(min_value=10**6, max_value=10**9))
        return SlicerSpec("knapsack", options)
    if kind == "quota":
        options = {"quotas": draw(quota_entries())}
        if draw(st.booleans()):
            options["inner"] = draw(simple_inner)
        return SlicerSpec("quota", options)
    if kind == "count_quota":
        options = {"entries": draw(count_entries()), "scarcity": draw(scarcity)}
        if draw(st.booleans()):
            options["inner"] = draw(st.sampled_from([SlicerSpec("greedy"), SlicerSpec("packer")]))
        return SlicerSpec("count_quota", options)
    if kind == "count_constrained_knapsack":
        return SlicerSpec.of(
            "count_constrained_knapsack",
            entries=draw(count_entries()),
            bucket_size=draw(bucket),
            scarcity=draw(scarcity),
        )
    skips = draw(st.one_of(st.integers(min_value=1, max_value=10), st.just("unlimited")))
    return SlicerSpec.of("packer", max_consecutive_skips=skips)


@st.composite
def policies(draw: st.DrawFn) -> Policy:
    """Any valid policy."""
    return Policy(
        name=draw(st.text(min_size=1, max_size=20).filter(str.strip)),
        description=draw(st.text(max_size=30)),
        scorers=draw(st.lists(scorer_specs(), min_size=1, max_size=4)),
        slicer=draw(slicer_specs()),
        placer=draw(st.sampled_from(["chronological", "u-shaped"])),
        deduplicate=draw(st.booleans()),
        overflow_strategy=draw(st.sampled_from(["throw", "truncate", "proceed"])),  # type: ignore[arg-type]
    )


START = datetime(2025, 1, 1, tzinfo=UTC)


@st.composite
def context_items(draw: st.DrawFn, *, max_size: int = 25) -> list[ContextItem]:
    """Candidates with every field a scorer may read (no pinned items)."""
    count = draw(st.integers(min_value=0, max_value=max_size))
    items = []
    for index in range(count):
        trust = draw(st.one_of(st.none(), st.floats(0.0, 1.0).map(str)))
        items.append(
            ContextItem(
                f"item-{index}-{draw(st.integers(0, 3))}",
                tokens=draw(st.integers(min_value=0, max_value=400)),
                kind=draw(st.sampled_from(KINDS)),
                priority=draw(st.one_of(st.none(), st.integers(-5, 5))),
                tags=draw(st.lists(st.sampled_from(["a", "b", "urgent"]), max_size=2)),
                timestamp=draw(
                    st.one_of(
                        st.none(),
                        st.integers(0, 10**6).map(lambda s: START + timedelta(seconds=s)),
                    )
                ),
                future_relevance_hint=draw(st.one_of(st.none(), unit_scores)),
                metadata={} if trust is None else {"cupel:trust": trust},
            )
        )
    return items
