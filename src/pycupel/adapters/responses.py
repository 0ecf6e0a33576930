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
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Any, NamedTuple, Unpack, cast

from pycupel.adapters.openai import BREAKPOINT, audio_cost, check_detail, mark_last_part
from pycupel.conversation import api
from pycupel.conversation import recall_tool as recalling
from pycupel.conversation.codec import Codec, rewritten
from pycupel.conversation.media import data_url_bytes
from pycupel.conversation.media_length import document_tokens
from pycupel.conversation.options import CountOptions, UnitOptions, documented
from pycupel.conversation.options import FitOptions as _FitOptions
from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.parsed import AnswerRef, CallRef, Category, ParsedMessage, ParseState
from pycupel.conversation.recall import Recall
from pycupel.conversation.tools import OPENAI_TOOLS, ToolSpec
from pycupel.conversation.units import MessageUnits
from pycupel.conversation.validate import MAX_MESSAGES, Shapes, as_json_text
from pycupel.conversation.versions import Replace
from pycupel.diagnostics import SelectionReport
from pycupel.model import ContextItem
from pycupel.session.chat import BreakpointSession
from pycupel.session.window import SessionWindow
from pycupel.tokens import TokenCounter
from pycupel.tokens.asynchronous import AsyncTokenCounter

__all__ = [
    "CODEC",
    "DEFAULT_OVERHEAD",
    "FitOptions",
    "ResponsesCodec",
    "ResponsesFitResult",
    "ResponsesHistory",
    "Session",
    "afit_messages",
    "answer_recall",
    "count_tokens",
    "fit_messages",
    "from_messages",
    "recall_tool",
    "to_messages",
]

ResponseItem = Mapping[str, Any]
ResponsesInput = str | Sequence[ResponseItem]

SOURCE = "openai responses input"
SHAPES = Shapes(SOURCE)

DEFAULT_OVERHEAD = MessageOverhead(per_message=4, per_tool_call=6, per_request=3, image=765)
"""Approximates OpenAI's format, as :data:`pycupel.adapters.openai.DEFAULT_OVERHEAD` does."""

_DOCS: Mapping[str, str] = MappingProxyType(
    {"instructions": "the request's ``instructions``; the budget covers them and the input."}
)


class FitOptions(_FitOptions, total=False):
    """The options of :func:`fit_messages` and :func:`afit_messages` (all but ``counter``)."""

    instructions: str | None


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


