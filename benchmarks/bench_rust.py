"""The Rust reference crate and pycupel side by side, in one run, on identical items.

Usage:
    python benchmarks/bench_rust.py --crate PATH/TO/crates/cupel [--registry DIR]
        [--sizes 1 10 30 100 1000 10000] [--repeat 21] [--build-dir DIR]

The crate is not part of this repository. ``--crate`` names a checkout of the reference
repository's ``crates/cupel`` (or set ``CUPEL_RS_CRATE``); without it, or without ``cargo``,
the script prints why it skipped and exits 0.

Method:

* A copy of the crate and a small hot-loop driver (``HARNESS`` below) are written to
  ``--build-dir`` (a folder under the system's temporary directory by default) and built with
  ``cargo build --release --offline``. ``--registry DIR`` builds against a local directory of
  crate sources instead of crates.io (for example a distribution's packaged crates) and lets
  the crate's ``thiserror`` requirement accept the 1.x series, which it compiles with unchanged.
* The driver stays running; it reads the workload (``workload.py``: the same items, budget and
  scores as pycupel's benchmarks) from a file and times ``batch`` calls per request with the
  crate's own clock, so process start-up and the pipe are not timed.
* Each timed round asks the crate for one timed run, then times one run of pycupel, so a change
  in machine load hits both alike; rows give medians and minima per call and ``Rust / pycupel``,
  the ratio of the medians (above 1: pycupel is faster).
* Before timing, every row checks that both select the same items in the same order.

Rows: the benchmark pipeline (composite of recency 3, priority 2, kind 1, frequency 1; greedy;
U-shaped; deduplication on; diagnostics off) at each size, then ``GreedySlice`` and
``KnapsackSlice(100)`` alone on the score-sorted items at 1,000 and 10,000 items.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

from _harness import format_table, machine_summary  # noqa: E402
from bench_pipeline import build  # noqa: E402
from pycupel.model import ContextBudget, ContextItem, ScoredItem  # noqa: E402
from pycupel.pipeline import Pipeline  # noqa: E402
from pycupel.slicers import GreedySlice, KnapsackSlice, Slicer  # noqa: E402
from workload import budget_for, make_items, make_scored  # noqa: E402

SEPARATOR = "\x1f"
HARNESS = r"""
// Hot-loop driver for the cupel crate: commands on stdin, answers on stdout.
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::time::Instant;

use chrono::{TimeZone, Utc};
use cupel::{
    CompositeScorer, ContextBudget, ContextItem, ContextItemBuilder, ContextKind, FrequencyScorer,
    GreedySlice, KindScorer, KnapsackSlice, Pipeline, PriorityScorer, RecencyScorer, ScoredItem,
    Slicer, UShapedPlacer,
};

struct Workload {
    items: Vec<ContextItem>,
    scored: Vec<ScoredItem>,
    budget: ContextBudget,
}

// First line: max and target tokens; then one item per line:
// tokens, kind, priority (or empty), comma-separated tags, unix seconds, score, content.
fn load(path: &str) -> Workload {
    let text = std::fs::read_to_string(path).expect("read workload");
    let mut lines = text.lines();
    let head: Vec<i64> = lines.next().unwrap().split('\t').map(|v| v.parse().unwrap()).collect();
    let budget = ContextBudget::new(head[0], head[1], 0, HashMap::new(), 0.0).unwrap();
    let mut items = Vec::new();
    let mut scored = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.splitn(7, '\t').collect();
        let mut b = ContextItemBuilder::new(f[6], f[0].parse::<i64>().unwrap())
            .kind(ContextKind::new(f[1]).unwrap())
            .timestamp(Utc.timestamp_opt(f[4].parse::<i64>().unwrap(), 0).unwrap());
        if !f[2].is_empty() {
            b = b.priority(f[2].parse::<i64>().unwrap());
        }
        if !f[3].is_empty() {
            b = b.tags(f[3].split(',').map(|t| t.to_string()).collect());
        }
        let item = b.build().unwrap();
        scored.push(ScoredItem { item: item.clone(), score: f[5].parse::<f64>().unwrap() });
        items.push(item);
    }
    Workload { items, scored, budget }
}

fn pipeline() -> Pipeline {
    let scorer = CompositeScorer::new(vec![
        (Box::new(RecencyScorer) as Box<dyn cupel::Scorer>, 3.0),
        (Box::new(PriorityScorer), 2.0),
        (Box::new(KindScorer::with_default_weights()), 1.0),
        (Box::new(FrequencyScorer), 1.0),
    ])
    .unwrap();
    Pipeline::builder()
        .scorer(Box::new(scorer))
        .slicer(Box::new(GreedySlice))
        .placer(Box::new(UShapedPlacer))
        .deduplication(true)
        .build()
        .unwrap()
}

