"""``pycupel replay``: the command, its errors, and its imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pycupel.cli import main


def test_replay_writes_parquet_and_prints_the_summary(corpus: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "rows.parquet"
    result = CliRunner().invoke(
        main,
        [
            "replay",
            str(corpus),
            "--policy",
            "chat",
            "--policy",
            "tool-use",
            "--budget",
            "900",
            "--workers",
            "1",
            "--out",
            str(out),
            "--html",
            str(tmp_path / "report.html"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Worst cases" in (tmp_path / "report.html").read_text("utf-8")
    table = pq.read_table(out)
    assert table.num_rows == 27 * 2
    assert set(table["policy"].to_pylist()) == {"Chat", "ToolUse"}
    assert "Policy replay" in result.output
    assert "evidence recall" in result.output
    assert "wrote 54 rows" in result.output


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ("chatty", "preset: must be one of"),
        ("policies/missing.toml", "no policy file at"),
    ],
)
def test_a_missing_policy_fails_before_any_work(
    corpus: Path, tmp_path: Path, policy: str, message: str
) -> None:
    out = tmp_path / "rows.parquet"
    args = ["replay", str(corpus), "--policy", policy, "--budget", "900", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (1, 2)
    assert message in result.output
    assert not out.exists()


def test_a_malformed_line_is_one_error_line(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"format": "openai", "messages": []}\n{"format": "openai"}\n', "utf-8")
    out = tmp_path / "rows.parquet"
    args = ["replay", str(log), "--policy", "chat", "--budget", "900", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert f"Error: {log}: line 2: messages: must be an array" in result.output
    assert not out.exists()


def test_the_command_line_does_not_import_replay() -> None:
    code = (
        "import sys, pycupel.cli; "
        "loaded = [m for m in sys.modules if m.startswith(('pycupel.replay', 'pyarrow', 'ray'))]; "
        "print(loaded)"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert output.strip() == "[]"


def test_html_report_compares_the_policies(local_result, config) -> None:  # type: ignore[no-untyped-def]
    from pycupel.replay.report import replay_html
    from pycupel.replay.summary import summarize

    summaries = summarize(local_result.table)
    page = replay_html(local_result.table, summaries, sources=["<logs>"], config=config)
    assert page == replay_html(local_result.table, summaries, sources=["<logs>"], config=config)
    assert page.startswith("<!DOCTYPE html>")
    assert "&lt;logs&gt;" in page  # escaped
    for heading in ("Policies compared", "Distributions per request", "Worst cases"):
        assert heading in page
    for entry in summaries:
        assert f'<th class="num">{entry.policy}</th>' in page
        assert f"{entry.tokens_after:,.0f}" in page
    assert "http://" not in page
    assert "https://" not in page
    assert page.count("<svg") >= 2 * len(summaries)
