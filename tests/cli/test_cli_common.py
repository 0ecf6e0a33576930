"""The shared command helpers: when progress shows, where it goes, error conversion."""

from __future__ import annotations

import io
import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from rich.console import Console

from pycupel.cli import main
from pycupel.cli._common import (
    PROGRESS_THRESHOLD,
    ProgressDisplay,
    cli_errors,
    make_budget,
    wants_progress,
)
from pycupel.errors import PinnedBudgetError


def console(*, terminal: bool) -> Console:
    return Console(file=io.StringIO(), force_terminal=terminal, width=80)


@pytest.mark.parametrize(
    ("choice", "work", "as_json", "terminal", "expected"),
    [
        (None, PROGRESS_THRESHOLD + 1, False, True, True),
        (None, PROGRESS_THRESHOLD, False, True, False),
        (None, PROGRESS_THRESHOLD + 1, True, True, False),
        (None, PROGRESS_THRESHOLD + 1, False, False, False),
        (True, 1, True, False, True),
        (False, 10**9, False, True, False),
    ],
)
def test_wants_progress(
    choice: bool | None, work: int, as_json: bool, terminal: bool, expected: bool
) -> None:
    shown = wants_progress(choice, work=work, as_json=as_json, console=console(terminal=terminal))
    assert shown is expected


def test_progress_display_draws_on_its_console_only() -> None:
    target = console(terminal=True)
    with ProgressDisplay(True, target) as display:
        advance = display.task("Sweeping 10 items", 2)
        advance()
        advance()
    output = target.file.getvalue()  # type: ignore[attr-defined]
    assert "Sweeping 10 items" in output


def test_disabled_progress_draws_nothing() -> None:
    target = console(terminal=True)
    with ProgressDisplay(False, target) as display:
        display.task("hidden", 3)()
    assert target.file.getvalue() == ""  # type: ignore[attr-defined]


def test_forced_progress_goes_to_stderr_and_json_stays_clean(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text(json.dumps([{"content": f"m{i}", "tokens": 5} for i in range(20)]))
    runner = CliRunner()
    for args in (
        ["explain", str(path), "--budget", "50", "--json", "--progress"],
        ["simulate", str(path), "--budgets", "10:50:10", "--json", "--progress"],
    ):
        result = runner.invoke(main, args, catch_exceptions=False)
        assert result.exit_code == 0
        json.loads(result.stdout)


def test_cli_errors_turn_library_and_file_errors_into_one_line() -> None:
    with pytest.raises(click.ClickException, match="pinned items require 5 tokens"), cli_errors():
        raise PinnedBudgetError(5, 1)
    with pytest.raises(click.ClickException, match=r"^x\.txt: No such file"), cli_errors():
        raise FileNotFoundError(2, "No such file or directory", "x.txt")


def test_cli_errors_let_bugs_through() -> None:
    with pytest.raises(KeyError), cli_errors():
        raise KeyError("bug")


def test_make_budget_defaults_target_to_max() -> None:
    budget = make_budget(100, None, 10)
    assert (budget.max_tokens, budget.target_tokens, budget.output_reserve) == (100, 100, 10)
    with pytest.raises(click.BadParameter, match=r"must be <= --budget \(10\), got 11") as info:
        make_budget(10, None, 11)
    assert info.value.param_hint == "--output-reserve"
