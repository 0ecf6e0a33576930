"""Gemini ``contents`` in, a smaller valid history out.

Input is what you would pass to ``client.models.generate_content``: ``contents``, a list of
``{"role": "user" | "model", "parts": [...]}`` mappings, and an optional
``system_instruction`` (a string, or a content mapping with text parts). Parts are plain
mappings in either spelling the API accepts (``functionCall`` or ``function_call``...):

* ``text`` (with ``thought: true`` for a thought summary), ``inlineData`` (``mimeType`` and
  base64 ``data``), ``fileData`` (``mimeType`` and ``fileUri``);
* ``functionCall`` (``name``, ``args``, optional ``id``) in a ``model`` turn and
  ``functionResponse`` (``name``, ``response``, optional ``id``) in the ``user`` turn after it;
* ``executableCode`` / ``codeExecutionResult``, counted as their JSON text.

How the history is split:

* ``system_instruction`` becomes a ``SystemPrompt`` item, pinned by default, and comes back as
  the ``system_instruction`` of the result.
* A ``model`` turn with function calls and the ``user`` turn(s) answering them form one unit
  (kind ``ToolOutput``), parallel calls included. A response is matched to its call by ``id``
  when both carry one, otherwise to the oldest open call of the same ``name`` (the order the
  API uses).
* The latest ``user`` turn holding more than function responses is the latest user turn,
  pinned by default.
* Thought summaries and ``thoughtSignature`` values stay inside their turn (turns are never
  split or edited); signatures are opaque and not counted as text.

Rules of the API that dropping turns could break, and how they are kept:

* *A function response turn comes right after its function call turn*: units are whole input
  spans, so a kept response always follows its call.
* *The history starts with a user turn*: with ``start_with_user=True`` (the default) leading
  units starting with a ``model`` turn are dropped and reported as
  ``Filtered("start-with-user")``.
* *Turns alternate*: dropping units can leave two ``user`` (or ``model``) turns side by side;
  ``merge_consecutive=True`` merges each run into one turn whose parts are the run's parts in
  order.

Token counting: :data:`DEFAULT_OVERHEAD` estimates 4 tokens per turn, 6 per function call or
response, 3 per request and 258 per image (Gemini's documented cost of an image up to 384
pixels on both sides; larger images are tiled, see :mod:`pycupel.adapters`). Gemini's
``countTokens`` endpoint gives exact numbers when the budget is tight. Audio, video and PDF
parts need ``MessageOverhead(audio=..., document=...)`` estimates (video parts use the
``audio`` estimate: both are priced per second of media).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Unpack, cast

from pycupel._checks import check_bool
from pycupel.conversation.afit import afit
from pycupel.conversation.fit import (
    LeadingFilter,
    allows_unanswered,
    fit_units,
    resolve_counter,
    resolve_structure,
    with_variants,
)
from pycupel.conversation.media import base64_prefix, image_tokens
from pycupel.conversation.media_length import audio_tokens, document_tokens
from pycupel.conversation.options import AlternatingFitOptions
from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.parsed import AnswerRef, CallRef, ParsedMessage, count_parsed
from pycupel.conversation.repair import group_units
from pycupel.conversation.structure import Structure
from pycupel.conversation.summary import (
    OnSummaryError,
    Summarize,
    Summary,
    dropped_messages,
)
from pycupel.conversation.tools import GEMINI_TOOLS, with_tools
from pycupel.conversation.units import MessageUnit, MessageUnits
from pycupel.conversation.validate import (
    MAX_MESSAGES,
    MAX_PARTS_PER_MESSAGE,
    as_json_text,
    expect_id,
    expect_list,
    expect_mapping,
    expect_str,
    fail,
)
from pycupel.conversation.versions import Editor, Replace, Shrink, resolve_shrink
from pycupel.diagnostics import SelectionReport
from pycupel.errors import PipelineConfigError
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
    "START_WITH_USER_FILTER",
    "FitOptions",
    "GeminiFitResult",
    "GeminiHistory",
    "Session",
    "afit_messages",
    "count_tokens",
    "fit_messages",
    "from_messages",
    "to_messages",
]

SOURCE = "gemini contents"

DEFAULT_OVERHEAD = MessageOverhead(per_message=4, per_tool_call=6, per_request=3, image=258)
"""An estimate of Gemini's prompt format (see the module documentation)."""

