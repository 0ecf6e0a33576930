"""``pycupel select`` end to end, on the bundled example and on small inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pycupel.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-chat.json"


def invoke(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["select", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_readme_command_gives_an_interesting_selection() -> None:
    code, out, err = invoke(str(EXAMPLE), "--budget", "1200")
    assert code == 0, err
    assert "Context window" in out
    assert "SystemPrompt" in out
    assert "pinned" in out
    assert "Selected " in out
    assert " of 34 items" in out
    assert "Deduplicated 1" in out
    assert "BudgetExceeded" in out


def test_example_json_facts() -> None:
    code, out, err = invoke(str(EXAMPLE), "--budget", "1200", "--json")
    assert code == 0, err
    data = json.loads(out)
    report = data["report"]
    items = data["items"]
    assert data["total_tokens"] == sum(i["tokens"] for i in items) <= 1200
    assert [e["item"] for e in report["included"]] == items
    assert report["total_candidates"] == 34
    reasons = [e["reason"]["reason"] for e in report["excluded"]]
    assert reasons.count("Deduplicated") == 1
    # The 89-token system prompt leaves room for the largest item (398 tokens): every budget
    # exclusion lost to better-scored items, none is the pinned items' doing.
    assert reasons.count("BudgetExceeded") >= 3
    assert "PinnedOverride" not in reasons
    pinned = [e for e in report["included"] if e["reason"]["reason"] == "Pinned"]
    assert [e["item"]["kind"] for e in pinned] == ["SystemPrompt"]
    # The pinned system prompt first (--system-first, the default), then chronological
    # placement: timestamps never go backwards.
    assert items[0]["kind"] == "SystemPrompt"
    stamps = [i["timestamp"] for i in items[1:] if "timestamp" in i]
    assert stamps == sorted(stamps)
    assert [e["stage"] for e in report["events"] if "message" not in e] == [
        "Classify",
        "Score",
        "Deduplicate",
        "Slice",
        "Place",
    ]


def test_stdin_json_lines_and_u_shaped_placer() -> None:
    lines = "\n".join(
        json.dumps(
            {
                "content": f"m{n}",
                "tokens": 10,
                "priority": n,
                "timestamp": f"2024-06-0{n}T00:00:00Z",
            }
        )
        for n in range(1, 6)
    )
    code, out, _ = invoke("-", "--budget", "100", "--json", stdin=lines)
    assert code == 0
    chronological = [i["content"] for i in json.loads(out)["items"]]
    code, out, _ = invoke("-", "--budget", "100", "--json", "--placer", "u-shaped", stdin=lines)
    assert code == 0
    u_shaped = [i["content"] for i in json.loads(out)["items"]]
    assert chronological == ["m1", "m2", "m3", "m4", "m5"]
    assert sorted(u_shaped) == chronological
    assert u_shaped[0] == "m5"  # the best-scored item opens the window


def test_target_and_output_reserve() -> None:
    items = json.dumps([{"content": f"m{n}", "tokens": 40} for n in range(10)])
    code, out, _ = invoke("-", "--budget", "400", "--target", "100", "--json", stdin=items)
    assert code == 0
    assert json.loads(out)["total_tokens"] == 80
    code, out, _ = invoke("-", "--budget", "400", "--output-reserve", "350", "--json", stdin=items)
    assert code == 0
    assert json.loads(out)["total_tokens"] == 40


def test_summary_names_the_pinned_items_only_when_they_made_an_item_impossible() -> None:
    items = json.dumps(
        [
            {"content": "sys", "tokens": 60, "pinned": True},
            {"content": "big", "tokens": 70, "priority": 5},
            {"content": "mid", "tokens": 30, "priority": 9},
            {"content": "rival", "tokens": 30, "priority": 1},
        ]
    )
    code, out, _ = invoke("-", "--budget", "100", stdin=items)
    assert code == 0
    flat = " ".join(out.split())
    # big (70) cannot fit the 40 tokens the pinned item leaves, but would fit 100 without it;
    # rival merely lost the remaining 10 tokens to mid.
    assert "PinnedOverride: the pinned items leave too little room" in flat
    assert "BudgetExceeded" in flat
    assert "would fit without" not in flat


def test_nothing_excluded_summary() -> None:
    code, out, _ = invoke("-", "--budget", "100", stdin='[{"content": "a", "tokens": 5}]')
    assert code == 0
    assert "Nothing was excluded." in out


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (
            ["-", "--budget", "100"],
            '[{"content": "a", "tokens": "5"}]',
            "<stdin>: items[0].tokens: must be an integer",
        ),
        (["-", "--budget", "100"], "[{", "<stdin>: line 1, column 3: invalid JSON"),
        (["missing.json", "--budget", "100"], None, "missing.json: cannot read file"),
        (
            ["-", "--budget", "100"],
            '[{"content": "sys", "tokens": 500, "pinned": true}]',
            "pinned items require 500 tokens, but only 100 are available",
        ),
    ],
)
def test_errors_are_one_line_without_traceback(
    args: list[str], stdin: str | None, message: str
) -> None:
    code, out, err = invoke(*args, stdin=stdin)
    assert code == 1
    assert out == ""
    assert message in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--budget", "100", "--target", "200"], "--target"),
        (["--budget", "100", "--output-reserve", "101"], "--output-reserve"),
        (["--budget", "-1"], "--budget"),
        (["--budget", "10", "--placer", "random"], "--placer"),
        ([], "--budget"),
    ],
)
def test_usage_errors(args: list[str], message: str) -> None:
    code, _, err = invoke("-", *args, stdin="[]")
    assert code == 2
    assert message in err
