"""The log schema, the reader's chunks and the error messages (file, line, field)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pycupel.errors import ReplayLogError
from pycupel.replay.reader import plan_chunks, read_chunk
from pycupel.replay.schema import FORMAT_NAMES, RecordKey, parse_record, reported_usage

KEY = RecordKey(0, 7)


def _error(value: object) -> ReplayLogError:
    with pytest.raises(ReplayLogError) as caught:
        parse_record(value, source="logs.jsonl", key=KEY)
    return caught.value


def test_valid_record_keeps_every_field() -> None:
    record = parse_record(
        {
            "format": "anthropic",
            "messages": [{"role": "user", "content": "hi"}],
            "system": "Be brief.",
            "session_id": "s1",
            "turn": 3,
            "usage": {"input_tokens": 10},
            "evidence": [0, 0],
            "model": "ignored",
        },
        source="logs.jsonl",
        key=KEY,
    )
    assert record.format == "anthropic"
    assert record.session_id == "s1"
    assert record.turn == 3
    assert record.evidence == (0,)
    assert record.location == "line 7"


@pytest.mark.parametrize(
    ("value", "location", "rule"),
    [
        ([1], "line 7", "must be a JSON object"),
        ({"messages": []}, "line 7: format", "must be one of"),
        ({"format": "openai"}, "line 7: messages", "must be an array"),
        ({"format": "openai", "messages": [], "turn": -1}, "line 7: turn", ">= 0"),
        ({"format": "openai", "messages": [], "turn": True}, "line 7: turn", "integer"),
        ({"format": "openai", "messages": [], "session_id": ""}, "line 7: session_id", "non-empty"),
        ({"format": "openai", "messages": [], "usage": []}, "line 7: usage", "object"),
        ({"format": "openai", "messages": [{}], "evidence": [1]}, "line 7: evidence[0]", "0..0"),
        ({"format": "openai", "messages": [], "system": 3}, "line 7: system", "string"),
    ],
)
def test_bad_records_name_file_line_and_field(value: object, location: str, rule: str) -> None:
    error = _error(value)
    assert error.source == "logs.jsonl"
    assert error.location == location
    assert rule in error.detail
    assert str(error).startswith(f"logs.jsonl: {location}: ")


def test_reported_usage_reads_every_provider() -> None:
    assert reported_usage(None) == (None, None)
    openai = {"prompt_tokens": 120, "prompt_tokens_details": {"cached_tokens": 64}}
    assert reported_usage(openai) == (120, 64)
    anthropic = {
        "input_tokens": 10,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 5,
    }
    assert reported_usage(anthropic) == (115, 100)
    responses = {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 8}}
    assert reported_usage(responses) == (50, 8)
    assert reported_usage({"promptTokenCount": 9, "cachedContentTokenCount": 4}) == (9, 4)


def _write_lines(path: Path, count: int) -> list[int]:
    """``count`` records with blank lines between some; returns the records' line numbers."""
    lines: list[int] = []
    with open(path, "w", encoding="utf-8") as file:
        number = 0
        for index in range(count):
            if index % 4 == 3:
                file.write("\n")
                number += 1
            record = {"format": "openai", "messages": [{"role": "user", "content": "x" * index}]}
            file.write(json.dumps(record) + "\n")
            number += 1
            lines.append(number)
    return lines


@pytest.mark.parametrize("chunk_bytes", [1, 50, 200, 10_000])
def test_chunks_cover_every_line_once_with_its_number(tmp_path: Path, chunk_bytes: int) -> None:
    path = tmp_path / "log.jsonl"
    lines = _write_lines(path, 30)
    chunks = plan_chunks([str(path)], chunk_bytes=chunk_bytes)
    found = [
        (locator.key.line, record.messages[0]["content"])  # type: ignore[union-attr]
        for chunk in chunks
        for locator, record in read_chunk(chunk, known_formats=FORMAT_NAMES)
    ]
    assert [line for line, _ in found] == lines
    assert [len(content) for _, content in found] == list(range(30))
    assert chunks[0].start == 0
    assert chunks[-1].end == path.stat().st_size


def test_malformed_line_is_reported_in_place(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"format": "openai", "messages": []}\n{"format": \n', encoding="utf-8")
    (chunk,) = plan_chunks([str(path)])
    records = [record for _, record in read_chunk(chunk, known_formats=FORMAT_NAMES)]
    assert not isinstance(records[0], ReplayLogError)
    assert isinstance(records[1], ReplayLogError)
    assert records[1].location == "line 2"
    assert "not valid JSON" in records[1].detail


def test_unknown_log_file_format(tmp_path: Path) -> None:
    path = tmp_path / "log.bin"
    path.write_bytes(b"\x00\x01binary")
    with pytest.raises(ReplayLogError, match="unknown log format"):
        plan_chunks([str(path)])


def test_parquet_rows_are_records(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "log.parquet"
    messages = json.dumps([{"role": "user", "content": "hi"}])
    table = pa.table(
        {
            "format": ["openai", "openai", "nope"],
            "messages": [messages, "[not json", messages],
            "session_id": ["a", None, None],
        }
    )
    pq.write_table(table, path, row_group_size=2)
    chunks = plan_chunks([str(path)])
    assert [(chunk.start, chunk.first_line) for chunk in chunks] == [(0, 0), (1, 2)]
    records = [
        record for chunk in chunks for _, record in read_chunk(chunk, known_formats=FORMAT_NAMES)
    ]
    assert records[0].session_id == "a"  # type: ignore[union-attr]
    assert isinstance(records[1], ReplayLogError)
    assert records[1].location == "row 1: messages"
    assert isinstance(records[2], ReplayLogError)
    assert records[2].location == "row 2: format"
