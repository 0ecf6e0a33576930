"""Every benchmark in one command: scorers, slicers and the full pipeline, 100 to 100,000 items.

    python benchmarks/run_all.py [--quick] [--compare] [--sizes 100 1000 ...] [--repeat N]
                                 [--json PATH] [--seed N]

All rows use the shared workload (``workload.py``) and the shared harness (``_harness.py``):
median, minimum and median CPU time of ``--repeat`` timed runs after one warm-up run (fewer at
100,000 items), and peak memory from a separate tracemalloc pass.

* scorers: each scorer alone over all items (``score_array``);
* slicers: each slicer alone on the score-sorted items, budget 25 % of their tokens;
* pipeline: CompositeScorer (recency 3, priority 2, kind 1, frequency 1), UShapedPlacer,
  deduplication on, with GreedySlice and with KnapsackSlice(100); ``run`` (diagnostics off)
  and ``dry_run`` (full report) take turns.

``--compare`` also runs the literal baseline (``baseline.py``: the specification's per-item
pseudocode, with its O(N^2) relative scorers and the pure-Python knapsack DP) on the same inputs
and prints baseline time, optimised time and their ratio per row, and asserts that both select
the same items in the same order (same scores, for the scorers). The baseline is run a few
times at 100 and 1,000 items and once at 10,000 items (the run's stage clock gives the
scorers' shares); where running it would take minutes (the O(N^2) rows at 100,000 items, the
knapsack and ScaledScorer at 10,000) its time is estimated from the largest measured size by
its complexity and marked ``est.``, with no selection check.

``--quick`` (well under a minute): sizes 100, 1,000 and 10,000, three timed runs, the baseline
estimated at 10,000 items.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import numpy as np

import baseline
from _harness import Timing, format_table, machine_summary, measure, measure_one, peak_mib
from bench_pipeline import build
from bench_slicers import slicers
from pycupel.errors import TableTooLargeError
from pycupel.model import ContextBudget, ContextItem, ScoredItem
from pycupel.scorers import (
    CompositeScorer,
    DecayScorer,
    ExponentialDecay,
    FixedClock,
    FrequencyScorer,
    KindScorer,
    MetadataKeyScorer,
    MetadataTrustScorer,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    ScaledScorer,
    TagScorer,
)
from pycupel.scorers.base import BaseScorer
from pycupel.slicers import GreedySlice, KnapsackSlice, Slicer
from workload import DEFAULT_SEED, TAG_VOCABULARY, budget_for, make_items

TAG_WEIGHTS = {tag: float(1 + index % 5) for index, tag in enumerate(TAG_VOCABULARY[:10])}
DECAY_NOW = datetime(2025, 1, 1, tzinfo=UTC)
BASELINE_KNAPSACK_BUCKET = 100
T = TypeVar("T")


@dataclass
class Row:
    """One line of the report."""

    section: str
    name: str
    items: int
    median_ms: float | None = None
    min_ms: float | None = None
    cpu_ms: float | None = None
    runs: int = 0
    peak_mib: float | None = None
    baseline_ms: float | None = None
    baseline_runs: int = 0
    baseline_estimated: bool = False
    identical: bool | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        if self.baseline_ms is None or not self.median_ms:
            return None
        return self.baseline_ms / self.median_ms


@dataclass
class Settings:
    sizes: list[int]
    repeat: int
    compare: bool
    seed: int
    baseline_run_limit: int
    """Largest size at which the O(N^2) baseline is run (above it: estimated)."""


# --------------------------------------------------------------------------- components


def scorers() -> list[tuple[str, BaseScorer]]:
    """The scorers measured alone, in table order."""
    return [
        ("RecencyScorer", RecencyScorer()),
        ("PriorityScorer", PriorityScorer()),
        ("KindScorer", KindScorer()),
        ("TagScorer(10 tags)", TagScorer(TAG_WEIGHTS)),
        ("FrequencyScorer", FrequencyScorer()),
        ("ReflexiveScorer", ReflexiveScorer()),
        ("CompositeScorer(pipeline's)", pipeline_scorer()),
        ("ScaledScorer(TagScorer)", ScaledScorer(TagScorer(TAG_WEIGHTS))),
        (
            "DecayScorer(exponential 30 d)",
            DecayScorer(FixedClock(DECAY_NOW), ExponentialDecay(timedelta(days=30))),
        ),
        ("MetadataTrustScorer", MetadataTrustScorer()),
        ("MetadataKeyScorer", MetadataKeyScorer("origin", "rag", 1.5)),
    ]


def pipeline_scorer() -> CompositeScorer:
    return CompositeScorer(
        [
            (RecencyScorer(), 3.0),
            (PriorityScorer(), 2.0),
            (KindScorer(), 1.0),
            (FrequencyScorer(), 1.0),
        ]
    )


def tag_score(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
    """TagScorer for the baseline: the configured weights an item's tags match, over their sum."""
    total = sum(TAG_WEIGHTS.values())
    matched = 0.0
    for tag in item.tags:
        if tag in TAG_WEIGHTS:
            matched += TAG_WEIGHTS[tag]
    return min(matched / total, 1.0)


