"""Synthetic agent histories with planted facts, for tests and benchmarks.

:func:`agent_history` builds a deterministic OpenAI Chat Completions history of an agent at
work: a system prompt, then turns of a user request, an assistant tool call, the tool's
(large, noisy) output and the assistant's short summary, with plain chat turns in between.
Facts ("the access code of service <name> is <code>") are planted in tool outputs, each about
a different service, so a fact can only be found by what names it. The history ends with a
user question about one planted fact, from the oldest or the newest part of the history.

Everything is drawn from ``random.Random(seed)``: the same arguments give the same history.

Example:
    >>> from pycupel.histories import agent_history
    >>> history = agent_history(turns=40, seed=1, ask="old")
    >>> history.messages[-1]["role"], history.fact_index < len(history.messages) // 3
    ('user', True)
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Literal

from pycupel.errors import PipelineConfigError

__all__ = ["AgentHistory", "agent_history"]

_SYLLABLES = (
    *("ka", "lo", "mi", "ra", "ten", "vu", "sor", "pel", "dan", "qui", "zor", "bel", "tam"),
    *("nix", "ro", "fen", "gal", "hup", "yor", "lis", "mar", "tov", "ced", "wen", "pra", "bis"),
)
_TOOLS = ("search_logs", "read_file", "run_query", "fetch_metrics", "list_jobs")
_CHAT = (
    "thanks, that helps",
    "ok, continue with the next step",
    "can you keep going?",
    "looks good so far",
    "great, what next?",
)


@dataclass(frozen=True, slots=True)
class AgentHistory:
    """A generated history and the fact its final question asks about.

    Attributes:
        messages: the OpenAI messages, the question last.
        fact_index: position of the tool message holding the asked fact.
        question: the final question's text.
        answer: the planted value the question asks for.
        fact_indices: positions of every tool message holding a planted fact.
    """

    messages: list[dict[str, Any]]
    fact_index: int
    question: str
    answer: str
    fact_indices: tuple[int, ...]


def agent_history(
    *,
    turns: int = 150,
    seed: int = 0,
    ask: Literal["old", "recent"] = "old",
    facts: int | None = None,
    output_lines: tuple[int, int] = (8, 30),
) -> AgentHistory:
    """A deterministic agent history of ``turns`` turns with ``facts`` planted facts.

    Args:
        turns: number of turns (each 2 to 4 messages; a 150-turn history has ~450 messages).
        seed: the random seed.
        ask: ``"old"`` asks about a fact in the first third of the history, ``"recent"``
            about one in the last sixth.
        facts: how many facts are planted (spread over the history, at least 2); by
            default 12, or ``turns // 3`` for shorter histories.
        output_lines: the range of lines in a tool output (its size).

    Raises:
        PipelineConfigError: fewer than 12 turns, fewer than 2 facts, more facts than turns
            allow, a bad ``ask`` or a bad ``output_lines``.
    """
    if not isinstance(turns, int) or isinstance(turns, bool) or turns < 12:
        raise PipelineConfigError("turns", turns, "must be an integer >= 12")
    if facts is None:
        facts = min(12, turns // 3)
    if not isinstance(facts, int) or isinstance(facts, bool) or not 2 <= facts <= turns // 3:
        raise PipelineConfigError("facts", facts, f"must be an integer in [2, {turns // 3}]")
    if ask not in ("old", "recent"):
        raise PipelineConfigError("ask", ask, "must be 'old' or 'recent'")
    low, high = output_lines
    if not 1 <= low <= high:
        raise PipelineConfigError(
            "output_lines", output_lines, "must be (low, high), 1 <= low <= high"
        )
    rng = random.Random(f"{seed}:{turns}:{ask}:{facts}")
    # Facts go in tool turns spread over the history; one old and one recent are guaranteed.
    old_zone = range(1, turns // 3)
    recent_zone = range(turns - turns // 6, turns - 1)
    fact_turns = {rng.choice(old_zone), rng.choice(recent_zone)}
    while len(fact_turns) < facts:
        fact_turns.add(rng.randrange(1, turns - 1))
    asked_turn = (
        min(fact_turns & set(old_zone)) if ask == "old" else max(fact_turns & set(recent_zone))
    )

    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a careful operations agent. Use the tools."}
    ]
    fact_indices: list[int] = []
    fact_index = -1
    question = answer = ""
    used_names: set[str] = set()
    for turn in range(turns):
        if turn % 5 == 4 and turn not in fact_turns:
            messages.append({"role": "user", "content": rng.choice(_CHAT)})
            messages.append({"role": "assistant", "content": _sentence(rng, 8)})
            continue
        tool = rng.choice(_TOOLS)
        target = _word(rng, 3)
        messages.append(
            {"role": "user", "content": f"Please {tool.replace('_', ' ')} for {target}."}
        )
        call_id = f"call_{turn}"
        arguments = json.dumps({"target": target, "limit": rng.randint(10, 500)})
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": tool, "arguments": arguments},
                    }
                ],
            }
        )
        lines = [_log_line(rng) for _ in range(rng.randint(low, high))]
        if turn in fact_turns:
            name = _unique_name(rng, used_names)
            code = f"{_word(rng, 2).upper()}-{rng.randint(1000, 9999)}"
            lines.insert(
                rng.randrange(len(lines) + 1), f"note: the access code of service {name} is {code}"
            )
            fact_indices.append(len(messages))
            if turn == asked_turn:
                fact_index = len(messages)
                question = f"What is the access code of service {name}?"
                answer = code
        messages.append({"role": "tool", "tool_call_id": call_id, "content": "\n".join(lines)})
        messages.append({"role": "assistant", "content": _sentence(rng, 12)})
    messages.append({"role": "user", "content": question})
    return AgentHistory(messages, fact_index, question, answer, tuple(fact_indices))


def _word(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(syllables))


def _unique_name(rng: random.Random, used: set[str]) -> str:
    while True:
        name = _word(rng, 3)
        if name not in used:
            used.add(name)
            return name


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(_word(rng, rng.randint(1, 3)) for _ in range(words)).capitalize() + "."


def _log_line(rng: random.Random) -> str:
    level = rng.choice(("INFO", "DEBUG", "WARN"))
    clock = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
    return f"{clock} {level} {_sentence(rng, rng.randint(5, 12))}"
