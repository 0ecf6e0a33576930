"""``pycupel policy validate | show | schema``."""

from __future__ import annotations

import json
from pathlib import Path

import tomli
from click.testing import CliRunner

from pycupel import presets
from pycupel.cli import main
from pycupel.policy import loads_policy, policy_json_schema

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "policies"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_validate_ok() -> None:
    code, output = run(
        "policy",
        "validate",
        str(EXAMPLES / "support-agent.json"),
        str(EXAMPLES / "support-agent.toml"),
    )
    assert code == 0
    assert output.splitlines() == [
        f"{EXAMPLES / 'support-agent.json'}: ok",
        f"{EXAMPLES / 'support-agent.toml'}: ok",
    ]


def test_validate_lists_every_problem_and_fails(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"name": "", "scorers": [{"type": "recnecy"}, {"type": "kind", "weight": 0}]})
    )
    broken = tmp_path / "broken.toml"
    broken.write_text("name = ")
    good = tmp_path / "good.toml"
    good.write_text('name = "g"\nscorers = ["recency"]\n')
    missing = tmp_path / "missing.json"
    code, output = run("policy", "validate", str(bad), str(broken), str(good), str(missing))
    assert code == 1
    lines = output.splitlines()
    assert lines[:3] == [
        f"{bad}: name: must not be empty or whitespace-only, got ''",
        f"{bad}: scorers[0].type: unknown scorer 'recnecy' (did you mean 'recency'?)",
        f"{bad}: scorers[1].weight: must be > 0, got 0",
    ]
    assert lines[3].startswith(f"{broken}: invalid TOML")
    assert lines[4] == f"{good}: ok"
    assert lines[5].startswith(f"{missing}: cannot read the file")
    assert len(lines) == 6


def test_validate_unknown_suffix(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("name: x")
    code, output = run("policy", "validate", str(path))
    assert code == 1
    assert output == f"{path}: cannot tell the format: the file name must end in .json or .toml\n"


def test_show_preset_renders_normalised_weights() -> None:
    code, output = run("policy", "show", "code-review")
    assert code == 0
    assert "CodeReview" in output
    assert "40.0%" in output  # kind 2 of 5
    assert "20.0%" in output  # recency 1 of 5
    assert "greedy" in output
    assert "chronological" in output


def test_show_file_and_formats(tmp_path: Path) -> None:
    code, output = run("policy", "show", str(EXAMPLES / "support-agent.toml"))
    assert code == 0
    assert "support-agent" in output
    assert "quota" in output
    code, output = run("policy", "show", "--json", "rag")
    assert code == 0
    assert loads_policy(output) == presets.rag()
    code, output = run("policy", "show", "--toml", str(EXAMPLES / "support-agent.json"))
    assert code == 0
    assert tomli.loads(output)["name"] == "support-agent"
    code, output = run("policy", "show", "--json", "--toml", "rag")
    assert code == 2


def test_show_errors_take_the_one_error_form(tmp_path: Path) -> None:
    code, output = run("policy", "show", "no-such-thing")
    assert code == 1
    assert output == (
        "Error: no policy file or preset named 'no-such-thing': a preset name must be one of: "
        "Chat, CodeReview, Rag, DocumentQa, ToolUse, LongRunning, Debugging, Conversation, "
        "Retrieval, Memory\n"
    )
    code, output = run("policy", "show", "retreival")
    assert code == 1
    assert output.endswith("Retrieval, Memory (did you mean 'Retrieval'?)\n")
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "scorers": ["recnecy"]}')
    code, output = run("policy", "show", str(bad))
    assert code == 1
    # Several problems or one: a header line, then one indented line per problem.
    assert output == (
        f"Error: {bad}: 1 problem in policy\n"
        "  scorers[0]: unknown scorer 'recnecy' (did you mean 'recency'?)\n"
    )
    bad.write_text("{")
    code, output = run("policy", "show", str(bad))
    assert code == 1
    assert output.startswith(f"Error: {bad}: line 1 column 2: invalid JSON")
    assert len(output.splitlines()) == 1


def test_schema_command() -> None:
    code, output = run("policy", "schema")
    assert code == 0
    assert json.loads(output) == policy_json_schema()