def baseline_composite(clock: baseline.StageClock | None = None) -> baseline.Scorer:
    return baseline.composite(
        [
            ("RecencyScorer", baseline.recency_score, 3.0),
            ("PriorityScorer", baseline.priority_score, 2.0),
            ("KindScorer", baseline.kind_scorer(), 1.0),
            ("FrequencyScorer", baseline.frequency_score, 1.0),
        ],
        clock,
    )


BASELINE_SCORERS: dict[str, Callable[[], baseline.Scorer]] = {
    "RecencyScorer": lambda: baseline.recency_score,
    "PriorityScorer": lambda: baseline.priority_score,
    "KindScorer": baseline.kind_scorer,
    "FrequencyScorer": lambda: baseline.frequency_score,
    "CompositeScorer(pipeline's)": baseline_composite,
    "ScaledScorer(TagScorer)": lambda: baseline.scaled(tag_score),
}
"""The scorers with a literal baseline (the relative ones and the composite)."""

BASELINE_SLICERS: dict[str, baseline.Slicer] = {
    "GreedySlice": baseline.greedy_slice,
    "KnapsackSlice(bucket_size=100)": partial(
        baseline.knapsack_slice, bucket_size=BASELINE_KNAPSACK_BUCKET
    ),
}
LINEAR_BASELINES = {"KindScorer"}
"""Baseline scorers that are O(N) (absolute scorers): cheap enough to run at every size."""
QUADRATIC_SLICERS = {"KnapsackSlice(bucket_size=100)"}
"""Baseline slicers whose cost grows with N^2 here (N items times a capacity that grows with N)."""


def baseline_score_all(scorer: baseline.Scorer, items: Sequence[ContextItem]) -> list[float]:
    return [scorer(item, items) for item in items]


