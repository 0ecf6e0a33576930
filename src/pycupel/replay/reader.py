"""Streaming the replay logs: input files split into chunks, chunks into validated records.

A JSON Lines file is split at line boundaries into chunks of about :data:`CHUNK_BYTES`, each
knowing the number of its first line, so that any worker can read any chunk alone and still
report errors as ``file: line N``. A Parquet file is split into its row groups. Nothing reads
a whole file: a worker holds one chunk at a time.

Blank lines hold no request and are passed over. Every other line is a record, validated by
:func:`pycupel.replay.schema.parse_record`; a bad one comes out as a
:class:`~pycupel.errors.ReplayLogError` in its place, so the caller decides to stop or to count
it (``on_error``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pycupel.errors import MissingDependencyError, ReplayLogError
from pycupel.replay.schema import LoggedRequest, RecordKey, parse_record, parse_record_text

__all__ = [
    "CHUNK_BYTES",
    "Chunk",
    "InputKind",
    "Locator",
    "input_kind",
    "plan_chunks",
    "read_chunk",
    "read_located",
]

CHUNK_BYTES = 4 * 1024 * 1024
"""Target size of a JSON Lines chunk: the unit of work of the scan, and a worker's read."""

InputKind = Literal["jsonl", "parquet"]

_JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json", ".jl"})
_PARQUET_SUFFIXES = frozenset({".parquet", ".pq"})
_PARQUET_MAGIC = b"PAR1"
_JSON_COLUMNS = ("messages", "system", "usage", "evidence")
_BLOCK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Chunk:
    """A part of one input file that a worker reads alone.

    JSON Lines: bytes ``start``..``end`` (whole lines), the first being line ``first_line``
    (from 1). Parquet: row groups ``start``..``end``, the first row being ``first_line``
    (from 0).
    """

    file_index: int
    path: str
    kind: InputKind
    start: int
    end: int
    first_line: int


@dataclass(frozen=True, slots=True)
class Locator:
    """Where one record is, to read it again alone: a JSON Lines line's bytes, or a Parquet
    row (``offset`` is then the row group and ``length`` the row within it)."""

    key: RecordKey
    kind: InputKind
    offset: int
    length: int


def input_kind(path: str) -> InputKind:
    """JSON Lines or Parquet, from the suffix, else from the Parquet magic bytes.

    Raises:
        ReplayLogError: the file is neither (an unknown log format).
        OSError: the file cannot be read.
    """
    suffix = Path(path).suffix.lower()
    if suffix in _JSONL_SUFFIXES:
        return "jsonl"
    if suffix in _PARQUET_SUFFIXES:
        return "parquet"
    with open(path, "rb") as file:
        head = file.read(4)
    if head == _PARQUET_MAGIC:
        return "parquet"
    if head[:1] in (b"{", b"\n", b" "):
        return "jsonl"
    raise ReplayLogError(
        path,
        "",
        "unknown log format: name the file .jsonl (JSON Lines) or .parquet (Parquet)",
    )


def plan_chunks(paths: Sequence[str], *, chunk_bytes: int = CHUNK_BYTES) -> list[Chunk]:
    """Split every input into chunks, in input order (one pass over each file's bytes to find
    line boundaries and count lines; nothing is parsed)."""
    chunks: list[Chunk] = []
    for file_index, path in enumerate(paths):
        kind = input_kind(path)
        if kind == "jsonl":
            chunks.extend(_jsonl_chunks(file_index, path, chunk_bytes))
        else:
            chunks.extend(_parquet_chunks(file_index, path))
    return chunks


def _jsonl_chunks(file_index: int, path: str, chunk_bytes: int) -> Iterator[Chunk]:
    start = 0
    line = 1  # number of the chunk's first line
    lines_in_chunk = 0
    position = 0
    with open(path, "rb") as file:
        while block := file.read(_BLOCK):
            search_from = 0
            while True:
                # Cut at the first newline past the target size.
                if position + len(block) - start < chunk_bytes:
                    lines_in_chunk += block.count(b"\n", search_from)
                    break
                target = max(start + chunk_bytes - position, search_from)
                newline = block.find(b"\n", target)
                if newline < 0:
                    lines_in_chunk += block.count(b"\n", search_from)
                    break
                lines_in_chunk += block.count(b"\n", search_from, newline + 1)
                end = position + newline + 1
                yield Chunk(file_index, path, "jsonl", start, end, line)
                line += lines_in_chunk
                lines_in_chunk = 0
                start = end
                search_from = newline + 1
            position += len(block)
    if position > start:
        yield Chunk(file_index, path, "jsonl", start, position, line)


