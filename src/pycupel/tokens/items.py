"""Build :class:`~pycupel.ContextItem` objects from text, counting tokens on the way.

Items need a token count; these helpers compute it with the counter you choose (by default the
dependency-free :class:`~pycupel.tokens.HeuristicCounter`) and pass every other field through to
``ContextItem``. The batch form counts all texts with one ``count_batch`` call, which is what
makes tokenizers with parallel batch APIs (and :class:`~pycupel.tokens.CachedCounter`) fast.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Final, TypedDict, Unpack

from pycupel.errors import ItemValidationError, TokenizerError
from pycupel.model import ContextItem, KindLike, SourceLike
from pycupel.tokens.base import TokenCounter, checked_count, checked_counts, counter_label
from pycupel.tokens.heuristic import HeuristicCounter

__all__ = ["ItemFields", "item_from_text", "items_from_texts"]

# Stateless and immutable, so one shared instance is safe.
_DEFAULT_COUNTER: Final = HeuristicCounter()


class ItemFields(TypedDict, total=False):
    """The :class:`~pycupel.ContextItem` fields other than ``content`` and ``tokens``."""

    kind: KindLike
    source: SourceLike
    priority: int | None
    tags: Iterable[str]
    metadata: Mapping[str, Any] | None
    timestamp: datetime | None
    future_relevance_hint: float | None
    pinned: bool
    original_tokens: int | None


_FIELD_NAMES: Final = frozenset(ItemFields.__annotations__)


def item_from_text(
    text: str, *, counter: TokenCounter | None = None, **fields: Unpack[ItemFields]
) -> ContextItem:
    """A new item whose ``tokens`` is ``counter.count(text)``.

    Args:
        text: the item's content; a non-empty string.
        counter: the token counter (default: :class:`~pycupel.tokens.HeuristicCounter`).
        **fields: any other ``ContextItem`` field (``kind``, ``source``, ``priority``, ``tags``,
            ``metadata``, ``timestamp``, ``future_relevance_hint``, ``pinned``,
            ``original_tokens``), validated by ``ContextItem``.

    Raises:
        ItemValidationError: ``text`` is not a non-empty string, a field is unknown (or is
            ``tokens``/``content``), or a field value is invalid.
        TokenizerError: the counter is not a counter, fails, or returns something other than
            an integer >= 0.

    Example:
        >>> from pycupel.tokens import HeuristicCounter
        >>> item = item_from_text("Deploy after 6pm.", counter=HeuristicCounter(), kind="Memory")
        >>> item.tokens, item.kind.value
        (6, 'Memory')
    """
    used = _check_counter(counter, "item_from_text")
    _check_fields(fields)
    content = _check_content(text, "text")
    tokens = checked_count(used, used.count(content))
    return ContextItem(content, tokens=tokens, **fields)


def items_from_texts(
    texts: Iterable[str], *, counter: TokenCounter | None = None, **fields: Unpack[ItemFields]
) -> list[ContextItem]:
    """One new item per text, counted with a single ``counter.count_batch`` call.

    The same ``fields`` apply to every item (for per-item fields, call
    ``item.replace(...)`` afterwards or use :func:`item_from_text`).

    Args:
        texts: the contents, in order; each a non-empty string (a lone string is rejected).
        counter: the token counter (default: :class:`~pycupel.tokens.HeuristicCounter`).
        **fields: ``ContextItem`` fields shared by all the new items.

    Raises:
        ItemValidationError: a text is not a non-empty string (the message names its index),
            or a field is unknown or invalid.
        TokenizerError: the counter fails, or returns the wrong number of counts or a count
            that is not an integer >= 0.

    Example:
        >>> items = items_from_texts(["first note", "second, longer note"], kind="Document")
        >>> [item.tokens for item in items]
        [2, 4]
    """
    used = _check_counter(counter, "items_from_texts")
    _check_fields(fields)
    if isinstance(texts, str | bytes) or not isinstance(texts, Iterable):
        raise ItemValidationError(
            "texts", texts, "must be an iterable of strings (not a single string)"
        )
    contents = [_check_content(text, f"texts[{index}]") for index, text in enumerate(texts)]
    if not contents:
        return []
    counts = checked_counts(used, used.count_batch(contents), len(contents))
    return [
        ContextItem(content, tokens=tokens, **fields)
        for content, tokens in zip(contents, counts, strict=True)
    ]


def _check_counter(counter: object, caller: str) -> TokenCounter:
    if counter is None:
        return _DEFAULT_COUNTER
    if not isinstance(counter, TokenCounter):
        raise TokenizerError(
            caller,
            f"counter: must be a token counter (with count and count_batch methods), "
            f"got {counter_label(counter)}",
        )
    return counter


def _check_fields(fields: Mapping[str, object]) -> None:
    for name, value in fields.items():
        if name in ("content", "tokens"):
            raise ItemValidationError(
                name, value, "is set from the text and the counter; do not pass it"
            )
        if name not in _FIELD_NAMES:
            raise ItemValidationError(name, value, "is not a ContextItem field")


def _check_content(text: object, field: str) -> str:
    if not isinstance(text, str) or not text:
        raise ItemValidationError(field, text, "must be a non-empty string")
    return text
