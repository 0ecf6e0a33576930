"""Validity checks for what a model received inside a framework's own agent loop."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any


def shortened(message: Any) -> bool:
    """The message is a tool result kept as a placeholder, an excerpt or a truncation."""
    text = str(message.content)
    return text.startswith("[result cleared:") or re.search(r"tokens\)? elided", text) is not None


def assert_valid_langchain_input(messages: Sequence[Any]) -> None:
    """System messages only at the start; every tool call answered, every result called."""
    from langchain_core.messages import AIMessage, SystemMessage, ToolMessage

    leading = 0
    while leading < len(messages) and isinstance(messages[leading], SystemMessage):
        leading += 1
    assert not any(isinstance(message, SystemMessage) for message in messages[leading:])
    assert leading < len(messages), "the model received no conversation"
    assert not isinstance(messages[leading], ToolMessage), "a tool result leads the history"
    open_calls: set[str] = set()
    for message in messages:
        if isinstance(message, ToolMessage):
            assert message.tool_call_id in open_calls, f"orphan result {message.tool_call_id}"
            open_calls.discard(message.tool_call_id)
        else:
            assert not open_calls, f"calls {sorted(open_calls)} not answered before {message}"
            if isinstance(message, AIMessage):
                open_calls = {call["id"] for call in message.tool_calls}
    assert not open_calls, f"calls {sorted(open_calls)} never answered"


def assert_valid_chat_completions(messages: Sequence[Mapping[str, Any]]) -> None:
    """The same rules for Chat Completions dictionaries."""
    roles = [message["role"] for message in messages]
    leading = 0
    while leading < len(roles) and roles[leading] in ("system", "developer"):
        leading += 1
    assert not any(role in ("system", "developer") for role in roles[leading:])
    assert leading < len(roles)
    assert roles[leading] != "tool"
    open_calls: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            assert message["tool_call_id"] in open_calls
            open_calls.discard(message["tool_call_id"])
        else:
            assert not open_calls
            if message["role"] == "assistant":
                open_calls = {call["id"] for call in message.get("tool_calls") or ()}
    assert not open_calls
