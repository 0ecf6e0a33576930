"""OpenAI Chat Completions messages in, a smaller valid history out.

Input is the ``messages`` list you would send to ``client.chat.completions.create``: mappings
with a ``role`` of ``system``, ``developer``, ``user``, ``assistant``, ``tool`` or the legacy
``function``. Content may be a string, ``None`` (assistant only) or a list of parts (``text``,
``refusal``, ``image_url``, ``input_audio``, ``file``).

* ``system`` and ``developer`` messages become ``SystemPrompt`` items, pinned by default.
* An assistant message with ``tool_calls`` and the ``tool`` messages answering it form one unit
  (kind ``ToolOutput``, source ``Tool``), kept or dropped as a whole. The legacy pair (an
  assistant ``function_call`` and the following ``function`` message) is grouped the same way.
* Every other message is a ``Message`` unit of its own; the latest ``user`` message is pinned
  by default.

Token counting follows OpenAI's published recipe for chat models: the counter counts each
message's text (content, tool-call names and arguments, names) and :data:`DEFAULT_OVERHEAD`
adds 4 tokens per message (3 framing + the role), 1 per ``name``, an estimated 6 per tool call
(the structure around its name and arguments), 3 per request (the reply priming) and 765 per
image (a 1024x1024 image at high detail: 85 + 4 tiles x 170). Audio and files have no fixed
estimate: a history holding them needs ``overhead=MessageOverhead(..., audio=..., document=...)``.
Part types this module does not know are counted as their JSON text, which for text-like
parts over-estimates rather than under-estimates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import Any, Unpack, cast

from pycupel.conversation import api
from pycupel.conversation import recall_tool as recalling
from pycupel.conversation.codec import Codec, rewritten
from pycupel.conversation.fit import FitResult
from pycupel.conversation.media import ImageProvider, data_url_bytes
from pycupel.conversation.media_length import audio_tokens, document_tokens
from pycupel.conversation.options import CountOptions, FitOptions, UnitOptions, documented
from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.parsed import AnswerRef, CallRef, Category, ParsedMessage, ParseState
from pycupel.conversation.recall import Recall
from pycupel.conversation.tools import OPENAI_TOOLS, ToolSpec
from pycupel.conversation.units import MessageUnits
from pycupel.conversation.validate import MAX_TOOL_CALLS_PER_MESSAGE, Shapes, as_json_text
from pycupel.conversation.versions import Replace
from pycupel.model import ContextItem
from pycupel.session.chat import BreakpointSession, ListSession
from pycupel.tokens import TokenCounter
from pycupel.tokens.asynchronous import AsyncTokenCounter

__all__ = [
    "CODEC",
    "DEFAULT_OVERHEAD",
    "FitOptions",
    "FitResult",
    "OpenAICodec",
    "Session",
    "afit_messages",
    "answer_recall",
    "count_tokens",
    "fit_messages",
    "from_messages",
    "recall_tool",
    "to_messages",
]

SOURCE = "openai messages"
SHAPES = Shapes(SOURCE)

# Anthropic content blocks with an OpenAI counterpart elsewhere in the message.
_ANTHROPIC_BLOCKS: Mapping[str, str] = MappingProxyType(
    {
        "tool_result": "tool results as role 'tool' messages",
        "tool_use": "tool calls in the assistant message's tool_calls",
    }
)

DEFAULT_OVERHEAD = MessageOverhead(
    per_message=4, per_name=1, per_tool_call=6, per_request=3, image=765
)
"""Approximates OpenAI's chat format (see the module documentation)."""

OpenAIMessage = Mapping[str, Any]

_CATEGORIES: Mapping[str, Category] = MappingProxyType(
    {
        "system": "system",
        "developer": "system",
        "user": "user",
        "assistant": "assistant",
        "tool": "tool",
        "function": "tool",
    }
)

_PLAIN_ROLES = frozenset({"system", "developer", "user"})


_DOCS: Mapping[str, str] = MappingProxyType(
    {"messages": "the Chat Completions ``messages`` (never modified)."}
)


