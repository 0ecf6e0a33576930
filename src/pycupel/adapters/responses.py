"""OpenAI Responses API input in, a smaller valid input out.

Input is what you would pass to ``client.responses.create``: ``input`` (a plain string, or a
list of input items) and, optionally, ``instructions``. Items are plain mappings:

* **messages**: ``{"role": ..., "content": ...}`` with ``"type": "message"`` or no type; roles
  ``user``, ``assistant``, ``system`` and ``developer``; content a string or a list of parts
  (``input_text``, ``output_text``, ``refusal``, ``input_image``, ``input_file``,
  ``input_audio``);
* **tool calls and their outputs**, linked by ``call_id``: ``function_call`` /
  ``function_call_output``, ``custom_tool_call`` / ``custom_tool_call_output``,
  ``computer_call`` / ``computer_call_output``, ``shell_call`` / ``shell_call_output``,
  ``apply_patch_call`` / ``apply_patch_call_output``, and ``mcp_approval_request`` /
  ``mcp_approval_response`` (linked by ``id`` / ``approval_request_id``);
* **reasoning** items (``summary``, ``content``, ``encrypted_content``);
* any other item type (``web_search_call``, ``file_search_call``, ``mcp_call``,
  ``item_reference``...), kept as a unit of its own and counted as its JSON text.

How the history is split:

* ``instructions`` becomes a ``SystemPrompt`` item, pinned by default, like ``system`` and
  ``developer`` messages.
* Every item from a call up to the output answering it forms one unit (kind ``ToolOutput``);
  parallel calls and their outputs, in any order, share one unit. The API rejects an output
  without its call and (in a request) a call without its output, so a unit is kept or dropped
  whole.
* A ``reasoning`` item stays with the item that follows it (the call or message it led to):
  the API rejects a reasoning item sent without its following item.
* The latest ``user`` message is the latest user turn, pinned by default.
* A plain-string ``input`` is one user message; :func:`to_messages` gives the same string back
  when it is selected.

Token counting follows :mod:`pycupel.adapters.openai` (the same model family and chat format):
4 tokens per message or item, an estimated 6 per call or call output, 3 per request, and 765
per image (1024x1024 at high detail). Reasoning items are counted as their summary and
reasoning text; ``encrypted_content`` is opaque and not counted as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Unpack, cast

from pycupel.conversation.afit import afit
from pycupel.conversation.fit import (
    allows_unanswered,
    fit_units,
    resolve_counter,
    resolve_structure,
    with_variants,
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
from pycupel.conversation.units import MessageUnit, MessageUnits
from pycupel.conversation.validate import (
    MAX_MESSAGES,
    MAX_PARTS_PER_MESSAGE,
    as_json_text,
    expect_id,
    expect_list,
    expect_mapping,
    expect_optional_str,
    expect_str,
    fail,
)
from pycupel.conversation.versions import Editor, Replace, Shrink, resolve_shrink
from pycupel.diagnostics import SelectionReport
from pycupel.model import ContextBudget, ContextItem
from pycupel.pipeline import Pipeline
from pycupel.session import (
    CoreWindow,
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
    "ResponsesFitResult",
    "ResponsesHistory",
    "Session",
    "afit_messages",
    "count_tokens",
    "fit_messages",
    "from_messages",
    "to_messages",
]

SOURCE = "openai responses input"

DEFAULT_OVERHEAD = MessageOverhead(per_message=4, per_tool_call=6, per_request=3, image=765)
"""Approximates OpenAI's format, as :data:`pycupel.adapters.openai.DEFAULT_OVERHEAD` does."""

ResponseItem = Mapping[str, Any]
ResponsesInput = str | Sequence[ResponseItem]

