"""Time every slicer alone on the shared workload, from 100 to 50,000 items.

Each slicer receives ``make_scored(n)`` (score-sorted) and the effective budget
``budget_for(items)`` (25 % of the total tokens). Times are the median of ``--repeat`` runs
after one warm-up run; peak memory is measured with tracemalloc in a separate run so tracing
does not distort the timings. A knapsack whose table would exceed its memory cap is refused
before it allocates anything; its row shows the refusal and the size it would have needed.

    python benchmarks/bench_slicers.py [--sizes 100 1000 10000 50000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import gc
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import numpy as np

from pycupel.errors import TableTooLargeError
from pycupel.model import ContextBudget, ContextKind, ScoredItem
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


def measure(
    call: Callable[[], SliceResult], repeat: int
) -> tuple[float, float, float, SliceResult]:
    """(median wall ms, min wall ms, median CPU ms, last result) after one warm-up run.

    Wall time (perf_counter) is the measure; CPU time (process_time) is shown beside it
    because on a shared, loaded machine it is far less disturbed by preemption.
    """
    result = call()
    gc.collect()
    wall = []
    cpu = []
    for _ in range(repeat):
        started = time.perf_counter()
        started_cpu = time.process_time()
        result = call()
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started)
    median = statistics.median
    return median(wall) * 1000.0, min(wall) * 1000.0, median(cpu) * 1000.0, result


def peak_mib(call: Callable[[], object]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / (1024 * 1024)


def row(name: str, size: int, cells: Sequence[str]) -> str:
    return f"{name:<33} {size:>7,} " + " ".join(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000, 50_000])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per measurement")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args()

    print(
        f"Python {platform.python_version()}, numpy {np.__version__}, "
        f"{platform.machine()}; median of {args.repeat} runs after 1 warm-up"
    )
    header = [
        "median ms",
        "   min ms",
        "   cpu ms",
        "peak MiB",
        "selected",
        "   tokens",
        "  target",
    ]
    print(row("slicer", 0, header).replace("      0", "  items"))
    for size in args.sizes:
        scored: list[ScoredItem] = make_scored(size, seed=args.seed)
        budget: ContextBudget = budget_for([s.item for s in scored])
        for name, slicer in slicers():

            def call(
                slicer: Slicer = slicer,
                scored: list[ScoredItem] = scored,
                budget: ContextBudget = budget,
            ) -> SliceResult:
                return slicer.slice(scored, budget)

            try:
                median, fastest, cpu, result = measure(call, args.repeat)
            except TableTooLargeError as refused:
                print(
                    row(
                        name,
                        size,
                        [
                            f"refused: table {refused.table_bytes / 2**20:,.0f} MiB > "
                            f"cap {refused.limit_bytes / 2**20:,.0f} MiB "
                            f"({refused.items:,} items x {refused.capacity + 1:,} cells)"
                        ],
                    )
                )
                continue
            peak = peak_mib(call)
            tokens = sum(item.tokens for item in result.selected)
            print(
                row(
                    name,
                    size,
                    [
                        f"{median:>9.2f}",
                        f"{fastest:>9.2f}",
                        f"{cpu:>9.2f}",
                        f"{peak:>8.2f}",
                        f"{len(result.selected):>8,}",
                        f"{tokens:>9,}",
                        f"{budget.target_tokens:>8,}",
                    ],
                )
            )
        print()


if __name__ == "__main__":
    main()
