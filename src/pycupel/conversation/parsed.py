"""A message reduced to what grouping and counting need: the formats' common representation.

Each format module validates its own message shapes and turns every message into a
:class:`ParsedMessage`: its role, the text the model sees, the fixed token costs around that
text, the tool calls it issues and the tool calls it answers. Everything downstream (units,
versions, selection, sessions) reads only these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Literal

from pycupel.tokens import TokenCounter
from pycupel.tokens.base import checked_counts

__all__ = [
    "AnswerRef",
    "CallRef",
    "Category",
    "ParseState",
    "ParsedMessage",
    "Turn",
    "count_parsed",
    "message_tokens",
]

Category = Literal["system", "user", "assistant", "tool"]
"""What a message is, independent of the provider's role names."""


@dataclass(frozen=True, slots=True)
class CallRef:
    """A tool call issued by a message: its id, where it sits (for error messages), the
    tool's name, and its arguments as the message holds them (a JSON text or a mapping;
    read by the tools pycupel answers itself, such as the recall tool)."""

    call_id: str
    location: str
    name: str
    arguments: object = None


@dataclass(frozen=True, slots=True)
class AnswerRef:
    """A tool result inside a message, answering the call with ``call_id``."""

    call_id: str
    location: str


@dataclass(frozen=True, slots=True)
class ParsedMessage:
    """One validated message, reduced to what grouping and counting need.

    Attributes:
        index: position in the provider's message list; ``None`` for a system prompt passed
            beside the list (Anthropic's ``system`` parameter).
        role: the provider's role name, used when rendering (``"developer"``, ``"tool"``...).
        category: what the message is, provider-neutral.
        text: the text the model sees for this message (content, rendered tool calls and
            results, the name); it is what the counter counts.
        fixed_tokens: the format's fixed costs for this message (overheads, media).
        calls: tool calls this message issues.
        answers: tool calls this message answers.
        user_turn: True when the message carries user-authored input (not only tool
            results); the latest such message is the "latest user turn".
        name: the message's ``name`` (a participant or function name); counted as text.
        label: how the message is introduced in the rendered item content; defaults to the
            role, followed by the name in parentheses when there is one.
        tool_names: names of the tools called or answered, for tags.
        joins_next: the message must stay with the one that follows it (an OpenAI Responses
            ``reasoning`` item and the call or reply it led to); they share a unit.
        anchor: the provider reads the history from this message on (an Anthropic
            ``compaction`` block): its unit is always kept.
    """

    index: int | None
    role: str
    category: Category
    text: str
    fixed_tokens: int
    calls: tuple[CallRef, ...] = ()
    answers: tuple[AnswerRef, ...] = ()
    user_turn: bool = False
    name: str | None = None
    label: str | None = None
    tool_names: tuple[str, ...] = ()
    joins_next: bool = False
    anchor: bool = False

    @classmethod
    def of_text(
        cls,
        index: int | None,
        role: str,
        category: Category,
        text: str,
        fixed_tokens: int,
        *,
        user_turn: bool = False,
        name: str | None = None,
    ) -> ParsedMessage:
        """A message that is text only (no tool call or result, no label).

        The same object the constructor builds, made through the slots' own setters: adapters
        build one per message, and the frozen dataclass's ``__init__`` costs twice as much.
        """
        message = object.__new__(cls)
        _message_index(message, index)
        _message_role(message, role)
        _message_category(message, category)
        _message_text(message, text)
        _message_fixed_tokens(message, fixed_tokens)
        _message_calls(message, ())
        _message_answers(message, ())
        _message_user_turn(message, user_turn)
        _message_name(message, name)
        _message_label(message, None)
        _message_tool_names(message, ())
        _message_joins_next(message, False)
        _message_anchor(message, False)
        return message

    @classmethod
    def tool_result(
        cls,
        index: int,
        role: str,
        text: str,
        fixed_tokens: int,
        answers: AnswerRef,
        *,
        tool: str | None = None,
        name: str | None = None,
        label: str | None = None,
    ) -> ParsedMessage:
        """A message holding one tool's result (``tool``: the tool's name when known),
        introduced as ``"<role> (<tool>)"`` unless a ``label`` is given."""
        return cls(
            index=index,
            role=role,
            category="tool",
            text=text,
            fixed_tokens=fixed_tokens,
            answers=(answers,),
            name=name,
            label=label if label is not None else f"{role} ({tool})" if tool else role,
            tool_names=(tool,) if tool else (),
        )

    @classmethod
    def tool_calls(
        cls,
        index: int,
        role: str,
        text: str,
        fixed_tokens: int,
        calls: Sequence[CallRef],
        *,
        name: str | None = None,
    ) -> ParsedMessage:
        """An assistant message issuing ``calls``."""
        return cls(
            index=index,
            role=role,
            category="assistant",
            text=text,
            fixed_tokens=fixed_tokens,
            calls=tuple(calls),
            name=name,
            tool_names=tuple(dict.fromkeys(call.name for call in calls)),
        )

    def rendered(self) -> str:
        """The message as it appears in an item's content: ``"label: text"``."""
        label = self.label
        if label is None:
            label = f"{self.role} ({self.name})" if self.name else self.role
        return f"{label}: {self.text}"


