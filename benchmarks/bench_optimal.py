"""How close the slicers get to the true optimum, and what OptimalSlice costs.

For each size the shared workload (``make_scored(n)``, budget ``budget_for``: 25 % of the
total tokens) is sliced twice: with the budget alone, and with quotas (token quotas and count
quotas at once, see ``QUOTAS``/``COUNTS``). Each slicer gets the constraints it understands:
QuotaSlice the token quotas, CountConstrainedKnapsackSlice the count quotas, OptimalSlice
both; GreedySlice and KnapsackSlice only the budget.

Columns: the total score as a fraction of the optimum (the proven optimum of OptimalSlice run
without a practical time limit; a slicer that breaks a quota can exceed 1), the constraints it
breaks, and the median time. OptimalSlice's own row uses its default time limit and shows its
status and remaining gap.

Before the table, OptimalSlice is checked against an exhaustive search (every subset) on
small instances with groups, versions and all quotas.

    python benchmarks/bench_optimal.py [--sizes 20 50 200 1000 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import numpy as np
import numpy.typing as npt
import scipy

from _harness import machine_summary, measure_one
from pycupel.model import ContextBudget, ContextItem, ContextKind, ScoredItem
from pycupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    GreedySlice,
    KnapsackSlice,
    QuotaEntry,
    QuotaSlice,
    Slicer,
    SliceResult,
)
from pycupel.slicers.optimal import SCORE_BITS, OptimalSlice
from workload import DEFAULT_SEED, budget_for, make_scored

QUOTAS = [
    QuotaEntry(ContextKind.DOCUMENT, require=20, cap=50),
    QuotaEntry(ContextKind.MESSAGE, require=10, cap=40),
    QuotaEntry(ContextKind.SYSTEM_PROMPT, require=0, cap=10),
]


def counts_for(size: int) -> list[CountQuotaEntry]:
    """Count quotas that every size can meet (the workload cycles through five kinds)."""
    return [
        CountQuotaEntry(ContextKind.TOOL_OUTPUT, require_count=2, cap_count=max(3, size // 25)),
        CountQuotaEntry(ContextKind.MEMORY, require_count=1, cap_count=max(2, size // 50)),
    ]


@dataclass(frozen=True)
class Scenario:
    name: str
    quotas: list[QuotaEntry]
    counts: list[CountQuotaEntry]


def scenarios(size: int) -> list[Scenario]:
    return [Scenario("budget only", [], []), Scenario("quotas", QUOTAS, counts_for(size))]


def slicers(scenario: Scenario) -> list[tuple[str, Slicer]]:
    return [
        (
            "OptimalSlice(time_limit=0.2)",
            OptimalSlice(quotas=scenario.quotas, count_quotas=scenario.counts),
        ),
        ("GreedySlice", GreedySlice()),
        ("KnapsackSlice(100)", KnapsackSlice(100)),
        ("QuotaSlice(inner=Greedy)", QuotaSlice(scenario.quotas)),
        (
            "CountConstrainedKnapsack(100)",
            CountConstrainedKnapsackSlice(scenario.counts, KnapsackSlice(100)),
        ),
    ]


# --------------------------------------------------------------------------- checks


def violations(chosen: Sequence[ContextItem], target: int, scenario: Scenario) -> list[str]:
    """The constraints of ``scenario`` that ``chosen`` breaks, as short labels."""
    broken = []
    if sum(i.tokens for i in chosen) > target:
        broken.append("budget")
    for quota in scenario.quotas:
        tokens = sum(i.tokens for i in chosen if i.kind == quota.kind)
        if tokens > math.floor(quota.cap / 100.0 * target):
            broken.append(f"{quota.kind.value} tokens>cap")
        if tokens < math.floor(quota.require / 100.0 * target):
            broken.append(f"{quota.kind.value} tokens<req")
    for count in scenario.counts:
        have = sum(1 for i in chosen if i.kind == count.kind)
        if count.cap_count is not None and have > count.cap_count:
            broken.append(f"{count.kind.value} count>cap")
        if have < count.require_count:
            broken.append(f"{count.kind.value} count<req")
    return broken


def total_score(items: Sequence[ScoredItem], chosen: Sequence[ContextItem]) -> float:
    picked = {id(i) for i in chosen}
    return math.fsum(s.score for s in items if id(s.item) in picked)


def rounded(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """The documented score rounding: units of 2**(e - SCORE_BITS), e the least integer with
    max|score| <= 2**e."""
    largest = float(np.abs(scores).max())
    if largest == 0.0:
        return np.zeros(scores.shape[0], dtype=np.int64)
    mantissa, exponent = math.frexp(largest)
    exponent -= mantissa == 0.5
    return np.rint(np.ldexp(scores, SCORE_BITS - exponent)).astype(np.int64)


def exhaustive_best(
    items: Sequence[ScoredItem], target: int, scenario: Scenario
) -> tuple[tuple[int, int, int, int], int]:
    """Best rank key over all subsets (vectorised) and how many subsets reach it.

    Key: (-missing items, -missing tokens, rounded score, index-weighted count). The items
    have no zero-token entries, so none is forced in.
    """
    n = len(items)
    subsets = (np.arange(1 << n)[:, None] >> np.arange(n)[None, :]) & 1
    tokens = np.array([s.item.tokens for s in items])
    kinds = [s.item.kind for s in items]
    ok = subsets @ tokens <= target
    missing_items = np.zeros(subsets.shape[0], dtype=np.int64)
    missing_tokens = np.zeros(subsets.shape[0], dtype=np.int64)
    for quota in scenario.quotas:
        of_kind = subsets @ (tokens * np.array([k == quota.kind for k in kinds]))
        ok &= of_kind <= math.floor(quota.cap / 100.0 * target)
        missing_tokens += np.maximum(0, math.floor(quota.require / 100.0 * target) - of_kind)
    for count in scenario.counts:
        have = subsets @ np.array([k == count.kind for k in kinds], dtype=np.int64)
        if count.cap_count is not None:
            ok &= have <= count.cap_count
        missing_items += np.maximum(0, count.require_count - have)
    groups: dict[str, list[int]] = {}
    versions: dict[str, list[int]] = {}
    for index, s in enumerate(items):
        if "cupel:group" in s.item.metadata:
            groups.setdefault(s.item.metadata["cupel:group"], []).append(index)
        if "cupel:variant-of" in s.item.metadata:
            versions.setdefault(s.item.metadata["cupel:variant-of"], []).append(index)
    for members in groups.values():
        taken = subsets[:, members].sum(axis=1)
        ok &= (taken == 0) | (taken == len(members))
    for members in versions.values():
        ok &= subsets[:, members].sum(axis=1) <= 1
    value = subsets @ rounded(np.array([s.score for s in items]))
    tie = subsets @ (n - np.arange(n))
    keys = np.stack([-missing_items, -missing_tokens, value, tie], axis=1)[ok]
    best = max(map(tuple, keys.tolist()))
    return best, int(np.all(keys == np.array(best), axis=1).sum())


def small_instance(n: int, seed: int) -> tuple[list[ScoredItem], int, Scenario]:
    """``make_scored(n)`` with a few groups and versions, a few repeated scores, all quotas."""
    base = make_scored(n, seed=seed)
    rng = random.Random(seed)
    items = []
    for index, s in enumerate(base):
        metadata = {}
        if index % 6 == 1:
            metadata["cupel:group"] = f"g{index % 4}"
        if index % 5 == 2:
            metadata["cupel:variant-of"] = f"v{index % 3}"
        score = round(s.score, 1) if rng.random() < 0.3 else s.score
        items.append(ScoredItem(s.item.replace(metadata=metadata), score))
    items.sort(key=lambda s: -s.score)
    target = sum(s.item.tokens for s in items) // 3
    return items, target, Scenario("quotas", QUOTAS, counts_for(n))


def verify_against_exhaustive_search(sizes: Sequence[int], seeds: int) -> None:
    print("Exhaustive check (every subset) of OptimalSlice, with groups, versions, quotas:")
    for n in sizes:
        agreed = tied = 0
        started = time.perf_counter()
        for seed in range(seeds):
            items, target, scenario = small_instance(n, seed)
            slicer = OptimalSlice(
                quotas=scenario.quotas, count_quotas=scenario.counts, time_limit=60.0
            )
            result = slicer.slice(items, ContextBudget(max_tokens=target, target_tokens=target))
            best, ties = exhaustive_best(items, target, scenario)
            picked = {id(i) for i in result.selected}
            subset = [p for p, s in enumerate(items) if id(s.item) in picked]
            ours, feasible = rank_of(items, target, scenario, subset)
            status = result.solver.status if result.solver else "?"
            if feasible and ours == best and status == "optimal":
                agreed += 1
            else:
                print(f"  MISMATCH n={n} seed={seed}: ours {ours} ({status}), best {best}")
            tied += ties > 1
        seconds = time.perf_counter() - started
        print(
            f"  n={n:>2}: {agreed}/{seeds} selections proven optimal and equal in rank to the "
            f"exhaustive best ({tied} with several best subsets; {seconds:.1f} s)"
        )
    print()


def rank_of(
    items: Sequence[ScoredItem], target: int, scenario: Scenario, subset: list[int]
) -> tuple[tuple[int, int, int, int], bool]:
    """The rank key of one subset and whether it keeps every hard constraint."""
    n = len(items)
    chosen = [items[p].item for p in subset]
    hard = [v for v in violations(chosen, target, scenario) if "req" not in v]
    groups: dict[str, set[bool]] = {}
    for p, s in enumerate(items):
        if "cupel:group" in s.item.metadata:
            groups.setdefault(s.item.metadata["cupel:group"], set()).add(p in subset)
    versions = [items[p].item.metadata.get("cupel:variant-of") for p in subset]
    named = [v for v in versions if v is not None]
    feasible = not hard and all(len(v) == 1 for v in groups.values())
    feasible = feasible and len(named) == len(set(named))
    missing_items = sum(
        max(0, c.require_count - sum(1 for i in chosen if i.kind == c.kind))
        for c in scenario.counts
    )
    missing_tokens = sum(
        max(
            0,
            math.floor(q.require / 100.0 * target)
            - sum(i.tokens for i in chosen if i.kind == q.kind),
        )
        for q in scenario.quotas
    )
    value = int(rounded(np.array([s.score for s in items]))[subset].sum())
    return (-missing_items, -missing_tokens, value, sum(n - p for p in subset)), feasible


# --------------------------------------------------------------------------- the table


def median_ms(call: Callable[[], SliceResult], repeat: int) -> tuple[float, SliceResult]:
    timing = measure_one(call, repeat)
    return timing.median_ms, call()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 50, 200, 1_000, 2_000])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per measurement")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--check-sizes", type=int, nargs="*", default=[12, 15, 18])
    parser.add_argument("--check-seeds", type=int, default=4)
    args = parser.parse_args()

    print(
        f"{machine_summary()}, scipy {scipy.__version__}; median of {args.repeat} runs after "
        f"1 warm-up"
    )
    print()
    if args.check_sizes:
        verify_against_exhaustive_search(args.check_sizes, args.check_seeds)

    header = (
        f"{'scenario':<12} {'items':>6}  {'slicer':<30} {'score/opt':>9}  {'median ms':>9}  "
        f"{'broken constraints / solver status'}"
    )
    print(header)
    print("-" * len(header))
    for size in args.sizes:
        scored = make_scored(size, seed=args.seed)
        budget: ContextBudget = budget_for([s.item for s in scored])
        target = budget.target_tokens
        for scenario in scenarios(size):
            reference = OptimalSlice(
                quotas=scenario.quotas, count_quotas=scenario.counts, time_limit=120.0
            ).slice(scored, budget)
            assert reference.solver is not None
            optimum = reference.solver.objective
            proven = reference.solver.status == "optimal"
            for name, slicer in slicers(scenario):

                def call(
                    slicer: Slicer = slicer,
                    scored: list[ScoredItem] = scored,
                    budget: ContextBudget = budget,
                ) -> SliceResult:
                    return slicer.slice(scored, budget)

                ms, result = median_ms(call, args.repeat)
                fraction = total_score(scored, result.selected) / optimum if optimum else 1.0
                broken = violations(result.selected, target, scenario)
                notes = ", ".join(broken) if broken else "-"
                if result.solver is not None:
                    gap = result.solver.gap
                    notes += (
                        f"  [{result.solver.status}, gap {gap:.1e}]"
                        if gap
                        else (f"  [{result.solver.status}]")
                    )
                mark = "" if proven else "*"
                print(
                    f"{scenario.name:<12} {size:>6,}  {name:<30} {fraction:>8.5f}{mark:1}  "
                    f"{ms:>9.2f}  {notes}"
                )
            print(
                f"{'':<12} {'':>6}  reference: optimum {optimum:.4f} "
                f"({reference.solver.status}, {reference.solver.seconds * 1000:.0f} ms)"
            )
        print()
    print("* the reference run did not prove optimality; fractions are relative to its best.")


if __name__ == "__main__":
    main()
