"""Deterministic chat histories and validity checks shared by the adapter tests."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

TOOLS = ("get_weather", "search_docs", "run_sql", "read_file")
WORDS = (
    *("budget", "context", "window", "token", "order", "invoice", "refund", "shipping"),
    *("latency", "cache", "index", "query", "report", "error", "retry", "timeout"),
    *("customer", "account", "region", "deploy", "rollback"),
)


class WordCounter:
    """A tiny deterministic counter (one token per whitespace-separated word)."""

    def count(self, text: str) -> int:
        return len(text.split())

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [len(text.split()) for text in texts]


def sentence(rng: random.Random, low: int = 3, high: int = 30) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


# --------------------------------------------------------------------------- OpenAI


def openai_history(length: int = 200, seed: int = 7) -> list[dict[str, Any]]:
    """A system prompt, then user turns answered by text or by (parallel) tool calls.

    Tool results follow their call; parallel results sometimes arrive in reverse order. The
    history ends with a user message and holds exactly ``length`` messages.
    """
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a support agent."}]
    call_number = 0
    while len(messages) < length - 1:
        room = length - 1 - len(messages)
        user: dict[str, Any] = {"role": "user", "content": sentence(rng)}
        if rng.random() < 0.15:
            user["content"] = [
                {"type": "text", "text": sentence(rng)},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
            ]
        if rng.random() < 0.1:
            user["name"] = "alice"
        messages.append(user)
        room -= 1
        while room >= 3 and rng.random() < 0.5:
            calls = rng.randint(1, min(3, room - 1))
            batch = []
            for _ in range(calls):
                call_number += 1
                batch.append(
                    {
                        "id": f"call_{call_number}",
                        "type": "function",
                        "function": {
                            "name": rng.choice(TOOLS),
                            "arguments": json.dumps({"q": sentence(rng, 1, 4)}),
                        },
                    }
                )
            assistant: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": batch}
            if rng.random() < 0.3:
                assistant["content"] = sentence(rng, 2, 8)
            messages.append(assistant)
            results = [
                {"role": "tool", "tool_call_id": call["id"], "content": sentence(rng, 5, 80)}
                for call in batch
            ]
            if rng.random() < 0.3:
                results.reverse()
            messages.extend(results)
            room -= 1 + calls
        if room >= 2:
            reply: dict[str, Any] = {"role": "assistant", "content": sentence(rng, 5, 60)}
            if rng.random() < 0.1:
                reply["x_trace_id"] = f"trace-{len(messages)}"  # an unknown key, passed through
            messages.append(reply)
    messages.append({"role": "user", "content": "What should I do next?"})
    assert len(messages) == length
    return messages


def assert_openai_valid(output: Sequence[Mapping[str, Any]], original: Sequence[Any]) -> None:
    """The output is an order-preserving subsequence of ``original`` and a valid history."""
    assert_subsequence(output, original)
    if original and original[0]["role"] == "system":
        assert output, "the pinned system prompt must be kept"
        assert output[0] is original[0], "the system prompt must stay first"
    position = 0
    while position < len(output):
        message = output[position]
        assert message["role"] != "tool", f"orphaned tool result at output[{position}]"
        position += 1
        calls = message.get("tool_calls") or []
        if message["role"] == "assistant" and calls:
            expected = {call["id"] for call in calls}
            answered = set()
            while position < len(output) and output[position]["role"] == "tool":
                call_id = output[position]["tool_call_id"]
                assert call_id in expected, f"{call_id} answers a call of another message"
                assert call_id not in answered, f"{call_id} answered twice"
                answered.add(call_id)
                position += 1
            assert answered == expected, f"unanswered calls {expected - answered}"


# --------------------------------------------------------------------------- Anthropic


def anthropic_history(length: int = 60, seed: int = 11) -> list[dict[str, Any]]:
    """Alternating user/assistant messages with tool_use -> tool_result exchanges."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = []
    call_number = 0
    while len(messages) < length - 1:
        room = length - 1 - len(messages)
        messages.append({"role": "user", "content": sentence(rng)})
        room -= 1
        while room >= 3 and rng.random() < 0.5:
            blocks: list[dict[str, Any]] = []
            if rng.random() < 0.5:
                blocks.append({"type": "text", "text": sentence(rng, 2, 6)})
            ids = []
            for _ in range(rng.randint(1, 3)):
                call_number += 1
                ids.append(f"toolu_{call_number:04d}")
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": ids[-1],
                        "name": rng.choice(TOOLS),
                        "input": {"q": sentence(rng, 1, 4)},
                    }
                )
            messages.append({"role": "assistant", "content": blocks})
            results: list[dict[str, Any]] = [
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": [{"type": "text", "text": sentence(rng, 5, 60)}],
                }
                for call_id in ids
            ]
            messages.append({"role": "user", "content": results})
            room -= 2
        if room >= 2:
            messages.append({"role": "assistant", "content": sentence(rng, 5, 50)})
    if messages[-1]["role"] == "user":
        messages.append({"role": "assistant", "content": "Anything else?"})
    messages.append({"role": "user", "content": "Summarise where we are."})
    return messages


