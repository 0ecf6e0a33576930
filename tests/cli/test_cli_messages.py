"""Input mistakes a newcomer makes, each named for what it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from pycupel.cli import main

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "support-chat.json")


def run(*args: str) -> Result:
    return CliRunner(env={"COLUMNS": "160"}).invoke(main, list(args), catch_exceptions=False)


def one_line_error(result: Result, status: int = 1) -> str:
    assert result.exit_code == status, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


REQUEST = {"messages": [{"role": "user", "content": "When does the train leave?"}]}


@pytest.mark.parametrize(
    ("document", "what"),
    [
        (REQUEST, "one JSON document spread over"),
        ([REQUEST, REQUEST], "a JSON array of 2 entries spread over"),
        (REQUEST["messages"] * 3, "one list of 3 messages spread over"),
    ],
)
def test_cost_names_a_pretty_printed_file_as_such(tmp_path: Path, document: Any, what: str) -> None:
    path = tmp_path / "requests.jsonl"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    error = one_line_error(run("cost", str(path), "--model", "gpt-4o"))
    assert "expected JSON Lines, one request per line" in error
    assert what in error
    assert "(pretty-printed JSON)" in error
    assert "invalid JSON" not in error


def test_replay_names_a_pretty_printed_log_as_such(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    path = tmp_path / "log.jsonl"
    record = {"format": "openai", **REQUEST}
    path.write_text(json.dumps(record, indent=2), encoding="utf-8")
    out = str(tmp_path / "rows.parquet")
    result = run("replay", str(path), "--policy", "chat", "--budget", "100", "--out", out)
    error = one_line_error(result)
    assert "expected JSON Lines, one logged request per line" in error
    assert "one JSON document spread over 9 lines" in error


def test_a_broken_json_lines_file_still_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    path.write_text(json.dumps(REQUEST) + "\n{not json\n", encoding="utf-8")
    error = one_line_error(run("cost", str(path), "--model", "gpt-4o"))
    assert "line 2, column 2: invalid JSON" in error


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": "hi"},
        {"role": "model", "parts": [{"text": "hi"}]},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        {"type": "human", "data": {"content": "hi"}},
    ],
)
def test_a_single_message_is_named_as_one(tmp_path: Path, message: dict[str, Any]) -> None:
    path = tmp_path / "message.json"
    path.write_text(json.dumps(message, indent=2), encoding="utf-8")
    error = one_line_error(run("select", str(path), "--budget", "100"))
    assert "the file holds a single message; a message history is a JSON array" in error
    assert "unknown field" not in error


def test_a_single_message_with_an_explicit_format(tmp_path: Path) -> None:
    path = tmp_path / "message.json"
    path.write_text(json.dumps({"role": "user", "content": "hi"}), encoding="utf-8")
    error = one_line_error(run("select", str(path), "--budget", "100", "--format", "anthropic"))
    assert "the file holds a single message; expected an Anthropic message history" in error


def test_messages_one_per_line_are_named(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    lines = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    error = one_line_error(run("select", str(path), "--budget", "100"))
    assert "line 1: holds a message, one per line (JSON Lines)" in error


def test_one_item_object_is_still_an_item(tmp_path: Path) -> None:
    path = tmp_path / "item.json"
    path.write_text(json.dumps({"content": "hi", "tokens": 2}, indent=2), encoding="utf-8")
    result = run("select", str(path), "--budget", "100", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["items"] == [{"content": "hi", "tokens": 2, "kind": "Message"}]


@pytest.mark.parametrize("wrapped", [False, True])
def test_langchain_roles_are_named_with_their_message(tmp_path: Path, wrapped: bool) -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "human", "content": "hi"},
        {"role": "ai", "content": "hello"},
        {"role": "human", "content": "bye"},
    ]
    path = tmp_path / "history.json"
    path.write_text(json.dumps({"messages": messages} if wrapped else messages), encoding="utf-8")
    error = one_line_error(run("select", str(path), "--budget", "100"))
    assert "messages[1] has role 'human', messages[2] has role 'ai', messages[3] has role" in error
    assert "Anthropic: user, assistant; Gemini: user, model" in error
    assert "'human' and 'ai' are LangChain message types" in error
    assert "cannot tell the message format" not in error


def test_an_unknown_role_is_named_without_the_langchain_hint(tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    path.write_text(json.dumps([{"role": "bot", "content": "hi"}]), encoding="utf-8")
    error = one_line_error(run("explain", str(path), "--budget", "100"))
    assert "messages[0] has role 'bot', which no message format takes" in error
    assert "LangChain" not in error


@pytest.mark.parametrize("preset", ["retrieval", "Conversation", "memory"])
def test_a_query_preset_without_query_is_a_usage_error(preset: str) -> None:
    for command in ("select", "explain"):
        result = run(command, EXAMPLE, "--budget", "600", "--preset", preset)
        error = one_line_error(result, status=2)
        assert "--query is required with the" in error
        assert "query=" not in error  # no Python argument names
        assert f"(see 'main {command} --help')" in error


def test_a_policy_file_reading_the_query_needs_it_too(tmp_path: Path) -> None:
    policy = tmp_path / "nested.json"
    policy.write_text(
        json.dumps(
            {
                "name": "Nested",
                "scorers": [
                    {"type": "recency", "weight": 1},
                    {"type": "scaled", "weight": 1, "inner": {"type": "relevance"}},
                ],
            }
        ),
        encoding="utf-8",
    )
    error = one_line_error(run("select", EXAMPLE, "--budget", "600", "--policy", str(policy)), 2)
    assert "--query is required with the Nested policy" in error
    chosen = run("select", EXAMPLE, "--budget", "600", "--policy", str(policy), "--query", "x")
    assert chosen.exit_code == 0, chosen.output


def test_simulate_refuses_a_query_preset_on_items() -> None:
    error = one_line_error(
        run("simulate", EXAMPLE, "--budgets", "100,200", "--preset", "memory"), status=2
    )
    assert "simulate takes no --query" in error
