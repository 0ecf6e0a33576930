"""``--format responses`` and ``--format gemini``, and telling all five inputs apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from pycupel.cli import main
from pycupel.cli._input import detect_format, read_candidates
from pycupel.errors import InputFormatError

RESPONSES_INPUT = [
    {"role": "developer", "content": "Answer briefly."},
    {"role": "user", "content": "Weather in Paris and Rome?"},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "tools"}]},
    {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
    {"type": "function_call", "call_id": "c2", "name": "weather", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c2", "output": "sun " * 40},
    {"type": "function_call_output", "call_id": "c1", "output": "rain " * 40},
    {"role": "assistant", "content": [{"type": "output_text", "text": "Rain, then sun."}]},
    {"role": "user", "content": [{"type": "input_text", "text": "And tomorrow?"}]},
]
GEMINI_CONTENTS = [
    {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
    {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {}}}]},
    {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {"t": 1}}}]},
    {"role": "model", "parts": [{"text": "It is 18 C " * 20}]},
    {"role": "user", "parts": [{"text": "And tomorrow?"}]},
]


def run(*args: str) -> Result:
    return CliRunner(env={"COLUMNS": "160"}).invoke(main, list(args), catch_exceptions=False)


def write(path: Path, document: Any) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"input": RESPONSES_INPUT, "instructions": "x"}, "responses"),
        ({"model": "gpt-4.1", "input": "hello"}, "responses"),
        (RESPONSES_INPUT, "responses"),
        ([{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}], "responses"),
        ({"contents": GEMINI_CONTENTS, "system_instruction": "x"}, "gemini"),
        (GEMINI_CONTENTS, "gemini"),
        ([{"role": "model", "content": "x"}], "gemini"),
        ([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}], "openai"),
        (
            [
                {"role": "system", "content": "s"},
                {"role": "user", "content": [{"type": "input_text", "text": "u"}]},
            ],
            "responses",
        ),
    ],
)
def test_responses_and_gemini_are_detected(document: Any, expected: str) -> None:
    assert detect_format(document) == expected


def test_mixed_signs_ask_for_a_format() -> None:
    document = [*GEMINI_CONTENTS, {"role": "tool", "tool_call_id": "x", "content": "r"}]
    with pytest.raises(InputFormatError, match="--format openai or --format gemini"):
        detect_format(document)


def test_select_a_responses_request_returns_its_input(tmp_path: Path) -> None:
    path = write(tmp_path / "r.json", {"instructions": "Be brief.", "input": RESPONSES_INPUT})
    result = run("select", path, "--budget", "80", "--json")
    assert result.exit_code == 0, result.output
    history = json.loads(result.stdout)["history"]
    assert history["instructions"] == "Be brief."
    kept = history["input"]
    assert kept[0] == RESPONSES_INPUT[0]
    assert kept[-1] == RESPONSES_INPUT[-1]
    assert not any(item.get("type") == "function_call_output" for item in kept)


def test_select_a_gemini_request_returns_its_contents(tmp_path: Path) -> None:
    path = write(
        tmp_path / "g.json", {"systemInstruction": "Be brief.", "contents": GEMINI_CONTENTS}
    )
    candidates = read_candidates(path)
    assert candidates.format == "gemini"
    assert candidates.fitted(candidates.items) == {
        "system_instruction": "Be brief.",
        "contents": GEMINI_CONTENTS,
    }
    result = run("select", path, "--budget", "40", "--json")
    assert result.exit_code == 0, result.output
    contents = json.loads(result.stdout)["history"]["contents"]
    assert contents[0]["role"] == "user"
    assert contents[-1] == GEMINI_CONTENTS[-1]


def test_explicit_format_reads_a_plain_array(tmp_path: Path) -> None:
    plain = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    path = write(tmp_path / "p.json", plain)
    assert read_candidates(path, "responses").format == "responses"
    result = run("select", path, "--format", "responses", "--budget", "100", "--json")
    assert json.loads(result.stdout)["history"]["input"] == plain
