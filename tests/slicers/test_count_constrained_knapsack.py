"""CountConstrainedKnapsackSlice: phase-2 re-sort, seeded caps, scarcity, an oracle."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.errors import CountRequirementError, SlicerConfigError, TableTooLargeError
from pycupel.model import ContextKind, ScoredItem
from pycupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountRequirementShortfall,
    GreedySlice,
    KnapsackSlice,
    ScarcityBehavior,
    Slicer,
    SliceResult,
)

from .helpers import budget, cap_records, capped, names, scored, selected
from .strategies import entries_strategy, literal_count_quota, literal_knapsack, scored_lists


def test_configuration() -> None:
    entries = [CountQuotaEntry("tool", 1, 2)]
    slicer = CountConstrainedKnapsackSlice(entries)
    assert slicer.entries == tuple(entries)
    assert slicer.knapsack.bucket_size == 100
    assert slicer.scarcity is ScarcityBehavior.DEGRADE
    assert isinstance(slicer, Slicer)
    assert slicer.budget_monotonic is False
    assert repr(slicer) == (
        "CountConstrainedKnapsackSlice([CountQuotaEntry('tool', require_count=1, cap_count=2)], "
        "knapsack=KnapsackSlice(bucket_size=100), scarcity=ScarcityBehavior.DEGRADE)"
    )
    assert not hasattr(slicer, "__dict__")
    knapsack = KnapsackSlice(1)
    assert CountConstrainedKnapsackSlice([], knapsack, "throw").knapsack is knapsack


def test_knapsack_argument_must_be_a_knapsack() -> None:
    with pytest.raises(SlicerConfigError, match=r"^knapsack: must be a KnapsackSlice"):
        CountConstrainedKnapsackSlice([], GreedySlice())  # type: ignore[arg-type]


def test_entries_are_validated_like_count_quota() -> None:
    with pytest.raises(SlicerConfigError, match=r"^entries\[1\]\.kind: must not repeat"):
        CountConstrainedKnapsackSlice([CountQuotaEntry("a"), CountQuotaEntry("A")])


def test_phase_two_output_is_resorted_by_score_before_the_cap() -> None:
    slicer = CountConstrainedKnapsackSlice([CountQuotaEntry("tool", 0, 1)])
    items = [scored("tool-a", 100, 0.9, "tool"), scored("tool-b", 100, 0.8, "tool")]
    # The knapsack alone returns reconstruction order: b before a.
    assert selected(KnapsackSlice().slice(items, budget(1000))) == ["tool-b", "tool-a"]
    result = slicer.slice(items, budget(1000))
    assert selected(result) == ["tool-a"]
    assert cap_records(result) == [("tool-b", 1, 2)]


def test_resort_puts_the_result_in_score_order_with_knapsack_order_on_ties() -> None:
    slicer = CountConstrainedKnapsackSlice([])
    items = [
        scored("a", 10, 0.9),
        scored("z", 0, 0.6),
        scored("b", 10, 0.6),
        scored("c", 10, 0.6),
        scored("d", 10, 0.1),
    ]
    # The knapsack returns z (zero tokens) first, then its picks in reconstruction order
    # (d, c, b, a); the stable re-sort keeps that order among the 0.6 ties: z, c, b.
    assert selected(KnapsackSlice().slice(items, budget(1000))) == ["z", "d", "c", "b", "a"]
    assert selected(slicer.slice(items, budget(1000))) == ["a", "z", "c", "b", "d"]


def test_issue_reproducer_equal_scores_keep_the_knapsack_pick_order() -> None:
    # Both Message, equal score: the exact knapsack returns [b, a]; a cap of 1 keeps b.
    slicer = CountConstrainedKnapsackSlice([CountQuotaEntry("Message", 0, 1)], KnapsackSlice(1))
    items = [scored("a", 30, 0.5, "Message"), scored("b", 20, 0.5, "Message")]
    result = slicer.slice(items, budget(100))
    assert selected(result) == ["b"]
    assert capped(result) == ["a"]


def test_caps_count_phase_one_commitments() -> None:
    slicer = CountConstrainedKnapsackSlice([CountQuotaEntry("tool", 1, 2)])
    scores = {"tool-a": 0.9, "tool-b": 0.8, "tool-c": 0.7, "tool-d": 0.6}
    items = [scored(name, 100, score, "tool") for name, score in scores.items()]
    result = slicer.slice(items, budget(600))
    assert selected(result) == ["tool-a", "tool-b"]
    # tool-a committed plus three knapsack picks: four without the cap.
    assert cap_records(result) == [("tool-c", 2, 4), ("tool-d", 2, 4)]


def test_degrade_and_throw() -> None:
    entries = [CountQuotaEntry("tool", 3, 5)]
    items = [scored("tool-a", 100, 0.9, "tool")]
    result = CountConstrainedKnapsackSlice(entries).slice(items, budget(500))
    assert selected(result) == ["tool-a"]
    assert result.shortfalls == (CountRequirementShortfall(ContextKind("tool"), 3, 1),)
    with pytest.raises(CountRequirementError) as info:
        CountConstrainedKnapsackSlice(entries, scarcity="throw").slice(items, budget(500))
    assert str(info.value) == (
        "CountConstrainedKnapsackSlice: candidate pool for kind 'tool' has 1 items but "
        "RequireCount is 3."
    )


def test_edge_cases() -> None:
    slicer = CountConstrainedKnapsackSlice([CountQuotaEntry("tool", 2, 2)], scarcity="throw")
    assert slicer.slice([], budget(100)) == SliceResult(())
    assert slicer.slice([scored("t", 10, 0.5, "tool")], budget(0)) == SliceResult(())
    items = [scored("a", 100, 0.9, "tool"), scored("b", 100, 0.8, "tool"), scored("m", 10, 0.7)]
    # Phase 1 exhausts the budget: residual target 0.
    assert selected(slicer.slice(items, budget(150))) == ["a", "b"]


def test_table_too_large_propagates() -> None:
    knapsack = KnapsackSlice(1, max_table_bytes=10_000)
    slicer = CountConstrainedKnapsackSlice([CountQuotaEntry("tool", 1, 1)], knapsack)
    items = [scored("t", 10, 0.9, "tool")] + [scored(f"m{k}", 500, 0.5) for k in range(40)]
    with pytest.raises(TableTooLargeError):
        slicer.slice(items, budget(20_000))


def test_nan_scores_rank_last_in_the_resort() -> None:
    slicer = CountConstrainedKnapsackSlice([CountQuotaEntry("tool", 0, 1)])
    items = [scored("z-nan", 0, math.nan, "tool"), scored("t", 0, 0.1, "tool")]
    result = slicer.slice(items, budget(10))
    assert selected(result) == ["t"]
    assert capped(result) == ["z-nan"]
    assert result.cap_exclusions[0].kind == ContextKind("tool")


@settings(max_examples=250, deadline=None)
@given(
    items=scored_lists(max_size=12, kinds=True),
    target=st.integers(min_value=0, max_value=1200),
    entries=entries_strategy,
    bucket=st.sampled_from([1, 50, 100]),
    shuffle=st.one_of(st.none(), st.randoms(use_true_random=False)),
)
def test_matches_the_literal_pseudocode(
    items: list[ScoredItem],
    target: int,
    entries: list[tuple[str, int, int | None]],
    bucket: int,
    shuffle: random.Random | None,
) -> None:
    if shuffle is not None:
        shuffle.shuffle(items)  # phase 1 and the re-sort must not rely on sorted input
    slicer = CountConstrainedKnapsackSlice(
        [CountQuotaEntry(*e) for e in entries], KnapsackSlice(bucket)
    )
    result = slicer.slice(items, budget(target))
    expected, shortfalls, excluded = literal_count_quota(
        items,
        target,
        target,
        entries,
        lambda pool, t: literal_knapsack(pool, t, bucket),
        resort=True,
    )
    assert names(result.selected) == names(expected)
    assert [(s.kind.value, s.required_count, s.satisfied_count) for s in result.shortfalls] == (
        shortfalls
    )
    assert cap_records(result) == excluded
