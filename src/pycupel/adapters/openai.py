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
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Unpack

from pycupel.conversation.afit import afit
from pycupel.conversation.fit import (
    FitResult,
    allows_unanswered,
    fit_units,
    fitted_messages,
    resolve_counter,
    resolve_structure,
)
from pycupel.conversation.media import data_url_bytes, image_tokens
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

SOURCE = "openai messages"

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


def from_messages(
    messages: Sequence[OpenAIMessage],
    *,
    counter: TokenCounter | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    overhead: MessageOverhead | None = None,
    pin_system: bool = True,
    pin_latest_user: bool = True,
    timestamps: Sequence[datetime] | None = None,
    allow_unanswered: bool = False,
    repair: bool = False,
) -> MessageUnits[OpenAIMessage]:
    """Split an OpenAI chat history into units, one candidate item per unit.

    Args:
        messages: the history, as sent to the Chat Completions API (never modified).
        counter: counts message text; defaults to :class:`~pycupel.tokens.HeuristicCounter`.
        tools: the request's tool definitions (``tools=``), counted once per request as
            part of the prompt (their JSON text plus the provider's framing).
        overhead: fixed costs around the text; defaults to :data:`DEFAULT_OVERHEAD`.
        pin_system: pin ``system`` and ``developer`` messages.
        pin_latest_user: pin the unit holding the latest ``user`` message.
        timestamps: one aware datetime per message; by default synthetic, strictly
            increasing ones in message order (see :data:`~pycupel.adapters.SYNTHETIC_EPOCH`).
        allow_unanswered: keep a tool call nobody answers as a unit of its own instead of
            raising :class:`~pycupel.errors.MessageFormatError`; such a unit is flagged in
            ``unanswered_call_ids`` (OpenAI rejects a request holding it).
        repair: drop messages holding orphaned tool results (kept in ``repairs``) and
            allow unanswered calls instead of raising (see :mod:`pycupel.conversation.repair`).

    Returns:
        The units; ``.items`` are the candidates for a pipeline and :func:`to_messages` maps a
        selection of them back to messages.

    Raises:
        MessageFormatError: a malformed message, an orphaned tool result, a duplicate call id
            or (unless allowed) an unanswered tool call; the message names the location.
    """
    resolved = resolve_counter(counter)
    chosen = with_tools(
        overhead if overhead is not None else DEFAULT_OVERHEAD,
        tools,
        source=SOURCE,
        counter=resolved,
        framing=OPENAI_TOOLS,
    )
    parsed = _parse(messages, chosen)
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
    return MessageUnits("openai", tuple(messages), units, chosen, repairs=repairs)


def to_messages(
    selection: Iterable[ContextItem], units: MessageUnits[OpenAIMessage]
) -> list[OpenAIMessage]:
    """The messages of the selected units, in the original order.

    The list is new; its elements are your original message objects, untouched (unknown
    keys included). Copy them before mutating. ``to_messages(units.items, units)`` gives back
    the whole history.
    """
    return [
        units.messages[index] for unit in units.select(selection) for index in unit.message_indices
    ]


def count_tokens(
    messages: Sequence[OpenAIMessage],
    *,
    counter: TokenCounter | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    overhead: MessageOverhead | None = None,
) -> int:
    """Tokens of a whole request's messages, counted exactly as :func:`fit_messages` does.

    The per-request overhead is included, so ``count_tokens(fitted) <= budget`` holds for the
    output of :func:`fit_messages` with the same counter and overhead.
    """
    resolved = resolve_counter(counter)
    chosen = with_tools(
        overhead if overhead is not None else DEFAULT_OVERHEAD,
        tools,
        source=SOURCE,
        counter=resolved,
        framing=OPENAI_TOOLS,
    )
    parsed = _parse(messages, chosen)
    return count_parsed(parsed, resolved) + chosen.per_request


