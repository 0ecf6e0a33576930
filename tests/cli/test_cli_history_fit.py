"""The command line fits a message history exactly as the format's ``fit_messages`` does.

The fixture is a 150-message support chat (``support_chat.py``) whose last question needs
details given early on; every format's version of it goes through ``select``, ``explain``
and ``simulate`` and comes out as the adapter's own fit at the same budget.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import groupby
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from support_chat import as_anthropic, as_gemini, as_responses, support_chat

from pycupel import presets
from pycupel.adapters import anthropic, gemini, openai, responses
from pycupel.cli import main


def run(*args: str) -> Result:
    return CliRunner(env={"COLUMNS": "160"}).invoke(main, list(args), catch_exceptions=False)


def write(path: Path, document: Any) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def select_json(path: str, *args: str) -> dict[str, Any]:
    result = run("select", path, "--json", *args)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def report_of(report: Any) -> Any:
    """A report as its JSON reads back (tuples become lists), without its stages' wall
    times (the pipeline's events time each stage)."""
    return timeless(json.loads(json.dumps(report.to_dict())))


def timeless(report: dict[str, Any]) -> dict[str, Any]:
    events = [{k: v for k, v in event.items() if k != "duration_ms"} for event in report["events"]]
    return {**report, "events": events}


@pytest.fixture
def chat(tmp_path: Path) -> str:
    return write(tmp_path / "support150.json", support_chat())


def test_the_fixture_is_a_long_support_chat() -> None:
    messages = support_chat()
    assert len(messages) == 150
    roles = [message["role"] for message in messages]
    assert roles.count("user") == 65
    assert roles.count("assistant") == 74
    assert roles.count("tool") == 10
    assert roles[0] == "system"
    assert roles[-1] == "user"


def test_select_on_the_150_message_chat_is_fit_messages_at_the_same_budget(chat: str) -> None:
    messages = support_chat()
    expected, report = openai.fit_messages(messages, budget=600)
    data = select_json(chat, "--budget", "600")
    assert list(data) == ["history", "total_tokens", "report"]
    assert data["history"] == {"messages": expected}
    assert timeless(data["report"]) == report_of(report)
    assert data["total_tokens"] == openai.count_tokens(expected) <= 600


def test_the_fitted_chat_is_not_degenerate(chat: str) -> None:
    kept = select_json(chat, "--budget", "600")["history"]["messages"]
    roles = [message["role"] for message in kept]
    # Both sides of the conversation, never a long run of one speaker.
    assert roles.count("assistant") >= roles.count("user") >= 3
    assert max(len(list(run)) for role, run in groupby(roles) if role == "user") <= 2
    assert roles[0] == "system"
    assert kept[-1] == support_chat()[-1]
    # The last question asks for the return number and address given 120 messages earlier.
    text = json.dumps(kept)
    assert "RMA-88213" in text
    assert "2200 Harbor Way" in text
    # Older tool results stay visible as placeholders after their calls.
    assert any("[result cleared:" in str(message.get("content")) for message in kept)


def test_the_plain_pipeline_of_the_old_command_line_lost_the_answer(chat: str) -> None:
    """What the command used to do (the Conversation preset's pipeline) and still does when
    asked for with --preset: relevance per token fills the window with short user turns."""
    data = select_json(chat, "--budget", "600", "--preset", "conversation")
    expected, report = openai.fit_messages(
        support_chat(), budget=600, policy=presets.conversation()
    )
    assert data["history"]["messages"] == expected
    assert timeless(data["report"]) == report_of(report)


@pytest.mark.parametrize("preset", ["chat", "tool-use", "memory"])
def test_a_preset_runs_as_fit_messages_with_that_policy(chat: str, preset: str) -> None:
    data = select_json(chat, "--budget", "500", "--preset", preset)
    expected, report = openai.fit_messages(
        support_chat(), budget=500, policy=presets.by_name(preset)
    )
    assert data["history"]["messages"] == expected
    assert timeless(data["report"]) == report_of(report)


def test_query_budget_target_and_reserve_reach_the_fit(chat: str) -> None:
    from pycupel import ContextBudget

    data = select_json(
        chat,
        "--budget",
        "900",
        "--target",
        "700",
        "--output-reserve",
        "100",
        "--query",
        "firmware update",
    )
    budget = ContextBudget(max_tokens=900, target_tokens=700, output_reserve=100)
    expected, report = openai.fit_messages(support_chat(), budget=budget, query="firmware update")
    assert data["history"]["messages"] == expected
    assert timeless(data["report"]) == report_of(report)
    assert "2.4.0" in json.dumps(expected)


def _langchain_request() -> tuple[dict[str, Any], Callable[[int], Any]]:
    messages_module = pytest.importorskip("langchain_core.messages")
    from pycupel.adapters import langchain

    converted = messages_module.convert_to_messages(support_chat())
    document = {"messages": messages_module.messages_to_dict(converted)}

    def fit(budget: int) -> Any:
        kept, report = langchain.fit_messages(converted, budget=budget)
        return {"messages": messages_module.messages_to_dict(kept)}, report

    return document, fit


def _other_formats() -> list[tuple[str, Any, Callable[[int], Any]]]:
    anthropic_request, responses_request, gemini_request = (
        as_anthropic(),
        as_responses(),
        as_gemini(),
    )

    def fit_anthropic(budget: int) -> Any:
        system, kept, report = anthropic.fit_messages(
            anthropic_request["messages"], system=anthropic_request["system"], budget=budget
        )
        return {"system": system, "messages": kept}, report

    def fit_responses(budget: int) -> Any:
        instructions, kept, report = responses.fit_messages(
            responses_request["input"],
            instructions=responses_request["instructions"],
            budget=budget,
        )
        return {"instructions": instructions, "input": kept}, report

    def fit_gemini(budget: int) -> Any:
        system, kept, report = gemini.fit_messages(
            gemini_request["contents"],
            system_instruction=gemini_request["system_instruction"],
            budget=budget,
        )
        return {"system_instruction": system, "contents": kept}, report

    return [
        ("anthropic", anthropic_request, fit_anthropic),
        ("responses", responses_request, fit_responses),
        ("gemini", gemini_request, fit_gemini),
    ]


@pytest.mark.parametrize("name", ["anthropic", "responses", "gemini", "langchain"])
def test_every_format_is_fitted_as_its_adapter_fits_it(tmp_path: Path, name: str) -> None:
    if name == "langchain":
        document, fit = _langchain_request()
    else:
        _, document, fit = next(entry for entry in _other_formats() if entry[0] == name)
    path = write(tmp_path / f"{name}.json", document)
    expected, report = fit(600)
    data = select_json(path, "--budget", "600")
    assert data["history"] == expected
    assert timeless(data["report"]) == report_of(report)
    assert data["total_tokens"] <= 600
    explained = run("explain", path, "--budget", "600", "--json")
    assert explained.exit_code == 0, explained.output
    assert json.loads(explained.stdout)["history"] == expected


def test_explain_shows_the_fitted_window_in_conversation_order(chat: str, tmp_path: Path) -> None:
    fitted, report = openai.fit_messages(support_chat(), budget=600)
    data = json.loads(run("explain", chat, "--budget", "600", "--json").stdout)
    assert data["budget"] == {"max_tokens": 600, "target_tokens": 600, "output_reserve": 0}
    assert data["history"]["messages"] == fitted
    assert timeless(data["report"]) == report_of(report)

    table = run("explain", chat, "--budget", "600", "--rows", "0").stdout
    labels = re.findall(r"^\s+(\d+)\s+in\s.*?\bmsgs? (\d+)", table, flags=re.MULTILINE)
    assert len(labels) == len(report.included)
    firsts = [int(first) for _, first in labels]
    assert firsts == sorted(firsts)  # numbered in the order the history is sent
    assert "(placeholder)" in table
    assert "The fitted request: 600 tokens" in " ".join(table.split())

    html = tmp_path / "report.html"
    assert run("explain", chat, "--budget", "600", "--html", str(html)).exit_code == 0
    page = html.read_text(encoding="utf-8")
    assert "structure-aware, as fit_messages by default" in page
    assert f"Included ({len(report.included)})" in page


def test_select_table_numbers_the_history_in_order(chat: str) -> None:
    table = run("select", chat, "--budget", "600").stdout
    firsts = [int(first) for first in re.findall(r"│ msgs? (\d+)", table)]
    assert len(firsts) == len(openai.fit_messages(support_chat(), budget=600).report.included)
    assert firsts == sorted(firsts)
    assert "Selected 21 of 140 units: 600 of 600 target tokens" in table


def test_simulate_fits_the_history_at_each_budget(chat: str) -> None:
    result = run("simulate", chat, "--budgets", "0,300,600,1200", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["budgets"]
    assert rows[0]["feasible"] is False
    assert rows[0]["items_selected"] == 0
    for row in rows[1:]:
        fitted, report = openai.fit_messages(support_chat(), budget=row["max_tokens"])
        assert row["items_selected"] == len(report.included)
        assert row["tokens_used"] == openai.count_tokens(fitted) <= row["max_tokens"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--placer", "u-shaped"], "--placer u-shaped orders the window of an items file"),
        (["--no-system-first"], "--no-system-first orders the window of an items file"),
        (["--preset", "retrieval"], "--preset: the Retrieval policy scores retrieved chunks"),
        (["--budget", "2"], "--budget: must cover the per-request overhead of OpenAI chat"),
        (
            ["--budget", "100", "--output-reserve", "99"],
            "--budget: must cover --output-reserve (99) plus the per-request overhead",
        ),
    ],
)
def test_options_a_history_cannot_honour_are_usage_errors(
    chat: str, args: list[str], expected: str
) -> None:
    budget = [] if "--budget" in args else ["--budget", "600"]
    for command in ("select", "explain"):
        result = run(command, chat, *budget, *args)
        assert result.exit_code == 2, result.output
        assert expected in result.stderr
        assert len(result.stderr.splitlines()) == 1


def test_help_texts_name_the_five_formats_and_the_fit() -> None:
    for command in ("select", "explain", "simulate"):
        text = " ".join(run(command, "--help").stdout.split())
        for name in ("OpenAI Chat Completions", "OpenAI Responses", "Anthropic", "Gemini"):
            assert name in text, (command, name)
        assert "LangChain" in text
        assert "fit_messages" in text
        assert "OpenAI or Anthropic message history" not in text
