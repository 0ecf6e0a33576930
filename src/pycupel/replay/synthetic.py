"""Generated replay logs, for trying the engines, the tests and the benchmarks.

Conversations are made of random words from a small vocabulary, with a system prompt, user and
assistant turns and tool calls with their results (about one exchange in four). A session is
one conversation logged at several points: each of its requests is the whole history up to a
user turn, as a chat application sends it. Sessions are interleaved in the log, as traffic is.
Half the requests carry ``evidence`` labels (three message indices). The same seed gives the
same bytes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pycupel._checks import check_int
from pycupel.errors import PipelineConfigError

__all__ = ["generate_log", "generate_requests"]

_WORDS = (
    "build",
    "deploy",
    "error",
    "cache",
    "token",
    "window",
    "model",
    "budget",
    "policy",
    "session",
    "trace",
    "retry",
    "queue",
    "invoice",
    "order",
    "refund",
    "customer",
    "shipment",
    "warehouse",
    "ticket",
    "priority",
    "schedule",
    "weather",
    "report",
    "latency",
    "memory",
    "cluster",
    "worker",
    "batch",
    "region",
    "replica",
    "index",
    "vector",
    "summary",
    "note",
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "for",
    "on",
    "with",
    "that",
    "it",
    "as",
    "be",
    "at",
    "by",
    "this",
    "from",
    "or",
    "an",
)


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(_WORDS, k=words))


def _conversation(rng: random.Random, length: int, fmt: str, tag: str) -> list[dict[str, Any]]:
    """``length`` messages (about) of one conversation in ``fmt``; ends with a user turn."""
    messages: list[dict[str, Any]] = []
    call = 0
    while len(messages) < length - 1:
        messages.append({"role": "user", "content": _text(rng, rng.randint(4, 40))})
        if rng.random() < 0.25:
            call += 1
            call_id = f"call_{tag}_{call}"
            result = _text(rng, rng.randint(20, 160))
            if fmt == "anthropic":
                messages.append(
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "tool_use", "id": call_id, "name": "lookup", "input": {}}
                        ],
                    }
                )
                messages.append(
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": call_id, "content": result}
                        ],
                    }
                )
            else:
                messages.append(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": call_id,
                                "type": "function",
                                "function": {"name": "lookup", "arguments": "{}"},
                            }
                        ],
                    }
                )
                messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        messages.append({"role": "assistant", "content": _text(rng, rng.randint(8, 80))})
    messages.append({"role": "user", "content": _text(rng, rng.randint(4, 30))})
    return messages


def generate_requests(
    requests: int,
    *,
    min_messages: int = 50,
    max_messages: int = 500,
    session_turns: int = 4,
    seed: int = 0,
) -> Iterator[dict[str, Any]]:
    """``requests`` logged requests (records of the replay log schema).

    Each session logs ``session_turns`` requests (the last session may log fewer); request
    sizes are drawn between ``min_messages`` and ``max_messages``. Formats alternate between
    OpenAI and Anthropic by session.
    """
    check_int(PipelineConfigError, "requests", requests, minimum=0)
    check_int(PipelineConfigError, "min_messages", min_messages, minimum=2)
    check_int(PipelineConfigError, "max_messages", max_messages, minimum=min_messages)
    check_int(PipelineConfigError, "session_turns", session_turns, minimum=1)
    rng = random.Random(seed)
    open_sessions: list[Iterator[dict[str, Any]]] = []
    made = 0
    number = 0
    while made < requests:
        # Keep a few sessions open at once so that their requests interleave.
        while len(open_sessions) < 3:
            number += 1
            open_sessions.append(_session(rng, number, min_messages, max_messages, session_turns))
        position = rng.randrange(len(open_sessions))
        record = next(open_sessions[position], None)
        if record is None:
            del open_sessions[position]
            continue
        made += 1
        yield record


def _session(
    rng: random.Random, number: int, min_messages: int, max_messages: int, turns: int
) -> Iterator[dict[str, Any]]:
    fmt = "anthropic" if number % 2 else "openai"
    seed = rng.random()
    local = random.Random(seed)
    sizes = sorted(local.randint(min_messages, max_messages) for _ in range(turns))
    history = _conversation(local, sizes[-1], fmt, str(number))
    system = "You are a helpful operations assistant. " + _text(local, 60)
    user_turns = [
        index
        for index, message in enumerate(history)
        if message["role"] == "user" and isinstance(message["content"], str)
    ]
    for turn, size in enumerate(sizes):
        # The request ends at the last user turn at or before the drawn size.
        end = max((i for i in user_turns if i < size), default=user_turns[0]) + 1
        messages = history[:end]
        record: dict[str, Any] = {
            "format": fmt,
            "session_id": f"s{number}",
            "turn": turn,
            "messages": messages
            if fmt == "anthropic"
            else [
                {"role": "system", "content": system},
                *messages,
            ],
        }
        if fmt == "anthropic":
            record["system"] = system
        if local.random() < 0.5:
            count = len(record["messages"])
            record["evidence"] = sorted({local.randrange(count) for _ in range(min(3, count))})
        yield record


def generate_log(path: str | Path, requests: int, **options: Any) -> int:
    """Write :func:`generate_requests` to ``path`` as JSON Lines; return the bytes written."""
    written = 0
    with open(path, "w", encoding="utf-8") as file:
        for record in generate_requests(requests, **options):
            line = json.dumps(record, separators=(",", ":")) + "\n"
            file.write(line)
            written += len(line.encode("utf-8"))
    return written