START_WITH_USER_FILTER = "start-with-user"
"""``Filtered.filter_name`` of leading model units dropped by ``start_with_user``."""

GeminiContent = Mapping[str, Any]
SystemInstruction = str | Mapping[str, Any]

# The API accepts both the REST (camelCase) and the Python SDK (snake_case) spellings.
_SPELLINGS: Mapping[str, str] = MappingProxyType(
    {
        "functionCall": "function_call",
        "functionResponse": "function_response",
        "inlineData": "inline_data",
        "fileData": "file_data",
        "executableCode": "executable_code",
        "codeExecutionResult": "code_execution_result",
        "mimeType": "mime_type",
        "fileUri": "file_uri",
        "thoughtSignature": "thought_signature",
    }
)


class GeminiHistory(NamedTuple):
    """A ``system_instruction`` (``None`` when absent or not selected) and the ``contents``."""

    system_instruction: SystemInstruction | None
    contents: list[GeminiContent]


class GeminiFitResult(NamedTuple):
    """What :func:`fit_messages` returns; unpacks as ``system_instruction, contents, report``."""

    system_instruction: SystemInstruction | None
    """The system instruction as given, or ``None`` when there was none."""
    contents: list[GeminiContent]
    """The fitted turns: your original objects (merged ones are new), in order."""
    report: SelectionReport
    """Why every unit was included or excluded."""


def from_messages(
    messages: Sequence[GeminiContent],
    *,
    system_instruction: SystemInstruction | None = None,
    counter: TokenCounter | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    overhead: MessageOverhead | None = None,
    pin_system: bool = True,
    pin_latest_user: bool = True,
    timestamps: Sequence[datetime] | None = None,
    allow_unanswered: bool = False,
    repair: bool = False,
) -> MessageUnits[GeminiContent]:
    """Split Gemini ``contents`` (and the system instruction) into units, one item per unit.

    Args:
        messages: the request's ``contents`` (never modified).
        system_instruction: the request's ``system_instruction``.
        counter: counts text; defaults to :class:`~pycupel.tokens.HeuristicCounter`.
        tools: the request's tool definitions (``tools=``), counted once per request as
            part of the prompt (their JSON text plus the provider's framing).
        overhead: fixed costs around the text; defaults to :data:`DEFAULT_OVERHEAD`.
        pin_system: pin the system instruction.
        pin_latest_user: pin the unit holding the latest user turn.
        timestamps: one aware datetime per turn (the system instruction takes the oldest); by
            default synthetic, strictly increasing ones in turn order.
        allow_unanswered: keep a function call nobody answers as a flagged unit instead of
            raising.
        repair: drop messages holding orphaned tool results (kept in ``repairs``) and
            allow unanswered calls instead of raising (see :mod:`pycupel.conversation.repair`).

    Raises:
        MessageFormatError: a malformed turn or part, a function response answering no earlier
            call, a call id used twice or (unless allowed) an unanswered call.
    """
    resolved = resolve_counter(counter)
    chosen = with_tools(
        overhead if overhead is not None else DEFAULT_OVERHEAD,
        tools,
        source=SOURCE,
        counter=resolved,
        framing=GEMINI_TOOLS,
    )
    parsed = _parse(messages, system_instruction, chosen)
    units, repairs = group_units(
        parsed,
        repair=repair,
        source=SOURCE,
        counter=resolved,
        message_count=len(parsed) - (system_instruction is not None),
        pin_system=pin_system,
        pin_latest_user=pin_latest_user,
        timestamps=timestamps,
        allow_unanswered=allow_unanswered,
    )
    return MessageUnits(
        "gemini", tuple(messages), units, chosen, system=system_instruction, repairs=repairs
    )


