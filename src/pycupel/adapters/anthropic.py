"""Anthropic Messages API histories in, a smaller valid history out.

Input is what you would pass to ``client.messages.create``: an optional ``system`` (a string or
a list of ``text`` blocks) and ``messages`` with role ``user`` or ``assistant`` whose content is
a string or a list of blocks (``text``, ``image``, ``document``, ``tool_use``, ``tool_result``,
``thinking``...).

* The ``system`` prompt becomes a ``SystemPrompt`` item, pinned by default, and comes back as
  the ``system`` of the result.
* An assistant message with ``tool_use`` blocks and the user message carrying the matching
  ``tool_result`` blocks form one unit (kind ``ToolOutput``), kept or dropped as a whole. That
  user message is taken whole: text after its results stays with them.
* The latest user message holding more than tool results is the latest user turn, pinned by
  default.

Rules of the Messages API that dropping messages could break, and how they are kept:

* *Tool results immediately follow their tool use.* Units are whole input spans, so a kept
  ``tool_result`` message always directly follows its ``tool_use`` message.
* *Alternating roles.* The API combines consecutive ``user`` (or ``assistant``) turns into one
  turn, so the boundaries left by dropped messages are valid and kept as they are. Pass
  ``merge_consecutive=True`` for gateways that demand strict alternation: runs of same-role
  messages are merged into one message whose content is their blocks in order (``tool_result``
  blocks stay first, since only the first message of a user run can hold them; ``thinking`` and
  ``redacted_thinking`` blocks move to the front of a merged assistant turn, which must open
  with them).
* *Extended thinking.* ``thinking`` / ``redacted_thinking`` blocks are never separated from
  their assistant turn, and so stay with its ``tool_use`` blocks and the results answering
  them (the API rejects a tool loop whose thinking block was dropped). Thinking text is
  counted; signatures and redacted (encrypted) data are not.
* *Server-side compaction.* With context management's ``compact_20260112`` edit, the API
  answers with an assistant turn that opens with a ``compaction`` block (its summary in
  ``content``, opaque ``encrypted_content``), and on later requests it drops every message
  block before the latest such block. Append the response as usual: everything before the
  latest assistant message holding a ``compaction`` block is left out of the units, the
  counts and the selection (it stays in your list); that message's unit is pinned (the
  block is never dropped nor split from its turn, whatever ``pin_system`` says), so a
  fitted history opens with it, as the API reads it. A ``compaction`` block counts as its
  summary text.
* *Start with a user turn.* With ``start_with_user=True`` (the default; Bedrock and older API
  versions require it) leading units that start with an assistant message are dropped from the
  selection and reported as excluded with reason ``Filtered("start-with-user")``. A pinned unit
  is never dropped, so an output can still start with an assistant message when the pinned
  latest user turn shares a unit with a tool call (its text follows the tool results).

Token counting: Anthropic does not publish its prompt format, so :data:`DEFAULT_OVERHEAD` is an
estimate: 4 tokens per message, 10 per ``tool_use`` or ``tool_result`` block, 3 per request and
1600 per image (the documented cost of an image near the 1.15 megapixel size limit; a smaller
image costs about width x height / 750). Calibrate against the API's token-counting endpoint
when the budget is tight. Tool inputs are counted as their JSON text; ``document`` blocks with
inline text are counted as text, other documents need ``MessageOverhead(document=...)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, Unpack, cast

from pycupel._checks import check_bool
from pycupel.conversation import api
from pycupel.conversation import recall_tool as recalling
from pycupel.conversation.api import START_WITH_USER_FILTER
from pycupel.conversation.codec import Codec, Kept, rewritten
from pycupel.conversation.media import ImageProvider, base64_prefix
from pycupel.conversation.media_length import document_tokens
from pycupel.conversation.merge import merge_runs
from pycupel.conversation.options import (
    AlternatingFitOptions,
    CountOptions,
    UnitOptions,
    documented,
)
from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.parsed import (
    AnswerRef,
    CallRef,
    Category,
    ParsedMessage,
    ParseState,
    Turn,
)
from pycupel.conversation.recall import Recall
from pycupel.conversation.tools import ANTHROPIC_TOOLS, ToolSpec
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
    "AnthropicCodec",
    "AnthropicFitResult",
    "AnthropicHistory",
    "FitOptions",
    "Session",
    "afit_messages",
    "answer_recall",
    "count_tokens",
    "fit_messages",
    "from_messages",
    "recall_tool",
    "to_messages",
]

AnthropicMessage = Mapping[str, Any]
SystemPrompt = str | Sequence[Mapping[str, Any]]
CacheTTL = Literal["5m", "1h"]

SOURCE = "anthropic messages"
SHAPES = Shapes(SOURCE)

DEFAULT_OVERHEAD = MessageOverhead(per_message=4, per_tool_call=10, per_request=3, image=1600)
"""An estimate of Anthropic's prompt format (see the module documentation)."""

