"""Hypothesis strategies for whole pipelines: items, budgets and every component.

Every scorer, slicer, placer and overflow strategy of the package can be drawn, so a property
stated over ``pipelines()`` holds for all their combinations. Item pools are small on purpose:
few distinct contents (duplicates for deduplication), kinds that differ only by case, zero and
negative token counts, pinned items, timestamps in several time zones, NaN hints.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from pycupel.model import ContextBudget, ContextItem, OverflowStrategy
from pycupel.pipeline import Pipeline
from pycupel.placers import ChronologicalPlacer, UShapedPlacer
from pycupel.scorers import (
    CompositeScorer,
    DecayScorer,
    ExponentialDecay,
    FixedClock,
    FrequencyScorer,
    KindScorer,
    MetadataKeyScorer,
    MetadataTrustScorer,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    ScaledScorer,
    StepDecay,
    TagScorer,
    WindowDecay,
)
from pycupel.scorers.base import FunctionScorer, Scorer
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
    ScarcityBehavior,
    Slicer,
)

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
KINDS = ("Message", "message", "MESSAGE", "Document", "ToolOutput", "SystemPrompt", "Memory")
TAGS = ("billing", "urgent", "Billing", "ci")
CONTENTS = (*"abcdefghij", "a ", "A", "longer content", "ünïcode")
ZONES = (UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-11)))

timestamps = st.one_of(
    st.none(),
    st.builds(
        lambda minutes, zone: (NOW - timedelta(minutes=minutes)).astimezone(zone),
        st.integers(-60, 60 * 24 * 30),
        st.sampled_from(ZONES),
    ),
)
hints = st.one_of(
    st.none(),
    st.floats(-0.5, 1.5),
    st.sampled_from([math.nan, math.inf, -math.inf]),
)
metadata = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "cupel:trust": st.sampled_from(["0.9", "0.1", "NaN", "high", "2"]),
            "team": st.sampled_from(["core", "web"]),
            "nested": st.lists(st.integers(0, 3), max_size=3),
        },
    ),
)


@st.composite
def items(draw: st.DrawFn, *, min_tokens: int = -3, max_tokens: int = 60) -> ContextItem:
    return ContextItem(
        draw(st.sampled_from(CONTENTS)),
        tokens=draw(st.one_of(st.just(0), st.integers(min_tokens, max_tokens))),
        kind=draw(st.sampled_from(KINDS)),
        source=draw(st.sampled_from(["Chat", "chat", "Rag", "Tool"])),
        priority=draw(st.one_of(st.none(), st.integers(-2, 9))),
        tags=draw(st.lists(st.sampled_from(TAGS), max_size=3)),
        metadata=draw(metadata),
        timestamp=draw(timestamps),
        future_relevance_hint=draw(hints),
        pinned=draw(st.sampled_from([False] * 6 + [True])),
    )


item_lists = st.lists(items(), max_size=14)


@st.composite
def budgets(draw: st.DrawFn, *, max_max: int = 300) -> ContextBudget:
    max_tokens = draw(st.integers(0, max_max))
    target = draw(st.integers(0, max_tokens))
    reserve = draw(st.one_of(st.just(0), st.integers(0, max_tokens)))
    slots = draw(
        st.one_of(
            st.none(),
            st.dictionaries(st.sampled_from(["Document", "Memory"]), st.integers(0, 30)),
        )
    )
    margin = draw(st.one_of(st.just(0.0), st.floats(0.0, 50.0)))
    return ContextBudget(
        max_tokens=max_tokens,
        target_tokens=target,
        output_reserve=reserve,
        reserved_slots=slots,
        estimation_safety_margin_percent=margin,
    )


def _by_length(item: ContextItem) -> float:
    return len(item.content) / 20.0


leaf_scorers: st.SearchStrategy[Scorer] = st.one_of(
    st.just(RecencyScorer()),
    st.just(PriorityScorer()),
    st.just(KindScorer()),
    st.builds(KindScorer, st.dictionaries(st.sampled_from(KINDS[3:]), st.floats(0.0, 1.0))),
    st.builds(TagScorer, st.dictionaries(st.sampled_from(TAGS), st.floats(0.0, 2.0))),
    st.just(FrequencyScorer()),
    st.just(ReflexiveScorer()),
    st.builds(
        DecayScorer,
        st.just(FixedClock(NOW)),
        st.sampled_from(
            [
                ExponentialDecay(timedelta(hours=6)),
                StepDecay([(timedelta(hours=1), 1.0), (timedelta(days=2), 0.4)]),
                WindowDecay(timedelta(days=1)),
            ]
        ),
        null_timestamp_score=st.floats(0.0, 1.0),
    ),
    st.builds(MetadataTrustScorer, default_score=st.floats(0.0, 1.0)),
    st.builds(
        MetadataKeyScorer,
        st.just("team"),
        st.sampled_from(["core", "web"]),
        st.floats(0.1, 3.0),
    ),
    st.just(FunctionScorer(_by_length, name="by_length")),
)


def _composite(children: st.SearchStrategy[Scorer]) -> st.SearchStrategy[Scorer]:
    return st.one_of(
        st.builds(
            CompositeScorer,
            st.lists(st.tuples(children, st.floats(0.1, 5.0)), min_size=1, max_size=3),
        ),
        st.builds(ScaledScorer, children),
    )


scorers: st.SearchStrategy[Scorer] = st.recursive(leaf_scorers, _composite, max_leaves=4)

quota_kinds = st.sampled_from(["Message", "Document", "ToolOutput", "memory"])


@st.composite
def quota_entries(draw: st.DrawFn) -> list[QuotaEntry]:
    kinds = draw(st.lists(quota_kinds, unique_by=str.lower, max_size=3))
    entries = []
    room = 100.0
    for kind in kinds:
        require = draw(st.floats(0.0, min(room, 60.0)))
        room -= require
        cap = draw(st.floats(require, 100.0))
        entries.append(QuotaEntry(kind, require, cap))
    return entries


@st.composite
def count_entries(draw: st.DrawFn) -> list[CountQuotaEntry]:
    kinds = draw(st.lists(quota_kinds, unique_by=str.lower, max_size=3))
    entries = []
    for kind in kinds:
        require = draw(st.integers(0, 3))
        cap = draw(st.one_of(st.none(), st.integers(max(require, 1), 5)))
        entries.append(CountQuotaEntry(kind, require, cap))
    return entries


count_inner_slicers: st.SearchStrategy[Slicer] = st.one_of(
    st.just(GreedySlice()),
    st.builds(PackerSlice, st.one_of(st.none(), st.integers(1, 4))),
)
simple_slicers: st.SearchStrategy[Slicer] = st.one_of(
    count_inner_slicers,
    st.builds(KnapsackSlice, st.sampled_from([1, 7, 100])),
)
scarcities = st.sampled_from([ScarcityBehavior.DEGRADE, ScarcityBehavior.THROW])

slicers: st.SearchStrategy[Slicer] = st.one_of(
    simple_slicers,
    st.builds(QuotaSlice, quota_entries(), simple_slicers),
    st.builds(CountQuotaSlice, count_entries(), count_inner_slicers, scarcities),
    st.builds(
        CountConstrainedKnapsackSlice,
        count_entries(),
        st.builds(KnapsackSlice, st.sampled_from([1, 10])),
        scarcities,
    ),
    st.builds(
        OptimalSlice,
        quotas=quota_entries(),
        count_quotas=count_entries(),
        scarcity=scarcities,
    ),
)
placers = st.sampled_from([ChronologicalPlacer(), UShapedPlacer()])
overflow_strategies = st.sampled_from(list(OverflowStrategy))


@dataclass(frozen=True)
class Case:
    pipeline: Pipeline
    items: list[ContextItem]


pipelines = st.builds(
    Pipeline,
    budget=budgets(),
    scorer=scorers,
    slicer=slicers,
    placer=placers,
    deduplicate=st.booleans(),
    overflow_strategy=overflow_strategies,
)


def snapshot(item: ContextItem) -> tuple[Any, ...]:
    """Every field of ``item`` (and of its tags and metadata) as a comparable value."""
    return (
        item.content,
        item.tokens,
        item.kind.value,
        item.source.value,
        item.priority,
        id(item.tags),
        item.tags,
        id(item.metadata),
        copy.deepcopy(dict(item.metadata)),
        item.timestamp,
        item.timestamp_micros,
        repr(item.future_relevance_hint),
        item.pinned,
        item.original_tokens,
    )


def report_without_durations(data: dict[str, Any]) -> dict[str, Any]:
    """The report's JSON dict with the wall-clock measurements (event durations, the solver's
    seconds) zeroed."""
    data = copy.deepcopy(data)
    for event in data["events"]:
        event["duration_ms"] = 0.0
    if "solver" in data:
        data["solver"]["seconds"] = 0.0
    return data
