"""OpenAI adapter: conversion, grouping, validation, counting and fit_messages."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from adapter_histories import WordCounter, assert_openai_valid, openai_history, shortened_copy

from pycupel import ContextBudget, ContextKind, ContextSource
from pycupel.adapters import SYNTHETIC_EPOCH, MessageOverhead, openai
from pycupel.diagnostics import Deduplicated, Filtered
from pycupel.errors import (
    ItemValidationError,
    MessageFormatError,
    PinnedBudgetError,
    PipelineConfigError,
)

COUNTER = WordCounter()


def call(call_id: str, name: str = "get_weather", arguments: str = '{"city": "Paris"}') -> Any:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def weather_history() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1"), call("c2")]},
        {"role": "tool", "tool_call_id": "c2", "content": "Rome: 25 C"},
        {"role": "tool", "tool_call_id": "c1", "content": "Paris: 18 C"},
        {"role": "assistant", "content": "Paris 18 C, Rome 25 C."},
        {"role": "user", "content": "Thanks!"},
    ]


# --------------------------------------------------------------------------- from/to


def test_units_group_parallel_tool_calls_with_their_results() -> None:
    units = openai.from_messages(weather_history(), counter=COUNTER)
    assert [unit.message_indices for unit in units] == [(0,), (1,), (2, 3, 4), (5,), (6,)]
    kinds = [unit.item.kind for unit in units]
    assert kinds == [
        ContextKind.SYSTEM_PROMPT,
        ContextKind.MESSAGE,
        ContextKind.TOOL_OUTPUT,
        ContextKind.MESSAGE,
        ContextKind.MESSAGE,
    ]
    assert units.units[2].item.source == ContextSource.TOOL
    assert units.units[2].call_ids == ("c1", "c2")
    assert [unit.item.pinned for unit in units] == [True, False, False, False, True]
    assert "tool:get_weather" in units.units[2].item.tags
    assert units.units[2].item.metadata["message_indices"] == (2, 3, 4)


def test_item_content_renders_roles_tool_calls_and_results() -> None:
    units = openai.from_messages(weather_history(), counter=COUNTER)
    assert units.units[2].item.content == (
        'assistant: get_weather({"city": "Paris"})\nget_weather({"city": "Paris"})\n\n'
        "tool (get_weather): Rome: 25 C\n\ntool (get_weather): Paris: 18 C"
    )
    assert units.units[0].item.content == "system: You are terse."


def test_token_count_is_counted_text_plus_documented_overheads() -> None:
    overhead = openai.DEFAULT_OVERHEAD
    units = openai.from_messages(weather_history(), counter=COUNTER)
    # "You are terse." = 3 words + 4 per message.
    assert units.units[0].item.tokens == 3 + overhead.per_message
    # Two calls rendered as 'get_weather({"city": "Paris"})' (2 words each), two results of
    # 3 words, three messages and two tool calls of overhead.
    expected = 2 * 2 + 3 + 3 + 3 * overhead.per_message + 2 * overhead.per_tool_call
    assert units.units[2].item.tokens == expected
    assert openai.count_tokens(weather_history(), counter=COUNTER) == units.total_tokens
    assert units.total_tokens == sum(u.item.tokens for u in units) + overhead.per_request


def test_name_is_counted_with_its_overhead() -> None:
    plain = [{"role": "user", "content": "hello there"}]
    named = [{"role": "user", "content": "hello there", "name": "alice"}]
    difference = openai.count_tokens(named, counter=COUNTER) - openai.count_tokens(
        plain, counter=COUNTER
    )
    assert difference == 1 + openai.DEFAULT_OVERHEAD.per_name
    units = openai.from_messages(named, counter=COUNTER)
    assert units.units[0].item.content == "user (alice): hello there"


def test_images_have_a_fixed_cost_and_audio_needs_an_estimate() -> None:
    image = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this"},
                {"type": "image_url", "image_url": {"url": "https://example.com/x.png"}},
            ],
        }
    ]
    cheap = MessageOverhead(per_message=0, image=85)
    assert openai.count_tokens(image, counter=COUNTER, overhead=cheap) == 3 + 1 + 85
    audio = [
        {
            "role": "user",
            "content": [{"type": "input_audio", "input_audio": {"data": "AAA", "format": "wav"}}],
        }
    ]
    with pytest.raises(PipelineConfigError, match=r"overhead\.audio.*messages\[0\]\.content\[0\]"):
        openai.count_tokens(audio, counter=COUNTER)
    with_audio = MessageOverhead(per_message=0, audio=600)
    assert openai.count_tokens(audio, counter=COUNTER, overhead=with_audio) == 1 + 600


def test_unknown_part_types_are_counted_as_their_json_text() -> None:
    messages = [{"role": "user", "content": [{"type": "future_part", "payload": "a b c d"}]}]
    zero = MessageOverhead(per_message=0)
    # {"type": "future_part", "payload": "a b c d"} splits into 7 words.
    assert openai.count_tokens(messages, counter=COUNTER, overhead=zero) == 7


def test_round_trip_returns_the_original_objects() -> None:
    history = openai_history()
    units = openai.from_messages(history, counter=COUNTER)
    restored = openai.to_messages(units.items, units)
    assert restored == history
    assert all(a is b for a, b in zip(restored, history, strict=True))
    assert restored is not history


def test_to_messages_keeps_the_original_order_whatever_the_selection_order() -> None:
    units = openai.from_messages(weather_history(), counter=COUNTER)
    picked = openai.to_messages([units.items[3], units.items[0], units.items[2]], units)
    assert [m.get("content") for m in picked] == [
        "You are terse.",
        None,
        "Rome: 25 C",
        "Paris: 18 C",
        "Paris 18 C, Rome 25 C.",
    ]


def test_to_messages_rejects_foreign_and_repeated_items() -> None:
    units = openai.from_messages(weather_history(), counter=COUNTER)
    other = openai.from_messages(weather_history(), counter=COUNTER)
    with pytest.raises(ItemValidationError, match=r"selection\[1\]"):
        openai.to_messages([units.items[0], other.items[1]], units)
    with pytest.raises(ItemValidationError, match="twice"):
        openai.to_messages([units.items[0], units.items[0]], units)


def test_inputs_are_never_mutated() -> None:
    history = openai_history()
    snapshot = copy.deepcopy(history)
    units = openai.from_messages(history, counter=COUNTER)
    openai.to_messages(units.items[::2], units)
    openai.fit_messages(history, budget=2_000, counter=COUNTER)
    assert history == snapshot


def test_latest_user_pinning_and_system_pinning_are_configurable() -> None:
    units = openai.from_messages(
        weather_history(), counter=COUNTER, pin_system=False, pin_latest_user=False
    )
    assert not any(unit.item.pinned for unit in units)
    developer = [{"role": "developer", "content": "rules"}, {"role": "user", "content": "hi"}]
    units = openai.from_messages(developer, counter=COUNTER)
    assert units.units[0].item.kind == ContextKind.SYSTEM_PROMPT
    assert units.units[0].item.pinned


def test_synthetic_timestamps_follow_message_order() -> None:
    units = openai.from_messages(weather_history(), counter=COUNTER)
    stamps = [unit.item.timestamp for unit in units]
    assert stamps[0] == SYNTHETIC_EPOCH + timedelta(seconds=1)
    assert stamps[2] == SYNTHETIC_EPOCH + timedelta(seconds=5)  # the unit's last message
    assert None not in stamps
    assert stamps == sorted(stamps)
    assert len(set(stamps)) == len(stamps)


def test_given_timestamps_are_used_and_checked() -> None:
    base = datetime(2025, 3, 1, 12, tzinfo=UTC)
    stamps = [base + timedelta(minutes=i) for i in range(7)]
    units = openai.from_messages(weather_history(), counter=COUNTER, timestamps=stamps)
    assert units.units[2].item.timestamp == stamps[4]
    with pytest.raises(PipelineConfigError, match="one timestamp per message"):
        openai.from_messages(weather_history(), counter=COUNTER, timestamps=stamps[:3])
    naive = [*stamps[:6], datetime(2025, 3, 1)]
    with pytest.raises(PipelineConfigError, match=r"timestamps\[6\].*timezone-aware"):
        openai.from_messages(weather_history(), counter=COUNTER, timestamps=naive)


def test_results_after_intervening_messages_join_the_unit() -> None:
    messages = [
        {"role": "user", "content": "look it up"},
        {"role": "assistant", "content": None, "tool_calls": [call("a")]},
        {"role": "user", "content": "hurry please"},
        {"role": "assistant", "content": None, "tool_calls": [call("b")]},
        {"role": "tool", "tool_call_id": "a", "content": "A"},
        {"role": "tool", "tool_call_id": "b", "content": "B"},
        {"role": "assistant", "content": "done"},
    ]
    units = openai.from_messages(messages, counter=COUNTER)
    assert [unit.message_indices for unit in units] == [(0,), (1, 2, 3, 4, 5), (6,)]
    # The latest user message sits inside the unit, so the whole unit is pinned.
    assert units.units[1].item.pinned


def test_legacy_function_calls_pair_with_function_messages() -> None:
    messages = [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "get_weather", "arguments": "{}"},
        },
        {"role": "function", "name": "get_weather", "content": "sunny"},
        {"role": "assistant", "content": "It is sunny."},
    ]
    units = openai.from_messages(messages, counter=COUNTER)
    assert [unit.message_indices for unit in units] == [(0,), (1, 2), (3,)]
    orphan = [{"role": "function", "name": "get_weather", "content": "sunny"}]
    with pytest.raises(MessageFormatError, match=r"messages\[0\].*orphaned legacy"):
        openai.from_messages(orphan, counter=COUNTER)


# --------------------------------------------------------------------------- errors


def _with(index: int, **changes: Any) -> list[dict[str, Any]]:
    messages = weather_history()
    messages[index] = {**messages[index], **changes}
    return messages


MALFORMED = [
    ("not a list", "messages: must be a list"),
    ([1], r"messages\[0\]: must be a mapping"),
    ([{"role": "robot", "content": "x"}], r"messages\[0\]\.role: must be one of"),
    ([{"role": "user"}], r"messages\[0\]\.content: must be a string or a list"),
    ([{"role": "user", "content": 5}], r"messages\[0\]\.content: must be a string or a list"),
    ([{"role": "user", "content": [{"text": "x"}]}], r"content\[0\]\.type: must be a string"),
    ([{"role": "user", "content": [{"type": "text"}]}], r"content\[0\]\.text: must be a str"),
    ([{"role": "user", "content": "x", "name": 3}], r"messages\[0\]\.name: must be a string"),
    (_with(2, tool_calls=[{"type": "function"}]), r"messages\[2\]\.tool_calls\[0\]\.id"),
    (_with(2, tool_calls=[{**call("c1"), "type": "x"}]), r"tool_calls\[0\]\.type"),
    (
        _with(2, tool_calls=[call("c1"), {**call("c2"), "function": {"name": "f"}}]),
        r"messages\[2\]\.tool_calls\[1\]\.function\.arguments: must be a string",
    ),
    (_with(2, tool_calls=[call("c1"), call("")]), r"tool_calls\[1\]\.id: must be a non-empty"),
    (_with(3, tool_call_id=None), r"messages\[3\]\.tool_call_id: must be a string"),
    (_with(3, tool_call_id="zz"), r"messages\[3\]\.tool_call_id: .*'zz' does not answer"),
    (_with(4, tool_call_id="c2"), r"messages\[4\]\.tool_call_id: answers tool call 'c2' a second"),
    (
        _with(2, tool_calls=[call("c1"), call("c1")]),
        r"messages\[2\]\.tool_calls\[1\]\.id: tool call id 'c1' is used twice",
    ),
    (_with(2, tool_calls=[call("c1"), call("c2"), call("c3")]), r"tool_calls\[2\]\.id: .*'c3'"),
    (_with(2, tool_calls="c1"), r"messages\[2\]\.tool_calls: must be a list"),
]


@pytest.mark.parametrize(("messages", "pattern"), MALFORMED)
def test_malformed_messages_raise_with_their_location(messages: Any, pattern: str) -> None:
    with pytest.raises(MessageFormatError, match=pattern) as caught:
        openai.from_messages(messages, counter=COUNTER)
    assert caught.value.source == "openai messages"


def test_unanswered_call_message_names_the_rule() -> None:
    messages = _with(2, tool_calls=[call("c1"), call("c2"), call("c3")])
    with pytest.raises(MessageFormatError) as caught:
        openai.from_messages(messages, counter=COUNTER)
    assert caught.value.location == "messages[2].tool_calls[2].id"
    assert "no tool result" in caught.value.detail
    assert "reject unanswered tool calls" in caught.value.detail


def test_size_limits_are_enforced() -> None:
    many = [call(f"c{i}") for i in range(1_001)]
    with pytest.raises(MessageFormatError, match=r"tool_calls: must hold at most 1,000"):
        openai.from_messages(_with(2, tool_calls=many), counter=COUNTER)
    long_id = "x" * 1_025
    with pytest.raises(MessageFormatError, match=r"id: must be at most 1024"):
        openai.from_messages(_with(2, tool_calls=[call(long_id)]), counter=COUNTER)


def test_allow_unanswered_keeps_a_flagged_unit() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("lost")]},
    ]
    units = openai.from_messages(messages, counter=COUNTER, allow_unanswered=True)
    assert units.units[1].unanswered_call_ids == ("lost",)
    assert "unanswered-tool-call" in units.units[1].item.tags


# --------------------------------------------------------------------------- fit_messages


@pytest.mark.parametrize("budget", [150, 400, 1_000, 2_500, 6_000, 100_000])
def test_fit_200_message_history_gives_a_valid_history_within_budget(budget: int) -> None:
    history = openai_history(200)
    snapshot = copy.deepcopy(history)
    fitted, report = openai.fit_messages(history, budget=budget, counter=COUNTER)
    assert_openai_valid(fitted, history)
    assert openai.count_tokens(fitted, counter=COUNTER) <= budget
    assert fitted[-1] is history[-1], "the latest user message is pinned"
    assert history == snapshot
    assert report.total_candidates == len(openai.from_messages(history, counter=COUNTER))
    included = {
        index for entry in report.included for index in entry.item.metadata["message_indices"]
    }
    # Each included unit's messages are in the output, as given or shortened (a tool result
    # kept as a placeholder or truncation: the same keys and ids, another text).
    for index, message in zip(sorted(included), fitted, strict=True):
        assert message is history[index] or shortened_copy(message, history[index])


def test_fit_with_a_roomy_budget_keeps_everything() -> None:
    history = openai_history(200)
    total = openai.count_tokens(history, counter=COUNTER)
    fitted, report = openai.fit_messages(history, budget=total, counter=COUNTER)
    assert fitted == history
    assert report.excluded == ()
    fitted, _ = openai.fit_messages(history, budget=total - 1, counter=COUNTER)
    assert len(fitted) < len(history)


def test_fit_accepts_a_context_budget_with_output_reserve() -> None:
    history = openai_history(200)
    budget = ContextBudget(max_tokens=1_500, target_tokens=1_200, output_reserve=200)
    fitted, _ = openai.fit_messages(history, budget=budget, counter=COUNTER)
    assert_openai_valid(fitted, history)
    assert openai.count_tokens(fitted, counter=COUNTER) <= 1_200


def test_fit_prefers_recent_messages_by_default() -> None:
    history = openai_history(200)
    fitted, _ = openai.fit_messages(history, budget=1_000, counter=COUNTER)
    kept = [index for index, message in enumerate(history) if any(m is message for m in fitted)]
    assert kept[0] == 0  # the system prompt
    assert kept[-1] == 199
    assert max(kept[1:]) - min(kept[1:]) < 199  # older turns went first


def test_pinned_messages_that_do_not_fit_raise() -> None:
    history = weather_history()
    with pytest.raises(PinnedBudgetError) as caught:
        openai.fit_messages(history, budget=10, counter=COUNTER)
    units = openai.from_messages(history, counter=COUNTER)
    pinned = sum(unit.item.tokens for unit in units if unit.item.pinned)
    assert caught.value.available_tokens == 10
    assert caught.value.pinned_tokens == pinned + openai.DEFAULT_OVERHEAD.per_request
    assert pinned == (3 + 4) + (1 + 4)  # "You are terse." and "Thanks!" with their overhead
    assert "require 15 tokens, but only 10 are available" in str(caught.value)


def test_budget_must_cover_the_request_overhead() -> None:
    with pytest.raises(PipelineConfigError, match="budget: must be >= 3"):
        openai.fit_messages(weather_history(), budget=2, counter=COUNTER)
    with pytest.raises(PipelineConfigError, match="budget: must be an integer"):
        openai.fit_messages(weather_history(), budget=10.5, counter=COUNTER)  # type: ignore[arg-type]


def test_identical_short_turns_are_not_deduplicated_by_default() -> None:
    messages = [
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": "Shall I continue?"},
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "bye"},
    ]
    fitted, _ = openai.fit_messages(messages, budget=1_000, counter=COUNTER)
    assert fitted == messages
    fitted, report = openai.fit_messages(messages, budget=1_000, counter=COUNTER, deduplicate=True)
    assert len(fitted) == 4
    assert [type(entry.reason) for entry in report.excluded] == [Deduplicated]


def test_unanswered_calls_raise_or_are_filtered() -> None:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("lost")]},
        {"role": "user", "content": "well?"},
    ]
    with pytest.raises(MessageFormatError, match="lost"):
        openai.fit_messages(messages, budget=1_000, counter=COUNTER)
    fitted, report = openai.fit_messages(
        messages, budget=1_000, counter=COUNTER, unanswered_tool_calls="drop"
    )
    assert fitted == [messages[0], messages[1], messages[3]]
    assert [entry.reason for entry in report.excluded] == [Filtered("unanswered-tool-call")]
    assert report.total_candidates == 4
    with pytest.raises(PipelineConfigError, match="unanswered_tool_calls"):
        openai.fit_messages(
            messages,
            budget=1_000,
            counter=COUNTER,
            unanswered_tool_calls="keep",  # type: ignore[arg-type]
        )


def test_fit_uses_the_heuristic_counter_by_default() -> None:
    history = openai_history(60)
    fitted, _ = openai.fit_messages(history, budget=800)
    assert openai.count_tokens(fitted) <= 800
    assert_openai_valid(fitted, history)