def repeats(settings: Settings, size: int) -> int:
    """Timed runs for a size: three times as many for the sub-millisecond rows, which a
    moment of load on a shared machine disturbs most; fewer at 100,000 items."""
    if size <= 1_000:
        return 3 * settings.repeat
    return settings.repeat if size <= 10_000 else max(3, settings.repeat // 2)


def fill(row: Row, timing: Timing) -> None:
    row.median_ms, row.min_ms, row.cpu_ms, row.runs = (
        timing.median_ms,
        timing.min_ms,
        timing.cpu_ms,
        timing.runs,
    )


def same_items(left: Sequence[ContextItem], right: Sequence[ContextItem]) -> bool:
    return len(left) == len(right) and all(a is b for a, b in zip(left, right, strict=True))


def timed_baseline(call: Callable[[], T], runs: int) -> tuple[Timing, T]:
    """Time ``runs`` runs of a (slow) baseline call without warm-up; return the last result."""
    results: list[T] = []
    timing = measure_one(lambda: results.append(call()), runs, warmup=0)
    return timing, results[-1]


def baseline_repeats(size: int) -> int:
    return 3 if size <= 1_000 else 1


def estimate(rows: list[Row], row: Row, exponent: float = 2.0) -> None:
    """Estimate ``row``'s baseline from the largest smaller size measured for the same name."""
    measured = [
        r
        for r in rows
        if r.section == row.section
        and r.name == row.name
        and r.items < row.items
        and r.baseline_ms is not None
        and not r.baseline_estimated
    ]
    if not measured:
        row.notes.append("baseline skipped")
        return
    source = max(measured, key=lambda r: r.items)
    assert source.baseline_ms is not None
    row.baseline_ms = source.baseline_ms * (row.items / source.items) ** exponent
    row.baseline_estimated = True
    row.notes.append(f"baseline est. from {source.items:,} x (N ratio)^{exponent:g}")


# --------------------------------------------------------------------------- sections


def bench_scorers(settings: Settings, size: int, items: tuple[ContextItem, ...]) -> list[Row]:
    rows = []
    for name, scorer in scorers():
        row = Row("scorer", name, size)
        call = partial(scorer.score_array, items)
        fill(row, measure_one(call, repeats(settings, size)))
        row.peak_mib = peak_mib(call)
        rows.append(row)
    return rows


def compare_scorers(
    settings: Settings,
    size: int,
    *,
    items: tuple[ContextItem, ...],
    rows: list[Row],
    all_rows: list[Row],
    stage_seconds: dict[str, float] | None,
) -> None:
    """Fill the baseline columns of this size's scorer rows."""
    for row in rows:
        factory = BASELINE_SCORERS.get(row.name)
        if factory is None:
            continue
        linear = row.name in LINEAR_BASELINES
        if linear or (size <= settings.baseline_run_limit and size <= 1_000):
            literal = factory()
            timing, expected = timed_baseline(
                partial(baseline_score_all, literal, items), baseline_repeats(size)
            )
            row.baseline_ms, row.baseline_runs = timing.median_ms, timing.runs
            ours = next(s for n, s in scorers() if n == row.name).score_all(items)
            row.identical = expected == ours
            assert row.identical, f"{row.name} at {size}: scores differ from the baseline"
        elif stage_seconds is not None and row.name in stage_seconds:
            row.baseline_ms = stage_seconds[row.name] * 1000.0
            row.baseline_runs = 1
            row.notes.append("baseline: its share of the pipeline baseline run")
        else:
            estimate(all_rows, row)


def bench_slicers(
    settings: Settings, size: int, items: list[ContextItem], all_rows: list[Row]
) -> list[Row]:
    scorer = pipeline_scorer()
    scores = scorer.score_array(items)
    order = np.argsort(-scores, kind="stable")
    scored = [ScoredItem(items[i], float(scores[i])) for i in order.tolist()]
    budget = budget_for(items)
    rows = []
    for name, slicer in slicers():
        row = Row("slicer", name, size)
        rows.append(row)
        call = partial(slicer.slice, scored, budget)
        try:
            fill(row, measure_one(call, repeats(settings, size)))
        except TableTooLargeError as refused:
            row.notes.append(
                f"refused: table {refused.table_bytes / 2**20:,.0f} MiB > cap "
                f"{refused.limit_bytes / 2**20:,.0f} MiB"
            )
            continue
        row.peak_mib = peak_mib(call)
        if settings.compare:
            compare_slicer(
                settings, row, slicer=slicer, scored=scored, budget=budget, all_rows=all_rows
            )
    return rows


def compare_slicer(
    settings: Settings,
    row: Row,
    *,
    slicer: Slicer,
    scored: list[ScoredItem],
    budget: ContextBudget,
    all_rows: list[Row],
) -> None:
    literal = BASELINE_SLICERS.get(row.name)
    if literal is None:
        return
    quadratic = row.name in QUADRATIC_SLICERS
    if quadratic and row.items > min(1_000, settings.baseline_run_limit):
        estimate(all_rows, row)
        return
    pairs = [(entry.item, entry.score) for entry in scored]
    timing, chosen = timed_baseline(partial(literal, pairs, budget), baseline_repeats(row.items))
    row.baseline_ms, row.baseline_runs = timing.median_ms, timing.runs
    row.identical = same_items(chosen, slicer.slice(scored, budget).selected)
    assert row.identical, f"{row.name} at {row.items}: selection differs from the baseline"


def bench_pipelines(
    settings: Settings, size: int, items: list[ContextItem], all_rows: list[Row]
) -> tuple[list[Row], dict[str, float] | None]:
    """Rows for run and dry_run with both slicers, and the baseline's stage clock if run."""
    rows: list[Row] = []
    stage_seconds: dict[str, float] | None = None
    for slicer_name, slicer in (("greedy", GreedySlice()), ("knapsack(100)", KnapsackSlice(100))):
        pipeline = build(items, slicer)
        run_row = Row("pipeline", f"{slicer_name} run", size)
        dry_row = Row("pipeline", f"{slicer_name} dry_run", size)
        rows += [run_row, dry_row]
        run, dry_run = partial(pipeline.run, items), partial(pipeline.dry_run, items)
        try:
            run_timing, dry_timing = measure([run, dry_run], repeats(settings, size), warmup=2)
        except TableTooLargeError as refused:
            note = (
                f"refused: table {refused.table_bytes / 2**20:,.0f} MiB > cap "
                f"{refused.limit_bytes / 2**20:,.0f} MiB"
            )
            run_row.notes.append(note)
            dry_row.notes.append(note)
            continue
        fill(run_row, run_timing)
        fill(dry_row, dry_timing)
        run_row.peak_mib = peak_mib(run)
        dry_row.peak_mib = peak_mib(dry_run)
        dry_row.notes.append(f"dry_run/run {dry_timing.median_ms / run_timing.median_ms:.2f}")
        # Diagnostics must not change the selection.
        assert same_items(run().items, dry_run().items)
        if not settings.compare:
            continue
        is_greedy = slicer_name == "greedy"
        runnable = size <= settings.baseline_run_limit and (is_greedy or size <= 1_000)
        if runnable:
            clock = baseline.StageClock()
            literal_slicer: baseline.Slicer = (
                baseline.greedy_slice
                if is_greedy
                else BASELINE_SLICERS["KnapsackSlice(bucket_size=100)"]
            )
            literal = baseline.BaselinePipeline(
                pipeline.budget, baseline_composite(clock), literal_slicer, clock=clock
            )
            runs = baseline_repeats(size)
            started = time.perf_counter()
            timing, placed = timed_baseline(partial(literal.run, items), runs)
            elapsed = time.perf_counter() - started
            run_row.baseline_ms, run_row.baseline_runs = timing.median_ms, timing.runs
            run_row.identical = same_items(placed, run().items)
            assert run_row.identical, f"{run_row.name} at {size}: differs from the baseline"
            if is_greedy:
                # Per-run shares of the scorers, for the scorer rows of this size.
                stage_seconds = {name: seconds / runs for name, seconds in clock.seconds.items()}
                stage_seconds["CompositeScorer(pipeline's)"] = stage_seconds["score"]
            if elapsed > 20:
                run_row.notes.append(f"baseline: {runs} run(s), {elapsed:.0f} s in all")
        else:
            estimate(all_rows, run_row)
    return rows, stage_seconds


# --------------------------------------------------------------------------- output


def cell(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def render(rows: list[Row], compare: bool) -> str:
    header = ["section / name", "items", "median ms", "min ms", "cpu ms", "runs", "peak MiB"]
    if compare:
        header += ["baseline ms", "ratio", "same"]
    header.append("notes")
    lines = []
    for row in rows:
        cells = [
            f"{row.section}: {row.name}",
            f"{row.items:,}",
            cell(row.median_ms),
            cell(row.min_ms),
            cell(row.cpu_ms),
            str(row.runs) if row.runs else "",
            cell(row.peak_mib),
        ]
        if compare:
            mark = "~" if row.baseline_estimated else ""
            ratio = row.ratio
            cells += [
                "" if row.baseline_ms is None else f"{mark}{row.baseline_ms:,.1f}",
                "" if ratio is None else f"{mark}{ratio:,.0f}x",
                "" if row.identical is None else ("yes" if row.identical else "NO"),
            ]
        cells.append("; ".join(row.notes))
        lines.append(cells)
    return format_table(header, lines)


def find(rows: list[Row], section: str, name: str, items: int) -> Row | None:
    for row in rows:
        if (row.section, row.name, row.items) == (section, name, items):
            return row
    return None


def targets(rows: list[Row]) -> list[str]:
    """The issue's targets, each with its measured value (median; min and CPU beside it)."""
    lines = []

    def check(label: str, row: Row | None, limit_ms: float) -> None:
        if row is None or row.median_ms is None:
            return
        verdict = "holds" if row.median_ms <= limit_ms else "MISSED"
        lines.append(
            f"{verdict:6}  {label}: median {row.median_ms:.2f} ms (min {cell(row.min_ms)}, "
            f"cpu {cell(row.cpu_ms)}) <= {limit_ms:g} ms"
        )

    for size, limit in ((1_000, 2.0), (10_000, 25.0), (100_000, 400.0)):
        check(
            f"greedy pipeline run, {size:,} items",
            find(rows, "pipeline", "greedy run", size),
            limit,
        )
    knapsack = find(rows, "slicer", "KnapsackSlice(bucket_size=1)", 1_000)
    if knapsack is not None and knapsack.median_ms is not None and knapsack.peak_mib is not None:
        ok = knapsack.median_ms <= 1000.0 and knapsack.peak_mib <= 64.0
        lines.append(
            f"{'holds' if ok else 'MISSED':6}  knapsack slice, 1,000 items, bucket 1: median "
            f"{knapsack.median_ms:.1f} ms <= 1000 ms, peak {knapsack.peak_mib:.1f} MiB <= 64 MiB"
        )
    run, dry = (find(rows, "pipeline", f"greedy {k}", 10_000) for k in ("run", "dry_run"))
    if run and dry and run.median_ms and dry.median_ms and run.cpu_ms and dry.cpu_ms:
        ratio, cpu_ratio = dry.median_ms / run.median_ms, dry.cpu_ms / run.cpu_ms
        lines.append(
            f"{'holds' if ratio <= 2.0 else 'MISSED':6}  dry_run / run at 10,000 items: "
            f"{ratio:.2f} (cpu {cpu_ratio:.2f}) <= 2"
        )
    if run is not None and run.ratio is not None:
        mark = " (baseline estimated)" if run.baseline_estimated else ""
        lines.append(
            f"{'holds' if run.ratio >= 50 else 'MISSED':6}  greedy pipeline vs literal baseline "
            f"at 10,000 items: {run.ratio:,.0f}x >= 50x{mark}"
        )
    return lines


# --------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 to 10,000 items, fewer runs")
    parser.add_argument("--compare", action="store_true", help="also run the literal baseline")
    parser.add_argument("--sizes", type=int, nargs="+", help="item counts (default 100 .. 100,000)")
    parser.add_argument("--repeat", type=int, help="timed runs per row (default 7, quick 3)")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON ('-': stdout)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)

    sizes = args.sizes or ([100, 1_000, 10_000] if args.quick else [100, 1_000, 10_000, 100_000])
    settings = Settings(
        sizes=sorted(sizes),
        repeat=args.repeat or (3 if args.quick else 7),
        compare=args.compare,
        seed=args.seed,
        baseline_run_limit=1_000 if args.quick else 10_000,
    )
    started = time.perf_counter()
    out = sys.stderr if args.json == "-" else sys.stdout
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {machine_summary()}", file=out)
    print(
        f"median / min / median CPU of {settings.repeat} timed runs after a warm-up "
        f"({3 * settings.repeat} up to 1,000 items, {max(3, settings.repeat // 2)} at 100,000); "
        f"peak memory from a separate tracemalloc pass",
        file=out,
    )
    rows: list[Row] = []
    for size in settings.sizes:
        items = make_items(size, seed=settings.seed)
        print(f"... {size:,} items ({time.perf_counter() - started:.0f} s)", file=out, flush=True)
        pipeline_rows, stage_seconds = bench_pipelines(settings, size, items, rows)
        scorer_rows = bench_scorers(settings, size, tuple(items))
        if settings.compare:
            compare_scorers(
                settings,
                size,
                items=tuple(items),
                rows=scorer_rows,
                all_rows=rows,
                stage_seconds=stage_seconds,
            )
        rows += scorer_rows
        rows += bench_slicers(settings, size, items, rows)
        rows += pipeline_rows
    # Grouped by section, then by name in the order first measured, then by size.
    sections = {"scorer": 0, "slicer": 1, "pipeline": 2}
    names: dict[str, int] = {}
    for row in rows:
        names.setdefault(row.name, len(names))
    rows.sort(key=lambda r: (sections[r.section], names[r.name], r.items))
    print(file=out)
    print(render(rows, settings.compare), file=out)
    print(file=out)
    for line in targets(rows):
        print(line, file=out)
    total = time.perf_counter() - started
    print(f"\ntotal {total:.0f} s", file=out)
    if args.json:
        document = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": machine_summary(),
            "settings": asdict(settings),
            "seconds": round(total, 1),
            "rows": [asdict(row) | {"ratio": row.ratio} for row in rows],
            "targets": targets(rows),
        }
        text = json.dumps(document, indent=2)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
