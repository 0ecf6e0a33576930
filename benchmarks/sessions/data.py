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

Both are in the Anthropic Messages format (the benchmark prices them at Anthropic's rates).
"""

from __future__ import annotations

import json
import os
import random
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
