"""The local engine: a process pool over this machine's cores.

The input streams through the pool: the scan reads one chunk per task and returns small
entries; the replay reads each request again by its location. At no point is the corpus held
in memory, only the entries (about a hundred bytes per request), the requests in flight (a few
per worker) and the output rows.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any

from pycupel.replay.compute import ReplayConfig, Replayer
from pycupel.replay.output import arrow_schema, pyarrow_module, rows_to_table, sort_table
from pycupel.replay.plan import Group, ScanSummary, check_entries, group_entries
from pycupel.replay.reader import Chunk
from pycupel.replay.tasks import replay_entries, scan_chunk

__all__ = ["default_workers", "run_local"]


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _replay_unit(config: ReplayConfig, sources: Sequence[str], unit: list[Group]) -> Any:
    # One replayer for the unit's groups: its pipelines are built once, and the token counts
    # it remembers serve every group (the system prompts and tools logs repeat).
    replayer = Replayer(config, sources)
    rows = []
    for entries, session in unit:
        rows.extend(replay_entries(config, sources, entries, session=session, replayer=replayer))
    return rows_to_table(rows, sources)


def run_local(
    sources: Sequence[str],
    chunks: Sequence[Chunk],
    config: ReplayConfig,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[Any, ScanSummary]:
    """Replay on a pool of ``workers`` processes (default: one per core).

    Returns the output table (sorted) and what the scan found. ``progress`` is called with the
    number of requests replayed after each work unit.
    """
    pa = pyarrow_module()
    count = workers or default_workers()
    # spawn: a clean interpreter per worker, safe whatever threads the caller runs.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=count, mp_context=context) as pool:
        entries = [entry for found in pool.map(scan_chunk, chunks) for entry in found]
        summary = check_entries(entries, sources, config)
        units = group_entries(entries)
        del entries
        tables = []
        for unit, table in zip(
            units, pool.map(partial(_replay_unit, config, sources), units), strict=True
        ):
            tables.append(table)
            if progress is not None:
                progress(sum(len(group[0]) for group in unit))
    if not tables:
        return arrow_schema().empty_table(), summary
    return sort_table(pa.concat_tables(tables)), summary
