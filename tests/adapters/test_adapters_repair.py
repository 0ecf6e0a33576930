"""Repair mode: broken histories in every format come out valid, every fix reported."""

from __future__ import annotations

from typing import Any

import pytest
from adapter_histories import WordCounter, assert_anthropic_valid, assert_openai_valid
from hypothesis import given, settings
from hypothesis import strategies as st
from test_adapters_gemini import assert_gemini_valid
from test_adapters_responses import assert_responses_valid

from pycupel.adapters import anthropic, gemini, openai, responses
from pycupel.conversation.repair import ORPHAN_FILTER
from pycupel.errors import MessageFormatError, PinnedBudgetError, PipelineConfigError

COUNTER = WordCounter()

# A history is a list of events; each format renders them its own way. "orphan" is a result
# for a call never made, "dangling" a call never answered, "double" a second result.
event = st.one_of(
    st.just(("user", "hello there")),
    st.just(("assistant", "sure thing")),
    st.tuples(st.just("tools"), st.integers(1, 3)),
    st.just(("orphan",)),
    st.just(("dangling",)),
    st.just(("double",)),
)


def openai_history(events: list[Any]) -> list[Any]:
    messages: list[Any] = [{"role": "system", "content": "be brief"}]
    last: str | None = None
    for number, entry in enumerate(events):
        kind = entry[0]
        if kind in ("user", "assistant"):
            messages.append({"role": kind, "content": entry[1]})
        elif kind in ("tools", "dangling"):
            count = entry[1] if kind == "tools" else 1
            ids = [f"c{number}-{k}" for k in range(count)]
            calls = [
                {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                for i in ids
            ]
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            if kind == "tools":
                messages.extend({"role": "tool", "tool_call_id": i, "content": "ok"} for i in ids)
                last = ids[-1]
        elif kind == "orphan":
            messages.append({"role": "tool", "tool_call_id": f"ghost{number}", "content": "?"})
        elif kind == "double" and last is not None:
            messages.append({"role": "tool", "tool_call_id": last, "content": "again"})
    return messages


def responses_history(events: list[Any]) -> list[Any]:
    items: list[Any] = []
    last: str | None = None
    for number, entry in enumerate(events):
        kind = entry[0]
        if kind in ("user", "assistant"):
            items.append({"role": kind, "content": entry[1]})
        elif kind in ("tools", "dangling"):
            count = entry[1] if kind == "tools" else 1
            ids = [f"c{number}-{k}" for k in range(count)]
            items.extend(
                {"type": "function_call", "call_id": i, "name": "f", "arguments": "{}"} for i in ids
            )
            if kind == "tools":
                items.extend(
                    {"type": "function_call_output", "call_id": i, "output": "ok"} for i in ids
                )
                last = ids[-1]
        elif kind == "orphan":
            items.append({"type": "function_call_output", "call_id": f"g{number}", "output": "?"})
        elif kind == "double" and last is not None:
            items.append({"type": "function_call_output", "call_id": last, "output": "again"})
    return items


def anthropic_history(events: list[Any]) -> list[Any]:
    messages: list[Any] = []
    last: str | None = None
    for number, entry in enumerate(events):
        kind = entry[0]
        if kind in ("user", "assistant"):
            messages.append({"role": kind, "content": entry[1]})
        elif kind in ("tools", "dangling"):
            count = entry[1] if kind == "tools" else 1
            ids = [f"t{number}-{k}" for k in range(count)]
            uses = [{"type": "tool_use", "id": i, "name": "f", "input": {}} for i in ids]
            messages.append({"role": "assistant", "content": uses})
            if kind == "tools":
                results = [{"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in ids]
                messages.append({"role": "user", "content": results})
                last = ids[-1]
        elif kind == "orphan":
            block = {"type": "tool_result", "tool_use_id": f"ghost{number}", "content": "?"}
            messages.append({"role": "user", "content": [block]})
        elif kind == "double" and last is not None:
            block = {"type": "tool_result", "tool_use_id": last, "content": "again"}
            messages.append({"role": "user", "content": [block]})
    return messages


def gemini_history(events: list[Any]) -> list[Any]:
    contents: list[Any] = []
    for number, entry in enumerate(events):
        kind = entry[0]
        if kind in ("user", "assistant"):
            role = "user" if kind == "user" else "model"
            contents.append({"role": role, "parts": [{"text": entry[1]}]})
        elif kind in ("tools", "dangling"):
            count = entry[1] if kind == "tools" else 1
            ids = [f"g{number}-{k}" for k in range(count)]
            calls = [{"functionCall": {"name": "f", "id": i, "args": {}}} for i in ids]
            contents.append({"role": "model", "parts": calls})
            if kind == "tools":
                answers = [
                    {"functionResponse": {"name": "f", "id": i, "response": {}}} for i in ids
                ]
                contents.append({"role": "user", "parts": answers})
        elif kind in ("orphan", "double"):
            answer = {"functionResponse": {"name": "f", "id": f"ghost{number}", "response": {}}}
            contents.append({"role": "user", "parts": [answer]})
    return contents


def broken(events: list[Any]) -> bool:
    return any(entry[0] in ("orphan", "dangling", "double") for entry in events)


@settings(max_examples=80, deadline=None)
@given(events=st.lists(event, max_size=14), budget=st.integers(20, 300))
def test_repair_gives_valid_histories_in_every_format(events: list[Any], budget: int) -> None:
    cases = [
        (openai_history(events), openai.fit_messages, assert_openai_valid, {}),
        (responses_history(events), responses.fit_messages, assert_responses_valid, {}),
        (anthropic_history(events), anthropic.fit_messages, None, {}),
        (gemini_history(events), gemini.fit_messages, None, {}),
    ]
    for history, fit, check, extra in cases:
        try:
            result = fit(history, budget=budget, counter=COUNTER, repair=True, **extra)
        except PinnedBudgetError:
            continue
        fitted = result[-2]
        if fit is anthropic.fit_messages:
            assert_anthropic_valid(fitted, history, merged=False)
        elif fit is gemini.fit_messages:
            assert_gemini_valid(fitted, history, merged=True)
        else:
            assert check is not None
            check(fitted, history)
        report = result[-1]
        for entry in report.excluded:
            assert entry.reason.describe()
        dropped = {
            index for entry in report.excluded for index in entry.item.metadata["message_indices"]
        }
        kept = {id(message) for message in fitted}
        assert all(id(history[index]) not in kept for index in dropped)
        if not broken(events):
            # a valid history needs no repair: the same output without it
            assert fit(history, budget=budget, counter=COUNTER)[-2] == fitted or (
                fit is gemini.fit_messages
            )


def test_each_fix_is_reported_with_its_filter() -> None:
    messages = [
        {"role": "tool", "tool_call_id": "ghost", "content": "stale result"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "run it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    ]
    with pytest.raises(MessageFormatError, match="orphaned tool result"):
        openai.fit_messages(messages, budget=500)
    fitted, report = openai.fit_messages(messages, budget=500, repair=True)
    assert fitted == messages[1:4]
    reasons = sorted(
        (entry.reason.filter_name, entry.item.metadata["message_indices"])
        for entry in report.excluded
    )
    assert reasons == [(ORPHAN_FILTER, (0,)), ("unanswered-tool-call", (4,))]


def test_anthropic_repair_drops_a_leading_assistant_turn_and_the_orphans() -> None:
    messages = [
        {"role": "assistant", "content": "Welcome back."},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "old", "content": "x"}],
        },
        {"role": "user", "content": "What changed?"},
    ]
    _, fitted, report = anthropic.fit_messages(messages, budget=500, repair=True)
    assert fitted == [messages[2]]
    assert sorted(entry.reason.filter_name for entry in report.excluded) == [
        ORPHAN_FILTER,
        "start-with-user",
    ]


def test_gemini_repair_merges_same_role_turns() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "a"}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        {"role": "user", "parts": [{"text": "b"}]},
    ]
    _, fitted, report = gemini.fit_messages(contents, budget=500, repair=True)
    assert fitted == [{"role": "user", "parts": [{"text": "a"}, {"text": "b"}]}]
    assert [entry.reason.filter_name for entry in report.excluded] == [ORPHAN_FILTER]


def test_repair_must_be_a_boolean() -> None:
    with pytest.raises(PipelineConfigError, match="repair"):
        openai.fit_messages([], budget=10, repair="yes")  # type: ignore[arg-type]
