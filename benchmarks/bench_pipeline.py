"""Time Pipeline.run and Pipeline.dry_run from 100 to 100,000 items.

Pipeline: CompositeScorer (recency 3, priority 2, kind 1, frequency 1), GreedySlice,
UShapedPlacer, deduplication on, on the shared synthetic workload (``workload.py``).
Timings are medians of wall-clock and CPU time after warm-up; peak memory (tracemalloc) is measured
in a separate pass so tracing does not distort the timings.

    python benchmarks/bench_pipeline.py [--sizes 100 1000 10000 100000] [--repeat 21]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from pycupel.model import ContextItem
from pycupel.pipeline import Pipeline
from pycupel.placers import UShapedPlacer
from pycupel.scorers import (
    CompositeScorer,
    FrequencyScorer,
    KindScorer,
    PriorityScorer,
    RecencyScorer,
)
from pycupel.slicers import GreedySlice
from workload import budget_for, make_items


def build(items: list[ContextItem]) -> Pipeline:
    scorer = CompositeScorer(
        [
            (RecencyScorer(), 3.0),
            (PriorityScorer(), 2.0),
            (KindScorer(), 1.0),
            (FrequencyScorer(), 1.0),
        ]
    )
    return Pipeline(
        budget=budget_for(items),
        scorer=scorer,
        slicer=GreedySlice(),
        placer=UShapedPlacer(),
        deduplicate=True,
    )


def timings_ms(
    calls: Sequence[Callable[[], object]], repeat: int, warmup: int = 3
) -> list[tuple[float, float]]:
    """Median wall-clock and CPU time (ms) of each call over ``repeat`` rounds, after warm-up.

    The calls take turns within each round, so a change in machine load affects them alike
    and their ratio stays meaningful. CPU time is shown because a busy machine inflates wall
    time only.
    """
    for _ in range(warmup):
        for call in calls:
            call()
    wall: list[list[float]] = [[] for _ in calls]
    cpu: list[list[float]] = [[] for _ in calls]
    gc.collect()
    for _ in range(repeat):
        for index, call in enumerate(calls):
            started, started_cpu = time.perf_counter(), time.process_time()
            call()
            cpu[index].append(time.process_time() - started_cpu)
            wall[index].append(time.perf_counter() - started)
    return [
        (statistics.median(w) * 1000.0, statistics.median(c) * 1000.0)
        for w, c in zip(wall, cpu, strict=True)
    ]


def peak_mib(call: Callable[[], object]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / (1024 * 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=21, help="timed runs per size (<=10k)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    print(
        f"{'items':>8} {'run ms':>9} {'(cpu)':>8} {'dry ms':>9} {'(cpu)':>8} {'dry/run':>8} "
        f"{'run MiB':>8} {'dry MiB':>8}"
    )
    for size in args.sizes:
        items = make_items(size, seed=args.seed)
        pipeline = build(items)
        repeat = args.repeat if size <= 10_000 else max(3, args.repeat // 4)
        run = partial(pipeline.run, items)
        dry_run = partial(pipeline.dry_run, items)
        (run_ms, run_cpu), (dry_ms, dry_cpu) = timings_ms([run, dry_run], repeat)
        run_peak = peak_mib(run)
        dry_peak = peak_mib(dry_run)
        print(
            f"{size:>8,} {run_ms:>9.2f} {run_cpu:>8.2f} {dry_ms:>9.2f} {dry_cpu:>8.2f} "
            f"{dry_ms / run_ms:>8.2f} "
            f"{run_peak:>8.2f} {dry_peak:>8.2f}"
        )


if __name__ == "__main__":
    main()
