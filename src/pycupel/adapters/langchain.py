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

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, Literal, Unpack, cast

from pycupel.adapters.openai import DEFAULT_OVERHEAD
from pycupel.conversation.afit import afit
from pycupel.conversation.fit import (
    FitResult,
    allows_unanswered,
    fit_units,
    fitted_messages,
    resolve_counter,
    resolve_structure,
)
from pycupel.conversation.media import (
    ImageProvider,
    base64_prefix,
    data_url_bytes,
    image_tokens,
)
from pycupel.conversation.media_length import audio_tokens, document_tokens
from pycupel.conversation.options import FitOptions as _FitOptions
from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.parsed import AnswerRef, CallRef, Category, ParsedMessage, count_parsed
from pycupel.conversation.repair import group_units
from pycupel.conversation.structure import Structure
from pycupel.conversation.summary import (
    OnSummaryError,
    Summarize,
    Summary,
    dropped_messages,
    insert_after_system,
)
from pycupel.conversation.tools import OPENAI_TOOLS, with_tools
from pycupel.conversation.units import MessageUnits
from pycupel.conversation.validate import (
    MAX_MESSAGES,
    MAX_PARTS_PER_MESSAGE,
    MAX_TOOL_CALLS_PER_MESSAGE,
    as_json_text,
    expect_id,
    expect_list,
    expect_mapping,
    expect_optional_str,
    expect_str,
    fail,
)
from pycupel.conversation.versions import Editor, Replace, Shrink, resolve_shrink
from pycupel.errors import AdapterUnavailableError, PipelineConfigError
from pycupel.model import ContextBudget, ContextItem
from pycupel.pipeline import Pipeline
from pycupel.session import (
    MessageFormat,
    ParseState,
    ProviderUsage,
    SessionCore,
    SessionOptions,
    SessionWindow,
)
from pycupel.session.history import snapshot_json
from pycupel.tokens import TokenCounter
from pycupel.tokens.asynchronous import AsyncTokenCounter

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from pycupel.policy import Policy

__all__ = [
    "DEFAULT_OVERHEAD",
    "FitOptions",
    "FitResult",
    "Session",
    "afit_messages",
    "count_tokens",
    "fit_messages",
    "from_messages",
    "to_messages",
]

SOURCE = "langchain messages"

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


def from_messages(
    messages: Sequence[BaseMessage],
    *,
    counter: TokenCounter | None = None,
    tools: Sequence[Any] | None = None,
    overhead: MessageOverhead | None = None,
    image_pricing: ImageProvider = "openai",
    pin_system: bool = True,
    pin_latest_user: bool = True,
    timestamps: Sequence[datetime] | None = None,
    allow_unanswered: bool = False,
    repair: bool = False,
) -> MessageUnits[BaseMessage]:
    """Split a LangChain message list into units, one candidate item per unit.

    Arguments and errors are those of :func:`pycupel.adapters.openai.from_messages`, and:

    Args:
        tools: the tools bound to the model (anything ``bind_tools`` takes), counted as
            their OpenAI tool schemas.
        image_pricing: whose image formula prices an image of known size (``"openai"``,
            ``"anthropic"`` or ``"gemini"``: the provider behind the chat model).
    """
    resolved = resolve_counter(counter)
    chosen = _overhead(overhead, tools, resolved)
    parsed = _parse(messages, chosen, _image_provider(image_pricing))
    units, repairs = group_units(
        parsed,
        repair=repair,
        source=SOURCE,
        counter=resolved,
        message_count=len(parsed),
        pin_system=pin_system,
        pin_latest_user=pin_latest_user,
        timestamps=timestamps,
        allow_unanswered=allow_unanswered,
    )
    return MessageUnits("langchain", tuple(messages), units, chosen, repairs=repairs)


def to_messages(
    selection: Iterable[ContextItem], units: MessageUnits[BaseMessage]
) -> list[BaseMessage]:
    """The messages of the selected units in the original order (your original objects)."""
    return [
        units.messages[index] for unit in units.select(selection) for index in unit.message_indices
    ]


def count_tokens(
    messages: Sequence[BaseMessage],
    *,
    counter: TokenCounter | None = None,
    tools: Sequence[Any] | None = None,
    overhead: MessageOverhead | None = None,
    image_pricing: ImageProvider = "openai",
) -> int:
    """Tokens of a request's messages (and tools), counted as :func:`fit_messages` does."""
    resolved = resolve_counter(counter)
    chosen = _overhead(overhead, tools, resolved)
    parsed = _parse(messages, chosen, _image_provider(image_pricing))
    return count_parsed(parsed, resolved) + chosen.per_request


