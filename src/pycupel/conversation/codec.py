"""What a message format is to the engine: how its messages are read and written.

A :class:`Codec` is the only format-specific part of a fit or a session. It parses one
message of its format into a :class:`~pycupel.conversation.parsed.ParsedMessage` (validating
its shape, naming the location of anything wrong), parses the system prompt that some
formats pass beside the list, rewrites a unit's messages for a shorter version, makes the
summary message, merges runs of same-role messages where its API wants that, and writes the
definition and the answers of a tool pycupel answers itself (the recall tool). Everything
else (grouping, counting, selection, versions, summaries, sessions) reads only parsed
messages and units, and is written once for every format.

A new format is one subclass: a parser, a rewriter and a few class attributes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.parsed import CallRef, ParsedMessage, ParseState
from pycupel.conversation.tools import ToolFraming, ToolSpec, with_tools
from pycupel.conversation.units import MessageUnit
from pycupel.conversation.validate import MAX_MESSAGES, expect_list, fail
from pycupel.conversation.versions import Editor, Replace
from pycupel.tokens import TokenCounter

__all__ = ["Codec", "Kept", "rewritten", "snapshot_json"]

M = TypeVar("M")

Kept = Sequence[tuple[int | None, M]]
"""Messages of a window with their positions in the history (``None``: a message the fit
made, such as the summary)."""


class Codec(ABC, Generic[M]):
    """How one provider's messages are read and written (see the module documentation).

    Attributes:
        provider: ``"openai"``, ``"responses"``, ``"anthropic"``, ``"gemini"``,
            ``"langchain"``; names the format in units and sessions.
        source: names the input in error messages (``"openai messages"``).
        list_name: what the format calls its message list, for error locations
            (``"messages"``, ``"contents"``, ``"input"``).
        default_overhead: the format's fixed token costs when the caller gives none.
        tool_framing: the fixed tokens the provider adds around tool definitions.
        leading_role: the role a request must not open with (Anthropic's ``assistant``,
            Gemini's ``model``), or ``None`` when any role may open it.
        merges_on_repair: whether repair mode merges runs of same-role messages (Gemini
            rejects them; Anthropic combines them itself).
    """

    provider: ClassVar[str]
    source: ClassVar[str]
    list_name: ClassVar[str] = "messages"
    default_overhead: ClassVar[MessageOverhead]
    tool_framing: ClassVar[ToolFraming]
    leading_role: ClassVar[str | None] = None
    merges_on_repair: ClassVar[bool] = False

    # ------------------------------------------------------------------ reading

    def messages(self, messages: object) -> Sequence[M]:
        """The message list, checked to be a list of at most :data:`MAX_MESSAGES`."""
        return expect_list(self.source, self.list_name, messages, limit=MAX_MESSAGES)

    @abstractmethod
    def parse(
        self, index: int, message: M, overhead: MessageOverhead, state: ParseState
    ) -> ParsedMessage:
        """Parse message ``index`` (``state`` carries what earlier messages opened, such as
        tool calls waiting for their results).

        Raises:
            MessageFormatError: the message is malformed; the error names its location.
        """

    def parse_system(self, system: object, overhead: MessageOverhead) -> ParsedMessage:
        """Parse a system prompt passed beside the messages (formats that have one)."""
        fail(self.source, "system", "this format has no system prompt beside the messages")

    def parse_all(
        self, messages: object, system: object, overhead: MessageOverhead
    ) -> list[ParsedMessage]:
        """The system prompt (when given) and every message the provider reads (from
        :meth:`history_start` on), parsed in order."""
        parsed: list[ParsedMessage] = []
        if system is not None:
            parsed.append(self.parse_system(system, overhead))
        state = ParseState()
        parse = self.parse
        listed = self.messages(messages)
        start = self.history_start(listed)
        parsed.extend(
            parse(index, listed[index], overhead, state) for index in range(start, len(listed))
        )
        return parsed

    def with_tools(
        self, overhead: MessageOverhead, tools: Sequence[Any] | None, counter: TokenCounter
    ) -> MessageOverhead:
        """``overhead`` with the request's tool definitions added to its per-request cost."""
        return with_tools(
            overhead, tools, source=self.source, counter=counter, framing=self.tool_framing
        )

    def origin(self, messages: object, system: object) -> object:
        """What :class:`~pycupel.conversation.units.MessageUnits` keeps beside the list to
        render a selection back (by default the system prompt as given)."""
        return system

    def opens_history(self, message: M) -> bool:
        """Whether the provider reads the list from ``message`` on, ignoring what comes
        before it (Anthropic: an assistant message holding a ``compaction`` block). Checked
        before the message is parsed, so a malformed message answers False."""
        return False

    def history_start(self, messages: Sequence[M]) -> int:
        """Position of the first message the provider reads: the latest that
        :meth:`opens_history`, else 0."""
        if type(self).opens_history is Codec.opens_history:
            return 0
        for position in range(len(messages) - 1, -1, -1):
            if self.opens_history(messages[position]):
                return position
        return 0

    def snapshot(self, message: M) -> object:
        """A copy of what makes ``message`` what it is, which compares equal (``==``) to
        ``message`` for as long as it is unchanged (sessions detect edits with it)."""
        return snapshot_json(message)

    def same(self, message: M, snapshot: object) -> bool:
        """Whether ``message`` still matches its :meth:`snapshot` (``message == snapshot``
        unless a format compares otherwise)."""
        return message == snapshot

    # ------------------------------------------------------------------ writing

    @abstractmethod
    def rewrite(
        self, messages: Sequence[M], replace: Replace, overhead: MessageOverhead
    ) -> list[M] | None:
        """A unit's messages with each tool result's text (and each plain-text message)
        replaced as ``replace`` says, as new objects keeping every id and key; ``None``
        when nothing changed. The caller's objects are never modified."""

    def unnarrated(self, messages: Sequence[M]) -> list[M] | None:
        """A unit's messages without the words an assistant message says beside its tool calls
        (the calls, their ids and every other part kept, as new objects); ``None`` when no
        message has such words. The bare version of a placeholder is made of them: an old
        round's narration is most of what its placeholder costs. A format whose narration is
        a message of its own (the Responses API's) has none inside a round."""
        return None

    @abstractmethod
    def summary_message(self, text: str) -> M:
        """The user message that carries a summary's text."""

    def is_system(self, message: M) -> bool:
        """Whether a message of the list is a system prompt (a summary goes after those)."""
        return False

    def merge(self, kept: Kept[M]) -> list[M]:
        """The messages with runs of same-role messages merged (formats that need it)."""
        return [message for _, message in kept]

    def cache_mark(self, message: M, control: object) -> M:
        """A copy of ``message`` carrying the prompt-cache breakpoint ``control`` at its end,
        or ``message`` itself when it cannot carry one (formats with explicit breakpoints)."""
        return message

    def cache_mark_system(self, system: object, control: object) -> object:
        """A copy of the system prompt passed beside the messages carrying ``control``."""
        return system

    # ------------------------------------------------------------------ tools answered here

    @abstractmethod
    def tool_definition(self, tool: ToolSpec) -> object:
        """``tool``'s definition as the provider's API takes it in a request's tools."""

    @abstractmethod
    def tool_answer(self, call: CallRef, text: str, *, error: bool) -> object:
        """The answer to ``call`` as the conversation carries it next (a tool message, a
        result block or part, an output item), ``error`` marking a failed call."""

    # ------------------------------------------------------------------ derived

    def editor(self, overhead: MessageOverhead) -> Editor[M]:
        """The rewriter and re-reader the shorter versions need."""

        def rewrite(messages: Sequence[M], replace: Replace) -> list[M] | None:
            return self.rewrite(messages, replace, overhead)

        def parse(messages: Sequence[M]) -> list[ParsedMessage]:
            return self.parse_all(list(messages), None, overhead)

        return Editor(rewrite=rewrite, parse=parse, unnarrated=self.unnarrated)

    def opens_wrongly(self, unit: MessageUnit) -> bool:
        """Whether ``unit`` starts with the role a request must not open with."""
        return unit.first_role == self.leading_role


def rewritten(messages: Sequence[M], rewrite: Callable[[int, M], M | None]) -> list[M] | None:
    """A codec's :meth:`~Codec.rewrite` over its messages one by one: each message as
    ``rewrite(position, message)`` makes it anew (``None``: unchanged), or ``None`` when no
    message changed."""
    new = [rewrite(position, message) for position, message in enumerate(messages)]
    if all(message is None for message in new):
        return None
    return [old if message is None else message for old, message in zip(messages, new, strict=True)]


def snapshot_json(value: object) -> object:
    """A structural copy of JSON-like data: dicts and lists copied, leaves shared."""
    if isinstance(value, dict):
        return {key: snapshot_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [snapshot_json(item) for item in value]
    return value
