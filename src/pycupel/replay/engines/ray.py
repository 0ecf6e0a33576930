"""The Ray engine: the same replay on Ray Data, on a cluster or a local Ray instance.

The steps, as Ray Data transforms:

1. the planned chunks (:func:`~pycupel.replay.reader.plan_chunks`) become a dataset, and
   ``map_batches`` scans them into one small entry per record (location, session, turn,
   format, error) — Ray's own ``read_json`` is not used because it infers one Arrow schema for
   every nested message (chat logs mix strings, lists and nulls in the same field) and drops
   the line numbers that errors must name;
2. the driver checks the entries (malformed records, formats without an adapter) before any
   replay, exactly as the local engine does;
3. independent requests are replayed with ``map_batches``; session requests are grouped with
   ``groupby("session_id").map_groups``, so each session replays in order on one worker;
4. the rows of both stream back to the driver, which sorts them by file, line and policy (as
   the local engine does) and writes the one Parquet file.

``RAY_ADDRESS`` (when set) names the cluster to join; otherwise a local instance starts and is
shut down at the end. An already initialised Ray (``ray.init`` by the caller) is used as it is.
On a cluster every node needs pycupel installed and must read the log files at the same paths
(a shared file system), since workers read the records themselves.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any

from pycupel.errors import CupelError, MissingDependencyError
from pycupel.replay.compute import ReplayConfig
from pycupel.replay.output import arrow_schema, pyarrow_module, rows_to_table, sort_table
from pycupel.replay.plan import BATCH_RECORDS, ScanSummary, check_entries
from pycupel.replay.reader import Chunk
from pycupel.replay.tasks import ENTRY_FIELDS, replay_entries, scan_chunk, session_order

__all__ = ["run_ray"]


def _ray() -> Any:
    try:
        import ray  # noqa: PLC0415 (optional extra)
        import ray.data  # noqa: PLC0415
    except ImportError as exc:
        raise MissingDependencyError("the Ray replay engine", "ray[data]", "ray") from exc
    return ray


def _entry_schema() -> Any:
    pa = pyarrow_module()
    types = {"file_index": pa.int64(), "line": pa.int64(), "offset": pa.int64()}
    types |= {"length": pa.int64(), "turn": pa.int64()}
    return pa.schema([(name, types.get(name, pa.string())) for name in ENTRY_FIELDS])


def _scan_batch(batch: Any) -> Any:
    entries = []
    for fields in batch.to_pylist():
        entries.extend(scan_chunk(Chunk(**fields)))
    return pyarrow_module().Table.from_pylist(entries, schema=_entry_schema())


def _cause(error: BaseException) -> CupelError | None:
    """The CupelError a Ray task raised, through Ray's wrapping exceptions."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, CupelError):
            return current
        seen.add(id(current))
        cause = getattr(current, "cause", None)
        current = cause if isinstance(cause, BaseException) else current.__cause__
    return None


def _unwrapped(error: BaseException) -> CupelError:
    """The CupelError inside Ray's wrapping exception (callers check there is one)."""
    cause = _cause(error)
    assert cause is not None
    return cause


def run_ray(
    sources: Sequence[str],
    chunks: Sequence[Chunk],
    config: ReplayConfig,
    *,
    cpus: int | None = None,
) -> tuple[Any, ScanSummary]:
    """Replay on Ray Data; returns the output table (sorted) and what the scan found.

    Raises:
        MissingDependencyError: Ray (``pycupel[ray]``) is not installed.
        ReplayLogError: as for the local engine.
    """
    ray = _ray()
    started = False
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS")
        options: dict[str, Any] = {"logging_level": "WARNING", "log_to_driver": False}
        if address:
            ray.init(address=address, **options)
        else:
            ray.init(num_cpus=cpus, include_dashboard=False, **options)
        started = True
    try:
        return _run(ray, list(sources), chunks, config)
    except Exception as exc:
        if _cause(exc) in (None, exc):
            raise
        raise _unwrapped(exc) from None
    finally:
        if started:
            ray.shutdown()


def _run(
    ray: Any, sources: list[str], chunks: Sequence[Chunk], config: ReplayConfig
) -> tuple[Any, ScanSummary]:
    pa = pyarrow_module()
    if not chunks:
        return arrow_schema().empty_table(), check_entries([], sources, config)
    planned = ray.data.from_items([dataclasses.asdict(chunk) for chunk in chunks])
    entries = planned.map_batches(_scan_batch, batch_size=1, batch_format="pyarrow").materialize()
    summary = check_entries(_iter_rows(entries), sources, config)

    def replay_singles(batch: Any) -> Any:
        rows = replay_entries(config, sources, batch.to_pylist(), session=False)
        return rows_to_table(rows, sources)

    def replay_session(group: Any) -> Any:
        members = sorted(group.to_pylist(), key=session_order)
        return rows_to_table(replay_entries(config, sources, members, session=True), sources)

    parts = []
    if summary.records > summary.sessions_requests:
        singles = entries.map_batches(_without_session, batch_format="pyarrow")
        parts.append(
            singles.map_batches(replay_singles, batch_size=BATCH_RECORDS, batch_format="pyarrow")
        )
    if summary.sessions:
        sessions = entries.map_batches(_with_session, batch_format="pyarrow")
        # A few partitions per CPU: Ray's default (200) costs more than it spreads here.
        cpus = int(ray.cluster_resources().get("CPU", 1))
        grouped = sessions.groupby("session_id", num_partitions=min(summary.sessions, 4 * cpus))
        parts.append(grouped.map_groups(replay_session, batch_format="pyarrow"))
    tables = [
        batch
        for part in parts
        for batch in part.iter_batches(batch_format="pyarrow", batch_size=None)
        if batch.num_rows
    ]
    if not tables:
        return arrow_schema().empty_table(), summary
    # The rows reach the driver anyway (one output file): sort them there, as the local engine.
    return sort_table(pa.concat_tables(tables).cast(arrow_schema())), summary


def _without_session(batch: Any) -> Any:
    return batch.filter(pyarrow_module().compute.is_null(batch["session_id"]))


def _with_session(batch: Any) -> Any:
    return batch.filter(pyarrow_module().compute.is_valid(batch["session_id"]))


def _iter_rows(dataset: Any) -> Any:
    for batch in dataset.iter_batches(batch_format="pyarrow"):
        yield from batch.to_pylist()
