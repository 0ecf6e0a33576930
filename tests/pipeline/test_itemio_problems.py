"""Item files report every problem at once, with its path, and hint at near misses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pycupel.cli import main
from pycupel.errors import InputFormatError, KindNameWarning
from pycupel.itemio import near_misses, parse_items


def test_every_problem_of_every_item_is_listed_with_its_path() -> None:
    document = [
        {"content": "fine", "tokens": 3},
        {"content": "", "tokens": "many", "pinned": "yes"},
        {"tokens": 2, "tokns": 4},
    ]
    with pytest.raises(InputFormatError) as caught:
        parse_items(json.dumps(document), source="items.json")
    lines = str(caught.value).splitlines()
    assert lines[0] == "items.json: 5 problems in items"
    assert lines[1:] == [
        '  items[1].content: must be a non-empty string, got ""',
        '  items[1].tokens: must be an integer, got "many"',
        '  items[1].pinned: must be true or false, got "yes"',
        "  items[2].tokns: unknown field; did you mean 'tokens'? (known fields: content, tokens,"
        " kind, source, priority, tags, metadata, timestamp, futureRelevanceHint, pinned,"
        " originalTokens)",
        "  items[2].content: is required",
    ]


@pytest.mark.parametrize("content", [None, 3, [], {}])
def test_content_that_is_not_text_is_an_error_never_a_dropped_item(content: object) -> None:
    document = [{"content": content, "tokens": 5}, {"content": "a", "tokens": 3}]
    with pytest.raises(InputFormatError) as caught:
        parse_items(json.dumps(document), source="items.json")
    assert caught.value.location == "items[0].content"
    assert caught.value.detail == f"must be a non-empty string, got {json.dumps(content)}"


def test_the_command_line_refuses_null_content(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text('[{"content": null, "tokens": 5}, {"content": "a", "tokens": 3}]')
    for command in ("select", "explain"):
        result = CliRunner().invoke(main, [command, str(path), "--budget", "100"])
        assert result.exit_code == 1, result.output
        assert result.stderr.strip() == (
            f"Error: {path}: items[0].content: must be a non-empty string, got null"
        )


def test_one_problem_keeps_the_one_line_form() -> None:
    with pytest.raises(InputFormatError) as caught:
        parse_items('[{"content": "x", "tokens": 1, "priority": "high"}]', source="a.json")
    assert caught.value.location == "items[0].priority"
    assert "\n" not in str(caught.value)


def test_json_lines_report_every_bad_line() -> None:
    text = '{"content": "a", "tokens": 1}\n{"content": "b"\n{"content": "c", "Tokens": 1}\n'
    with pytest.raises(InputFormatError) as caught:
        parse_items(text, source="a.jsonl")
    message = str(caught.value)
    assert message.startswith("a.jsonl: 3 problems in items")
    assert "line 2, column" in message
    assert "line 3: items[2].Tokens: unknown field; did you mean 'tokens'?" in message
    assert "line 3: items[2].tokens: is required" in message


def test_near_miss_kinds_are_warned_about_not_refused(tmp_path: Path) -> None:
    with pytest.warns(KindNameWarning) as caught:
        items = parse_items(
            json.dumps(
                [
                    {"content": "a", "tokens": 1, "kind": "Documnet"},
                    {"content": "b", "tokens": 1, "kind": "Invoice", "source": "rag"},
                    {"content": "c", "tokens": 1, "source": "Tol"},
                ]
            )
        )
    assert [(w.message.field, w.message.value) for w in caught] == [  # type: ignore[union-attr]
        ("kind", "Documnet"),
        ("source", "Tol"),
    ]
    assert {w.filename for w in caught} == {__file__}  # the caller's line, not the package's
    assert near_misses(items) == [
        "items[0].kind: 'Documnet' is not a well-known kind; did you mean 'Document'? "
        "(kept as a custom kind)",
        "items[2].source: 'Tol' is not a well-known source; did you mean 'Tool'? "
        "(kept as a custom source)",
    ]
    path = tmp_path / "items.json"
    path.write_text(json.dumps([{"content": "a", "tokens": 1, "kind": "Memroy"}]))
    result = CliRunner().invoke(main, ["select", str(path), "--budget", "50"])
    assert result.exit_code == 0
    # One line naming the item: the model's own warning (which cannot) is not repeated.
    assert result.stderr == (
        f"Warning: {path}: items[0].kind: 'Memroy' is not a well-known kind; did you mean "
        "'Memory'? (kept as a custom kind)\n"
    )


@pytest.mark.parametrize("text", ["", "  \n\n", "\ufeff"])
def test_an_empty_file_is_a_clear_input_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.json"
    path.write_text(text, encoding="utf-8")
    for command in ("select", "explain"):
        result = CliRunner().invoke(main, [command, str(path), "--budget", "50"])
        assert result.exit_code == 1
        assert result.stderr == (
            f"Error: {path}: the input is empty: expected items (a JSON array or JSON Lines) "
            "or a message history\n"
        )
    assert parse_items(text) == []  # the library reads an empty document as no items


def test_the_command_line_prints_a_header_and_one_line_per_problem(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text(json.dumps([{"content": "a"}, {"content": "b", "tokens": 1.5}]))
    result = CliRunner().invoke(main, ["select", str(path), "--budget", "50"])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"Error: {path}: 2 problems in items",
        "  items[0].tokens: is required",
        "  items[1].tokens: must be an integer, got 1.5",
    ]
