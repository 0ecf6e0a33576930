"""Every CLI error takes one form on stderr; exit 2 for usage errors, 1 for input errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pycupel.cli import main

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "support-chat.json")


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["select", EXAMPLE], "Missing option '--budget'"),
        (["select", EXAMPLE, "--budget", "-1"], "Invalid value for '--budget'"),
        (["select", EXAMPLE, "--budget", "10", "--nope"], "No such option"),
        (["select", EXAMPLE, "--budget", "10", "--placer", "sideways"], "unknown placer"),
        (["explain", EXAMPLE, "--budget", "10", "--preset", "chatt"], "did you mean 'Chat'?"),
        (["simulate", EXAMPLE, "--budgets", "10,x"], "--budgets"),
        (["select", EXAMPLE, "--budget", "10", "--target", "20"], "--target"),
    ],
)
def test_usage_errors_exit_2_with_one_line_and_where_to_find_help(
    args: list[str], expected: str
) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert expected in lines[0]
    assert lines[0].endswith(f" {args[0]} --help')")  # (see 'pycupel select --help')


def test_input_errors_exit_1_with_one_line(tmp_path: Path) -> None:
    missing = str(tmp_path / "none.json")
    for args in (
        ["select", missing, "--budget", "10"],
        ["select", EXAMPLE, "--budget", "10", "--policy", str(tmp_path / "none.toml")],
        ["explain", EXAMPLE, "--budget", "10", "--html", str(tmp_path / "no" / "r.html")],
    ):
        result = run(*args)
        assert result.exit_code == 1, args
        assert result.stdout == ""
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert result.stderr.startswith("Error: ")


def test_a_file_with_several_problems_prints_a_header_and_one_line_each(tmp_path: Path) -> None:
    policy = tmp_path / "bad.json"
    policy.write_text(
        json.dumps({"name": "x", "scorers": [{"type": "recency", "weight": -1}], "placer": "x"})
    )
    result = run("select", EXAMPLE, "--budget", "100", "--policy", str(policy))
    assert result.exit_code == 1
    header, *problems = result.stderr.splitlines()
    assert header == f"Error: {policy}: 2 problems in policy"
    assert problems == [
        "  scorers[0].weight: must be > 0, got -1",
        "  placer: unknown placer 'x' (expected one of: chronological, u-shaped)",
    ]


@pytest.mark.parametrize("spelling", ["u-shaped", "UShaped", "ushaped", "u_shaped", "U-Shaped"])
def test_placer_accepts_the_policy_file_spellings(spelling: str) -> None:
    shaped = run("select", EXAMPLE, "--budget", "600", "--json", "--placer", spelling)
    canonical = run("select", EXAMPLE, "--budget", "600", "--json", "--placer", "u-shaped")
    assert shaped.exit_code == 0, shaped.stderr
    assert json.loads(shaped.stdout)["items"] == json.loads(canonical.stdout)["items"]


def test_help_and_version_still_exit_0() -> None:
    assert run("--help").exit_code == 0
    assert run("select", "--help").exit_code == 0
    assert run("--version").exit_code == 0
