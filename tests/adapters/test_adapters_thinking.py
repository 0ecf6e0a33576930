"""Anthropic extended thinking: thinking blocks stay with their turn and its tool loop."""

from __future__ import annotations

from typing import Any

from adapter_histories import WordCounter, assert_anthropic_valid
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.adapters import anthropic
from pycupel.errors import PinnedBudgetError

COUNTER = WordCounter()


def thinking(text: str) -> Any:
    return {"type": "thinking", "thinking": text, "signature": "EqQBCgIYAhIM" * 30}


def redacted() -> Any:
    return {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix" * 50}


def tool_loop(number: int, text: str, *, parallel: int = 1) -> list[Any]:
    uses = [
        {"type": "tool_use", "id": f"t{number}-{k}", "name": "search", "input": {"q": text}}
        for k in range(parallel)
    ]
    results = [
        {"type": "tool_result", "tool_use_id": f"t{number}-{k}", "content": text}
        for k in reversed(range(parallel))
    ]
    return [
        {"role": "assistant", "content": [thinking(f"plan {text}"), redacted(), *uses]},
        {"role": "user", "content": results},
    ]


def test_signatures_and_redacted_data_are_not_counted_as_text() -> None:
    signed = [{"role": "assistant", "content": [thinking("step one"), redacted()]}]
    bare = [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "step one"},
                {"type": "text", "text": "[redacted thinking]"},
            ],
        }
    ]
    assert anthropic.count_tokens(signed, counter=COUNTER) == anthropic.count_tokens(
        bare, counter=COUNTER
    )


def test_merging_keeps_thinking_blocks_first() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "Looking."},
        {"role": "user", "content": "still there?"},
        *tool_loop(1, "alpha", parallel=2),
        {"role": "user", "content": "and?"},
    ]
    units = anthropic.from_messages(messages, counter=COUNTER)
    keep = [units.items[0], units.items[1], units.items[3], units.items[4]]
    merged = anthropic.to_messages(keep, units, merge_consecutive=True).messages
    assistant = merged[1]
    assert [block.get("type") for block in assistant["content"]] == [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
        "tool_use",
    ]


turn = st.one_of(
    st.tuples(st.just("user"), st.sampled_from(["a b", "c", "d e f"])),
    st.tuples(st.just("assistant"), st.sampled_from(["x", "y z"])),
    st.tuples(st.just("loop"), st.sampled_from(["p", "q r"]), st.integers(1, 3)),
)


@settings(max_examples=100, deadline=None)
@given(
    turns=st.lists(turn, max_size=15),
    budget=st.integers(min_value=3, max_value=200),
    merge=st.booleans(),
)
def test_thinking_never_leaves_its_tool_loop(turns: list[Any], budget: int, merge: bool) -> None:
    messages: list[Any] = []
    for number, entry in enumerate(turns):
        if entry[0] == "loop":
            messages.extend(tool_loop(number, entry[1], parallel=entry[2]))
        else:
            messages.append({"role": entry[0], "content": entry[1]})
    try:
        _, fitted, _ = anthropic.fit_messages(
            messages, budget=budget, counter=COUNTER, merge_consecutive=merge
        )
    except PinnedBudgetError:
        return
    assert_anthropic_valid(fitted, messages, merged=merge)
    for message in fitted:
        blocks = message["content"] if isinstance(message["content"], list) else []
        kinds = [block["type"] for block in blocks]
        if "tool_use" in kinds:
            # The turn issuing tools opens with its thinking blocks, untouched.
            assert kinds[:2] == ["thinking", "redacted_thinking"]
            originals = [
                block for m in messages if isinstance(m["content"], list) for block in m["content"]
            ]
            assert all(
                any(block is original for original in originals)
                for block in blocks
                if block["type"] != "text"
            )
    assert anthropic.count_tokens(fitted, counter=COUNTER) <= budget
