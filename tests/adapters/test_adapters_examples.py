"""The bundled example histories are valid and fit at every budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from adapter_histories import assert_anthropic_valid, assert_openai_valid

from pycupel.adapters import anthropic, openai
from pycupel.diagnostics import SelectionReport

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str) -> dict[str, object]:
    data = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("budget", [120, 300, 700, 1_500, 5_000])
def test_openai_example(budget: int) -> None:
    messages = load("openai-history.json")["messages"]
    assert isinstance(messages, list)
    units = openai.from_messages(messages)
    assert any(len(unit.message_indices) > 2 for unit in units), "parallel tool calls"
    fitted, report = openai.fit_messages(messages, budget=budget)
    assert_openai_valid(fitted, messages)
    assert openai.count_tokens(fitted) <= budget
    # The report survives its JSON form, adapter metadata included.
    again = SelectionReport.from_json(report.to_json())
    assert [entry.item.content for entry in again.included] == [
        entry.item.content for entry in report.included
    ]
    assert [list(entry.item.metadata["message_indices"]) for entry in again.excluded] == [
        list(entry.item.metadata["message_indices"]) for entry in report.excluded
    ]


@pytest.mark.parametrize("budget", [150, 400, 1_000, 3_000])
def test_anthropic_example(budget: int) -> None:
    request = load("anthropic-history.json")
    messages, system = request["messages"], request["system"]
    assert isinstance(messages, list)
    fitted_system, fitted, _ = anthropic.fit_messages(messages, system=system, budget=budget)  # type: ignore[arg-type]
    assert fitted_system is system
    assert_anthropic_valid(fitted, messages)
    assert anthropic.count_tokens(fitted, system=fitted_system) <= budget
