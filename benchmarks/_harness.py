"""The timing and table code every benchmark script shares.

* :func:`measure` times one or more calls: ``warmup`` untimed rounds, then ``repeat`` timed
  rounds in which the calls take turns, so a change in machine load hits them alike and their
  ratio stays meaningful. Each call's wall-clock (``perf_counter``) and CPU (``process_time``)
  times are kept; :class:`Timing` gives the median, the minimum and the median CPU time.
* :func:`peak_mib` runs a call once more under ``tracemalloc`` (a separate pass: tracing slows
  allocation down, so it never overlaps a timed run) and returns the peak traced memory.
* :func:`format_table` lays out rows of cells under a header, right-aligning numbers.
* :func:`machine_summary` describes the machine (CPU, cores, Python, numpy) for reports.
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Timing", "format_table", "machine_summary", "measure", "measure_one", "peak_mib"]


@dataclass(frozen=True)
class Timing:
    """Wall-clock and CPU seconds of the timed runs of one call."""

    wall: tuple[float, ...]
    cpu: tuple[float, ...]

    @property
    def runs(self) -> int:
        return len(self.wall)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.wall) * 1000.0

    @property
    def min_ms(self) -> float:
        return min(self.wall) * 1000.0

    @property
    def cpu_ms(self) -> float:
        """Median CPU time: far less disturbed than wall time when the machine is shared."""
        return statistics.median(self.cpu) * 1000.0


def measure(calls: Sequence[Callable[[], object]], repeat: int, warmup: int = 1) -> list[Timing]:
    """Time each call ``repeat`` times after ``warmup`` untimed rounds, the calls taking turns."""
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
    return [Timing(tuple(w), tuple(c)) for w, c in zip(wall, cpu, strict=True)]


def measure_one(call: Callable[[], object], repeat: int, warmup: int = 1) -> Timing:
    """:func:`measure` for a single call."""
    return measure([call], repeat, warmup)[0]


def peak_mib(call: Callable[[], object]) -> float:
    """Peak memory traced by ``tracemalloc`` while ``call`` runs once, in MiB."""
    gc.collect()
    tracemalloc.start()
    try:
        call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / (1024 * 1024)


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned."""
    widths = [len(cell) for cell in header]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.ljust(widths[index]) if index == 0 else cell.rjust(widths[index])
            for index, cell in enumerate(cells)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([line(header), rule, *(line(row) for row in rows)])


def _cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return platform.processor() or platform.machine()
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.machine()


def machine_summary() -> str:
    """One line: CPU model, logical cores, OS, Python and numpy versions."""
    return (
        f"{_cpu_model()}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()}, numpy {np.__version__}"
    )