_DOCS: Mapping[str, str] = MappingProxyType(
    {
        "messages": "the request's ``messages`` (never modified).",
        "system": "the request's system prompt (a string or a list of text blocks); the "
        "budget covers it and the messages.",
    }
)


class FitOptions(AlternatingFitOptions, total=False):
    """The options of :func:`fit_messages` and :func:`afit_messages` (all but ``counter``)."""

    system: SystemPrompt | None


_ROLES = ("user", "assistant")

_NOT_CACHEABLE = frozenset({"thinking", "redacted_thinking"})
"""Blocks that cannot carry a cache breakpoint."""


class AnthropicCodec(Codec[AnthropicMessage]):
    """Messages API messages to the engine and back (see the module documentation)."""

    provider = "anthropic"
    source = SOURCE
    default_overhead = DEFAULT_OVERHEAD
    tool_framing = ANTHROPIC_TOOLS
    leading_role = "assistant"

    def parse(
        self, index: int, message: AnthropicMessage, overhead: MessageOverhead, state: ParseState
    ) -> ParsedMessage:
        tool_names = state.tool_names
        where = f"messages[{index}]"
        message = SHAPES.mapping(where, message)
        hint = "pass the system prompt as system=..."
        role = SHAPES.role(f"{where}.role", message.get("role"), _ROLES, system_hint=hint)
        content = message.get("content")
        if isinstance(content, str):
            category: Category = "user" if role == "user" else "assistant"
            return ParsedMessage.of_text(
                index, role, category, content, overhead.per_message, user_turn=role == "user"
            )
        blocks = SHAPES.sequence(f"{where}.content", content, limit=MAX_PARTS_PER_MESSAGE)
        turn = Turn(index, role, overhead.per_message)
        for position, raw_block in enumerate(blocks):
            at = f"{where}.content[{position}]"
            block = SHAPES.mapping(at, raw_block)
            kind = SHAPES.text(f"{at}.type", block.get("type"), non_empty=True)
            if kind == "tool_use":
                if role != "assistant":
                    SHAPES.fail(f"{at}.type", "tool_use blocks belong in assistant messages", kind)
                call_id = SHAPES.call_id(f"{at}.id", block.get("id"))
                name = SHAPES.text(f"{at}.name", block.get("name"), non_empty=True)
                arguments = SHAPES.mapping(f"{at}.input", block.get("input"))
                tool_names[call_id] = name
                text = f"{name}({as_json_text(dict(arguments))})"
                turn.call(
                    CallRef(call_id, f"{at}.id", name, arguments), text, overhead.per_tool_call
                )
            elif kind == "compaction":
                if role != "assistant":
                    SHAPES.fail(
                        f"{at}.type", "compaction blocks belong in assistant messages", kind
                    )
                # The summary is what the model reads; encrypted_content is opaque.
                summary = block.get("content")
                turn.content(
                    "[compaction failed]"
                    if summary is None
                    else SHAPES.text(f"{at}.content", summary)
                )
                if block.get("encrypted_content") is not None:
                    SHAPES.text(f"{at}.encrypted_content", block.get("encrypted_content"))
                turn.anchor = True
            elif kind == "tool_result":
                if role != "user":
                    SHAPES.fail(f"{at}.type", "tool_result blocks belong in user messages", kind)
                call_id = SHAPES.call_id(f"{at}.tool_use_id", block.get("tool_use_id"))
                is_error = block.get("is_error")
                if is_error is not None and not isinstance(is_error, bool):
                    SHAPES.fail(f"{at}.is_error", "must be a boolean", is_error)
                text, media = _result_content(block.get("content"), f"{at}.content", overhead)
                answer = AnswerRef(call_id, f"{at}.tool_use_id")
                turn.result(answer, tool_names.get(call_id), text, overhead.per_tool_call + media)
            else:
                turn.content(*_block(kind, block, at, overhead))
        return turn.parsed("tool results")

    def opens_history(self, message: AnthropicMessage) -> bool:
        """Whether ``message`` is an assistant turn holding a ``compaction`` block: the API
        drops everything before it."""
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            return False
        content = message.get("content")
        return isinstance(content, list | tuple) and any(
            isinstance(block, Mapping) and block.get("type") == "compaction" for block in content
        )

    def parse_system(self, system: object, overhead: MessageOverhead) -> ParsedMessage:
        if isinstance(system, str):
            text = system
        else:
            blocks = SHAPES.sequence("system", system, limit=MAX_PARTS_PER_MESSAGE)
            texts = []
            for position, raw in enumerate(blocks):
                at = f"system[{position}]"
                block = SHAPES.mapping(at, raw)
                if block.get("type") != "text":
                    SHAPES.fail(
                        f"{at}.type", "must be 'text' in a system prompt", block.get("type")
                    )
                texts.append(SHAPES.text(f"{at}.text", block.get("text")))
            text = "\n".join(texts)
        return ParsedMessage.of_text(None, "system", "system", text, overhead.per_message)

    def rewrite(
        self, messages: Sequence[AnthropicMessage], replace: Replace, overhead: MessageOverhead
    ) -> list[AnthropicMessage] | None:
        """The unit's messages with each ``tool_result`` block's content (and each plain string
        content) replaced as ``replace`` says; ``tool_use_id``, ``is_error`` and every other key
        are kept."""
        names = {
            block["id"]: block["name"]
            for message in messages
            for block in _blocks(message["content"])
            if isinstance(block, Mapping) and block.get("type") == "tool_use"
        }

        def rewrite(position: int, message: AnthropicMessage) -> AnthropicMessage | None:
            content = message["content"]
            if isinstance(content, str):
                new_text = replace(None, content) if content else None
                return None if new_text is None else {**message, "content": new_text}
            blocks = list(content)
            for number, block in enumerate(content):
                if isinstance(block, Mapping) and block.get("type") == "tool_result":
                    at = f"messages[{position}].content[{number}].content"
                    text, _ = _result_content(block.get("content"), at, overhead)
                    new_text = replace(names.get(block["tool_use_id"], ""), text)
                    if new_text is not None:
                        blocks[number] = {**block, "content": new_text}
            return {**message, "content": blocks} if blocks != list(content) else None

        return rewritten(messages, rewrite)

    def unnarrated(self, messages: Sequence[AnthropicMessage]) -> list[AnthropicMessage] | None:
        """The unit's messages without the ``text`` blocks of an assistant message that has
        ``tool_use`` blocks (thinking and every other block kept)."""

        def rewrite(_: int, message: AnthropicMessage) -> AnthropicMessage | None:
            content = message["content"]
            if message["role"] != "assistant" or isinstance(content, str):
                return None
            kinds = [block.get("type") if isinstance(block, Mapping) else None for block in content]
            if "tool_use" not in kinds or "text" not in kinds:
                return None
            blocks = [block for block, kind in zip(content, kinds, strict=True) if kind != "text"]
            return {**message, "content": blocks}

        return rewritten(messages, rewrite)

    def summary_message(self, text: str) -> AnthropicMessage:
        return {"role": "user", "content": text}

    def tool_definition(self, tool: ToolSpec) -> dict[str, Any]:
        return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}

    def tool_answer(self, call: CallRef, text: str, *, error: bool) -> dict[str, Any]:
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": call.call_id,
            "content": text,
        }
        if error:
            block["is_error"] = True
        return block

    def merge(self, kept: Kept[AnthropicMessage]) -> list[AnthropicMessage]:
        # Tool results stay first (only the first message of a user run can hold them); an
        # assistant turn must open with its thinking blocks.
        return merge_runs(
            kept, source=SOURCE, list_name="messages", body="content", blocks=_blocks, lead=_leads
        )

    def cache_mark(self, message: AnthropicMessage, control: object) -> AnthropicMessage:
        """A copy of ``message`` whose last cacheable block carries ``cache_control``."""
        control = dict(cast("Mapping[str, Any]", control))  # each mark a dict of its own
        content = message["content"]
        if isinstance(content, str):
            if not content:
                return message
            blocks: list[Any] = [{"type": "text", "text": content, "cache_control": control}]
            return {**message, "content": blocks}
        blocks = list(content)
        for position in range(len(blocks) - 1, -1, -1):
            block = blocks[position]
            if block.get("type") not in _NOT_CACHEABLE:
                blocks[position] = {**block, "cache_control": control}
                return {**message, "content": blocks}
        return message

    def cache_mark_system(self, system: object, control: object) -> object:
        """A copy of the system prompt as text blocks, the last one carrying ``control``."""
        control = dict(cast("Mapping[str, Any]", control))
        if isinstance(system, str):
            return (
                [{"type": "text", "text": system, "cache_control": control}] if system else system
            )
        blocks = list(cast("Sequence[Mapping[str, Any]]", system))
        if not blocks:
            return system
        blocks[-1] = {**blocks[-1], "cache_control": control}
        return blocks