# The slot setters in field order; a new ParsedMessage field makes this unpacking fail at
# import (and ParsedMessage.of_text must then set it).
(
    _message_index,
    _message_role,
    _message_category,
    _message_text,
    _message_fixed_tokens,
    _message_calls,
    _message_answers,
    _message_user_turn,
    _message_name,
    _message_label,
    _message_tool_names,
    _message_joins_next,
    _message_anchor,
) = (getattr(ParsedMessage, field.name).__set__ for field in fields(ParsedMessage))


def message_tokens(parsed: Sequence[ParsedMessage], counter: TokenCounter) -> list[int]:
    """Tokens of each message: its counted text and name plus its fixed costs.

    All texts go to the counter in one ``count_batch`` call.
    """
    texts = [message.text for message in parsed]
    named = [position for position, message in enumerate(parsed) if message.name]
    texts.extend(parsed[position].name or "" for position in named)
    counts = checked_counts(counter, counter.count_batch(texts), len(texts))
    tokens = [count + message.fixed_tokens for count, message in zip(counts, parsed, strict=False)]
    for offset, position in enumerate(named):
        tokens[position] += counts[len(parsed) + offset]
    return tokens


def count_parsed(parsed: Sequence[ParsedMessage], counter: TokenCounter) -> int:
    """Tokens of all messages (without the per-request overhead)."""
    return sum(message_tokens(parsed, counter))


class ParseState:
    """What a provider's parser carries from one message to the next (tool names by call id,
    legacy function calls waiting for their result, and ``extra``: anything else a format
    tracks, such as Gemini's calls waiting for a response)."""

    __slots__ = ("extra", "pending", "tool_names")

    def __init__(self) -> None:
        self.tool_names: dict[str, str] = {}
        self.pending: list[str] = []
        self.extra: dict[str, object] = {}


class Turn:
    """A ``user`` or assistant turn read block by block (Anthropic's content blocks, Gemini's
    parts): its texts, fixed costs, the tool calls it issues and the results it carries.

    A user turn is the user's input unless it holds only tool results; a turn holding
    results is introduced as ``"user (<results>: <tools>)"`` (``results`` names them in the
    format's words).
    """

    __slots__ = (
        "anchor",
        "answers",
        "calls",
        "fixed",
        "holds_input",
        "index",
        "role",
        "texts",
        "tools",
    )

    def __init__(self, index: int, role: str, fixed_tokens: int) -> None:
        self.index = index
        self.role = role
        self.fixed = fixed_tokens
        self.texts: list[str] = []
        self.calls: list[CallRef] = []
        self.answers: list[AnswerRef] = []
        self.tools: list[str] = []
        self.holds_input = False
        self.anchor = False
        """Whether the turn holds a block the provider reads the history from (see
        :attr:`ParsedMessage.anchor`)."""

    def content(self, text: str, tokens: int = 0) -> None:
        """A block of the turn's own content (text, an image...) and its fixed cost."""
        self.holds_input = True
        self.texts.append(text)
        self.fixed += tokens

    def call(self, call: CallRef, text: str, tokens: int) -> None:
        """A tool call the turn issues, rendered as ``text``."""
        self.calls.append(call)
        self.tools.append(call.name)
        self.texts.append(text)
        self.fixed += tokens

    def result(self, answer: AnswerRef, tool: str | None, text: str, tokens: int) -> None:
        """A tool result the turn carries (``tool``: the tool's name, when known)."""
        self.answers.append(answer)
        if tool:
            self.tools.append(tool)
        self.texts.append(text)
        self.fixed += tokens

    def parsed(self, results: str) -> ParsedMessage:
        """The turn as one parsed message."""
        role, answers = self.role, self.answers
        names = tuple(dict.fromkeys(self.tools))
        return ParsedMessage(
            index=self.index,
            role=role,
            category="user" if role == "user" else "assistant",
            text="\n".join(self.texts),
            fixed_tokens=self.fixed,
            calls=tuple(self.calls),
            answers=tuple(answers),
            user_turn=role == "user" and (self.holds_input or not answers),
            label=f"{role} ({results}: {', '.join(names)})" if answers and names else role,
            tool_names=names,
            anchor=self.anchor,
        )
