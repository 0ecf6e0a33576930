"""Property tests: random valid histories at random budgets always give valid output."""

from __future__ import annotations

import copy
from typing import Any

from adapter_histories import (
    WordCounter,
    assert_anthropic_valid,
    assert_openai_valid,
    shortened_copy,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.adapters import anthropic, openai
from pycupel.errors import PinnedBudgetError, PipelineConfigError

COUNTER = WordCounter()

words = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "ok"]), max_size=12).map(
    " ".join
)
turn = st.one_of(
    st.tuples(st.just("user"), words),
    st.tuples(st.just("assistant"), words),
    st.tuples(st.just("tools"), st.lists(words, min_size=1, max_size=3), st.booleans()),
)


def build_openai(system: str | None, turns: list[Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if system is not None:
        messages.append({"role": "system", "content": system})
    number = 0
    for entry in turns:
        if entry[0] != "tools":
            messages.append({"role": entry[0], "content": entry[1]})
            continue
        _, results, reverse = entry
        calls = []
        for _ in results:
            number += 1
            function = {"name": "tool", "arguments": "{}"}
            calls.append({"id": f"c{number}", "type": "function", "function": function})
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        answers = [
            {"role": "tool", "tool_call_id": c["id"], "content": text}
            for c, text in zip(calls, results, strict=True)
        ]
        messages.extend(reversed(answers) if reverse else answers)
    return messages


def pinned_tokens(units: Any) -> int:
    return sum(unit.item.tokens for unit in units if unit.item.pinned)


@settings(max_examples=150, deadline=None)
@given(
    system=st.one_of(st.none(), words),
    turns=st.lists(turn, max_size=25),
    budget=st.integers(min_value=0, max_value=600),
    pin_latest_user=st.booleans(),
)
def test_openai_random_histories(
    system: str | None, turns: list[Any], budget: int, pin_latest_user: bool
) -> None:
    messages = build_openai(system, turns)
    snapshot = copy.deepcopy(messages)
    units = openai.from_messages(messages, counter=COUNTER, pin_latest_user=pin_latest_user)
    assert openai.to_messages(units.items, units) == messages
    per_request = openai.DEFAULT_OVERHEAD.per_request
    try:
        fitted, report = openai.fit_messages(
            messages, budget=budget, counter=COUNTER, pin_latest_user=pin_latest_user
        )
    except PipelineConfigError:
        assert budget < per_request
        return
    except PinnedBudgetError:
        assert pinned_tokens(units) > budget - per_request
        return
    assert messages == snapshot
    assert_openai_valid(fitted, messages)
    assert openai.count_tokens(fitted, counter=COUNTER) <= budget
    for unit in units:
        kept = [messages[index] for index in unit.message_indices]
        # A unit is kept (whole, or with its tool results shortened) or dropped as a whole.
        chosen = [m for m in kept if any(m is f or shortened_copy(f, m) for f in fitted)]
        assert chosen in ([], kept), "a unit is kept or dropped whole"
        if unit.item.pinned:
            assert all(any(m is f for f in fitted) for m in kept)
    assert report.total_candidates == len(units)


def build_anthropic(turns: list[Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    number = 0
    for entry in turns:
        if entry[0] != "tools":
            messages.append({"role": entry[0], "content": entry[1] or "..."})
            continue
        uses, results = [], []
        for text in entry[1]:
            number += 1
            uses.append({"type": "tool_use", "id": f"t{number}", "name": "tool", "input": {}})
            results.append({"type": "tool_result", "tool_use_id": f"t{number}", "content": text})
        messages.append({"role": "assistant", "content": uses})
        messages.append({"role": "user", "content": results})
    return messages


@settings(max_examples=150, deadline=None)
@given(
    system=st.one_of(st.none(), words),
    turns=st.lists(turn, max_size=25),
    budget=st.integers(min_value=3, max_value=600),
    merge=st.booleans(),
    start_with_user=st.booleans(),
)
def test_anthropic_random_histories(
    system: str | None, turns: list[Any], budget: int, merge: bool, start_with_user: bool
) -> None:
    messages = build_anthropic(turns)
    units = anthropic.from_messages(messages, system=system, counter=COUNTER)
    assert anthropic.to_messages(units.items, units) == (system, messages)
    try:
        fitted_system, fitted, report = anthropic.fit_messages(
            messages,
            system=system,
            budget=budget,
            counter=COUNTER,
            merge_consecutive=merge,
            start_with_user=start_with_user,
        )
    except PinnedBudgetError:
        assert pinned_tokens(units) > budget - anthropic.DEFAULT_OVERHEAD.per_request
        return
    assert fitted_system == system
    assert_anthropic_valid(fitted, messages, merged=merge)
    total = anthropic.count_tokens(fitted, system=fitted_system, counter=COUNTER)
    assert total <= budget
    # The report's items come from fit_messages' own conversion: read them by metadata.
    kept = sorted(
        (entry.item for entry in report.included if entry.item.metadata["message_indices"]),
        key=lambda item: item.metadata["message_indices"][0],
    )
    if not merge:
        kept_positions = [i for i, m in enumerate(messages) if any(m is f for f in fitted)]
        assert [i for item in kept for i in item.metadata["message_indices"]] == kept_positions
    if kept:
        first_role = kept[0].metadata["roles"][0]
        assert fitted[0]["role"] == first_role
        if start_with_user and first_role == "assistant":
            assert kept[0].pinned, "only a pinned unit may lead with an assistant turn"
