"""Sessions with the recall tool: a compaction keeps long tool results as excerpts whose gaps
have refs, the model gets a gap back with ``answer_recall``, and the recall's own answers are
never shortened again. Stores keep the originals beside the state (``BlobRecallStore``)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pycupel.adapters import openai
from pycupel.conversation import Recall
from pycupel.errors import SessionConfigError
from pycupel.session import BlobRecallStore, SQLiteStore

REF = re.compile(r"elided: ref ([0-9a-f]{16}) \.\.\.\]")
SECRET = b"sixteen bytes or more of secret"


def _line(n: int) -> str:
    checksum = hashlib.sha256(str(n).encode()).hexdigest()[:10]
    return f"2026-11-21T10:{n // 60 % 60:02d}:{n % 60:02d}Z INFO step {n} ok checksum {checksum}"


def _history(outputs: int = 4) -> list[dict[str, Any]]:
    """An agent reading long build logs, one per turn, then asked about a warning."""
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are a build agent."}]
    for number in range(outputs):
        lines = [_line(n) for n in range(300)]
        lines[170] = f"2026-11-21T10:45:11Z WARN shard {number}: evicted {1000 + number} keys"
        call = {
            "id": f"c{number}",
            "type": "function",
            "function": {"name": "read_log", "arguments": json.dumps({"build": number})},
        }
        history += [
            {"role": "user", "content": f"Read build {number}'s log."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{number}", "content": "\n".join(lines)},
            {"role": "assistant", "content": f"Build {number} read."},
        ]
    history.append({"role": "user", "content": "Which shards evicted keys?"})
    return history


def _recall_call(ref: str, call_id: str = "r1") -> dict[str, Any]:
    arguments = json.dumps({"ref": ref})
    function = {"name": "recall", "arguments": arguments}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def test_a_sessions_excerpts_have_refs_the_model_can_recall() -> None:
    recall = Recall("build-agent", secret=SECRET, max_tokens=600)
    session = openai.Session(budget=3_000, recall=recall)
    history = _history()
    window = session.fit(history)
    assert window.tokens <= 3_000
    text = str(window.messages)
    refs = REF.findall(text)
    assert refs  # the logs are excerpts, their gaps marked with refs
    assert "evicted 1003 keys" in text  # the newest warning kept in the excerpt
    # The model recalls a gap: the answer holds the elided lines, word for word.
    history.append(_recall_call(refs[0]))
    (answer,) = openai.answer_recall(recall, history[-1])
    assert answer["tool_call_id"] == "r1"
    assert re.search(r"step \d+ ok checksum [0-9a-f]{10}", answer["content"])
    assert answer["content"] not in text
    history.append(answer)
    # The next window keeps the recall's answer whole: it is never cut again.
    after = session.fit(history)
    assert answer["content"] in [m.get("content") for m in after.messages]


def test_a_worker_answers_refs_another_worker_made(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    history = _history()

    def worker() -> tuple[openai.Session, Recall]:
        store = SQLiteStore(path)  # each worker its own connection to the shared file
        recall = Recall("conversation-7", store=BlobRecallStore(store), secret=SECRET)
        session = openai.Session(budget=3_000, store=store, key="conversation-7", recall=recall)
        return session, recall

    first, _ = worker()
    refs = REF.findall(str(first.fit(history).messages))
    assert refs
    second, recall = worker()
    history.append(_recall_call(refs[-1]))
    (answer,) = openai.answer_recall(recall, history[-1])
    assert "Error" not in answer["content"]
    assert re.search(r"step \d+ ok checksum", answer["content"])
    history.append(answer)
    assert answer["content"] in [m.get("content") for m in second.fit(history).messages]
    # Deleting the conversation's key deletes its originals too.
    SQLiteStore(path).delete("conversation-7")
    (gone,) = openai.answer_recall(recall, _recall_call(refs[-1], "r2"))
    assert "is not a ref of this conversation" in gone["content"]


def test_bad_recall_settings_are_refused() -> None:
    with pytest.raises(SessionConfigError, match=r"recall.*must be a pycupel\.conversation"):
        openai.Session(budget=3_000, recall="build-agent")  # type: ignore[arg-type]
    with pytest.raises(SessionConfigError, match=r"recall.*leave shrink= on"):
        openai.Session(budget=3_000, recall=Recall("a"), shrink=False)
    with pytest.raises(SessionConfigError, match=r"store.*must be a pycupel\.session"):
        BlobRecallStore({})  # type: ignore[arg-type]
