"""CountQuotaSlice: validation, the three phases, scarcity, the edge-case table, an oracle."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.errors import CountRequirementError, SliceInputError, SlicerConfigError
from pycupel.model import ContextBudget, ContextKind, ScoredItem
from pycupel.slicers import (
    CapExclusion,
    CountQuotaEntry,
    CountQuotaSlice,
    CountRequirementShortfall,
    GreedySlice,
    KnapsackSlice,
    PackerSlice,
    ScarcityBehavior,
    Slicer,
    SliceResult,
)

from .helpers import budget, cap_records, names, scored, selected
from .strategies import entries_strategy, literal_count_quota, literal_greedy, scored_lists


class Recorder:
    """Inner slicer that records its input and returns it in reverse (a non-score order)."""

    __slots__ = ("calls",)

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], ContextBudget]] = []

    @property
    def budget_monotonic(self) -> bool:
        return True

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        self.calls.append(([s.item.content for s in items], budget))
        return SliceResult.of(s.item for s in reversed(items))


# --------------------------------------------------------------------------- ScarcityBehavior


def test_scarcity_parse() -> None:
    assert ScarcityBehavior.parse("Throw") is ScarcityBehavior.THROW
    assert ScarcityBehavior.parse(" degrade ") is ScarcityBehavior.DEGRADE
    assert ScarcityBehavior.parse(ScarcityBehavior.THROW) is ScarcityBehavior.THROW
    with pytest.raises(SlicerConfigError) as info:
        ScarcityBehavior.parse("ignore")
    assert str(info.value) == "scarcity: must be one of: degrade, throw, got 'ignore'"


# --------------------------------------------------------------------------- CountQuotaEntry


def test_entry_defaults_and_value_semantics() -> None:
    entry = CountQuotaEntry("tool")
    assert (entry.kind, entry.require_count, entry.cap_count) == (ContextKind("tool"), 0, None)
    assert entry == CountQuotaEntry("TOOL", 0, None)
    assert hash(entry) == hash(CountQuotaEntry("Tool"))
    assert entry != CountQuotaEntry("tool", 0, 3)
    assert repr(CountQuotaEntry("tool", 1, 2)) == (
        "CountQuotaEntry('tool', require_count=1, cap_count=2)"
    )
    CountQuotaEntry("tool", 0, 0)  # a zero cap without a requirement is allowed
    CountQuotaEntry("tool", 2, 2)
    with pytest.raises(AttributeError):
        entry.cap_count = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((-1,), "require_count: must be >= 0, got -1"),
        ((0, -1), "cap_count: must be >= 0, got -1"),
        ((1.5,), "require_count: must be an integer, got 1.5"),
        ((True,), "require_count: must be an integer, got True"),
        ((0, "3"), "cap_count: must be an integer, got '3'"),
        (
            (2, 0),
            "cap_count: must be > 0 when require_count is 2 for kind 'tool' (a zero cap can "
            "never satisfy a requirement), got 0",
        ),
        ((3, 2), "require_count: must be <= cap_count (2) for kind 'tool', got 3"),
    ],
)
def test_entry_validation(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(SlicerConfigError) as info:
        CountQuotaEntry("tool", *args)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_entry_kind_validation() -> None:
    with pytest.raises(SlicerConfigError, match=r"^kind: must not be empty"):
        CountQuotaEntry(" ")


# --------------------------------------------------------------------------- slicer config


def test_configuration() -> None:
    entries = [CountQuotaEntry("tool", 1, 2)]
    slicer = CountQuotaSlice(entries, scarcity="throw")
    assert slicer.entries == tuple(entries)
    assert isinstance(slicer.inner, GreedySlice)
    assert slicer.scarcity is ScarcityBehavior.THROW
    assert isinstance(slicer, Slicer)
    assert slicer.budget_monotonic is False
    assert repr(slicer) == (
        "CountQuotaSlice([CountQuotaEntry('tool', require_count=1, cap_count=2)], "
        "inner=GreedySlice(), scarcity=ScarcityBehavior.THROW)"
    )
    assert not hasattr(slicer, "__dict__")
    assert CountQuotaSlice([]).scarcity is ScarcityBehavior.DEGRADE


def test_knapsack_inner_is_rejected_at_construction() -> None:
    with pytest.raises(SlicerConfigError) as info:
        CountQuotaSlice([CountQuotaEntry("tool", 1, 2)], KnapsackSlice())
    assert str(info.value) == (
        "inner: must not be a KnapsackSlice (use CountConstrainedKnapsackSlice for count limits "
        "with knapsack selection), got KnapsackSlice(bucket_size=100)"
    )


def test_duplicate_kinds_are_rejected() -> None:
    with pytest.raises(SlicerConfigError) as info:
        CountQuotaSlice([CountQuotaEntry("tool", 1, 2), CountQuotaEntry("Tool")])
    assert str(info.value) == (
        "entries[1].kind: must not repeat a kind (kinds compare case-insensitively), got 'Tool'"
    )


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"entries": 3}, "^entries: must be an iterable of CountQuotaEntry"),
        ({"entries": {"tool": 1}}, "^entries: must be an iterable of CountQuotaEntry"),
        ({"entries": [("tool", 1)]}, r"^entries\[0\]: must be a CountQuotaEntry"),
        ({"entries": [], "inner": object()}, "^inner: must be a slicer"),
        ({"entries": [], "scarcity": "loud"}, "^scarcity: must be one of"),
        ({"entries": [], "scarcity": 1}, "^scarcity: must be one of"),
    ],
)
def test_invalid_configuration(kwargs: dict[str, object], pattern: str) -> None:
    with pytest.raises(SlicerConfigError, match=pattern):
        CountQuotaSlice(**kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- phases


def test_phase_one_commits_best_per_kind_and_reduces_the_residual_target() -> None:
    recorder = Recorder()
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 2, 5)], recorder)
    items = [
        scored("t-low", 100, 0.2, "tool"),
        scored("msg", 50, 0.5),
        scored("t-high", 120, 0.9, "tool"),
        scored("t-mid", 80, 0.6, "tool"),
    ]
    result = slicer.slice(items, budget(1000, max_tokens=1500))
    # Ranked within the kind regardless of input order: t-high, t-mid; 200 tokens committed.
    assert recorder.calls == [
        (["t-low", "msg"], ContextBudget(max_tokens=1500, target_tokens=800)),
    ]
    assert selected(result) == ["t-high", "t-mid", "msg", "t-low"]


def test_phase_one_ties_keep_input_order() -> None:
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 1, 1)])
    items = [scored("first", 10, 0.5, "tool"), scored("second", 10, 0.5, "tool")]
    result = slicer.slice(items, budget(100))
    assert selected(result) == ["first"]
    assert cap_records(result) == [("second", 1, 2)]


def test_commitments_ignore_the_budget_and_phase_two_gets_zero() -> None:
    recorder = Recorder()
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 2, 4)], recorder)
    items = [scored("a", 100, 0.9, "tool"), scored("b", 100, 0.8, "tool"), scored("m", 10, 0.7)]
    result = slicer.slice(items, budget(150))
    assert recorder.calls == [(["m"], ContextBudget(max_tokens=150, target_tokens=0))]
    # The recorder returns what it is given even at target 0; GreedySlice would not.
    assert selected(result) == ["a", "b", "m"]
    assert selected(CountQuotaSlice([CountQuotaEntry("tool", 2, 4)]).slice(items, budget(150))) == [
        "a",
        "b",
    ]


def test_cap_applies_in_inner_output_order_with_counts_seeded_by_phase_one() -> None:
    recorder = Recorder()
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 1, 2)], recorder)
    items = [
        scored("t1", 10, 0.9, "tool"),
        scored("t2", 10, 0.8, "tool"),
        scored("t3", 10, 0.7, "tool"),
        scored("m1", 10, 0.6),
    ]
    result = slicer.slice(items, budget(100))
    # Inner order is reversed: m1, t3, t2. Count starts at 1 (t1): t3 passes, t2 is capped.
    assert selected(result) == ["t1", "m1", "t3"]
    # Without the cap the kind would have had all three: t1 committed, t3 and t2 picked.
    assert result.cap_exclusions == (CapExclusion(items[1].item, ContextKind("tool"), 2, 3),)
    assert result.cap_exclusions[0].item is items[1].item


def test_uncapped_entry_only_requires() -> None:
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 1)])
    items = [scored(f"t{k}", 10, 1 - k / 10, "tool") for k in range(5)]
    result = slicer.slice(items, budget(100))
    assert len(result.selected) == 5
    assert result.cap_exclusions == ()


# --------------------------------------------------------------------------- scarcity


def test_degrade_records_shortfalls_in_entry_order() -> None:
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 3, 5), CountQuotaEntry("Memory", 1, 1)])
    items = [scored("t1", 10, 0.9, "tool"), scored("m", 10, 0.5)]
    result = slicer.slice(items, budget(100))
    assert result.shortfalls == (
        CountRequirementShortfall(ContextKind("tool"), 3, 1),
        CountRequirementShortfall(ContextKind.MEMORY, 1, 0),
    )
    assert selected(result) == ["t1", "m"]


def test_throw_raises_the_exact_message() -> None:
    slicer = CountQuotaSlice(
        [CountQuotaEntry("memory", 1, 1), CountQuotaEntry("tool", 3, 5)],
        scarcity=ScarcityBehavior.THROW,
    )
    items = [scored("m", 10, 0.9, "memory"), scored("t1", 10, 0.8, "tool")]
    with pytest.raises(CountRequirementError) as info:
        slicer.slice(items, budget(100))
    assert str(info.value) == (
        "CountQuotaSlice: candidate pool for kind 'tool' has 1 items but RequireCount is 3."
    )
    assert (info.value.kind, info.value.satisfied, info.value.required) == ("tool", 1, 3)


def test_throw_does_not_fire_when_requirements_are_met() -> None:
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 1, 1)], scarcity="throw")
    result = slicer.slice([scored("t", 10, 0.5, "tool")], budget(10))
    assert selected(result) == ["t"]
    assert result.shortfalls == ()


# --------------------------------------------------------------------------- edge-case table


def test_empty_input_and_zero_target() -> None:
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 2, 3)], scarcity="throw")
    assert slicer.slice([], budget(100)) == SliceResult(())
    assert slicer.slice([scored("t", 1, 0.5, "tool")], budget(0)) == SliceResult(())


def test_no_entries_equals_the_inner_slicer() -> None:
    items = [scored("a", 400, 0.9), scored("b", 100, 0.7, "tool"), scored("c", 100, 0.5)]
    result = CountQuotaSlice([]).slice(items, budget(300))
    assert result.selected == GreedySlice().slice(items, budget(300)).selected


def test_require_equals_cap_blocks_phase_two_for_the_kind() -> None:
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 2, 2)])
    items = [scored(f"t{k}", 100, 0.9 - k / 10, "tool") for k in range(4)]
    result = slicer.slice(items, budget(1000))
    assert selected(result) == ["t0", "t1"]
    assert cap_records(result) == [("t2", 2, 4), ("t3", 2, 4)]


def test_require_zero_with_cap_only_caps() -> None:
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 0, 1)])
    items = [scored(f"t{k}", 100, 0.9 - k / 10, "tool") for k in range(3)]
    result = slicer.slice(items, budget(1000))
    assert selected(result) == ["t0"]
    assert cap_records(result) == [("t1", 1, 3), ("t2", 1, 3)]


# --------------------------------------------------------------------------- pass-through


def test_inner_packing_statistics_are_passed_through() -> None:
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 1, 1)], PackerSlice())
    items = [scored("t", 50, 0.9, "tool"), scored("m1", 40, 0.8), scored("m2", 30, 0.7)]
    result = slicer.slice(items, budget(100))
    assert selected(result) == ["t", "m1"]
    assert result.packing is not None
    assert (result.packing.selected_count, result.packing.total_tokens) == (1, 40)


def test_nested_count_slicer_results_are_merged() -> None:
    inner = CountQuotaSlice([CountQuotaEntry("memory", 1, 1)])
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 2, 2)], inner)
    items = [
        scored("t", 10, 0.9, "tool"),
        scored("m1", 10, 0.8, "memory"),
        scored("m2", 10, 0.7, "memory"),
    ]
    result = slicer.slice(items, budget(100))
    assert selected(result) == ["t", "m1"]
    assert [s.kind.value for s in result.shortfalls] == ["tool"]
    # The inner slicer's own record travels up unchanged.
    assert result.cap_exclusions == (CapExclusion(items[2].item, ContextKind.MEMORY, 1, 2),)


# --------------------------------------------------------------------------- oracle


@settings(max_examples=300, deadline=None)
@given(
    items=scored_lists(max_size=14, kinds=True),
    target=st.integers(min_value=0, max_value=1500),
    entries=entries_strategy,
)
def test_matches_the_literal_pseudocode(
    items: list[ScoredItem], target: int, entries: list[tuple[str, int, int | None]]
) -> None:
    slicer = CountQuotaSlice([CountQuotaEntry(*e) for e in entries])
    result = slicer.slice(items, budget(target, max_tokens=target + 50))
    expected, shortfalls, excluded = literal_count_quota(
        items, target, target + 50, entries, literal_greedy, resort=False
    )
    assert names(result.selected) == names(expected)
    assert [(s.kind.value, s.required_count, s.satisfied_count) for s in result.shortfalls] == (
        shortfalls
    )
    assert cap_records(result) == excluded


@settings(max_examples=200, deadline=None)
@given(
    items=scored_lists(max_size=14, kinds=True),
    order=st.randoms(use_true_random=False),
    target=st.integers(min_value=1, max_value=1500),
    entries=entries_strategy,
)
def test_unsorted_input_matches_the_literal_pseudocode(
    items: list[ScoredItem],
    order: random.Random,
    target: int,
    entries: list[tuple[str, int, int | None]],
) -> None:
    order.shuffle(items)
    slicer = CountQuotaSlice([CountQuotaEntry(*e) for e in entries])
    result = slicer.slice(items, budget(target))
    expected, shortfalls, excluded = literal_count_quota(
        items, target, target, entries, literal_greedy, resort=False
    )
    assert names(result.selected) == names(expected)
    assert len(result.shortfalls) == len(shortfalls)
    assert cap_records(result) == excluded


# --------------------------------------------------------------------------- what errors carry


def test_configuration_errors_carry_the_rejected_value() -> None:
    with pytest.raises(SlicerConfigError) as info:
        CountQuotaSlice(7)  # type: ignore[arg-type]
    assert (info.value.field, info.value.value, info.value.rule) == (
        "entries",
        7,
        "must be an iterable of CountQuotaEntry",
    )
    with pytest.raises(SlicerConfigError) as info:
        CountQuotaSlice([CountQuotaEntry("tool", 1, 2), "memory"])  # type: ignore[list-item]
    assert (info.value.field, info.value.value, info.value.rule) == (
        "entries[1]",
        "memory",
        "must be a CountQuotaEntry",
    )


@pytest.mark.parametrize("sort", [True, False])
def test_a_negative_token_count_in_the_count_phase_is_named_with_position_and_value(
    sort: bool,
) -> None:
    items = [scored("a", 10, 0.9, "tool"), scored("b", -3, 0.8, "tool"), scored("c", 5, 0.1)]
    if not sort:
        items.reverse()  # not score-sorted: the ranked walk finds it
    with pytest.raises(SliceInputError) as info:
        CountQuotaSlice([CountQuotaEntry("tool", 2, 3)]).slice(items, budget(100))
    assert (info.value.field, info.value.value) == ("items[1].item.tokens", -3)
