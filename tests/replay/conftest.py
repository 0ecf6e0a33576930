"""Shared fixtures of the replay tests: a small generated corpus and a configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pycupel import presets
from pycupel.replay import ReplayConfig, ReplayPolicy
from pycupel.replay.synthetic import generate_log

pytest.importorskip("pyarrow")


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """24 generated requests (10-60 messages, sessions of 3 turns, OpenAI and Anthropic)."""
    path = tmp_path_factory.mktemp("replay") / "corpus.jsonl"
    generate_log(path, 24, min_messages=10, max_messages=60, session_turns=3, seed=7)
    # Three independent requests (no session) at the end.
    with open(path, "a", encoding="utf-8") as file:
        for number in range(3):
            record = {
                "format": "openai",
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": f"question {number} " * 50},
                    {"role": "assistant", "content": f"answer {number} " * 50},
                    {"role": "user", "content": "and then?"},
                ],
                "evidence": [1],
            }
            file.write(json.dumps(record) + "\n")
    return path


@pytest.fixture(scope="session")
def config() -> ReplayConfig:
    """Two presets, and Chat through the adapters' Session, at a budget that makes most
    requests drop messages."""
    return ReplayConfig(
        policies=(
            ReplayPolicy("chat", presets.chat()),
            ReplayPolicy("tool-use", presets.tool_use()),
            ReplayPolicy("session:chat", presets.chat(), session=True),
        ),
        budget=900,
    )


@pytest.fixture(scope="session")
def local_result(corpus: Path, config: ReplayConfig):  # type: ignore[no-untyped-def]
    """The corpus replayed once on the local engine with two workers."""
    from pycupel.replay import replay_logs

    return replay_logs([str(corpus)], config, workers=2)