_ROLES: Mapping[str, Category] = MappingProxyType(
    {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
)


@dataclass(frozen=True, slots=True)
class _CallShape:
    """How one kind of call names its id, and which item type answers it."""

    id_key: str
    answer_type: str
    answer_id_key: str


_CALLS: Mapping[str, _CallShape] = MappingProxyType(
    {
        "function_call": _CallShape("call_id", "function_call_output", "call_id"),
        "custom_tool_call": _CallShape("call_id", "custom_tool_call_output", "call_id"),
        "computer_call": _CallShape("call_id", "computer_call_output", "call_id"),
        "shell_call": _CallShape("call_id", "shell_call_output", "call_id"),
        "apply_patch_call": _CallShape("call_id", "apply_patch_call_output", "call_id"),
        "mcp_approval_request": _CallShape("id", "mcp_approval_response", "approval_request_id"),
    }
)
_ANSWERS: Mapping[str, str] = MappingProxyType(
    {shape.answer_type: shape.answer_id_key for shape in _CALLS.values()}
)
# Keys that identify or track an item but are not shown to the model.
_BOOKKEEPING = frozenset({"id", "status", "type", "call_id", "encrypted_content"})


@dataclass(frozen=True, slots=True)
class _Origin:
    """What ``from_messages`` was given beside the items: the instructions, and whether the
    input was a plain string."""

    instructions: str | None
    plain_string: bool


class ResponsesHistory(NamedTuple):
    """The ``instructions`` (``None`` when absent or not selected) and the ``input``."""

    instructions: str | None
    input: str | list[ResponseItem]


class ResponsesFitResult(NamedTuple):
    """What :func:`fit_messages` returns; unpacks as ``instructions, input, report``."""

    instructions: str | None
    """The instructions as given, or ``None`` when there were none."""
    input: str | list[ResponseItem]
    """The fitted input: your original items in order (a plain-string input comes back as
    the string)."""
    report: SelectionReport
    """Why every unit was included or excluded."""


def from_messages(
    messages: ResponsesInput,
    *,
    instructions: str | None = None,
    counter: TokenCounter | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    overhead: MessageOverhead | None = None,
    pin_system: bool = True,
    pin_latest_user: bool = True,
    timestamps: Sequence[datetime] | None = None,
    allow_unanswered: bool = False,
    repair: bool = False,
) -> MessageUnits[Any]:
    """Split a Responses ``input`` (and its ``instructions``) into units, one item per unit.

    Args:
        messages: the request's ``input``: a string or a list of items (never modified).
        instructions: the request's ``instructions``.
        counter: counts text; defaults to :class:`~pycupel.tokens.HeuristicCounter`.
        tools: the request's tool definitions (``tools=``), counted once per request as
            part of the prompt (their JSON text plus the provider's framing).
        overhead: fixed costs around the text; defaults to :data:`DEFAULT_OVERHEAD`.
        pin_system: pin the instructions and ``system``/``developer`` messages.
        pin_latest_user: pin the unit holding the latest ``user`` message.
        timestamps: one aware datetime per item (the instructions take the oldest); by
            default synthetic, strictly increasing ones in item order.
        allow_unanswered: keep a call nobody answers as a flagged unit instead of raising.
        repair: drop messages holding orphaned tool results (kept in ``repairs``) and
            allow unanswered calls instead of raising (see :mod:`pycupel.conversation.repair`).

    Raises:
        MessageFormatError: a malformed item, an output answering no earlier call, a call id
            used twice or (unless allowed) an unanswered call; the message names the location.
    """
    resolved = resolve_counter(counter)
    chosen = with_tools(
        overhead if overhead is not None else DEFAULT_OVERHEAD,
        tools,
        source=SOURCE,
        counter=resolved,
        framing=OPENAI_TOOLS,
    )
    parsed, items = _parse(messages, instructions, chosen)
    units, repairs = group_units(
        parsed,
        repair=repair,
        source=SOURCE,
        counter=resolved,
        message_count=len(items),
        pin_system=pin_system,
        pin_latest_user=pin_latest_user,
        timestamps=timestamps,
        allow_unanswered=allow_unanswered,
    )
    # The instructions and the input's form travel in ``system``: a plain string comes back
    # as the string.
    return MessageUnits(
        "responses",
        items,
        units,
        chosen,
        system=_Origin(instructions, isinstance(messages, str)),
        repairs=repairs,
    )


def to_messages(selection: Iterable[ContextItem], units: MessageUnits[Any]) -> ResponsesHistory:
    """The instructions and input items of the selected units, in the original order.

    The item list is new; its elements are your original item objects. A plain-string input
    comes back as the string when selected (an empty list otherwise).
    """
    return _history(units.select(selection), units)


def count_tokens(
    messages: ResponsesInput,
    *,
    instructions: str | None = None,
    counter: TokenCounter | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    overhead: MessageOverhead | None = None,
) -> int:
    """Tokens of a request's instructions and input, counted as :func:`fit_messages` does."""
    resolved = resolve_counter(counter)
    chosen = with_tools(
        overhead if overhead is not None else DEFAULT_OVERHEAD,
        tools,
        source=SOURCE,
        counter=resolved,
        framing=OPENAI_TOOLS,
    )
    parsed, _ = _parse(messages, instructions, chosen)
    return count_parsed(parsed, resolved) + chosen.per_request


def fit_messages(
    messages: ResponsesInput,
    *,
    instructions: str | None = None,
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
) -> ResponsesFitResult:
    """Fit a Responses input (and instructions) into a token budget.

    Args:
        messages: the request's ``input`` (never modified).
        instructions: the request's ``instructions``.
        budget: tokens for the whole prompt (instructions + input), or a ContextBudget.
        policy: the selection policy (or a Pipeline); defaults to :func:`pycupel.presets.chat`.
        counter, tools, overhead, pin_system, pin_latest_user, timestamps: as for
            :func:`from_messages`.
        deduplicate: let the pipeline drop units whose rendered text is byte-identical.
        unanswered_tool_calls: ``"error"`` raises for a call nobody answers; ``"drop"``
            leaves its unit out, reported with reason ``Filtered``.
        repair: fix what the provider rejects instead of raising, reporting each fix as a
            ``Filtered`` exclusion (see :mod:`pycupel.conversation.repair`).
        query, keep_recent, structure: as for :func:`pycupel.adapters.openai.fit_messages`
            (structure-aware selection for the query by default).
        shrink: as for :func:`pycupel.adapters.openai.fit_messages` (older tool results
            kept as placeholders, long ones truncated; on by default without a policy).
        summarize, on_summary_error: as for :func:`pycupel.adapters.openai.fit_messages`
            (a summary of what was left out, right after the system prompt).

    Returns:
        ``ResponsesFitResult(instructions, input, report)``, ready for
        ``client.responses.create(instructions=..., input=...)``.

    Raises:
        MessageFormatError: malformed input.
        PinnedBudgetError: the pinned units alone do not fit.
    """
    units = from_messages(
        messages,
        instructions=instructions,
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
    history = _history(fitted.units, with_variants(units, fitted))
    fitted_input = history.input
    if summary is not None and not isinstance(fitted_input, str):
        dropped = dropped_messages(units, fitted)
        text = summary.text(dropped, None)
        item: ResponseItem = {"role": "user", "content": text}
        if text is not None and summary.fits(
            count_parsed(_parse([item], None, units.overhead)[0], resolve_counter(counter)),
            len(dropped),
        ):
            fitted_input = insert_after_system(
                fitted_input, item, is_system=lambda i: i.get("role") in ("system", "developer")
            )
    return ResponsesFitResult(history.instructions, fitted_input, fitted.report)


# --------------------------------------------------------------------------- sessions


class Session:
    """One conversation of Responses input items, fitted turn after turn into a cache-stable
    window.

    Call :meth:`fit` every turn with the whole input so far (the same list grown) and the
    instructions, then send ``instructions=window.system, input=window.messages`` and pass
    ``response.usage`` to :meth:`record_usage`. Arguments, caching (a stable
    ``prompt_cache_key``; nothing to mark), behaviour and thread rules are those of
    :class:`pycupel.adapters.openai.Session`. A plain-string input is one user message; the
    window then holds that message as an item.
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

        def parse(index: int, raw: ResponseItem, state: ParseState) -> ParsedMessage:
            return _parse_item(index, raw, chosen, state.tool_names)

        def parse_system(instructions: object) -> ParsedMessage:
            return _parse_instructions(instructions, chosen)

        self._core: SessionCore[ResponseItem] = SessionCore(
            MessageFormat(
                "responses",
                SOURCE,
                chosen,
                parse=parse,
                snapshot=snapshot_json,
                parse_system=parse_system,
                editor=_editor(chosen),
                summary_message=_summary_message,
            ),
            budget=budget,
            **options,
        )

    def fit(
        self, messages: ResponsesInput, *, instructions: str | None = None
    ) -> SessionWindow[ResponseItem]:
        """This turn's window: ``window.system`` (the instructions) and ``window.messages``
        (the input items) to send.

        Raises:
            MessageFormatError: a malformed item, or a call without its output.
            PinnedBudgetError: the instructions and latest user turn alone do not fit.
        """
        items = _input_items(messages)
        return _window(items, instructions, self._core.fit(items, instructions))

    async def afit(
        self,
        messages: ResponsesInput,
        *,
        instructions: str | None = None,
        counter: AsyncTokenCounter,
    ) -> SessionWindow[ResponseItem]:
        """:meth:`fit` with the new items counted by an asynchronous token counter: one
        awaited ``count_batch`` call per turn for the texts this turn adds."""
        items = _input_items(messages)
        window = await self._core.afit(items, counter, instructions)
        return _window(items, instructions, window)

    def record_usage(self, usage: object) -> ProviderUsage:
        """Calibrate with ``response.usage`` (``input_tokens`` with
        ``input_tokens_details.cached_tokens``; an object or a dict).

        Raises:
            ProviderUsageError: not a usage object, or a negative or non-integer count.
            SessionConfigError: no window was fitted yet, or its usage was already recorded.
        """
        return self._core.record_usage(usage)


def _input_items(messages: object) -> Sequence[ResponseItem]:
    if isinstance(messages, str):
        return ({"role": "user", "content": messages},)
    return cast("Sequence[ResponseItem]", messages)  # checked item by item when parsed


def _summary_message(text: str) -> ResponseItem:
    return {"role": "user", "content": text}


def _window(
    items: Sequence[ResponseItem], instructions: str | None, window: CoreWindow
) -> SessionWindow[ResponseItem]:
    sent = window.window(items)
    has_system = any(unit.system_parameter for unit in window.units)
    return replace(sent, system=instructions if has_system else None)


# --------------------------------------------------------------------------- rebuilding


def _history(chosen: Sequence[MessageUnit], units: MessageUnits[Any]) -> ResponsesHistory:
    origin = units.system
    assert isinstance(origin, _Origin)  # set by from_messages
    instructions: str | None = None
    items: list[ResponseItem] = []
    for unit in chosen:
        if unit.system_parameter:
            instructions = origin.instructions
        items.extend(units.messages[index] for index in unit.message_indices)
    if origin.plain_string and items:
        return ResponsesHistory(instructions, items[0]["content"])
    return ResponsesHistory(instructions, items)


# --------------------------------------------------------------------------- versions


def _editor(overhead: MessageOverhead) -> Editor[ResponseItem]:
    def parse(items: Sequence[ResponseItem]) -> list[ParsedMessage]:
        return _parse(list(items), None, overhead)[0]

    def rewrite(items: Sequence[ResponseItem], replace: Replace) -> list[ResponseItem] | None:
        return _rewrite(items, replace, overhead)

    return Editor(rewrite=rewrite, parse=parse)


_SHRINKABLE_OUTPUTS = frozenset(
    {"function_call_output", "custom_tool_call_output", "apply_patch_call_output"}
)


def _rewrite(
    items: Sequence[ResponseItem], replace: Replace, overhead: MessageOverhead
) -> list[ResponseItem] | None:
    """The unit's items with each text tool output (and each plain string message content)
    replaced as ``replace`` says; ``call_id`` and every other key are kept."""
    names = {
        item["call_id"]: str(item.get("name", ""))
        for item in items
        if item.get("type") in _CALLS and "call_id" in item
    }
    rewritten: list[ResponseItem] = []
    changed = False
    for position, item in enumerate(items):
        kind = item.get("type")
        new_item = item
        if kind in _SHRINKABLE_OUTPUTS:
            text, _ = _output_content(kind, item, f"input[{position}]", overhead)
            new_text = replace(names.get(item["call_id"], ""), text)
            if new_text is not None:
                new_item = {**item, "output": new_text}
        elif kind in (None, "message") and isinstance(item.get("content"), str):
            new_text = replace(None, item["content"]) if item["content"] else None
            if new_text is not None:
                new_item = {**item, "content": new_text}
        changed = changed or new_item is not item
        rewritten.append(new_item)
    return rewritten if changed else None


# --------------------------------------------------------------------------- parsing


def _parse(
    messages: object, instructions: object, overhead: MessageOverhead
) -> tuple[list[ParsedMessage], tuple[ResponseItem, ...]]:
    parsed: list[ParsedMessage] = []
    if instructions is not None:
        parsed.append(_parse_instructions(instructions, overhead))
    if isinstance(messages, str):
        items: tuple[ResponseItem, ...] = ({"role": "user", "content": messages},)
    else:
        items = tuple(expect_list(SOURCE, "input", messages, limit=MAX_MESSAGES))
    tool_names: dict[str, str] = {}
    for index, raw in enumerate(items):
        parsed.append(_parse_item(index, raw, overhead, tool_names))
    return parsed, items


def _parse_instructions(instructions: object, overhead: MessageOverhead) -> ParsedMessage:
    text = expect_str(SOURCE, "instructions", instructions)
    return ParsedMessage(
        index=None,
        role="instructions",
        category="system",
        text=text,
        fixed_tokens=overhead.per_message,
    )


def _parse_item(
    index: int, raw: object, overhead: MessageOverhead, tool_names: dict[str, str]
) -> ParsedMessage:
    where = f"input[{index}]"
    item = expect_mapping(SOURCE, where, raw)
    kind = item.get("type")
    if kind is None or kind == "message":
        return _parse_message(index, where, item, overhead)
    if not isinstance(kind, str) or not kind:
        fail(SOURCE, f"{where}.type", "must be a non-empty string", kind)
    if kind in _CALLS:
        shape = _CALLS[kind]
        call_id = expect_id(SOURCE, f"{where}.{shape.id_key}", item.get(shape.id_key))
        name = _call_name(kind, item, where)
        tool_names[call_id] = name
        return ParsedMessage(
            index=index,
            role=kind,
            category="assistant",
            text=_call_text(kind, name, item, where),
            fixed_tokens=overhead.per_message + overhead.per_tool_call,
            calls=(CallRef(call_id, f"{where}.{shape.id_key}", name),),
            tool_names=(name,),
        )
    if kind in _ANSWERS:
        key = _ANSWERS[kind]
        call_id = expect_id(SOURCE, f"{where}.{key}", item.get(key))
        text, media = _output_content(kind, item, where, overhead)
        tool = tool_names.get(call_id)
        return ParsedMessage(
            index=index,
            role=kind,
            category="tool",
            text=text,
            fixed_tokens=overhead.per_message + overhead.per_tool_call + media,
            answers=(AnswerRef(call_id, f"{where}.{key}"),),
            label=f"{kind} ({tool})" if tool else kind,
            tool_names=(tool,) if tool else (),
        )
    if kind == "reasoning":
        return ParsedMessage(
            index=index,
            role=kind,
            category="assistant",
            text=_reasoning_text(item, where),
            fixed_tokens=overhead.per_message,
            joins_next=True,
        )
    if kind == "image_generation_call":
        # ``result`` is the generated image in base64: an image, never text.
        shown = {key: value for key, value in item.items() if key not in _BOOKKEEPING}
        shown.pop("result", None)
        return ParsedMessage(
            index=index,
            role=kind,
            category="assistant",
            text=as_json_text(shown),
            fixed_tokens=overhead.per_message + (overhead.image if item.get("result") else 0),
        )
    # Other items (hosted tool calls, references...) are counted as their JSON text.
    shown = {key: value for key, value in item.items() if key not in _BOOKKEEPING}
    return ParsedMessage(
        index=index,
        role=kind,
        category="assistant",
        text=as_json_text(shown),
        fixed_tokens=overhead.per_message,
    )


def _parse_message(
    index: int, where: str, item: Mapping[str, Any], overhead: MessageOverhead
) -> ParsedMessage:
    role = item.get("role")
    if not isinstance(role, str) or role not in _ROLES:
        fail(SOURCE, f"{where}.role", f"must be one of {', '.join(_ROLES)}", role)
    text, media = _content(item.get("content"), f"{where}.content", overhead)
    return ParsedMessage(
        index=index,
        role=role,
        category=_ROLES[role],
        text=text,
        fixed_tokens=overhead.per_message + media,
        user_turn=role == "user",
    )


def _call_name(kind: str, item: Mapping[str, Any], where: str) -> str:
    if kind in ("function_call", "custom_tool_call", "mcp_approval_request"):
        return expect_str(SOURCE, f"{where}.name", item.get("name"), non_empty=True)
    return kind.removesuffix("_call")  # computer, shell, apply_patch


def _call_text(kind: str, name: str, item: Mapping[str, Any], where: str) -> str:
    if kind in {"function_call", "mcp_approval_request"}:
        arguments = expect_str(SOURCE, f"{where}.arguments", item.get("arguments"))
        return f"{name}({arguments})"
    if kind == "custom_tool_call":
        return f"{name}({expect_str(SOURCE, f'{where}.input', item.get('input'))})"
    shown = {key: value for key, value in item.items() if key not in _BOOKKEEPING}
    return f"{name}({as_json_text(shown)})"


def _output_content(
    kind: str, item: Mapping[str, Any], where: str, overhead: MessageOverhead
) -> tuple[str, int]:
    if kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        if isinstance(output, str):
            return output, 0
        return _content(output, f"{where}.output", overhead)
    if kind == "computer_call_output":
        screenshot = expect_mapping(SOURCE, f"{where}.output", item.get("output"))
        return "[screenshot]", _image_cost(screenshot, overhead)
    if kind == "apply_patch_call_output":
        output = expect_optional_str(SOURCE, f"{where}.output", item.get("output"))
        return output or "", 0
    shown = {
        key: value
        for key, value in item.items()
        if key not in _BOOKKEEPING and key != "approval_request_id"
    }
    return as_json_text(shown), 0


def _reasoning_text(item: Mapping[str, Any], where: str) -> str:
    texts: list[str] = []
    for key in ("summary", "content"):
        value = item.get(key)
        if value is None:
            continue
        parts = expect_list(SOURCE, f"{where}.{key}", value, limit=MAX_PARTS_PER_MESSAGE)
        for position, raw in enumerate(parts):
            at = f"{where}.{key}[{position}]"
            part = expect_mapping(SOURCE, at, raw)
            texts.append(expect_str(SOURCE, f"{at}.text", part.get("text")))
    encrypted = item.get("encrypted_content")
    if encrypted is not None:
        expect_str(SOURCE, f"{where}.encrypted_content", encrypted)
    return "\n".join(texts)


def _content(content: object, where: str, overhead: MessageOverhead) -> tuple[str, int]:
    """The visible text of a message's content and the fixed cost of its media parts."""
    if isinstance(content, str):
        return content, 0
    parts = expect_list(SOURCE, where, content, limit=MAX_PARTS_PER_MESSAGE)
    texts: list[str] = []
    media = 0
    for position, raw in enumerate(parts):
        at = f"{where}[{position}]"
        part = expect_mapping(SOURCE, at, raw)
        kind = expect_str(SOURCE, f"{at}.type", part.get("type"), non_empty=True)
        if kind in ("input_text", "output_text"):
            texts.append(expect_str(SOURCE, f"{at}.text", part.get("text")))
        elif kind == "refusal":
            texts.append(expect_str(SOURCE, f"{at}.refusal", part.get("refusal")))
        elif kind == "input_image":
            _image_source(part, at)
            texts.append("[image]")
            media += _image_cost(part, overhead)
        elif kind == "input_file":
            texts.append(_file_label(part, at))
            media += document_tokens("openai", part.get("file_data"), overhead, at)
        elif kind == "input_audio":
            audio = expect_mapping(SOURCE, f"{at}.input_audio", part.get("input_audio"))
            texts.append("[audio]")
            media += audio_tokens("openai", audio.get("data"), overhead, at)
        else:
            # Unknown part types are counted as their JSON text: an over-estimate is safe.
            texts.append(as_json_text(dict(part)))
    return "\n".join(texts), media


def _image_source(part: Mapping[str, Any], at: str) -> None:
    url = part.get("image_url")
    file_id = part.get("file_id")
    if url is None and file_id is None:
        fail(SOURCE, at, "an input_image needs an image_url or a file_id")
    expect_optional_str(SOURCE, f"{at}.image_url", url)
    expect_optional_str(SOURCE, f"{at}.file_id", file_id)
    detail = part.get("detail")
    if detail is not None and detail not in ("low", "high", "auto", "original"):
        fail(SOURCE, f"{at}.detail", "must be 'low', 'high', 'auto' or 'original'", detail)


def _image_cost(part: Mapping[str, Any], overhead: MessageOverhead) -> int:
    """An image's tokens from its pixel size (read from a data URL or given in the
    overhead's ``image_sizes`` by URL or file id), else the fixed estimate."""
    url = part.get("image_url")
    reference = url if isinstance(url, str) else part.get("file_id")
    detail = part.get("detail")
    return image_tokens(
        "openai",
        data=data_url_bytes(url) if isinstance(url, str) else None,
        reference=reference if isinstance(reference, str) else None,
        sizes=overhead.image_sizes,
        fallback=overhead.image,
        detail=detail if isinstance(detail, str) else "auto",
    )


def _file_label(part: Mapping[str, Any], at: str) -> str:
    filename = expect_optional_str(SOURCE, f"{at}.filename", part.get("filename"))
    for key in ("file_id", "file_url", "file_data"):
        expect_optional_str(SOURCE, f"{at}.{key}", part.get(key))
    return f"[file {filename}]" if filename else "[file]"


# --------------------------------------------------------------------------- async


class FitOptions(_FitOptions, total=False):
    """:func:`fit_messages`' keyword options (all but ``counter``), which
    :func:`afit_messages` takes and passes on."""

    tools: Sequence[Mapping[str, Any]] | None
    instructions: str | None


async def afit_messages(
    messages: ResponsesInput,
    *,
    counter: AsyncTokenCounter,
    **options: Unpack[FitOptions],
) -> ResponsesFitResult:
    """:func:`fit_messages` with an asynchronous token counter (e.g. a wrapped count-tokens
    endpoint): every distinct text is counted in one awaited ``count_batch`` call, and a
    coroutine ``summarize`` callback is awaited (called once, with what the fit drops).
    Takes every option of :func:`fit_messages` (see :class:`FitOptions`)."""
    return await afit(fit_messages, messages, counter, options)