def to_messages(
    selection: Iterable[ContextItem],
    units: MessageUnits[GeminiContent],
    *,
    merge_consecutive: bool = False,
) -> GeminiHistory:
    """The system instruction and turns of the selected units, in the original order.

    With ``merge_consecutive``, runs of same-role turns become one new turn (a turn with keys
    other than ``role`` and ``parts`` cannot be merged and raises
    :class:`~pycupel.errors.MessageFormatError`).
    """
    check_bool(PipelineConfigError, "merge_consecutive", merge_consecutive)
    return _history(units.select(selection), units, merge_consecutive=merge_consecutive)


def count_tokens(
    messages: Sequence[GeminiContent],
    *,
    system_instruction: SystemInstruction | None = None,
    counter: TokenCounter | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    overhead: MessageOverhead | None = None,
) -> int:
    """Tokens of a request's system instruction and contents, as :func:`fit_messages` counts."""
    resolved = resolve_counter(counter)
    chosen = with_tools(
        overhead if overhead is not None else DEFAULT_OVERHEAD,
        tools,
        source=SOURCE,
        counter=resolved,
        framing=GEMINI_TOOLS,
    )
    parsed = _parse(messages, system_instruction, chosen)
    return count_parsed(parsed, resolved) + chosen.per_request


def fit_messages(
    messages: Sequence[GeminiContent],
    *,
    system_instruction: SystemInstruction | None = None,
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
    start_with_user: bool = True,
    merge_consecutive: bool = False,
) -> GeminiFitResult:
    """Fit Gemini ``contents`` (and the system instruction) into a token budget.

    Args:
        messages: the request's ``contents`` (never modified).
        system_instruction: the request's ``system_instruction``.
        budget: tokens for the whole prompt, or a ContextBudget.
        policy: the selection policy (or a Pipeline); defaults to :func:`pycupel.presets.chat`.
        counter, tools, overhead, pin_system, pin_latest_user, timestamps: as for
            :func:`from_messages`.
        deduplicate: let the pipeline drop units whose rendered text is byte-identical.
        unanswered_tool_calls: ``"error"`` raises for a call nobody answers; ``"drop"``
            leaves its unit out, reported with reason ``Filtered``.
        start_with_user: drop leading unpinned units that start with a ``model`` turn.
        merge_consecutive: merge runs of same-role turns in the output.
        repair: fix what the provider rejects instead of raising, reporting each fix as a
            ``Filtered`` exclusion (see :mod:`pycupel.conversation.repair`).
        query, keep_recent, structure: as for :func:`pycupel.adapters.openai.fit_messages`
            (structure-aware selection for the query by default).
        shrink: as for :func:`pycupel.adapters.openai.fit_messages` (older tool results
            kept as placeholders, long ones truncated; on by default without a policy).
        summarize, on_summary_error: as for :func:`pycupel.adapters.openai.fit_messages`
            (a summary of what was left out, right after the system prompt).

    Returns:
        ``GeminiFitResult(system_instruction, contents, report)``.

    Raises:
        MessageFormatError: malformed contents.
        PinnedBudgetError: the pinned units alone do not fit.
    """
    check_bool(PipelineConfigError, "start_with_user", start_with_user)
    check_bool(PipelineConfigError, "merge_consecutive", merge_consecutive)
    units = from_messages(
        messages,
        system_instruction=system_instruction,
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
        leading_filter=(
            LeadingFilter(START_WITH_USER_FILTER, lambda unit: unit.first_role == "model")
            if start_with_user or repair
            else None
        ),
    )
    history = _history(
        fitted.units, with_variants(units, fitted), merge_consecutive=merge_consecutive or repair
    )
    contents = history.contents
    if summary is not None:
        dropped = dropped_messages(units, fitted)
        text = summary.text(dropped, None)
        content: GeminiContent = {"role": "user", "parts": [{"text": text}]}
        if text is not None and summary.fits(
            count_parsed(_parse([content], None, units.overhead), resolve_counter(counter)),
            len(dropped),
        ):
            contents = [content, *contents]
    return GeminiFitResult(history.system_instruction, contents, fitted.report)


# --------------------------------------------------------------------------- sessions


