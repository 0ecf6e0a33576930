"""LoCoMo, read in place and encoded as chat histories for the quality benchmark.

The data is LoCoMo's ``locomo10.zip`` (10 long two-person conversations with annotated
questions). It is read from ``../shared/locomo/locomo10.zip`` beside the project, or from the
path in the ``PYCUPEL_LOCOMO`` environment variable; it is never copied into the project.

Encoding (fixed, so that figures compare across runs and projects):

* each turn is one message ``"Name: text"``, plus ``" [shares CAPTION]"`` when the turn has a
  ``blip_caption``;
* ``speaker_a`` is ``user`` and ``speaker_b`` is ``assistant``;
* the first turn of each session is prefixed ``"[SESSION DATE] "`` with the session's
  ``date_time``;
* the question is appended as the final user message.

Evidence recall is the share of a question's evidence turns kept in the fitted history.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "PYCUPEL_LOCOMO"
DEFAULT_PATH = Path(__file__).resolve().parents[2].parent / "shared" / "locomo" / "locomo10.zip"

_DIA_ID = re.compile(r"D\d+:\d+")
_SESSION = re.compile(r"session_(\d+)")


@dataclass(frozen=True, slots=True)
class Conversation:
    """One LoCoMo conversation: its encoded turns (OpenAI messages) and their dia_ids."""

    sample: str
    messages: tuple[dict[str, str], ...]
    dia_ids: tuple[str, ...]
    questions: tuple[Question, ...]


@dataclass(frozen=True, slots=True)
class Question:
    """A question and the positions (in the conversation's messages) of its evidence turns."""

    text: str
    category: int
    evidence: tuple[int, ...]


def locomo_path() -> Path:
    """Where the data is read from (the environment variable wins)."""
    override = os.environ.get(ENV_VAR)
    return Path(override) if override else DEFAULT_PATH


def conversations(path: Path | None = None) -> Iterator[Conversation]:
    """Every conversation of the archive, encoded; only questions whose evidence resolves."""
    archive = path if path is not None else locomo_path()
    with zipfile.ZipFile(archive) as bundle:
        names = sorted(name for name in bundle.namelist() if name.endswith(".json"))
        for name in names:
            yield _encode(Path(name).stem, json.loads(bundle.read(name)))


def _encode(sample: str, data: dict[str, object]) -> Conversation:
    speaker_a = str(data["speaker_a"])
    sessions = sorted(
        (int(match.group(1)), key)
        for key in data
        if (match := _SESSION.fullmatch(key)) is not None and isinstance(data[key], list)
    )
    messages: list[dict[str, str]] = []
    dia_ids: list[str] = []
    for number, key in sessions:
        turns = data[key]
        assert isinstance(turns, list)
        date = data.get(f"session_{number}_date_time")
        for position, turn in enumerate(turns):
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            if position == 0:
                text = f"[{date}] {text}"
            role = "user" if turn["speaker"] == speaker_a else "assistant"
            messages.append({"role": role, "content": text})
            dia_ids.append(str(turn["dia_id"]))
    where = {dia_id: index for index, dia_id in enumerate(dia_ids)}
    questions: list[Question] = []
    qa = data["qa"]
    assert isinstance(qa, list)
    for entry in qa:
        found = sorted(
            {
                where[dia_id]
                for raw in entry.get("evidence", [])
                for dia_id in _DIA_ID.findall(str(raw))
                if dia_id in where
            }
        )
        if found:
            questions.append(Question(str(entry["question"]), int(entry["category"]), tuple(found)))
    return Conversation(sample, tuple(messages), tuple(dia_ids), tuple(questions))
