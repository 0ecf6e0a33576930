"""Policy replay throughput, scaling and memory (the figures of docs/replay.md).

    python benchmarks/replay/bench_replay.py throughput --requests 4000
    python benchmarks/replay/bench_replay.py per-core --requests 2000
    python benchmarks/replay/bench_replay.py memory --gigabytes 2

* ``throughput``: generated requests of 50-500 messages (sessions of 4 turns), replayed under
  one policy on the local engine with 1 and 2 workers and on a local Ray instance with 2 CPUs:
  wall time, requests per second, and the worker CPU time (less disturbed by other load than
  wall time on a shared machine). The 2-worker / 1-worker ratio is the scaling.
* ``per-core``: requests of exactly 100 messages on the local engine with one worker: requests
  per second of wall time and per CPU-second of the worker.
* ``memory``: a generated corpus of the given size is replayed on the local engine (2 workers)
  in a child process; the peak resident memory of the driver and of the largest worker are
  reported (the corpus is written under the temporary directory, never in the repository).

The load average is printed with every figure: other processes share the cores.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pycupel import presets
from pycupel.replay import ReplayConfig, ReplayPolicy, replay_logs
from pycupel.replay.synthetic import generate_log

BUDGET = 8_000


def _config() -> ReplayConfig:
    return ReplayConfig(policies=(ReplayPolicy("chat", presets.chat()),), budget=BUDGET)


def _corpus(name: str, requests: int, low: int, high: int) -> Path:
    path = Path(tempfile.gettempdir()) / f"pycupel-replay-{name}-{requests}-{low}-{high}.jsonl"
    if not path.exists():
        started = time.perf_counter()
        size = generate_log(path, requests, min_messages=low, max_messages=high, seed=1)
        print(
            f"generated {path} ({size / 2**20:,.0f} MiB, {requests:,} requests) in "
            f"{time.perf_counter() - started:.0f} s"
        )
    return path


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(path: Path, *, engine: str, workers: int) -> tuple[float, float, int]:
    """Wall seconds, worker CPU seconds (local engine only) and records of one replay."""
    cpu = _children_cpu()
    started = time.perf_counter()
    result = replay_logs([str(path)], _config(), engine=engine, workers=workers)  # type: ignore[arg-type]
    wall = time.perf_counter() - started
    return wall, _children_cpu() - cpu, result.records


def _load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def throughput(requests: int, ray_too: bool) -> None:
    path = _corpus("mixed", requests, 50, 500)
    rows = []
    for engine, workers in (("local", 1), ("local", 2), ("ray", 2)):
        if engine == "ray" and not ray_too:
            continue
        before = _load()
        wall, cpu, records = _run(path, engine=engine, workers=workers)
        rows.append((engine, workers, wall, cpu, records))
        print(
            f"{engine:5} workers={workers}  {records:,} requests  {wall:7.1f} s  "
            f"{records / wall:7.1f} req/s  worker CPU {cpu:7.1f} s  ({before}; after {_load()})"
        )
    one = next(row for row in rows if row[:2] == ("local", 1))
    two = next(row for row in rows if row[:2] == ("local", 2))
    print(f"scaling 2 workers / 1 worker (wall): {one[2] / two[2]:.2f}x")
    ray = [row for row in rows if row[0] == "ray"]
    if ray:
        print(f"ray (2 CPUs) / local (2 workers) throughput: {two[2] / ray[0][2]:.2f}x")


def per_core(requests: int) -> None:
    path = _corpus("hundred", requests, 100, 100)
    before = _load()
    wall, cpu, records = _run(path, engine="local", workers=1)
    print(
        f"100-message requests, 1 worker: {records:,} requests in {wall:.1f} s = "
        f"{records / wall:.0f} req/s wall, {records / cpu:.0f} req/s per worker CPU-second "
        f"({before}; after {_load()})"
    )


def memory(gigabytes: float) -> None:
    requests = int(gigabytes * 2**30 / 60_000)  # about 60 kB per generated request
    path = _corpus("memory", requests, 50, 500)
    size = path.stat().st_size
    before = _load()
    child = subprocess.run(
        [sys.executable, __file__, "memory-child", str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    print(child.stdout.strip())
    print(f"corpus {size / 2**30:.2f} GiB ({before}; after {_load()})")


def memory_child(path: str) -> None:
    started = time.perf_counter()
    result = replay_logs([path], _config(), workers=2)
    wall = time.perf_counter() - started
    driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"{result.records:,} requests in {wall:.0f} s; peak RSS: driver {driver:.0f} MiB, "
        f"largest worker {worker:.0f} MiB, driver + 2 workers <= {driver + 2 * worker:.0f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["throughput", "per-core", "memory", "memory-child"])
    parser.add_argument("path", nargs="?")
    parser.add_argument("--requests", type=int, default=4_000)
    parser.add_argument("--gigabytes", type=float, default=2.0)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    if args.what == "throughput":
        throughput(args.requests, not args.no_ray)
    elif args.what == "per-core":
        per_core(args.requests)
    elif args.what == "memory":
        memory(args.gigabytes)
    else:
        memory_child(args.path)


if __name__ == "__main__":
    main()
