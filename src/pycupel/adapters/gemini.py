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
from types import MappingProxyType
from typing import Any, NamedTuple, Unpack, cast

from pycupel._checks import check_bool
from pycupel.conversation import api
from pycupel.conversation import recall_tool as recalling
from pycupel.conversation.api import START_WITH_USER_FILTER
from pycupel.conversation.codec import Codec, Kept, rewritten
from pycupel.conversation.media import base64_prefix
from pycupel.conversation.media_length import audio_tokens, document_tokens
from pycupel.conversation.merge import merge_runs
from pycupel.conversation.options import (
    AlternatingFitOptions,
    CountOptions,
    UnitOptions,
    documented,
)
from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.parsed import AnswerRef, CallRef, ParsedMessage, ParseState, Turn
from pycupel.conversation.recall import Recall
from pycupel.conversation.tools import GEMINI_TOOLS, ToolSpec
from pycupel.conversation.units import MessageUnits
from pycupel.conversation.validate import MAX_PARTS_PER_MESSAGE, Shapes, as_json_text
from pycupel.conversation.versions import Replace
from pycupel.diagnostics import SelectionReport
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextItem
from pycupel.session.chat import SESSION_DEFAULTS, SESSION_DOCS, SESSION_RAISES, ChatSession
from pycupel.session.options import SessionOptions
from pycupel.session.window import SessionWindow
from pycupel.tokens import TokenCounter
from pycupel.tokens.asynchronous import AsyncTokenCounter

__all__ = [
    "CODEC",
    "DEFAULT_OVERHEAD",
    "START_WITH_USER_FILTER",
    "FitOptions",
    "GeminiCodec",
    "GeminiFitResult",
    "GeminiHistory",
    "Session",
    "afit_messages",
    "answer_recall",
    "count_tokens",
    "fit_messages",
    "from_messages",
    "recall_tool",
    "to_messages",
]

GeminiContent = Mapping[str, Any]
SystemInstruction = str | Mapping[str, Any]

SOURCE = "gemini contents"
SHAPES = Shapes(SOURCE)

DEFAULT_OVERHEAD = MessageOverhead(per_message=4, per_tool_call=6, per_request=3, image=258)
"""An estimate of Gemini's prompt format (see the module documentation)."""

_DOCS: Mapping[str, str] = MappingProxyType(
    {
        "messages": "the request's ``contents`` (never modified).",
        "system_instruction": "the request's ``system_instruction`` (a string, or a content "
        "mapping with text parts); the budget covers it and the contents.",
    }
)


class FitOptions(AlternatingFitOptions, total=False):
    """The options of :func:`fit_messages` and :func:`afit_messages` (all but ``counter``)."""

    system_instruction: SystemInstruction | None


_ROLES = ("user", "model")

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