class Session:
    """One conversation of Gemini ``contents``, fitted turn after turn into a cache-stable
    window.

    Call :meth:`fit` every turn with the whole ``contents`` so far and the system
    instruction, send ``system_instruction=window.system, contents=window.messages``, then
    pass ``response.usage_metadata`` to :meth:`record_usage`. Between compactions each
    request extends the previous one, which is what Gemini's implicit caching needs (nothing
    to mark; explicit ``CachedContent`` is yours to manage). Arguments, behaviour and thread
    rules are those of :class:`pycupel.adapters.openai.Session`.

    Args:
        start_with_user: as for :func:`fit_messages`: a window never opens with a ``model``
            turn; unpinned leading units starting with one are left out.
        merge_consecutive: as for :func:`fit_messages`: runs of same-role turns left side by
            side in the window are merged into one turn (a new mapping holding the run's
            parts in order).
    """

    __slots__ = ("_core", "_merge")

    def __init__(
        self,
        *,
        budget: int,
        overhead: MessageOverhead | None = None,
        start_with_user: bool = True,
        merge_consecutive: bool = False,
        **options: Unpack[SessionOptions],
    ) -> None:
        check_bool(PipelineConfigError, "start_with_user", start_with_user)
        self._merge = check_bool(PipelineConfigError, "merge_consecutive", merge_consecutive)
        chosen = overhead if overhead is not None else DEFAULT_OVERHEAD

        def parse(index: int, raw: GeminiContent, state: ParseState) -> ParsedMessage:
            open_calls = state.extra.setdefault("open_calls", _OpenCalls())
            assert isinstance(open_calls, _OpenCalls)  # only this parser sets it
            return _parse_content(index, raw, chosen, open_calls)

        def parse_system(system: object) -> ParsedMessage:
            return _parse_system(system, chosen)

        self._core: SessionCore[GeminiContent] = SessionCore(
            MessageFormat(
                "gemini",
                SOURCE,
                chosen,
                parse=parse,
                snapshot=snapshot_json,
                parse_system=parse_system,
                drops_leading=_starts_with_model if start_with_user else None,
                editor=_editor(chosen),
                summary_message=_summary_message,
            ),
            budget=budget,
            **options,
        )

    def fit(
        self,
        messages: Sequence[GeminiContent],
        *,
        system_instruction: SystemInstruction | None = None,
    ) -> SessionWindow[GeminiContent]:
        """This turn's window: ``window.system`` (the system instruction) and
        ``window.messages`` (the contents) to send.

        Raises:
            MessageFormatError: a malformed turn, or a function call without its response.
            PinnedBudgetError: the system instruction and latest user turn alone do not fit.
        """
        window = self._core.fit(messages, system_instruction)
        return self._window(messages, system_instruction, window)

    async def afit(
        self,
        messages: Sequence[GeminiContent],
        *,
        system_instruction: SystemInstruction | None = None,
        counter: AsyncTokenCounter,
    ) -> SessionWindow[GeminiContent]:
        """:meth:`fit` with the new turns counted by an asynchronous token counter (such as
        a wrapped ``models.count_tokens``): one awaited ``count_batch`` call per turn for the
        texts this turn adds."""
        window = await self._core.afit(messages, counter, system_instruction)
        return self._window(messages, system_instruction, window)

    def record_usage(self, usage: object) -> ProviderUsage:
        """Calibrate with ``response.usage_metadata`` (``prompt_token_count`` with
        ``cached_content_token_count``; an object or a dict).

        Raises:
            ProviderUsageError: not a usage object, or a negative or non-integer count.
            SessionConfigError: no window was fitted yet, or its usage was already recorded.
        """
        return self._core.record_usage(usage)

    def _window(
        self, messages: Sequence[GeminiContent], system: object, window: CoreWindow
    ) -> SessionWindow[GeminiContent]:
        sent = window.window(messages)
        has_system = any(unit.system_parameter for unit in window.units)
        contents = merge_runs(window.entries(messages)) if self._merge else sent.messages
        return replace(sent, messages=contents, system=system if has_system else None)


def _summary_message(text: str) -> GeminiContent:
    return {"role": "user", "parts": [{"text": text}]}


def _starts_with_model(unit: MessageUnit) -> bool:
    return unit.first_role == "model"


# --------------------------------------------------------------------------- rebuilding


