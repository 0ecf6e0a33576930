"""Smoke test of the large-tool-output benchmark's harness (benchmarks/quality/large_outputs.py).

Two small agent histories in the generators' case shape, fitted by pycupel and (when
LangChain is installed) ``trim_messages``: the metrics come out of real fits.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path[:0] = [str(BENCHMARKS / "quality"), str(BENCHMARKS)]

import large_outputs  # noqa: E402

from pycupel.adapters import openai  # noqa: E402
from pycupel.histories import agent_history  # noqa: E402


@dataclass(frozen=True)
class Case:
    messages: list[dict[str, Any]]
    needle: str
    fact_line: str
    question: str
    kind: str
    depth: float
    output_tokens: int


def _cases() -> list[Case]:
    cases = []
    for seed in (1, 2):
        history = agent_history(turns=15, seed=seed, ask="old")
        fact = history.messages[history.fact_index]
        line = next(ln for ln in fact["content"].splitlines() if history.answer in ln)
        cases.append(
            Case(
                messages=history.messages,
                needle=history.answer,
                fact_line=line,
                question=history.question,
                kind="log",
                depth=0.5,
                output_tokens=openai.count_tokens([fact]),
            )
        )
    return cases


def test_pycupel_whole_history_keeps_the_fact_and_a_tiny_budget_does_not() -> None:
    cases = _cases()
    results = large_outputs.evaluate(cases, [0.02, 1.0], {"pycupel": large_outputs.fit_pycupel})
    whole = large_outputs.summarize(results["pycupel"][1.0])
    assert whole["kept"] == 1.0
    assert whole["valid"] == 1.0
    assert whole["calls_visible"] == 1.0
    assert whole["over_budget"] == 0.0
    assert whole["errors"] == {}
    assert 0.9 <= whole["window_over_budget"] <= 1.0
    tiny = large_outputs.summarize(results["pycupel"][0.02])
    assert tiny["kept"] == 0.0  # 2 % of the history has no room for the fact's output
    assert tiny["valid"] == 1.0
    assert tiny["window_over_budget"] <= 1.0
    assert tiny["ms"] > 0


def test_trim_messages_drops_the_old_fact_and_hides_its_calls() -> None:
    pytest.importorskip("langchain_core")
    cases = _cases()
    fits = {"trim_messages": large_outputs.fit_trim_last}
    results = large_outputs.evaluate(cases, [0.1, 1.0], fits)
    small = results["trim_messages"][0.1]
    assert [outcome.kept for outcome in small] == [False, False]  # the fact is in the oldest third
    assert all(outcome.parses and not outcome.over for outcome in small)
    assert large_outputs.summarize(small)["calls_visible"] < 0.5
    whole = large_outputs.summarize(results["trim_messages"][1.0])
    assert whole["kept"] == 1.0
    assert whole["over_budget"] == 0.0
    # Its counter adds the per-request overhead to the system message and to the rest apart:
    # 3 tokens short of the whole history, it drops the first turn.
    assert 0.9 < whole["calls_visible"] < 1.0


def test_a_raising_method_is_counted_not_fatal() -> None:
    def refuses(messages: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
        raise LookupError(budget)

    results = large_outputs.evaluate(_cases(), [0.5], {"refuses": refuses})
    summary = large_outputs.summarize(results["refuses"][0.5])
    assert summary["errors"] == {"LookupError": 2}
    assert summary["kept"] == summary["valid"] == summary["calls_visible"] == 0.0


def test_the_needle_is_found_in_tool_call_arguments_and_must_be_in_the_history() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"k": "Z9"}'}}
    assert "Z9" in large_outputs.window_text([{"role": "assistant", "tool_calls": [call]}])
    case = _cases()[0]
    missing = Case(case.messages, "not-in-this-history", "", "", "log", 0.0, 0)
    with pytest.raises(ValueError, match="not in the history"):
        large_outputs.evaluate([missing], [0.5], {"pycupel": large_outputs.fit_pycupel})
