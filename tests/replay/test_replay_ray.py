"""The Ray engine on a real local Ray instance gives the local engine's rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pycupel.replay import ReplayConfig, replay_logs
from pycupel.replay.output import identity_columns

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[None]:
    """One local Ray instance for the module (started once: it takes seconds)."""
    if ray.is_initialized():
        yield
        return
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_ray_rows_are_identical_to_local(  # type: ignore[no-untyped-def]
    ray_instance: None, corpus: Path, config: ReplayConfig, local_result, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "ray.parquet"
    result = replay_logs([str(corpus)], config, engine="ray", out=str(out))
    assert result.engine == "ray"
    assert (result.records, result.skipped, result.sessions) == (
        local_result.records,
        local_result.skipped,
        local_result.sessions,
    )
    columns = list(identity_columns())
    assert result.table.num_rows == local_result.table.num_rows
    assert result.table.select(columns).equals(local_result.table.select(columns))
    assert pq.read_table(out).select(columns).equals(local_result.table.select(columns))
