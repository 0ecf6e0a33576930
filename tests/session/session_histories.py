"""Conversations for the session tests: generated, deterministic, with planted facts."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parent.parent / "tokens" / "data" / "samples"


@cache
def sample_sentences() -> tuple[str, ...]:
    """Sentences of the project's sample prose and chat texts: realistic message content."""
    sentences = []
    for folder in ("prose", "chat"):
        for path in sorted((SAMPLES / folder).glob("*.txt")):
            text = " ".join(path.read_text(encoding="utf-8").split())
            sentences.extend(part.strip() + "." for part in text.split(". ") if part.strip())
    return tuple(sentences)


TOPICS = (
    "the garden irrigation schedule",
    "a broken bicycle chain",
    "the quarterly budget review",
    "a recipe for lentil soup",
    "the train timetable to Lyon",
    "a flaky integration test",
    "the office seating plan",
    "a podcast about volcanoes",
)


def chat_turns(count: int, *, seed: int = 7) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``count`` (user, assistant) pairs of varied chatter, OpenAI-shaped."""
    rng = random.Random(seed)
    turns = []
    for turn in range(count):
        topic = rng.choice(TOPICS)
        sentences = sample_sentences()
        filler = rng.choice(sentences)
        user = {"role": "user", "content": f"Turn {turn}: what about {topic}? {filler}"}
        body = " ".join(rng.choice(sentences) for _ in range(rng.randint(1, 4)))
        assistant = {"role": "assistant", "content": f"On {topic}: {body}"}
        turns.append((user, assistant))
    return turns


def tool_round(turn: int) -> list[dict[str, Any]]:
    """An assistant tool call and its result (one unit)."""
    call_id = f"call_{turn}"
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "lookup", "arguments": f'{{"turn": {turn}}}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": f"lookup result for turn {turn}"},
    ]