def _history(
    chosen: Sequence[MessageUnit],
    units: MessageUnits[GeminiContent],
    *,
    merge_consecutive: bool,
) -> GeminiHistory:
    system: SystemInstruction | None = None
    kept: list[tuple[int, GeminiContent]] = []
    for unit in chosen:
        if unit.system_parameter:
            system = cast("SystemInstruction", units.system)  # validated when parsed
        kept.extend((index, units.messages[index]) for index in unit.message_indices)
    if not merge_consecutive:
        return GeminiHistory(system, [content for _, content in kept])
    return GeminiHistory(system, merge_runs(kept))


def merge_runs(kept: Sequence[tuple[int | None, GeminiContent]]) -> list[GeminiContent]:
    """Merge runs of same-role turns into one turn holding their parts in order."""
    merged: list[GeminiContent] = []
    for index, content in kept:
        if merged and merged[-1].get("role") == content.get("role"):
            for candidate, where in ((merged[-1], None), (content, index)):
                extra = sorted(set(candidate) - {"role", "parts"})
                if extra:
                    location = f"contents[{where}]" if where is not None else "merged turn"
                    fail(
                        SOURCE,
                        location,
                        f"cannot merge consecutive {content.get('role')} turns holding keys "
                        f"other than role and parts ({', '.join(map(str, extra))})",
                    )
            parts = [*merged[-1]["parts"], *content["parts"]]
            merged[-1] = {"role": content["role"], "parts": parts}
        else:
            merged.append(content)
    return merged


# --------------------------------------------------------------------------- versions


def _editor(overhead: MessageOverhead) -> Editor[GeminiContent]:
    def parse(contents: Sequence[GeminiContent]) -> list[ParsedMessage]:
        return _parse(list(contents), None, overhead)

    return Editor(rewrite=_rewrite, parse=parse)


def _rewrite(contents: Sequence[GeminiContent], replace: Replace) -> list[GeminiContent] | None:
    """The unit's turns with each ``functionResponse``'s ``response`` replaced by
    ``{"result": <new text>}`` as ``replace`` says (its text is the response's JSON); the
    response's ``name`` and ``id`` and every other key are kept."""
    rewritten: list[GeminiContent] = []
    changed = False
    for content in contents:
        parts: list[Any] = []
        touched = False
        for part in content.get("parts") or ():
            key, body = _field(part, "functionResponse")
            if body is not None:
                new_text = replace(body["name"], as_json_text(body.get("response") or {}))
                if new_text is not None:
                    part = {**part, key: {**body, "response": {"result": new_text}}}  # noqa: PLW2901
                    touched = True
            parts.append(part)
        rewritten.append({**content, "parts": parts} if touched else content)
        changed = changed or touched
    return rewritten if changed else None


# --------------------------------------------------------------------------- parsing


class _OpenCalls:
    """Function calls not answered yet, to match responses by id or else by name."""

    def __init__(self) -> None:
        self.by_name: dict[str, list[str]] = {}

    def issue(self, name: str, call_id: str) -> None:
        self.by_name.setdefault(name, []).append(call_id)

    def answer(self, name: str, call_id: str | None, location: str) -> str:
        """The id of the call a response answers; a synthetic id when nothing matches (the
        pairing check then reports the orphaned response)."""
        pending = self.by_name.get(name, [])
        if call_id is not None:
            if call_id in pending:
                pending.remove(call_id)
            return call_id
        if pending:
            return pending.pop(0)
        return f"<functionResponse {name!r} at {location}>"


def _parse(messages: object, system: object, overhead: MessageOverhead) -> list[ParsedMessage]:
    parsed: list[ParsedMessage] = []
    if system is not None:
        parsed.append(_parse_system(system, overhead))
    contents = expect_list(SOURCE, "contents", messages, limit=MAX_MESSAGES)
    open_calls = _OpenCalls()
    for index, raw in enumerate(contents):
        parsed.append(_parse_content(index, raw, overhead, open_calls))
    return parsed


