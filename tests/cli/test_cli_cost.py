"""``pycupel cost``: a JSON Lines file of requests in, per-turn and total input cost out."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pycupel.analytics import render_request, replay_cost
from pycupel.cli import main


def write_requests(path: Path, turns: int) -> list[list[dict[str, str]]]:
    history = [{"role": "system", "content": "You answer questions about trains. " * 250}]
    requests = []
    for turn in range(turns):
        history.append({"role": "user", "content": f"When does train {turn} leave?"})
        requests.append(list(history))
        history.append({"role": "assistant", "content": f"Train {turn} leaves at 9:{turn:02d}."})
    path.write_text("\n".join(json.dumps(r) for r in requests) + "\n", encoding="utf-8")
    return requests


def test_cost_json_matches_the_library(tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    requests = write_requests(path, 5)
    result = CliRunner().invoke(main, ["cost", str(path), "--model", "gpt-4.1", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    expected = replay_cost([render_request(r) for r in requests], price="gpt-4.1")
    assert data["total_cost_usd"] == expected.total_cost_usd
    assert data["cached_share"] > 0.5
    assert len(data["per_turn"]) == 5


def test_cost_table_for_anthropic_objects(tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    lines = [
        {"system": "Be brief.", "messages": [{"role": "user", "content": "hi"}]},
        {"system": "Be brief.", "messages": [{"role": "user", "content": "hi again"}]},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    result = CliRunner().invoke(main, ["cost", str(path), "--model", "claude-sonnet-4-5"])
    assert result.exit_code == 0, result.output
    assert "total $" in result.output


def test_cost_errors_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    path.write_text('{"messages": 3}\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["cost", str(path), "--model", "gpt-4.1"])
    assert result.exit_code == 1
    assert "line 1" in result.output
    assert "Traceback" not in result.output
    missing = CliRunner().invoke(main, ["cost", str(tmp_path / "no.jsonl"), "--model", "gpt-4.1"])
    assert missing.exit_code == 1
