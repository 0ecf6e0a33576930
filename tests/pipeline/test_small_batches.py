"""A small batch (lists, no numpy) and a large one (arrays) run the same pipeline identically,
with and without a query.

A scorer pycupel does not know is scored through the array path at any size, so wrapping the
benchmark composite in one gives the array path's answer to compare the list path with.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from pycupel import ContextBudget, ContextItem, Pipeline
from pycupel.errors import MissingQueryError
from pycupel.pipeline.score import score
from pycupel.placers import UShapedPlacer
from pycupel.scorers import (
    CompositeScorer,
    FrequencyScorer,
    KindScorer,
    PriorityScorer,
    RankFusionScorer,
    RecencyScorer,
    RelevanceScorer,
    ScaledScorer,
)
from pycupel.scorers.base import SMALL_BATCH, BaseScorer
from pycupel.slicers import GreedySlice, KnapsackSlice


def candidates(size: int, seed: int) -> list[ContextItem]:
    """Items with tied and missing timestamps and priorities, shared tags, zero-token items,
    duplicate contents (for Deduplicate) and pinned ones."""
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return [
        ContextItem(
            f"note {rng.randint(0, size)}",  # some contents repeat
            tokens=rng.choice([0, rng.randint(1, 40)]),
            timestamp=None if rng.random() < 0.2 else start + timedelta(hours=rng.randint(0, 9)),
            priority=None if rng.random() < 0.3 else rng.randint(0, 5),
            tags=rng.sample(["a", "B", "b", "c", "d"], rng.randint(0, 3)),
            kind=rng.choice(["Message", "Document", "Memory", "ToolOutput"]),
            pinned=rng.random() < 0.03,
        )
        for _ in range(size)
    ]


class ArrayPath:
    """The same scores, from a scorer class outside pycupel (so never the list path)."""

    def __init__(self, inner: CompositeScorer) -> None:
        self.inner = inner

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        scores: list[float] = self.inner.score_array(items).tolist()
        return scores


def composite() -> CompositeScorer:
    return CompositeScorer(
        [(RecencyScorer(), 3), (PriorityScorer(), 2), (KindScorer(), 1), (FrequencyScorer(), 1)]
    )


@pytest.mark.parametrize("size", [1, 2, 10, SMALL_BATCH, SMALL_BATCH + 1])
@pytest.mark.parametrize("slicer", [GreedySlice(), KnapsackSlice(bucket_size=5)])
def test_list_and_array_paths_select_and_explain_alike(size: int, slicer: object) -> None:
    items = candidates(size, seed=size)
    total = sum(item.tokens for item in items)
    pinned = sum(item.tokens for item in items if item.pinned)
    window = max(total // 3, pinned)
    budget = ContextBudget(max_tokens=window, target_tokens=window)
    lists = Pipeline(budget=budget, scorer=composite(), slicer=slicer, placer=UShapedPlacer())
    arrays = Pipeline(
        budget=budget, scorer=ArrayPath(composite()), slicer=slicer, placer=UShapedPlacer()
    )
    got, expected = lists.dry_run(items), arrays.dry_run(items)
    assert [id(item) for item in got.items] == [id(item) for item in expected.items]
    assert got.total_tokens == expected.total_tokens
    assert [(id(e.item), e.score, e.reason) for e in got.report.included] == [
        (id(e.item), e.score, e.reason) for e in expected.report.included
    ]
    assert [(id(e.item), e.score, e.reason) for e in got.report.excluded] == [
        (id(e.item), e.score, e.reason) for e in expected.report.excluded
    ]


# --------------------------------------------------------------------------- with a query

WORDS = ("adoption", "agency", "summer", "painting", "dog", "camping", "lake", "music", "the")


def worded(size: int, seed: int) -> list[ContextItem]:
    """The candidates above with contents drawn from a small vocabulary, so that BM25 ranks
    them for a query (some contents still repeat, for Deduplicate)."""
    rng = random.Random(seed)
    return [
        item.replace(content=" ".join(rng.choices(WORDS, k=rng.randint(1, 6))))
        for item in candidates(size, seed)
    ]


class QueryArrayPath:
    """A query-aware scorer outside pycupel: scored through the array path at any size."""

    def __init__(self, inner: BaseScorer) -> None:
        self.inner = inner

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return self.score_all_for(items, None)

    def score_all_for(self, items: Sequence[ContextItem], query: str | None) -> list[float]:
        scores: list[float] = self.inner.score_array_for(items, query).tolist()
        return scores


QUERY_AWARE: dict[str, Callable[[], BaseScorer]] = {
    "relevance": lambda: RelevanceScorer(expansion=0.5),
    "composite": lambda: CompositeScorer(
        [(RelevanceScorer(), 10), (RecencyScorer(), 0.1), (FrequencyScorer(), 1)]
    ),
    "nested": lambda: CompositeScorer(
        [
            (ScaledScorer(RelevanceScorer()), 2),
            (CompositeScorer([(RelevanceScorer(expansion=0.5), 1), (KindScorer(), 1)]), 1),
        ]
    ),
    "fusion": lambda: RankFusionScorer([RelevanceScorer(), RecencyScorer()]),
}


@pytest.mark.parametrize("size", [1, 10, SMALL_BATCH, SMALL_BATCH + 1])
@pytest.mark.parametrize("name", sorted(QUERY_AWARE))
def test_a_query_reaches_query_aware_scorers_on_both_paths_alike(size: int, name: str) -> None:
    items = worded(size, seed=size)
    scoreable = tuple(item for item in items if not item.pinned and item.tokens > 0)
    window = max(sum(item.tokens for item in items) // 3, sum(i.tokens for i in items if i.pinned))
    budget = ContextBudget(max_tokens=window, target_tokens=window)
    runs: dict[str, list[tuple[object, ...]]] = {}
    for query in ("summer adoption agency", "camping by the lake"):
        listed = score(QUERY_AWARE[name](), scoreable, query)
        arrayed = score(QueryArrayPath(QUERY_AWARE[name]()), scoreable, query)
        # Up to SMALL_BATCH the built-in scorer takes the list path, above it the array path.
        assert isinstance(listed, list) == (0 < len(scoreable) <= SMALL_BATCH)
        assert list(listed) == list(arrayed)
        lists = Pipeline(budget=budget, scorer=QUERY_AWARE[name](), placer=UShapedPlacer())
        arrays = Pipeline(
            budget=budget, scorer=QueryArrayPath(QUERY_AWARE[name]()), placer=UShapedPlacer()
        )
        got, expected = lists.dry_run(items, query=query), arrays.dry_run(items, query=query)
        assert [id(item) for item in got.items] == [id(item) for item in expected.items]
        runs[query] = [(id(e.item), e.score, e.reason) for e in got.report.included]
        assert runs[query] == [(id(e.item), e.score, e.reason) for e in expected.report.included]
        assert [(id(e.item), e.score, e.reason) for e in got.report.excluded] == [
            (id(e.item), e.score, e.reason) for e in expected.report.excluded
        ]
    if len(scoreable) >= 10:
        # The query is really used: another query gives other scores.
        first, second = runs.values()
        assert [entry[1] for entry in first] != [entry[1] for entry in second] or [
            entry[0] for entry in first
        ] != [entry[0] for entry in second]


def test_without_a_query_both_paths_refuse_alike() -> None:
    items = tuple(worded(10, seed=3))
    for scorer in (QUERY_AWARE["composite"](), QueryArrayPath(QUERY_AWARE["composite"]())):
        with pytest.raises(MissingQueryError):
            score(scorer, items, None)
