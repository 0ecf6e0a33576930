"""Per-call overhead: the benchmark pipeline from 1 to 10,000 items, hot loop.

Usage:
    python benchmarks/bench_overhead.py [--sizes 1 10 30 100 1000 10000] [--repeat 101]
    python benchmarks/bench_overhead.py --before 8877a61    # and that revision, interleaved

The pipeline is the benchmark composite (recency 3, priority 2, kind 1, frequency 1), greedy,
U-shaped, deduplication on, diagnostics off, on the shared workload (``workload.py``). Each size
is timed in a hot loop: one timed run is ``batch`` calls of ``Pipeline.run`` (more calls for
small inputs, so each timed run lasts about a millisecond or more), reported per call as the
median wall time, the minimum wall time and the median CPU time.

With ``--before REV`` the same pipeline of pycupel as of git revision ``REV`` (``_before.py``)
runs in the same process, the two taking turns, on equal items; every row checks that both
select the same contents in the same order, and ``before / now`` is the ratio of their median
CPU times.

The Rust reference crate runs the same pipeline on the same items in ``bench_rust.py`` (the
crate is built outside this repository), its hot loop taking turns with pycupel's.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

from _before import load_before  # noqa: E402
from _harness import format_table, machine_summary, measure  # noqa: E402
from bench_pipeline import build  # noqa: E402
from pycupel.model import ContextItem  # noqa: E402
from workload import make_items  # noqa: E402


def _pipeline_of(package: ModuleType, items: list[ContextItem]) -> tuple[object, list[object]]:
    """The benchmark pipeline and equal items, both from ``package`` (another pycupel)."""
    scorers = package.scorers
    copies = [
        package.model.ContextItem(
            item.content,
            **{**item._kwargs(), "kind": item.kind.value, "source": item.source.value},
        )
        for item in items
    ]
    total = sum(item.tokens for item in items) // 4
    pipeline = package.pipeline.Pipeline(
        budget=package.model.ContextBudget(max_tokens=total, target_tokens=total),
        scorer=scorers.CompositeScorer(
            [
                (scorers.RecencyScorer(), 3.0),
                (scorers.PriorityScorer(), 2.0),
                (scorers.KindScorer(), 1.0),
                (scorers.FrequencyScorer(), 1.0),
            ]
        ),
        slicer=package.slicers.GreedySlice(),
        placer=package.placers.UShapedPlacer(),
        deduplicate=True,
    )
    return pipeline, copies


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 30, 100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=0, help="timed runs (default by size)")
    parser.add_argument("--before", metavar="REV", help="also time pycupel at git revision REV")
    args = parser.parse_args(argv)
    print(machine_summary())
    before = None
    if args.before:
        before = load_before(args.before)
        for name in ("model", "pipeline", "scorers", "slicers", "placers"):
            importlib.import_module(f"{before.__name__}.{name}")
    rows = []
    for size in args.sizes:
        items = make_items(size)
        pipeline = build(items)
        batch = max(1, 2000 // max(size, 1))

        def hot(run: Callable[[object], object], items: object, batch: int = batch) -> None:
            for _ in range(batch):
                run(items)

        calls = [lambda pipeline=pipeline, items=items: hot(pipeline.run, items)]
        if before is not None:
            old_pipeline, old_items = _pipeline_of(before, items)
            new_contents = [item.content for item in pipeline.run(items).items]
            old_contents = [item.content for item in old_pipeline.run(old_items).items]  # type: ignore[attr-defined]
            assert new_contents == old_contents, f"different selections at {size} items"
            calls.append(lambda p=old_pipeline, i=old_items: hot(p.run, i))  # type: ignore[attr-defined]
        repeat = args.repeat or (101 if size <= 100 else 21 if size <= 1000 else 7)
        timings = measure(calls, repeat, warmup=3)
        per_call = 1000.0 / batch  # ms per timed run -> us per call
        now = timings[0]
        row = [
            f"{size:,}",
            f"{now.median_ms * per_call:,.1f}",
            f"{now.min_ms * per_call:,.1f}",
            f"{now.cpu_ms * per_call:,.1f}",
        ]
        if before is not None:
            old = timings[1]
            speedup = old.cpu_ms / now.cpu_ms
            row += [f"{old.cpu_ms * per_call:,.1f}", f"{speedup:.2f}x"]
        rows.append(row)
    header = ["items", "now median us", "min us", "CPU us"]
    if before is not None:
        header += ["before CPU us", "before / now"]
    print(format_table(header, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
