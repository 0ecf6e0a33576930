"""The candidates of a command: an items file, or a message history in one of five formats.

``--format`` says which (``items``, ``openai``, ``responses``, ``anthropic``, ``gemini``,
``langchain``); ``auto`` (the default) decides from the document:

0. A JSON array (or an object's ``messages`` array) whose elements are all serialized
   LangChain messages is a **LangChain** history: ``messages_to_dict`` gives
   ``{"type": "human", "data": {...}}`` and ``dumpd`` gives ``{"lc": 1, "type":
   "constructor", "id": [..., "HumanMessage"], "kwargs": {...}}`` (reading it needs
   ``pycupel[langchain]``).

1. A JSON object with a ``contents`` array is a **Gemini** request (``system_instruction`` or
   ``systemInstruction`` beside it); one with an ``input`` (a string or an array) and no
   ``messages`` is an **OpenAI Responses** request (``instructions`` beside it); one with a
   ``messages`` array is a Chat Completions or Anthropic history. A JSON array whose elements
   all have a ``role``, ``parts`` or a Responses item ``type`` and none has ``tokens`` is a
   history too. Anything else is items (a JSON array of item objects, JSON Lines, or a single
   item object).
2. Each provider has features no other one has; a history showing those of exactly one is
   that provider's:

   * **Gemini**: ``parts``, or the role ``model``;
   * **Responses**: items without a role whose ``type`` is a Responses item
     (``function_call``, ``function_call_output``, ``reasoning``, ``message``...), or content
     parts ``input_text``, ``output_text``, ``input_image``, ``input_file``;
   * **Anthropic**: a top-level ``system``, or the blocks ``tool_use``, ``tool_result``,
     ``thinking``, ``redacted_thinking``, ``document``, or an ``image`` with a ``source``;
   * **OpenAI Chat Completions**: the roles ``tool`` and ``function``, the keys
     ``tool_calls``, ``tool_call_id`` and ``function_call``, the parts ``image_url``,
     ``input_audio``, ``file``, ``refusal``; the roles ``system`` and ``developer`` count for
     it too unless the history shows Responses features.
3. Plain ``user``/``assistant`` text is valid in several formats: that, or a history showing
   the signs of more than one, is refused with a message asking for ``--format``.

A message whose role no format takes is refused before any of that, naming each such message
and its role and listing the roles of every format. LangChain's ``human``/``ai`` in role form
(``{"role": "human", ...}``) are among them: the command reads LangChain histories as
``messages_to_dict`` or ``dumpd`` write them, where the type is explicit, and does not guess
which provider's roles a ``human`` turn stands for. A file holding one message object, or
messages one per line, is named as such, as is an empty items array or a history without
messages.

A history object may be a whole request body: only the history and its system prompt are read;
the other fields of a request (``model``, ``max_tokens``, ``tools``...) are ignored. Each unit
of the history (a message, or a tool call with its results) becomes one candidate item, counted
with the adapters' defaults (heuristic token counter, each provider's per-message overhead);
system prompts and the latest user turn are pinned.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import click

from pycupel.errors import InputFormatError, KindNameWarning, MessageFormatError
from pycupel.itemio import build_item, items_error, loads_json, near_misses, parse_items
from pycupel.model import ContextItem

if TYPE_CHECKING:
    from pycupel.adapters import MessageUnits

__all__ = ["FORMATS", "Candidates", "check_json_lines", "detect_format", "read_candidates"]

FORMATS = ("auto", "items", "openai", "responses", "anthropic", "gemini", "langchain")
HISTORY_FORMATS = ("openai", "anthropic", "responses", "gemini", "langchain")

_PROVIDER_NAMES = MappingProxyType(
    {
        "openai": "an OpenAI",
        "anthropic": "an Anthropic",
        "responses": "an OpenAI Responses",
        "gemini": "a Gemini",
        "langchain": "a LangChain",
    }
)
# The classes ``dumpd`` names, and the ``type`` that ``messages_from_dict`` reads for each.
_LANGCHAIN_CLASSES = MappingProxyType(
    {
        "HumanMessage": "human",
        "AIMessage": "ai",
        "SystemMessage": "system",
        "ToolMessage": "tool",
        "ChatMessage": "chat",
        "FunctionMessage": "function",
        "HumanMessageChunk": "HumanMessageChunk",
        "AIMessageChunk": "AIMessageChunk",
        "SystemMessageChunk": "SystemMessageChunk",
        "ToolMessageChunk": "ToolMessageChunk",
        "ChatMessageChunk": "ChatMessageChunk",
        "FunctionMessageChunk": "FunctionMessageChunk",
    }
)
_OPENAI_ROLES = frozenset({"tool", "function"})
_SHARED_OPENAI_ROLES = frozenset({"system", "developer"})
_RESPONSES_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file"})
_RESPONSES_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "computer_call",
        "computer_call_output",
        "shell_call",
        "shell_call_output",
        "apply_patch_call",
        "apply_patch_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "mcp_approval_request",
        "mcp_approval_response",
        "mcp_call",
        "mcp_list_tools",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "item_reference",
    }
)
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
        format: the format read: ``"items"`` or one of :data:`HISTORY_FORMATS`.
        units: for a message history, the adapter's units (to map a selection back to
            messages); None for items.
        history: for a message history, the messages as the format's ``fit_messages``
            takes them (LangChain message objects for ``langchain``; a Responses ``input``
            may be a string); None for items.
        system: the system prompt passed beside the history (Anthropic ``system``,
            Responses ``instructions``, Gemini ``system_instruction``), or None.
    """

    items: list[ContextItem]
    format: str
    units: MessageUnits[Any] | None = None
    history: Any = None
    system: Any = None

    @property
    def is_history(self) -> bool:
        return self.units is not None

    def fitted(self, selected: Sequence[ContextItem]) -> dict[str, Any]:
        """The selected part of the history as the provider's JSON: ``{"messages": [...]}``
        (with ``"system"`` for Anthropic when it was kept), ``{"input": ...}`` (with
        ``"instructions"``) for Responses, ``{"contents": [...]}`` (with
        ``"system_instruction"``) for Gemini, ``{"messages": [...]}`` in ``messages_to_dict``
        form for LangChain. Empty for items."""
        units = self.units
        if units is None:
            return {}
        # The adapters load only for a history (an items file never needs them).
        from pycupel.adapters import anthropic as anthropic_adapter  # noqa: PLC0415
        from pycupel.adapters import gemini as gemini_adapter  # noqa: PLC0415
        from pycupel.adapters import openai as openai_adapter  # noqa: PLC0415
        from pycupel.adapters import responses as responses_adapter  # noqa: PLC0415

        fitted: dict[str, Any] = {}
        if self.format == "openai":
            fitted["messages"] = openai_adapter.to_messages(selected, units)
        elif self.format == "responses":
            responses_history = responses_adapter.to_messages(selected, units)
            if responses_history.instructions is not None:
                fitted["instructions"] = responses_history.instructions
            fitted["input"] = responses_history.input
        elif self.format == "langchain":
            from langchain_core.messages import messages_to_dict  # noqa: PLC0415  (optional)

            from pycupel.adapters import langchain as langchain_adapter  # noqa: PLC0415

            fitted["messages"] = messages_to_dict(langchain_adapter.to_messages(selected, units))
        elif self.format == "gemini":
            gemini_history = gemini_adapter.to_messages(selected, units)
            if gemini_history.system_instruction is not None:
                fitted["system_instruction"] = gemini_history.system_instruction
            fitted["contents"] = gemini_history.contents
        else:
            history = anthropic_adapter.to_messages(selected, units)
            if history.system is not None:
                fitted["system"] = history.system
            fitted["messages"] = history.messages
        return fitted


