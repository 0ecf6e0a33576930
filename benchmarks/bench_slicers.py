"""Time every slicer alone on the shared workload, from 100 to 50,000 items.

Each slicer receives ``make_scored(n)`` (score-sorted) and the effective budget
``budget_for(items)`` (25 % of the total tokens). Timing and memory come from ``_harness``:
median, minimum and CPU time of ``--repeat`` runs after one warm-up run, and peak memory
(tracemalloc) in a separate run so tracing does not distort the timings. A knapsack whose
table would exceed its memory cap is refused before it allocates anything; its row shows the
refusal and the size it would have needed.

    python benchmarks/bench_slicers.py [--sizes 100 1000 10000 50000] [--repeat 7]
    python benchmarks/bench_slicers.py --before REV   # GreedySlice and KnapsackSlice(100) of
                                                     # revision REV beside them

With ``--before REV`` the greedy and knapsack(100) rows also time those slicers of pycupel as
of git revision ``REV`` (``_before.py``) on equal items, both built afresh in the same order
(so neither reads items laid out differently in memory), in the same process, the two taking
turns, check that both select the same contents, and give ``before / now`` (median CPU time).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from functools import partial
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from _before import load_before
from _harness import Timing, format_table, machine_summary, measure, measure_one, peak_mib
from pycupel import model as current_model
from pycupel.errors import TableTooLargeError
from pycupel.model import ContextBudget, ContextItem, ContextKind, ScoredItem
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
from workload import DEFAULT_SEED, budget_for, make_scored

QUOTAS = [
    QuotaEntry(ContextKind.SYSTEM_PROMPT, require=5, cap=15),
    QuotaEntry(ContextKind.DOCUMENT, require=20, cap=50),
    QuotaEntry(ContextKind.MESSAGE, require=10, cap=60),
]
COUNTS = [
    CountQuotaEntry(ContextKind.SYSTEM_PROMPT, require_count=1, cap_count=3),
    CountQuotaEntry(ContextKind.TOOL_OUTPUT, require_count=5, cap_count=50),
    CountQuotaEntry(ContextKind.MEMORY, require_count=10, cap_count=100),
]


def slicers() -> list[tuple[str, Slicer]]:
    """The configurations measured, in table order."""
    return [
        ("GreedySlice", GreedySlice()),
        ("KnapsackSlice(bucket_size=100)", KnapsackSlice(100)),
        ("KnapsackSlice(bucket_size=1)", KnapsackSlice(1)),
        ("QuotaSlice(inner=Greedy)", QuotaSlice(QUOTAS)),
        ("QuotaSlice(inner=Knapsack(100))", QuotaSlice(QUOTAS, KnapsackSlice(100))),
        ("CountQuotaSlice(inner=Greedy)", CountQuotaSlice(COUNTS)),
        (
            "CountConstrainedKnapsack(100)",
            CountConstrainedKnapsackSlice(COUNTS, KnapsackSlice(100)),
        ),
        ("PackerSlice(max_skips=3)", PackerSlice(3)),
        ("PackerSlice(max_skips=None)", PackerSlice(None)),
    ]


BEFORE_ROWS = {
    "GreedySlice": lambda slicers: slicers.GreedySlice(),
    "KnapsackSlice(bucket_size=100)": lambda slicers: slicers.KnapsackSlice(100),
}


def _against(
    before: ModuleType,
    name: str,
    slicer: Slicer,
    scored: list[ScoredItem],
    budget: ContextBudget,
    *,
    repeat: int,
) -> tuple[Timing, Timing]:
    """Time ``slicer`` and the same slicer of ``before`` on equal items, taking turns.

    Both sides get items built afresh in the same order (objects allocated one after the
    other), so neither reads its 10,000 items from memory laid out differently.
    """
    model = before.model  # type: ignore[attr-defined]
    old_scored = [model.ScoredItem(_copy(model, entry.item), entry.score) for entry in scored]
    now_scored = [ScoredItem(_copy(current_model, entry.item), entry.score) for entry in scored]
    call = partial(run_slicer, slicer, now_scored, budget)
    total = sum(entry.item.tokens for entry in scored) // 4
    old_budget = model.ContextBudget(max_tokens=total, target_tokens=total)
    old_slicer = BEFORE_ROWS[name](before.slicers)  # type: ignore[attr-defined]
    old_selected = [item.content for item in old_slicer.slice(old_scored, old_budget).selected]
    now_selected = [item.content for item in call().selected]
    assert sorted(old_selected) == sorted(now_selected), f"different selections: {name}"
    now_timing, old_timing = measure(
        [call, partial(old_slicer.slice, old_scored, old_budget)], repeat
    )
    return now_timing, old_timing


def _copy(model: ModuleType, item: ContextItem) -> object:
    fields = {**item._kwargs(), "kind": item.kind.value, "source": item.source.value}
    return model.ContextItem(item.content, **fields)


def run_slicer(slicer: Slicer, scored: list[ScoredItem], budget: ContextBudget) -> SliceResult:
    return slicer.slice(scored, budget)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000, 50_000])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per measurement")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--before", metavar="REV", help="also time two slicers of revision REV")
    args = parser.parse_args()
    before = None
    if args.before:
        before = load_before(args.before)
        for module in ("model", "slicers"):
            importlib.import_module(f"{before.__name__}.{module}")

    print(f"{machine_summary()}; median of {args.repeat} runs after 1 warm-up")
    header = ["slicer", "items", "median ms", "min ms", "cpu ms", "peak MiB", "selected"]
    header += ["tokens", "target"]
    if before is not None:
        header += ["before cpu ms", "before / now"]
    rows: list[list[str]] = []
    for size in args.sizes:
        scored: list[ScoredItem] = make_scored(size, seed=args.seed)
        budget: ContextBudget = budget_for([s.item for s in scored])
        for name, slicer in slicers():
            call = partial(run_slicer, slicer, scored, budget)
            try:
                timing = measure_one(call, args.repeat)
            except TableTooLargeError as refused:
                note = (
                    f"refused: table {refused.table_bytes / 2**20:,.0f} MiB > cap "
                    f"{refused.limit_bytes / 2**20:,.0f} MiB ({refused.items:,} items x "
                    f"{refused.capacity + 1:,} cells)"
                )
                rows.append([name, f"{size:,}", note, "", "", "", "", "", ""])
                continue
            result = call()
            tokens = sum(item.tokens for item in result.selected)
            row = [
                name,
                f"{size:,}",
                f"{timing.median_ms:.2f}",
                f"{timing.min_ms:.2f}",
                f"{timing.cpu_ms:.2f}",
                f"{peak_mib(call):.2f}",
                f"{len(result.selected):,}",
                f"{tokens:,}",
                f"{budget.target_tokens:,}",
            ]
            if before is not None and name in BEFORE_ROWS:
                now_timing, old_timing = _against(
                    before, name, slicer, scored, budget, repeat=args.repeat
                )
                # The paired run's own times: both sides measured in the same rounds.
                row[4] = f"{now_timing.cpu_ms:.2f}"
                row += [f"{old_timing.cpu_ms:.2f}", f"{old_timing.cpu_ms / now_timing.cpu_ms:.2f}x"]
            rows.append(row)
    print(format_table(header, rows))


if __name__ == "__main__":
    main()
