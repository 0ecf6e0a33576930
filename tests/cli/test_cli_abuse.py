"""Odd inputs the command line used to accept silently, or answer with a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from pycupel.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-chat.json"


def run(*args: str) -> Result:
    return CliRunner(env={"COLUMNS": "160"}).invoke(main, list(args), catch_exceptions=False)


def one_line_error(result: Result, status: int = 1) -> str:
    assert result.exit_code == status, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def write(tmp_path: Path, document: Any) -> str:
    path = tmp_path / "input.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("document", "args", "expected"),
    [
        ([], [], "holds no items (an empty array): there is nothing to select from"),
        ({"messages": []}, [], "messages: holds no messages: there is nothing to fit"),
        ({"messages": []}, ["--format", "openai"], "messages: holds no messages"),
        ({"messages": []}, ["--format", "anthropic"], "messages: holds no messages"),
        ({"contents": []}, [], "contents: holds no messages"),
        ({"input": ""}, [], "input: holds no messages"),
        ([], ["--format", "responses"], "holds no messages"),
        ({"messages": None}, [], "messages: must be an array of messages, got null"),
        ([{"role": 5, "content": "x"}], [], "messages[0].role: must be a string, got 5"),
    ],
)
def test_nothing_to_select_from_is_an_input_error(
    tmp_path: Path, document: Any, args: list[str], expected: str
) -> None:
    path = write(tmp_path, document)
    for command in ("select", "explain"):
        error = one_line_error(run(command, path, "--budget", "100", *args))
        assert expected in error


def test_cost_of_a_binary_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    path.write_bytes(b'{"messages": []}\n\xae\xff\x00 binary\n')
    error = one_line_error(run("cost", str(path), "--model", "gpt-4o"))
    assert error == f"Error: {path}: line 2: not UTF-8 text: invalid start byte"


def test_an_output_file_never_overwrites_the_input(tmp_path: Path) -> None:
    items = tmp_path / "items.json"
    shutil.copy(EXAMPLE, items)
    before = items.read_bytes()
    for args, option in (
        (["explain", str(items), "--budget", "500", "--html", str(items)], "--html"),
        (["simulate", str(items), "--budgets", "100", "--html", str(items)], "--html"),
        (
            ["simulate", str(items), "--budgets", "100", "--svg", f"{tmp_path}/./items.json"],
            "--svg",
        ),
    ):
        error = one_line_error(run(*args), status=2)
        assert f"Invalid value for {option}:" in error
        assert "writing it would destroy the input" in error
    log = tmp_path / "log.jsonl"
    log.write_text('{"format": "openai", "messages": [{"role": "user", "content": "hi"}]}\n')
    replay = ["replay", str(log), "--policy", "chat", "--budget", "50", "--out", str(log)]
    assert "Invalid value for --out:" in one_line_error(run(*replay), status=2)
    assert items.read_bytes() == before
    assert log.read_text().startswith('{"format"')


@pytest.mark.parametrize("query", ["", "   ", "\n"])
def test_a_blank_query_is_a_usage_error(query: str) -> None:
    error = one_line_error(run("select", str(EXAMPLE), "--budget", "100", "--query", query), 2)
    assert "Invalid value for '--query': must not be blank" in error
