"""anthropic.Session (system prompt, cache_control breakpoints on copies) and
langchain.Session (message objects)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from session_histories import chat_turns

from pycupel.adapters import anthropic

SYSTEM = "You are a patient assistant who keeps notes."


def anthropic_history(turns: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = []
    for turn, (user, assistant) in enumerate(chat_turns(turns)):
        history.append({"role": "user", "content": user["content"]})
        if turn % 4 == 0:
            call = f"toolu_{turn}"
            history.append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Let me check."},
                        {"type": "tool_use", "id": call, "name": "lookup", "input": {"n": turn}},
                    ],
                }
            )
            history.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": call, "content": f"row {turn}"}
                    ],
                }
            )
        history.append({"role": "assistant", "content": assistant["content"]})
    return history


def breakpoints(system: object, messages: list[Any]) -> int:
    return json.dumps([system, messages]).count('"cache_control"')


def test_anthropic_windows_are_valid_cached_and_marked_on_copies() -> None:
    full = anthropic_history(120)
    pristine = copy.deepcopy(full)
    session = anthropic.Session(budget=2_500)
    previous = None
    compactions = 0
    for end in range(1, len(full) + 1):
        if full[end - 1]["role"] != "user" or isinstance(full[end - 1]["content"], list):
            continue
        window = session.fit(full[:end], system=SYSTEM)
        assert window.system is not None
        assert window.system[0]["text"] == SYSTEM  # type: ignore[index]
        assert anthropic.count_tokens(window.messages, system=window.system) <= 2_500
        assert 2 <= breakpoints(window.system, window.messages) <= 4
        anthropic.from_messages(window.messages, system=window.system)  # valid pairing
        assert window.messages[-1]["content"][0]["text"] == full[end - 1]["content"]
        if window.compacted:
            compactions += 1
            assert window.messages[0]["role"] == "user"
        if previous is not None and window.report.cache_break is None:
            unmarked = [json.dumps(m, sort_keys=True) for m in strip(window.messages)]
            before = [json.dumps(m, sort_keys=True) for m in strip(previous.messages)]
            assert unmarked[: len(before)] == before
        previous = window
    assert compactions >= 2
    assert full == pristine  # the caller's messages were never modified


def strip(messages: list[Any]) -> list[Any]:
    """The messages without cache_control (string content where a breakpoint made blocks)."""
    result = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in content]
            if len(blocks) == 1 and blocks[0]["type"] == "text" and len(blocks[0]) == 2:
                content = blocks[0]["text"]
            else:
                content = blocks
        result.append({**message, "content": content})
    return result


def test_anthropic_system_change_is_an_edit_and_ttl_is_honoured() -> None:
    session = anthropic.Session(budget=2_000, cache_ttl="1h")
    history = [{"role": "user", "content": "hello there"}]
    session.fit(history, system=SYSTEM)
    window = session.fit(history, system="A different system prompt.")
    assert window.report.edited_at == 0
    assert window.report.cache_break == "edit"
    assert window.system[0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}  # type: ignore[index]
    plain = anthropic.Session(budget=2_000, cache_ttl=None).fit(history, system=SYSTEM)
    assert plain.system == SYSTEM
    assert plain.messages == history


def test_anthropic_usage_with_cache_counts_calibrates() -> None:
    session = anthropic.Session(budget=2_000)
    window = session.fit([{"role": "user", "content": "hello there"}], system=SYSTEM)
    read = session.record_usage(
        {"input_tokens": 3, "cache_read_input_tokens": 20, "cache_creation_input_tokens": 5}
    )
    assert (read.prompt_tokens, read.cache_read_tokens, read.cache_write_tokens) == (28, 20, 5)
    again = session.fit([{"role": "user", "content": "hello there"}], system=SYSTEM)
    assert again.tokens == 28
    assert window.tokens != 28


def test_langchain_session() -> None:
    messages = pytest.importorskip("langchain_core.messages")
    from pycupel.adapters import langchain

    history: list[Any] = [messages.SystemMessage(SYSTEM)]
    session = langchain.Session(budget=1_500)
    compacted = False
    for turn, (user, assistant) in enumerate(chat_turns(80)):
        history.append(messages.HumanMessage(user["content"]))
        if turn % 5 == 0:
            call = {"name": "lookup", "args": {"n": turn}, "id": f"c{turn}"}
            history.append(messages.AIMessage("", tool_calls=[call]))
            history.append(messages.ToolMessage(f"row {turn}", tool_call_id=f"c{turn}"))
        window = session.fit(history)
        compacted = compacted or window.compacted
        assert window.messages[0] is history[0]
        assert langchain.count_tokens(window.messages) <= 1_500
        langchain.from_messages(window.messages)
        session.record_usage(
            {"input_tokens": window.tokens, "input_token_details": {"cache_read": 0}}
        )
        history.append(messages.AIMessage(assistant["content"]))
    assert compacted
    history[3].content = "changed in place"
    window = session.fit(history)
    assert window.report.edited_at == 3