class GeminiCodec(Codec[GeminiContent]):
    """Gemini ``contents`` to the engine and back (see the module documentation)."""

    provider = "gemini"
    source = SOURCE
    list_name = "contents"
    default_overhead = DEFAULT_OVERHEAD
    tool_framing = GEMINI_TOOLS
    leading_role = "model"
    merges_on_repair = True

    def parse(
        self, index: int, message: GeminiContent, overhead: MessageOverhead, state: ParseState
    ) -> ParsedMessage:
        open_calls = state.extra.setdefault("open_calls", _OpenCalls())
        assert isinstance(open_calls, _OpenCalls)  # only this parser sets it
        where = f"contents[{index}]"
        content = SHAPES.mapping(where, message)
        hint = "pass it as system_instruction=..."
        role = SHAPES.role(f"{where}.role", content.get("role"), _ROLES, system_hint=hint)
        parts = SHAPES.sequence(f"{where}.parts", content.get("parts"), limit=MAX_PARTS_PER_MESSAGE)
        turn = Turn(index, role, overhead.per_message)
        for position, raw_part in enumerate(parts):
            at = f"{where}.parts[{position}]"
            part = SHAPES.mapping(at, raw_part)
            call_key, call = _field(part, "functionCall")
            response_key, response = _field(part, "functionResponse")
            if call is not None:
                if role != "model":
                    SHAPES.fail(f"{at}.{call_key}", "function calls belong in model turns")
                body = SHAPES.mapping(f"{at}.{call_key}", call)
                name = SHAPES.text(f"{at}.{call_key}.name", body.get("name"), non_empty=True)
                raw_id = body.get("id")
                call_id = (
                    SHAPES.call_id(f"{at}.{call_key}.id", raw_id)
                    if raw_id is not None
                    else f"<functionCall {name!r} at {at}>"
                )
                open_calls.issue(name, call_id)
                arguments = body.get("args")
                if arguments is not None:
                    SHAPES.mapping(f"{at}.{call_key}.args", arguments)
                text = f"{name}({as_json_text(arguments or {})})"
                call_ref = CallRef(call_id, f"{at}.{call_key}", name, arguments or {})
                turn.call(call_ref, text, overhead.per_tool_call)
            elif response is not None:
                if role != "user":
                    SHAPES.fail(f"{at}.{response_key}", "function responses belong in user turns")
                body = SHAPES.mapping(f"{at}.{response_key}", response)
                name = SHAPES.text(f"{at}.{response_key}.name", body.get("name"), non_empty=True)
                raw_id = body.get("id")
                given = SHAPES.call_id(f"{at}.{response_key}.id", raw_id) if raw_id else None
                call_id = open_calls.answer(name, given, at)
                result = body.get("response")
                if result is not None:
                    SHAPES.mapping(f"{at}.{response_key}.response", result)
                answer = AnswerRef(call_id, f"{at}.{response_key}")
                turn.result(answer, name, as_json_text(result or {}), overhead.per_tool_call)
            else:
                turn.content(*_part(part, at, overhead))
        return turn.parsed("function responses")

    def parse_system(self, system: object, overhead: MessageOverhead) -> ParsedMessage:
        if isinstance(system, str):
            text = system
        else:
            content = SHAPES.mapping("system_instruction", system)
            text = "\n".join(SHAPES.texts("system_instruction.parts", content.get("parts")))
        return ParsedMessage.of_text(
            None, "system_instruction", "system", text, overhead.per_message
        )

    def rewrite(
        self, messages: Sequence[GeminiContent], replace: Replace, overhead: MessageOverhead
    ) -> list[GeminiContent] | None:
        """The unit's turns with each ``functionResponse``'s ``response`` replaced by
        ``{"result": <new text>}`` as ``replace`` says (its text is the response's JSON); the
        response's ``name`` and ``id`` and every other key are kept."""

        def rewrite(_: int, content: GeminiContent) -> GeminiContent | None:
            parts = list(content.get("parts") or ())
            for position, part in enumerate(content.get("parts") or ()):
                key, body = _field(part, "functionResponse")
                if body is not None:
                    new_text = replace(body["name"], as_json_text(body.get("response") or {}))
                    if new_text is not None:
                        parts[position] = {**part, key: {**body, "response": {"result": new_text}}}
            return (
                {**content, "parts": parts} if parts != list(content.get("parts") or ()) else None
            )

        return rewritten(messages, rewrite)

    def unnarrated(self, messages: Sequence[GeminiContent]) -> list[GeminiContent] | None:
        """The unit's turns without the plain ``text`` parts of a turn that has
        ``functionCall`` parts (thoughts and parts carrying a thought signature kept)."""

        def words(part: object) -> bool:
            return (
                isinstance(part, Mapping)
                and "text" in part
                and not part.get("thought")
                and not any(key in part for key in ("thoughtSignature", "thought_signature"))
            )

        def rewrite(_: int, content: GeminiContent) -> GeminiContent | None:
            parts = list(content.get("parts") or ())
            if not any(_field(part, "functionCall")[1] is not None for part in parts):
                return None
            kept = [part for part in parts if not words(part)]
            return {**content, "parts": kept} if len(kept) < len(parts) else None

        return rewritten(messages, rewrite)

    def summary_message(self, text: str) -> GeminiContent:
        return {"role": "user", "parts": [{"text": text}]}

    def tool_definition(self, tool: ToolSpec) -> dict[str, Any]:
        declaration = {"name": tool.name, "description": tool.description}
        return {"functionDeclarations": [{**declaration, "parameters": tool.parameters}]}

    def tool_answer(self, call: CallRef, text: str, *, error: bool) -> dict[str, Any]:
        # The answer names the call as the call named itself (camelCase or snake_case keys).
        snake = ".function_call" in call.location
        body: dict[str, Any] = {
            "name": call.name,
            "response": {"error" if error else "output": text},
        }
        if not call.call_id.startswith("<"):  # a call without an id is answered by its name
            body["id"] = call.call_id
        return {"function_response" if snake else "functionResponse": body}

    def merge(self, kept: Kept[GeminiContent]) -> list[GeminiContent]:
        return merge_runs(kept, source=SOURCE, list_name="contents", body="parts", blocks=list)


