"""Current provider caching: OpenAI's explicit ``prompt_cache_breakpoint`` marks (GPT-5.6 and
later), its ``cache_write_tokens``, and Anthropic's server-side ``compaction`` blocks."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from session_histories import chat_turns

from pycupel.adapters import anthropic, openai, responses
from pycupel.analytics import DEFAULT_PRICES, ModelPrice, render_request, replay_cost
from pycupel.errors import MessageFormatError, ProviderUsageError
from pycupel.session import ProviderUsage

MARK = "prompt_cache_breakpoint"


def unmarked(value: Any) -> Any:
    """``value`` with every breakpoint removed, a one-part text list back to its string."""
    if isinstance(value, dict):
        plain = {key: unmarked(item) for key, item in value.items() if key != MARK}
        for key in ("content", "output"):
            parts = plain.get(key)
            if (
                isinstance(parts, list)
                and len(parts) == 1
                and isinstance(parts[0], dict)
                and set(parts[0]) == {"type", "text"}
                and parts[0]["type"] in ("text", "input_text")
            ):
                plain[key] = parts[0]["text"]
        return plain
    if isinstance(value, list):
        return [unmarked(item) for item in value]
    return value


def assert_unchanged(sent: list[Any], history: list[Any]) -> None:
    """Every message of the window is the caller's own object, or a marked copy of one that
    equals it once unmarked."""
    marked = set(marked_positions(sent))
    for position, message in enumerate(sent):
        if position in marked:
            original = unmarked(message)
            assert any(original == own and message is not own for own in history)
        else:
            assert any(message is own for own in history)


def marked_positions(messages: list[Any]) -> list[int]:
    return [position for position, message in enumerate(messages) if MARK in json.dumps(message)]


def openai_history(turns: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [{"role": "system", "content": "You keep careful notes."}]
    for turn, (user, assistant) in enumerate(chat_turns(turns)):
        history.append(user)
        if turn % 3 == 0:
            call = f"call_{turn}"
            history.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call,
                            "type": "function",
                            "function": {"name": "lookup", "arguments": json.dumps({"n": turn})},
                        }
                    ],
                }
            )
            history.append({"role": "tool", "tool_call_id": call, "content": f"row {turn} " * 8})
        history.append(assistant)
    return history


# --------------------------------------------------------------------------- OpenAI marks


def test_openai_session_marks_breakpoints_on_copies_of_markable_messages() -> None:
    full = openai_history(90)
    pristine = copy.deepcopy(full)
    session = openai.Session(budget=1_500, cache_breakpoints=True)
    zoned = 0
    for end in range(2, len(full) + 1):
        if full[end - 1]["role"] not in ("user", "tool"):
            continue
        history = full[:end]
        window = session.fit(history)
        sent = window.messages
        marks = marked_positions(sent)
        assert 1 <= len(marks) <= 3  # within the four writes a request may make
        for position in marks:
            message = sent[position]
            assert message["role"] in ("system", "developer", "user", "tool")
            parts = message["content"]
            assert isinstance(parts, list)
            assert parts[-1][MARK] == {"mode": "explicit"}
            assert all(MARK not in part for part in parts[:-1])
        # The system prompt's end and the request's end are marked.
        assert 0 in marks
        assert marks[-1] == len(sent) - 1
        zoned += bool(window.report.recall_messages)
        # Round trip: the window is valid, and without its marks it is the caller's messages.
        openai.from_messages(sent)
        assert_unchanged(sent, history)
        assert openai.count_tokens(sent) <= 1_500 + 4 * len(marks)  # a part per mark at most
    assert full == pristine  # the caller's objects never change
    assert zoned  # some windows had a recall zone (three marks)


def test_openai_mark_moves_back_from_an_assistant_message() -> None:
    codec = openai.CODEC
    control = openai.BREAKPOINT
    assistant = {"role": "assistant", "content": "Sure."}
    assert codec.cache_mark(assistant, control) is assistant
    legacy = {"role": "function", "name": "f", "content": "x"}
    assert codec.cache_mark(legacy, control) is legacy
    empty = {"role": "user", "content": ""}
    assert codec.cache_mark(empty, control) is empty
    refusal_last = {"role": "user", "content": [{"type": "refusal", "refusal": "no"}]}
    assert codec.cache_mark(refusal_last, control) is refusal_last
    image = {
        "role": "user",
        "content": [
            {"type": "text", "text": "a"},
            {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
        ],
    }
    marked = codec.cache_mark(image, control)
    assert marked["content"][1][MARK] == {"mode": "explicit"}
    assert MARK not in image["content"][1]  # a copy
    tool = {"role": "tool", "tool_call_id": "c", "content": "out"}
    assert codec.cache_mark(tool, control)["content"] == [
        {"type": "text", "text": "out", MARK: {"mode": "explicit"}}
    ]


def test_openai_stable_prefix_mark_skips_the_answer_before_the_latest_turn() -> None:
    # A window whose stable prefix ends with an assistant answer marks the user message
    # before it (assistant output cannot carry a breakpoint).
    history = openai_history(200)
    session = openai.Session(budget=1_200, cache_breakpoints=True, recall_every_turn=True)
    seen = False
    for end in range(2, len(history) + 1):
        if history[end - 1]["role"] != "user":
            continue
        window = session.fit(history[:end])
        stable = window.report.stable_messages
        if window.report.recall_messages and window.messages[stable - 1]["role"] == "assistant":
            marks = marked_positions(window.messages)
            inner = [m for m in marks if 0 < m < len(window.messages) - 1]
            assert inner
            assert all(m < stable - 1 for m in inner)
            seen = True
    assert seen


def test_openai_session_without_breakpoints_marks_nothing() -> None:
    history = openai_history(40)
    window = openai.Session(budget=1_500).fit(history[: len(history) - 1])
    assert not marked_positions(window.messages)
    with pytest.raises(Exception, match="cache_breakpoints"):
        openai.Session(budget=1_500, cache_breakpoints="yes")  # type: ignore[arg-type]


def responses_history(turns: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "developer", "content": "Answer from the records."}]
    for turn, (user, assistant) in enumerate(chat_turns(turns)):
        items.append({"role": "user", "content": user["content"]})
        if turn % 3 == 0:
            call = f"fc_{turn}"
            items.append(
                {"type": "function_call", "call_id": call, "name": "lookup", "arguments": "{}"}
            )
            items.append(
                {"type": "function_call_output", "call_id": call, "output": f"row {turn} " * 8}
            )
        items.append({"role": "assistant", "content": assistant["content"]})
    return items


def test_responses_session_marks_input_parts_and_outputs() -> None:
    full = responses_history(80)
    pristine = copy.deepcopy(full)
    session = responses.Session(budget=1_500, cache_breakpoints=True)
    outputs = 0
    for end in range(2, len(full) + 1):
        last = full[end - 1]
        if last.get("role") != "user" and last.get("type") != "function_call_output":
            continue
        history = full[:end]
        window = session.fit(history, instructions="Be brief.")
        assert window.system == "Be brief."  # instructions cannot carry a breakpoint
        marks = marked_positions(window.messages)
        assert 1 <= len(marks) <= 3
        for position in marks:
            item = window.messages[position]
            key = "output" if item.get("type") == "function_call_output" else "content"
            outputs += key == "output"
            assert item.get("role", "user") in ("developer", "user", "system")
            assert item[key][-1]["type"] == "input_text"
            assert item[key][-1][MARK] == {"mode": "explicit"}
        responses.from_messages(window.messages)
        assert_unchanged(window.messages, history)
    assert full == pristine
    assert outputs


# --------------------------------------------------------------------------- OpenAI usage


def test_openai_usage_reads_cache_write_tokens() -> None:
    chat = {
        "prompt_tokens": 2_000,
        "prompt_tokens_details": {"cached_tokens": 1_200, "cache_write_tokens": 500},
    }
    assert openai.Session(budget=3_000).record_usage if True else None
    from pycupel.session import read_usage

    assert read_usage(chat) == ProviderUsage(2_000, 1_200, 500)
    replies = {
        "input_tokens": 900,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 900},
    }
    assert read_usage(replies) == ProviderUsage(900, 0, 900)
    assert read_usage({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 4}}) == (
        ProviderUsage(10, 4, 0)
    )
    with pytest.raises(ProviderUsageError, match="cache_write_tokens"):
        read_usage(
            {
                "prompt_tokens": 10,
                "prompt_tokens_details": {"cached_tokens": 6, "cache_write_tokens": 6},
            }
        )
    with pytest.raises(ProviderUsageError, match="cache_write_tokens"):
        read_usage({"input_tokens": 10, "input_tokens_details": {"cache_write_tokens": -1}})


def test_session_records_openai_usage_with_writes() -> None:
    session = openai.Session(budget=3_000, cache_breakpoints=True)
    history = openai_history(10)
    window = session.fit(history[:-1])
    usage = session.record_usage(
        {
            "prompt_tokens": window.tokens,
            "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": window.tokens},
        }
    )
    assert usage.cache_write_tokens == window.tokens


# --------------------------------------------------------------------------- prices


def test_gpt_5_6_prices_bill_writes_at_breakpoints() -> None:
    price = DEFAULT_PRICES["gpt-5.6-terra"]
    assert price.cache == "breakpoints"
    assert price.implicit_breakpoint
    assert price.cache_write_per_mtok == pytest.approx(price.input_per_mtok * 1.25)
    assert price.cache_read_per_mtok == pytest.approx(price.input_per_mtok * 0.1)
    history = openai_history(120)
    session = openai.Session(budget=4_000, cache_breakpoints=True)
    windows = []
    for end in range(2, len(history) + 1):
        if history[end - 1]["role"] == "user":
            windows.append(session.fit(history[:end]))
    rendered = [render_request(w.messages, format="openai") for w in windows]
    assert all(r.breakpoints for r in rendered)
    report = replay_cost(rendered, price=price)
    assert report.cache_write_tokens > 0
    assert report.cache_read_tokens > 0
    # Explicit mode: only the marks are written; without marks nothing is cached at all.
    explicit = ModelPrice(
        "explicit", "breakpoints", 2.5, 0.25, 3.125, 1024, 1, implicit_breakpoint=False
    )
    bare = [render_request(w.messages, format="openai") for w in windows]
    bare = [type(r)(r.blocks, r.tokens, r.fixed_tokens, (), r.compacted) for r in bare]
    assert replay_cost(bare, price=explicit).cache_read_tokens == 0
    assert replay_cost(rendered, price=explicit).cache_read_tokens > 0
    # An automatic-style model with a write price bills what it did not read.
    automatic = ModelPrice("auto", "automatic", 1.0, 0.1, 1.25, 1024, 128)
    assert replay_cost(bare, price=automatic).cache_write_tokens > 0
    with pytest.raises(Exception, match="implicit_breakpoint"):
        ModelPrice("x", "breakpoints", 1.0, 0.1, implicit_breakpoint="yes")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- compaction


def compacted_history() -> list[dict[str, Any]]:
    """A conversation the API compacted after its 24th user turn, then went on."""
    history: list[dict[str, Any]] = []
    for turn, (user, assistant) in enumerate(chat_turns(40)):
        history.append({"role": "user", "content": user["content"]})
        if turn == 24:
            history.append(
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "compaction",
                            "content": "Summary: turns 0-24 discussed gardens and budgets.",
                            "encrypted_content": "opaque-bytes",
                        },
                        {"type": "text", "text": assistant["content"]},
                    ],
                }
            )
        else:
            history.append({"role": "assistant", "content": assistant["content"]})
    return history


def compaction_at(history: list[dict[str, Any]]) -> int:
    return max(
        position
        for position, message in enumerate(history)
        if isinstance(message["content"], list)
        and any(block.get("type") == "compaction" for block in message["content"])
    )


def test_fit_messages_reads_the_history_from_the_latest_compaction() -> None:
    history = compacted_history()
    pristine = copy.deepcopy(history)
    start = compaction_at(history)
    after = history[start:]
    # Counted as the API reads it: what comes before the block is not counted.
    assert anthropic.count_tokens(history, system="Be kind.") == anthropic.count_tokens(
        after, system="Be kind."
    )
    units = anthropic.from_messages(history)
    assert min(i for unit in units.units for i in unit.message_indices) == start
    # Room for everything the API reads: the same messages, the caller's own objects.
    roomy = anthropic.fit_messages(history, budget=100_000, system="Be kind.")
    assert roomy.messages == after
    assert all(a is b for a, b in zip(roomy.messages, after, strict=True))
    # A tight budget still opens with the compaction turn (never dropped nor split).
    for budget in (300, 600, 1_000):
        for pin_system in (True, False):
            fitted = anthropic.fit_messages(
                history, budget=budget, system="Be kind.", pin_system=pin_system
            )
            assert fitted.messages[0] is history[start]
            assert any(m is history[-2] for m in fitted.messages)  # the latest user turn
            anthropic.from_messages(fitted.messages, system=fitted.system)  # valid
            assert anthropic.count_tokens(fitted.messages, system=fitted.system) <= budget
    assert history == pristine


def test_the_latest_compaction_block_wins_and_bad_blocks_are_named() -> None:
    history = compacted_history()
    second = [
        *history,
        {"role": "user", "content": "And then?"},
        {"role": "assistant", "content": [{"type": "compaction", "content": None}]},
        {"role": "user", "content": "Go on."},
    ]
    fitted = anthropic.fit_messages(second, budget=10_000)
    assert fitted.messages == second[-2:]  # a failed compaction (no summary) still anchors
    with pytest.raises(MessageFormatError, match="compaction blocks belong in assistant"):
        anthropic.fit_messages(
            [{"role": "user", "content": [{"type": "compaction", "content": "x"}]}], budget=100
        )
    with pytest.raises(MessageFormatError, match=r"content\[0\]\.content"):
        anthropic.fit_messages(
            [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "compaction", "content": 3}]},
            ],
            budget=100,
        )


def test_render_request_prices_what_the_api_reads() -> None:
    history = compacted_history()
    start = compaction_at(history)
    whole = render_request(history, format="anthropic")
    read = render_request(history[start:], format="anthropic")
    assert whole.total_tokens == read.total_tokens
    assert whole.blocks == read.blocks


def test_session_across_a_server_side_compaction() -> None:
    history = compacted_history()
    start = compaction_at(history)
    session = anthropic.Session(budget=1_400)
    seen_shift = False
    previous = None
    for end in range(1, len(history) + 1):
        if history[end - 1]["role"] != "user":
            continue
        window = session.fit(history[:end], system="Be kind.")
        anthropic.from_messages(window.messages, system=window.system)
        assert anthropic.count_tokens(window.messages, system=window.system) <= 1_400
        plain = [
            next(m for m in history[:end] if m == original)
            for original in _without_cache_control(window.messages)
        ]
        positions = [history.index(m) for m in plain]
        if end > start:
            assert min(positions) == start  # opens with the compaction turn
            if not seen_shift:
                assert window.report.cache_break == "provider-compaction"
                assert window.cached_tokens < window.tokens
                seen_shift = True
            elif previous is not None and window.report.cache_break is None:
                # The turns after extend the request: the prefix stays cached.
                assert window.cached_tokens > 0
                assert positions[: len(previous)] == previous
        previous = positions
        session.record_usage({"input_tokens": window.tokens, "cache_read_input_tokens": 0})
    assert seen_shift


def _without_cache_control(messages: list[Any]) -> list[Any]:
    result = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in content]
            if len(blocks) == 1 and set(blocks[0]) == {"type", "text"}:
                result.append({**message, "content": blocks[0]["text"]})
            else:
                result.append({**message, "content": blocks})
        else:
            result.append(message)
    return result


def test_session_started_on_a_compacted_history_reads_from_the_block() -> None:
    history = compacted_history()
    start = compaction_at(history)
    window = anthropic.Session(budget=100_000).fit(history)
    assert _without_cache_control(window.messages) == history[start:]
    # A compaction that paused the turn: no user message after it yet.
    paused = history[: start + 1]
    window = anthropic.Session(budget=100_000).fit(paused)
    assert _without_cache_control(window.messages) == [history[start]]
