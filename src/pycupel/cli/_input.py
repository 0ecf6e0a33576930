"""The candidates of a command: an items file, or an OpenAI or Anthropic message history.

``--format`` says which; ``auto`` (the default) decides from the document:

1. A JSON array whose elements all have a ``role`` and none has ``tokens``, or a JSON object
   with a ``messages`` array, is a message history. Anything else is items (a JSON array of
   item objects, JSON Lines, or a single item object).
2. A history is **Anthropic** when the object has a ``system`` key, or a message holds an
   Anthropic-only content block (``tool_use``, ``tool_result``, ``thinking``,
   ``redacted_thinking``, ``document``, or an ``image`` with a ``source``).
3. It is **OpenAI** when a message has a role Anthropic does not know (``system``,
   ``developer``, ``tool``, ``function``), a ``tool_calls``, ``tool_call_id`` or
   ``function_call`` key, or an OpenAI-only content part (``image_url``, ``input_audio``,
   ``file``, ``refusal``).
4. Plain ``user``/``assistant`` text is valid in both: that, or a history showing signs of
   both, is refused with a message asking for ``--format openai`` or ``--format anthropic``.

A history object may be a whole request body: only ``messages`` (and Anthropic's ``system``)
are read; the other fields of a request (``model``, ``max_tokens``, ``tools``...) are
ignored. Each unit of the history (a message, or a tool call with its results) becomes one
candidate item, counted with the adapters' defaults (heuristic token counter, each
provider's per-message overhead); system prompts and the latest user turn are pinned.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pycupel.adapters import MessageUnits
from pycupel.adapters import anthropic as anthropic_adapter
from pycupel.adapters import openai as openai_adapter
from pycupel.errors import InputFormatError
from pycupel.itemio import item_from_dict, loads_json, parse_items
from pycupel.model import ContextItem

__all__ = ["FORMATS", "Candidates", "detect_format", "read_candidates"]

FORMATS = ("auto", "items", "openai", "anthropic")

_PROVIDER_NAMES = MappingProxyType({"openai": "an OpenAI", "anthropic": "an Anthropic"})
_OPENAI_ROLES = frozenset({"system", "developer", "tool", "function"})
_OPENAI_KEYS = frozenset({"tool_calls", "tool_call_id", "function_call"})
_OPENAI_PARTS = frozenset({"image_url", "input_audio", "file", "refusal"})
_ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "document"}
)


@dataclass(frozen=True, slots=True)
class Candidates:
    """What a command selects from.

    Attributes:
        items: the candidate items.
        format: the format read: ``"items"``, ``"openai"`` or ``"anthropic"``.
        units: for a message history, the adapter's units (to map a selection back to
            messages); None for items.
    """

    items: list[ContextItem]
    format: str
    units: MessageUnits[Any] | None = None

    @property
    def is_history(self) -> bool:
        return self.units is not None

    def fitted(self, selected: Sequence[ContextItem]) -> dict[str, Any]:
        """The selected part of the history as the provider's JSON: ``{"messages": [...]}``
        (with ``"system"`` for Anthropic when it was kept). Empty for items."""
        units = self.units
        if units is None:
            return {}
        if self.format == "openai":
            return {"messages": openai_adapter.to_messages(selected, units)}
        history = anthropic_adapter.to_messages(selected, units)
        fitted: dict[str, Any] = {}
        if history.system is not None:
            fitted["system"] = history.system
        fitted["messages"] = history.messages
        return fitted


def read_candidates(path: str, format_name: str = "auto") -> Candidates:
    """Read ``path`` (``-``: standard input) in ``format_name`` (see the module docs).

    Raises:
        InputFormatError: unreadable input, invalid JSON, an invalid item, or a history whose
            provider cannot be told (``auto``).
        MessageFormatError: a malformed message history.
    """
    source = "<stdin>" if path == "-" else path
    data = _read_bytes(path, source)
    if format_name == "items":
        return Candidates(parse_items(data, source=source), "items")
    text = _decode(data, source)
    stripped = text.lstrip("\ufeff \t\r\n")
    document: object = None
    if stripped[:1] in ("[", "{"):
        try:
            document = loads_json(stripped, source=source)
        except InputFormatError:
            if format_name != "auto" or stripped[0] == "[":
                raise
            return Candidates(parse_items(text, source=source), "items")  # JSON Lines
    if format_name == "auto":
        detected = detect_format(document, source=source)
        if detected == "items":
            return Candidates(_items_of(document, text, source), "items")
        format_name = detected
    messages, system = _history_parts(document, format_name, source)
    if format_name == "openai":
        openai_units = openai_adapter.from_messages(messages)
        return Candidates(list(openai_units.items), "openai", openai_units)
    anthropic_units = anthropic_adapter.from_messages(messages, system=system)
    return Candidates(list(anthropic_units.items), "anthropic", anthropic_units)


def detect_format(document: object, *, source: str = "<input>") -> str:
    """``"items"``, ``"openai"`` or ``"anthropic"`` for a parsed JSON document (see the module
    docs for the rules).

    Raises:
        InputFormatError: a message history valid for both providers, or showing signs of both.
    """
    if isinstance(document, Mapping) and "messages" in document:
        messages = document["messages"]
        has_system = "system" in document
    elif isinstance(document, list) and document and _all_messages(document):
        messages = document
        has_system = False
    else:
        return "items"
    openai_signs, anthropic_signs = _signs(messages)
    anthropic_signs = anthropic_signs or has_system
    if openai_signs and not anthropic_signs:
        return "openai"
    if anthropic_signs and not openai_signs:
        return "anthropic"
    why = (
        "it shows signs of both providers"
        if openai_signs
        else "plain user/assistant messages are valid for both providers"
    )
    raise InputFormatError(
        source,
        "",
        f"cannot tell OpenAI from Anthropic messages ({why}); pass --format openai or "
        "--format anthropic",
    )


def _all_messages(values: list[Any]) -> bool:
    return all(
        isinstance(value, Mapping) and "role" in value and "tokens" not in value for value in values
    )


def _signs(messages: object) -> tuple[bool, bool]:
    """Whether the messages show OpenAI-only and Anthropic-only features."""
    openai = anthropic = False
    if not isinstance(messages, list):
        return False, False  # the adapter reports the malformed history
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        # A malformed role or type (an object, an array) is unhashable: only strings are
        # looked up; the adapter reports the malformed value.
        role = message.get("role")
        if (isinstance(role, str) and role in _OPENAI_ROLES) or _OPENAI_KEYS & message.keys():
            openai = True
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if not isinstance(kind, str):
                continue
            if kind in _OPENAI_PARTS:
                openai = True
            elif kind in _ANTHROPIC_BLOCKS or (kind == "image" and "source" in block):
                anthropic = True
    return openai, anthropic


def _items_of(document: object, text: str, source: str) -> list[ContextItem]:
    if isinstance(document, list):
        # Already parsed: build the items without reading the text a second time.
        return [
            item_from_dict(entry, source=source, location=f"items[{index}]")
            for index, entry in enumerate(document)
        ]
    return parse_items(text, source=source)


def _history_parts(document: object, provider: str, source: str) -> tuple[Any, Any]:
    """The ``messages`` (and Anthropic's ``system``) of a history document."""
    if isinstance(document, list):
        return document, None
    if isinstance(document, Mapping) and "messages" in document:
        system = document.get("system")
        if provider == "openai" and system is not None:
            raise InputFormatError(
                source,
                "system",
                "an OpenAI history has no top-level system prompt (it is a message with "
                "role 'system'); is this an Anthropic history?",
            )
        return document["messages"], system
    raise InputFormatError(
        source,
        "",
        f"expected {_PROVIDER_NAMES[provider]} message history: a JSON array of messages or "
        "an object with a 'messages' array",
    )


def _read_bytes(path: str, source: str) -> bytes:
    if path == "-":
        stream = sys.stdin
        data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read()
        return data if isinstance(data, bytes) else data.encode("utf-8")
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputFormatError(source, "", f"cannot read file: {exc.strerror or exc}") from exc


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFormatError(
            source, f"byte {exc.start}", f"not UTF-8 text: {exc.reason}"
        ) from exc
