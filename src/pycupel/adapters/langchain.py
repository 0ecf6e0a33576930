"""LangChain chat messages in, a smaller valid history out (needs ``pycupel[langchain]``).

Handles ``SystemMessage``, ``HumanMessage``, ``AIMessage`` (and its chunks) with ``tool_calls``,
``ToolMessage`` with ``tool_call_id``, and ``ChatMessage`` whose role is one of ``system``,
``developer``, ``user``, ``human``, ``assistant`` or ``ai``. Other message types (the legacy
``FunctionMessage``, ``RemoveMessage``) raise :class:`~pycupel.errors.MessageFormatError`.

Grouping and pinning are those of the OpenAI adapter: an ``AIMessage`` with tool calls and the
``ToolMessage`` objects answering it form one unit; system messages and the latest human
message are pinned by default. ``invalid_tool_calls`` count as calls too, since chat-model
integrations send them to the provider as tool calls that need answers.

Counting uses the OpenAI adapter's :data:`~pycupel.adapters.openai.DEFAULT_OVERHEAD` unless
told otherwise. Content may be a string or a list of strings and content blocks: ``text``
blocks are counted as text; image blocks (``image_url``, and ``image`` in LangChain's standard
forms: ``base64``/``url``/``file_id`` keys, ``source_type`` with ``data``/``url``/``id``, or an
Anthropic ``source``) are priced from their pixel size with the formula of ``image_pricing``
(OpenAI's by default, like the overhead; see :mod:`pycupel.conversation.media`), else at the
overhead's fixed image cost; audio and file blocks need an estimate in the overhead; and
``tool_use``/``tool_call`` blocks repeating an entry of ``tool_calls`` are not counted twice.
Other blocks count as their JSON text.

``tools=`` takes the tools bound to the chat model (LangChain tools, functions, pydantic
models or tool dicts, as ``bind_tools`` does): each is converted to its OpenAI tool schema and
counted with OpenAI's framing. ``repair=True`` fixes what a provider rejects (orphaned tool
results, unanswered calls) and reports each fix (see :mod:`pycupel.conversation.repair`).

``langchain-core`` is imported only when a function here is called; without it they raise
:class:`~pycupel.errors.AdapterUnavailableError`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, Unpack, cast

from pycupel.adapters import anthropic, openai
from pycupel.adapters.openai import DEFAULT_OVERHEAD
from pycupel.conversation import api
from pycupel.conversation import recall_tool as recalling
from pycupel.conversation.codec import Codec, rewritten, snapshot_json
from pycupel.conversation.fit import FitResult
from pycupel.conversation.media import ImageProvider, base64_prefix, data_url_bytes
from pycupel.conversation.media_length import audio_tokens, document_tokens
from pycupel.conversation.options import FitOptions as _FitOptions
from pycupel.conversation.options import UnitOptions as _UnitOptions
from pycupel.conversation.options import documented
from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.parsed import AnswerRef, CallRef, Category, ParsedMessage, ParseState
from pycupel.conversation.recall import Recall
from pycupel.conversation.tools import OPENAI_TOOLS, ToolSpec
from pycupel.conversation.units import MessageUnits
from pycupel.conversation.validate import (
    MAX_PARTS_PER_MESSAGE,
    MAX_TOOL_CALLS_PER_MESSAGE,
    Shapes,
    as_json_text,
)
from pycupel.conversation.versions import Replace
from pycupel.errors import AdapterUnavailableError, PipelineConfigError
from pycupel.model import ContextItem
from pycupel.session.chat import ListSession
from pycupel.tokens import TokenCounter
from pycupel.tokens.asynchronous import AsyncTokenCounter

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage
    from langchain_core.tools import BaseTool

__all__ = [
    "DEFAULT_OVERHEAD",
    "FitOptions",
    "FitResult",
    "LangChainCodec",
    "Session",
    "UnitOptions",
    "afit_messages",
    "answer_recall",
    "count_tokens",
    "fit_messages",
    "from_messages",
    "recall_tool",
    "to_messages",
]

SOURCE = "langchain messages"
SHAPES = Shapes(SOURCE)

_CHAT_ROLES: Mapping[str, tuple[str, Category]] = MappingProxyType(
    {
        "system": ("system", "system"),
        "developer": ("developer", "system"),
        "user": ("human", "user"),
        "human": ("human", "user"),
        "assistant": ("ai", "assistant"),
        "ai": ("ai", "assistant"),
    }
)
_IMAGE_BLOCKS = frozenset({"image", "image_url"})
_AUDIO_BLOCKS = frozenset({"audio", "input_audio"})
_FILE_BLOCKS = frozenset({"file", "document"})
_CALL_BLOCKS = frozenset({"tool_use", "tool_call"})
_IMAGE_PROVIDERS = frozenset({"openai", "anthropic", "gemini"})


_DOCS: Mapping[str, str] = MappingProxyType(
    {
        "messages": "the LangChain message objects (never modified).",
        "tools": "the tools bound to the model (anything ``bind_tools`` takes), counted as "
        "their OpenAI tool schemas.",
        "image_pricing": 'whose image formula prices an image of known size (``"openai"``, '
        '``"anthropic"`` or ``"gemini"``: the provider behind the chat model).',
    }
)


class UnitOptions(_UnitOptions, total=False):
    """:func:`from_messages`' keyword options."""

    image_pricing: ImageProvider