def _parse_system(system: object, overhead: MessageOverhead) -> ParsedMessage:
    if isinstance(system, str):
        text = system
    else:
        content = expect_mapping(SOURCE, "system_instruction", system)
        parts = expect_list(
            SOURCE, "system_instruction.parts", content.get("parts"), limit=MAX_PARTS_PER_MESSAGE
        )
        texts = []
        for position, raw in enumerate(parts):
            at = f"system_instruction.parts[{position}]"
            part = expect_mapping(SOURCE, at, raw)
            texts.append(expect_str(SOURCE, f"{at}.text", part.get("text")))
        text = "\n".join(texts)
    return ParsedMessage(
        index=None,
        role="system_instruction",
        category="system",
        text=text,
        fixed_tokens=overhead.per_message,
    )


def _field(part: Mapping[str, Any], camel: str, *, snake_first: bool = False) -> tuple[str, Any]:
    """The key used and the value of a part field in either spelling.

    A missing field is reported in the spelling of its container (``snake_first``).
    """
    snake = _SPELLINGS[camel]
    if camel in part:
        return camel, part[camel]
    if snake in part or snake_first:
        return snake, part.get(snake)
    return camel, None


def _parse_content(
    index: int, raw: object, overhead: MessageOverhead, open_calls: _OpenCalls
) -> ParsedMessage:
    where = f"contents[{index}]"
    content = expect_mapping(SOURCE, where, raw)
    role = content.get("role")
    if role not in ("user", "model"):
        hint = " (pass it as system_instruction=...)" if role == "system" else ""
        fail(SOURCE, f"{where}.role", f"must be 'user' or 'model'{hint}", role)
    assert isinstance(role, str)
    parts = expect_list(SOURCE, f"{where}.parts", content.get("parts"), limit=MAX_PARTS_PER_MESSAGE)
    texts: list[str] = []
    fixed = overhead.per_message
    calls: list[CallRef] = []
    answers: list[AnswerRef] = []
    names: list[str] = []
    user_turn = False
    for position, raw_part in enumerate(parts):
        at = f"{where}.parts[{position}]"
        part = expect_mapping(SOURCE, at, raw_part)
        call_key, call = _field(part, "functionCall")
        response_key, response = _field(part, "functionResponse")
        if call is not None:
            if role != "model":
                fail(SOURCE, f"{at}.{call_key}", "function calls belong in model turns")
            body = expect_mapping(SOURCE, f"{at}.{call_key}", call)
            name = expect_str(SOURCE, f"{at}.{call_key}.name", body.get("name"), non_empty=True)
            raw_id = body.get("id")
            call_id = (
                expect_id(SOURCE, f"{at}.{call_key}.id", raw_id)
                if raw_id is not None
                else f"<functionCall {name!r} at {at}>"
            )
            open_calls.issue(name, call_id)
            calls.append(CallRef(call_id, f"{at}.{call_key}", name))
            names.append(name)
            arguments = body.get("args")
            if arguments is not None:
                expect_mapping(SOURCE, f"{at}.{call_key}.args", arguments)
            texts.append(f"{name}({as_json_text(arguments or {})})")
            fixed += overhead.per_tool_call
        elif response is not None:
            if role != "user":
                fail(SOURCE, f"{at}.{response_key}", "function responses belong in user turns")
            body = expect_mapping(SOURCE, f"{at}.{response_key}", response)
            name = expect_str(SOURCE, f"{at}.{response_key}.name", body.get("name"), non_empty=True)
            raw_id = body.get("id")
            given = expect_id(SOURCE, f"{at}.{response_key}.id", raw_id) if raw_id else None
            call_id = open_calls.answer(name, given, at)
            answers.append(AnswerRef(call_id, f"{at}.{response_key}"))
            names.append(name)
            result = body.get("response")
            if result is not None:
                expect_mapping(SOURCE, f"{at}.{response_key}.response", result)
            texts.append(as_json_text(result or {}))
            fixed += overhead.per_tool_call
        else:
            user_turn = True
            text, media = _part(part, at, overhead)
            texts.append(text)
            fixed += media
    label = role
    if answers:
        label = f"user (function responses: {', '.join(dict.fromkeys(names))})"
    return ParsedMessage(
        index=index,
        role=role,
        category="user" if role == "user" else "assistant",
        text="\n".join(texts),
        fixed_tokens=fixed,
        calls=tuple(calls),
        answers=tuple(answers),
        user_turn=role == "user" and (user_turn or not answers),
        label=label,
        tool_names=tuple(dict.fromkeys(names)),
    )


