"""RecencyScorer and PriorityScorer: every edge-case row of their chapters, plus ties,
denominators, identity, instants across time zones and priorities beyond int64."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from pycupel.model import ContextItem
from pycupel.scorers import PriorityScorer, RecencyScorer
from pycupel.scorers.base import SMALL_BATCH

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def at(hours: float | None, content: str = "x") -> ContextItem:
    stamp = None if hours is None else T0 + timedelta(hours=hours)
    return ContextItem(content, tokens=1, timestamp=stamp)


def prio(value: int | None, content: str = "x") -> ContextItem:
    return ContextItem(content, tokens=1, priority=value)


# --------------------------------------------------------------------------- recency


def test_recency_null_timestamp_scores_zero() -> None:
    items = [at(None), at(1), at(2)]
    assert RecencyScorer().score_all(items) == [0.0, 0.0, 1.0]


def test_recency_all_null_all_zero() -> None:
    assert RecencyScorer().score_all([at(None), at(None), at(None)]) == [0.0, 0.0, 0.0]


def test_recency_single_timestamped_item_scores_one() -> None:
    assert RecencyScorer().score_all([at(None), at(5), at(None)]) == [0.0, 1.0, 0.0]
    assert RecencyScorer().score_all([at(5)]) == [1.0]


def test_recency_all_same_timestamp_all_zero() -> None:
    assert RecencyScorer().score_all([at(3), at(3), at(3)]) == [0.0, 0.0, 0.0]


def test_recency_distinct_timestamps_evenly_spaced() -> None:
    items = [at(30), at(10), at(20), at(0), at(40)]
    assert RecencyScorer().score_all(items) == [0.75, 0.25, 0.5, 0.0, 1.0]


def test_recency_ties_share_the_lower_rank() -> None:
    # ranks: 0, 1, 1, 3 over 4 timestamped items -> denominator 3
    items = [at(0), at(1), at(1), at(2)]
    assert RecencyScorer().score_all(items) == [0.0, 1 / 3, 1 / 3, 1.0]


def test_recency_denominator_counts_timestamped_items_only() -> None:
    items = [at(None), at(0), at(None), at(1), at(2), at(None)]
    assert RecencyScorer().score_all(items) == [0.0, 0.0, 0.0, 0.5, 1.0, 0.0]


def test_recency_compares_instants_not_wall_clock() -> None:
    utc_noon = ContextItem("a", tokens=1, timestamp=datetime(2024, 1, 1, 12, tzinfo=UTC))
    same_instant = ContextItem(
        "b",
        tokens=1,
        timestamp=datetime(2024, 1, 1, 14, tzinfo=timezone(timedelta(hours=2))),
    )
    earlier_but_larger_wall_clock = ContextItem(
        "c",
        tokens=1,
        timestamp=datetime(2024, 1, 1, 13, tzinfo=timezone(timedelta(hours=5))),
    )
    scores = RecencyScorer().score_all([utc_noon, same_instant, earlier_but_larger_wall_clock])
    assert scores == [0.5, 0.5, 0.0]


def test_recency_microsecond_resolution() -> None:
    a = ContextItem("a", tokens=1, timestamp=T0)
    b = ContextItem("b", tokens=1, timestamp=T0 + timedelta(microseconds=1))
    assert RecencyScorer().score_all([b, a]) == [1.0, 0.0]


def test_recency_repeated_object_counts_each_occurrence() -> None:
    a, b = at(0, "a"), at(1, "b")
    # 3 timestamped entries: a, a, b -> a has rank 0, b has rank 2
    assert RecencyScorer().score_all([a, a, b]) == [0.0, 0.0, 1.0]


def test_recency_empty_list() -> None:
    result = RecencyScorer().score_array([])
    assert result.shape == (0,)
    assert result.dtype.name == "float64"


def test_recency_per_item_score_for_an_item_outside_the_list() -> None:
    items = [at(0), at(2)]
    scorer = RecencyScorer()
    # Spec loop over allItems only: rank of 1h among [0h, 2h] = 1, count 2 -> 1.0
    assert scorer.score(at(1), items) == 1.0
    assert scorer.score(at(-1), items) == 0.0
    # A lone (or no) timestamped peer: count <= 1 -> 1.0
    assert scorer.score(at(5), [at(None)]) == 1.0
    assert scorer.score(at(None), items) == 0.0
    assert scorer.score(items[1], items) == 1.0


# --------------------------------------------------------------------------- priority


def test_priority_null_scores_zero() -> None:
    assert PriorityScorer().score_all([prio(None), prio(1), prio(9)]) == [0.0, 0.0, 1.0]


def test_priority_all_null_all_zero() -> None:
    assert PriorityScorer().score_all([prio(None), prio(None)]) == [0.0, 0.0]


def test_priority_single_prioritised_item_scores_one() -> None:
    assert PriorityScorer().score_all([prio(None), prio(-7)]) == [0.0, 1.0]


def test_priority_all_same_all_zero() -> None:
    assert PriorityScorer().score_all([prio(4), prio(4), prio(4)]) == [0.0, 0.0, 0.0]


def test_priority_higher_is_better_and_ties_share_rank() -> None:
    items = [prio(1), prio(10), prio(10), prio(5), prio(None)]
    # prioritised: 1, 10, 10, 5 -> ranks 0, 2, 2, 1 over denominator 3
    assert PriorityScorer().score_all(items) == [0.0, 2 / 3, 2 / 3, 1 / 3, 0.0]


def test_priority_negative_values() -> None:
    assert PriorityScorer().score_all([prio(-5), prio(0), prio(-10)]) == [0.5, 1.0, 0.0]


@pytest.mark.parametrize("huge", [2**63, -(2**63) - 1, 10**30])
def test_priority_beyond_int64_ranked_exactly(huge: int) -> None:
    items = [prio(huge), prio(huge - 1), prio(0), prio(huge + 1)]
    expected = sorted([huge, huge - 1, 0, huge + 1])
    scores = PriorityScorer().score_all(items)
    assert scores == [expected.index(p.priority) / 3 for p in items]  # type: ignore[arg-type]


def test_priority_int64_extremes_use_the_fast_path_correctly() -> None:
    low, high = -(2**63), 2**63 - 1
    assert PriorityScorer().score_all([prio(high), prio(low), prio(high - 1)]) == [1.0, 0.0, 0.5]


def test_priority_per_item_score_for_an_item_outside_the_list() -> None:
    items = [prio(1), prio(3), prio(None)]
    scorer = PriorityScorer()
    assert scorer.score(prio(2), items) == 1.0
    assert scorer.score(prio(0), items) == 0.0
    assert scorer.score(prio(None), items) == 0.0
    assert scorer.score(prio(5), []) == 1.0


# --------------------------------------------------------------------------- batch paths


def _large_batch_items() -> tuple[list[ContextItem], list[ContextItem]]:
    # Past SMALL_BATCH the scorers take the numpy path; keys repeat (ties) and some are missing.
    size = SMALL_BATCH + 40
    by_time = [at(None if i % 7 == 0 else (i * 37) % 101) for i in range(size)]
    by_priority = [prio(None if i % 5 == 0 else (i * 13) % 29 - 10) for i in range(size)]
    return by_time, by_priority


@pytest.mark.parametrize("scorer", [RecencyScorer(), PriorityScorer()])
def test_large_batches_match_the_per_item_form(scorer: RecencyScorer | PriorityScorer) -> None:
    by_time, by_priority = _large_batch_items()
    items = by_time if isinstance(scorer, RecencyScorer) else by_priority
    expected = [scorer.score(item, items) for item in items]
    assert 0.0 < sum(expected) < len(items)  # a real spread, not all equal
    assert scorer.score_all(items) == expected
    assert scorer.score_array(items).tolist() == expected
    small = items[:30]
    assert scorer.score_array(small).tolist() == [scorer.score(i, small) for i in small]


def test_rank_scorer_reprs() -> None:
    assert repr(RecencyScorer()) == "RecencyScorer()"
    assert repr(PriorityScorer()) == "PriorityScorer()"
