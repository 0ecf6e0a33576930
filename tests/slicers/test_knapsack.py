"""KnapsackSlice: the spec's DP exactly, optimality, score edge cases, memory cap, speed."""

from __future__ import annotations

import itertools
import math
import random
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.errors import SliceInputError, SlicerConfigError, TableTooLargeError
from pycupel.model import ContextItem, ScoredItem
from pycupel.slicers import DEFAULT_MAX_TABLE_BYTES, KnapsackSlice, Slicer

from .helpers import budget, names, ranked, scored, selected
from .strategies import literal_knapsack, scored_lists

KNAPSACK = KnapsackSlice()


def test_configuration() -> None:
    slicer = KnapsackSlice(7, max_table_bytes=1000)
    assert (slicer.bucket_size, slicer.max_table_bytes) == (7, 1000)
    assert KNAPSACK.bucket_size == 100
    assert KNAPSACK.max_table_bytes == DEFAULT_MAX_TABLE_BYTES == 256 * 1024 * 1024
    assert isinstance(slicer, Slicer)
    assert slicer.budget_monotonic is True
    assert repr(KNAPSACK) == "KnapsackSlice(bucket_size=100)"
    assert repr(slicer) == "KnapsackSlice(bucket_size=7, max_table_bytes=1000)"
    assert not hasattr(slicer, "__dict__")
    with pytest.raises(AttributeError):
        slicer.bucket_size = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "bucket_size: must be >= 1, got 0"),
        (-5, "bucket_size: must be >= 1, got -5"),
        (1.5, "bucket_size: must be an integer, got 1.5"),
        (True, "bucket_size: must be an integer, got True"),
        ("100", "bucket_size: must be an integer, got '100'"),
    ],
)
def test_bucket_size_validation(value: object, message: str) -> None:
    with pytest.raises(SlicerConfigError) as info:
        KnapsackSlice(value)  # type: ignore[arg-type]
    assert str(info.value) == message


@pytest.mark.parametrize("value", [0, -1, 2.0, None])
def test_max_table_bytes_validation(value: object) -> None:
    with pytest.raises(SlicerConfigError, match="max_table_bytes"):
        KnapsackSlice(max_table_bytes=value)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- edge-case table


def test_empty_input() -> None:
    assert KNAPSACK.slice([], budget(500)).selected == ()


def test_non_positive_target() -> None:
    assert KNAPSACK.slice([scored("z", 0, 0.5)], budget(0)).selected == ()


def test_all_zero_token_items() -> None:
    items = [scored("a", 0, 0.5), scored("b", 0, 0.1)]
    assert selected(KNAPSACK.slice(items, budget(10))) == ["a", "b"]


def test_capacity_zero_keeps_only_zero_token_items() -> None:
    items = [scored("small", 10, 0.9), scored("zero", 0, 0.1)]
    assert selected(KNAPSACK.slice(items, budget(99))) == ["zero"]


def test_all_candidates_exceed_capacity() -> None:
    items = [scored("a", 250, 0.9), scored("zero", 0, 0.1), scored("b", 300, 0.8)]
    assert selected(KNAPSACK.slice(items, budget(200))) == ["zero"]


def test_single_candidate_fits() -> None:
    items = [scored("only", 120, 0.3), scored("zero", 0, 0.1)]
    assert selected(KNAPSACK.slice(items, budget(500))) == ["zero", "only"]


def test_output_order_is_zero_tokens_then_reconstruction_order() -> None:
    items = [scored("a", 100, 0.9), scored("z1", 0, 0.8), scored("b", 100, 0.7), scored("z2", 0, 0)]
    assert selected(KNAPSACK.slice(items, budget(1000))) == ["z1", "z2", "b", "a"]


def test_beats_greedy_where_density_misleads() -> None:
    items = [scored("big", 250, 0.7), scored("small-a", 150, 0.5), scored("small-b", 150, 0.45)]
    assert selected(KNAPSACK.slice(items, budget(300))) == ["big"]


def test_ceiling_weights_and_floor_capacity() -> None:
    items = [scored("a", 150, 0.6), scored("b", 150, 0.5)]
    assert selected(KNAPSACK.slice(items, budget(300))) == ["a"]
    assert sorted(selected(KnapsackSlice(1).slice(items, budget(300)))) == ["a", "b"]


def test_budget_far_above_total_weight_takes_everything_with_value() -> None:
    items = [scored(f"i{k}", 10 + k, 0.5 - k / 100) for k in range(30)]
    result = KnapsackSlice(1).slice(items, budget(10**9))
    assert sorted(selected(result)) == sorted(s.item.content for s in items)