def _pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq  # noqa: PLC0415 (optional extra)
    except ImportError as exc:
        raise MissingDependencyError("Parquet replay logs", "pyarrow", "replay") from exc
    return pq


def _parquet_chunks(file_index: int, path: str) -> Iterator[Chunk]:
    metadata = _pyarrow_parquet().ParquetFile(path).metadata
    first_row = 0
    for group in range(metadata.num_row_groups):
        yield Chunk(file_index, path, "parquet", group, group + 1, first_row)
        first_row += metadata.row_group(group).num_rows


def read_chunk(
    chunk: Chunk, *, known_formats: Sequence[str]
) -> Iterator[tuple[Locator, LoggedRequest | ReplayLogError]]:
    """Every record of ``chunk`` with its locator, validated, in order."""
    if chunk.kind == "jsonl":
        yield from _jsonl_records(chunk, known_formats)
    else:
        yield from _parquet_records(chunk, known_formats)


def _jsonl_records(
    chunk: Chunk, known_formats: Sequence[str]
) -> Iterator[tuple[Locator, LoggedRequest | ReplayLogError]]:
    with open(chunk.path, "rb") as file:
        file.seek(chunk.start)
        data = file.read(chunk.end - chunk.start)
    offset = chunk.start
    for number, raw in enumerate(data.split(b"\n"), start=chunk.first_line):
        length = len(raw)
        if raw.strip():
            key = RecordKey(chunk.file_index, number)
            locator = Locator(key, "jsonl", offset, length)
            yield locator, _jsonl_record(raw, chunk.path, key, known_formats)
        offset += length + 1


def _jsonl_record(
    raw: bytes, source: str, key: RecordKey, known_formats: Sequence[str]
) -> LoggedRequest | ReplayLogError:
    try:
        value = parse_record_text(raw, source=source, key=key, unit="line")
        return parse_record(value, source=source, key=key, known_formats=known_formats)
    except ReplayLogError as error:
        return error


def _parquet_records(
    chunk: Chunk, known_formats: Sequence[str]
) -> Iterator[tuple[Locator, LoggedRequest | ReplayLogError]]:
    pq = _pyarrow_parquet()
    parquet = pq.ParquetFile(chunk.path)
    row = chunk.first_line
    for group in range(chunk.start, chunk.end):
        for position, record in enumerate(parquet.read_row_group(group).to_pylist()):
            key = RecordKey(chunk.file_index, row)
            yield (
                Locator(key, "parquet", group, position),
                _parquet_record(record, chunk.path, key, known_formats),
            )
            row += 1


def _parquet_record(
    record: dict[str, Any], source: str, key: RecordKey, known_formats: Sequence[str]
) -> LoggedRequest | ReplayLogError:
    try:
        for column in _JSON_COLUMNS:
            value = record.get(column)
            if isinstance(value, str):
                try:
                    record[column] = json.loads(value)
                except json.JSONDecodeError as exc:
                    raise ReplayLogError(
                        source, f"row {key.line}: {column}", f"must be JSON text ({exc.msg})"
                    ) from None
        return parse_record(record, source=source, key=key, unit="row", known_formats=known_formats)
    except ReplayLogError as error:
        return error


def read_located(
    locators: Sequence[Locator], paths: Sequence[str], *, known_formats: Sequence[str]
) -> Iterator[LoggedRequest | ReplayLogError]:
    """The records at ``locators``, read one by one (a session's requests, in order)."""
    cached_group: tuple[int, int, list[dict[str, Any]]] | None = None
    for locator in locators:
        path = paths[locator.key.file_index]
        if locator.kind == "jsonl":
            with open(path, "rb") as file:
                file.seek(locator.offset)
                raw = file.read(locator.length)
            yield _jsonl_record(raw, path, locator.key, known_formats)
            continue
        wanted = (locator.key.file_index, locator.offset)
        if cached_group is None or cached_group[:2] != wanted:
            table = _pyarrow_parquet().ParquetFile(path).read_row_group(locator.offset)
            cached_group = (*wanted, table.to_pylist())
        record = dict(cached_group[2][locator.length])
        yield _parquet_record(record, path, locator.key, known_formats)
