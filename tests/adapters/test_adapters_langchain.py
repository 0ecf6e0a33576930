"""LangChain adapter: message objects in and out, tool-call grouping, the optional import."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from adapter_histories import WordCounter, assert_subsequence

from pycupel import ContextKind
from pycupel.adapters import langchain as lc_adapter
from pycupel.errors import AdapterUnavailableError, MessageFormatError

messages_module = pytest.importorskip("langchain_core.messages")
AIMessage = messages_module.AIMessage
ChatMessage = messages_module.ChatMessage
FunctionMessage = messages_module.FunctionMessage
HumanMessage = messages_module.HumanMessage
SystemMessage = messages_module.SystemMessage
ToolMessage = messages_module.ToolMessage

COUNTER = WordCounter()


def history() -> list[Any]:
    return [
        SystemMessage("You answer questions about invoices."),
        HumanMessage("Which invoices are overdue?"),
        AIMessage(
            "",
            tool_calls=[
                {"name": "list_invoices", "args": {"status": "overdue"}, "id": "call_a"},
                {"name": "list_customers", "args": {}, "id": "call_b"},
            ],
        ),
        ToolMessage("INV-1, INV-7", tool_call_id="call_a"),
        ToolMessage("ACME, Globex", tool_call_id="call_b"),
        AIMessage("INV-1 (ACME) and INV-7 (Globex) are overdue."),
        HumanMessage("Email ACME a reminder."),
        AIMessage("", tool_calls=[{"name": "send_email", "args": {"to": "acme"}, "id": "call_c"}]),
        ToolMessage("sent", tool_call_id="call_c"),
        AIMessage("Reminder sent."),
        HumanMessage("Thanks, what else is open?"),
    ]


def test_units_and_kinds() -> None:
    units = lc_adapter.from_messages(history(), counter=COUNTER)
    assert [unit.message_indices for unit in units] == [
        (0,),
        (1,),
        (2, 3, 4),
        (5,),
        (6,),
        (7, 8),
        (9,),
        (10,),
    ]
    assert units.units[0].item.kind == ContextKind.SYSTEM_PROMPT
    assert units.units[2].item.kind == ContextKind.TOOL_OUTPUT
    assert [unit.item.pinned for unit in units] == [True] + [False] * 6 + [True]
    assert units.units[5].item.content == (
        'ai: send_email({"to": "acme"})\n\ntool (send_email): sent'
    )


def test_round_trip_and_fit() -> None:
    messages = history()
    units = lc_adapter.from_messages(messages, counter=COUNTER)
    assert lc_adapter.to_messages(units.items, units) == messages
    total = lc_adapter.count_tokens(messages, counter=COUNTER)
    assert total == units.total_tokens
    for budget in (40, 60, 80, total):
        fitted, report = lc_adapter.fit_messages(messages, budget=budget, counter=COUNTER)
        assert_subsequence(fitted, messages)
        assert fitted[0] is messages[0]
        assert fitted[-1] is messages[-1]
        assert lc_adapter.count_tokens(fitted, counter=COUNTER) <= budget
        _assert_tool_pairs(fitted)
        assert report.total_candidates == len(units)
    assert lc_adapter.fit_messages(messages, budget=total, counter=COUNTER).messages == messages


def _assert_tool_pairs(messages: list[Any]) -> None:
    issued = {
        call["id"]
        for message in messages
        if isinstance(message, AIMessage)
        for call in message.tool_calls
    }
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    assert issued == answered


def test_tool_use_blocks_repeating_tool_calls_are_not_counted_twice() -> None:
    call = {"name": "lookup", "args": {"q": "x"}, "id": "toolu_1"}
    block = {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "x"}}
    with_block = [
        HumanMessage("q"),
        AIMessage([{"type": "text", "text": "let me look"}, block], tool_calls=[call]),
        ToolMessage("found", tool_call_id="toolu_1"),
    ]
    without_block = [
        HumanMessage("q"),
        AIMessage([{"type": "text", "text": "let me look"}], tool_calls=[call]),
        ToolMessage("found", tool_call_id="toolu_1"),
    ]
    assert lc_adapter.count_tokens(with_block, counter=COUNTER) == lc_adapter.count_tokens(
        without_block, counter=COUNTER
    )


def test_chat_message_roles_are_mapped() -> None:
    units = lc_adapter.from_messages(
        [ChatMessage(role="system", content="s"), ChatMessage(role="user", content="u")],
        counter=COUNTER,
    )
    assert units.units[0].item.kind == ContextKind.SYSTEM_PROMPT
    assert units.units[1].item.pinned


@pytest.mark.parametrize(
    ("messages", "pattern"),
    [
        (["hello"], r"messages\[0\]: must be a langchain_core BaseMessage"),
        ([FunctionMessage(name="f", content="x")], r"messages\[0\]: must be a SystemMessage"),
        ([ChatMessage(role="robot", content="x")], r"messages\[0\]\.role: a ChatMessage role"),
        (
            [HumanMessage("q"), ToolMessage("r", tool_call_id="nope")],
            r"messages\[1\]\.tool_call_id: .*'nope' does not answer",
        ),
        (
            [HumanMessage("q"), AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": None}])],
            r"messages\[1\]\.tool_calls\[0\]\.id: must be a string",
        ),
        (
            [HumanMessage("q"), AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "x"}])],
            r"messages\[1\]\.tool_calls\[0\]\.id: tool call 'x' \(f\) has no tool result",
        ),
    ],
)
def test_malformed_messages_raise(messages: list[Any], pattern: str) -> None:
    with pytest.raises(MessageFormatError, match=pattern):
        lc_adapter.from_messages(messages, counter=COUNTER)


def test_missing_langchain_raises_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_core.messages", None)
    with pytest.raises(AdapterUnavailableError, match=r"pip install 'pycupel\[langchain\]'"):
        lc_adapter.from_messages([], counter=COUNTER)
    with pytest.raises(ImportError):
        lc_adapter.count_tokens([], counter=COUNTER)


def test_messages_are_not_mutated() -> None:
    messages = history()
    before = [message.model_dump() for message in messages]
    units = lc_adapter.from_messages(messages, counter=COUNTER)
    lc_adapter.to_messages(units.items[::2], units)
    lc_adapter.fit_messages(messages, budget=50, counter=COUNTER)
    assert [message.model_dump() for message in messages] == before
