"""The documented size limits of the parsers: each is configurable and fails clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pycupel.errors import InputFormatError, PipelineConfigError
from pycupel.itemio import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_ITEMS,
    parse_items,
    read_items,
)

ITEM = {"content": "a", "tokens": 1}


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = {"k": value}
    return value


def test_item_defaults_are_generous() -> None:
    assert DEFAULT_MAX_BYTES >= 64 * 1024 * 1024
    assert DEFAULT_MAX_ITEMS >= 100_000
    assert DEFAULT_MAX_DEPTH >= 32


def test_items_max_bytes() -> None:
    text = json.dumps([ITEM] * 10)
    assert len(parse_items(text, max_bytes=len(text))) == 10
    with pytest.raises(InputFormatError, match="max_bytes"):
        parse_items(text, max_bytes=len(text) - 1)
    with pytest.raises(InputFormatError, match="max_bytes"):
        parse_items(text.encode(), max_bytes=len(text) - 1)
    # Counted in UTF-8 bytes, not characters.
    wide = json.dumps([{"content": "é" * 10, "tokens": 1}], ensure_ascii=False)
    with pytest.raises(InputFormatError, match="max_bytes"):
        parse_items(wide, max_bytes=len(wide))


@pytest.mark.parametrize("lines", [False, True])
def test_items_max_items(lines: bool) -> None:
    text = "\n".join(json.dumps(ITEM) for _ in range(5)) if lines else json.dumps([ITEM] * 5)
    assert len(parse_items(text, max_items=5)) == 5
    with pytest.raises(InputFormatError, match="more than 4 items"):
        parse_items(text, max_items=4)


def test_items_max_depth_counts_array_and_item_levels() -> None:
    # array (1) > item (2) > metadata, the first of the nested objects (3)
    ok = json.dumps([{**ITEM, "metadata": _nested(DEFAULT_MAX_DEPTH - 2)}])
    assert parse_items(ok)[0].metadata
    deep = json.dumps([{**ITEM, "metadata": _nested(DEFAULT_MAX_DEPTH - 1)}])
    with pytest.raises(InputFormatError, match="max_depth"):
        parse_items(deep)
    assert parse_items(deep, max_depth=DEFAULT_MAX_DEPTH + 1)
    line = json.dumps({**ITEM, "metadata": _nested(3)})
    with pytest.raises(InputFormatError, match=r"line 1: nested more than 3 levels"):
        parse_items(line, max_depth=3)


def test_far_deeper_than_the_recursion_limit_is_an_input_error() -> None:
    with pytest.raises(InputFormatError, match="nested more than"):
        parse_items("[" * 200_000 + "]" * 200_000)


def test_read_items_stops_reading_at_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text(json.dumps([ITEM] * 100))
    assert len(read_items(path)) == 100
    with pytest.raises(InputFormatError, match="max_bytes") as caught:
        read_items(path, max_bytes=50)
    assert caught.value.source == str(path)
    with pytest.raises(InputFormatError, match="max_items"):
        read_items(path, max_items=99)


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("max_bytes", 0),
        ("max_items", -1),
        ("max_depth", 0),
        ("max_bytes", True),
        ("max_items", 1.5),
    ],
)
def test_limits_are_validated(argument: str, value: object) -> None:
    with pytest.raises(PipelineConfigError, match=argument):
        parse_items("[]", **{argument: value})  # type: ignore[arg-type]


def test_report_reader_max_bytes_and_argument_types() -> None:
    from pycupel.diagnostics import SelectionReport

    text = '{"events": [], "included": [], "excluded": [], "total_candidates": 0, '
    text += '"total_tokens_considered": 0}'
    assert SelectionReport.from_json(text, max_bytes=len(text)).total_candidates == 0
    with pytest.raises(InputFormatError, match="max_bytes"):
        SelectionReport.from_json(text, max_bytes=len(text) - 1)
    with pytest.raises(InputFormatError, match="max_bytes"):
        SelectionReport.from_json(text.encode(), max_bytes=10)
    with pytest.raises(PipelineConfigError, match="text"):
        SelectionReport.from_json(123)  # type: ignore[arg-type]


def test_vector_documents_have_a_size_limit(tmp_path: Path) -> None:
    from pycupel.conformance.vectors import (
        DEFAULT_MAX_VECTOR_BYTES,
        parse_document,
        read_document,
    )
    from pycupel.errors import ConformanceVectorError

    assert DEFAULT_MAX_VECTOR_BYTES >= 1024 * 1024
    path = tmp_path / "v.toml"
    path.write_text("[test]\nname = 'x'\n")
    assert read_document(path)["test"]["name"] == "x"
    with pytest.raises(ConformanceVectorError, match="max_bytes"):
        read_document(path, max_bytes=5)
    with pytest.raises(ConformanceVectorError, match="max_bytes"):
        parse_document(b"a = 1\n" * 10, max_bytes=20)
