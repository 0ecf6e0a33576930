"""``--format``: items, OpenAI and Anthropic message histories, and the auto-detection rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from pycupel.adapters import openai
from pycupel.cli import main
from pycupel.cli._input import detect_format, read_candidates
from pycupel.errors import InputFormatError, MessageFormatError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
OPENAI = EXAMPLES / "openai-history.json"
ANTHROPIC = EXAMPLES / "anthropic-history.json"
ITEMS = EXAMPLES / "support-chat.json"


def run(*args: str, stdin: str | None = None) -> Result:
    runner = CliRunner(env={"COLUMNS": "160"})
    return runner.invoke(main, list(args), input=stdin, catch_exceptions=False)


def write(path: Path, document: Any) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


PLAIN = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ([{"content": "x", "tokens": 1}], "items"),
        ({"content": "x", "tokens": 1}, "items"),
        ([], "items"),
        ({"messages": [{"role": "system", "content": "s"}, *PLAIN]}, "openai"),
        ([{"role": "developer", "content": "d"}, *PLAIN], "openai"),
        (
            {"messages": [*PLAIN, {"role": "assistant", "content": None, "tool_calls": []}]},
            "openai",
        ),
        (
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
            "openai",
        ),
        ({"system": "be brief", "messages": PLAIN}, "anthropic"),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}
                ]
            },
            "anthropic",
        ),
        (
            [{"role": "user", "content": [{"type": "image", "source": {"type": "base64"}}]}],
            "anthropic",
        ),
        ({"model": "m", "max_tokens": 5, "messages": [{"role": "tool", "content": "r"}]}, "openai"),
    ],
)
def test_detection_rules(document: Any, expected: str) -> None:
    assert detect_format(document) == expected


@pytest.mark.parametrize(
    ("document", "why"),
    [
        ({"messages": PLAIN}, "plain user/assistant messages are valid for both providers"),
        (PLAIN, "plain user/assistant messages are valid for both providers"),
        (
            {"system": "s", "messages": [{"role": "tool", "content": "r"}]},
            "it shows signs of both providers",
        ),
    ],
)
def test_ambiguous_histories_ask_for_a_format(document: Any, why: str) -> None:
    with pytest.raises(
        InputFormatError, match="pass --format openai or --format anthropic"
    ) as info:
        detect_format(document, source="h.json")
    assert why in str(info.value)


def test_bundled_histories_are_detected() -> None:
    assert read_candidates(str(OPENAI)).format == "openai"
    assert read_candidates(str(ANTHROPIC)).format == "anthropic"
    assert read_candidates(str(ITEMS)).format == "items"


def test_explain_an_openai_history_returns_the_kept_messages_in_order() -> None:
    result = run("explain", str(OPENAI), "--budget", "600", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    original = json.loads(OPENAI.read_text(encoding="utf-8"))["messages"]
    kept = data["history"]["messages"]
    assert 0 < len(kept) < len(original)
    # The adapter's fit (a tool result may be kept as a placeholder, with its call's id).
    assert kept == openai.fit_messages(original, budget=600).messages
    assert kept[0]["role"] == "system"  # pinned
    assert data["report"]["total_candidates"] == len(data["report"]["included"]) + len(
        data["report"]["excluded"]
    )


def test_select_an_anthropic_history_keeps_its_system_prompt() -> None:
    result = run("select", str(ANTHROPIC), "--budget", "700", "--json")
    assert result.exit_code == 0, result.output
    history = json.loads(result.stdout)["history"]
    original = json.loads(ANTHROPIC.read_text(encoding="utf-8"))
    assert history["system"] == original["system"]
    assert history["messages"][0]["role"] == "user"


def test_items_input_has_no_history_key() -> None:
    data = json.loads(run("select", str(ITEMS), "--budget", "800", "--json").stdout)
    assert "history" not in data


def test_histories_are_not_deduplicated(tmp_path: Path) -> None:
    path = write(
        tmp_path / "h.json",
        {
            "messages": [
                {"role": "system", "content": "s"},
                {"role": "user", "content": "ok"},
                {"role": "assistant", "content": "done"},
                {"role": "user", "content": "ok"},
            ]
        },
    )
    data = json.loads(run("select", path, "--budget", "1000", "--json").stdout)
    assert data["report"]["excluded"] == []
    assert len(data["history"]["messages"]) == 4


def test_ambiguous_history_is_a_one_line_error_until_a_format_is_given(tmp_path: Path) -> None:
    path = write(tmp_path / "plain.json", {"messages": PLAIN})
    result = run("explain", path, "--budget", "100")
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert "pass --format openai or --format anthropic" in result.stderr
    for provider in ("openai", "anthropic"):
        chosen = run("explain", path, "--budget", "100", "--format", provider, "--json")
        assert chosen.exit_code == 0
        assert len(json.loads(chosen.stdout)["history"]["messages"]) == 2


def test_standard_input_history() -> None:
    result = run("explain", "-", "--budget", "600", "--json", stdin=OPENAI.read_text())
    assert result.exit_code == 0
    assert "history" in json.loads(result.stdout)


def test_wrong_explicit_format_is_reported(tmp_path: Path) -> None:
    as_items = run("select", str(OPENAI), "--budget", "600", "--format", "items")
    assert as_items.exit_code == 1
    assert "Traceback" not in as_items.output
    as_openai = run("select", str(ITEMS), "--budget", "600", "--format", "openai")
    assert as_openai.exit_code == 1
    assert "messages[0]" in as_openai.stderr
    scalar = write(tmp_path / "n.json", 42)
    with pytest.raises(InputFormatError, match="expected an Anthropic message history"):
        read_candidates(scalar, "anthropic")
    system = write(tmp_path / "s.json", {"system": "x", "messages": PLAIN})
    with pytest.raises(InputFormatError, match="no top-level system prompt"):
        read_candidates(system, "openai")


def test_malformed_history_names_the_place(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", {"messages": [{"role": "tool", "content": "orphan"}]})
    with pytest.raises(MessageFormatError):
        read_candidates(path)
    result = run("explain", path, "--budget", "100")
    assert result.exit_code == 1
    assert "messages[0]" in result.stderr


def test_simulate_a_history() -> None:
    result = run("simulate", str(ANTHROPIC), "--budgets", "400,800,1600", "--json")
    assert result.exit_code == 0, result.output
    budgets = json.loads(result.stdout)["budgets"]
    assert [entry["max_tokens"] for entry in budgets] == [400, 800, 1600]
    counts = [entry["items_selected"] for entry in budgets]
    assert counts == sorted(counts)