def fit_messages(
    messages: Sequence[BaseMessage],
    *,
    budget: int | ContextBudget,
    policy: Policy | Pipeline | None = None,
    counter: TokenCounter | None = None,
    tools: Sequence[Any] | None = None,
    overhead: MessageOverhead | None = None,
    image_pricing: ImageProvider = "openai",
    pin_system: bool = True,
    pin_latest_user: bool = True,
    timestamps: Sequence[datetime] | None = None,
    deduplicate: bool = False,
    unanswered_tool_calls: Literal["error", "drop"] = "error",
    repair: bool = False,
    query: str | None = None,
    keep_recent: int | None = None,
    structure: Structure | None = None,
    shrink: Shrink | bool | None = None,
    summarize: Summarize | None = None,
    on_summary_error: OnSummaryError = "raise",
) -> FitResult[BaseMessage]:
    """Fit a LangChain message list into a token budget; return the messages and the report.

    Arguments, result and errors are those of :func:`pycupel.adapters.openai.fit_messages`;
    ``tools`` and ``image_pricing`` are those of :func:`from_messages`.
    """
    units = from_messages(
        messages,
        counter=counter,
        tools=tools,
        overhead=overhead,
        image_pricing=image_pricing,
        pin_system=pin_system,
        pin_latest_user=pin_latest_user,
        timestamps=timestamps,
        allow_unanswered=allows_unanswered(unanswered_tool_calls),
        repair=repair,
    )
    summary = Summary.start(summarize, on_summary_error, budget)
    fitted = fit_units(
        units,
        budget=summary.budget if summary is not None else budget,
        policy=policy,
        deduplicate=deduplicate,
        unanswered_tool_calls="drop" if repair else unanswered_tool_calls,
        query=query,
        structure=resolve_structure(policy, structure, keep_recent),
        shrink=resolve_shrink(shrink, policy=policy),
        editor=_editor(units.overhead, _image_provider(image_pricing)),
        counter=counter,
    )
    kept = fitted_messages(units, fitted)
    if summary is not None:
        lc = _langchain()
        dropped = dropped_messages(units, fitted)
        text = summary.text(dropped, None)
        if text is not None:
            message = lc.HumanMessage(text)
            resolved = resolve_counter(counter)
            if summary.fits(
                count_parsed(_parse([message], units.overhead, "openai"), resolved),
                len(dropped),
            ):
                kept = insert_after_system(
                    kept, message, is_system=lambda m: isinstance(m, lc.SystemMessage)
                )
    return FitResult(kept, fitted.report)


# --------------------------------------------------------------------------- sessions


class Session:
    """One conversation of LangChain messages, fitted turn after turn into a cache-stable
    window (for the chat model behind it: OpenAI, Anthropic...).

    Arguments, behaviour and thread rules are those of
    :class:`pycupel.adapters.openai.Session`; ``record_usage`` also takes an ``AIMessage``'s
    ``usage_metadata`` (``input_tokens`` with ``input_token_details.cache_read``) or the
    provider's own usage dict from ``response_metadata``.
    """

    __slots__ = ("_core",)

    def __init__(
        self,
        *,
        budget: int,
        overhead: MessageOverhead | None = None,
        **options: Unpack[SessionOptions],
    ) -> None:
        chosen = overhead if overhead is not None else DEFAULT_OVERHEAD
        lc = _langchain()

        def parse(index: int, raw: BaseMessage, state: ParseState) -> ParsedMessage:
            return _parse_message(lc, index, raw, chosen, state.tool_names, pricing="openai")

        self._core: SessionCore[BaseMessage] = SessionCore(
            MessageFormat(
                "langchain",
                SOURCE,
                chosen,
                parse=parse,
                snapshot=_snapshot,
                same=_same,
                editor=_editor(chosen, "openai"),
                summary_message=lc.HumanMessage,
            ),
            budget=budget,
            **options,
        )

    def fit(self, messages: Sequence[BaseMessage]) -> SessionWindow[BaseMessage]:
        """This turn's window for the whole history so far (your message objects).

        Raises:
            MessageFormatError: a malformed message, or a tool call without its result.
            PinnedBudgetError: the system prompt and latest human turn alone do not fit.
        """
        return self._core.fit(messages).window(messages)

    async def afit(
        self, messages: Sequence[BaseMessage], *, counter: AsyncTokenCounter
    ) -> SessionWindow[BaseMessage]:
        """:meth:`fit` with the new messages counted by an asynchronous token counter (a
        wrapped count-tokens endpoint, say): one awaited ``count_batch`` call per turn for
        the texts this turn adds. Raises what :meth:`fit` raises.
        """
        window = await self._core.afit(messages, counter)
        return window.window(messages)

    def record_usage(self, usage: object) -> ProviderUsage:
        """Calibrate with the usage of the latest request (see the class documentation).

        Raises:
            ProviderUsageError: not a usage object, or a negative or non-integer count.
            SessionConfigError: no window was fitted yet, or its usage was already recorded.
        """
        return self._core.record_usage(usage)


