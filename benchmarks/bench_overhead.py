"""Per-call overhead: the benchmark pipeline from 1 to 10,000 items, hot loop.

Usage:
    python benchmarks/bench_overhead.py [--sizes 1 10 30 100 1000 10000] [--repeat 201]

The pipeline is the benchmark composite (recency 3, priority 2, kind 1, frequency 1), greedy,
U-shaped, deduplication on, diagnostics off, on the shared workload (``workload.py``). Each size
is timed in a hot loop: one timed run is ``batch`` calls of ``Pipeline.run`` (more calls for
small inputs, so each timed run lasts about a millisecond or more), reported per call as the
median wall time, the minimum wall time and the median CPU time.

The Rust reference crate's figures beside them are the ones measured for the same pipeline and
workload in the same kind of hot loop (see ``benchmarks/RESULTS.md``); the crate is built
outside this repository.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

from _harness import format_table, machine_summary, measure_one  # noqa: E402
from bench_pipeline import build  # noqa: E402
from workload import make_items  # noqa: E402

# Rust crate, hot loop, microseconds per call (benchmarks/RESULTS.md).
RUST_US = {1: 0.6, 10: 6.8, 30: 41.0, 100: 263.0, 1000: 25_000.0, 10000: 2_670_000.0}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 30, 100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=0, help="timed runs (default by size)")
    args = parser.parse_args(argv)
    print(machine_summary())
    rows = []
    for size in args.sizes:
        items = make_items(size)
        pipeline = build(items)
        batch = max(1, 2000 // max(size, 1))

        def call(pipeline: object = pipeline, items: object = items, batch: int = batch) -> None:
            run = pipeline.run  # type: ignore[attr-defined]
            for _ in range(batch):
                run(items)

        repeat = args.repeat or (101 if size <= 100 else 21 if size <= 1000 else 7)
        timing = measure_one(call, repeat, warmup=3)
        per_call = 1000.0 / batch  # ms per timed run -> us per call
        median_us = timing.median_ms * per_call
        cpu_us = timing.cpu_ms * per_call
        rust = RUST_US.get(size)
        rows.append(
            [
                f"{size:,}",
                f"{median_us:,.1f}",
                f"{timing.min_ms * per_call:,.1f}",
                f"{cpu_us:,.1f}",
                "" if rust is None else f"{rust:,.1f}",
                "" if rust is None else f"{rust / cpu_us:.2f}x",
            ]
        )
    header = ["items", "median us", "min us", "CPU us", "Rust us", "Rust / pycupel (CPU)"]
    print(format_table(header, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
