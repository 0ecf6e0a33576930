"""Sessions that shrink: shorter versions kept at compaction, a running summary of the drops.

The histories are generated agent histories (tool calls with long results) replayed turn by
turn, each turn the whole history so far, as an agent loop sends them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from pycupel.adapters import Shrink, anthropic, openai, variant_name
from pycupel.errors import SessionConfigError, SummarizerError
from pycupel.histories import agent_history

MARK = "[Summary of the earlier conversation]"


def turns(messages: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The history after each message that leaves no tool call open."""
    ends: list[list[dict[str, Any]]] = []
    open_calls: set[str] = set()
    for end, message in enumerate(messages, start=1):
        open_calls.update(call["id"] for call in message.get("tool_calls") or ())
        open_calls.discard(message.get("tool_call_id", ""))
        if not open_calls and end > 1:
            ends.append(list(messages[:end]))
    return ends


def rendered(messages: Sequence[Any]) -> list[str]:
    return [json.dumps(message, sort_keys=True) for message in messages]


def common_prefix(before: list[str], now: list[str]) -> int:
    length = 0
    for a, b in zip(before, now, strict=False):
        if a != b:
            break
        length += 1
    return length


class Summaries:
    """A deterministic summarizer: names the tool results it was handed, folds the previous."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[dict[str, Any]], str | None]] = []

    def __call__(self, dropped: list[dict[str, Any]], previous: str | None) -> str:
        self.calls.append((dropped, previous))
        results = sum(1 for message in dropped if message["role"] == "tool")
        return f"{previous or 'Nothing before.'} Then {results} tool results."[-300:]


def test_a_shrinking_session_keeps_tool_calls_visible_and_its_prefix_byte_identical() -> None:
    history = agent_history(turns=80, seed=3)
    session = openai.Session(budget=3_000, shrink=True)
    plain = openai.Session(budget=3_000)
    before: list[str] | None = None
    compactions = shrunk_turns = 0
    for messages in turns(history.messages):
        window = session.fit(messages)
        openai.from_messages(window.messages)  # valid: every result after its call
        assert openai.count_tokens(window.messages) <= 3_000
        now = rendered(window.messages)
        if before is not None and window.report.cache_break is None:
            assert common_prefix(before, now) == len(before)  # append-only, byte for byte
        shrunk_turns += any(
            m["role"] == "tool" and "cleared" in m["content"] for m in window.messages
        )
        compactions += window.compacted
        before = now
        session.record_usage({"prompt_tokens": openai.count_tokens(window.messages)})
        plain_window = plain.fit(messages)
        plain.record_usage({"prompt_tokens": openai.count_tokens(plain_window.messages)})
    assert compactions >= 3
    assert shrunk_turns > 0

    # The last window shows more of the history's tool calls than the session that drops.
    def calls(window_messages: Sequence[dict[str, Any]]) -> int:
        return sum(len(m.get("tool_calls") or ()) for m in window_messages)

    assert calls(window.messages) > calls(plain_window.messages)


def test_the_compaction_report_names_the_versions_kept() -> None:
    history = agent_history(turns=80, seed=3)
    session = openai.Session(budget=3_000, shrink=Shrink(truncate=False, excerpts=False))
    names: set[str] = set()
    for messages in turns(history.messages):
        window = session.fit(messages)
        if window.report.selection is not None:
            names.update(variant_name(e.item) for e in window.report.selection.included)
    assert names == {"full", "placeholder"}


def test_keep_whole_and_exclude_tools_are_honoured_in_a_session() -> None:
    history = agent_history(turns=80, seed=3)
    session = openai.Session(budget=3_000, shrink=Shrink(exclude_tools={"read_file"}))
    names = {
        c["id"]: c["function"]["name"] for m in history.messages for c in m.get("tool_calls") or ()
    }
    for messages in turns(history.messages):
        window = session.fit(messages)
        for message in window.messages:
            if message["role"] == "tool" and "cleared" in message["content"]:
                assert names[message["tool_call_id"]] != "read_file"


def test_the_summarizer_runs_once_per_compaction_and_folds_into_one_message() -> None:
    history = agent_history(turns=80, seed=3)
    summaries = Summaries()
    session = openai.Session(budget=3_000, summarize=summaries)
    compactions = 0
    shown: Any = None  # the summary message of the previous window
    before: list[str] | None = None
    before_stable = 0
    handed: list[int] = []
    for messages in turns(history.messages):
        calls = len(summaries.calls)
        window = session.fit(messages)
        compactions += window.compacted
        assert len(summaries.calls) - calls == (1 if window.compacted else 0)
        assert openai.count_tokens(window.messages) <= 3_000
        openai.from_messages(window.messages)
        if window.compacted:
            dropped, previous = summaries.calls[-1]
            # The previous summary's text is passed back in, so the summaries fold.
            assert previous == (None if shown is None else shown["content"][len(MARK) + 1 :])
            positions = [next(i for i, m in enumerate(messages) if m is d) for d in dropped]
            assert positions == sorted(positions)
            assert not set(positions) & set(handed)  # each message summarised once
            handed.extend(positions)
        summary = [m for m in window.messages if str(m.get("content", "")).startswith(MARK)]
        if compactions:
            # One summary, right after the system prompt.
            assert len(summary) == 1
            assert window.messages[0]["role"] == "system"
            assert window.messages[1] is summary[0]
            if not window.compacted:
                assert summary[0] is shown  # the same object: nothing re-rendered
            shown = summary[0]
        now = rendered(window.messages)
        if before is not None and not window.compacted:
            # Only the recall zone (after the stable prefix, the summary in it) may move.
            expected = len(before) if window.report.cache_break is None else before_stable
            assert common_prefix(before, now) >= expected
        before_stable = window.report.stable_messages
        before = now
    assert compactions >= 3


def test_an_async_summarizer_is_awaited_by_afit() -> None:
    class Counter:
        async def count_batch(self, texts: Sequence[str]) -> list[int]:
            return [max(1, len(text) // 4) for text in texts]

    calls: list[int] = []

    async def summarize(dropped: list[dict[str, Any]], previous: str | None) -> str:
        await asyncio.sleep(0)
        calls.append(len(dropped))
        return f"{len(calls)} summaries so far"

    async def replay() -> int:
        session = openai.Session(budget=3_000, summarize=summarize)
        compactions = 0
        for messages in turns(agent_history(turns=60, seed=1).messages):
            window = await session.afit(messages, counter=Counter())
            compactions += window.compacted
            if calls:
                assert window.messages[1]["content"] == f"{MARK}\n{len(calls)} summaries so far"
        return compactions

    compactions = asyncio.run(replay())
    assert compactions >= 1
    assert len(calls) == compactions


def test_a_coroutine_summarizer_runs_in_a_synchronous_fit_outside_an_event_loop() -> None:
    async def summarize(dropped: list[dict[str, Any]], previous: str | None) -> str:
        return "async summary"

    session = openai.Session(budget=3_000, summarize=summarize)
    for messages in turns(agent_history(turns=60, seed=1).messages):
        window = session.fit(messages)
    assert window.messages[1]["content"] == f"{MARK}\nasync summary"


def test_a_failing_summarizer_raises_or_is_skipped() -> None:
    def broken(dropped: list[dict[str, Any]], previous: str | None) -> str:
        raise RuntimeError("model unavailable")

    histories = turns(agent_history(turns=60, seed=1).messages)
    session = openai.Session(budget=3_000, summarize=broken)

    def replay() -> None:
        for messages in histories:
            session.fit(messages)

    with pytest.raises(SummarizerError, match="broken") as caught:
        replay()
    assert isinstance(caught.value.__cause__, RuntimeError)
    skipping = openai.Session(budget=3_000, summarize=broken, on_summary_error="skip")
    compacted = False
    for messages in histories:
        window = skipping.fit(messages)
        compacted = compacted or window.compacted
        assert not any(str(m.get("content", "")).startswith(MARK) for m in window.messages)
        assert openai.count_tokens(window.messages) <= 3_000
    assert compacted


def test_an_edit_of_a_summarised_message_forgets_the_summary() -> None:
    histories = turns(agent_history(turns=60, seed=1).messages)
    summaries = Summaries()
    session = openai.Session(budget=3_000, summarize=summaries)
    for messages in histories:
        window = session.fit(messages)
    assert summaries.calls
    summarised = summaries.calls[0][0][0]
    position = next(i for i, m in enumerate(messages) if m is summarised)
    edited = [*messages[:position], {**summarised, "content": "edited"}, *messages[position + 1 :]]
    calls = len(summaries.calls)
    window = session.fit(edited)
    assert window.report.cache_break == "edit"
    summary = [m for m in window.messages if str(m.get("content", "")).startswith(MARK)]
    # The rebuilt window compacts: summarised afresh, the stale summary not folded in.
    assert len(summary) == 1
    assert len(summaries.calls) == calls + 1
    assert summaries.calls[-1][1] is None


def test_anthropic_sessions_shrink_and_summarise_with_breakpoints() -> None:
    history = agent_history(turns=80, seed=3)
    converted = anthropic_history(history.messages)
    summaries = Summaries()
    session = anthropic.Session(
        budget=3_000, shrink=True, summarize=lambda d, p: f"{len(d)} dropped", start_with_user=False
    )
    compactions = 0
    for end in anthropic_turns(converted):
        window = session.fit(converted[:end], system="You are an agent.")
        anthropic.from_messages(window.messages, system=window.system)
        assert anthropic.count_tokens(window.messages, system=window.system) <= 3_000
        compactions += window.compacted
        if compactions:
            first = window.messages[0]["content"]
            text = first if isinstance(first, str) else first[0]["text"]
            assert text.startswith(MARK)
    assert compactions >= 2
    del summaries


def anthropic_history(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The agent history in the Anthropic format (tool results as user tool_result blocks)."""
    converted: list[dict[str, Any]] = []
    for message in messages[1:]:  # the system prompt goes beside the messages
        if message["role"] == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": message["content"],
            }
            converted.append({"role": "user", "content": [block]})
        elif message.get("tool_calls"):
            text = message["content"] or "calling"
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
            blocks += [
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "input": json.loads(call["function"]["arguments"]),
                }
                for call in message["tool_calls"]
            ]
            converted.append({"role": "assistant", "content": blocks})
        else:
            converted.append({"role": message["role"], "content": message["content"]})
    return converted


def anthropic_turns(messages: Sequence[dict[str, Any]]) -> list[int]:
    ends = []
    open_calls: set[str] = set()
    for end, message in enumerate(messages, start=1):
        content = message["content"]
        if isinstance(content, list):
            for block in content:
                if block["type"] == "tool_use":
                    open_calls.add(block["id"])
                if block["type"] == "tool_result":
                    open_calls.discard(block["tool_use_id"])
        if not open_calls:
            ends.append(end)
    return ends


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"shrink": "yes"}, "shrink"),
        ({"summarize": "not callable"}, "summarize"),
        ({"summarize": len, "on_summary_error": "ignore"}, "on_summary_error"),
    ],
)
def test_invalid_shrink_and_summary_options_name_the_field(
    options: dict[str, Any], field: str
) -> None:
    with pytest.raises(SessionConfigError) as caught:
        openai.Session(budget=1_000, **options)
    assert caught.value.field == field