# --------------------------------------------------------------------------- score decisions


def test_zero_and_negative_values_are_never_kept() -> None:
    items = [scored("pos", 100, 0.5), scored("tiny", 100, 0.00005), scored("neg", 100, -0.25)]
    assert selected(KNAPSACK.slice(items, budget(1000))) == ["pos"]


def test_nan_score_is_worth_zero() -> None:
    items = [scored("pos", 100, 0.5), scored("nan", 100, math.nan)]
    assert selected(KNAPSACK.slice(items, budget(1000))) == ["pos"]


def test_nan_zero_token_item_is_still_included() -> None:
    items = [scored("nan", 0, math.nan)]
    assert selected(KNAPSACK.slice(items, budget(10))) == ["nan"]


def test_negative_infinity_is_worth_zero() -> None:
    items = [scored("pos", 100, 0.5), scored("ninf", 100, -math.inf)]
    assert selected(KNAPSACK.slice(items, budget(1000))) == ["pos"]


def test_positive_infinity_is_rejected() -> None:
    items = [scored("a", 100, 0.5), scored("inf", 100, math.inf)]
    with pytest.raises(SliceInputError, match=r"items\[1\]\.score: must be finite") as info:
        KNAPSACK.slice(items, budget(1000))
    assert info.value.value == math.inf


def test_positive_infinity_on_a_zero_token_item_is_harmless() -> None:
    items = [scored("inf", 0, math.inf), scored("a", 100, 0.5)]
    assert selected(KNAPSACK.slice(items, budget(100))) == ["inf", "a"]


def test_scores_too_large_to_scale_are_rejected() -> None:
    items = [scored("a", 100, 1e15), scored("b", 100, 1e15)]
    with pytest.raises(SliceInputError, match=r"must sum to less than 2\*\*62"):
        KNAPSACK.slice(items, budget(1000))


def test_large_scores_use_int64_exactly() -> None:
    # Values beyond int32 must still compare exactly: 3e9 + 1 vs 3e9.
    items = [scored("a", 100, 300_000.0001), scored("b", 100, 300_000.0), scored("c", 100, 0.5)]
    result = KNAPSACK.slice(items, budget(100))
    assert selected(result) == ["a"]


def test_negative_tokens_are_rejected() -> None:
    with pytest.raises(SliceInputError, match=r"items\[0\]\.item\.tokens"):
        KNAPSACK.slice([scored("bad", -1, 0.5)], budget(100))


# --------------------------------------------------------------------------- memory cap


def test_table_too_large_is_refused_with_its_size() -> None:
    items = [scored(f"i{k}", 1000 + k, 0.5) for k in range(300)]
    slicer = KnapsackSlice(1, max_table_bytes=1_000_000)
    with pytest.raises(TableTooLargeError) as info:
        slicer.slice(items, budget(50_000))
    error = info.value
    assert error.items == 300
    assert error.capacity == 50_000
    assert error.table_bytes > error.limit_bytes == 1_000_000
    assert "raise bucket_size" in str(error)
    # The same input fits at a coarser bucket.
    assert KnapsackSlice(100, max_table_bytes=1_000_000).slice(items, budget(50_000)).selected


def test_table_size_counts_only_reachable_cells() -> None:
    # A huge budget over small items needs a table only as wide as their total weight.
    items = [scored(f"i{k}", 10, 0.5) for k in range(50)]
    result = KnapsackSlice(1, max_table_bytes=20_000).slice(items, budget(10**12))
    assert len(result.selected) == 50


# --------------------------------------------------------------------------- oracles


@settings(max_examples=400, deadline=None)
@given(
    items=scored_lists(max_size=12, nan=True),
    target=st.integers(min_value=0, max_value=1200),
    bucket=st.sampled_from([1, 2, 7, 50, 100, 333]),
)
def test_matches_the_literal_pseudocode(items: list[ScoredItem], target: int, bucket: int) -> None:
    result = KnapsackSlice(bucket).slice(items, budget(target))
    expected = literal_knapsack(items, target, bucket)
    assert names(result.selected) == names(expected)
    assert all(a is b for a, b in zip(result.selected, expected, strict=True))


def _value(item_scores: list[ScoredItem]) -> int:
    return sum(max(0, math.floor(s.score * 10000)) for s in item_scores)