def fit_messages(
    messages: Sequence[OpenAIMessage],
    *,
    budget: int | ContextBudget,
    policy: Policy | Pipeline | None = None,
    counter: TokenCounter | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    overhead: MessageOverhead | None = None,
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
) -> FitResult[OpenAIMessage]:
    """Fit an OpenAI chat history into a token budget; return the history and the report.

    Args:
        messages: the history (never modified).
        budget: tokens for the whole prompt (an int: target = max = budget), or a
            :class:`~pycupel.ContextBudget` for an output reserve, a margin...
        policy: the selection policy, or a ready :class:`~pycupel.pipeline.Pipeline` (to give
            a decay scorer its clock, say). By default the selection is structure-aware:
            :func:`pycupel.presets.conversation` scores turns for ``query`` and the
            conversation's shape is kept (see :class:`~pycupel.adapters.Structure`). A given
            policy runs the ordinary pipeline, unless ``structure`` or ``keep_recent`` is
            given too.
        counter: defaults to :class:`~pycupel.tokens.HeuristicCounter`.
        tools: the request's tool definitions, counted as part of the prompt.
        overhead: defaults to :data:`DEFAULT_OVERHEAD`.
        pin_system: always keep ``system``/``developer`` messages.
        pin_latest_user: always keep the latest ``user`` message (and its unit).
        timestamps: one aware datetime per message. Time-decay policies need real ones: the
            synthetic default counts seconds from 2000-01-01 UTC, which a decay scorer reading
            today's clock sees as very old (recency scoring only uses the order).
        deduplicate: let the pipeline drop units whose rendered text is byte-identical. Off by
            default: two "ok" turns at different points of a chat are not duplicates.
        unanswered_tool_calls: ``"error"`` raises for a call nobody answers; ``"drop"`` leaves
            its unit out and reports it excluded with reason ``Filtered``.
        repair: fix what the provider rejects instead of raising, reporting each fix as a
            ``Filtered`` exclusion (see :mod:`pycupel.conversation.repair`).
        query: what the next answer is about; defaults to the text of the latest user
            message. Read by query-aware scorers (the default preset's relevance).
        keep_recent: tokens of the newest turns always kept, as an unbroken tail (shorthand
            for ``structure=Structure(keep_recent=...)``; by default 10% of the budget).
        structure: structure-aware selection options (a recent tail, neighbours, dated
            headers); the default when no policy is given.
        shrink: keep older tool results as placeholders (their calls whole) and long
            results and messages as head + tail truncations instead of dropping them (see
            :class:`~pycupel.adapters.Shrink`). ``None``: on for the structure-aware
            default, off with a given policy; ``True``/``False``: the default options on or
            off; a ``Shrink`` sets them (``keep_whole``, ``exclude_tools``...).
        summarize: a callback ``(dropped_messages, previous_summary) -> str`` (or a coroutine
            function): the fit keeps 10% of the budget for its text, which comes back as one
            user message opening with ``[Summary of the earlier conversation]``, right after
            the system messages. It receives the messages left out or shortened, as given.
        on_summary_error: ``"raise"`` (a failing summarizer raises
            :class:`~pycupel.errors.SummarizerError` naming it) or ``"skip"`` (the window
            comes back without the summary).

    Returns:
        ``FitResult(messages, report)``: the kept messages in the original order (a
        shortened message is a new dict with the same keys and ids), and the
        pipeline's :class:`~pycupel.diagnostics.SelectionReport` (a shortened unit is
        reported by its version's item; :func:`pycupel.adapters.variant_name` names it).

    Raises:
        MessageFormatError: malformed history.
        PinnedBudgetError: the pinned messages alone do not fit in the budget.
    """
    units = from_messages(
        messages,
        counter=counter,
        tools=tools,
        overhead=overhead,
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
        editor=_editor(units.overhead),
        counter=counter,
    )
    kept = fitted_messages(units, fitted)
    if summary is not None:
        dropped = dropped_messages(units, fitted)
        text = summary.text(dropped, None)
        message: OpenAIMessage = {"role": "user", "content": text}
        if text is not None and summary.fits(
            count_parsed(_parse([message], units.overhead), resolve_counter(counter)),
            len(dropped),
        ):
            kept = insert_after_system(
                kept, message, is_system=lambda m: m["role"] in ("system", "developer")
            )
    return FitResult(kept, fitted.report)


