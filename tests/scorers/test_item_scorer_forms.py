"""Absolute scorers: every scoring form (per item, per-item spec form, list, array, pickled
copy) gives the same score, on small batches and past SMALL_BATCH."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from pycupel.model import ContextItem
from pycupel.scorers import (
    KindScorer,
    MetadataKeyScorer,
    MetadataTrustScorer,
    ReflexiveScorer,
    TagScorer,
)
from pycupel.scorers.base import SMALL_BATCH, ItemScorer

KINDS = ["SystemPrompt", "memory", "ToolOutput", "Document", "MESSAGE", "Custom"]
TAGS = [(), ("a",), ("A", "b"), ("b", "b", "zz"), ("c",), ("a", "B", "c", "x")]
HINTS = [None, -0.5, 0.0, 0.25, 1.0, 3.0]
METADATA = [
    {},
    {"cupel:trust": "0.75"},
    {"cupel:trust": 0.1, "source": "web"},
    {"source": "docs"},
    {"cupel:trust": "2.5", "source": "Docs"},
    {"cupel:trust": "nope"},
]


def varied_items(count: int) -> list[ContextItem]:
    n = len(KINDS)
    return [
        ContextItem(
            f"item {i}",
            tokens=1,
            kind=KINDS[i % n],
            tags=TAGS[(i * 5) % n],
            future_relevance_hint=HINTS[(i * 7) % n],
            metadata=METADATA[(i * 11) % n],
        )
        for i in range(count)
    ]


SCORERS: list[ItemScorer] = [
    KindScorer(),
    KindScorer({"custom": 2.5, "Memory": 0.0}),
    TagScorer({"a": 1.0, "B": 3.0, "c": 0.5}),
    TagScorer({"a": 1.0, "B": 3.0, "c": 0.5}, case_sensitive=False),
    TagScorer({"a": 0.0}),
    ReflexiveScorer(),
    MetadataTrustScorer(),
    MetadataTrustScorer(default_score=0.2),
    MetadataKeyScorer("source", "docs", 1.5),
]


@pytest.mark.parametrize("scorer", SCORERS, ids=repr)
@pytest.mark.parametrize("count", [12, SMALL_BATCH + 12])
def test_every_form_gives_the_same_scores(scorer: ItemScorer, count: int) -> None:
    items = varied_items(count)
    expected = [scorer.score_item(item) for item in items]
    assert len(set(expected[:12])) >= 2 or repr(scorer) == "TagScorer({'a': 0.0})"
    assert scorer.score_all(items) == expected
    array = scorer.score_array(items)
    assert array.dtype == np.float64
    assert array.tolist() == expected
    assert [scorer.score(item, items) for item in items[:12]] == expected[:12]
    copy = pickle.loads(pickle.dumps(scorer))
    assert type(copy) is type(scorer)
    assert repr(copy) == repr(scorer)
    assert copy.score_all(items) == expected


def test_tag_scores_sum_matched_weights_over_the_total() -> None:
    scorer = TagScorer({"a": 1.0, "B": 3.0})
    insensitive = TagScorer({"a": 1.0, "B": 3.0}, case_sensitive=False)
    cases: list[tuple[tuple[str, ...], float, float]] = [
        ((), 0.0, 0.0),
        (("a",), 0.25, 0.25),
        (("A",), 0.0, 0.25),
        (("b",), 0.0, 0.75),
        (("a", "B"), 1.0, 1.0),
        (("a", "a", "B"), 1.0, 1.0),  # a repeated tag counts twice, capped at 1.0
        (("a", "a"), 0.5, 0.5),
        (("zz",), 0.0, 0.0),
    ]
    for tags, sensitive_score, insensitive_score in cases:
        item = ContextItem("x", tokens=1, tags=tags)
        assert scorer.score_item(item) == sensitive_score, tags
        assert insensitive.score_item(item) == insensitive_score, tags
    assert TagScorer({"a": 0.0}).score_item(ContextItem("x", tokens=1, tags=("a",))) == 0.0