def _snapshot(message: Any) -> object:
    """What makes a LangChain message what it is, copied (content, calls, ids, name...).

    Only the fields the message's class has are read: a missing attribute costs pydantic an
    exception, which would make the per-turn check of every known message slow.
    """
    fields = message.__dict__
    return (
        type(message),
        snapshot_json(fields.get("content")),
        snapshot_json(fields.get("tool_calls")),
        snapshot_json(fields.get("invalid_tool_calls")),
        fields.get("tool_call_id"),
        fields.get("role"),
        fields.get("name"),
    )


def _same(message: Any, snapshot: object) -> bool:
    # The live fields against their copies, without copying them again (every turn checks
    # every known message).
    fields = message.__dict__
    return (
        type(message),
        fields.get("content"),
        fields.get("tool_calls"),
        fields.get("invalid_tool_calls"),
        fields.get("tool_call_id"),
        fields.get("role"),
        fields.get("name"),
    ) == snapshot


# --------------------------------------------------------------------------- versions


def _editor(overhead: MessageOverhead, pricing: ImageProvider) -> Editor[BaseMessage]:
    def parse(messages: Sequence[BaseMessage]) -> list[ParsedMessage]:
        return _parse(list(messages), overhead, pricing)

    def rewrite(messages: Sequence[BaseMessage], replace: Replace) -> list[BaseMessage] | None:
        return _rewrite(messages, replace, overhead, pricing)

    return Editor(rewrite=rewrite, parse=parse)


def _rewrite(
    messages: Sequence[BaseMessage],
    replace: Replace,
    overhead: MessageOverhead,
    pricing: ImageProvider,
) -> list[BaseMessage] | None:
    """The unit's messages with each ToolMessage's content (and each plain string content)
    replaced as ``replace`` says, as copies (``model_copy``) keeping ``tool_call_id``, ids
    and every other field."""
    lc = _langchain()
    names = {
        call["id"]: call["name"]
        for message in messages
        if isinstance(message, lc.AIMessage)
        for call in message.tool_calls
    }
    rewritten: list[BaseMessage] = []
    changed = False
    for position, message in enumerate(messages):
        new_text: str | None = None
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
        if new_text is None:
            rewritten.append(message)
        else:
            rewritten.append(message.model_copy(update={"content": new_text}))
            changed = True
    return rewritten if changed else None


# --------------------------------------------------------------------------- parsing


def _langchain() -> ModuleType:
    try:
        import langchain_core.messages as messages_module  # noqa: PLC0415  (optional extra)
    except ImportError as exc:
        raise AdapterUnavailableError("LangChain", "langchain-core", "langchain") from exc
    return messages_module


def _image_provider(value: object) -> ImageProvider:
    if value in _IMAGE_PROVIDERS:
        return cast("ImageProvider", value)
    raise PipelineConfigError("image_pricing", value, "must be 'openai', 'anthropic' or 'gemini'")


def _overhead(
    overhead: MessageOverhead | None, tools: Sequence[Any] | None, counter: TokenCounter
) -> MessageOverhead:
    """The overhead with the bound tools' schemas added to the per-request cost."""
    chosen = overhead if overhead is not None else DEFAULT_OVERHEAD
    if tools is None:
        return chosen
    return with_tools(
        chosen, _tool_schemas(tools), source=SOURCE, counter=counter, framing=OPENAI_TOOLS
    )


def _tool_schemas(tools: object) -> list[Mapping[str, Any]]:
    """Each bound tool as the OpenAI tool schema LangChain sends for it."""
    entries = expect_list(SOURCE, "tools", tools, limit=MAX_PARTS_PER_MESSAGE)
    _langchain()
    from langchain_core.utils.function_calling import (  # noqa: PLC0415  (optional extra)
        convert_to_openai_tool,
    )

    schemas: list[Mapping[str, Any]] = []
    for position, tool in enumerate(entries):
        try:
            schemas.append(convert_to_openai_tool(tool))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            fail(
                SOURCE,
                f"tools[{position}]",
                f"must be a tool LangChain can bind (a BaseTool, a function, a pydantic "
                f"model or a tool dict): {exc}",
                tool,
            )
    return schemas


