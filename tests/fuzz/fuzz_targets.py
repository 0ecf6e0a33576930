"""The parsers under fuzz, each as a function of raw bytes, and valid seed documents.

Shared by the hypothesis fuzz tests in this folder and by the atheris harnesses in ``fuzz/``
at the repository root. A target either returns (the input loaded) or raises a
:class:`~pycupel.errors.CupelError`; anything else escaping it is a bug.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pycupel.adapters import anthropic, openai
from pycupel.conformance.vectors import parse_document, parse_vector
from pycupel.diagnostics import SelectionReport
from pycupel.itemio import items_to_json, items_to_jsonl, parse_items
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy
from pycupel.pipeline import Pipeline
from pycupel.policy import dumps_policy, loads_policy
from pycupel.presets import by_name
from pycupel.scorers import PriorityScorer

REPO_ROOT = Path(__file__).resolve().parents[2]
OWN_VECTORS = REPO_ROOT / "tests" / "vectors"
PRESET_NAMES = (
    "chat",
    "code_review",
    "rag",
    "document_qa",
    "tool_use",
    "long_running",
    "debugging",
)


def _json_tree(data: bytes) -> Any:
    """The JSON value of ``data``, or None when it is not JSON (the tree is the real input)."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def policy_json(data: bytes) -> None:
    loads_policy(data, "json")


def policy_toml(data: bytes) -> None:
    loads_policy(data, "toml")


def items(data: bytes) -> None:
    parse_items(data)


def report(data: bytes) -> None:
    SelectionReport.from_json(data)


def vector(data: bytes) -> None:
    parse_vector(parse_document(data, source="<fuzz>"), Path("<fuzz>"))


def messages_openai(data: bytes) -> None:
    tree = _json_tree(data)
    if tree is not None:
        openai.from_messages(tree)


def messages_anthropic(data: bytes) -> None:
    tree = _json_tree(data)
    if isinstance(tree, dict) and set(tree) <= {"system", "messages"}:
        anthropic.from_messages(tree.get("messages"), system=tree.get("system"))
    elif tree is not None:
        anthropic.from_messages(tree)


def candidates_file(data: bytes) -> None:
    """The command line's reader: items or a message history, format detected."""
    from pycupel.cli._input import read_candidates

    handle, path = tempfile.mkstemp(suffix=".json")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        read_candidates(path, "auto")
    finally:
        os.unlink(path)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "policy_json": policy_json,
    "policy_toml": policy_toml,
    "items": items,
    "report": report,
    "vector": vector,
    "messages_openai": messages_openai,
    "messages_anthropic": messages_anthropic,
    "candidates_file": candidates_file,
}


# --------------------------------------------------------------------------- seeds


def sample_items() -> list[ContextItem]:
    moment = datetime(2024, 6, 1, 9, 30, tzinfo=UTC)
    return [
        ContextItem("system prompt", tokens=12, kind="SystemPrompt", pinned=True),
        ContextItem(
            "user: why is the build red?",
            tokens=9,
            priority=3,
            tags=("ci", "build"),
            metadata={"cupel:trust": "0.9", "nested": {"a": [1, 2.5, None, True]}},
            timestamp=moment,
            future_relevance_hint=0.8,
            original_tokens=40,
        ),
        ContextItem("tool output", tokens=30, kind="ToolOutput", source="Tool"),
        ContextItem("tool output", tokens=30, kind="ToolOutput", source="Tool"),
        ContextItem("negative", tokens=-1),
        ContextItem("big document", tokens=400, kind="Document", source="Rag"),
    ]


def sample_report() -> SelectionReport:
    pipeline = Pipeline(
        budget=ContextBudget(max_tokens=100, target_tokens=60),
        scorer=PriorityScorer(),
        overflow_strategy=OverflowStrategy.TRUNCATE,
    )
    return pipeline.dry_run(sample_items()).report


def openai_seed() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": [{"type": "text", "text": "weather?"}], "name": "al"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "rain"},
        {"role": "assistant", "content": "It rains."},
        {"role": "user", "content": "thanks"},
    ]


def anthropic_seed() -> dict[str, Any]:
    return {
        "system": [{"type": "text", "text": "You are terse."}],
        "messages": [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "get_weather",
                        "input": {"city": "Oslo"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": "rain"}],
                    }
                ],
            },
            {"role": "assistant", "content": "It rains."},
            {"role": "user", "content": "thanks"},
        ],
    }


@functools.cache
def seeds(target: str) -> tuple[bytes, ...]:
    """Valid documents for ``target`` (the starting points of mutations); built once, so a
    report seed keeps the same stage durations for the whole session."""
    return tuple(_seeds(target))


def _seeds(target: str) -> list[bytes]:
    if target in ("policy_json", "policy_toml"):
        kind = "json" if target == "policy_json" else "toml"
        return [dumps_policy(by_name(name), kind).encode() for name in PRESET_NAMES]
    if target == "items":
        sample = sample_items()
        return [items_to_json(sample).encode(), items_to_jsonl(sample).encode()]
    if target == "report":
        return [sample_report().to_json(indent=1).encode()]
    if target == "vector":
        return [path.read_bytes() for path in sorted(OWN_VECTORS.rglob("*.toml"))]
    if target == "messages_openai":
        return [json.dumps(openai_seed()).encode()]
    if target == "messages_anthropic":
        return [json.dumps(anthropic_seed()).encode()]
    if target == "candidates_file":
        return [
            json.dumps(openai_seed()).encode(),
            json.dumps(anthropic_seed()).encode(),
            *_seeds("items"),
        ]
    raise KeyError(target)