class FitOptions(_FitOptions, total=False):
    """The options of :func:`fit_messages` and :func:`afit_messages` (all but ``counter``)."""

    image_pricing: ImageProvider


_SNAPSHOT_FIELDS = ("content", "tool_calls", "invalid_tool_calls", "tool_call_id", "role", "name")
"""What makes a LangChain message what it is, besides its class (sessions detect edits)."""


class LangChainCodec(Codec["BaseMessage"]):
    """LangChain message objects to the engine and back (see the module documentation).

    Attributes:
        pricing: whose formula prices an image of known size.
    """

    provider = "langchain"
    source = SOURCE
    default_overhead = DEFAULT_OVERHEAD
    tool_framing = OPENAI_TOOLS

    def __init__(self, pricing: object = "openai") -> None:
        if pricing not in _IMAGE_PROVIDERS:
            raise PipelineConfigError(
                "image_pricing", pricing, "must be 'openai', 'anthropic' or 'gemini'"
            )
        self.pricing = cast("ImageProvider", pricing)

    def parse(
        self, index: int, message: BaseMessage, overhead: MessageOverhead, state: ParseState
    ) -> ParsedMessage:
        lc, tool_names, pricing = _langchain(), state.tool_names, self.pricing
        where = f"messages[{index}]"
        if not isinstance(message, lc.BaseMessage):
            SHAPES.fail(where, "must be a langchain_core BaseMessage", message)
        name = SHAPES.optional_text(f"{where}.name", getattr(message, "name", None))
        fixed = overhead.per_message + (overhead.per_name if name else 0)

        if isinstance(message, lc.AIMessage):
            calls = _tool_calls(message, where, tool_names)
            skip = {call.call_id for call, _ in calls}
            text, media = _content(message.content, f"{where}.content", overhead, skip, pricing)
            pieces = [text] if text else []
            pieces.extend(f"{call.name}({arguments})" for call, arguments in calls)
            fixed += media + overhead.per_tool_call * len(calls)
            refs = [call for call, _ in calls]
            return ParsedMessage.tool_calls(index, "ai", "\n".join(pieces), fixed, refs, name=name)

        text, media = _content(message.content, f"{where}.content", overhead, set(), pricing)
        if isinstance(message, lc.ToolMessage):
            call_id = SHAPES.call_id(f"{where}.tool_call_id", message.tool_call_id)
            tool = tool_names.get(call_id)
            answer = AnswerRef(call_id, f"{where}.tool_call_id")
            return ParsedMessage.tool_result(
                index, "tool", text, fixed + media, answer, tool=tool, name=name
            )
        category: Category
        if isinstance(message, lc.SystemMessage):
            role, category = "system", "system"
        elif isinstance(message, lc.HumanMessage):
            role, category = "human", "user"
        elif isinstance(message, lc.ChatMessage):
            if message.role not in _CHAT_ROLES:
                SHAPES.fail(
                    f"{where}.role",
                    f"a ChatMessage role must be one of {', '.join(_CHAT_ROLES)}",
                    message.role,
                )
            role, category = _CHAT_ROLES[message.role]
        else:
            SHAPES.fail(
                where,
                "must be a SystemMessage, HumanMessage, AIMessage, ToolMessage or ChatMessage "
                f"(not {type(message).__name__})",
            )
        return ParsedMessage.of_text(
            index, role, category, text, fixed + media, user_turn=category == "user", name=name
        )

    def parse_all(
        self, messages: object, system: object, overhead: MessageOverhead
    ) -> list[ParsedMessage]:
        _langchain()  # without the extra, say so even for an empty history
        return super().parse_all(messages, system, overhead)

    def with_tools(
        self, overhead: MessageOverhead, tools: Sequence[Any] | None, counter: TokenCounter
    ) -> MessageOverhead:
        return super().with_tools(
            overhead, None if tools is None else _tool_schemas(tools), counter
        )

    def snapshot(self, message: BaseMessage) -> object:
        # Only the fields the message's class has are read (from ``__dict__``): a missing
        # attribute costs pydantic an exception, which would make the per-turn check slow.
        fields = message.__dict__
        return (type(message), *(snapshot_json(fields.get(key)) for key in _SNAPSHOT_FIELDS))

    def same(self, message: BaseMessage, snapshot: object) -> bool:
        # The live fields against their copies, without copying them again (every turn
        # checks every known message).
        fields = message.__dict__
        return (type(message), *map(fields.get, _SNAPSHOT_FIELDS)) == snapshot

    def rewrite(
        self, messages: Sequence[BaseMessage], replace: Replace, overhead: MessageOverhead
    ) -> list[BaseMessage] | None:
        """The unit's messages with each ToolMessage's content (and each plain string content)
        replaced as ``replace`` says, as copies (``model_copy``) keeping ``tool_call_id``, ids
        and every other field."""
        pricing = self.pricing
        lc = _langchain()
        names = {
            call["id"]: call["name"]
            for message in messages
            if isinstance(message, lc.AIMessage)
            for call in message.tool_calls
        }

        def rewrite(position: int, message: BaseMessage) -> BaseMessage | None:
            if isinstance(message, lc.ToolMessage):
                at = f"messages[{position}].content"
                text, _ = _content(message.content, at, overhead, set(), pricing)
                new_text = replace(names.get(message.tool_call_id, ""), text)
            elif (
                isinstance(message, lc.HumanMessage | lc.AIMessage)
                and isinstance(message.content, str)
                and message.content
                and not getattr(message, "tool_calls", None)
            ):
                new_text = replace(None, message.content)
            else:
                return None
            return None if new_text is None else message.model_copy(update={"content": new_text})

        return rewritten(messages, rewrite)

    def unnarrated(self, messages: Sequence[BaseMessage]) -> list[BaseMessage] | None:
        """The unit's messages with an AIMessage that has ``tool_calls`` copied with an empty
        content (a list content keeps its blocks other than ``text``)."""
        lc = _langchain()

        def rewrite(_: int, message: BaseMessage) -> BaseMessage | None:
            if not isinstance(message, lc.AIMessage) or not message.tool_calls:
                return None
            content = message.content
            if isinstance(content, str):
                kept: str | list[str | dict[str, Any]] = ""
                changed = bool(content)
            else:
                kept = [
                    block
                    for block in content
                    if not isinstance(block, str)
                    and not (isinstance(block, dict) and block.get("type") == "text")
                ]
                changed = len(kept) < len(content)
            return message.model_copy(update={"content": kept}) if changed else None

        return rewritten(messages, rewrite)

    def summary_message(self, text: str) -> BaseMessage:
        message: BaseMessage = _langchain().HumanMessage(text)
        return message

    def is_system(self, message: BaseMessage) -> bool:
        return isinstance(message, _langchain().SystemMessage)

    def tool_definition(self, tool: ToolSpec) -> BaseTool:
        # A tool LangChain runs itself (an agent's tool node calls it); a failed call comes
        # back to the model as an error ToolMessage.
        tools = _langchain("tools")

        def run(**arguments: Any) -> str:
            text, error = tool.run(arguments)
            if error:
                raise tools.ToolException(text)
            return str(text)

        made: BaseTool = tools.StructuredTool.from_function(
            func=run,
            name=tool.name,
            description=tool.description,
            args_schema=dict(tool.parameters),
            handle_tool_error=True,
        )
        return made

    def tool_answer(self, call: CallRef, text: str, *, error: bool) -> BaseMessage:
        status = "error" if error else "success"
        answer: BaseMessage = _langchain().ToolMessage(
            content=text, tool_call_id=call.call_id, name=call.name, status=status
        )
        return answer