def _parse(
    messages: object, overhead: MessageOverhead, pricing: ImageProvider
) -> list[ParsedMessage]:
    lc = _langchain()
    history = expect_list(SOURCE, "messages", messages, limit=MAX_MESSAGES)
    tool_names: dict[str, str] = {}
    return [
        _parse_message(lc, index, raw, overhead, tool_names, pricing=pricing)
        for index, raw in enumerate(history)
    ]


def _parse_message(
    lc: ModuleType,
    index: int,
    message: object,
    overhead: MessageOverhead,
    tool_names: dict[str, str],
    *,
    pricing: ImageProvider,
) -> ParsedMessage:
    where = f"messages[{index}]"
    if not isinstance(message, lc.BaseMessage):
        fail(SOURCE, where, "must be a langchain_core BaseMessage", message)
    name = expect_optional_str(SOURCE, f"{where}.name", getattr(message, "name", None))
    fixed = overhead.per_message + (overhead.per_name if name else 0)

    if isinstance(message, lc.AIMessage):
        calls = _tool_calls(message, where, tool_names)
        skip = {call.call_id for call, _ in calls}
        text, media = _content(message.content, f"{where}.content", overhead, skip, pricing)
        pieces = [text] if text else []
        pieces.extend(f"{call.name}({arguments})" for call, arguments in calls)
        return ParsedMessage(
            index=index,
            role="ai",
            category="assistant",
            text="\n".join(pieces),
            fixed_tokens=fixed + media + overhead.per_tool_call * len(calls),
            calls=tuple(call for call, _ in calls),
            name=name,
            tool_names=tuple(dict.fromkeys(call.name for call, _ in calls)),
        )

    text, media = _content(message.content, f"{where}.content", overhead, set(), pricing)
    if isinstance(message, lc.ToolMessage):
        call_id = expect_id(SOURCE, f"{where}.tool_call_id", message.tool_call_id)
        tool = tool_names.get(call_id)
        return ParsedMessage(
            index=index,
            role="tool",
            category="tool",
            text=text,
            fixed_tokens=fixed + media,
            answers=(AnswerRef(call_id, f"{where}.tool_call_id"),),
            name=name,
            label=f"tool ({tool})" if tool else "tool",
            tool_names=(tool,) if tool else (),
        )
    category: Category
    if isinstance(message, lc.SystemMessage):
        role, category = "system", "system"
    elif isinstance(message, lc.HumanMessage):
        role, category = "human", "user"
    elif isinstance(message, lc.ChatMessage):
        if message.role not in _CHAT_ROLES:
            fail(
                SOURCE,
                f"{where}.role",
                f"a ChatMessage role must be one of {', '.join(_CHAT_ROLES)}",
                message.role,
            )
        role, category = _CHAT_ROLES[message.role]
    else:
        fail(
            SOURCE,
            where,
            "must be a SystemMessage, HumanMessage, AIMessage, ToolMessage or ChatMessage "
            f"(not {type(message).__name__})",
        )
    return ParsedMessage(
        index=index,
        role=role,
        category=category,
        text=text,
        fixed_tokens=fixed + media,
        user_turn=category == "user",
        name=name,
    )


def _tool_calls(message: Any, where: str, tool_names: dict[str, str]) -> list[tuple[CallRef, str]]:
    calls: list[tuple[CallRef, str]] = []
    for field in ("tool_calls", "invalid_tool_calls"):
        entries = expect_list(
            SOURCE, f"{where}.{field}", getattr(message, field), limit=MAX_TOOL_CALLS_PER_MESSAGE
        )
        for position, raw in enumerate(entries):
            at = f"{where}.{field}[{position}]"
            call = expect_mapping(SOURCE, at, raw)
            call_id = expect_id(SOURCE, f"{at}.id", call.get("id"))
            if field == "tool_calls":
                name = expect_str(SOURCE, f"{at}.name", call.get("name"), non_empty=True)
                arguments = as_json_text(
                    dict(expect_mapping(SOURCE, f"{at}.args", call.get("args")))
                )
            else:
                # An invalid call keeps the model's raw text: name and args may be missing.
                name = expect_optional_str(SOURCE, f"{at}.name", call.get("name")) or "?"
                arguments = expect_optional_str(SOURCE, f"{at}.args", call.get("args")) or ""
            tool_names[call_id] = name
            calls.append((CallRef(call_id, f"{at}.id", name), arguments))
    return calls


