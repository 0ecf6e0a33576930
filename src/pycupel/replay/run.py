"""Replaying logs end to end: check the inputs, run an engine, write the Parquet output."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pycupel.errors import PipelineConfigError
from pycupel.replay.compute import ReplayConfig
from pycupel.replay.engines import ENGINES
from pycupel.replay.output import pyarrow_module, write_parquet
from pycupel.replay.plan import ScanSummary
from pycupel.replay.reader import CHUNK_BYTES, plan_chunks

__all__ = ["ReplayResult", "replay_logs"]

Engine = Literal["local", "ray"]


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """A finished replay.

    Attributes:
        table: the output rows (a ``pyarrow.Table``), sorted by file, line and policy.
        records: records read (requests, plus the malformed records skipped).
        skipped: malformed records skipped (``on_error="skip"``); each has ``skipped`` rows.
        sessions: distinct session ids.
        engine: the engine that ran.
        config: the replay's configuration.
    """

    table: Any
    records: int
    skipped: int
    sessions: int
    engine: str
    config: ReplayConfig


def replay_logs(
    paths: Sequence[str],
    config: ReplayConfig,
    *,
    engine: Engine = "local",
    out: str | None = None,
    workers: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    progress: Callable[[int], None] | None = None,
) -> ReplayResult:
    """Replay every logged request of ``paths`` under every policy of ``config``.

    Args:
        paths: JSON Lines or Parquet replay logs (see :mod:`pycupel.replay.schema`).
        config: the policies, the budget, the error handling and the prices.
        engine: ``"local"`` (a process pool) or ``"ray"`` (Ray Data; ``RAY_ADDRESS`` picks the
            cluster, else a local Ray instance starts).
        out: where to write the output as one Parquet file (None: do not write).
        workers: local engine: processes (default one per core); Ray: CPUs of a local instance.
        chunk_bytes: target size of a JSON Lines chunk.
        progress: called with the number of requests done after each work unit (local).

    Raises:
        ReplayLogError: a malformed record (``on_error="fail"``), a format without an adapter,
            a file that is neither JSON Lines nor Parquet.
        MissingDependencyError: pyarrow (or Ray for ``engine="ray"``) is not installed.
        OSError: an input cannot be read or the output cannot be written.
    """
    if engine not in ENGINES:
        raise PipelineConfigError("engine", engine, f"must be one of {', '.join(ENGINES)}")
    pyarrow_module()  # fail before any work when the extra is missing
    sources = [str(path) for path in paths]
    if not sources:
        raise PipelineConfigError("paths", paths, "must name at least one log file")
    for source in sources:
        with open(source, "rb"):  # an unreadable input fails here (OSError), before any work
            pass
    chunks = plan_chunks(sources, chunk_bytes=chunk_bytes)
    summary: ScanSummary
    if engine == "local":
        from pycupel.replay.engines.local import run_local  # noqa: PLC0415

        table, summary = run_local(sources, chunks, config, workers=workers, progress=progress)
    else:
        from pycupel.replay.engines.ray import run_ray  # noqa: PLC0415

        table, summary = run_ray(sources, chunks, config, cpus=workers)
    if out is not None:
        write_parquet(table, out)
    return ReplayResult(
        table=table,
        records=summary.records,
        skipped=summary.skipped,
        sessions=summary.sessions,
        engine=engine,
        config=config,
    )
