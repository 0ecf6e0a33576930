"""A turn that fails leaves the session able to take the next one: no unit lost, none twice.

A history whose newest tool call has no result yet, or a malformed message, makes ``fit``
raise after the session has read part of the history. The next turn must still place every
unit exactly once: the window is then what a session that never saw the failed turn gives.
"""

from __future__ import annotations

from typing import Any

import pytest

from pycupel.adapters import openai
from pycupel.errors import MessageFormatError


def _call(call_id: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }


def _history() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "first question about the build"},
        {"role": "assistant", "content": "It passed."},
    ]


def test_an_unanswered_call_then_its_result_keeps_every_unit() -> None:
    session = openai.Session(budget=2_000)
    history = _history()
    session.fit(history)
    history += [{"role": "user", "content": "second question"}, _call("c1")]
    with pytest.raises(MessageFormatError, match="no tool result"):
        session.fit(history)
    history.append({"role": "tool", "tool_call_id": "c1", "content": "the result"})
    window = session.fit(history)
    assert window.messages == history  # the latest user message too
    assert window.messages == openai.Session(budget=2_000).fit(history).messages
    assert window.report.cache_break is None  # the request extends the previous one


def test_a_malformed_message_then_a_valid_history_shows_each_message_once() -> None:
    session = openai.Session(budget=2_000)
    history = _history()
    session.fit(history)
    with pytest.raises(MessageFormatError):
        session.fit([*history, {"role": "bogus", "content": "x"}])
    history.append({"role": "user", "content": "second question"})
    window = session.fit(history)
    assert window.messages == history
    # The session read the history again: it says so rather than claim a cached prefix.
    assert (window.report.cache_break, window.report.edited_at) == ("edit", 0)


def test_an_edit_in_a_failed_turn_is_still_reported_by_the_next() -> None:
    session = openai.Session(budget=2_000)
    history = _history()
    session.fit(history)
    edited = [history[0], {"role": "user", "content": "first question, edited"}, history[2]]
    with pytest.raises(MessageFormatError):
        session.fit([*edited, _call("c2")])
    window = session.fit([*edited, {"role": "user", "content": "next"}])
    assert window.report.edited_at == 1
    assert window.messages == [*edited, {"role": "user", "content": "next"}]