class OpenAICodec(Codec[OpenAIMessage]):
    """Chat Completions messages to the engine and back (see the module documentation)."""

    provider = "openai"
    source = SOURCE
    default_overhead = DEFAULT_OVERHEAD
    tool_framing = OPENAI_TOOLS

    def parse(
        self, index: int, message: OpenAIMessage, overhead: MessageOverhead, state: ParseState
    ) -> ParsedMessage:
        if type(message) is dict:
            quick = _plain_message(index, message, overhead)
            if quick is not None:
                return quick
        tool_names, legacy_pending = state.tool_names, state.pending
        where = f"messages[{index}]"
        message = SHAPES.mapping(where, message)
        role = SHAPES.role(f"{where}.role", message.get("role"), _CATEGORIES)
        name = SHAPES.optional_text(f"{where}.name", message.get("name"))
        fixed = overhead.per_message + (overhead.per_name if name else 0)

        content = message.get("content")
        if role == "assistant":
            text, media = _content(content, f"{where}.content", overhead, optional=True)
            pieces = [text] if text else []
            refusal = SHAPES.optional_text(f"{where}.refusal", message.get("refusal"))
            if refusal:
                pieces.append(refusal)
            calls = _tool_calls(message, where, tool_names, legacy_pending)
            pieces.extend(f"{call.name}({arguments})" for call, arguments in calls)
            if message.get("audio") is not None:
                SHAPES.mapping(f"{where}.audio", message.get("audio"))
                media += overhead.media_cost("audio", f"{where}.audio")
            fixed += media + overhead.per_tool_call * len(calls)
            refs = [call for call, _ in calls]
            return ParsedMessage.tool_calls(index, role, "\n".join(pieces), fixed, refs, name=name)

        text, media = _content(content, f"{where}.content", overhead)
        if role == "tool":
            call_id = SHAPES.call_id(f"{where}.tool_call_id", message.get("tool_call_id"))
            tool = tool_names.get(call_id)
            answer = AnswerRef(call_id, f"{where}.tool_call_id")
            return ParsedMessage.tool_result(
                index, role, text, fixed + media, answer, tool=tool, name=name
            )
        if role == "function":
            function_name = SHAPES.text(f"{where}.name", name, non_empty=True)
            if not legacy_pending:
                SHAPES.fail(
                    where,
                    "a 'function' message must answer an earlier assistant function_call "
                    "(orphaned legacy function result)",
                )
            call_id = legacy_pending.pop()
            answer = AnswerRef(call_id, where)
            return ParsedMessage.tool_result(
                index, role, text, fixed + media, answer, tool=function_name, name=function_name
            )
        category = _CATEGORIES[role]
        return ParsedMessage.of_text(
            index, role, category, text, fixed + media, user_turn=role == "user", name=name
        )

    def rewrite(
        self, messages: Sequence[OpenAIMessage], replace: Replace, overhead: MessageOverhead
    ) -> list[OpenAIMessage] | None:
        """The unit's messages with their tool results (and plain string contents) replaced as
        ``replace`` says; ``tool_call_id``, ``name`` and every other key are kept."""
        names: dict[str, str] = {}
        for message in messages:
            for call in message.get("tool_calls") or ():
                body = call.get("function") or call.get("custom") or {}
                names[call["id"]] = body.get("name", "")

        def rewrite(position: int, message: OpenAIMessage) -> OpenAIMessage | None:
            role = message["role"]
            content = message.get("content")
            if role in ("tool", "function"):
                text, _ = _content(content, f"messages[{position}].content", overhead)
                tool = names.get(message.get("tool_call_id", ""), "") if role == "tool" else None
                new_text = replace(tool if tool is not None else message.get("name", ""), text)
            elif role in ("user", "assistant") and isinstance(content, str) and content:
                new_text = replace(None, content)
            else:
                return None
            return None if new_text is None else {**message, "content": new_text}

        return rewritten(messages, rewrite)

    def unnarrated(self, messages: Sequence[OpenAIMessage]) -> list[OpenAIMessage] | None:
        """The unit's messages with the ``content`` of an assistant message that has
        ``tool_calls`` set to ``None`` (the calls kept)."""

        def rewrite(_: int, message: OpenAIMessage) -> OpenAIMessage | None:
            narrated = message.get("tool_calls") and message.get("content")
            if message["role"] == "assistant" and narrated:
                return {**message, "content": None}
            return None

        return rewritten(messages, rewrite)

    def summary_message(self, text: str) -> OpenAIMessage:
        return {"role": "user", "content": text}

    def tool_definition(self, tool: ToolSpec) -> dict[str, Any]:
        function = {"name": tool.name, "description": tool.description}
        return {"type": "function", "function": {**function, "parameters": tool.parameters}}

    def tool_answer(self, call: CallRef, text: str, *, error: bool) -> OpenAIMessage:
        return {"role": "tool", "tool_call_id": call.call_id, "content": text}

    def is_system(self, message: OpenAIMessage) -> bool:
        return message.get("role") in ("system", "developer")

    def cache_mark(self, message: OpenAIMessage, control: object) -> OpenAIMessage:
        """A copy of ``message`` whose last content part carries ``prompt_cache_breakpoint``
        (a string content becomes one ``text`` part); ``message`` itself when it cannot carry
        one (an assistant or legacy ``function`` message, an empty content, a last part of
        a type OpenAI does not mark)."""
        if message.get("role") not in _MARKABLE_ROLES:
            return message
        return mark_last_part(message, "content", control, _MARKABLE_PARTS, "text")


