"""A lone surrogate (JSON ``"\\ud800"``) in the input is refused with one error line naming the
place, in every output mode, instead of a UnicodeEncodeError traceback when printing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pycupel.cli import main

DOCUMENTS = {
    "content": ('[{"content": "ok", "tokens": 3}, {"content": "bad \\ud800", "tokens": 5}]'),
    "metadata key": '[{"content": "ok", "tokens": 3, "metadata": {"k\\udc00": "v"}}]',
    "message": '[{"role": "user", "content": "hi \\udbff"}]',
}
PLACES = {"content": "[1].content", "metadata key": "[0].metadata", "message": "[0].content"}
MODES = {
    "select": ["select"],
    "select --json": ["select", "--json"],
    "explain": ["explain"],
    "explain --json": ["explain", "--json"],
    "explain --html": ["explain", "--html", "{out}"],
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("where", sorted(DOCUMENTS))
def test_a_lone_surrogate_is_one_error_line(tmp_path: Path, where: str, mode: str) -> None:
    path = tmp_path / "items.json"
    path.write_text(DOCUMENTS[where], encoding="utf-8")
    out = str(tmp_path / "report.html")
    command, *options = MODES[mode]
    args = [command, str(path), "--budget", "100", *(o.format(out=out) for o in options)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert PLACES[where] in result.output
    assert "lone surrogate" in result.output
    assert not (tmp_path / "report.html").exists()


def test_the_real_command_prints_the_error_on_a_strict_terminal(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text(DOCUMENTS["content"], encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pycupel", "explain", str(path), "--budget", "100"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={"PYTHONIOENCODING": "utf-8:strict", "PATH": ""},
        check=False,
        timeout=120,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "[1].content: a string holds a lone surrogate (U+D800 at index 4)" in done.stderr
