"""The token-counter contract.

A token counter turns text into a token count. pycupel itself never tokenizes: items carry the
counts their callers computed. This package lets callers compute those counts with the
tokenizer they already use (tiktoken, Hugging Face ``tokenizers``) or with a dependency-free
estimate, and build items from text.

Anything with ``count(text) -> int`` and ``count_batch(texts) -> list[int]`` is a
:class:`TokenCounter`. Subclass :class:`BaseTokenCounter` and implement ``count`` to get a
``count_batch`` for free; override ``count_batch`` when the tokenizer has a faster batch API.

Counters hold configuration only (plus, for :class:`~pycupel.tokens.CachedCounter`, a
lock-protected cache), so one instance can be shared across threads.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pycupel.errors import TokenizerError

__all__ = [
    "BaseTokenCounter",
    "TokenCounter",
    "checked_count",
    "checked_counts",
    "counter_label",
    "require_text",
    "require_texts",
]


@runtime_checkable
class TokenCounter(Protocol):
    """Anything that counts tokens: one text at a time, or a batch in one call.

    ``count_batch(texts)`` must return exactly ``[count(t) for t in texts]``; it exists so that
    tokenizers with a parallel or vectorised batch API can use it.
    """

    def count(self, text: str) -> int:
        """The number of tokens in ``text`` (a non-negative integer)."""
        ...

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts of ``texts``, in the same order (equal to counting each one)."""
        ...


class BaseTokenCounter(ABC):
    """Base of the built-in counters: implement :meth:`count`, inherit :meth:`count_batch`.

    Example:
        >>> class WordCounter(BaseTokenCounter):
        ...     def count(self, text: str) -> int:
        ...         return len(require_text(self, text).split())
        >>> WordCounter().count_batch(["one two", "three"])
        [2, 1]
    """

    __slots__ = ()

    @abstractmethod
    def count(self, text: str) -> int:
        """The number of tokens in ``text``."""

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts of ``texts`` in order: ``count`` applied to each text."""
        count = self.count
        return [count(text) for text in require_texts(self, texts)]


def counter_label(counter: object) -> str:
    """How errors name a counter: its ``repr``, shortened to stay readable."""
    try:
        text = repr(counter)
    except Exception:  # a broken __repr__ must not hide the real error
        text = type(counter).__name__
    return text if len(text) <= 80 else text[:77] + "..."


def require_text(counter: object, text: object, field: str = "text") -> str:
    """Return ``text`` if it is a str; otherwise raise :class:`TokenizerError` naming it."""
    if not isinstance(text, str):
        raise TokenizerError(
            counter_label(counter),
            f"{field}: must be a string, got {_show(text)} ({type(text).__name__})",
        )
    return text


def require_texts(counter: object, texts: object, field: str = "texts") -> Sequence[str]:
    """Return ``texts`` if it is a sequence of str (but not a str itself).

    A lone string is rejected: it is a sequence of characters, and counting each character
    separately is never what the caller meant.
    """
    if isinstance(texts, str | bytes) or not isinstance(texts, Sequence):
        raise TokenizerError(
            counter_label(counter),
            f"{field}: must be a sequence of strings (not a single string), got {_show(texts)}",
        )
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TokenizerError(
                counter_label(counter),
                f"{field}[{index}]: must be a string, got {_show(text)} ({type(text).__name__})",
            )
    return texts


def checked_count(counter: object, value: object, where: str = "") -> int:
    """Return ``value`` as an int if it is a valid token count (an integer >= 0).

    Integer-like values (``numpy.int64``...) are accepted and converted; booleans, floats
    and negative numbers raise :class:`TokenizerError` naming the counter and the value.
    ``where`` says which text the count belongs to (``"texts[3]"``), for the message.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TokenizerError(
            counter_label(counter),
            f"returned {_show(value)} ({type(value).__name__}){_at(where)}; "
            f"a token count must be an integer >= 0",
        )
    number = int(value)
    if number < 0:
        raise TokenizerError(
            counter_label(counter),
            f"returned {number}{_at(where)}; a token count must be an integer >= 0",
        )
    return number


def checked_counts(counter: object, values: object, expected: int) -> list[int]:
    """Validate the result of ``count_batch``: a sequence of ``expected`` valid counts."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise TokenizerError(
            counter_label(counter),
            f"count_batch returned {_show(values)}; it must return a list of integers",
        )
    if len(values) != expected:
        raise TokenizerError(
            counter_label(counter),
            f"count_batch returned {len(values)} counts for {expected} texts; "
            f"it must return one count per text",
        )
    # The usual result, plain non-negative ints, is checked with C-level passes.
    if not values or (set(map(type, values)) == _INT_ONLY and min(values) >= 0):
        return list(values)
    return [checked_count(counter, value, f"texts[{i}]") for i, value in enumerate(values)]


_INT_ONLY = frozenset({int})


def _at(where: str) -> str:
    return f" for {where}" if where else ""


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
