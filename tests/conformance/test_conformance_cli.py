"""``pycupel conformance run``: human and JSON output, exit codes, usage errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from pycupel.cli import main

PASSING = """
[test]
name = "{name}"
stage = "placing"
placer = "u-shaped"

[[items]]
content = "low"
tokens = 1
score = 0.1

[[items]]
content = "high"
tokens = 1
score = 0.9

[expected]
ordered_contents = {order}
"""


def vector(directory: Path, name: str, *, passing: bool = True) -> Path:
    order = '["high", "low"]' if passing else '["low", "high"]'
    path = directory / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PASSING.format(name=name, order=order), encoding="utf-8")
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["conformance", "run", *args])
    return result.exit_code, result.stdout, result.stderr


def test_command_is_registered() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert "conformance" in result.stdout
    result = CliRunner().invoke(main, ["conformance", "run", "--help"])
    assert result.exit_code == 0
    assert "--json" in result.stdout


def test_all_passing_exit_zero_and_summary_line(tmp_path: Path) -> None:
    vector(tmp_path, "one")
    vector(tmp_path / "sub", "two")
    code, out, err = invoke(str(tmp_path))
    assert code == 0
    assert out.splitlines() == ["2 passed, 0 failed"]
    assert err == ""


def test_failures_are_printed_with_name_and_difference(tmp_path: Path) -> None:
    vector(tmp_path, "a-good")
    bad = vector(tmp_path, "b-bad", passing=False)
    code, out, _ = invoke(str(tmp_path))
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"FAIL {bad} [placing]: b-bad"
    assert lines[1] == "    placement order differs at position 0: expected 'low', got 'high'"
    assert lines[-1] == "1 passed, 1 failed"
    assert "\x1b[" not in out  # no colour codes when not writing to a terminal


def test_malformed_vector_counts_as_failure(tmp_path: Path) -> None:
    (tmp_path / "broken.toml").write_text("[test\n", encoding="utf-8")
    code, out, _ = invoke(str(tmp_path))
    assert code == 1
    assert "malformed vector: invalid TOML" in out
    assert out.splitlines()[-1] == "0 passed, 1 failed"


def test_verbose_lists_passes(tmp_path: Path) -> None:
    good = vector(tmp_path, "good")
    code, out, _ = invoke("-v", str(tmp_path))
    assert code == 0
    assert out.splitlines() == [f"PASS {good} [placing]: good", "1 passed, 0 failed"]


def test_json_output_is_only_json(tmp_path: Path) -> None:
    good = vector(tmp_path, "a-good")
    bad = vector(tmp_path, "b-bad", passing=False)
    code, out, _ = invoke("--json", str(tmp_path))
    assert code == 1
    records = json.loads(out)
    assert [set(r) for r in records] == [{"path", "name", "stage", "passed", "message"}] * 2
    assert records[0] == {
        "path": str(good),
        "name": "a-good",
        "stage": "placing",
        "passed": True,
        "message": "",
    }
    assert records[1]["path"] == str(bad)
    assert records[1]["passed"] is False
    assert "differs at position 0" in records[1]["message"]


def test_json_all_passing_exits_zero(tmp_path: Path) -> None:
    vector(tmp_path, "good")
    code, out, _ = invoke(str(tmp_path / "good.toml"), "--json")
    assert code == 0
    assert [r["passed"] for r in json.loads(out)] == [True]


def test_paths_given_twice_run_once(tmp_path: Path) -> None:
    good = vector(tmp_path, "good")
    code, out, _ = invoke(str(tmp_path), str(good))
    assert code == 0
    assert out.splitlines() == ["1 passed, 0 failed"]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "no such file or directory"),
        (lambda p: p, "no .toml vector files found"),
    ],
    ids=["missing-path", "empty-folder"],
)
def test_usage_errors_exit_two_with_one_line(
    tmp_path: Path, make: Callable[[Path], Path], message: str
) -> None:
    path = make(tmp_path)
    code, out, err = invoke(str(path))
    assert code == 2
    assert out == ""
    assert err.splitlines() == [f"Error: {path}: {message}"]
    assert "Traceback" not in err


def test_no_paths_is_a_usage_error() -> None:
    code, _, err = invoke()
    assert code == 2
    assert "Missing argument" in err
