"""How a session reads one format's messages: its codec's parser, snapshots and rewriter,
bound to the session's overhead and leading-turn rule."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from pycupel.conversation.codec import Codec
from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.parsed import ParsedMessage, ParseState
from pycupel.conversation.units import MessageUnit
from pycupel.conversation.versions import Editor

__all__ = ["NO_SYSTEM", "MessageFormat"]

M = TypeVar("M")

NO_SYSTEM: object = object()
"""Marks a format without a system prompt beside the messages (OpenAI, LangChain)."""


@dataclass(frozen=True, slots=True)
class MessageFormat(Generic[M]):
    """How a session reads one provider's messages: the adapter-side part of a session.

    Attributes:
        provider: ``"openai"``, ``"anthropic"``, ``"langchain"``...
        source: names the input in error messages (``"openai messages"``).
        overhead: the format's fixed token costs.
        parse: parses message ``index`` (the adapter's own message parser).
        snapshot: a copy of a message's content that compares equal (``==``) to the message
            for as long as the message is unchanged.
        same: whether a message still matches its snapshot; defaults to ``message == snapshot``.
        parse_system: parses a system prompt passed beside the messages (Anthropic).
        drops_leading: a unit that must not open the window's messages (Anthropic: one that
            starts with an assistant message); compaction leaves such units out.
        editor: rewrites and re-reads a unit's messages, for the shorter versions a
            compaction may keep (:mod:`pycupel.session.shrink`).
        summary_message: the format's user message holding a summary's text
            (:mod:`pycupel.session.summary`).
    """

    provider: str
    source: str
    overhead: MessageOverhead
    parse: Callable[[int, M, ParseState], ParsedMessage]
    snapshot: Callable[[M], object]
    same: Callable[[M, object], bool] | None = None
    parse_system: Callable[[object], ParsedMessage] | None = None
    drops_leading: Callable[[MessageUnit], bool] | None = None
    editor: Editor[M] | None = None
    summary_message: Callable[[str], M] | None = None

    @classmethod
    def of(
        cls, codec: Codec[M], overhead: MessageOverhead, *, start_with_user: bool = False
    ) -> MessageFormat[M]:
        """A format's session side, from its codec (``start_with_user``: a window never
        opens with the role the format's requests must not open with)."""

        def parse(index: int, raw: M, state: ParseState) -> ParsedMessage:
            return codec.parse(index, raw, overhead, state)

        def parse_system(system: object) -> ParsedMessage:
            return codec.parse_system(system, overhead)

        return cls(
            codec.provider,
            codec.source,
            overhead,
            parse=parse,
            snapshot=codec.snapshot,
            # The default test is ``==``, made inline (every turn checks every message).
            same=codec.same if type(codec).same is not Codec.same else None,
            parse_system=parse_system,
            drops_leading=(codec.opens_wrongly if start_with_user and codec.leading_role else None),
            editor=codec.editor(overhead),
            summary_message=codec.summary_message,
        )