# --------------------------------------------------------------------------- sessions


class Session:
    """One conversation, fitted turn after turn into a cache-stable window.

    Call :meth:`fit` every turn with the whole history so far (the same list grown, or a new
    list with the same leading messages) and send ``window.messages``; then pass the
    response's ``usage`` to :meth:`record_usage` so that the token estimate follows what
    OpenAI counts. Between compactions each request extends the previous one message for
    message, which is what OpenAI's automatic prompt caching (prompts of 1,024 tokens and
    more, in 128-token steps) needs: there is nothing to mark. Pass a stable
    ``prompt_cache_key`` (one per conversation, or per shared system prompt) with the request
    so that requests of one conversation reach the same cache.

    See :mod:`pycupel.session.core` for the window's zones, compaction and recall. A session
    holds one conversation; its methods hold a lock, so sharing it between threads is safe
    but interleaving two conversations in it makes every turn an edit.

    Args:
        budget: tokens for the whole prompt, in OpenAI's count once usage is recorded.
        policy: chooses what a compaction keeps (a Policy or Pipeline; default
            :func:`pycupel.presets.chat`).
        counter: counts message text; defaults to the heuristic estimate.
        overhead: the chat format's fixed costs; defaults to :data:`DEFAULT_OVERHEAD`.
        compact_at: high watermark, as a share of ``budget``.
        compact_to: low watermark a compaction cuts down to.
        grid: compaction cut points are rounded up to a multiple of this many messages.
        recall_share: the largest share of ``budget`` the recall zone may take (0 disables it).
        compact_for_recall: compact early, for the latest user message, when its best
            match does not fit the recall zone (relevance pressure).
        recall_every_turn: re-decide the recall zone for every new user message. By default
            it is re-decided for a message that asks something (holds a question mark) or
            whose best match lies outside the window, far above the best inside; other
            messages leave the zone in place, so their requests extend the previous one.
        pin_system: always keep ``system``/``developer`` messages.
        shrink: what a compaction may keep shorter instead of dropping: ``True`` (the default
            :class:`~pycupel.adapters.Shrink`: older tool results as placeholders after their
            calls, long ones as head + tail truncations) or a ``Shrink`` (``keep_whole``,
            ``exclude_tools``...); off by default. The shorter versions are made once per
            compaction and sent unchanged until the next one (see
            :mod:`pycupel.session.shrink`).
        summarize: a callback ``(dropped_messages, previous_summary) -> str`` (or a
            coroutine function, awaited by :meth:`afit`), called only at a compaction with
            the messages it leaves out or shortens; its text is one user message opening with
            ``[Summary of the earlier conversation]`` right after the system prompt, and the
            previous text is passed back in so repeated compactions fold into one message
            (see :mod:`pycupel.session.summary`). A compaction keeps 10% of the budget for it.
        on_summary_error: ``"raise"`` (:class:`~pycupel.errors.SummarizerError`) or
            ``"skip"`` (the previous summary stays).

    Raises:
        SessionConfigError: an invalid setting.
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

        def parse(index: int, raw: OpenAIMessage, state: ParseState) -> ParsedMessage:
            return _parse_message(index, raw, chosen, state.tool_names, state.pending)

        self._core: SessionCore[OpenAIMessage] = SessionCore(
            MessageFormat(
                "openai",
                SOURCE,
                chosen,
                parse=parse,
                snapshot=snapshot_json,
                editor=_editor(chosen),
                summary_message=_summary_message,
            ),
            budget=budget,
            **options,
        )

    def fit(self, messages: Sequence[OpenAIMessage]) -> SessionWindow[OpenAIMessage]:
        """This turn's window for the whole history so far.

        Raises:
            MessageFormatError: a malformed message, or a tool call without its result.
            PinnedBudgetError: the system prompt and latest user turn alone do not fit.
        """
        return self._core.fit(messages).window(messages)

    async def afit(
        self, messages: Sequence[OpenAIMessage], *, counter: AsyncTokenCounter
    ) -> SessionWindow[OpenAIMessage]:
        """:meth:`fit` with the new messages counted by an asynchronous token counter (a
        wrapped count-tokens endpoint, say): one awaited ``count_batch`` call per turn for
        the texts this turn adds. Raises what :meth:`fit` raises.
        """
        window = await self._core.afit(messages, counter)
        return window.window(messages)

    def record_usage(self, usage: object) -> ProviderUsage:
        """Calibrate with ``response.usage`` (Chat Completions or Responses, object or dict).

        Raises:
            ProviderUsageError: not a usage object, or a negative or non-integer count.
            SessionConfigError: no window was fitted yet, or its usage was already recorded.
        """
        return self._core.record_usage(usage)


def _summary_message(text: str) -> OpenAIMessage:
    return {"role": "user", "content": text}


# --------------------------------------------------------------------------- parsing


def _parse(messages: object, overhead: MessageOverhead) -> list[ParsedMessage]:
    history = expect_list(SOURCE, "messages", messages, limit=MAX_MESSAGES)
    parsed: list[ParsedMessage] = []
    tool_names: dict[str, str] = {}
    legacy_pending: list[str] = []
    for index, raw in enumerate(history):
        quick = _plain_message(index, raw, overhead) if type(raw) is dict else None
        parsed.append(quick or _parse_message(index, raw, overhead, tool_names, legacy_pending))
    return parsed


def _parse_message(
    index: int,
    raw: object,
    overhead: MessageOverhead,
    tool_names: dict[str, str],
    legacy_pending: list[str],
) -> ParsedMessage:
    where = f"messages[{index}]"
    message = expect_mapping(SOURCE, where, raw)
    role = message.get("role")
    # A non-string role (a JSON object or array) is unhashable: test the type first.
    if not isinstance(role, str) or role not in _CATEGORIES:
        fail(SOURCE, f"{where}.role", f"must be one of {', '.join(_CATEGORIES)}", role)
    assert isinstance(role, str)
    name = expect_optional_str(SOURCE, f"{where}.name", message.get("name"))
    fixed = overhead.per_message + (overhead.per_name if name else 0)

    content = message.get("content")
    if role == "assistant":
        text, media = _content(content, f"{where}.content", overhead, optional=True)
        pieces = [text] if text else []
        refusal = expect_optional_str(SOURCE, f"{where}.refusal", message.get("refusal"))
        if refusal:
            pieces.append(refusal)
        calls = _tool_calls(message, where, tool_names, legacy_pending)
        pieces.extend(f"{call.name}({arguments})" for call, arguments in calls)
        if message.get("audio") is not None:
            expect_mapping(SOURCE, f"{where}.audio", message.get("audio"))
            media += overhead.media_cost("audio", f"{where}.audio")
        return ParsedMessage(
            index=index,
            role=role,
            category="assistant",
            text="\n".join(pieces),
            fixed_tokens=fixed + media + overhead.per_tool_call * len(calls),
            calls=tuple(call for call, _ in calls),
            name=name,
            tool_names=tuple(call.name for call, _ in calls),
        )

    text, media = _content(content, f"{where}.content", overhead, optional=False)
    if role == "tool":
        call_id = expect_id(SOURCE, f"{where}.tool_call_id", message.get("tool_call_id"))
        tool = tool_names.get(call_id)
        return ParsedMessage(
            index=index,
            role=role,
            category="tool",
            text=text,
            fixed_tokens=fixed + media,
            answers=(AnswerRef(call_id, f"{where}.tool_call_id"),),
            name=name,
            label=f"tool ({tool})" if tool else "tool",
            tool_names=(tool,) if tool else (),
        )
    if role == "function":
        function_name = expect_str(SOURCE, f"{where}.name", name, non_empty=True)
        if not legacy_pending:
            fail(
                SOURCE,
                where,
                "a 'function' message must answer an earlier assistant function_call "
                "(orphaned legacy function result)",
            )
        call_id = legacy_pending.pop()
        return ParsedMessage(
            index=index,
            role=role,
            category="tool",
            text=text,
            fixed_tokens=fixed + media,
            answers=(AnswerRef(call_id, where),),
            name=function_name,
            tool_names=(function_name,),
        )
    return ParsedMessage(
        index=index,
        role=role,
        category=_CATEGORIES[role],
        text=text,
        fixed_tokens=fixed + media,
        user_turn=role == "user",
        name=name,
    )


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
    message: Mapping[str, Any],
    where: str,
    tool_names: dict[str, str],
    legacy_pending: list[str],
) -> list[tuple[CallRef, str]]:
    """The calls an assistant message issues, each with its rendered arguments."""
    calls: list[tuple[CallRef, str]] = []
    raw_calls = message.get("tool_calls")
    if raw_calls is not None:
        entries = expect_list(
            SOURCE, f"{where}.tool_calls", raw_calls, limit=MAX_TOOL_CALLS_PER_MESSAGE
        )
        for position, raw in enumerate(entries):
            at = f"{where}.tool_calls[{position}]"
            call = expect_mapping(SOURCE, at, raw)
            call_id = expect_id(SOURCE, f"{at}.id", call.get("id"))
            kind = call.get("type")
            if kind == "function":
                body = expect_mapping(SOURCE, f"{at}.function", call.get("function"))
                arguments = expect_str(SOURCE, f"{at}.function.arguments", body.get("arguments"))
                name_at = f"{at}.function.name"
            elif kind == "custom":
                body = expect_mapping(SOURCE, f"{at}.custom", call.get("custom"))
                arguments = expect_str(SOURCE, f"{at}.custom.input", body.get("input"))
                name_at = f"{at}.custom.name"
            else:
                fail(SOURCE, f"{at}.type", "must be 'function' or 'custom'", kind)
            name = expect_str(SOURCE, name_at, body.get("name"), non_empty=True)
            tool_names[call_id] = name
            calls.append((CallRef(call_id, f"{at}.id", name), arguments))
    legacy = message.get("function_call")
    if legacy is not None:
        at = f"{where}.function_call"
        body = expect_mapping(SOURCE, at, legacy)
        name = expect_str(SOURCE, f"{at}.name", body.get("name"), non_empty=True)
        arguments = expect_str(SOURCE, f"{at}.arguments", body.get("arguments"))
        # Legacy calls have no id: the next 'function' message answers the latest open one.
        call_id = f"<function_call at {where}>"
        legacy_pending.append(call_id)
        calls.append((CallRef(call_id, at, name), arguments))
    return calls


def _content(
    content: object, where: str, overhead: MessageOverhead, *, optional: bool
) -> tuple[str, int]:
    """The visible text of a content value and the fixed cost of its media parts."""
    if isinstance(content, str):
        return content, 0
    if content is None:
        if optional:
            return "", 0
        fail(SOURCE, where, "must be a string or a list of content parts", content)
    parts = expect_list(SOURCE, where, content, limit=MAX_PARTS_PER_MESSAGE)
    texts: list[str] = []
    media = 0
    for position, raw in enumerate(parts):
        at = f"{where}[{position}]"
        part = expect_mapping(SOURCE, at, raw)
        kind = expect_str(SOURCE, f"{at}.type", part.get("type"), non_empty=True)
        if kind in ("text", "refusal"):
            texts.append(expect_str(SOURCE, f"{at}.{kind}", part.get(kind)))
        elif kind == "image_url":
            image = expect_mapping(SOURCE, f"{at}.image_url", part.get("image_url"))
            texts.append("[image]")
            media += _image_cost(image, f"{at}.image_url", overhead)
        elif kind == "input_audio":
            audio = expect_mapping(SOURCE, f"{at}.input_audio", part.get("input_audio"))
            texts.append("[audio]")
            media += audio_tokens("openai", audio.get("data"), overhead, at)
        elif kind == "file":
            file = expect_mapping(SOURCE, f"{at}.file", part.get("file"))
            texts.append("[file]")
            media += document_tokens("openai", file.get("file_data"), overhead, at)
        elif kind in _ANTHROPIC_BLOCKS:
            # Accepted silently, a tool result would lose its pairing with its call.
            fail(
                SOURCE,
                f"{at}.type",
                f"is an Anthropic content block; OpenAI messages carry {_ANTHROPIC_BLOCKS[kind]} "
                "(use pycupel.adapters.anthropic for Anthropic histories)",
                kind,
            )
        else:
            # Unknown part types are counted as their JSON text: an over-estimate is safe.
            texts.append(as_json_text(dict(part)))
    return "\n".join(texts), media


def _image_cost(image: Mapping[str, Any], at: str, overhead: MessageOverhead) -> int:
    """An image's tokens from its pixel size (read from a data URL or given in the
    overhead's ``image_sizes``), else the fixed estimate."""
    url = expect_str(SOURCE, f"{at}.url", image.get("url"))
    detail = image.get("detail", "auto")
    if detail not in ("auto", "low", "high", "original"):
        fail(SOURCE, f"{at}.detail", "must be 'auto', 'low', 'high' or 'original'", detail)
    return image_tokens(
        "openai",
        data=data_url_bytes(url),
        reference=url,
        sizes=overhead.image_sizes,
        fallback=overhead.image,
        detail=detail,
    )