_MARKABLE_ROLES = frozenset({"system", "developer", "user", "tool"})
"""Roles whose content parts accept ``prompt_cache_breakpoint`` (assistant output does not)."""
_MARKABLE_PARTS = frozenset({"text", "image_url", "input_audio", "file"})
"""Content parts that accept ``prompt_cache_breakpoint``."""
BREAKPOINT: Mapping[str, str] = MappingProxyType({"mode": "explicit"})
"""The ``prompt_cache_breakpoint`` a session marks (OpenAI's only mode)."""


CODEC = OpenAICodec()
"""The codec of this module's functions."""


def mark_last_part(
    message: Mapping[str, Any], key: str, control: object, markable: frozenset[str], text: str
) -> Mapping[str, Any]:
    """A copy of ``message`` whose last part under ``key`` carries the
    ``prompt_cache_breakpoint`` ``control`` (a string becomes one part of type ``text``);
    ``message`` itself when that value is empty or its last part's type is not ``markable``
    (Chat Completions content, Responses content and tool outputs)."""
    mark = dict(cast("Mapping[str, Any]", control))  # each mark a dict of its own
    value = message.get(key)
    if isinstance(value, str) and value:
        return {**message, key: [{"type": text, "text": value, "prompt_cache_breakpoint": mark}]}
    if not isinstance(value, list | tuple) or not value:
        return message
    last = value[-1]
    if not isinstance(last, Mapping) or last.get("type") not in markable:
        return message
    return {**message, key: [*value[:-1], {**last, "prompt_cache_breakpoint": mark}]}


@documented(UnitOptions, docs=_DOCS)
def from_messages(
    messages: Sequence[OpenAIMessage], **options: Unpack[UnitOptions]
) -> MessageUnits[OpenAIMessage]:
    """Split an OpenAI chat history into units, one candidate item per unit.

    ``system`` and ``developer`` messages become pinned ``SystemPrompt`` units; an assistant
    message with tool calls and the ``tool`` messages answering it are one unit.

    Returns:
        The units; ``.items`` are the candidates for a pipeline and :func:`to_messages` maps a
        selection of them back to messages.
    """
    return api.read_units(CODEC, messages, None, options)


def to_messages(
    selection: Iterable[ContextItem], units: MessageUnits[OpenAIMessage]
) -> list[OpenAIMessage]:
    """The messages of the selected units, in the original order.

    The list is new; its elements are your original message objects, untouched (unknown
    keys included). Copy them before mutating. ``to_messages(units.items, units)`` gives back
    the whole history.
    """
    return api.selected(CODEC, selection, units)[1]


@documented(CountOptions, docs=_DOCS)
def count_tokens(
    messages: Sequence[OpenAIMessage],
    **options: Unpack[CountOptions],
) -> int:
    """Tokens of a whole request's messages, counted exactly as :func:`fit_messages` does.

    The per-request overhead is included, so ``count_tokens(fitted) <= budget`` holds for the
    output of :func:`fit_messages` with the same counter and overhead.
    """
    return api.count(CODEC, messages, None, options)


@recalling.tool_documented
def recall_tool(recall: Recall) -> dict[str, Any]:
    """The recall tool's definition, for a request's ``tools``."""
    return cast(dict[str, Any], recalling.recall_tool(CODEC, recall))


@recalling.answers_documented
def answer_recall(
    recall: Recall, message: OpenAIMessage | Sequence[OpenAIMessage]
) -> list[OpenAIMessage]:
    """The ``tool`` messages answering the recall calls of an assistant message (or of a
    list of messages), to append after it."""
    return cast(list[OpenAIMessage], recalling.answer_recall(CODEC, recall, message))


@documented(FitOptions, docs=_DOCS)
def fit_messages(
    messages: Sequence[OpenAIMessage],
    *,
    counter: TokenCounter | None = None,
    **options: Unpack[FitOptions],
) -> FitResult[OpenAIMessage]:
    """Fit an OpenAI chat history into a token budget; return the history and the report.

    Returns:
        ``FitResult(messages, report)``: the kept messages in the original order (a
        shortened message is a new dict with the same keys and ids), and the
        pipeline's :class:`~pycupel.diagnostics.SelectionReport` (a shortened unit is
        reported by its version's item; :func:`pycupel.conversation.variant_name` names it).
    """
    fitting = api.fit(CODEC, messages, None, counter, options)
    return FitResult(fitting.messages, fitting.report)