def _codec(options: UnitOptions | FitOptions) -> LangChainCodec:
    """The codec for the options' ``image_pricing`` (popped: the engine does not take it)."""
    return LangChainCodec(options.pop("image_pricing", "openai"))


@documented(UnitOptions, docs=_DOCS, first=["image_pricing"])
def from_messages(
    messages: Sequence[BaseMessage], **options: Unpack[UnitOptions]
) -> MessageUnits[BaseMessage]:
    """Split a LangChain message list into units, one candidate item per unit.

    Units and errors are those of :func:`pycupel.adapters.openai.from_messages`.
    """
    codec = _codec(options)
    return api.read_units(codec, messages, None, options)


def to_messages(
    selection: Iterable[ContextItem], units: MessageUnits[BaseMessage]
) -> list[BaseMessage]:
    """The messages of the selected units in the original order (your original objects)."""
    return api.selected(LangChainCodec(), selection, units)[1]


def count_tokens(
    messages: Sequence[BaseMessage],
    *,
    counter: TokenCounter | None = None,
    tools: Sequence[Any] | None = None,
    overhead: MessageOverhead | None = None,
    image_pricing: ImageProvider = "openai",
) -> int:
    """Tokens of a request's messages (and tools), counted as :func:`fit_messages` does."""
    options = {"counter": counter, "tools": tools, "overhead": overhead}
    return api.count(LangChainCodec(image_pricing), messages, None, options)