# --------------------------------------------------------------------------- versions


def _editor(overhead: MessageOverhead) -> Editor[OpenAIMessage]:
    def parse(messages: Sequence[OpenAIMessage]) -> list[ParsedMessage]:
        return _parse(list(messages), overhead)

    def rewrite(messages: Sequence[OpenAIMessage], replace: Replace) -> list[OpenAIMessage] | None:
        return _rewrite(messages, replace, overhead)

    return Editor(rewrite=rewrite, parse=parse)


def _rewrite(
    messages: Sequence[OpenAIMessage], replace: Replace, overhead: MessageOverhead
) -> list[OpenAIMessage] | None:
    """The unit's messages with their tool results (and plain string contents) replaced as
    ``replace`` says; ``tool_call_id``, ``name`` and every other key are kept."""
    names: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            body = call.get("function") or call.get("custom") or {}
            names[call["id"]] = body.get("name", "")
    rewritten: list[OpenAIMessage] = []
    changed = False
    for position, message in enumerate(messages):
        role = message["role"]
        content = message.get("content")
        new_text: str | None = None
        if role in ("tool", "function"):
            text, _ = _content(content, f"messages[{position}].content", overhead, optional=False)
            tool = names.get(message.get("tool_call_id", ""), "") if role == "tool" else None
            new_text = replace(tool if tool is not None else message.get("name", ""), text)
        elif role in ("user", "assistant") and isinstance(content, str) and content:
            new_text = replace(None, content)
        if new_text is None:
            rewritten.append(message)
        else:
            rewritten.append({**message, "content": new_text})
            changed = True
    return rewritten if changed else None


# --------------------------------------------------------------------------- async


class FitOptions(_FitOptions, total=False):
    """:func:`fit_messages`' keyword options (all but ``counter``), which
    :func:`afit_messages` takes and passes on."""

    tools: Sequence[Mapping[str, Any]] | None


async def afit_messages(
    messages: Sequence[OpenAIMessage],
    *,
    counter: AsyncTokenCounter,
    **options: Unpack[FitOptions],
) -> FitResult[OpenAIMessage]:
    """:func:`fit_messages` with an asynchronous token counter (e.g. a wrapped count-tokens
    endpoint): every distinct text is counted in one awaited ``count_batch`` call, and a
    coroutine ``summarize`` callback is awaited (called once, with what the fit drops).
    Takes every option of :func:`fit_messages` (see :class:`FitOptions`)."""
    return await afit(fit_messages, messages, counter, options)
