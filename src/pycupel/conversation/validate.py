"""Shape checks for chat messages, shared by the provider adapters.

Every helper raises :class:`~pycupel.errors.MessageFormatError` naming the exact location
(``messages[7].tool_calls[0].id``), the rule and the offending value, so a malformed history
is reported where it is wrong instead of failing somewhere downstream (or at the provider).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from pycupel.errors import MessageFormatError

__all__ = [
    "MAX_ID_LENGTH",
    "MAX_MESSAGES",
    "MAX_PARTS_PER_MESSAGE",
    "MAX_TOOL_CALLS_PER_MESSAGE",
    "PartReader",
    "Shapes",
    "as_json_text",
    "expect_id",
    "expect_list",
    "expect_mapping",
    "expect_optional_str",
    "expect_str",
    "fail",
    "show",
]

MAX_MESSAGES = 100_000
"""Most messages one history may hold (the Anthropic Messages API's own per-request limit)."""
MAX_PARTS_PER_MESSAGE = 10_000
"""Most content parts/blocks one message (or one tool result) may hold."""
MAX_TOOL_CALLS_PER_MESSAGE = 1_000
"""Most tool calls one assistant message may issue."""
MAX_ID_LENGTH = 1_024
"""Longest accepted tool-call id, in characters."""


def show(value: object) -> str:
    """A short rendering of a rejected value for error messages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def fail(source: str, location: str, rule: str, value: object = ...) -> NoReturn:
    """Raise a MessageFormatError; ``value`` (when given) is shown after the rule."""
    detail = rule if value is ... else f"{rule}, got {show(value)}"
    raise MessageFormatError(source, location, detail)


def expect_mapping(source: str, location: str, value: object) -> Mapping[str, Any]:
    """Return ``value`` if it is a mapping (a dict, a TypedDict...)."""
    if type(value) is dict:  # the common case, without the slower ABC check
        return value
    if not isinstance(value, Mapping):
        fail(source, location, "must be a mapping (a dict)", value)
    return value


def expect_list(source: str, location: str, value: object, *, limit: int) -> Sequence[Any]:
    """Return ``value`` if it is a list or tuple of at most ``limit`` elements."""
    if not isinstance(value, list | tuple):
        fail(source, location, "must be a list", value)
    if len(value) > limit:
        fail(source, location, f"must hold at most {limit:,} elements, got {len(value):,}")
    return value


def expect_str(source: str, location: str, value: object, *, non_empty: bool = False) -> str:
    """Return ``value`` if it is a string (optionally a non-empty one)."""
    if not isinstance(value, str):
        fail(source, location, "must be a string", value)
    if non_empty and not value:
        fail(source, location, "must be a non-empty string", value)
    return value


def expect_optional_str(source: str, location: str, value: object) -> str | None:
    """Return ``value`` if it is a string or None."""
    if value is not None and not isinstance(value, str):
        fail(source, location, "must be a string or null", value)
    return value


def expect_id(source: str, location: str, value: object) -> str:
    """Return ``value`` if it is a usable tool-call id (non-empty, bounded length)."""
    text = expect_str(source, location, value, non_empty=True)
    if len(text) > MAX_ID_LENGTH:
        fail(source, location, f"must be at most {MAX_ID_LENGTH} characters long", value)
    return text


def as_json_text(value: object) -> str:
    """Compact, deterministic JSON for rendering tool arguments or unknown blocks.

    Values JSON cannot encode are rendered with ``repr`` rather than rejected: the text is only
    used for counting and display, never sent anywhere.
    """
    return json.dumps(value, ensure_ascii=False, default=repr)


PartReader = Callable[[str, Mapping[str, Any], str], "tuple[str, int] | None"]
"""Reads one content part: ``(type, part, location) -> (visible text, media tokens)``, or
``None`` for a part that adds nothing."""


@dataclass(frozen=True, slots=True)
class Shapes:
    """The shape checks above, bound to the name of one input (``"openai messages"``): what
    a format module calls as ``SHAPES.mapping(location, value)``."""

    source: str

    def fail(self, location: str, rule: str, value: object = ...) -> NoReturn:
        """Raise a MessageFormatError (see :func:`fail`)."""
        fail(self.source, location, rule, value)

    def mapping(self, location: str, value: object) -> Mapping[str, Any]:
        """See :func:`expect_mapping`."""
        return expect_mapping(self.source, location, value)

    def sequence(self, location: str, value: object, *, limit: int) -> Sequence[Any]:
        """See :func:`expect_list`."""
        return expect_list(self.source, location, value, limit=limit)

    def text(self, location: str, value: object, *, non_empty: bool = False) -> str:
        """See :func:`expect_str`."""
        return expect_str(self.source, location, value, non_empty=non_empty)

    def optional_text(self, location: str, value: object) -> str | None:
        """See :func:`expect_optional_str`."""
        return expect_optional_str(self.source, location, value)

    def call_id(self, location: str, value: object) -> str:
        """See :func:`expect_id`."""
        return expect_id(self.source, location, value)

    def parts(
        self, location: str, content: object, read: PartReader, *, strings: bool = False
    ) -> tuple[str, int]:
        """The visible text and the media tokens of a content value: a string as it is, else
        a list of at most :data:`MAX_PARTS_PER_MESSAGE` typed parts (mappings with a
        non-empty ``type``), each read by ``read``, their texts joined by newlines. With
        ``strings``, bare strings in the list are text parts (LangChain's content)."""
        if isinstance(content, str):
            return content, 0
        texts: list[str] = []
        media = 0
        for position, raw in enumerate(
            self.sequence(location, content, limit=MAX_PARTS_PER_MESSAGE)
        ):
            at = f"{location}[{position}]"
            if strings and isinstance(raw, str):
                texts.append(raw)
                continue
            part = self.mapping(at, raw)
            read_part = read(self.text(f"{at}.type", part.get("type"), non_empty=True), part, at)
            if read_part is not None:
                texts.append(read_part[0])
                media += read_part[1]
        return "\n".join(texts), media

    def role(
        self, location: str, value: object, roles: Collection[str], *, system_hint: str = ""
    ) -> str:
        """Return ``value`` if it is one of ``roles``; for a ``system`` role the error adds
        ``system_hint`` (a format whose system prompt is passed beside the messages)."""
        # A non-string role (a JSON object or array) is unhashable: test the type first.
        if not isinstance(value, str) or value not in roles:
            named = list(roles)
            rule = (
                f"must be {named[0]!r} or {named[1]!r}"
                if len(named) == 2
                else f"must be one of {', '.join(named)}"
            )
            hint = f" ({system_hint})" if system_hint and value == "system" else ""
            self.fail(location, rule + hint, value)
        return value

    def texts(self, location: str, value: object) -> list[str]:
        """The ``text`` of each part in the list ``value`` (mappings)."""
        texts: list[str] = []
        for position, raw in enumerate(self.sequence(location, value, limit=MAX_PARTS_PER_MESSAGE)):
            at = f"{location}[{position}]"
            texts.append(self.text(f"{at}.text", self.mapping(at, raw).get("text")))
        return texts
