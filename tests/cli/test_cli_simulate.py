"""``pycupel simulate``: the budget sweep as a table, JSON, HTML and SVG; errors."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from pycupel.cli import main
from pycupel.cli._common import build_pipeline
from pycupel.cli.simulate import parse_budgets
from pycupel.itemio import read_items
from pycupel.model import ContextBudget

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-chat.json"


def run(*args: str, stdin: str | None = None) -> Result:
    runner = CliRunner(env={"COLUMNS": "160"})
    return runner.invoke(main, list(args), input=stdin, catch_exceptions=False)


def test_table_has_a_row_per_budget() -> None:
    result = run("simulate", str(EXAMPLE), "--budgets", "400,200,800")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "Budget sweep" in lines[0]
    header = next(line for line in lines if "utilisation" in line)
    for column in ("budget", "items", "tokens used", "utilisation", "total score", "added"):
        assert column in header
    budgets = [line.split()[0] for line in lines if line.strip()[:1].isdigit()]
    assert budgets == ["200", "400", "800"]


def test_json_matches_one_dry_run_per_budget() -> None:
    result = run("simulate", str(EXAMPLE), "--budgets", "300:900:300", "--output-reserve", "20")
    assert result.exit_code == 0
    data = json.loads(
        run(
            "simulate", str(EXAMPLE), "--budgets", "300:900:300", "--output-reserve", "20", "--json"
        ).stdout
    )
    items = read_items(EXAMPLE)
    assert data["candidates"] == len(items)
    assert [entry["max_tokens"] for entry in data["budgets"]] == [300, 600, 900]
    previous: set[int] | None = None
    for entry in data["budgets"]:
        budget = ContextBudget(
            max_tokens=entry["max_tokens"], target_tokens=entry["max_tokens"], output_reserve=20
        )
        report = build_pipeline(budget).dry_run(items).report
        expected = [items.index(e.item) for e in report.included]
        assert entry["selected"] == expected
        assert entry["items_selected"] == len(expected)
        assert entry["tokens_used"] == sum(e.item.tokens for e in report.included)
        assert entry["total_score"] == pytest.approx(sum(e.score for e in report.included))
        assert entry["utilisation"] == pytest.approx(entry["tokens_used"] / entry["max_tokens"])
        assert entry["output_reserve"] == 20
        current = set(expected)
        if previous is None:
            assert "added" not in entry
            assert "removed" not in entry
        else:
            assert entry["added"] == len(current - previous)
            assert entry["removed"] == len(previous - current)
        previous = current


def test_infeasible_budgets_are_reported_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text(
        json.dumps(
            [
                {"content": "pinned", "tokens": 50, "pinned": True},
                {"content": "other", "tokens": 10},
            ]
        )
    )
    data = json.loads(run("simulate", str(path), "--budgets", "40,100", "--json").stdout)
    assert [entry["feasible"] for entry in data["budgets"]] == [False, True]
    assert data["budgets"][0]["selected"] == []
    table = run("simulate", str(path), "--budgets", "40,100").stdout
    assert "pinned items do not fit" in table


def test_html_and_svg_files(tmp_path: Path) -> None:
    page, chart = tmp_path / "sweep.html", tmp_path / "sweep.svg"
    result = run(
        "simulate",
        str(EXAMPLE),
        "--budgets",
        "200,600,1000",
        "--html",
        str(page),
        "--svg",
        str(chart),
    )
    assert result.exit_code == 0
    assert f"HTML page written to {page}" in result.stdout
    assert f"SVG chart written to {chart}" in result.stdout
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert "Budget sweep: support-chat.json" in html
    root = ET.fromstring(chart.read_text(encoding="utf-8"))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert len(root.findall("{http://www.w3.org/2000/svg}circle")) == 9


def test_json_with_files_keeps_stdout_json(tmp_path: Path) -> None:
    result = run(
        "simulate", str(EXAMPLE), "--budgets", "500", "--json", "--svg", str(tmp_path / "c.svg")
    )
    assert result.exit_code == 0
    json.loads(result.stdout)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1000", [1000]),
        ("300,100,200", [100, 200, 300]),
        ("100:500:200", [100, 300, 500]),
        ("0:10:5, 7", [0, 5, 7, 10]),
        ("100:100:1", [100]),
    ],
)
def test_parse_budgets(text: str, expected: list[int]) -> None:
    assert parse_budgets(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "'abc' in 'abc' is not a whole number"),
        ("100,", "empty entry"),
        ("-5", "budgets must be >= 0"),
        ("500:100:10", "START <= STOP and a STEP > 0"),
        ("100:500:0", "START <= STOP and a STEP > 0"),
        ("1:2", "neither a token count nor a START:STOP:STEP range"),
        ("100,100", "budget 100 is given twice"),
        ("0:100000:1", "more than 10,000 budgets"),
    ],
)
def test_parse_budgets_rejects(text: str, message: str) -> None:
    with pytest.raises(click.BadParameter, match=message):
        parse_budgets(text)


def test_bad_budgets_are_a_usage_error() -> None:
    result = run("simulate", str(EXAMPLE), "--budgets", "10,x")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "--budgets" in result.stderr


def test_budget_below_reserve_is_a_usage_error() -> None:
    result = run("simulate", str(EXAMPLE), "--budgets", "10,500", "--output-reserve", "50")
    assert result.exit_code == 2
    assert "must be >= --output-reserve (50), got 10" in result.stderr


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    result = run("simulate", str(tmp_path / "none.json"), "--budgets", "10")
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert "cannot read file" in result.stderr


def test_unwritable_svg_is_one_line(tmp_path: Path) -> None:
    result = run(
        "simulate", str(EXAMPLE), "--budgets", "100", "--svg", str(tmp_path / "missing" / "c.svg")
    )
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1
