"""A small batch (lists, no numpy) and a large one (arrays) run the same pipeline identically.

A scorer pycupel does not know is scored through the array path at any size, so wrapping the
benchmark composite in one gives the array path's answer to compare the list path with.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from pycupel import ContextBudget, ContextItem, Pipeline
from pycupel.placers import UShapedPlacer
from pycupel.scorers import (
    CompositeScorer,
    FrequencyScorer,
    KindScorer,
    PriorityScorer,
    RecencyScorer,
)
from pycupel.scorers.base import SMALL_BATCH
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