fn once(what: &str, w: &Workload, p: &Pipeline, k: &KnapsackSlice) -> Vec<ContextItem> {
    match what {
        "pipeline" => p.run(&w.items, &w.budget).unwrap(),
        "greedy" => GreedySlice.slice(&w.scored, &w.budget).unwrap(),
        "knapsack100" => k.slice(&w.scored, &w.budget).unwrap(),
        _ => panic!("unknown {what}"),
    }
}

fn main() {
    let p = pipeline();
    let k = KnapsackSlice::new(100).unwrap();
    let mut w: Option<Workload> = None;
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines() {
        let line = line.unwrap();
        let parts: Vec<&str> = line.split(' ').collect();
        match parts[0] {
            "load" => {
                w = Some(load(parts[1]));
                writeln!(out, "ok").unwrap();
            }
            "time" => {
                let wl = w.as_ref().unwrap();
                let batch: u32 = parts[2].parse().unwrap();
                let start = Instant::now();
                for _ in 0..batch {
                    std::hint::black_box(once(parts[1], wl, &p, &k));
                }
                writeln!(out, "{}", start.elapsed().as_nanos()).unwrap();
            }
            "select" => {
                let wl = w.as_ref().unwrap();
                let chosen: Vec<String> =
                    once(parts[1], wl, &p, &k).iter().map(|i| i.content().to_string()).collect();
                writeln!(out, "{}", chosen.join("\u{1f}")).unwrap();
            }
            _ => panic!("unknown command {line}"),
        }
        out.flush().unwrap();
    }
}
"""

MANIFEST = """[package]
name = "cupel-hotloop"
version = "0.1.0"
edition = "2024"

[dependencies]
cupel = { path = "../cupel" }
chrono = "0.4"

