"""``--preset`` / ``--policy`` on the pipeline commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pycupel.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = str(REPO / "examples" / "support-chat.json")
POLICY = str(REPO / "examples" / "policies" / "support-agent.toml")


def _select(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(main, ["select", EXAMPLE, "--budget", "1200", "--json", *args])
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.output)
    return data


@pytest.mark.parametrize(
    "preset", ["chat", "CodeReview", "rag", "document-qa", "tool_use", "LongRunning", "debugging"]
)
def test_every_preset_selects_from_the_example(preset: str) -> None:
    data = _select("--preset", preset)
    items = data["items"]
    assert isinstance(items, list)
    assert items
    assert int(str(data["total_tokens"])) <= 1200
    # The pinned system prompt is always there.
    assert any(item["kind"] == "SystemPrompt" for item in items)


def test_presets_change_the_selection() -> None:
    chat = [item["content"] for item in _select("--preset", "chat")["items"]]  # type: ignore[attr-defined]
    rag = [item["content"] for item in _select("--preset", "rag")["items"]]  # type: ignore[attr-defined]
    assert chat != rag


def test_policy_file_runs() -> None:
    data = _select("--policy", POLICY)
    assert data["items"]


def test_placer_overrides_the_preset() -> None:
    report = _select("--preset", "rag", "--placer", "chronological")["report"]
    assert isinstance(report, dict)
    assert report["included"]


def test_unknown_preset_is_a_one_line_usage_error() -> None:
    result = CliRunner().invoke(main, ["select", EXAMPLE, "--budget", "1200", "--preset", "x"])
    assert result.exit_code == 2
    assert len(result.output.splitlines()) == 1
    assert "preset: must be one of: Chat, CodeReview" in result.output
    assert "Traceback" not in result.output


def test_preset_and_policy_together_is_a_usage_error() -> None:
    result = CliRunner().invoke(
        main, ["select", EXAMPLE, "--budget", "1200", "--preset", "chat", "--policy", POLICY]
    )
    assert result.exit_code == 2
    assert "not both" in result.output


@pytest.mark.parametrize("command", ["explain", "simulate"])
def test_explain_and_simulate_take_a_preset(command: str) -> None:
    args = ["--budget", "1200"] if command == "explain" else ["--budgets", "600,1200"]
    result = CliRunner().invoke(main, [command, EXAMPLE, *args, "--preset", "chat", "--json"])
    assert result.exit_code == 0, result.output
    json.loads(result.output)