def _content(
    content: object,
    where: str,
    overhead: MessageOverhead,
    skip_calls: set[str],
    pricing: ImageProvider,
) -> tuple[str, int]:
    if isinstance(content, str):
        return content, 0
    parts = expect_list(SOURCE, where, content, limit=MAX_PARTS_PER_MESSAGE)
    texts: list[str] = []
    media = 0
    for position, raw in enumerate(parts):
        at = f"{where}[{position}]"
        if isinstance(raw, str):
            texts.append(raw)
            continue
        block = expect_mapping(SOURCE, at, raw)
        kind = expect_str(SOURCE, f"{at}.type", block.get("type"), non_empty=True)
        if kind == "text":
            texts.append(expect_str(SOURCE, f"{at}.text", block.get("text")))
        elif kind in _IMAGE_BLOCKS:
            texts.append("[image]")
            media += _image_cost(block, at, overhead, pricing)
        elif kind in _AUDIO_BLOCKS:
            texts.append("[audio]")
            media += audio_tokens(pricing, _inline_payload(block), overhead, at)
        elif kind in _FILE_BLOCKS:
            texts.append("[file]")
            media += document_tokens(pricing, _inline_payload(block), overhead, at)
        elif kind in _CALL_BLOCKS and block.get("id") in skip_calls:
            continue  # the same call is in tool_calls, counted there
        else:
            texts.append(as_json_text(dict(block)))
    return "\n".join(texts), media


def _image_cost(
    block: Mapping[str, Any], at: str, overhead: MessageOverhead, pricing: ImageProvider
) -> int:
    """An image block's tokens from its pixel size (read from its base64 data, or given in
    the overhead's ``image_sizes`` by URL or file id), else the fixed estimate."""
    data: bytes | None = None
    reference: str | None = None
    detail: object = block.get("detail", "auto")
    if block.get("type") == "image_url":
        image = block.get("image_url")
        if isinstance(image, str):  # LangChain also takes the URL itself
            image = {"url": image}
        image = expect_mapping(SOURCE, f"{at}.image_url", image)
        reference = expect_str(SOURCE, f"{at}.image_url.url", image.get("url"))
        detail = image.get("detail", detail)
    elif isinstance(block.get("source"), Mapping):  # Anthropic's own block
        source = block["source"]
        if source.get("type") == "base64":
            data = _base64(source.get("data"), f"{at}.source.data")
        reference = _optional(source.get("url"), f"{at}.source.url") or _optional(
            source.get("file_id"), f"{at}.source.file_id"
        )
    else:  # LangChain's standard block (v0.3 ``source_type`` or v1 keys)
        encoded = block.get("base64")
        if encoded is None and block.get("source_type") == "base64":
            encoded = block.get("data")
        if encoded is not None:
            data = _base64(encoded, f"{at}.base64")
        reference = (
            _optional(block.get("url"), f"{at}.url")
            or _optional(block.get("file_id"), f"{at}.file_id")
            or (_optional(block.get("id"), f"{at}.id") if block.get("source_type") else None)
        )
    if data is None and reference is not None:
        data = data_url_bytes(reference)
    if detail not in ("auto", "low", "high", "original"):
        fail(SOURCE, f"{at}.detail", "must be 'auto', 'low', 'high' or 'original'", detail)
    return image_tokens(
        pricing,
        data=data,
        reference=reference,
        sizes=overhead.image_sizes,
        fallback=overhead.image,
        detail=str(detail),
    )


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


def _base64(value: object, at: str) -> bytes | None:
    return base64_prefix(expect_str(SOURCE, at, value))


def _optional(value: object, at: str) -> str | None:
    return expect_optional_str(SOURCE, at, value)


# --------------------------------------------------------------------------- async


class FitOptions(_FitOptions, total=False):
    """:func:`fit_messages`' keyword options (all but ``counter``), which
    :func:`afit_messages` takes and passes on."""

    tools: Sequence[Any] | None
    image_pricing: ImageProvider


async def afit_messages(
    messages: Sequence[BaseMessage],
    *,
    counter: AsyncTokenCounter,
    **options: Unpack[FitOptions],
) -> FitResult[BaseMessage]:
    """:func:`fit_messages` with an asynchronous token counter (e.g. a wrapped count-tokens
    endpoint): every distinct text is counted in one awaited ``count_batch`` call, and a
    coroutine ``summarize`` callback is awaited (called once, with what the fit drops).
    Takes every option of :func:`fit_messages` (see :class:`FitOptions`)."""
    return await afit(fit_messages, messages, counter, options)
