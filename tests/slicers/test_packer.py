"""PackerSlice and pack(): the seed's skip-and-continue walk with an early stop."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.errors import SliceInputError, SlicerConfigError
from pycupel.model import ScoredItem
from pycupel.slicers import PackerSlice, PackingStats, PackResult, Slicer, pack

from .helpers import budget, scored, selected
from .strategies import scored_lists


def _seed_walk(
    sizes: list[int], budget_tokens: int, limit: int | None
) -> tuple[list[int], int, bool, bool]:
    """The seed's loop, transcribed: (taken positions, skipped_count, budget_reached, stopped)."""
    if budget_tokens <= 0 or not sizes:
        return [], len(sizes), False, False
    packed: list[int] = []
    used = 0
    consecutive = 0
    skipped = 0
    reached = False
    for position, size in enumerate(sizes):
        if used + size <= budget_tokens:
            packed.append(position)
            used += size
            consecutive = 0
        else:
            skipped += 1
            consecutive += 1
            reached = True
            if limit is not None and consecutive >= limit:
                skipped += len(sizes) - len(packed) - skipped
                return packed, skipped, reached, position < len(sizes) - 1
    return packed, skipped, reached, False


class Counter:
    """A token counter that records which records it was asked about."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, record: tuple[str, int, float]) -> int:
        self.seen.append(record[0])
        return record[1]


def _score(record: tuple[str, int, float]) -> float:
    return record[2]


# --------------------------------------------------------------------------- pack()


def test_skip_and_continue_takes_smaller_items_after_a_miss() -> None:
    records = [("a", 60, 0.9), ("huge", 500, 0.8), ("b", 30, 0.7), ("c", 20, 0.1)]
    result = pack(records, 100, Counter(), score=_score)
    assert isinstance(result, PackResult)
    assert [r[0] for r in result.selected] == ["a", "b"]
    assert result.stats == PackingStats(
        selected_count=2,
        total_tokens=90,
        total_score=0.9 + 0.7,
        skipped_count=2,
        budget_reached=True,
        stopped_early=False,
    )


def test_three_consecutive_misses_stop_the_walk_and_save_counting() -> None:
    records = [("a", 90, 0.9), ("x1", 50, 0.8), ("x2", 50, 0.7), ("x3", 50, 0.6), ("tiny", 5, 0.5)]
    counter = Counter()
    result = pack(records, 100, counter, score=_score)
    assert [r[0] for r in result.selected] == ["a"]
    assert counter.seen == ["a", "x1", "x2", "x3"]  # "tiny" never counted
    assert result.stats.skipped_count == 4
    assert result.stats.stopped_early is True
    assert result.stats.budget_reached is True


def test_a_fit_resets_the_miss_streak() -> None:
    records = [
        ("x1", 80, 0.9),
        ("x2", 80, 0.8),
        ("a", 10, 0.7),
        ("x3", 95, 0.6),
        ("x4", 95, 0.6),
        ("b", 10, 0.5),
    ]
    result = pack(records, 20, Counter(), score=_score)  # without the reset, x3 would stop it
    assert [r[0] for r in result.selected] == ["a", "b"]
    assert result.stats.stopped_early is False


def test_stop_on_the_last_item_is_not_an_early_stop() -> None:
    records = [("a", 90, 0.9), ("x1", 50, 0.8), ("x2", 50, 0.7), ("x3", 50, 0.6)]
    result = pack(records, 100, Counter(), score=_score)
    assert result.stats.stopped_early is False
    assert result.stats.skipped_count == 3


def test_none_never_stops() -> None:
    records = [("a", 90, 0.9)] + [(f"x{k}", 50, 0.5) for k in range(10)] + [("tiny", 10, 0.1)]
    result = pack(records, 100, Counter(), score=_score, max_consecutive_skips=None)
    assert [r[0] for r in result.selected] == ["a", "tiny"]
    assert result.stats.stopped_early is False


def test_zero_budget_counts_nothing() -> None:
    counter = Counter()
    result = pack([("a", 1, 0.5), ("b", 0, 0.4)], 0, counter, score=_score)
    assert result.selected == ()
    assert counter.seen == []
    assert result.stats == PackingStats(0, 0, 0.0, 2, budget_reached=False, stopped_early=False)


def test_empty_records() -> None:
    result = pack([], 100, Counter(), score=_score)
    assert result.stats == PackingStats(0, 0, 0.0, 0, budget_reached=False, stopped_early=False)


def test_zero_token_records_always_fit() -> None:
    records = [("a", 100, 0.9), ("z", 0, 0.1)]
    assert [r[0] for r in pack(records, 100, Counter(), score=_score).selected] == ["a", "z"]


def test_total_score_is_the_exact_sum_not_rounded() -> None:
    records = [(f"r{k}", 1, 0.1) for k in range(10)]
    result = pack(records, 100, Counter(), score=_score)
    assert result.stats.total_score == 1.0  # plain left-to-right addition gives 0.9999999999999999
    tiny = pack([("a", 1, 1e-9), ("b", 1, 2e-9)], 10, Counter(), score=_score)
    assert tiny.stats.total_score == math.fsum([1e-9, 2e-9])  # not rounded to 6 digits


def test_total_score_of_infinite_or_overflowing_scores_follows_ieee() -> None:
    # math.fsum refuses these sums; the total is then IEEE addition's answer.
    both = pack([("a", 1, math.inf), ("b", 1, -math.inf)], 10, Counter(), score=_score)
    assert math.isnan(both.stats.total_score)
    huge = pack([("a", 1, 1e308), ("b", 1, 1e308)], 10, Counter(), score=_score)
    assert huge.stats.total_score == math.inf


def test_scores_are_only_read_for_taken_records() -> None:
    read: list[str] = []

    def score(record: tuple[str, int, float]) -> float:
        read.append(record[0])
        return record[2]

    pack([("a", 10, 0.5), ("big", 99, 0.4)], 50, Counter(), score=score)
    assert read == ["a"]


def test_generators_and_numpy_integers_are_accepted() -> None:
    records = (r for r in [("a", 10, 0.5), ("b", 20, 0.4)])
    result = pack(records, 25, lambda r: np.int64(r[1]), score=_score)
    assert [r[0] for r in result.selected] == ["a"]
    assert type(result.stats.total_tokens) is int


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"token_budget": -1}, "token_budget: must be >= 0, got -1"),
        ({"token_budget": 10.0}, "token_budget: must be an integer, got 10.0"),
        ({"token_budget": True}, "token_budget: must be an integer, got True"),
        ({"count_tokens": 5}, "count_tokens: must be callable: record -> int, got 5"),
        ({"score": "s"}, "score: must be callable: record -> float, got 's'"),
        ({"max_consecutive_skips": 0}, "max_consecutive_skips: must be >= 1, got 0"),
        ({"max_consecutive_skips": 2.5}, "max_consecutive_skips: must be an integer, got 2.5"),
        ({"records": "abc"}, "records: must be a sequence of records, got 'abc'"),
        ({"records": 7}, "records: must be a sequence of records, got 7"),
    ],
)
def test_argument_validation(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {
        "records": [("a", 1, 0.5)],
        "token_budget": 10,
        "count_tokens": Counter(),
        "score": _score,
    }
    arguments.update(kwargs)
    with pytest.raises(SlicerConfigError) as info:
        pack(**arguments)  # type: ignore[arg-type]
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("count", "message"),
    [
        (-4, "count_tokens(records[1]): must be a non-negative integer, got -4"),
        ("4", "count_tokens(records[1]): must be a non-negative integer, got '4'"),
        (4.0, "count_tokens(records[1]): must be a non-negative integer, got 4.0"),
        (True, "count_tokens(records[1]): must be a non-negative integer, got True"),
        (None, "count_tokens(records[1]): must be a non-negative integer, got None"),
    ],
)
def test_bad_token_counts_are_rejected(count: object, message: str) -> None:
    def count_tokens(record: str) -> int:
        return 1 if record == "ok" else count  # type: ignore[return-value]

    with pytest.raises(SliceInputError) as info:
        pack(["ok", "bad"], 10, count_tokens, score=lambda r: 0.5)
    assert str(info.value) == message


def test_non_numeric_scores_are_rejected() -> None:
    with pytest.raises(SliceInputError, match=r"score\(record\): must return a number") as info:
        pack(["a"], 10, lambda r: 1, score=lambda r: "high")  # type: ignore[arg-type,return-value]
    assert info.value.value == "high"


# --------------------------------------------------------------------------- PackerSlice


def test_packer_slice_configuration() -> None:
    packer = PackerSlice()
    assert packer.max_consecutive_skips == 3
    assert PackerSlice(None).max_consecutive_skips is None
    assert isinstance(packer, Slicer)
    assert packer.budget_monotonic is True
    assert repr(packer) == "PackerSlice(max_consecutive_skips=3)"
    assert not hasattr(packer, "__dict__")
    for bad in (0, -1, 1.0, "3", True):
        with pytest.raises(SlicerConfigError, match=r"^max_consecutive_skips: "):
            PackerSlice(bad)  # type: ignore[arg-type]


def test_packer_slice_walks_in_score_order_and_reports_stats() -> None:
    items = [
        scored("a", 60, 0.9),
        scored("huge", 500, 0.8),
        scored("b", 30, 0.7),
        scored("c", 20, 0.1),
    ]
    result = PackerSlice().slice(items, budget(100))
    assert selected(result) == ["a", "b"]
    assert result.packing == PackingStats(2, 90, 0.9 + 0.7, 2, True, False)


def test_packer_slice_empty_and_zero_target() -> None:
    items = [scored("a", 0, 0.5)]
    assert PackerSlice().slice([], budget(10)).packing == PackingStats(0, 0, 0.0, 0, False, False)
    zero = PackerSlice().slice(items, budget(0))
    assert zero.selected == ()
    assert zero.packing == PackingStats(0, 0, 0.0, 1, False, False)


def test_packer_slice_rejects_negative_tokens() -> None:
    items = [scored("a", 5, 0.9), scored("bad", -2, 0.5)]
    with pytest.raises(SliceInputError) as info:
        PackerSlice().slice(items, budget(10))
    assert str(info.value) == "items[1].item.tokens: must be a non-negative integer, got -2"


@settings(max_examples=300, deadline=None)
@given(
    items=scored_lists(max_size=20),
    target=st.integers(min_value=0, max_value=1500),
    limit=st.one_of(st.none(), st.integers(min_value=1, max_value=4)),
)
def test_both_faces_match_the_seed_loop(
    items: list[ScoredItem], target: int, limit: int | None
) -> None:
    sizes = [s.item.tokens for s in items]
    taken, skipped, reached, stopped = _seed_walk(sizes, target, limit)
    result = PackerSlice(limit).slice(items, budget(target))
    assert [item.content for item in result.selected] == [items[p].item.content for p in taken]
    stats = result.packing
    assert stats is not None
    assert stats.selected_count == len(taken)
    assert stats.total_tokens == sum(sizes[p] for p in taken) <= max(target, 0)
    assert stats.total_score == math.fsum(items[p].score for p in taken)
    assert (stats.skipped_count, stats.budget_reached, stats.stopped_early) == (
        skipped,
        reached,
        stopped,
    )
    get_tokens: Callable[[ScoredItem], int] = lambda s: s.item.tokens  # noqa: E731
    plain = pack(items, target, get_tokens, score=lambda s: s.score, max_consecutive_skips=limit)
    assert [s.item for s in plain.selected] == list(result.selected)
    assert plain.stats == stats
