"""Hostile inputs to the recall, the sessions and their stores, and the fits' budgets: each is
refused with a specific CupelError naming the field, the value and the rule (or answered as
the model's mistake), never a bare OverflowError, RecursionError, TypeError,
AttributeError, ValueError or UnicodeError."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from pycupel.adapters import openai
from pycupel.cli import main
from pycupel.conversation import Recall
from pycupel.errors import (
    PipelineConfigError,
    ProviderUsageError,
    SessionConfigError,
    UnknownOptionError,
)
from pycupel.session import BlobRecallStore, SQLiteStore

HUGE = 10**400
CHAT = [{"role": "user", "content": "hello " * 50}]


@pytest.mark.parametrize(
    ("call", "error", "field"),
    [
        (lambda: openai.fit_messages(CHAT, budget=HUGE), PipelineConfigError, "budget"),
        (lambda: openai.Session(budget=HUGE), SessionConfigError, "budget"),
        (
            lambda: openai.fit_messages(CHAT, budget=500, pin_system=None),
            PipelineConfigError,
            "pin_system",
        ),
        (
            lambda: openai.fit_messages(CHAT, budget=500, pin_latest_user="no"),
            PipelineConfigError,
            "pin_latest_user",
        ),
        (lambda: openai.Session(budget=1_000, recal=Recall("s")), UnknownOptionError, "recal"),
        (lambda: openai.Session(budget=1_000, overhead=5), SessionConfigError, "overhead"),
        (lambda: Recall(scope="   "), PipelineConfigError, "recall.scope"),
        (lambda: Recall(scope="s").remember(None), PipelineConfigError, "text"),
        (lambda: SQLiteStore("/tmp/a\0b.db"), SessionConfigError, "path"),
        (
            lambda: BlobRecallStore(SQLiteStore(":memory:")).put("s", "0" * 16, None),
            SessionConfigError,
            "text",
        ),
        (
            lambda: BlobRecallStore(SQLiteStore(":memory:")).put("s", None, "t"),
            SessionConfigError,
            "ref",
        ),
        (
            lambda: openai.Session(budget=1_000, store=SQLiteStore(":memory:"), key="\ud800").fit(
                CHAT
            ),
            SessionConfigError,
            "key",
        ),
    ],
)
def test_refused_by_name(call: Callable[[], object], error: type[Exception], field: str) -> None:
    with pytest.raises(error) as raised:
        call()
    assert raised.value.field == field  # type: ignore[attr-defined]


@pytest.mark.parametrize("count", [10**30, HUGE])
def test_a_usage_no_prompt_can_have_is_refused(count: int) -> None:
    session = openai.Session(budget=2_000)
    session.fit(CHAT)
    with pytest.raises(ProviderUsageError, match="prompt_tokens"):
        session.record_usage({"prompt_tokens": count})
    session.record_usage({"prompt_tokens": 80})  # the window's usage is still recorded
    session.fit([*CHAT, {"role": "assistant", "content": "hi"}, {"role": "user", "content": "?"}])


def test_a_scope_with_a_lone_surrogate_still_makes_refs() -> None:
    recall = Recall(scope="\ud800")
    assert recall.lookup(recall.remember("the text")) == "the text"


def test_nested_arguments_from_the_model_are_answered_as_its_mistake() -> None:
    recall = Recall(scope="s")
    function = {"name": "recall", "arguments": "[" * 100_000 + "]" * 100_000}
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": function}],
    }
    (answer,) = openai.answer_recall(recall, message)
    assert answer["content"].startswith("Error:")


def test_the_cli_refuses_a_budget_past_the_limit_in_one_line(tmp_path: Path) -> None:
    history = tmp_path / "h.json"
    history.write_text(json.dumps(CHAT), encoding="utf-8")
    runner = CliRunner()
    for args in (
        ["select", str(history), "--format", "openai", "--budget", str(HUGE)],
        ["simulate", str(history), "--format", "openai", "--budgets", str(HUGE)],
    ):
        result = runner.invoke(main, args)
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
        assert "--budget" in result.output


def test_the_cli_names_a_number_too_long_to_read(tmp_path: Path) -> None:
    items = tmp_path / "items.json"
    items.write_text('[{"content": "x", "tokens": ' + "9" * 5_000 + "}]", encoding="utf-8")
    result = CliRunner().invoke(main, ["select", str(items), "--budget", "100"])
    assert result.exit_code != 0
    assert "more than 4,300 digits" in result.output
    assert "set_int_max_str_digits" not in result.output
