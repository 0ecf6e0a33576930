"""Anthropic adapter: system prompt, tool_use/tool_result grouping, API rules, fit_messages."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from adapter_histories import WordCounter, anthropic_history, assert_anthropic_valid

from pycupel import ContextKind
from pycupel.adapters import SYNTHETIC_EPOCH, anthropic
from pycupel.diagnostics import Filtered
from pycupel.errors import MessageFormatError, PinnedBudgetError, PipelineConfigError

COUNTER = WordCounter()
SYSTEM = [{"type": "text", "text": "You are a careful analyst."}]


def tool_use(call_id: str, name: str = "run_sql") -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {"sql": "select 1"}}


def tool_result(call_id: str, text: str = "1 row") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text}


def short_history() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "How many orders today?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Checking."}, tool_use("t1")]},
        {"role": "user", "content": [tool_result("t1", "42 orders")]},
        {"role": "assistant", "content": "42 orders so far."},
        {"role": "user", "content": "And yesterday?"},
    ]


def test_system_prompt_is_a_pinned_unit_beside_the_messages() -> None:
    units = anthropic.from_messages(short_history(), system=SYSTEM, counter=COUNTER)
    first = units.units[0]
    assert first.system_parameter
    assert first.message_indices == ()
    assert first.item.kind == ContextKind.SYSTEM_PROMPT
    assert first.item.pinned
    assert first.item.content == "system: You are a careful analyst."
    assert [unit.message_indices for unit in units.units[1:]] == [(0,), (1, 2), (3,), (4,)]
    assert units.units[2].item.kind == ContextKind.TOOL_OUTPUT
    assert units.units[-1].item.pinned


def test_round_trip_with_and_without_system() -> None:
    history = anthropic_history()
    units = anthropic.from_messages(history, system=SYSTEM, counter=COUNTER)
    system, messages = anthropic.to_messages(units.items, units)
    assert system is SYSTEM
    assert messages == history
    assert all(a is b for a, b in zip(messages, history, strict=True))
    units = anthropic.from_messages(history, counter=COUNTER)
    assert anthropic.to_messages(units.items, units) == (None, history)


def test_tool_result_user_message_is_not_the_latest_user_turn() -> None:
    messages = short_history()[:3]
    units = anthropic.from_messages(messages, counter=COUNTER)
    assert [unit.item.pinned for unit in units] == [True, False]


def test_user_text_after_tool_results_stays_with_them() -> None:
    messages = [
        *short_history()[:2],
        {"role": "user", "content": [tool_result("t1"), {"type": "text", "text": "and now?"}]},
    ]
    units = anthropic.from_messages(messages, counter=COUNTER)
    assert [unit.message_indices for unit in units] == [(0,), (1, 2)]
    assert units.units[1].item.pinned  # it holds the latest user turn


def test_counting_blocks() -> None:
    zero = anthropic.DEFAULT_OVERHEAD
    units = anthropic.from_messages(short_history(), counter=COUNTER)
    # "Checking." (1) + 'run_sql({"sql": "select 1"})' (3) and "42 orders" (2).
    assert units.units[1].item.tokens == 1 + 3 + 2 + 2 * zero.per_message + 2 * zero.per_tool_call
    assert anthropic.count_tokens(short_history(), counter=COUNTER) == units.total_tokens
    image = [
        {
            "role": "user",
            "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png"}},
                {"type": "document", "source": {"type": "text", "data": "four words of text"}},
            ],
        }
    ]
    assert anthropic.count_tokens(image, counter=COUNTER) == (
        1 + 4 + zero.image + zero.per_message + zero.per_request
    )
    pdf = [{"role": "user", "content": [{"type": "document", "source": {"type": "base64"}}]}]
    with pytest.raises(PipelineConfigError, match=r"overhead\.document"):
        anthropic.count_tokens(pdf, counter=COUNTER)


MALFORMED = [
    ([{"role": "system", "content": "x"}], r"messages\[0\]\.role: .*pass the system prompt"),
    ([{"role": "user", "content": None}], r"messages\[0\]\.content: must be a list"),
    (
        [{"role": "user", "content": [tool_use("a")]}],
        r"messages\[0\]\.content\[0\]\.type: tool_use blocks belong in assistant",
    ),
    (
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [tool_use("a")]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b"}]},
        ],
        r"messages\[2\]\.content\[0\]\.tool_use_id: .*'b' does not answer",
    ),
    (
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f"}]},
        ],
        r"messages\[1\]\.content\[0\]\.input: must be a mapping",
    ),
    (
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [tool_use("a")]},
            {"role": "user", "content": [{**tool_result("a"), "is_error": "yes"}]},
        ],
        r"messages\[2\]\.content\[0\]\.is_error: must be a boolean",
    ),
    (
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [tool_use("a")]},
            {"role": "user", "content": [{**tool_result("a"), "content": [tool_result("a")]}]},
        ],
        r"content\[0\]\.content\[0\]\.type: must not be nested",
    ),
    (
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": [tool_use("a")]}],
        r"messages\[1\]\.content\[0\]\.id: tool call 'a' \(run_sql\) has no tool result",
    ),
]


@pytest.mark.parametrize(("messages", "pattern"), MALFORMED)
def test_malformed_messages_raise_with_their_location(messages: Any, pattern: str) -> None:
    with pytest.raises(MessageFormatError, match=pattern):
        anthropic.from_messages(messages, counter=COUNTER)


@pytest.mark.parametrize(
    ("system", "pattern"),
    [
        (5, "system: must be a list"),
        ([{"type": "image"}], r"system\[0\]\.type: must be 'text'"),
        ([{"type": "text"}], r"system\[0\]\.text: must be a string"),
    ],
)
def test_malformed_system_prompts_raise(system: Any, pattern: str) -> None:
    with pytest.raises(MessageFormatError, match=pattern):
        anthropic.from_messages(short_history(), system=system, counter=COUNTER)


@pytest.mark.parametrize("budget", [120, 300, 800, 2_000, 50_000])
def test_fit_gives_a_valid_history_within_budget(budget: int) -> None:
    history = anthropic_history(80)
    snapshot = copy.deepcopy(history)
    system, messages, report = anthropic.fit_messages(
        history, system=SYSTEM, budget=budget, counter=COUNTER
    )
    assert system is SYSTEM
    assert_anthropic_valid(messages, history)
    assert messages[0]["role"] == "user"
    assert messages[-1] is history[-1]
    assert anthropic.count_tokens(messages, system=system, counter=COUNTER) <= budget
    assert history == snapshot
    assert report.total_candidates == len(anthropic.from_messages(history, system=SYSTEM))


def test_leading_assistant_units_are_filtered_when_starting_with_user() -> None:
    history = short_history()
    # Keep room for the last assistant reply but not for the question before it.
    full = anthropic.from_messages(history, counter=COUNTER)
    reply, question = full.units[2].item.tokens, full.units[3].item.tokens
    budget = anthropic.DEFAULT_OVERHEAD.per_request + reply + question
    _, messages, report = anthropic.fit_messages(history, budget=budget, counter=COUNTER)
    assert messages == [history[4]]
    filtered = [entry for entry in report.excluded if isinstance(entry.reason, Filtered)]
    assert [entry.reason.filter_name for entry in filtered] == ["start-with-user"]
    assert filtered[0].item.metadata["message_indices"] == (3,)
    assert all(entry.item is not filtered[0].item for entry in report.included)
    _, messages, _ = anthropic.fit_messages(
        history, budget=budget, counter=COUNTER, start_with_user=False
    )
    assert messages == [history[3], history[4]]


def test_merge_consecutive_gives_strictly_alternating_roles() -> None:
    history = anthropic_history(80)
    for budget in (200, 500, 1_500):
        system, messages, _ = anthropic.fit_messages(
            history, system=SYSTEM, budget=budget, counter=COUNTER, merge_consecutive=True
        )
        assert_anthropic_valid(messages, history, merged=True)
        assert anthropic.count_tokens(messages, system=system, counter=COUNTER) <= budget


def test_merge_consecutive_builds_new_messages_and_keeps_originals() -> None:
    history = [
        {"role": "user", "content": "first"},
        {"role": "user", "content": [{"type": "text", "text": "second"}]},
        {"role": "assistant", "content": "reply"},
    ]
    snapshot = copy.deepcopy(history)
    units = anthropic.from_messages(history, counter=COUNTER)
    _, merged = anthropic.to_messages(units.items, units, merge_consecutive=True)
    assert merged == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        },
        {"role": "assistant", "content": "reply"},
    ]
    assert merged[1] is history[2]
    assert history == snapshot
    extra = [{**history[0], "cache": 1}, history[1]]
    units = anthropic.from_messages(extra, counter=COUNTER)
    with pytest.raises(MessageFormatError, match="cannot merge consecutive user messages"):
        anthropic.to_messages(units.items, units, merge_consecutive=True)


def test_pinned_system_and_question_that_do_not_fit_raise() -> None:
    with pytest.raises(PinnedBudgetError):
        anthropic.fit_messages(short_history(), system=SYSTEM, budget=12, counter=COUNTER)


def test_system_is_none_when_its_unit_is_not_selected() -> None:
    units = anthropic.from_messages(short_history(), system="Be brief.", counter=COUNTER)
    kept = [unit.item for unit in units.units[1:]]
    assert anthropic.to_messages(kept, units).system is None


def test_system_prompt_takes_the_oldest_timestamp() -> None:
    base = datetime(2025, 6, 1, 9, 30, tzinfo=UTC)
    stamps = [base + timedelta(minutes=5 * i) for i in range(5)]
    units = anthropic.from_messages(
        short_history(), system=SYSTEM, counter=COUNTER, timestamps=stamps
    )
    assert units.units[0].item.timestamp == stamps[0]
    assert units.units[2].item.timestamp == stamps[2]
    synthetic = anthropic.from_messages(short_history(), system=SYSTEM, counter=COUNTER)
    assert synthetic.units[0].item.timestamp == SYNTHETIC_EPOCH
    assert synthetic.units[1].item.timestamp == SYNTHETIC_EPOCH + timedelta(seconds=1)
