"""The agent_large_a benchmark generator: its interface, determinism and rules, on a few seeds.

Tool results are estimated at characters / 4, as the generator counts them.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "quality"))

import agent_large_a as gen

STOPWORDS = {"the", "a", "an", "of", "to", "is", "in", "on", "for", "at", "does", "do", "what"}


@pytest.fixture(scope="module")
def large() -> list[gen.Case]:
    return gen.large_output_cases(3, seed=11)


@pytest.fixture(scope="module")
def midsize() -> list[gen.Case]:
    return gen.midsize_cases(3, seed=11)


def _outputs(case: gen.Case) -> list[str]:
    return [m["content"] for m in case.messages if m["role"] == "tool"]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - STOPWORDS


def test_case_fields() -> None:
    fields = [(f.name, f.type) for f in dataclasses.fields(gen.Case)]
    assert [name for name, _ in fields] == [
        "messages", "needle", "fact_line", "question", "kind", "depth", "output_tokens"
    ]  # fmt: skip
    assert gen.Case.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_same_seed_same_cases_and_prefixes(large: list[gen.Case]) -> None:
    assert gen.large_output_cases(2, seed=11) == large[:2]
    assert gen.midsize_cases(1, seed=11)[0] != gen.midsize_cases(1, seed=12)[0]


@pytest.mark.parametrize("scenario", ["large", "midsize"])
def test_needle_fact_and_question(scenario: str, request: pytest.FixtureRequest) -> None:
    for case in request.getfixturevalue(scenario):
        assert case.messages[0]["role"] == "system"
        assert case.messages[-1] == {"role": "user", "content": case.question}
        everything = [m.get("content") or "" for m in case.messages] + [
            call["function"]["arguments"]
            for m in case.messages
            for call in m.get("tool_calls") or ()
        ]
        assert sum(text.count(case.needle) for text in everything) == 1
        assert case.needle not in case.question
        assert case.needle in case.fact_line
        holder = next(text for text in _outputs(case) if case.needle in text)
        assert case.fact_line in holder
        assert gen.tokens(holder) == case.output_tokens
        assert 0.0 <= case.depth <= 1.0
        assert case.kind in {"log", "json", "code", "prose", "table"}
        assert _words(case.question) & _words(case.fact_line), (case.question, case.fact_line)


@pytest.mark.parametrize("scenario", ["large", "midsize"])
def test_every_call_answered_once(scenario: str, request: pytest.FixtureRequest) -> None:
    for case in request.getfixturevalue(scenario):
        seen: set[str] = set()
        waiting: set[str] = set()
        for message in case.messages:
            if message["role"] == "tool":
                assert message["tool_call_id"] in waiting
                waiting.remove(message["tool_call_id"])
                continue
            assert not waiting, "a call left unanswered"
            for call in message.get("tool_calls") or ():
                assert call["type"] == "function"
                assert call["id"] not in seen
                seen.add(call["id"])
                waiting.add(call["id"])
                json.loads(call["function"]["arguments"])
            assert isinstance(message["content"], str)
        assert not waiting


def _rounds(case: gen.Case) -> int:
    return sum(1 for m in case.messages if m.get("tool_calls"))


def test_large_output_sizes(large: list[gen.Case]) -> None:
    for case in large:
        assert 100_000 <= gen.history_tokens(case.messages) <= 140_000
        assert 12 <= _rounds(case) <= 24
        sizes = [gen.tokens(text) for text in _outputs(case)]
        big = [size for size in sizes if size >= 5_000]
        assert 2 <= len(big) <= 4
        assert all(size <= 80_000 for size in big)
        assert all(50 <= size <= 1_500 for size in sizes if size < 5_000)


def test_midsize_sizes(midsize: list[gen.Case]) -> None:
    for case in midsize:
        assert 60_000 <= gen.history_tokens(case.messages) <= 120_000
        sizes = [gen.tokens(text) for text in _outputs(case)]
        assert 20 <= len(sizes) <= 60
        assert all(300 <= size <= 4_000 for size in sizes)


def _kinds(cases: list[Any]) -> set[str]:
    return {case.kind for case in cases}


def test_cases_vary() -> None:
    cases = gen.midsize_cases(8, seed=3)
    assert len(_kinds(cases)) >= 3
    assert len({round(case.depth, 1) for case in cases}) >= 4
    assert len({case.needle for case in cases}) == len(cases)
