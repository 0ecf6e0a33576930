"""The provider-neutral core: grouping spans, pairing checks, items, overheads."""

from __future__ import annotations

from typing import Any

import pytest
from adapter_histories import WordCounter

from pycupel import ContextKind
from pycupel.adapters import MessageOverhead
from pycupel.conversation.grouping import build_units
from pycupel.conversation.parsed import AnswerRef, CallRef, ParsedMessage
from pycupel.errors import MessageFormatError, PipelineConfigError, TokenizerError


def message(index: int, category: str, text: str = "x", **extra: Any) -> ParsedMessage:
    return ParsedMessage(
        index=index, role=category, category=category, text=text, fixed_tokens=1, **extra
    )  # type: ignore[arg-type]


def calls(*ids: str) -> tuple[CallRef, ...]:
    return tuple(CallRef(call_id, f"at {call_id}", "tool") for call_id in ids)


def answers(*ids: str) -> tuple[AnswerRef, ...]:
    return tuple(AnswerRef(call_id, f"answer {call_id}") for call_id in ids)


def build(parsed: list[ParsedMessage], **options: Any) -> Any:
    settings: dict[str, Any] = {
        "source": "test",
        "counter": WordCounter(),
        "message_count": len(parsed),
        "pin_system": True,
        "pin_latest_user": True,
        "timestamps": None,
        "allow_unanswered": False,
    }
    settings.update(options)
    return build_units(parsed, **settings)


def test_overlapping_spans_merge_into_one_unit() -> None:
    parsed = [
        message(0, "user", user_turn=True),
        message(1, "assistant", calls=calls("a")),
        message(2, "assistant", calls=calls("b")),
        message(3, "tool", answers=answers("a")),
        message(4, "assistant", calls=calls("c")),
        message(5, "tool", answers=answers("b")),
        message(6, "tool", answers=answers("c")),
        message(7, "assistant"),
    ]
    units = build(parsed)
    assert [unit.message_indices for unit in units] == [(0,), (1, 2, 3, 4, 5, 6), (7,)]
    assert units[1].call_ids == ("a", "b", "c")


def test_adjacent_spans_stay_separate() -> None:
    parsed = [
        message(0, "assistant", calls=calls("a")),
        message(1, "tool", answers=answers("a")),
        message(2, "assistant", calls=calls("b")),
        message(3, "tool", answers=answers("b")),
    ]
    assert [unit.message_indices for unit in build(parsed)] == [(0, 1), (2, 3)]


def test_unanswered_calls_are_flagged_only_when_allowed() -> None:
    parsed = [
        message(0, "assistant", calls=calls("a", "b")),
        message(1, "tool", answers=answers("a")),
    ]
    with pytest.raises(MessageFormatError, match="at b: tool call 'b'"):
        build(parsed)
    units = build(parsed, allow_unanswered=True)
    assert [unit.message_indices for unit in units] == [(0, 1)]
    assert units[0].unanswered_call_ids == ("b",)


def test_answer_before_its_call_is_an_orphan() -> None:
    parsed = [message(0, "tool", answers=answers("a")), message(1, "assistant", calls=calls("a"))]
    with pytest.raises(MessageFormatError, match="answer a: tool result for 'a'"):
        build(parsed)


def test_items_carry_kind_pinning_tokens_and_metadata() -> None:
    parsed = [
        message(0, "system", "be kind"),
        message(1, "user", "one two three", user_turn=True),
        message(2, "assistant", "four", calls=calls("a")),
        message(3, "tool", "five six", answers=answers("a")),
        message(4, "user", "seven", user_turn=True),
    ]
    units = build(parsed)
    items = [unit.item for unit in units]
    assert [item.kind for item in items] == [
        ContextKind.SYSTEM_PROMPT,
        ContextKind.MESSAGE,
        ContextKind.TOOL_OUTPUT,
        ContextKind.MESSAGE,
    ]
    assert [item.pinned for item in items] == [True, False, False, True]
    assert [item.tokens for item in items] == [2 + 1, 3 + 1, 1 + 2 + 2, 1 + 1]
    assert items[2].metadata == {"message_indices": (2, 3), "roles": ("assistant", "tool")}
    assert items[2].content == "assistant: four\n\ntool: five six"
    unpinned = build(parsed, pin_system=False, pin_latest_user=False)
    assert not any(unit.item.pinned for unit in unpinned)


def test_counter_must_return_one_count_per_text() -> None:
    class Broken:
        def count_batch(self, texts: Any) -> list[int]:
            return [1]

    with pytest.raises(TokenizerError, match="2 texts"):
        build([message(0, "user"), message(1, "user")], counter=Broken())


@pytest.mark.parametrize(
    ("field", "value"),
    [("per_message", -1), ("image", 1.5), ("audio", -3), ("per_request", True)],
)
def test_overhead_values_are_checked(field: str, value: Any) -> None:
    arguments: dict[str, Any] = {"per_message": 1, field: value}
    with pytest.raises(PipelineConfigError, match=rf"overhead\.{field}"):
        MessageOverhead(**arguments)