@settings(max_examples=300, deadline=None)
@given(items=scored_lists(max_size=12), target=st.integers(min_value=1, max_value=1500))
def test_bucket_one_reaches_the_brute_force_optimum(items: list[ScoredItem], target: int) -> None:
    result = KnapsackSlice(1).slice(items, budget(target))
    chosen = {id(item) for item in result.selected}
    picked = [s for s in items if id(s.item) in chosen and s.item.tokens > 0]
    assert sum(s.item.tokens for s in picked) <= target
    assert all(s.item in result.selected for s in items if s.item.tokens == 0)
    best = 0
    positive = [s for s in items if s.item.tokens > 0]
    for size in range(len(positive) + 1):
        for combo in itertools.combinations(positive, size):
            if sum(s.item.tokens for s in combo) <= target:
                best = max(best, _value(list(combo)))
    assert _value(picked) == best


def test_long_random_run_matches_the_pseudocode() -> None:
    rng = random.Random(7)
    items = ranked(
        [
            ScoredItem(ContextItem(f"i{k}", tokens=rng.randint(1, 120)), rng.random())
            for k in range(60)
        ]
    )
    for bucket in (1, 3, 10):
        result = KnapsackSlice(bucket).slice(items, budget(900))
        assert names(result.selected) == names(literal_knapsack(items, 900, bucket))


# --------------------------------------------------------------------------- performance


def test_bucket_one_thousand_items_fits_in_memory() -> None:
    rng = random.Random(42)
    items = ranked(
        [
            ScoredItem(ContextItem(f"i{k}", tokens=rng.randint(20, 2000)), rng.random())
            for k in range(1000)
        ]
    )
    target = sum(s.item.tokens for s in items) // 4
    assert target > 240_000
    slicer = KnapsackSlice(1)
    # Speed is measured by benchmarks/bench_slicers.py; the test pins the memory bound only,
    # which tracemalloc measures deterministically.
    result = slicer.slice(items, budget(target))
    assert sum(item.tokens for item in result.selected) <= target
    tracemalloc.start()
    try:
        slicer.slice(items, budget(target))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 64 * 1024 * 1024, f"peak {peak:,} bytes"


# --------------------------------------------------------------------------- exact edges


def test_defaults_of_a_fresh_slicer() -> None:
    # built here, not at import, so the constructor's defaults are the ones checked
    fresh = KnapsackSlice()
    assert (fresh.bucket_size, fresh.max_table_bytes) == (100, DEFAULT_MAX_TABLE_BYTES)
    assert KnapsackSlice(max_table_bytes=1).max_table_bytes == 1


@pytest.mark.parametrize("value", [0, -1])
def test_max_table_bytes_error_names_the_field_and_the_value(value: int) -> None:
    with pytest.raises(SlicerConfigError) as info:
        KnapsackSlice(max_table_bytes=value)
    assert info.value.field == "max_table_bytes"
    assert info.value.value == value
    assert str(info.value) == f"max_table_bytes: must be >= 1, got {value}"


def test_a_table_of_exactly_the_limit_is_allowed() -> None:
    items = [scored(f"i{k}", 10 + k, 0.5 + k / 100) for k in range(20)]
    with pytest.raises(TableTooLargeError) as info:
        KnapsackSlice(1, max_table_bytes=1).slice(items, budget(150))
    needed = info.value.table_bytes
    exact = KnapsackSlice(1, max_table_bytes=needed).slice(items, budget(150))
    assert exact.selected
    with pytest.raises(TableTooLargeError):
        KnapsackSlice(1, max_table_bytes=needed - 1).slice(items, budget(150))


def test_the_smallest_positive_scaled_score_is_worth_keeping() -> None:
    # floor(0.0001 * 10000) = 1: worth one unit, so kept when it fits
    assert selected(KNAPSACK.slice([scored("tiny", 100, 0.0001)], budget(1000))) == ["tiny"]


def test_scores_too_large_to_scale_error_names_the_sum() -> None:
    items = [scored("a", 100, 1e15), scored("b", 100, 1e15)]
    with pytest.raises(SliceInputError) as info:
        KNAPSACK.slice(items, budget(1000))
    assert info.value.field == "items[*].score"
    assert info.value.value == 2e15 * 10_000


def test_positive_infinity_error_names_the_item() -> None:
    items = [scored("a", 100, 0.5), scored("b", 100, math.inf)]
    with pytest.raises(SliceInputError) as info:
        KNAPSACK.slice(items, budget(1000))
    assert info.value.field == "items[1].score"
    assert info.value.value == math.inf
    assert info.value.rule == "must be finite for KnapsackSlice (scores are scaled to integers)"
