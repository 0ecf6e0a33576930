"""The slicer contract, checked for every slicer: subset, no duplicates, no mutation,
determinism, immutable configuration, and independent results when threads share one
instance."""

from __future__ import annotations

import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.model import ContextItem, ScoredItem
from pycupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    GreedySlice,
    KnapsackSlice,
    PackerSlice,
    QuotaEntry,
    QuotaSlice,
    Slicer,
    SliceResult,
)

from .helpers import budget, ranked
from .strategies import scored_lists

SLICERS: dict[str, Slicer] = {
    "greedy": GreedySlice(),
    "knapsack-100": KnapsackSlice(),
    "knapsack-1": KnapsackSlice(1),
    "quota": QuotaSlice([QuotaEntry("Message", 20, 60), QuotaEntry("tool", 10, 30)]),
    "quota-knapsack": QuotaSlice([QuotaEntry("memory", 0, 50)], KnapsackSlice(10)),
    "count-quota": CountQuotaSlice(
        [CountQuotaEntry("tool", 2, 3), CountQuotaEntry("memory", 0, 1)]
    ),
    "count-knapsack": CountConstrainedKnapsackSlice(
        [CountQuotaEntry("Message", 1, 2)], KnapsackSlice(25)
    ),
    "packer": PackerSlice(),
    "packer-unbounded": PackerSlice(None),
}
# Slicers whose selection always fits target_tokens (the count slicers commit requirements
# regardless of size, as specified).
BUDGET_COMPLIANT = {"greedy", "knapsack-100", "knapsack-1", "quota", "quota-knapsack", "packer"}
BUDGET_COMPLIANT.add("packer-unbounded")

MONOTONIC = {
    "greedy": True,
    "knapsack-100": True,
    "knapsack-1": True,
    "quota": False,
    "quota-knapsack": False,
    "count-quota": False,
    "count-knapsack": False,
    "packer": True,
    "packer-unbounded": True,
}


@pytest.mark.parametrize("name", SLICERS)
def test_protocol_and_classification(name: str) -> None:
    slicer = SLICERS[name]
    assert isinstance(slicer, Slicer)
    assert slicer.budget_monotonic is MONOTONIC[name]
    assert not hasattr(slicer, "__dict__")
    assert repr(slicer).startswith(type(slicer).__name__ + "(")


@pytest.mark.parametrize("name", [n for n in SLICERS if n != "greedy"])
def test_configuration_is_immutable(name: str) -> None:
    slicer = SLICERS[name]
    attribute = next(iter(type(slicer).__slots__))
    with pytest.raises(AttributeError, match="is immutable"):
        setattr(slicer, attribute, None)
    with pytest.raises(AttributeError, match="is immutable"):
        delattr(slicer, attribute)


@pytest.mark.parametrize("name", SLICERS)
@settings(max_examples=60, deadline=None)
@given(items=scored_lists(max_size=16, kinds=True), target=st.integers(0, 1500))
def test_contract(name: str, items: list[ScoredItem], target: int) -> None:
    slicer = SLICERS[name]
    snapshot = list(items)
    result = slicer.slice(items, budget(target))
    assert isinstance(result, SliceResult)
    assert items == snapshot
    assert all(a is b for a, b in zip(items, snapshot, strict=True))
    pool = {id(s.item) for s in items}
    chosen = [id(item) for item in result.selected]
    assert set(chosen) <= pool
    assert len(chosen) == len(set(chosen))
    capped = [id(record.item) for record in result.cap_exclusions]
    assert set(capped) <= pool
    assert len(capped) == len(set(capped))
    assert set(capped).isdisjoint(chosen)
    for record in result.cap_exclusions:
        assert record.kind == record.item.kind
        assert record.actual > record.cap >= 0
    if not items or target == 0:
        assert result.selected == ()
    if name in BUDGET_COMPLIANT:
        assert sum(item.tokens for item in result.selected) <= target
    again = slicer.slice(list(items), budget(target))
    assert again == result


def _workload(seed: int) -> list[ScoredItem]:
    rng = random.Random(seed)
    kinds = ["Message", "tool", "memory", "Document"]
    items = [
        ScoredItem(
            ContextItem(f"s{seed}-{k}", tokens=rng.randint(0, 300), kind=rng.choice(kinds)),
            rng.random(),
        )
        for k in range(rng.randint(0, 60))
    ]
    return ranked(items)


@pytest.mark.parametrize("name", SLICERS)
def test_threads_sharing_one_instance_get_independent_results(name: str) -> None:
    slicer = SLICERS[name]
    cases = [(_workload(seed), 200 + 37 * seed) for seed in range(40)]
    serial = [slicer.slice(items, budget(target)) for items, target in cases]
    run: Callable[[tuple[list[ScoredItem], int]], SliceResult] = lambda case: slicer.slice(  # noqa: E731
        case[0], budget(case[1])
    )
    for _ in range(3):
        with ThreadPoolExecutor(max_workers=8) as pool:
            parallel = list(pool.map(run, cases * 3))
        assert parallel == serial * 3


def test_count_shortfalls_do_not_leak_between_threads() -> None:
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 5, 5)])

    def run(count: int) -> tuple[int, int]:
        items = [
            ScoredItem(ContextItem(f"t{count}-{k}", tokens=1, kind="tool"), 0.5)
            for k in range(count)
        ]
        result = slicer.slice(items, budget(1000))
        return len(result.shortfalls), (
            result.shortfalls[0].satisfied_count if result.shortfalls else 5
        )

    counts = [k % 8 for k in range(200)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(run, counts))
    for count, (shortfalls, satisfied) in zip(counts, outcomes, strict=True):
        if count == 0:
            # Empty input returns before phase 1.
            assert (shortfalls, satisfied) == (0, 5)
        elif count < 5:
            assert (shortfalls, satisfied) == (1, count)
        else:
            assert (shortfalls, satisfied) == (0, 5)
