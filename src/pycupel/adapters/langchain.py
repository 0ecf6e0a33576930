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
blocks are counted as text, image blocks at the image cost, audio and file blocks need an
estimate in the overhead, and ``tool_use``/``tool_call`` blocks repeating an entry of
``tool_calls`` are not counted twice. Other blocks count as their JSON text.

``langchain-core`` is imported only when a function here is called; without it they raise
:class:`~pycupel.errors.AdapterUnavailableError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, Literal

from pycupel.adapters._async import afit
from pycupel.adapters._fit import (
    FitResult,
    allows_unanswered,
    fit_units,
    resolve_counter,
    resolve_structure,
)
from pycupel.adapters._format import (
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
from pycupel.adapters._structure import Structure
from pycupel.adapters._units import (
    AnswerRef,
    CallRef,
    Category,
    MessageOverhead,
    MessageUnits,
    ParsedMessage,
    build_units,
    count_parsed,
)
from pycupel.adapters.openai import DEFAULT_OVERHEAD
from pycupel.errors import AdapterUnavailableError
from pycupel.model import ContextBudget, ContextItem
from pycupel.pipeline import Pipeline
from pycupel.session import (
    DEFAULT_COMPACT_AT,
    DEFAULT_COMPACT_TO,
    DEFAULT_GRID,
    DEFAULT_RECALL_SHARE,
    MessageFormat,
    ParseState,
    ProviderUsage,
    SessionCore,
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


def from_messages(
    messages: Sequence[BaseMessage],
    *,
    counter: TokenCounter | None = None,
    overhead: MessageOverhead | None = None,
    pin_system: bool = True,
    pin_latest_user: bool = True,
    timestamps: Sequence[datetime] | None = None,
    allow_unanswered: bool = False,
) -> MessageUnits[BaseMessage]:
    """Split a LangChain message list into units, one candidate item per unit.

    Arguments and errors are those of :func:`pycupel.adapters.openai.from_messages`.
    """
    chosen = overhead if overhead is not None else DEFAULT_OVERHEAD
    parsed = _parse(messages, chosen)
    units = build_units(
        parsed,
        source=SOURCE,
        counter=resolve_counter(counter),
        message_count=len(parsed),
        pin_system=pin_system,
        pin_latest_user=pin_latest_user,
        timestamps=timestamps,
        allow_unanswered=allow_unanswered,
    )
    return MessageUnits("langchain", tuple(messages), units, chosen)


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
    overhead: MessageOverhead | None = None,
) -> int:
    """Tokens of a request's messages, counted as :func:`fit_messages` does."""
    chosen = overhead if overhead is not None else DEFAULT_OVERHEAD
    parsed = _parse(messages, chosen)
    return count_parsed(parsed, resolve_counter(counter)) + chosen.per_request


def fit_messages(
    messages: Sequence[BaseMessage],
    *,
    budget: int | ContextBudget,
    policy: Policy | Pipeline | None = None,
    counter: TokenCounter | None = None,
    overhead: MessageOverhead | None = None,
    pin_system: bool = True,
    pin_latest_user: bool = True,
    timestamps: Sequence[datetime] | None = None,
    deduplicate: bool = False,
    unanswered_tool_calls: Literal["error", "drop"] = "error",
    query: str | None = None,
    keep_recent: int | None = None,
    structure: Structure | None = None,
) -> FitResult[BaseMessage]:
    """Fit a LangChain message list into a token budget; return the messages and the report.

    Arguments, result and errors are those of :func:`pycupel.adapters.openai.fit_messages`.
    """
    units = from_messages(
        messages,
        counter=counter,
        overhead=overhead,
        pin_system=pin_system,
        pin_latest_user=pin_latest_user,
        timestamps=timestamps,
        allow_unanswered=allows_unanswered(unanswered_tool_calls),
    )
    fitted = fit_units(
        units,
        budget=budget,
        policy=policy,
        deduplicate=deduplicate,
        unanswered_tool_calls=unanswered_tool_calls,
        query=query,
        structure=resolve_structure(policy, structure, keep_recent),
    )
    return FitResult(to_messages(fitted.selected, units), fitted.report)


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
        policy: Policy | Pipeline | None = None,
        counter: TokenCounter | None = None,
        overhead: MessageOverhead | None = None,
        compact_at: float = DEFAULT_COMPACT_AT,
        compact_to: float = DEFAULT_COMPACT_TO,
        grid: int = DEFAULT_GRID,
        recall_share: float = DEFAULT_RECALL_SHARE,
        pin_system: bool = True,
    ) -> None:
        chosen = overhead if overhead is not None else DEFAULT_OVERHEAD
        lc = _langchain()

        def parse(index: int, raw: BaseMessage, state: ParseState) -> ParsedMessage:
            return _parse_message(lc, index, raw, chosen, state.tool_names)

        self._core: SessionCore[BaseMessage] = SessionCore(
            MessageFormat("langchain", SOURCE, chosen, parse=parse, snapshot=_snapshot, same=_same),
            budget=budget,
            policy=policy,
            counter=counter,
            compact_at=compact_at,
            compact_to=compact_to,
            grid=grid,
            recall_share=recall_share,
            pin_system=pin_system,
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


# --------------------------------------------------------------------------- parsing


def _langchain() -> ModuleType:
    try:
        import langchain_core.messages as messages_module  # noqa: PLC0415  (optional extra)
    except ImportError as exc:
        raise AdapterUnavailableError("LangChain", "langchain-core", "langchain") from exc
    return messages_module


def _parse(messages: object, overhead: MessageOverhead) -> list[ParsedMessage]:
    lc = _langchain()
    history = expect_list(SOURCE, "messages", messages, limit=MAX_MESSAGES)
    tool_names: dict[str, str] = {}
    return [
        _parse_message(lc, index, raw, overhead, tool_names) for index, raw in enumerate(history)
    ]


def _parse_message(
    lc: ModuleType,
    index: int,
    message: object,
    overhead: MessageOverhead,
    tool_names: dict[str, str],
) -> ParsedMessage:
    where = f"messages[{index}]"
    if not isinstance(message, lc.BaseMessage):
        fail(SOURCE, where, "must be a langchain_core BaseMessage", message)
    name = expect_optional_str(SOURCE, f"{where}.name", getattr(message, "name", None))
    fixed = overhead.per_message + (overhead.per_name if name else 0)

    if isinstance(message, lc.AIMessage):
        calls = _tool_calls(message, where, tool_names)
        skip = {call.call_id for call, _ in calls}
        text, media = _content(message.content, f"{where}.content", overhead, skip)
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

    text, media = _content(message.content, f"{where}.content", overhead, set())
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
    content: object, where: str, overhead: MessageOverhead, skip_calls: set[str]
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
            media += overhead.image
        elif kind in _AUDIO_BLOCKS:
            texts.append("[audio]")
            media += overhead.media_cost("audio", at)
        elif kind in _FILE_BLOCKS:
            texts.append("[file]")
            media += overhead.media_cost("document", at)
        elif kind in _CALL_BLOCKS and block.get("id") in skip_calls:
            continue  # the same call is in tool_calls, counted there
        else:
            texts.append(as_json_text(dict(block)))
    return "\n".join(texts), media


# --------------------------------------------------------------------------- async


async def afit_messages(
    messages: Sequence[BaseMessage],
    *,
    budget: int | ContextBudget,
    counter: AsyncTokenCounter,
    policy: Policy | Pipeline | None = None,
    overhead: MessageOverhead | None = None,
    pin_system: bool = True,
    pin_latest_user: bool = True,
    timestamps: Sequence[datetime] | None = None,
    deduplicate: bool = False,
    unanswered_tool_calls: Literal["error", "drop"] = "error",
) -> FitResult[BaseMessage]:
    """:func:`fit_messages` with an asynchronous token counter (e.g. a wrapped count-tokens
    endpoint): every distinct text is counted in one awaited ``count_batch`` call."""
    return await afit(
        fit_messages,
        messages,
        counter,
        {
            "budget": budget,
            "policy": policy,
            "overhead": overhead,
            "pin_system": pin_system,
            "pin_latest_user": pin_latest_user,
            "timestamps": timestamps,
            "deduplicate": deduplicate,
            "unanswered_tool_calls": unanswered_tool_calls,
        },
    )