class ResponsesCodec(Codec[ResponseItem]):
    """Responses API input items to the engine and back (see the module documentation)."""

    provider = "responses"
    source = SOURCE
    list_name = "input"
    default_overhead = DEFAULT_OVERHEAD
    tool_framing = OPENAI_TOOLS

    def messages(self, messages: object) -> Sequence[ResponseItem]:
        if isinstance(messages, str):  # a plain-string input is one user message
            return ({"role": "user", "content": messages},)
        return SHAPES.sequence("input", messages, limit=MAX_MESSAGES)

    def parse(
        self, index: int, message: ResponseItem, overhead: MessageOverhead, state: ParseState
    ) -> ParsedMessage:
        tool_names = state.tool_names
        where = f"input[{index}]"
        item = SHAPES.mapping(where, message)
        kind = item.get("type")
        if kind is None or kind == "message":
            return _parse_message(index, where, item, overhead)
        if not isinstance(kind, str) or not kind:
            SHAPES.fail(f"{where}.type", "must be a non-empty string", kind)
        if kind in _CALLS:
            shape = _CALLS[kind]
            call_id = SHAPES.call_id(f"{where}.{shape.id_key}", item.get(shape.id_key))
            name = _call_name(kind, item, where)
            tool_names[call_id] = name
            text = _call_text(kind, name, item, where)
            arguments = item.get("arguments", item.get("input"))
            call = CallRef(call_id, f"{where}.{shape.id_key}", name, arguments)
            fixed = overhead.per_message + overhead.per_tool_call
            return ParsedMessage.tool_calls(index, kind, text, fixed, [call])
        if kind in _ANSWERS:
            key = _ANSWERS[kind]
            call_id = SHAPES.call_id(f"{where}.{key}", item.get(key))
            text, media = _output_content(kind, item, where, overhead)
            tool = tool_names.get(call_id)
            fixed = overhead.per_message + overhead.per_tool_call + media
            answer = AnswerRef(call_id, f"{where}.{key}")
            return ParsedMessage.tool_result(index, kind, text, fixed, answer, tool=tool)
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
            fixed = overhead.per_message + (overhead.image if item.get("result") else 0)
            return ParsedMessage.of_text(index, kind, "assistant", as_json_text(shown), fixed)
        # Other items (hosted tool calls, references...) are counted as their JSON text.
        shown = {key: value for key, value in item.items() if key not in _BOOKKEEPING}
        text = as_json_text(shown)
        return ParsedMessage.of_text(index, kind, "assistant", text, overhead.per_message)

    def parse_system(self, system: object, overhead: MessageOverhead) -> ParsedMessage:
        text = SHAPES.text("system", system)
        return ParsedMessage.of_text(None, "system", "system", text, overhead.per_message)

    def origin(self, messages: object, system: object) -> object:
        # The instructions and the input's form: a plain string comes back as the string.
        return _Origin(system if isinstance(system, str) else None, isinstance(messages, str))

    def rewrite(
        self, messages: Sequence[ResponseItem], replace: Replace, overhead: MessageOverhead
    ) -> list[ResponseItem] | None:
        """The unit's items with each text tool output (and each plain string message content)
        replaced as ``replace`` says; ``call_id`` and every other key are kept."""
        names = {
            item["call_id"]: str(item.get("name", ""))
            for item in messages
            if item.get("type") in _CALLS and "call_id" in item
        }

        def rewrite(position: int, item: ResponseItem) -> ResponseItem | None:
            kind = item.get("type")
            if kind in _SHRINKABLE_OUTPUTS:
                text, _ = _output_content(kind, item, f"input[{position}]", overhead)
                key, new_text = "output", replace(names.get(item["call_id"], ""), text)
            elif kind in (None, "message") and isinstance(item.get("content"), str):
                key, new_text = (
                    "content",
                    replace(None, item["content"]) if item["content"] else None,
                )
            else:
                return None
            return None if new_text is None else {**item, key: new_text}

        return rewritten(messages, rewrite)

    def summary_message(self, text: str) -> ResponseItem:
        return {"role": "user", "content": text}

    def tool_definition(self, tool: ToolSpec) -> dict[str, Any]:
        return {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        }

    def tool_answer(self, call: CallRef, text: str, *, error: bool) -> ResponseItem:
        return {"type": "function_call_output", "call_id": call.call_id, "output": text}

    def is_system(self, message: ResponseItem) -> bool:
        return message.get("role") in ("system", "developer")

    def cache_mark(self, message: ResponseItem, control: object) -> ResponseItem:
        """A copy of ``message`` whose last ``input_text``, ``input_image`` or ``input_file``
        part carries ``prompt_cache_breakpoint``: a system, developer or user message (its
        ``content``) or a function or custom tool call output (its ``output``); a string
        becomes one ``input_text`` part. ``message`` itself when it cannot carry one."""
        kind = message.get("type")
        if kind in (None, "message"):
            if message.get("role") not in ("system", "developer", "user"):
                return message
            key = "content"
        elif kind in ("function_call_output", "custom_tool_call_output"):
            key = "output"
        else:
            return message
        return mark_last_part(message, key, control, _MARKABLE_PARTS, "input_text")


_MARKABLE_PARTS = frozenset({"input_text", "input_image", "input_file"})
"""Input parts that accept ``prompt_cache_breakpoint``."""


CODEC = ResponsesCodec()
"""The codec of this module's functions."""


@documented(UnitOptions, docs=_DOCS)
def from_messages(
    messages: ResponsesInput, *, instructions: str | None = None, **options: Unpack[UnitOptions]
) -> MessageUnits[Any]:
    """Split a Responses ``input`` (and its ``instructions``) into units, one item per unit."""
    return api.read_units(CODEC, messages, instructions, options)


class ResponsesHistory(NamedTuple):
    """The ``instructions`` (``None`` when absent or not selected) and the ``input``."""

    instructions: str | None
    input: str | list[ResponseItem]


def to_messages(selection: Iterable[ContextItem], units: MessageUnits[Any]) -> ResponsesHistory:
    """The instructions and input items of the selected units, in the original order.

    The item list is new; its elements are your original item objects. A plain-string input
    comes back as the string when selected (an empty list otherwise).
    """
    kept, items = api.selected(CODEC, selection, units)
    return _history(units, kept, items)


@documented(CountOptions, docs=_DOCS)
def count_tokens(
    messages: ResponsesInput,
    *,
    instructions: str | None = None,
    **options: Unpack[CountOptions],
) -> int:
    """Tokens of a request's instructions and input, counted as :func:`fit_messages` does."""
    return api.count(CODEC, messages, instructions, options)