def _part(part: Mapping[str, Any], at: str, overhead: MessageOverhead) -> tuple[str, int]:
    """Visible text and fixed media cost of a part other than a function call or response."""
    signature_key, signature = _field(part, "thoughtSignature")
    if signature is not None:
        expect_str(SOURCE, f"{at}.{signature_key}", signature)  # opaque: not counted
    if "text" in part:
        text = expect_str(SOURCE, f"{at}.text", part["text"])
        thought = part.get("thought")
        if thought is not None and not isinstance(thought, bool):
            fail(SOURCE, f"{at}.thought", "must be a boolean", thought)
        return text, 0
    inline_key, inline = _field(part, "inlineData")
    if inline is not None:
        body = expect_mapping(SOURCE, f"{at}.{inline_key}", inline)
        mime = _mime(body, f"{at}.{inline_key}", snake=inline_key == "inline_data")
        data = body.get("data")
        if not isinstance(data, str | bytes):
            fail(SOURCE, f"{at}.{inline_key}.data", "must be base64 text or bytes", data)
        return _media(mime, at, overhead, data=base64_prefix(data), payload=data)
    file_key, file = _field(part, "fileData")
    if file is not None:
        body = expect_mapping(SOURCE, f"{at}.{file_key}", file)
        snake = file_key == "file_data"
        uri_key, uri = _field(body, "fileUri", snake_first=snake)
        expect_str(SOURCE, f"{at}.{file_key}.{uri_key}", uri, non_empty=True)
        mime = _mime(body, f"{at}.{file_key}", snake=snake)
        return _media(mime, at, overhead, reference=uri)
    # Code execution and other parts are counted as their JSON text.
    shown = {key: value for key, value in part.items() if key != signature_key}
    if not shown and signature is not None:
        return "", 0
    if not shown:
        fail(SOURCE, at, "must hold text, inlineData, fileData, functionCall or functionResponse")
    return as_json_text(shown), 0


def _mime(body: Mapping[str, Any], at: str, *, snake: bool) -> str:
    key, mime = _field(body, "mimeType", snake_first=snake)
    return expect_str(SOURCE, f"{at}.{key}", mime, non_empty=True)


def _media(
    mime: str,
    at: str,
    overhead: MessageOverhead,
    *,
    data: bytes | None = None,
    reference: str | None = None,
    payload: str | bytes | None = None,
) -> tuple[str, int]:
    if mime.startswith("image/"):
        cost = image_tokens(
            "gemini",
            data=data,
            reference=reference,
            sizes=overhead.image_sizes,
            fallback=overhead.image,
        )
        return "[image]", cost
    if mime.startswith("audio/"):
        return "[audio]", audio_tokens("gemini", payload, overhead, at)
    if mime.startswith("video/"):  # 263 tokens per second, but no video length is read here
        return "[video]", overhead.media_cost("audio", at)
    return "[document]", document_tokens("gemini", payload, overhead, at)


# --------------------------------------------------------------------------- async


class FitOptions(AlternatingFitOptions, total=False):
    """:func:`fit_messages`' keyword options (all but ``counter``), which
    :func:`afit_messages` takes and passes on."""

    tools: Sequence[Mapping[str, Any]] | None
    system_instruction: SystemInstruction | None


async def afit_messages(
    messages: Sequence[GeminiContent],
    *,
    counter: AsyncTokenCounter,
    **options: Unpack[FitOptions],
) -> GeminiFitResult:
    """:func:`fit_messages` with an asynchronous token counter (e.g. a wrapped count-tokens
    endpoint): every distinct text is counted in one awaited ``count_batch`` call, and a
    coroutine ``summarize`` callback is awaited (called once, with what the fit drops).
    Takes every option of :func:`fit_messages` (see :class:`FitOptions`)."""
    return await afit(fit_messages, messages, counter, options)