@documented(FitOptions, docs=_DOCS)
async def afit_messages(
    messages: Sequence[OpenAIMessage], *, counter: AsyncTokenCounter, **options: Unpack[FitOptions]
) -> FitResult[OpenAIMessage]:
    """:func:`fit_messages` with an asynchronous token counter (e.g. a wrapped count-tokens
    endpoint): every distinct text is counted in one awaited ``count_batch`` call, and a
    coroutine ``summarize`` callback is awaited (called once, with what the fit drops)."""
    fitting = await api.afit(CODEC, messages, None, counter, options)
    return FitResult(fitting.messages, fitting.report)


# --------------------------------------------------------------------------- sessions


class Session(ListSession[OpenAIMessage], BreakpointSession[OpenAIMessage]):
    """One conversation, fitted turn after turn into a cache-stable window.

    Call :meth:`fit` every turn with the whole history so far (the same list grown, or a new
    list with the same leading messages) and send ``window.messages``; then pass the
    response's ``usage`` to :meth:`record_usage` so that the token estimate follows what
    OpenAI counts. Between compactions each request extends the previous one message for
    message, which is what OpenAI's automatic prompt caching (prompts of 1,024 tokens and
    more) needs. Pass a stable ``prompt_cache_key`` (one per conversation, or per shared
    system prompt) with the request so that requests of one conversation reach the same
    cache.

    Models of the GPT-5.6 family and later match cached prefixes at breakpoints and bill
    cache writes: with ``cache_breakpoints=True`` the window carries explicit
    ``prompt_cache_breakpoint`` marks (at most three of the four a request may write) at the
    end of the leading system messages, of the stable prefix (before the recall zone) and of
    the request, each on the last content part of the nearest system, developer, user or
    tool message at or before that point (assistant output cannot carry one). A string
    content becomes a one-part list on a copy; your objects are never modified. With
    ``prompt_cache_options={"mode": "explicit"}`` only those marks are written.

    See :mod:`pycupel.session.core` for the window's zones, compaction and recall. A session
    holds one conversation; its methods hold a lock, so sharing it between threads is safe
    but interleaving two conversations in it makes every turn an edit.
    """

    __slots__ = ()

    explicit_breakpoint = BREAKPOINT

    def _codec(self) -> OpenAICodec:
        return CODEC


# --------------------------------------------------------------------------- parsing


def _plain_message(
    index: int, message: dict[str, Any], overhead: MessageOverhead
) -> ParsedMessage | None:
    """The parse of the most common message, or None to take the full path.

    A message whose ``content`` is a string and that has no ``name``, no tool calls and no
    refusal or audio is valid as soon as its role is a ``system``, ``developer``, ``user`` or
    ``assistant`` role; it gives the same result as the full path, without building locations.
    """
    content = message.get("content")
    role = message.get("role")
    if type(content) is not str or type(role) is not str:
        return None
    # Two keys, role and content, need no further look; otherwise the optional keys must
    # be absent (None).
    plain = len(message) == 2
    if not plain and message.get("name") is not None:
        return None
    if role in _PLAIN_ROLES:
        return ParsedMessage.of_text(
            index, role, _CATEGORIES[role], content, overhead.per_message, user_turn=role == "user"
        )
    if role == "assistant" and (
        plain
        or (
            message.get("tool_calls") is None
            and message.get("function_call") is None
            and message.get("refusal") is None
            and message.get("audio") is None
        )
    ):
        return ParsedMessage.of_text(index, role, "assistant", content, overhead.per_message)
    return None