def read_candidates(path: str, format_name: str = "auto") -> Candidates:
    """Read ``path`` (``-``: standard input) in ``format_name`` (see the module docs).

    An item whose kind or source nearly is a well-known one (``Documnet``) is kept, with a
    ``Warning:`` line on stderr naming the item (the model's own
    :class:`~pycupel.errors.KindNameWarning`, which cannot name it, is silenced here).

    Raises:
        InputFormatError: unreadable input, invalid JSON, an invalid item, or a history whose
            provider cannot be told (``auto``).
        MessageFormatError: a malformed message history.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KindNameWarning)
        return _read_candidates(path, format_name)


def _read_candidates(path: str, format_name: str) -> Candidates:
    source = "<stdin>" if path == "-" else path
    data = _read_bytes(path, source)
    if not data.decode("utf-8", "replace").strip("\ufeff \t\r\n"):
        raise InputFormatError(
            source,
            "",
            "the input is empty: expected items (a JSON array or JSON Lines) or a message history",
        )
    if format_name == "items":
        return _checked(parse_items(data, source=source), source)
    text = _decode(data, source)
    stripped = text.lstrip("\ufeff \t\r\n")
    document: object = None
    if stripped[:1] in ("[", "{"):
        try:
            document = loads_json(stripped, source=source)
        except InputFormatError:
            if format_name != "auto" or stripped[0] == "[":
                raise
            _refuse_message_lines(stripped, source)
            return _checked(parse_items(text, source=source), source)  # JSON Lines
    if format_name == "auto":
        detected = detect_format(document, source=source)
        if detected == "items":
            _refuse_single_message(document, source)
            return _checked(_items_of(document, text, source), source)
        format_name = detected
    history, system = _history_parts(document, format_name, source)
    if isinstance(history, list | str) and not history:
        where = "" if isinstance(document, list) else _HISTORY_KEYS[format_name][0]
        raise InputFormatError(
            source, where, "holds no messages: there is nothing to fit (a history needs one)"
        )
    # The adapters load only for a history (an items file never needs them).
    from pycupel.adapters import anthropic as anthropic_adapter  # noqa: PLC0415
    from pycupel.adapters import gemini as gemini_adapter  # noqa: PLC0415
    from pycupel.adapters import openai as openai_adapter  # noqa: PLC0415
    from pycupel.adapters import responses as responses_adapter  # noqa: PLC0415

    units: MessageUnits[Any]
    if format_name == "openai":
        units = openai_adapter.from_messages(history)
    elif format_name == "responses":
        units = responses_adapter.from_messages(history, instructions=system)
    elif format_name == "gemini":
        units = gemini_adapter.from_messages(history, system_instruction=system)
    elif format_name == "langchain":
        from pycupel.adapters import langchain as langchain_adapter  # noqa: PLC0415

        history = _langchain_messages(history, source)
        units = langchain_adapter.from_messages(history)
    else:
        units = anthropic_adapter.from_messages(history, system=system)
    return Candidates(list(units.items), format_name, units, history, system)


_WHOLE_DOCUMENT_LIMIT = 64 * 1024 * 1024
"""Largest file read whole to tell a pretty-printed JSON document from broken JSON Lines."""


def check_json_lines(path: str | Path, *, record: str) -> None:
    """Refuse a file that is one JSON document spread over several lines (pretty-printed
    JSON, or an array of records) where JSON Lines, one ``record`` per line, is expected.

    Only a file whose first non-blank line is not JSON on its own is examined further; any
    other problem is left to the reader, which names the line.

    Raises:
        InputFormatError: the file is one JSON document over several lines.
    """
    source = str(path)
    try:
        with open(path, "rb") as file:
            first = b""
            for line in file:
                if line.strip():
                    first = line
                    break
            if not first:
                return
            try:
                json.loads(first)
            except (ValueError, RecursionError):
                pass
            else:
                return  # a record on one line: JSON Lines as far as the first line goes
            size = file.seek(0, 2)
            if size > _WHOLE_DOCUMENT_LIMIT:
                return
            file.seek(0)
            data = file.read()
    except OSError:
        return  # the reader reports an unreadable file
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return
    lines = sum(1 for line in data.splitlines() if line.strip())
    if isinstance(document, list) and document and all(map(_is_message, document)):
        # One message list: a single request, pretty-printed.
        what, fix = f"one list of {len(document):,} messages", "jq -c ."
    elif isinstance(document, list):
        what, fix = f"a JSON array of {len(document):,} entries", "jq -c '.[]'"
    else:
        what, fix = "one JSON document", "jq -c ."
    raise InputFormatError(
        source,
        "",
        f"expected JSON Lines, one {record} per line, but the file is {what} spread over "
        f"{lines:,} lines (pretty-printed JSON); write each {record} on a single line "
        f"(for example with {fix})",
    )


def detect_format(document: object, *, source: str = "<input>") -> str:
    """``"items"`` or the history format of a parsed JSON document (see the module docs for
    the rules).

    Raises:
        InputFormatError: a history valid in several formats, or showing signs of several.
    """
    has_system = False
    listed = document.get("messages") if isinstance(document, Mapping) else document
    if isinstance(listed, list) and listed and all(map(_is_langchain_message, listed)):
        return "langchain"
    if isinstance(document, Mapping) and "contents" in document and "messages" not in document:
        return "gemini"
    if isinstance(document, Mapping) and "input" in document and "messages" not in document:
        return "responses"
    if isinstance(document, Mapping) and "messages" in document:
        messages = document["messages"]
        has_system = "system" in document
        if not isinstance(messages, list):
            raise InputFormatError(
                source, "messages", f"must be an array of messages, got {_show(messages)}"
            )
        if not messages:
            raise InputFormatError(
                source,
                "messages",
                "holds no messages: there is nothing to fit (a history needs one)",
            )
    elif isinstance(document, list) and document and _all_messages(document):
        messages = document
    else:
        return "items"
    _refuse_unknown_roles(messages, source)
    signs = _signs(messages)
    if has_system:
        signs.add("anthropic")
    if len(signs) == 1:
        return signs.pop()
    if signs:
        candidates = [name for name in HISTORY_FORMATS if name in signs]
        why = f"it shows signs of {'both' if len(signs) == 2 else 'several'} providers"
    else:
        # Plain text turns: valid for every format keeping roles user/assistant in messages.
        candidates = ["openai", "anthropic", "responses"]
        why = "plain user/assistant messages are valid for both providers and Responses"
    raise InputFormatError(
        source,
        "",
        f"cannot tell the message format ({why}); pass "
        + " or ".join(f"--format {name}" for name in candidates),
    )


_HISTORY_SHAPES = (
    "a message history is a JSON array of messages, or a request object with "
    '"messages" (OpenAI Chat Completions, Anthropic, LangChain), "input" (OpenAI '
    'Responses) or "contents" (Gemini); items are objects with "content" and "tokens"'
)


def _refuse_single_message(document: object, source: str) -> None:
    """Raise when a document read as items is one message object (``{"role": "user",
    "content": "hi"}``): its fields would otherwise be reported as unknown item fields."""
    if _is_message(document) or _is_langchain_message(document) or _is_responses_item(document):
        raise InputFormatError(source, "", f"the file holds a single message; {_HISTORY_SHAPES}")


def _refuse_message_lines(text: str, source: str) -> None:
    """Raise when JSON Lines hold a message on their first line: a history written one
    message per line, which no format takes."""
    first = text.split("\n", 1)[0]
    try:
        record = json.loads(first)
    except (ValueError, RecursionError):
        return  # the items reader names the line
    if _is_message(record) or _is_langchain_message(record) or _is_responses_item(record):
        raise InputFormatError(
            source,
            "line 1",
            f"holds a message, one per line (JSON Lines); {_HISTORY_SHAPES}",
        )


def _is_responses_item(value: object) -> bool:
    """An OpenAI Responses item without a role (a function call, its output, reasoning...)."""
    if not isinstance(value, Mapping):
        return False
    kind = value.get("type")
    return isinstance(kind, str) and kind in _RESPONSES_ITEMS and "tokens" not in value


def _show(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_message(value: object) -> bool:
    """A message of any history format (a ``role`` or Gemini ``parts``), not an item."""
    return (
        isinstance(value, Mapping)
        and "tokens" not in value
        and ("role" in value or "parts" in value)
    )


_ROLES_BY_FORMAT = MappingProxyType(
    {
        "OpenAI Chat Completions": ("system", "developer", "user", "assistant", "tool", "function"),
        "OpenAI Responses": ("system", "developer", "user", "assistant"),
        "Anthropic": ("user", "assistant"),
        "Gemini": ("user", "model"),
    }
)
_KNOWN_ROLES = frozenset(role for roles in _ROLES_BY_FORMAT.values() for role in roles)
_LANGCHAIN_TYPES = frozenset({"human", "ai", "chat", "generic"})
_SHOWN_ROLES = 5


def _refuse_unknown_roles(messages: object, source: str) -> None:
    """Raise when a message has a role no format takes (``human``, ``ai``...), naming each
    such message and its role, and the roles of every format."""
    if not isinstance(messages, list):
        return  # the adapter reports a malformed history
    for index, message in enumerate(messages):
        role = message.get("role", "") if isinstance(message, Mapping) else ""
        if not isinstance(role, str):
            raise InputFormatError(
                source, f"messages[{index}].role", f"must be a string, got {_show(role)}"
            )
    bad = [
        (index, message["role"])
        for index, message in enumerate(messages)
        if isinstance(message, Mapping)
        and isinstance(message.get("role"), str)
        and message["role"] not in _KNOWN_ROLES
    ]
    if not bad:
        return
    named = ", ".join(f"messages[{index}] has role {role!r}" for index, role in bad[:_SHOWN_ROLES])
    if len(bad) > _SHOWN_ROLES:
        named += f" (and {len(bad) - _SHOWN_ROLES} more)"
    accepted = "; ".join(f"{name}: {', '.join(roles)}" for name, roles in _ROLES_BY_FORMAT.items())
    hint = ""
    if any(role in _LANGCHAIN_TYPES for _, role in bad):
        hint = (
            " ('human' and 'ai' are LangChain message types: write a LangChain history with "
            "messages_to_dict or dumpd, or use the roles 'user' and 'assistant')"
        )
    raise InputFormatError(source, "", f"{named}, which no message format takes ({accepted}){hint}")


def _is_langchain_message(value: object) -> bool:
    """A message serialized by LangChain (``messages_to_dict`` or ``dumpd``)."""
    if not isinstance(value, Mapping):
        return False
    if value.get("lc") == 1 and value.get("type") == "constructor":
        return isinstance(value.get("kwargs"), Mapping)
    return set(value) == {"type", "data"} and isinstance(value["data"], Mapping)


def _langchain_messages(history: object, source: str) -> list[Any]:
    """LangChain message objects from their serialized form, naming a bad entry."""
    from pycupel.adapters.langchain import _langchain  # noqa: PLC0415  (optional extra)

    _langchain()  # AdapterUnavailableError without langchain-core
    from langchain_core.messages import messages_from_dict  # noqa: PLC0415

    if not isinstance(history, list):
        raise MessageFormatError(source, "messages", "must be an array of LangChain messages")
    messages = []
    for index, entry in enumerate(history):
        where = f"messages[{index}]"
        if not _is_langchain_message(entry):
            raise MessageFormatError(
                source,
                where,
                'must be a serialized LangChain message: {"type": ..., "data": {...}} '
                '(messages_to_dict) or {"lc": 1, "type": "constructor", ...} (dumpd)',
            )
        if "data" in entry:
            serialized = entry
        else:
            path = entry.get("id")
            name = path[-1] if isinstance(path, list) and path else None
            if not isinstance(name, str) or name not in _LANGCHAIN_CLASSES:
                raise MessageFormatError(
                    source,
                    f"{where}.id",
                    f"names no LangChain message class (one of {', '.join(_LANGCHAIN_CLASSES)})",
                )
            serialized = {"type": _LANGCHAIN_CLASSES[name], "data": dict(entry["kwargs"])}
        try:
            messages.extend(messages_from_dict([serialized]))
        except (ValueError, TypeError, KeyError) as exc:
            detail = " ".join(str(exc).split())
            raise MessageFormatError(
                source, where, f"not a valid LangChain message: {detail}"
            ) from None
    return messages


def _all_messages(values: list[Any]) -> bool:
    return all(
        isinstance(value, Mapping)
        and "tokens" not in value
        and (
            "role" in value
            or "parts" in value
            or (isinstance(value.get("type"), str) and value["type"] in _RESPONSES_ITEMS)
        )
        for value in values
    )


def _signs(messages: object) -> set[str]:
    """The formats whose exclusive features the messages show."""
    signs: set[str] = set()
    shared_openai = False
    if not isinstance(messages, list):
        return signs  # the adapter reports the malformed history
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        # A malformed role or type (an object, an array) is unhashable: only strings are
        # looked up; the adapter reports the malformed value.
        role = message.get("role")
        kind = message.get("type")
        if (isinstance(role, str) and role in _OPENAI_ROLES) or _OPENAI_KEYS & message.keys():
            signs.add("openai")
        if isinstance(role, str) and role in _SHARED_OPENAI_ROLES:
            shared_openai = True
        if role == "model" or "parts" in message:
            signs.add("gemini")
        if isinstance(kind, str) and kind in _RESPONSES_ITEMS:
            signs.add("responses")
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, Mapping):
                continue
            block_kind = block.get("type")
            if not isinstance(block_kind, str):
                continue
            if block_kind in _OPENAI_PARTS:
                signs.add("openai")
            elif block_kind in _RESPONSES_PARTS:
                signs.add("responses")
            elif block_kind in _ANTHROPIC_BLOCKS or (block_kind == "image" and "source" in block):
                signs.add("anthropic")
    if shared_openai and "responses" not in signs:
        signs.add("openai")
    return signs


def _checked(items: list[ContextItem], source: str) -> Candidates:
    """The items, after a warning on stderr for each near-miss kind or source (``Documnet``):
    kinds are open, so a typo would otherwise pass silently."""
    if not items:
        raise InputFormatError(
            source, "", "holds no items (an empty array): there is nothing to select from"
        )
    for warning in near_misses(items):
        click.echo(f"Warning: {source}: {warning}", err=True)
    return Candidates(items, "items")


def _items_of(document: object, text: str, source: str) -> list[ContextItem]:
    if isinstance(document, list):
        # Already parsed: build the items without reading the text a second time.
        built = [build_item(entry, f"items[{index}]") for index, entry in enumerate(document)]
        problems = [problem for _, found in built for problem in found]
        if problems:
            raise items_error(source, problems)
        return [item for item, _ in built if item is not None]
    return parse_items(text, source=source)


_HISTORY_KEYS = MappingProxyType(
    {
        "openai": ("messages", None),
        "anthropic": ("messages", "system"),
        "responses": ("input", "instructions"),
        "gemini": ("contents", "system_instruction"),
        "langchain": ("messages", None),
    }
)


def _history_parts(document: object, provider: str, source: str) -> tuple[Any, Any]:
    """The history (and the system prompt passed beside it) of a history document."""
    if isinstance(document, list):
        return document, None
    key, system_key = _HISTORY_KEYS[provider]
    if isinstance(document, Mapping) and key in document:
        if system_key is None:
            if document.get("system") is not None:
                raise InputFormatError(
                    source,
                    "system",
                    "an OpenAI history has no top-level system prompt (it is a message with "
                    "role 'system'); is this an Anthropic history?",
                )
            return document[key], None
        system = document.get(system_key)
        if system is None and provider == "gemini":
            system = document.get("systemInstruction")
        return document[key], system
    single = "the file holds a single message; " if _is_message(document) else ""
    raise InputFormatError(
        source,
        "",
        f"{single}expected {_PROVIDER_NAMES[provider]} message history: a JSON array of "
        f"messages or an object with {key!r}",
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