[workspace]
"""


def _skip(reason: str) -> int:
    print(f"skipped: {reason}")
    return 0


def _build(crate: Path, build_dir: Path, registry: Path | None) -> Path:
    """Copy the crate beside the driver, build both in release mode, return the binary."""
    copy = build_dir / "cupel"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(crate, copy, ignore=shutil.ignore_patterns("target"))
    driver = build_dir / "driver"
    (driver / "src").mkdir(parents=True, exist_ok=True)
    (driver / "src" / "main.rs").write_text(HARNESS, encoding="utf-8")
    (driver / "Cargo.toml").write_text(MANIFEST, encoding="utf-8")
    if registry is not None:
        manifest = copy / "Cargo.toml"
        text = manifest.read_text(encoding="utf-8")
        manifest.write_text(text.replace('thiserror = "2"', 'thiserror = ">=1"'), encoding="utf-8")
        (driver / ".cargo").mkdir(exist_ok=True)
        (driver / ".cargo" / "config.toml").write_text(
            '[source.crates-io]\nreplace-with = "local"\n'
            f'[source.local]\ndirectory = "{registry}"\n',
            encoding="utf-8",
        )
    subprocess.run(["cargo", "build", "--release", "--offline", "--quiet"], cwd=driver, check=True)
    return driver / "target" / "release" / "cupel-hotloop"


class RustDriver:
    """The running hot-loop driver: load a workload, time or show a selection."""

    def __init__(self, binary: Path) -> None:
        self._process = subprocess.Popen(
            [str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def _ask(self, command: str) -> str:
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        self._process.stdin.write(command + "\n")
        self._process.stdin.flush()
        return self._process.stdout.readline().rstrip("\n")

    def load(self, path: Path) -> None:
        assert self._ask(f"load {path}") == "ok"

    def seconds(self, what: str, batch: int) -> float:
        return int(self._ask(f"time {what} {batch}")) / 1e9

    def selection(self, what: str) -> list[str]:
        answer = self._ask(f"select {what}")
        return answer.split(SEPARATOR) if answer else []

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait()


def _write_workload(path: Path, scored: Sequence[ScoredItem], budget: ContextBudget) -> None:
    lines = [f"{budget.max_tokens}\t{budget.target_tokens}"]
    for entry in scored:
        item = entry.item
        assert item.timestamp is not None
        assert "\t" not in item.content
        priority = "" if item.priority is None else str(item.priority)
        seconds = int(item.timestamp.timestamp())
        lines.append(
            f"{item.tokens}\t{item.kind.value}\t{priority}\t{','.join(item.tags)}\t{seconds}\t"
            f"{entry.score!r}\t{item.content}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _time_pair(
    rust: Callable[[], float], python: Callable[[], object], repeat: int
) -> tuple[list[float], list[float], list[float]]:
    """Rust seconds, pycupel wall and CPU seconds for ``repeat`` rounds taking turns."""
    rust_times: list[float] = []
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(2):  # warm-up
        rust()
        python()
    for _ in range(repeat):
        rust_times.append(rust())
        started, started_cpu = time.perf_counter(), time.process_time()
        python()
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started)
    return rust_times, wall, cpu


def _row(
    label: str,
    size: int,
    batch: int,
    timings: tuple[list[float], list[float], list[float]],
    same: bool,
) -> list[str]:
    rust_times, wall, cpu = timings
    per_call = 1e6 / batch
    rust_median = statistics.median(rust_times) * per_call
    python_median = statistics.median(wall) * per_call
    return [
        label,
        f"{size:,}",
        f"{rust_median:,.1f}",
        f"{min(rust_times) * per_call:,.1f}",
        f"{python_median:,.1f}",
        f"{min(wall) * per_call:,.1f}",
        f"{statistics.median(cpu) * per_call:,.1f}",
        f"{rust_median / python_median:,.2f}x",
        "yes" if same else "NO",
    ]


def _batch(size: int) -> int:
    return max(1, 2000 // max(size, 1))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--crate", type=Path, default=os.environ.get("CUPEL_RS_CRATE"))
    parser.add_argument("--registry", type=Path, help="local crate sources instead of crates.io")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 30, 100, 1000, 10000])
    parser.add_argument("--slicer-sizes", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=0, help="timed rounds (default by size)")
    parser.add_argument(
        "--build-dir", type=Path, default=Path(tempfile.gettempdir()) / "cupel-rs-hotloop"
    )
    args = parser.parse_args(argv)
    if shutil.which("cargo") is None:
        return _skip("cargo is not installed")
    if args.crate is None or not (args.crate / "Cargo.toml").is_file():
        return _skip("no crate: pass --crate PATH/TO/crates/cupel (or set CUPEL_RS_CRATE)")
    args.build_dir.mkdir(parents=True, exist_ok=True)
    try:
        binary = _build(args.crate.resolve(), args.build_dir, args.registry)
    except subprocess.CalledProcessError as failed:
        return _skip(f"the crate did not build ({failed})")
    print(machine_summary())
    rust = RustDriver(binary)
    workload_file = args.build_dir / "workload.tsv"
    rows: list[list[str]] = []
    try:
        for size in args.sizes:
            items = make_items(size)
            _write_workload(
                workload_file, [ScoredItem(item, 0.0) for item in items], budget_for(items)
            )
            rust.load(workload_file)
            pipeline = build(items)
            same = rust.selection("pipeline") == [i.content for i in pipeline.run(items).items]
            batch = _batch(size)

            def hot(
                pipeline: Pipeline = pipeline, items: list[ContextItem] = items, batch: int = batch
            ) -> None:
                for _ in range(batch):
                    pipeline.run(items)

            repeat = args.repeat or (51 if size <= 100 else 15 if size <= 1000 else 5)
            timings = _time_pair(partial(rust.seconds, "pipeline", batch), hot, repeat)
            rows.append(_row("pipeline", size, batch, timings, same))
        for size in args.slicer_sizes:
            scored = make_scored(size)
            budget = budget_for([entry.item for entry in scored])
            _write_workload(workload_file, scored, budget)
            rust.load(workload_file)
            for label, what, slicer in (
                ("GreedySlice", "greedy", GreedySlice()),
                ("KnapsackSlice(100)", "knapsack100", KnapsackSlice(100)),
            ):
                if what == "knapsack100" and size > 1000:
                    continue  # the crate refuses tables over 50 million cells
                chosen = slicer.slice(scored, budget).selected
                same = sorted(rust.selection(what)) == sorted(i.content for i in chosen)
                batch = max(1, 20_000 // size)

                def hot_slice(
                    slicer: Slicer = slicer,
                    scored: list[ScoredItem] = scored,
                    budget: ContextBudget = budget,
                    batch: int = batch,
                ) -> None:
                    for _ in range(batch):
                        slicer.slice(scored, budget)

                timings = _time_pair(
                    partial(rust.seconds, what, batch), hot_slice, args.repeat or 15
                )
                rows.append(_row(label, size, batch, timings, same))
    finally:
        rust.close()
    header = ["row", "items", "Rust us", "(min)", "pycupel us", "(min)", "(CPU)"]
    header += ["Rust / pycupel", "same selection"]
    print(format_table(header, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