def _tool_calls(
    message: Mapping[str, Any], where: str, tool_names: dict[str, str], legacy_pending: list[str]
) -> list[tuple[CallRef, str]]:
    """The calls an assistant message issues, each with its rendered arguments."""
    calls: list[tuple[CallRef, str]] = []
    raw_calls = message.get("tool_calls")
    if raw_calls is not None:
        entries = SHAPES.sequence(
            f"{where}.tool_calls", raw_calls, limit=MAX_TOOL_CALLS_PER_MESSAGE
        )
        for position, raw in enumerate(entries):
            at = f"{where}.tool_calls[{position}]"
            call = SHAPES.mapping(at, raw)
            call_id = SHAPES.call_id(f"{at}.id", call.get("id"))
            kind = call.get("type")
            if kind == "function":
                body = SHAPES.mapping(f"{at}.function", call.get("function"))
                arguments = SHAPES.text(f"{at}.function.arguments", body.get("arguments"))
                name_at = f"{at}.function.name"
            elif kind == "custom":
                body = SHAPES.mapping(f"{at}.custom", call.get("custom"))
                arguments = SHAPES.text(f"{at}.custom.input", body.get("input"))
                name_at = f"{at}.custom.name"
            else:
                SHAPES.fail(f"{at}.type", "must be 'function' or 'custom'", kind)
            name = SHAPES.text(name_at, body.get("name"), non_empty=True)
            tool_names[call_id] = name
            calls.append((CallRef(call_id, f"{at}.id", name, arguments), arguments))
    legacy = message.get("function_call")
    if legacy is not None:
        at = f"{where}.function_call"
        body = SHAPES.mapping(at, legacy)
        name = SHAPES.text(f"{at}.name", body.get("name"), non_empty=True)
        arguments = SHAPES.text(f"{at}.arguments", body.get("arguments"))
        # Legacy calls have no id: the next 'function' message answers the latest open one.
        call_id = f"<function_call at {where}>"
        legacy_pending.append(call_id)
        calls.append((CallRef(call_id, at, name, arguments), arguments))
    return calls


def _content(
    content: object, where: str, overhead: MessageOverhead, *, optional: bool = False
) -> tuple[str, int]:
    """The visible text of a content value and the fixed cost of its media parts."""
    if content is None and optional:
        return "", 0
    if not isinstance(content, str | list | tuple):
        SHAPES.fail(where, "must be a string or a list of content parts", content)
    return SHAPES.parts(where, content, partial(_part, overhead=overhead))


def _part(
    kind: str, part: Mapping[str, Any], at: str, overhead: MessageOverhead
) -> tuple[str, int]:
    """The visible text and the media tokens of one content part."""
    if kind in ("text", "refusal"):
        return SHAPES.text(f"{at}.{kind}", part.get(kind)), 0
    if kind == "image_url":
        image = SHAPES.mapping(f"{at}.image_url", part.get("image_url"))
        return "[image]", image_cost(image, f"{at}.image_url", overhead)
    if kind == "input_audio":
        return "[audio]", audio_cost(part, at, overhead)
    if kind == "file":
        file = SHAPES.mapping(f"{at}.file", part.get("file"))
        return "[file]", document_tokens("openai", file.get("file_data"), overhead, at)
    if kind in _ANTHROPIC_BLOCKS:
        # Accepted silently, a tool result would lose its pairing with its call.
        SHAPES.fail(
            f"{at}.type",
            f"is an Anthropic content block; OpenAI messages carry {_ANTHROPIC_BLOCKS[kind]} "
            "(use pycupel.adapters.anthropic for Anthropic histories)",
            kind,
        )
    # Unknown part types are counted as their JSON text: an over-estimate is safe.
    return as_json_text(dict(part)), 0


def audio_cost(part: Mapping[str, Any], at: str, overhead: MessageOverhead) -> int:
    """An ``input_audio`` part's tokens (Chat Completions and Responses)."""
    audio = SHAPES.mapping(f"{at}.input_audio", part.get("input_audio"))
    return audio_tokens("openai", audio.get("data"), overhead, at)


def check_detail(detail: object, at: str, shapes: Shapes = SHAPES) -> str:
    """An image's ``detail``, checked to be one OpenAI takes."""
    if detail not in ("auto", "low", "high", "original"):
        shapes.fail(at, "must be 'auto', 'low', 'high' or 'original'", detail)
    return detail


def image_cost(
    image: object,
    at: str,
    overhead: MessageOverhead,
    pricing: ImageProvider = "openai",
    shapes: Shapes = SHAPES,
) -> int:
    """An ``image_url`` object's tokens (``{"url", "detail"}``, or the URL alone) from its
    pixel size (read from a data URL, or given in the overhead's ``image_sizes``), else the
    fixed estimate, by ``pricing``'s formula (LangChain passes OpenAI parts to any model);
    ``shapes`` names the input in errors."""
    if isinstance(image, str):
        image = {"url": image}
    image = shapes.mapping(at, image)
    url = shapes.text(f"{at}.url", image.get("url"))
    detail = check_detail(image.get("detail", "auto"), f"{at}.detail", shapes)
    return overhead.image_cost(pricing, data=data_url_bytes(url), reference=url, detail=detail)