@recalling.tool_documented
def recall_tool(recall: Recall) -> dict[str, Any]:
    """The recall tool's definition, for a request's ``tools``."""
    return cast(dict[str, Any], recalling.recall_tool(CODEC, recall))


@recalling.answers_documented
def answer_recall(
    recall: Recall, message: ResponseItem | Sequence[ResponseItem]
) -> list[ResponseItem]:
    """The ``function_call_output`` items answering the recall calls among a response's
    output items (one item or a list), to add to the next input."""
    return cast(list[ResponseItem], recalling.answer_recall(CODEC, recall, message))


class ResponsesFitResult(NamedTuple):
    """What :func:`fit_messages` returns; unpacks as ``instructions, input, report``: the
    instructions as given (``None`` when there were none), the fitted input (your items in
    order; a plain-string input comes back as the string), and why every unit was kept or
    dropped."""

    instructions: str | None
    input: str | list[ResponseItem]
    report: SelectionReport


@documented(FitOptions, docs=_DOCS, first=["instructions"])
def fit_messages(
    messages: ResponsesInput, *, counter: TokenCounter | None = None, **options: Unpack[FitOptions]
) -> ResponsesFitResult:
    """Fit a Responses input (and instructions) into a token budget.

    Returns:
        ``ResponsesFitResult(instructions, input, report)``, ready for
        ``client.responses.create(instructions=..., input=...)``.
    """
    fitting = api.fit(CODEC, messages, options.pop("instructions", None), counter, options)
    return _result(messages, fitting)


@documented(FitOptions, docs=_DOCS, first=["instructions"])
async def afit_messages(
    messages: ResponsesInput, *, counter: AsyncTokenCounter, **options: Unpack[FitOptions]
) -> ResponsesFitResult:
    """:func:`fit_messages` with an asynchronous token counter: every distinct text counted
    in one awaited call."""
    fitting = await api.afit(CODEC, messages, options.pop("instructions", None), counter, options)
    return _result(messages, fitting)


def _result(
    messages: ResponsesInput, fitting: api.Fitting[ResponseItem, str | None]
) -> ResponsesFitResult:
    fitted: str | list[ResponseItem] = fitting.messages
    if isinstance(messages, str) and fitting.messages:
        fitted = messages  # the plain string came back whole
    return ResponsesFitResult(fitting.system, fitted, fitting.report)


def _history(units: MessageUnits[Any], kept: bool, items: list[ResponseItem]) -> ResponsesHistory:
    origin = units.system
    assert isinstance(origin, _Origin)  # set by the codec
    instructions = origin.instructions if kept else None
    if origin.plain_string and items:
        return ResponsesHistory(instructions, items[0]["content"])
    return ResponsesHistory(instructions, items)


# --------------------------------------------------------------------------- sessions


class Session(BreakpointSession[ResponseItem]):
    """One conversation of Responses input items, fitted turn after turn into a cache-stable
    window.

    Call :meth:`fit` every turn with the whole input so far (the same list grown) and the
    instructions, then send ``instructions=window.system, input=window.messages`` and pass
    ``response.usage`` to :meth:`record_usage`. Arguments, caching (a stable
    ``prompt_cache_key``; with ``cache_breakpoints=True``, explicit
    ``prompt_cache_breakpoint`` marks for GPT-5.6 and later), behaviour and thread rules are
    those of :class:`pycupel.adapters.openai.Session`. The ``instructions`` cannot carry a
    breakpoint: the system prompt's mark goes on leading system or developer items only. A
    plain-string input is one user message; the window then holds that message as an item.
    """

    __slots__ = ()

    explicit_breakpoint = BREAKPOINT

    def _codec(self) -> ResponsesCodec:
        return CODEC

    def fit(
        self, messages: ResponsesInput, *, instructions: str | None = None
    ) -> SessionWindow[ResponseItem]:
        """This turn's window: ``window.system`` (the instructions) and ``window.messages``
        (the input items) to send.

        Raises:
            MessageFormatError: a malformed item, or a call without its output.
            PinnedBudgetError: the instructions and latest user turn alone do not fit.
        """
        return self._fit(CODEC.messages(messages), instructions)

    async def afit(
        self,
        messages: ResponsesInput,
        *,
        instructions: str | None = None,
        counter: AsyncTokenCounter,
    ) -> SessionWindow[ResponseItem]:
        """:meth:`fit` with the new items counted by an asynchronous token counter: one
        awaited ``count_batch`` call per turn for the texts this turn adds."""
        return await self._afit(CODEC.messages(messages), counter, instructions)


# --------------------------------------------------------------------------- versions


_SHRINKABLE_OUTPUTS = frozenset(
    {"function_call_output", "custom_tool_call_output", "apply_patch_call_output"}
)


