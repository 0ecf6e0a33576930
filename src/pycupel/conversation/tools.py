"""Tool definitions (a request's ``tools``) as part of the prompt's token count.

Providers render the tool definitions into the prompt, so they take room from the same
window as the messages. The adapters count them once per request: their JSON text (what the
counter counts) plus a fixed cost for the framing the provider adds, and fold that into the
per-request overhead, so ``count_tokens`` includes them and ``fit_messages`` leaves room.

Fixed costs and their sources:

* **OpenAI** (Chat Completions and Responses): 7 tokens per function and 12 for the list, the
  figures of OpenAI's cookbook notebook *How to count tokens with tiktoken* (section on
  function definitions, GPT-4o-class models); the notebook's per-property adjustments are
  covered by counting the JSON text, which is longer than the rendered form.
* **Anthropic**: 346 tokens for the tool-use system prompt, from the *Tool use* pricing table
  (Claude 4 and 3.7 models with ``tool_choice`` ``auto`` or ``none``; ``any``/``tool`` cost
  313, so 346 is the safe figure).
* **Gemini**: no documented framing cost; the JSON text alone is counted.

:class:`ToolSpec` describes a tool pycupel answers itself (the recall tool), for a format's
codec to write in its provider's tool format.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.validate import (
    MAX_PARTS_PER_MESSAGE,
    as_json_text,
    expect_list,
    expect_mapping,
)
from pycupel.tokens import TokenCounter
from pycupel.tokens.base import checked_counts

__all__ = [
    "ANTHROPIC_TOOLS",
    "GEMINI_TOOLS",
    "OPENAI_TOOLS",
    "ToolFraming",
    "ToolSpec",
    "with_tools",
]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool pycupel answers itself, for a codec to write in its provider's format.

    Attributes:
        name: the tool's name.
        description: what the model reads about it.
        parameters: its parameters, as a JSON schema.
        run: answers a call's arguments (a JSON text or a mapping): its text, and whether
            it is an error the model should read as such.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    run: Callable[[object], tuple[str, bool]]


@dataclass(frozen=True, slots=True)
class ToolFraming:
    """Fixed tokens a provider adds around the tool definitions of a request."""

    per_request: int
    per_tool: int


OPENAI_TOOLS = ToolFraming(per_request=12, per_tool=7)
ANTHROPIC_TOOLS = ToolFraming(per_request=346, per_tool=0)
GEMINI_TOOLS = ToolFraming(per_request=0, per_tool=0)


def tools_tokens(
    tools: Sequence[Mapping[str, Any]],
    *,
    source: str,
    counter: TokenCounter,
    framing: ToolFraming,
) -> int:
    """Tokens of a request's tool definitions: their JSON text plus the provider's framing."""
    entries = expect_list(source, "tools", tools, limit=MAX_PARTS_PER_MESSAGE)
    if not entries:
        return 0
    texts = [
        as_json_text(dict(expect_mapping(source, f"tools[{position}]", tool)))
        for position, tool in enumerate(entries)
    ]
    counts = checked_counts(counter, counter.count_batch(texts), len(texts))
    return sum(counts) + framing.per_request + framing.per_tool * len(entries)


def with_tools(
    overhead: MessageOverhead,
    tools: Sequence[Mapping[str, Any]] | None,
    *,
    source: str,
    counter: TokenCounter,
    framing: ToolFraming,
) -> MessageOverhead:
    """``overhead`` with the tools' tokens added to its per-request cost."""
    if tools is None:
        return overhead
    extra = tools_tokens(tools, source=source, counter=counter, framing=framing)
    return dataclasses.replace(overhead, per_request=overhead.per_request + extra)