CODEC = GeminiCodec()
"""The codec of this module's functions."""


@documented(UnitOptions, docs=_DOCS)
def from_messages(
    messages: Sequence[GeminiContent],
    *,
    system_instruction: SystemInstruction | None = None,
    **options: Unpack[UnitOptions],
) -> MessageUnits[GeminiContent]:
    """Split Gemini ``contents`` (and the system instruction) into units, one item per unit:
    a ``model`` turn's function calls and the ``user`` turns answering them are one unit."""
    return api.read_units(CODEC, messages, system_instruction, options)


class GeminiHistory(NamedTuple):
    """A ``system_instruction`` (``None`` when absent or not selected) and the ``contents``."""

    system_instruction: SystemInstruction | None
    contents: list[GeminiContent]


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
    kept, contents = api.selected(CODEC, selection, units, merge_consecutive=merge_consecutive)
    return GeminiHistory(cast("SystemInstruction", units.system) if kept else None, contents)


@documented(CountOptions, docs=_DOCS)
def count_tokens(
    messages: Sequence[GeminiContent],
    *,
    system_instruction: SystemInstruction | None = None,
    **options: Unpack[CountOptions],
) -> int:
    """Tokens of a request's system instruction and contents, as :func:`fit_messages` counts."""
    return api.count(CODEC, messages, system_instruction, options)


@recalling.tool_documented
def recall_tool(recall: Recall) -> dict[str, Any]:
    """The recall tool, a ``Tool`` holding its function declaration, for a request's
    ``tools``."""
    return cast(dict[str, Any], recalling.recall_tool(CODEC, recall))


@recalling.answers_documented
def answer_recall(
    recall: Recall, message: GeminiContent | Sequence[GeminiContent]
) -> list[dict[str, Any]]:
    """The ``functionResponse`` parts answering the recall calls of a model turn (or of a
    list of contents), for the parts of the next user turn (beside the responses of any
    other function it called)."""
    return cast(list[dict[str, Any]], recalling.answer_recall(CODEC, recall, message))


class GeminiFitResult(NamedTuple):
    """What :func:`fit_messages` returns; unpacks as ``system_instruction, contents, report``:
    the system instruction as given (``None`` when there was none), the fitted turns (your
    objects; merged ones are new) in order, and why every unit was kept or dropped."""

    system_instruction: SystemInstruction | None
    contents: list[GeminiContent]
    report: SelectionReport


@documented(FitOptions, docs=_DOCS, first=["system_instruction"])
def fit_messages(
    messages: Sequence[GeminiContent],
    *,
    counter: TokenCounter | None = None,
    **options: Unpack[FitOptions],
) -> GeminiFitResult:
    """Fit Gemini ``contents`` (and the system instruction) into a token budget.

    With ``repair=True``, runs of same-role turns left side by side are merged (Gemini
    rejects them) as ``merge_consecutive`` does.

    Returns:
        ``GeminiFitResult(system_instruction, contents, report)``.
    """
    system = options.pop("system_instruction", None)
    fitting = api.fit(CODEC, messages, system, counter, options)
    return GeminiFitResult(fitting.system, fitting.messages, fitting.report)