CODEC = AnthropicCodec()
"""The codec of this module's functions."""


@documented(UnitOptions, docs=_DOCS)
def from_messages(
    messages: Sequence[AnthropicMessage],
    *,
    system: SystemPrompt | None = None,
    **options: Unpack[UnitOptions],
) -> MessageUnits[AnthropicMessage]:
    """Split an Anthropic history (and its system prompt) into units, one item per unit."""
    return api.read_units(CODEC, messages, system, options)


class AnthropicHistory(NamedTuple):
    """A ``system`` prompt (``None`` when absent or not selected) and the ``messages``."""

    system: SystemPrompt | None
    messages: list[AnthropicMessage]


def to_messages(
    selection: Iterable[ContextItem],
    units: MessageUnits[AnthropicMessage],
    *,
    merge_consecutive: bool = False,
) -> AnthropicHistory:
    """The system prompt and messages of the selected units, in the original order.

    The message list is new; unmerged elements are your original message objects. With
    ``merge_consecutive``, runs of same-role messages become one new message (see the module
    documentation); a message with keys other than ``role`` and ``content`` cannot be merged
    and raises :class:`~pycupel.errors.MessageFormatError`.
    """
    kept, messages = api.selected(CODEC, selection, units, merge_consecutive=merge_consecutive)
    return AnthropicHistory(cast("SystemPrompt", units.system) if kept else None, messages)


