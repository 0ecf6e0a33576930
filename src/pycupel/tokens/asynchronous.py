"""Asynchronous token counting: counters that await, such as a provider's count-tokens endpoint.

pycupel makes no network call itself. You wrap the service you trust (a provider's
count-tokens endpoint, a tokenizer in another process) in an :class:`AsyncTokenCounter`, and
the async entry points (``afit_messages`` in the adapters) await it once per fit, for every
distinct text at once, before the selection runs.

How it works: a fit is first traced with a :class:`RecordingCounter`, which notes every text
the adapter asks to count; the distinct texts go to your counter in one ``count_batch`` call;
the fit then runs with a :class:`PrecountedCounter` holding those counts. Selection itself
stays synchronous and fast.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Mapping, Sequence
from types import MappingProxyType
from typing import Protocol, runtime_checkable

from pycupel.errors import PipelineConfigError, TokenizerError
from pycupel.tokens.base import checked_counts

__all__ = ["AsyncTokenCounter", "PrecountedCounter", "RecordingCounter", "precount"]


@runtime_checkable
class AsyncTokenCounter(Protocol):
    """Counts tokens asynchronously: one awaited call for many texts."""

    async def count_batch(self, texts: Sequence[str]) -> list[int]:
        """One non-negative integer count per text, in order."""
        ...


class RecordingCounter:
    """A token counter that counts nothing (always 0) and remembers every text it was given.

    Not thread-safe: one instance traces one fit.
    """

    __slots__ = ("texts",)

    def __init__(self) -> None:
        self.texts: dict[str, None] = {}  # insertion-ordered set

    def count(self, text: str) -> int:
        self.texts[text] = None
        return 0

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        for text in texts:
            self.texts[text] = None
        return [0] * len(texts)


class PrecountedCounter:
    """A token counter answering from counts obtained beforehand (immutable, thread-safe).

    Asking for a text that was not counted raises :class:`~pycupel.errors.TokenizerError`.
    """

    __slots__ = ("_counts",)

    def __init__(self, counts: Mapping[str, int]) -> None:
        self._counts = MappingProxyType(dict(counts))

    def count(self, text: str) -> int:
        try:
            return self._counts[text]
        except KeyError:
            raise TokenizerError(
                "PrecountedCounter", f"no count was obtained for the text {text[:40]!r}"
            ) from None

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(text) for text in texts]


async def precount(texts: Sequence[str], counter: AsyncTokenCounter) -> PrecountedCounter:
    """Count the distinct ``texts`` with one awaited ``count_batch`` call."""
    if not callable(getattr(counter, "count_batch", None)):
        raise PipelineConfigError(
            "counter", counter, "must be an async token counter with count_batch(texts)"
        )
    unique = list(dict.fromkeys(texts))
    if not unique:
        return PrecountedCounter({})
    pending: Awaitable[list[int]] | list[int] = counter.count_batch(unique)
    if not inspect.isawaitable(pending):
        raise PipelineConfigError(
            "counter", counter, "count_batch must be a coroutine (use fit_messages for a sync one)"
        )
    values = await pending
    counts = checked_counts(counter, values, len(unique))
    return PrecountedCounter(dict(zip(unique, counts, strict=True)))