@documented(FitOptions, docs=_DOCS, first=["system_instruction"])
async def afit_messages(
    messages: Sequence[GeminiContent], *, counter: AsyncTokenCounter, **options: Unpack[FitOptions]
) -> GeminiFitResult:
    """:func:`fit_messages` with an asynchronous token counter (such as a wrapped
    ``models.count_tokens``): every distinct text counted in one awaited call."""
    system = options.pop("system_instruction", None)
    fitting = await api.afit(CODEC, messages, system, counter, options)
    return GeminiFitResult(fitting.system, fitting.messages, fitting.report)


# --------------------------------------------------------------------------- sessions


class Session(ChatSession[GeminiContent]):
    """One conversation of Gemini ``contents``, fitted turn after turn into a cache-stable
    window.

    Call :meth:`fit` every turn with the whole ``contents`` so far and the system
    instruction, send ``system_instruction=window.system, contents=window.messages``, then
    pass ``response.usage_metadata`` to :meth:`record_usage`. Between compactions each
    request extends the previous one, which is what Gemini's implicit caching needs (nothing
    to mark; explicit ``CachedContent`` is yours to manage). Arguments, behaviour and thread
    rules are those of :class:`pycupel.adapters.openai.Session`.

    """

    __slots__ = ()

    @documented(SessionOptions, docs=SESSION_DOCS, defaults=SESSION_DEFAULTS, raises=SESSION_RAISES)
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
        merge = check_bool(PipelineConfigError, "merge_consecutive", merge_consecutive)
        self._start(budget, overhead, options, start_with_user=start_with_user, merge=merge)

    def _codec(self) -> GeminiCodec:
        return CODEC

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
        return self._fit(messages, system_instruction)

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
        return await self._afit(messages, counter, system_instruction)


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


def _part(part: Mapping[str, Any], at: str, overhead: MessageOverhead) -> tuple[str, int]:
    """Visible text and fixed media cost of a part other than a function call or response."""
    signature_key, signature = _field(part, "thoughtSignature")
    if signature is not None:
        SHAPES.text(f"{at}.{signature_key}", signature)  # opaque: not counted
    if "text" in part:
        text = SHAPES.text(f"{at}.text", part["text"])
        thought = part.get("thought")
        if thought is not None and not isinstance(thought, bool):
            SHAPES.fail(f"{at}.thought", "must be a boolean", thought)
        return text, 0
    inline_key, inline = _field(part, "inlineData")
    if inline is not None:
        body = SHAPES.mapping(f"{at}.{inline_key}", inline)
        mime = _mime(body, f"{at}.{inline_key}", snake=inline_key == "inline_data")
        data = body.get("data")
        if not isinstance(data, str | bytes):
            SHAPES.fail(f"{at}.{inline_key}.data", "must be base64 text or bytes", data)
        return _media(mime, at, overhead, data=base64_prefix(data), payload=data)
    file_key, file = _field(part, "fileData")
    if file is not None:
        body = SHAPES.mapping(f"{at}.{file_key}", file)
        snake = file_key == "file_data"
        uri_key, uri = _field(body, "fileUri", snake_first=snake)
        SHAPES.text(f"{at}.{file_key}.{uri_key}", uri, non_empty=True)
        mime = _mime(body, f"{at}.{file_key}", snake=snake)
        return _media(mime, at, overhead, reference=uri)
    # Code execution and other parts are counted as their JSON text.
    shown = {key: value for key, value in part.items() if key != signature_key}
    if not shown and signature is not None:
        return "", 0
    if not shown:
        SHAPES.fail(at, "must hold text, inlineData, fileData, functionCall or functionResponse")
    return as_json_text(shown), 0


def _mime(body: Mapping[str, Any], at: str, *, snake: bool) -> str:
    key, mime = _field(body, "mimeType", snake_first=snake)
    return SHAPES.text(f"{at}.{key}", mime, non_empty=True)


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
        return "[image]", overhead.image_cost("gemini", data=data, reference=reference)
    if mime.startswith("audio/"):
        return "[audio]", audio_tokens("gemini", payload, overhead, at)
    if mime.startswith("video/"):  # 263 tokens per second, but no video length is read here
        return "[video]", overhead.media_cost("audio", at)
    return "[document]", document_tokens("gemini", payload, overhead, at)
