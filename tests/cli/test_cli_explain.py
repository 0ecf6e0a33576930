"""``pycupel explain``: human output, JSON, HTML, errors and exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pycupel.cli import main
from pycupel.diagnostics import SelectionReport

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-chat.json"


def run(*args: str, stdin: str | None = None, columns: int = 160) -> Result:
    runner = CliRunner(env={"COLUMNS": str(columns)})
    return runner.invoke(main, list(args), input=stdin, catch_exceptions=False)


def write_items(path: Path, items: list[dict[str, object]]) -> str:
    path.write_text(json.dumps(items), encoding="utf-8")
    return str(path)


@pytest.fixture
def small(tmp_path: Path) -> str:
    return write_items(
        tmp_path / "items.json",
        [
            {"content": "system rules", "tokens": 20, "kind": "SystemPrompt", "pinned": True},
            {"content": "first question", "tokens": 30, "priority": 1},
            {"content": "huge document", "tokens": 500, "kind": "Document", "priority": 5},
            {"content": "first question", "tokens": 30, "priority": 1},
            {"content": "latest question", "tokens": 25, "priority": 3},
        ],
    )


def test_human_output_has_headline_bar_table_and_summary(small: str) -> None:
    result = run("explain", small, "--budget", "100", "--output-reserve", "10")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Included 3 of 5 items (75 tokens); excluded 2 (530 tokens)." in out
    assert "Budget 75 of 100 target tokens used (75%) · max 100 · output reserve 10" in out
    assert "▲ target 100" in " ".join(out.split()) or "target 100 ▲" in out
    flat = " ".join(out.split())
    assert "BudgetExceeded: 500 tokens, 15 available" in flat
    assert "Deduplicated: identical to a kept item" in flat
    assert (
        "Exclusions: BudgetExceeded 1 item (500 tokens), Deduplicated 1 item (30 tokens)." in flat
    )
    assert result.stderr == ""


def test_json_is_the_result_and_the_spec_report(small: str) -> None:
    result = run("explain", small, "--budget", "100", "--target", "90", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    # the command line's own keys are snake_case; the report keeps the spec's wire format
    assert data["budget"] == {"max_tokens": 100, "target_tokens": 90, "output_reserve": 0}
    assert data["total_tokens"] == 75
    assert sorted(item["content"] for item in data["items"]) == [
        "first question",
        "latest question",
        "system rules",
    ]
    report = SelectionReport.from_dict(data["report"])
    assert report.total_candidates == 5
    assert sorted(entry.reason.name for entry in report.excluded) == [
        "BudgetExceeded",
        "Deduplicated",
    ]


def test_html_file_is_written_and_lists_every_item(small: str, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    result = run("explain", small, "--budget", "100", "--html", str(page))
    assert result.exit_code == 0
    assert f"HTML report written to {page}" in result.stdout
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert html.count('<tr class="included">') == 3
    assert html.count('<tr class="excluded">') == 2
    assert "Selection report: items.json" in html


def test_json_and_html_together_keep_stdout_pure_json(small: str, tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    result = run("explain", small, "--budget", "100", "--json", "--html", str(page))
    assert result.exit_code == 0
    json.loads(result.stdout)
    assert page.exists()


def test_reads_standard_input(small: str) -> None:
    result = run("explain", "-", "--budget", "100", "--json", stdin=Path(small).read_text())
    assert result.exit_code == 0
    assert json.loads(result.stdout)["report"]["total_candidates"] == 5


def test_rows_limits_the_table(small: str) -> None:
    result = run("explain", small, "--budget", "100", "--rows", "1")
    assert result.exit_code == 0
    assert "Not shown: 2 more included and 1 more excluded items." in result.stdout


def test_bundled_example_explains() -> None:
    result = run("explain", str(EXAMPLE), "--budget", "1200", "--placer", "u-shaped")
    assert result.exit_code == 0
    assert "Candidates" in result.stdout


def test_output_fits_a_narrow_terminal(small: str) -> None:
    result = run("explain", small, "--budget", "100", columns=60)
    assert result.exit_code == 0
    assert max(len(line) for line in result.stdout.splitlines()) <= 60


def test_placer_changes_only_the_order(small: str) -> None:
    chrono = json.loads(run("explain", small, "--budget", "100", "--json").stdout)
    shaped = json.loads(
        run("explain", small, "--budget", "100", "--json", "--placer", "u-shaped").stdout
    )
    assert sorted(i["content"] for i in chrono["items"]) == sorted(
        i["content"] for i in shaped["items"]
    )


def one_line_error(result: Result, code: int = 1) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    if code == 1:
        assert len(lines) == 1, lines
    assert result.stdout == ""
    return result.stderr


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    error = one_line_error(run("explain", str(tmp_path / "nope.json"), "--budget", "10"))
    assert "nope.json" in error
    assert "cannot read file" in error


def test_invalid_json_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("[{", encoding="utf-8")
    error = one_line_error(run("explain", str(path), "--budget", "10"))
    assert "invalid JSON" in error


def test_invalid_item_names_the_field(tmp_path: Path) -> None:
    path = write_items(tmp_path / "bad.json", [{"content": "x", "tokens": "many"}])
    error = one_line_error(run("explain", path, "--budget", "10"))
    assert "items[0].tokens" in error


def test_pinned_items_over_budget_is_one_line(tmp_path: Path) -> None:
    path = write_items(tmp_path / "p.json", [{"content": "big", "tokens": 50, "pinned": True}])
    error = one_line_error(run("explain", path, "--budget", "10"))
    assert "pinned items require 50 tokens" in error


def test_unwritable_html_path_is_one_line(small: str, tmp_path: Path) -> None:
    error = one_line_error(
        run("explain", small, "--budget", "100", "--html", str(tmp_path / "no" / "r.html"))
    )
    assert "r.html" in error


def test_target_above_budget_is_a_usage_error(small: str) -> None:
    error = one_line_error(run("explain", small, "--budget", "10", "--target", "20"), code=2)
    assert "--target" in error


def test_missing_budget_is_a_usage_error(small: str) -> None:
    one_line_error(run("explain", small), code=2)


def test_select_still_works_with_the_shared_helpers(small: str) -> None:
    result = run("select", small, "--budget", "100", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["total_tokens"] == 75
    error = one_line_error(run("select", small + ".missing", "--budget", "100"))
    assert "cannot read file" in error


def test_a_history_shows_the_message_indices_of_each_item(tmp_path: Path) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    history = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "look it up " * 30},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "found " * 30},
        {"role": "user", "content": "thanks, and now?"},
    ]
    path = tmp_path / "history.json"
    path.write_text(json.dumps(history), encoding="utf-8")
    result = run("explain", str(path), "--budget", "120")
    assert result.exit_code == 0, result.output
    flat = " ".join(result.stdout.split())
    for label in ("msg 0 system: Be brief.", "msg 1 user: look", "msgs 2-3 ", "msg 4 user: thanks"):
        assert label in flat
    html = tmp_path / "report.html"
    assert run("explain", str(path), "--budget", "120", "--html", str(html)).exit_code == 0


def test_the_html_report_of_a_huge_tool_output_stays_small(tmp_path: Path) -> None:
    output = "".join(f"GET /api/orders/{n} 200 12ms\n" for n in range(200_000)) + "ERROR: disk full"
    assert len(output) > 5_600_000
    call = {"id": "c1", "type": "function", "function": {"name": "read_log", "arguments": "{}"}}
    history = [
        {"role": "system", "content": "You read server logs."},
        {"role": "user", "content": "Why did the server stop?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": output},
        {"role": "user", "content": "And what should I do?"},
    ]
    path = tmp_path / "history.json"
    path.write_text(json.dumps(history), encoding="utf-8")
    html = tmp_path / "report.html"
    result = run("explain", str(path), "--budget", "3000000", "--html", str(html))
    assert result.exit_code == 0, result.output
    page = html.read_text(encoding="utf-8")
    assert len(page.encode()) < 60_000
    assert '<span class="msgs">msgs 2-3</span>' in page
    note = re.search(r"\[… ([\d,]+) characters \(([\d.]+) MB\) not shown of ([\d,]+)", page)
    assert note is not None
    assert int(note[3].replace(",", "")) - int(note[1].replace(",", "")) == 4_000
    assert float(note[2]) == round((int(note[1].replace(",", ""))) / 1e6, 1) > 5.6
    assert "ERROR: disk full" in page  # the tail
    # At a budget the output does not fit, the fit keeps an excerpt of it.
    result = run("explain", str(path), "--budget", "200", "--html", str(html))
    assert result.exit_code == 0, result.output
    page = html.read_text(encoding="utf-8")
    assert len(page.encode()) < 60_000
    assert '<span class="msgs">msgs 2-3 (excerpt)</span>' in page


def agent_history(path: Path) -> str:
    """A short agent history with a long log (kept as an excerpt at a small budget)."""
    log = "\n".join(
        f"2024-03-05T14:{n // 60:02d}:{n % 60:02d}Z INFO worker {n} ok" for n in range(900)
    )
    call = {"id": "c1", "type": "function", "function": {"name": "fetch_logs", "arguments": "{}"}}
    history = [
        {"role": "system", "content": "You are an ops agent."},
        {"role": "user", "content": "Which port does the ledger replica listen on?"},
        {"role": "assistant", "content": "The ledger replica listens on port 7421."},
        *(
            {"role": role, "content": f"Chatter {n} about lunch and the weather today."}
            for n in range(8)
            for role in ("user", "assistant")
        ),
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": log},
        {"role": "assistant", "content": "The logs are in."},
        {"role": "user", "content": "Which port does the ledger replica use now?"},
    ]
    path.write_text(json.dumps(history), encoding="utf-8")
    return str(path)


def test_explain_says_why_each_unit_of_a_history_is_in_or_out(tmp_path: Path) -> None:
    history = agent_history(tmp_path / "agent.json")
    result = run("explain", history, "--budget", "400", columns=200)
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "pinned: the system prompt" in out
    assert "pinned: the latest user turn" in out
    assert "part of the recent tail" in out
    assert re.search(r"relevant to the query \(score \d\.\d{3}\)", out)
    assert "next to a relevant turn (msg 1)" in out or "next to a relevant turn (msg 2)" in out
    assert "shortened to an excerpt (" in out
    assert "Excerpts, by lines of the original text:" in out
    assert re.search(r"msgs 19-20 \(excerpt\) (kept|elided) lines 1-\d+ \([\d,]+ tokens\)", out)
    dropped = re.findall(r"the budget ran out: it needs ([\d,]+) tokens, ([\d,]+) were free", out)
    assert dropped
    assert all(int(need) > int(free) for need, free in dropped)
    assert "displaced" not in out
    # The JSON keeps the specification's entries and carries each why in the item's metadata.
    data = json.loads(run("explain", history, "--budget", "400", "--json").stdout)
    report = data["report"]
    for entry in report["included"] + report["excluded"]:
        assert set(entry) == {"item", "score", "reason"}
        assert entry["item"]["metadata"]["why"]["text"]
    causes = {entry["item"]["metadata"]["why"]["cause"] for entry in report["included"]}
    assert {"system-prompt", "latest-turn", "recent", "relevant"} <= causes
    excerpt = next(
        entry["item"]["metadata"]
        for entry in report["included"]
        if entry["item"]["metadata"].get("variant") == "excerpt"
    )
    assert excerpt["why"]["version"] == "excerpt"
    assert "; shortened to an excerpt (" in excerpt["why"]["text"]
    assert excerpt["excerpt"]["kept"]
    assert excerpt["excerpt"]["elided"]
    assert SelectionReport.from_dict(report).why  # read back into the report's whys
    # The HTML page says the same words.
    page_path = tmp_path / "agent.html"
    assert run("explain", history, "--budget", "400", "--html", str(page_path)).exit_code == 0
    page = page_path.read_text(encoding="utf-8")
    assert '<span class="why">pinned: the latest user turn</span>' in page
    assert "lines kept (" in page