def recall_tool(recall: Recall) -> BaseTool:
    """The recall tool as a LangChain tool that answers itself: give it to the agent (or
    ``bind_tools``) beside the others; the model calls it with a ref from an excerpt's marker
    of a fit given ``recall=recall`` (see :mod:`pycupel.conversation.recall_tool`). A ref
    this conversation does not hold comes back as an error ``ToolMessage``."""
    return cast("BaseTool", recalling.recall_tool(LangChainCodec(), recall))


@recalling.answers_documented
def answer_recall(
    recall: Recall, message: BaseMessage | Sequence[BaseMessage]
) -> list[BaseMessage]:
    """The ``ToolMessage`` objects answering the recall calls of an ``AIMessage`` (or of a
    list of messages), for a loop that runs tools itself."""
    return cast("list[BaseMessage]", recalling.answer_recall(LangChainCodec(), recall, message))


@documented(FitOptions, docs=_DOCS, first=["image_pricing"])
def fit_messages(
    messages: Sequence[BaseMessage],
    *,
    counter: TokenCounter | None = None,
    **options: Unpack[FitOptions],
) -> FitResult[BaseMessage]:
    """Fit a LangChain message list into a token budget; return the messages and the report.

    Result and errors are those of :func:`pycupel.adapters.openai.fit_messages`.
    """
    codec = _codec(options)
    fitting = api.fit(codec, messages, None, counter, options)
    return FitResult(fitting.messages, fitting.report)


@documented(FitOptions, docs=_DOCS, first=["image_pricing"])
async def afit_messages(
    messages: Sequence[BaseMessage], *, counter: AsyncTokenCounter, **options: Unpack[FitOptions]
) -> FitResult[BaseMessage]:
    """:func:`fit_messages` with an asynchronous token counter: every distinct text counted
    in one awaited call."""
    codec = _codec(options)
    fitting = await api.afit(codec, messages, None, counter, options)
    return FitResult(fitting.messages, fitting.report)


# --------------------------------------------------------------------------- sessions


class Session(ListSession["BaseMessage"]):
    """One conversation of LangChain messages, fitted turn after turn into a cache-stable
    window (for the chat model behind it: OpenAI, Anthropic...).

    Arguments, behaviour and thread rules are those of
    :class:`pycupel.adapters.openai.Session`; ``record_usage`` also takes an ``AIMessage``'s
    ``usage_metadata`` (``input_tokens`` with ``input_token_details.cache_read``) or the
    provider's own usage dict from ``response_metadata``.
    """

    __slots__ = ()

    def _codec(self) -> LangChainCodec:
        _langchain()  # without the extra, say so now rather than at the first turn
        return LangChainCodec()


# --------------------------------------------------------------------------- parsing


def _langchain(module: str = "messages") -> ModuleType:
    """``langchain_core.<module>``, imported on first use (the ``langchain`` extra)."""
    try:
        return importlib.import_module(f"langchain_core.{module}")
    except ImportError as exc:
        raise AdapterUnavailableError("LangChain", "langchain-core", "langchain") from exc


def _tool_schemas(tools: object) -> list[Mapping[str, Any]]:
    """Each bound tool as the OpenAI tool schema LangChain sends for it."""
    entries = SHAPES.sequence("tools", tools, limit=MAX_PARTS_PER_MESSAGE)
    _langchain()
    from langchain_core.utils.function_calling import (  # noqa: PLC0415  (optional extra)
        convert_to_openai_tool,
    )

    schemas: list[Mapping[str, Any]] = []
    for position, tool in enumerate(entries):
        try:
            schemas.append(convert_to_openai_tool(tool))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            SHAPES.fail(
                f"tools[{position}]",
                f"must be a tool LangChain can bind (a BaseTool, a function, a pydantic "
                f"model or a tool dict): {exc}",
                tool,
            )
    return schemas


