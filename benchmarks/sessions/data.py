"""The conversations the session benchmark replays: LoCoMo, and generated agent histories.

* **LoCoMo** is read in place from ``../shared/locomo/locomo10.zip`` (or the path in
  ``PYCUPEL_LOCOMO``), encoded as the quality benchmark encodes it: one message per turn,
  ``"Name: text"`` plus ``" [shares CAPTION]"`` for a turn with a ``blip_caption``;
  ``speaker_a`` is ``user`` and ``speaker_b`` is ``assistant``; the first turn of each session
  is prefixed ``"[SESSION DATE] "``; each question is appended as the final user message.
  (The quality benchmark's own loader was not on the main branch when this was written; this
  is a small one following the same rules.)
* **Agent histories** are generated (fixed seeds): a user task every few dozen steps, then
  tool rounds (an assistant ``tool_use`` and the ``tool_result`` answering it, 80-400 tokens
  of log-like output) with planted facts ("the deploy token of service atlas is T-4821")
  in some outputs, and one question per planted fact at the end.

* **Agent histories from other generators**, written apart from the ones above and from each
  other, converted from OpenAI Chat Completions to the Anthropic format (:func:`to_anthropic`:
  the system message left out, each ``tool_calls`` message as ``tool_use`` blocks, each run of
  ``tool`` messages as one user message of ``tool_result`` blocks), a request after every user
  or tool-result message:

  - :func:`histories`: :func:`pycupel.histories.agent_history` (a user request per tool
    call, chat turns between), one question per planted fact ("What is the access code of
    service ...?"), its evidence the tool result holding it;
  - :func:`large_cases`: the mid-size cases of ``benchmarks/quality/agent_large_a.py`` and
    ``agent_large_b.py`` (25-70 tool outputs of 300-4,000 tokens, one fact planted at a
    random depth of one of them, the case's own question last). Recall there is whether the
    fact's needle is in the window's text (a shortened output may still hold it).

Every conversation is in the Anthropic Messages format (the benchmark prices them at
Anthropic's rates).
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT.parent / "shared" / "locomo" / "locomo10.zip"


@dataclass(frozen=True)
class Question:
    text: str
    evidence: tuple[int, ...]  # message positions holding the evidence
    needle: str | None = None  # when set, recall is whether the window's text holds it


@dataclass(frozen=True)
class Conversation:
    name: str
    messages: list[dict[str, Any]]
    turns: tuple[int, ...]  # history lengths at which a request is made
    questions: tuple[Question, ...]


def locomo_path() -> Path:
    return Path(os.environ.get("PYCUPEL_LOCOMO", LOCOMO))


def load_locomo(path: Path | None = None) -> list[Conversation]:
    chosen = path or locomo_path()
    conversations = []
    with zipfile.ZipFile(chosen) as archive:
        for name in sorted(n for n in archive.namelist() if n.endswith(".json")):
            data = json.loads(archive.read(name))
            conversations.append(_locomo_conversation(Path(name).stem, data))
    return conversations


def _locomo_conversation(name: str, data: dict[str, Any]) -> Conversation:
    talk = data.get("conversation", data)
    speaker_a = talk["speaker_a"]
    messages: list[dict[str, Any]] = []
    position_of: dict[str, int] = {}
    number = 1
    while f"session_{number}" in talk:
        session = talk[f"session_{number}"]
        date = talk.get(f"session_{number}_date_time", "")
        for index, turn in enumerate(session):
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            if index == 0 and date:
                text = f"[{date}] {text}"
            role = "user" if turn["speaker"] == speaker_a else "assistant"
            position_of[turn["dia_id"]] = len(messages)
            messages.append({"role": role, "content": text})
        number += 1
    turns = tuple(end for end in range(1, len(messages) + 1) if messages[end - 1]["role"] == "user")
    questions = []
    for qa in data["qa"]:
        evidence = tuple(position_of[e] for e in qa.get("evidence", ()) if e in position_of)
        if evidence and isinstance(qa.get("question"), str):
            questions.append(Question(qa["question"], evidence))
    return Conversation(f"locomo-{name}", messages, turns, tuple(questions))


_SERVICES = ("atlas", "borealis", "cinder", "dynamo", "ember", "fjord", "gale", "harbor")
_WORDS = (
    "request",
    "latency",
    "retry",
    "worker",
    "queue",
    "shard",
    "cache",
    "timeout",
    "replica",
    "commit",
    "build",
    "deploy",
    "metric",
    "span",
    "handler",
    "pool",
    "lease",
    "index",
)


def agent_history(seed: int, steps: int = 340) -> Conversation:
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = []
    turns: list[int] = []
    facts: list[tuple[str, int]] = []
    for step in range(steps):
        if step % 30 == 0:
            alert, where = rng.choice(_WORDS), rng.choice(_SERVICES)
            task = f"Task {step // 30 + 1}: investigate the {alert} alerts on {where}."
            messages.append({"role": "user", "content": task})
            turns.append(len(messages))
        call = f"toolu_{seed}_{step}"
        service = rng.choice(_SERVICES)
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Checking {service} ({step})."},
                    {"type": "tool_use", "id": call, "name": "logs", "input": {"service": service}},
                ],
            }
        )
        lines = [
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {service} "
            + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 12)))
            + f" id={rng.randint(1000, 99999)}"
            for _ in range(rng.randint(6, 30))
        ]
        if rng.random() < 0.08:
            token = f"T-{rng.randint(1000, 9999)}"
            fact_service = f"{service}-{step}"
            lines.insert(
                rng.randrange(len(lines)),
                f"NOTE the deploy token of service {fact_service} is {token}",
            )
            facts.append((fact_service, len(messages)))
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call, "content": "\n".join(lines)}
                ],
            }
        )
        turns.append(len(messages))
    messages.append({"role": "assistant", "content": "All tasks are done."})
    questions = tuple(
        Question(f"What is the deploy token of service {service}?", (position,))
        for service, position in facts
    )
    return Conversation(f"agent-{seed}", messages, tuple(turns), questions)


def to_anthropic(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[int]]:
    """An OpenAI Chat Completions history in the Anthropic format (see the module docs), and
    each OpenAI message's position in it (-1 for the system message left out)."""
    converted: list[dict[str, Any]] = []
    where: list[int] = []
    for message in messages:
        role = message["role"]
        if role in ("system", "developer"):
            where.append(-1)
            continue
        if role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": message["content"] or "",
            }
            last = converted[-1] if converted else None
            if last is not None and last["role"] == "user" and isinstance(last["content"], list):
                last["content"].append(block)
            else:
                converted.append({"role": "user", "content": [block]})
            where.append(len(converted) - 1)
            continue
        calls = message.get("tool_calls") or []
        if role == "assistant" and calls:
            blocks: list[dict[str, Any]] = []
            if message.get("content"):
                blocks.append({"type": "text", "text": message["content"]})
            for call in calls:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": call["function"]["name"],
                        "input": json.loads(call["function"]["arguments"] or "{}"),
                    }
                )
            converted.append({"role": "assistant", "content": blocks})
        else:
            converted.append({"role": role, "content": message.get("content") or "..."})
        where.append(len(converted) - 1)
    return converted, where