def assert_anthropic_valid(
    output: Sequence[Mapping[str, Any]], original: Sequence[Any], *, merged: bool = False
) -> None:
    """Tool results sit in the message right after their tool_use, and nowhere else."""
    if not merged:
        assert_subsequence(output, original)
    for position, message in enumerate(output):
        uses = _block_ids(message, "tool_use", "id")
        results = _block_ids(message, "tool_result", "tool_use_id")
        if results:
            previous = output[position - 1] if position else None
            assert previous is not None, "tool results in the first message"
            assert previous["role"] == "assistant"
            assert set(results) == set(_block_ids(previous, "tool_use", "id")), position
            blocks = message["content"]
            kinds = [block["type"] for block in blocks]
            assert kinds[: len(results)] == ["tool_result"] * len(results), "results first"
        if uses:
            following = output[position + 1] if position + 1 < len(output) else None
            assert following is not None, f"unanswered tool_use at output[{position}]"
            assert set(uses) == set(_block_ids(following, "tool_result", "tool_use_id"))
        if merged and position:
            assert output[position - 1]["role"] != message["role"], "roles must alternate"


def _block_ids(message: Mapping[str, Any], kind: str, key: str) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return []
    return [block[key] for block in content if block["type"] == kind]


# --------------------------------------------------------------------------- shared


def assert_subsequence(output: Sequence[Any], original: Sequence[Any]) -> None:
    """Every output element is an original object (by identity), or a shortened copy of one
    (a tool result kept as a placeholder or truncation: only its text differs), in the
    original order."""
    positions = {id(message): index for index, message in enumerate(original)}
    last = -1
    for position, message in enumerate(output):
        index = positions.get(id(message))
        if index is None:
            index = next(
                (
                    later
                    for later in range(last + 1, len(original))
                    if shortened_copy(message, original[later])
                ),
                None,
            )
        assert index is not None, f"output[{position}] is not an original message"
        assert index > last, f"output[{position}] is out of order"
        last = index


SHORTENED_FIELDS = frozenset({"content", "output", "parts"})
"""The fields a shortened version may change (the text of a message or tool result)."""


def shortened_copy(new: Any, old: Any) -> bool:
    """``new`` is ``old`` with only its text fields changed (same keys, same ids)."""
    if isinstance(new, Mapping) and isinstance(old, Mapping):
        if set(new) != set(old):
            return False
        changed = {key for key in new if new[key] != old[key]}
    elif type(new) is type(old) and hasattr(new, "model_dump"):
        fresh, before = new.model_dump(), old.model_dump()
        changed = {key for key in fresh if fresh[key] != before[key]}
    else:
        return False
    return bool(changed) and changed <= SHORTENED_FIELDS