def _tool_calls(message: Any, where: str, tool_names: dict[str, str]) -> list[tuple[CallRef, str]]:
    calls: list[tuple[CallRef, str]] = []
    for field in ("tool_calls", "invalid_tool_calls"):
        entries = SHAPES.sequence(
            f"{where}.{field}", getattr(message, field), limit=MAX_TOOL_CALLS_PER_MESSAGE
        )
        for position, raw in enumerate(entries):
            at = f"{where}.{field}[{position}]"
            call = SHAPES.mapping(at, raw)
            call_id = SHAPES.call_id(f"{at}.id", call.get("id"))
            if field == "tool_calls":
                name = SHAPES.text(f"{at}.name", call.get("name"), non_empty=True)
                arguments = as_json_text(dict(SHAPES.mapping(f"{at}.args", call.get("args"))))
            else:
                # An invalid call keeps the model's raw text: name and args may be missing.
                name = SHAPES.optional_text(f"{at}.name", call.get("name")) or "?"
                arguments = SHAPES.optional_text(f"{at}.args", call.get("args")) or ""
            tool_names[call_id] = name
            calls.append((CallRef(call_id, f"{at}.id", name, call.get("args")), arguments))
    return calls


def _content(
    content: object,
    where: str,
    overhead: MessageOverhead,
    skip_calls: set[str],
    pricing: ImageProvider,
) -> tuple[str, int]:
    def read(kind: str, block: Mapping[str, Any], at: str) -> tuple[str, int] | None:
        if kind == "text":
            return SHAPES.text(f"{at}.text", block.get("text")), 0
        if kind in _IMAGE_BLOCKS:
            return "[image]", _image_cost(block, at, overhead, pricing)
        if kind in _AUDIO_BLOCKS:
            return "[audio]", audio_tokens(pricing, _inline_payload(block), overhead, at)
        if kind in _FILE_BLOCKS:
            return "[file]", document_tokens(pricing, _inline_payload(block), overhead, at)
        if kind in _CALL_BLOCKS and block.get("id") in skip_calls:
            return None  # the same call is in tool_calls, counted there
        return as_json_text(dict(block)), 0

    return SHAPES.parts(where, content, read, strings=True)


def _image_cost(
    block: Mapping[str, Any], at: str, overhead: MessageOverhead, pricing: ImageProvider
) -> int:
    """An image block's tokens from its pixel size (read from its base64 data, or given in
    the overhead's ``image_sizes`` by URL or file id), else the fixed estimate: OpenAI's
    ``image_url`` parts and Anthropic's ``source`` blocks as those modules read them, and
    LangChain's standard blocks (v0.3 ``source_type`` or v1 keys)."""
    if block.get("type") == "image_url":
        image = block.get("image_url")
        if isinstance(image, Mapping):
            detail = image.get("detail", block.get("detail", "auto"))
            image = {**image, "detail": openai.check_detail(detail, f"{at}.detail", SHAPES)}
        return openai.image_cost(image, f"{at}.image_url", overhead, pricing, SHAPES)
    if isinstance(block.get("source"), Mapping):
        return anthropic.image_cost(block["source"], f"{at}.source", overhead, pricing, SHAPES)
    encoded = block.get("base64")
    if encoded is None and block.get("source_type") == "base64":
        encoded = block.get("data")
    data = base64_prefix(SHAPES.text(f"{at}.base64", encoded)) if encoded is not None else None
    reference = (
        SHAPES.optional_text(f"{at}.url", block.get("url"))
        or SHAPES.optional_text(f"{at}.file_id", block.get("file_id"))
        or (SHAPES.optional_text(f"{at}.id", block.get("id")) if block.get("source_type") else None)
    )
    if data is None and reference is not None:
        data = data_url_bytes(reference)
    detail = openai.check_detail(block.get("detail", "auto"), f"{at}.detail", SHAPES)
    return overhead.image_cost(pricing, data=data, reference=reference, detail=detail)


def _inline_payload(block: Mapping[str, Any]) -> object:
    """The inline data of an audio or file block in LangChain's forms (v1 ``base64``, v0.3
    ``source_type: base64`` with ``data``, OpenAI's ``input_audio.data`` or
    ``file.file_data``, Anthropic's base64 ``source``); None when given by reference."""
    if block.get("base64") is not None:
        return block["base64"]
    if block.get("source_type") == "base64":
        return block.get("data")
    for key, inner_key in (("input_audio", "data"), ("file", "file_data")):
        inner = block.get(key)
        if isinstance(inner, Mapping):
            return inner.get(inner_key)
    source = block.get("source")
    if isinstance(source, Mapping) and source.get("type") == "base64":
        return source.get("data")
    return None