@documented(CountOptions, docs=_DOCS)
def count_tokens(
    messages: Sequence[AnthropicMessage],
    *,
    system: SystemPrompt | None = None,
    **options: Unpack[CountOptions],
) -> int:
    """Tokens of a request's system prompt and messages, counted as :func:`fit_messages` does."""
    return api.count(CODEC, messages, system, options)


@recalling.tool_documented
def recall_tool(recall: Recall) -> dict[str, Any]:
    """The recall tool's definition, for a request's ``tools``."""
    return cast(dict[str, Any], recalling.recall_tool(CODEC, recall))


@recalling.answers_documented
def answer_recall(
    recall: Recall, message: AnthropicMessage | Sequence[AnthropicMessage]
) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks answering the recall calls of an assistant message (or of
    a list of messages), for the content of the next user message (beside the results of
    any other tool it called); an error block has ``is_error``."""
    return cast(list[dict[str, Any]], recalling.answer_recall(CODEC, recall, message))


class AnthropicFitResult(NamedTuple):
    """What :func:`fit_messages` returns; unpacks as ``system, messages, report``: the system
    prompt as given (``None`` when there was none or it was dropped), the fitted messages
    (your objects; merged ones are new) in order, and why every unit was kept or dropped."""

    system: SystemPrompt | None
    messages: list[AnthropicMessage]
    report: SelectionReport


@documented(FitOptions, docs=_DOCS, first=["system"])
def fit_messages(
    messages: Sequence[AnthropicMessage],
    *,
    counter: TokenCounter | None = None,
    **options: Unpack[FitOptions],
) -> AnthropicFitResult:
    """Fit an Anthropic history (and its system prompt) into a token budget.

    Returns:
        ``AnthropicFitResult(system, messages, report)``, ready for
        ``client.messages.create(system=..., messages=...)`` (omit ``system`` when None).
    """
    fitting = api.fit(CODEC, messages, options.pop("system", None), counter, options)
    return AnthropicFitResult(fitting.system, fitting.messages, fitting.report)


@documented(FitOptions, docs=_DOCS, first=["system"])
async def afit_messages(
    messages: Sequence[AnthropicMessage],
    *,
    counter: AsyncTokenCounter,
    **options: Unpack[FitOptions],
) -> AnthropicFitResult:
    """:func:`fit_messages` with an asynchronous token counter (such as a wrapped
    ``messages.count_tokens``): every distinct text counted in one awaited call."""
    fitting = await api.afit(CODEC, messages, options.pop("system", None), counter, options)
    return AnthropicFitResult(fitting.system, fitting.messages, fitting.report)


# --------------------------------------------------------------------------- sessions


class Session(ChatSession[AnthropicMessage]):
    """One conversation, fitted turn after turn into a cache-stable window with breakpoints.

    Call :meth:`fit` every turn with the whole history so far and the system prompt, send
    ``window.system`` and ``window.messages``, then pass ``response.usage`` to
    :meth:`record_usage`. Between compactions each request extends the previous one, and the
    window carries ``cache_control`` breakpoints (at most three of the API's four) where
    Anthropic's cache wants them: at the end of the system prompt, at the end of the stable
    prefix (before the recall zone) and at the end of the request, so the next turn reads
    everything up to its own new messages from the cache. Breakpoints are set on copies of
    the marked system prompt and messages; your objects are never modified. Thinking blocks
    cannot carry a breakpoint, so a message ending with one is marked on its last other
    block (or not at all).

    See :class:`~pycupel.session.chat.ChatSession` for the thread rules.
    """

    __slots__ = ()

    @documented(SessionOptions, docs=SESSION_DOCS, defaults=SESSION_DEFAULTS, raises=SESSION_RAISES)
    def __init__(
        self,
        *,
        budget: int,
        overhead: MessageOverhead | None = None,
        cache_ttl: CacheTTL | None = "5m",
        start_with_user: bool = True,
        **options: Unpack[SessionOptions],
    ) -> None:
        check_bool(PipelineConfigError, "start_with_user", start_with_user)
        if cache_ttl not in ("5m", "1h", None):
            raise PipelineConfigError("cache_ttl", cache_ttl, "must be '5m', '1h' or None")
        control = (
            None
            if cache_ttl is None
            else {"type": "ephemeral"}
            if cache_ttl == "5m"
            else {"type": "ephemeral", "ttl": "1h"}
        )
        self._start(
            budget, overhead, options, start_with_user=start_with_user, cache_control=control
        )

    def _codec(self) -> AnthropicCodec:
        return CODEC

    def fit(
        self, messages: Sequence[AnthropicMessage], *, system: SystemPrompt | None = None
    ) -> SessionWindow[AnthropicMessage]:
        """This turn's window: ``window.system`` and ``window.messages`` to send.

        Raises:
            MessageFormatError: a malformed message or system prompt, or a ``tool_use``
                without its result.
            PinnedBudgetError: the system prompt and latest user turn alone do not fit.
        """
        return self._fit(messages, system)

    async def afit(
        self,
        messages: Sequence[AnthropicMessage],
        *,
        system: SystemPrompt | None = None,
        counter: AsyncTokenCounter,
    ) -> SessionWindow[AnthropicMessage]:
        """:meth:`fit` with the new messages counted by an asynchronous token counter (such
        as a wrapped ``messages.count_tokens``): one awaited ``count_batch`` call per turn
        for the texts this turn adds. Raises what :meth:`fit` raises.
        """
        return await self._afit(messages, counter, system)


def _leads(role: str, block: object) -> bool:
    """Whether ``block`` opens a merged ``role`` turn (thinking opens an assistant turn)."""
    return (
        role == "assistant"
        and isinstance(block, Mapping)
        and block.get("type") in ("thinking", "redacted_thinking")
    )


def _blocks(content: object) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    assert isinstance(content, list | tuple)  # validated when parsed
    return list(content)


# --------------------------------------------------------------------------- parsing


def _block(
    kind: str, block: Mapping[str, Any], at: str, overhead: MessageOverhead
) -> tuple[str, int]:
    """Visible text and fixed media cost of a block other than tool_use/tool_result."""
    if kind == "text":
        return SHAPES.text(f"{at}.text", block.get("text")), 0
    if kind == "image":
        source = SHAPES.mapping(f"{at}.source", block.get("source"))
        return "[image]", image_cost(source, f"{at}.source", overhead)
    if kind == "document":
        return _document(block, at, overhead)
    if kind == "thinking":
        # The signature is opaque: only the thinking text is counted.
        return SHAPES.text(f"{at}.thinking", block.get("thinking")), 0
    if kind == "redacted_thinking":
        # Encrypted reasoning: its ``data`` is not text the model reads as such.
        SHAPES.text(f"{at}.data", block.get("data"))
        return "[redacted thinking]", 0
    # Other blocks (redacted thinking, server tools, search results...) are counted as their
    # JSON text: an over-estimate is safe.
    return as_json_text(dict(block)), 0


def _document(block: Mapping[str, Any], at: str, overhead: MessageOverhead) -> tuple[str, int]:
    source = SHAPES.mapping(f"{at}.source", block.get("source"))
    extras = [
        SHAPES.text(f"{at}.{key}", block[key])
        for key in ("title", "context")
        if block.get(key) is not None
    ]
    kind = source.get("type")
    if kind == "text":
        body = SHAPES.text(f"{at}.source.data", source.get("data"))
        return "\n".join([*extras, body]), 0
    if kind == "content":
        inner = source.get("content")
        text, media = SHAPES.parts(
            f"{at}.source.content", inner, partial(_block, overhead=overhead)
        )
        return "\n".join([*extras, text] if text or isinstance(inner, str) else extras), media
    payload = source.get("data") if kind == "base64" else None
    return "\n".join([*extras, "[document]"]), document_tokens("anthropic", payload, overhead, at)


def _result_content(content: object, at: str, overhead: MessageOverhead) -> tuple[str, int]:
    if content is None:
        return "", 0
    return SHAPES.parts(at, content, partial(_result_block, overhead=overhead))


def _result_block(
    kind: str, block: Mapping[str, Any], at: str, overhead: MessageOverhead
) -> tuple[str, int]:
    if kind in ("tool_use", "tool_result"):
        SHAPES.fail(f"{at}.type", "must not be nested inside a tool_result", kind)
    return _block(kind, block, at, overhead)


def image_cost(
    source: Mapping[str, Any],
    at: str,
    overhead: MessageOverhead,
    pricing: ImageProvider = "anthropic",
    shapes: Shapes = SHAPES,
) -> int:
    """An image ``source``'s tokens (``base64`` data, or a ``url`` or ``file`` given in the
    overhead's ``image_sizes``) from its pixel size, else the fixed estimate, by
    ``pricing``'s formula (LangChain passes Anthropic blocks to any model); ``shapes`` names
    the input in errors."""
    kind = source.get("type")
    data = None
    reference = None
    if kind == "base64":
        payload = source.get("data")
        data = base64_prefix(shapes.text(f"{at}.data", payload)) if payload is not None else None
    elif kind in ("url", "file"):
        key = "url" if kind == "url" else "file_id"
        value = source.get(key)
        reference = shapes.text(f"{at}.{key}", value) if value is not None else None
    return overhead.image_cost(pricing, data=data, reference=reference)
