"""ReflexiveScorer: every row of the chapter's edge-case table, batch and per item."""

from __future__ import annotations

import math

import pytest

from pycupel.model import ContextItem
from pycupel.scorers import ReflexiveScorer


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        (None, 0.0),
        (math.nan, 0.0),
        (math.inf, 0.0),
        (-math.inf, 0.0),
        (0.5, 0.5),
        (-0.3, 0.0),
        (1.7, 1.0),
        (0.0, 0.0),
        (1.0, 1.0),
        (5e-324, 5e-324),
        (1, 1.0),
    ],
)
def test_hint_passthrough(hint: float | None, expected: float) -> None:
    item = ContextItem("x", tokens=1, future_relevance_hint=hint)
    scorer = ReflexiveScorer()
    assert scorer.score_all([item]) == [expected]
    assert scorer.score_item(item) == expected
    assert scorer.score(item, []) == expected


def test_batch_preserves_order() -> None:
    hints = [0.9, None, 0.1, math.nan, 2.0]
    items = [ContextItem("x", tokens=1, future_relevance_hint=h) for h in hints]
    assert ReflexiveScorer().score_all(items) == [0.9, 0.0, 0.1, 0.0, 1.0]


def test_repr() -> None:
    assert repr(ReflexiveScorer()) == "ReflexiveScorer()"
