"""Time Pipeline.run and Pipeline.dry_run from 100 to 100,000 items.

Pipeline: CompositeScorer (recency 3, priority 2, kind 1, frequency 1), GreedySlice,
UShapedPlacer, deduplication on, on the shared synthetic workload (``workload.py``).
Timings are medians (and the best run) after warm-up; peak memory (tracemalloc) is measured
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
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from workload import budget_for, make_items

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


def timings_ms(call: Callable[[], object], repeat: int, warmup: int = 3) -> tuple[float, float]:
    """Median and best of ``repeat`` timed calls, in milliseconds, after ``warmup`` calls."""
    for _ in range(warmup):
        call()
    samples = []
    gc.collect()
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000.0, min(samples) * 1000.0


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
        f"{'items':>8} {'run ms':>9} {'(best)':>8} {'dry ms':>9} {'(best)':>8} {'dry/run':>8} "
        f"{'run MiB':>8} {'dry MiB':>8}"
    )
    for size in args.sizes:
        items = make_items(size, seed=args.seed)
        pipeline = build(items)
        repeat = args.repeat if size <= 10_000 else max(3, args.repeat // 4)
        run = partial(pipeline.run, items)
        dry_run = partial(pipeline.dry_run, items)
        run_ms, run_best = timings_ms(run, repeat)
        dry_ms, dry_best = timings_ms(dry_run, repeat)
        run_peak = peak_mib(run)
        dry_peak = peak_mib(dry_run)
        print(
            f"{size:>8,} {run_ms:>9.2f} {run_best:>8.2f} {dry_ms:>9.2f} {dry_best:>8.2f} "
            f"{dry_ms / run_ms:>8.2f} "
            f"{run_peak:>8.2f} {dry_peak:>8.2f}"
        )


if __name__ == "__main__":
    main()
