"""The replay's output: one row per request and policy, as an Arrow table / Parquet file.

Rows are sorted by ``(file_index, line, policy_index)``: input order, then the order the
policies were given, on every engine. Every column but those in
:data:`~pycupel.replay.compute.NONDETERMINISTIC_COLUMNS` (``fit_ms``, a wall time) is the same
on every run and engine.

A record that could not be replayed (``on_error="skip"``) still has its rows, one per policy,
with ``status = "skipped"`` and the error in ``detail``: nothing is dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pycupel.errors import MissingDependencyError, ReplayLogError
from pycupel.replay.compute import KIND_COLUMNS, NONDETERMINISTIC_COLUMNS
from pycupel.replay.formats import ROLE_CATEGORIES
from pycupel.replay.schema import RecordKey

__all__ = [
    "COLUMNS",
    "SORT_KEYS",
    "arrow_schema",
    "identity_columns",
    "pyarrow_module",
    "rows_to_table",
    "skipped_rows",
    "sort_table",
    "write_parquet",
]

SORT_KEYS = ("file_index", "line", "policy_index")

_COUNTS = tuple(
    f"{fate}_{category}" for fate in ("kept", "dropped") for category in ROLE_CATEGORIES
) + tuple(f"{fate}_kind_{column}" for fate in ("kept", "dropped") for _, column in KIND_COLUMNS)

COLUMNS: tuple[tuple[str, str], ...] = (
    ("file_index", "int32"),
    ("line", "int64"),
    ("policy_index", "int32"),
    ("file", "string"),
    ("session_id", "string"),
    ("turn", "int64"),
    ("format", "string"),
    ("policy", "string"),
    ("status", "string"),
    ("detail", "string"),
    ("budget", "int64"),
    ("messages_before", "int64"),
    ("messages_after", "int64"),
    ("units_before", "int64"),
    ("units_after", "int64"),
    ("tokens_before", "int64"),
    ("tokens_after", "int64"),
    *((name, "int64") for name in _COUNTS),
    ("valid", "bool"),
    ("invalid_reason", "string"),
    ("cached_tokens_before", "int64"),
    ("cost_before_usd", "float64"),
    ("cached_tokens_after", "int64"),
    ("cost_after_usd", "float64"),
    ("evidence_total", "int64"),
    ("evidence_kept", "int64"),
    ("evidence_recall", "float64"),
    ("reported_input_tokens", "int64"),
    ("reported_cached_tokens", "int64"),
    ("fit_ms", "float64"),
)
"""The output columns and their Arrow types, in order."""


def pyarrow_module() -> Any:
    """``pyarrow``, or :class:`MissingDependencyError` naming the extra to install."""
    try:
        import pyarrow  # noqa: PLC0415 (optional extra)
        import pyarrow.compute  # noqa: PLC0415 (pyarrow.compute for callers)
    except ImportError as exc:
        raise MissingDependencyError("policy replay", "pyarrow", "replay") from exc
    return pyarrow


def arrow_schema() -> Any:
    """The output's Arrow schema."""
    pa = pyarrow_module()
    types = {
        "int32": pa.int32(),
        "int64": pa.int64(),
        "string": pa.string(),
        "bool": pa.bool_(),
        "float64": pa.float64(),
    }
    return pa.schema([(name, types[kind]) for name, kind in COLUMNS])


def identity_columns() -> tuple[str, ...]:
    """The columns that must be identical between two runs of the same replay."""
    return tuple(name for name, _ in COLUMNS if name not in NONDETERMINISTIC_COLUMNS)


def skipped_rows(
    error: ReplayLogError,
    key: RecordKey,
    policies: Sequence[str],
    extra: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The rows standing for a record that could not be replayed, one per policy."""
    return [
        {
            "file_index": key.file_index,
            "line": key.line,
            "policy_index": index,
            "policy": name,
            "status": "skipped",
            "detail": str(error),
            **(extra or {}),
        }
        for index, name in enumerate(policies)
    ]


def rows_to_table(rows: Iterable[Mapping[str, Any]], sources: Sequence[str]) -> Any:
    """An Arrow table of output rows (missing columns are null), with the ``file`` column."""
    pa = pyarrow_module()
    listed = [dict(row, file=sources[row["file_index"]]) for row in rows]
    return pa.Table.from_pylist(listed, schema=arrow_schema())


def sort_table(table: Any) -> Any:
    """``table`` in output order."""
    return table.sort_by([(name, "ascending") for name in SORT_KEYS])


def write_parquet(table: Any, path: str) -> None:
    """Write ``table`` as one Parquet file."""
    pyarrow_module()
    import pyarrow.parquet as pq  # noqa: PLC0415 (optional extra)

    pq.write_table(table, path)