def _user_turns(messages: list[dict[str, Any]]) -> tuple[int, ...]:
    return tuple(end for end in range(1, len(messages) + 1) if messages[end - 1]["role"] == "user")


_FACT = re.compile(r"note: the access code of service (\S+) is (\S+)")


def histories(count: int, turns: int = 150) -> list[Conversation]:
    """``count`` histories of :func:`pycupel.histories.agent_history` (seeds 0..count-1)."""
    from pycupel.histories import agent_history as generate

    conversations = []
    for seed in range(count):
        history = generate(turns=turns, seed=seed)
        converted, where = to_anthropic(history.messages[:-1])  # the question comes later
        questions = []
        for index in history.fact_indices:
            match = _FACT.search(history.messages[index]["content"])
            assert match is not None
            service, code = match.groups()
            questions.append(
                Question(f"What is the access code of service {service}?", (where[index],), code)
            )
        if converted[-1]["role"] == "user":
            converted.append({"role": "assistant", "content": "Done."})
        conversations.append(
            Conversation(f"histories-{seed}", converted, _user_turns(converted), tuple(questions))
        )
    return conversations


def large_cases(count: int) -> list[Conversation]:
    """``count`` mid-size cases of each of ``agent_large_a`` and ``agent_large_b``."""
    quality = ROOT / "benchmarks" / "quality"
    if str(quality) not in sys.path:
        sys.path.insert(0, str(quality))
    import agent_large_a
    import agent_large_b

    conversations = []
    for name, module in (("large-a", agent_large_a), ("large-b", agent_large_b)):
        for number, case in enumerate(module.midsize_cases(count)):
            converted, _ = to_anthropic(case.messages[:-1])
            holder = next(
                position
                for position, message in enumerate(converted)
                if case.needle in message_text(message)
            )
            if converted[-1]["role"] == "user":
                converted.append({"role": "assistant", "content": "Done."})
            question = Question(case.question, (holder,), case.needle)
            conversations.append(
                Conversation(f"{name}-{number}", converted, _user_turns(converted), (question,))
            )
    return conversations


def message_text(message: dict[str, Any]) -> str:
    """Every text of a message: its content string, or its blocks' texts, tool inputs and
    tool results."""
    content = message["content"]
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            parts.append(block["text"])
        elif kind == "tool_use":
            parts.append(json.dumps(block["input"], ensure_ascii=False))
        elif kind == "tool_result":
            inner = block.get("content")
            if isinstance(inner, str):
                parts.append(inner)
            elif isinstance(inner, list):
                parts.extend(part.get("text", "") for part in inner)
    return "\n".join(parts)