# --------------------------------------------------------------------------- parsing


def _parse_message(
    index: int, where: str, item: Mapping[str, Any], overhead: MessageOverhead
) -> ParsedMessage:
    role = SHAPES.role(f"{where}.role", item.get("role"), _ROLES)
    text, media = _content(item.get("content"), f"{where}.content", overhead)
    fixed = overhead.per_message + media
    return ParsedMessage.of_text(index, role, _ROLES[role], text, fixed, user_turn=role == "user")


def _call_name(kind: str, item: Mapping[str, Any], where: str) -> str:
    if kind in ("function_call", "custom_tool_call", "mcp_approval_request"):
        return SHAPES.text(f"{where}.name", item.get("name"), non_empty=True)
    return kind.removesuffix("_call")  # computer, shell, apply_patch


def _call_text(kind: str, name: str, item: Mapping[str, Any], where: str) -> str:
    if kind in {"function_call", "mcp_approval_request"}:
        arguments = SHAPES.text(f"{where}.arguments", item.get("arguments"))
        return f"{name}({arguments})"
    if kind == "custom_tool_call":
        return f"{name}({SHAPES.text(f'{where}.input', item.get('input'))})"
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
        screenshot = SHAPES.mapping(f"{where}.output", item.get("output"))
        return "[screenshot]", _image_cost(screenshot, overhead)
    if kind == "apply_patch_call_output":
        output = SHAPES.optional_text(f"{where}.output", item.get("output"))
        return output or "", 0
    shown = {
        key: value
        for key, value in item.items()
        if key not in _BOOKKEEPING and key != "approval_request_id"
    }
    return as_json_text(shown), 0


def _reasoning_text(item: Mapping[str, Any], where: str) -> str:
    texts = [
        text
        for key in ("summary", "content")
        if item.get(key) is not None
        for text in SHAPES.texts(f"{where}.{key}", item[key])
    ]
    encrypted = item.get("encrypted_content")
    if encrypted is not None:
        SHAPES.text(f"{where}.encrypted_content", encrypted)
    return "\n".join(texts)


def _content(content: object, where: str, overhead: MessageOverhead) -> tuple[str, int]:
    """The visible text of a message's content and the fixed cost of its media parts."""
    return SHAPES.parts(where, content, partial(_part, overhead=overhead))


def _part(
    kind: str, part: Mapping[str, Any], at: str, overhead: MessageOverhead
) -> tuple[str, int]:
    """The visible text and the media tokens of one content part."""
    if kind in ("input_text", "output_text"):
        return SHAPES.text(f"{at}.text", part.get("text")), 0
    if kind == "refusal":
        return SHAPES.text(f"{at}.refusal", part.get("refusal")), 0
    if kind == "input_image":
        _image_source(part, at)
        return "[image]", _image_cost(part, overhead)
    if kind == "input_file":
        return _file_label(part, at), document_tokens("openai", part.get("file_data"), overhead, at)
    if kind == "input_audio":
        return "[audio]", audio_cost(part, at, overhead)
    # Unknown part types are counted as their JSON text: an over-estimate is safe.
    return as_json_text(dict(part)), 0


def _image_source(part: Mapping[str, Any], at: str) -> None:
    url = part.get("image_url")
    file_id = part.get("file_id")
    if url is None and file_id is None:
        SHAPES.fail(at, "an input_image needs an image_url or a file_id")
    SHAPES.optional_text(f"{at}.image_url", url)
    SHAPES.optional_text(f"{at}.file_id", file_id)
    if part.get("detail") is not None:
        check_detail(part.get("detail"), f"{at}.detail", SHAPES)


def _image_cost(part: Mapping[str, Any], overhead: MessageOverhead) -> int:
    """An image's tokens from its pixel size (read from a data URL or given in the
    overhead's ``image_sizes`` by URL or file id), else the fixed estimate."""
    url = part.get("image_url")
    reference = url if isinstance(url, str) else part.get("file_id")
    detail = part.get("detail")
    return overhead.image_cost(
        "openai",
        data=data_url_bytes(url) if isinstance(url, str) else None,
        reference=reference if isinstance(reference, str) else None,
        detail=detail if isinstance(detail, str) else "auto",
    )


def _file_label(part: Mapping[str, Any], at: str) -> str:
    filename = SHAPES.optional_text(f"{at}.filename", part.get("filename"))
    for key in ("file_id", "file_url", "file_data"):
        SHAPES.optional_text(f"{at}.{key}", part.get(key))
    return f"[file {filename}]" if filename else "[file]"
