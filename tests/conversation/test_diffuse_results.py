"""A short tool result that matches the question only by words spread over its lines is not
kept whole before the placeholders: its lines compete by value with the lines of the long
outputs, so it cannot crowd out the line that answers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from pycupel.adapters import openai
from pycupel.conversation.excerpts.allocation import ExcerptPlan
from pycupel.conversation.excerpts.segments import segment
from pycupel.conversation.upgrade import STRONG_SEGMENT, _diffuse

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "quality"))

import agent_large_a
import agent_large_b


def plan(position: int, values: list[float]) -> ExcerptPlan:
    text = "\n".join(f"line {n}" for n in range(len(values)))
    return ExcerptPlan(
        position=position,
        texts=[segment(text)],
        tokens=[[3] * len(values)],
        values=[values],
        fixed=10,
    )


def contents_at_2_percent(messages: list[dict[str, Any]]) -> list[str]:
    """The contents of the window of ``messages`` fitted at 2 % of their tokens (checked to
    be within that budget)."""
    budget = int(openai.count_tokens(messages) * 0.02)
    window, _ = openai.fit_messages(messages, budget=budget)
    assert openai.count_tokens(window) <= budget
    return [str(message.get("content") or "") for message in window]


def test_a_unit_without_a_line_near_the_best_is_diffuse() -> None:
    top = plan(1, [0.1, 1.0, 0.2])
    near = plan(2, [0.0, STRONG_SEGMENT * 1.0, 0.1])  # exactly at the bar: not diffuse
    spread = plan(3, [0.5, 0.55, 0.4])  # many middling lines, none strong
    found = _diffuse([top, near, spread])
    assert list(found) == [3]
    # Valued by its best line's share of the bar (0.55 of the 0.6 asked).
    assert found[3] == pytest.approx(0.55 / (STRONG_SEGMENT * 1.0))
    assert _diffuse([spread]) == {}  # alone, its best line is the best there is
    assert _diffuse([]) == {}


def test_short_results_with_scattered_words_leave_room_for_the_answer_line() -> None:
    # An operations agent's history (generator B): two short Java logs of the service the
    # question names, each naming an exception, the service and a class in different lines,
    # score as strongly as a whole as the long log whose one stack frame answers. Kept whole
    # first, they took the room of that frame at 2 % of the history.
    case = agent_large_b.large_output_cases(1, seed=23)[0]
    assert case.needle in "\n".join(contents_at_2_percent(case.messages))


def test_a_diffuse_result_is_not_offered_whole_beside_the_lines() -> None:
    # A coding agent's history (generator A): `kubectl get pods -n fraud`, a short listing
    # whose call names the question's service and whose one pod name holds "stream", scored
    # as the best unit of all. Offered whole beside the lines of the long outputs, it took a
    # fifth of the room at 2 % of the history, and the table row that answers found none.
    # Now it is offered whole only for what its best line is worth.
    case = agent_large_a.large_output_cases(8, seed=7)[7]
    window = "\n".join(contents_at_2_percent(case.messages))
    assert case.needle in window
    assert "CrashLoopBackOff" not in window
