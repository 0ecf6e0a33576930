"""Reading and writing items as JSON and JSON Lines."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from pycupel.errors import InputFormatError
from pycupel.itemio import (
    item_from_dict,
    item_to_dict,
    items_to_json,
    items_to_jsonl,
    parse_items,
    read_items,
)
from pycupel.model import ContextItem, ContextKind, ContextSource

FULL = {
    "content": "Refund policy: 30 days.",
    "tokens": 42,
    "kind": "Document",
    "source": "Rag",
    "priority": 2,
    "tags": ["billing", "policy"],
    "metadata": {"url": "https://example.test/refunds", "rank": 1},
    "timestamp": "2024-05-02T10:00:00+02:00",
    "futureRelevanceHint": 0.4,
    "pinned": False,
    "originalTokens": 120,
}


def test_full_item_is_read() -> None:
    item = item_from_dict(FULL)
    assert item.content == "Refund policy: 30 days."
    assert item.tokens == 42
    assert item.kind == ContextKind.DOCUMENT
    assert item.source == ContextSource.RAG
    assert item.priority == 2
    assert item.tags == ("billing", "policy")
    assert dict(item.metadata) == {"url": "https://example.test/refunds", "rank": 1}
    assert item.timestamp == datetime(2024, 5, 2, 8, 0, tzinfo=UTC)
    assert item.future_relevance_hint == 0.4
    assert item.pinned is False
    assert item.original_tokens == 120


def test_minimal_item_and_defaults() -> None:
    item = item_from_dict({"content": "hi", "tokens": 3})
    assert (item.kind, item.source, item.priority, item.tags, item.timestamp) == (
        ContextKind.MESSAGE,
        ContextSource.CHAT,
        None,
        (),
        None,
    )
    assert item_to_dict(item) == {"content": "hi", "tokens": 3, "kind": "Message"}


def test_snake_case_aliases_and_nulls() -> None:
    item = item_from_dict(
        {
            "content": "x",
            "tokens": 1,
            "future_relevance_hint": 0.5,
            "original_tokens": 9,
            "priority": None,
            "timestamp": None,
        }
    )
    assert (item.future_relevance_hint, item.original_tokens, item.priority) == (0.5, 9, None)


def test_write_then_read_gives_equal_fields() -> None:
    items = [
        item_from_dict(FULL),
        ContextItem("pinned", tokens=0, pinned=True, kind="SystemPrompt"),
        ContextItem("nan hint", tokens=-2, future_relevance_hint=math.nan),
        ContextItem(
            "µs",
            tokens=1,
            timestamp=datetime(2024, 1, 1, 0, 0, 0, 123456, tzinfo=timezone(timedelta(hours=-5))),
        ),
    ]
    for text in (items_to_json(items), items_to_jsonl(items)):
        back = parse_items(text)
        assert [item_to_dict(i) for i in back] == [item_to_dict(i) for i in items]
    written = item_to_dict(items[3])
    assert written["timestamp"] == "2024-01-01T05:00:00.123456Z"
    assert item_to_dict(items[2])["futureRelevanceHint"] == "NaN"
    assert item_to_dict(items[0])["timestamp"] == "2024-05-02T08:00:00Z"


def test_json_lines_with_blank_lines_and_a_multiline_single_object() -> None:
    text = '{"content": "a", "tokens": 1}\n\n{"content": "b", "tokens": 2}\n'
    assert [i.content for i in parse_items(text)] == ["a", "b"]
    pretty = json.dumps({"content": "only", "tokens": 5}, indent=2)
    assert [i.content for i in parse_items(pretty)] == ["only"]
    assert parse_items("") == []
    assert parse_items(b"\xef\xbb\xbf[]") == []


@pytest.mark.parametrize(
    ("document", "location", "detail"),
    [
        ('[{"content": "a", "tokens": 1}, {"content": "b"}]', "items[1].tokens", "is required"),
        ('[{"content": "a", "tokens": "3"}]', "items[0].tokens", 'must be an integer, got "3"'),
        ('[{"content": "a", "tokens": 3.0}]', "items[0].tokens", "must be an integer, got 3.0"),
        ('[{"content": "a", "tokens": true}]', "items[0].tokens", "must be an integer"),
        ('[{"content": "", "tokens": 1}]', "items[0].content", "must be a non-empty string"),
        ('[{"content": "a", "tokens": 1, "colour": 1}]', "items[0].colour", "unknown field"),
        ('[{"content": "a", "tokens": 1, "kind": " "}]', "items[0].kind", "non-blank string"),
        ('[{"content": "a", "tokens": 1, "tags": "x"}]', "items[0].tags", "array of strings"),
        (
            '[{"content": "a", "tokens": 1, "tags": ["x", 2]}]',
            "items[0].tags[1]",
            "must be a string",
        ),
        (
            '[{"content": "a", "tokens": 1, "metadata": []}]',
            "items[0].metadata",
            "must be an object",
        ),
        ('[{"content": "a", "tokens": 1, "pinned": "yes"}]', "items[0].pinned", "true or false"),
        (
            '[{"content": "a", "tokens": 1, "originalTokens": -1}]',
            "items[0].originalTokens",
            ">= 0",
        ),
        (
            '[{"content": "a", "tokens": 1, "timestamp": "2024-06-01T10:00:00"}]',
            "items[0].timestamp",
            "must include a UTC offset",
        ),
        (
            '[{"content": "a", "tokens": 1, "timestamp": "yesterday"}]',
            "items[0].timestamp",
            "ISO 8601",
        ),
        (
            '[{"content": "a", "tokens": 1, "futureRelevanceHint": "high"}]',
            "items[0].futureRelevanceHint",
            "must be a number",
        ),
        (
            '[{"content": "a", "tokens": 1, "original_tokens": 1, "originalTokens": 1}]',
            "items[0].originalTokens",
            "given twice",
        ),
        ("[3]", "items[0]", "must be a JSON object"),
        (
            '{"content": "a", "tokens": 1}\n{"content": "b", "tokens": -0.5}',
            "line 2: items[1].tokens",
            "integer",
        ),
        ('{"content": "a", "tokens": 1}\n{"content": ', "line 2, column 13", "invalid JSON"),
        ('[{"content": "a", "tokens": 1, "tokens": 2}]', "", "duplicate key 'tokens'"),
        ('"text"', "", "expected a JSON array"),
    ],
)
def test_errors_name_the_place(document: str, location: str, detail: str) -> None:
    with pytest.raises(InputFormatError) as caught:
        parse_items(document, source="items.json")
    assert caught.value.location == location
    assert detail in caught.value.detail
    assert caught.value.source == "items.json"


def test_not_utf8() -> None:
    with pytest.raises(InputFormatError, match="not UTF-8"):
        parse_items(b'[{"content": "\xff", "tokens": 1}]')


def test_read_items_from_files(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text('{"content": "a", "tokens": 1}\n', encoding="utf-8")
    assert [i.content for i in read_items(path)] == ["a"]
    with pytest.raises(InputFormatError, match="cannot read file"):
        read_items(tmp_path / "missing.json")
