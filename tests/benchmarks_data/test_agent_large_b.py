"""The operations-agent histories of ``benchmarks/quality/agent_large_b.py`` on a few seeds:
the interface, the same cases for the same seed, the needle exactly once and never in the
question, every tool call answered once, and the sizes of both scenarios in their ranges."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "quality"))

import agent_large_b as gen

SEEDS = (0, 1)
COUNT = 3


@pytest.fixture(scope="module")
def large() -> dict[int, list[gen.Case]]:
    return {seed: gen.large_output_cases(COUNT, seed=seed) for seed in SEEDS}


@pytest.fixture(scope="module")
def mid() -> dict[int, list[gen.Case]]:
    return {seed: gen.midsize_cases(COUNT, seed=seed) for seed in SEEDS}


def _tokens(text: str) -> int:
    return len(text) // 4


def _outputs(case: gen.Case) -> list[str]:
    return [m["content"] for m in case.messages if m["role"] == "tool"]


def _texts(case: gen.Case) -> list[str]:
    """Every content and every call's arguments."""
    texts = [str(m.get("content") or "") for m in case.messages]
    return texts + [
        c["function"]["arguments"] for m in case.messages for c in m.get("tool_calls") or ()
    ]


def _check_case(case: gen.Case) -> None:
    assert isinstance(case, gen.Case)
    messages = case.messages
    assert messages[0]["role"] == "system"
    assert messages[-1] == {"role": "user", "content": case.question}
    assert sum(text.count(case.needle) for text in _texts(case)) == 1
    assert case.needle not in case.question
    assert case.needle in case.fact_line
    holder = [text for text in _outputs(case) if case.needle in text]
    assert len(holder) == 1
    assert case.fact_line in holder[0]
    assert case.output_tokens == _tokens(holder[0])
    assert case.depth == pytest.approx(holder[0].index(case.needle) / len(holder[0]))
    assert 0.0 <= case.depth <= 1.0
    assert case.kind in gen.SHAPES
    # The question names the fact's subject in the output's words, near the needle.
    at = holder[0].index(case.needle)
    near = holder[0][max(0, at - 3_000) : at + 3_000]
    words = set(re.findall(r"[\w.-]{5,}", case.question)) - {"which", "there", "while"}
    assert any(word.rstrip(".?") in near for word in words), case.question


def _check_calls(messages: list[dict[str, Any]]) -> None:
    """Each assistant message's calls are answered right after it, once each."""
    seen: set[str] = set()
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if message["role"] == "tool":
            pytest.fail(f"tool message {index - 1} answers no call")
        calls = message.get("tool_calls") or []
        ids = [call["id"] for call in calls]
        assert not seen & set(ids)
        seen |= set(ids)
        for call in calls:
            assert call["type"] == "function"
            assert isinstance(json.loads(call["function"]["arguments"]), dict)
        answers = [m["tool_call_id"] for m in messages[index : index + len(ids)]]
        assert sorted(answers) == sorted(ids)
        assert all(m["role"] == "tool" for m in messages[index : index + len(ids)])
        index += len(ids)


def test_interface_and_facts(large: dict[int, list[gen.Case]], mid: dict[int, list[gen.Case]]):
    for batch in (*large.values(), *mid.values()):
        assert len(batch) == COUNT
        for case in batch:
            _check_case(case)
            _check_calls(case.messages)
    cases = [case for batch in (*large.values(), *mid.values()) for case in batch]
    widths = {len(m.get("tool_calls") or ()) for case in cases for m in case.messages}
    assert {1, 2} <= widths  # some assistant messages call two tools in parallel


def test_same_seed_same_cases(large: dict[int, list[gen.Case]], mid: dict[int, list[gen.Case]]):
    assert gen.large_output_cases(1, seed=SEEDS[0]) == large[SEEDS[0]][:1]
    assert gen.midsize_cases(2, seed=SEEDS[0]) == mid[SEEDS[0]][:2]
    assert large[SEEDS[0]][0].messages != large[SEEDS[1]][0].messages
    assert mid[SEEDS[0]][0].messages != mid[SEEDS[1]][0].messages


def test_large_output_sizes(large: dict[int, list[gen.Case]]):
    for case in (case for batch in large.values() for case in batch):
        assert 80_000 <= gen.tokens(case.messages) <= 160_000
        rounds = [m for m in case.messages if m.get("tool_calls")]
        assert 10 <= len(rounds) <= 26
        sizes = [_tokens(text) for text in _outputs(case)]
        large_ones = [size for size in sizes if size >= 5_000]
        assert 2 <= len(large_ones) <= 4
        assert max(sizes) <= 80_000


def test_midsize_sizes(mid: dict[int, list[gen.Case]]):
    for case in (case for batch in mid.values() for case in batch):
        assert 60_000 <= gen.tokens(case.messages) <= 140_000
        sizes = [_tokens(text) for text in _outputs(case)]
        assert 25 <= len(sizes) <= 70
        assert all(300 <= size <= 4_000 for size in sizes)
