"""The OpenAI Responses API adapter: input items in, a valid smaller input out."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from adapter_histories import WordCounter, assert_subsequence
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.adapters import responses
from pycupel.errors import MessageFormatError, PinnedBudgetError
from pycupel.model import ContextKind

COUNTER = WordCounter()


def call(call_id: str, name: str = "get_weather", arguments: str = '{"city": "Paris"}') -> Any:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def output(call_id: str, text: str = "rain") -> Any:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def reasoning(summary: str = "need the tool") -> Any:
    return {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": summary}],
        "encrypted_content": "gAAAAB" * 40,
    }


def agent_history() -> list[Any]:
    return [
        {"role": "developer", "content": "Answer briefly."},
        {"role": "user", "content": "weather in paris and rome"},
        reasoning(),
        call("c1"),
        call("c2", arguments='{"city": "Rome"}'),
        output("c2", "sun"),
        output("c1", "rain"),
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Rain, then sun.", "annotations": []}],
        },
        {"role": "user", "content": [{"type": "input_text", "text": "thanks, and tomorrow?"}]},
    ]


def test_round_trip_returns_the_original_items() -> None:
    items = agent_history()
    units = responses.from_messages(items, instructions="Be kind.", counter=COUNTER)
    history = responses.to_messages(units.items, units)
    assert history == ("Be kind.", items)
    assert all(a is b for a, b in zip(history.input, items, strict=True))


def test_parallel_calls_their_outputs_and_the_reasoning_before_them_form_one_unit() -> None:
    units = responses.from_messages(agent_history(), counter=COUNTER)
    tool_units = [unit for unit in units if unit.item.kind == ContextKind.TOOL_OUTPUT]
    assert [unit.message_indices for unit in tool_units] == [(2, 3, 4, 5, 6)]
    assert tool_units[0].call_ids == ("c1", "c2")
    assert "tool:get_weather" in tool_units[0].item.tags


def test_reasoning_stays_with_the_message_after_it() -> None:
    items = [
        {"role": "user", "content": "hi"},
        reasoning("greet back"),
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "bye"},
    ]
    units = responses.from_messages(items, counter=COUNTER)
    assert [unit.message_indices for unit in units] == [(0,), (1, 2), (3,)]


def test_plain_string_input_comes_back_as_the_string() -> None:
    units = responses.from_messages("what is a token?", counter=COUNTER)
    assert len(units) == 1
    assert units.items[0].pinned
    assert responses.to_messages(units.items, units).input == "what is a token?"
    assert responses.to_messages([], units).input == []
    fitted = responses.fit_messages("what is a token?", budget=50, counter=COUNTER)
    assert fitted.input == "what is a token?"


def test_fit_drops_old_units_whole_and_keeps_pins() -> None:
    items = agent_history()
    snapshot = copy.deepcopy(items)
    units = responses.from_messages(items, counter=COUNTER)
    pinned = sum(unit.item.tokens for unit in units if unit.item.pinned)
    budget = pinned + responses.DEFAULT_OVERHEAD.per_request
    instructions, fitted, report = responses.fit_messages(items, budget=budget, counter=COUNTER)
    assert instructions is None
    assert fitted == [items[0], items[-1]]
    assert items == snapshot
    assert len(report.excluded) == len(units) - 2
    assert responses.count_tokens(fitted, counter=COUNTER) <= budget


def test_count_tokens_counts_instructions_items_and_the_request() -> None:
    items = agent_history()
    units = responses.from_messages(items, instructions="Be kind.", counter=COUNTER)
    expected = sum(item.tokens for item in units.items) + responses.DEFAULT_OVERHEAD.per_request
    assert (
        responses.count_tokens(items, instructions="Be kind.", counter=COUNTER)
        == expected
        == units.total_tokens
    )


def test_encrypted_reasoning_is_not_counted_as_text() -> None:
    plain = responses.count_tokens([{"role": "user", "content": "x"}, reasoning()])
    bare = dict(reasoning())
    del bare["encrypted_content"]
    assert responses.count_tokens([{"role": "user", "content": "x"}, bare]) == plain


def test_pinned_instructions_that_do_not_fit_raise() -> None:
    with pytest.raises(PinnedBudgetError):
        responses.fit_messages("hello", instructions="word " * 50, budget=20, counter=COUNTER)


@pytest.mark.parametrize(
    ("items", "location"),
    [
        ([output("nope")], "input[0].call_id"),
        ([call("c1")], "input[0].call_id"),
        ([call("c1"), call("c1"), output("c1")], "input[1].call_id"),
        ([{"role": "tool", "content": "x"}], "input[0].role"),
        ([{"type": "function_call", "call_id": "c", "arguments": "{}"}], "input[0].name"),
        ([{"role": "user", "content": [{"type": "input_text"}]}], "input[0].content[0].text"),
        ([{"role": "user", "content": [{"type": "input_image"}]}], "input[0].content[0]"),
        ([{"type": 3}], "input[0].type"),
        (
            [{"type": "reasoning", "summary": [{"type": "summary_text"}]}],
            "input[0].summary[0].text",
        ),
    ],
)
def test_malformed_input_names_the_location(items: Any, location: str) -> None:
    with pytest.raises(MessageFormatError, match=re.escape(f"input: {location}: ")):
        responses.from_messages(items)


def test_unanswered_calls_can_be_dropped() -> None:
    items = [{"role": "user", "content": "go"}, call("c1")]
    _, fitted, report = responses.fit_messages(
        items, budget=500, counter=COUNTER, unanswered_tool_calls="drop"
    )
    assert fitted == [items[0]]
    assert [entry.reason.filter_name for entry in report.excluded] == ["unanswered-tool-call"]


def test_other_call_kinds_pair_by_their_ids() -> None:
    items = [
        {"role": "user", "content": "patch it"},
        {"type": "custom_tool_call", "call_id": "k1", "name": "grammar", "input": "x+1"},
        {"type": "custom_tool_call_output", "call_id": "k1", "output": "2"},
        {
            "type": "mcp_approval_request",
            "id": "a1",
            "name": "deploy",
            "arguments": "{}",
            "server_label": "ops",
        },
        {"type": "mcp_approval_response", "approval_request_id": "a1", "approve": True},
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "paris"},
        },
        {"role": "user", "content": "ok"},
    ]
    units = responses.from_messages(items, counter=COUNTER)
    assert [unit.message_indices for unit in units] == [(0,), (1, 2), (3, 4), (5,), (6,)]


# --------------------------------------------------------------------------- properties


def assert_responses_valid(output: Sequence[Any], original: Sequence[Any]) -> None:
    """Outputs follow their calls, calls have outputs, reasoning keeps its next item."""
    assert_subsequence(output, original)
    positions = {id(item): index for index, item in enumerate(original)}
    open_calls: set[str] = set()
    for position, item in enumerate(output):
        kind = item.get("type") if isinstance(item, Mapping) else None
        if kind == "function_call":
            open_calls.add(item["call_id"])
        elif kind == "function_call_output":
            assert item["call_id"] in open_calls, f"orphaned output at output[{position}]"
            open_calls.discard(item["call_id"])
        elif kind == "reasoning":
            following = positions[id(item)] + 1
            if following < len(original):
                assert position + 1 < len(output), "reasoning item left last"
                assert output[position + 1] is original[following], "reasoning lost its item"
    assert not open_calls, f"unanswered calls {open_calls}"


words = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "ok"]), max_size=12).map(
    " ".join
)
turn = st.one_of(
    st.tuples(st.just("user"), words),
    st.tuples(st.just("assistant"), words, st.booleans()),
    st.tuples(st.just("tools"), st.lists(words, min_size=1, max_size=3), st.booleans()),
)


def build_items(turns: list[Any]) -> list[Any]:
    items: list[Any] = []
    number = 0
    for entry in turns:
        if entry[0] == "user":
            items.append({"role": "user", "content": entry[1]})
        elif entry[0] == "assistant":
            if entry[2]:
                items.append(reasoning(entry[1]))
            text = {"type": "output_text", "text": entry[1], "annotations": []}
            items.append({"type": "message", "role": "assistant", "content": [text]})
        else:
            _, results, with_reasoning = entry
            if with_reasoning:
                items.append(reasoning("plan"))
            ids = []
            for _ in results:
                number += 1
                ids.append(f"c{number}")
                items.append(call(f"c{number}"))
            answers = [output(i, text) for i, text in zip(ids, results, strict=True)]
            items.extend(reversed(answers) if number % 2 else answers)
    return items


@settings(max_examples=120, deadline=None)
@given(
    instructions=st.one_of(st.none(), words),
    turns=st.lists(turn, max_size=20),
    budget=st.integers(min_value=3, max_value=400),
)
def test_random_inputs_fit_into_valid_inputs(
    instructions: str | None, turns: list[Any], budget: int
) -> None:
    items = build_items(turns)
    units = responses.from_messages(items, instructions=instructions, counter=COUNTER)
    assert responses.to_messages(units.items, units) == (instructions, items)
    per_request = responses.DEFAULT_OVERHEAD.per_request
    try:
        fitted_instructions, fitted, _ = responses.fit_messages(
            items, instructions=instructions, budget=budget, counter=COUNTER
        )
    except PinnedBudgetError:
        pinned = sum(unit.item.tokens for unit in units if unit.item.pinned)
        assert pinned > budget - per_request
        return
    assert fitted_instructions == instructions
    assert isinstance(fitted, list)
    assert_responses_valid(fitted, items)
    assert (
        responses.count_tokens(fitted, instructions=fitted_instructions, counter=COUNTER) <= budget
    )
