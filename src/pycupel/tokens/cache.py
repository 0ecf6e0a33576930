"""An LRU cache in front of any token counter.

Chat histories are re-sent on every turn, so the same messages get counted again and again.
:class:`CachedCounter` remembers counts by content (the exact string) and asks the wrapped
counter only about texts it has not seen, or has evicted.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pycupel.errors import TokenizerError
from pycupel.tokens.base import (
    BaseTokenCounter,
    TokenCounter,
    checked_count,
    checked_counts,
    counter_label,
    require_text,
    require_texts,
)

__all__ = ["CacheStats", "CachedCounter"]

_NAME: Final = "CachedCounter"
DEFAULT_MAX_ENTRIES: Final = 65_536


@dataclass(frozen=True, slots=True)
class CacheStats:
    """A consistent snapshot of a :class:`CachedCounter`'s statistics.

    ``hits + misses`` is the number of texts looked up so far (each position of a batch is one
    look-up; a text repeated within one batch is a miss once and a hit afterwards).
    """

    hits: int
    misses: int
    size: int
    max_entries: int

    @property
    def hit_rate(self) -> float:
        """``hits / (hits + misses)``, or 0.0 before any look-up."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


class CachedCounter(BaseTokenCounter):
    """Remember the counts of an inner counter, keyed by the exact text (least recently used
    entries are evicted first).

    Safe to share across threads: the cache and its statistics live on the instance and are
    guarded by a lock. The inner counter is called outside the lock, so slow tokenizers do not
    serialise the threads; two threads that miss on the same text at the same moment may both
    count it (the result is the same, and both look-ups are recorded as misses).

    ``count_batch`` looks every text up, then counts all the misses with a single call to the
    inner counter's ``count_batch`` (each distinct text once) and returns the counts in input
    order. Counts from the inner counter are validated (integers >= 0) before they are cached.

    Args:
        inner: the counter to cache (anything with ``count`` and ``count_batch``).
        max_entries: the most texts kept; a positive integer (default 65,536). The cache holds
            references to the strings themselves, so memory grows with the texts it keeps.

    Example:
        >>> from pycupel.tokens import HeuristicCounter
        >>> counter = CachedCounter(HeuristicCounter(), max_entries=1000)
        >>> counter.count_batch(["hello world", "hello world", "bye"])
        [2, 2, 1]
        >>> counter.count("bye")
        1
        >>> counter.hits, counter.misses, counter.size
        (2, 2, 2)
    """

    __slots__ = ("_entries", "_hits", "_inner", "_lock", "_max_entries", "_misses")

    def __init__(self, inner: TokenCounter, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        if not isinstance(inner, TokenCounter):
            raise TokenizerError(
                _NAME,
                f"inner: must be a token counter (with count and count_batch methods), "
                f"got {counter_label(inner)}",
            )
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise TokenizerError(
                _NAME, f"max_entries: must be a positive integer, got {max_entries!r}"
            )
        self._inner = inner
        self._max_entries = max_entries
        self._entries: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    @property
    def inner(self) -> TokenCounter:
        """The wrapped counter."""
        return self._inner

    @property
    def max_entries(self) -> int:
        """The most texts the cache keeps."""
        return self._max_entries

    @property
    def hits(self) -> int:
        """Look-ups answered from the cache."""
        return self._hits

    @property
    def misses(self) -> int:
        """Look-ups that had to ask the inner counter."""
        return self._misses

    @property
    def size(self) -> int:
        """Texts currently cached."""
        return len(self._entries)

    def stats(self) -> CacheStats:
        """Hits, misses and size read together, under the lock."""
        with self._lock:
            return CacheStats(self._hits, self._misses, len(self._entries), self._max_entries)

    def clear(self) -> None:
        """Forget every cached count and reset the statistics."""
        with self._lock:
            self._entries.clear()
            self._hits = 0
            self._misses = 0

    def count(self, text: str) -> int:
        """The count of ``text``: from the cache, or from the inner counter (then cached)."""
        require_text(self, text)
        entries = self._entries
        with self._lock:
            cached = entries.get(text)
            if cached is not None:
                entries.move_to_end(text)
                self._hits += 1
                return cached
            self._misses += 1
        value = checked_count(self._inner, self._inner.count(text))
        with self._lock:
            self._store(text, value)
        return value

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Counts of ``texts`` in order; all misses go to the inner counter in one batch."""
        batch = require_texts(self, texts)
        results = [0] * len(batch)  # every position is filled below
        # Each distinct missing text, and the positions that want its count.
        missing: dict[str, list[int]] = {}
        entries = self._entries
        with self._lock:
            for position, text in enumerate(batch):
                cached = entries.get(text)
                if cached is not None:
                    entries.move_to_end(text)
                    results[position] = cached
                    self._hits += 1
                elif text in missing:
                    missing[text].append(position)
                    self._hits += 1
                else:
                    missing[text] = [position]
                    self._misses += 1
        if missing:
            new_texts = list(missing)
            values = checked_counts(self._inner, self._inner.count_batch(new_texts), len(new_texts))
            with self._lock:
                for text, value in zip(new_texts, values, strict=True):
                    self._store(text, value)
                    for position in missing[text]:
                        results[position] = value
        return results

    def _store(self, text: str, value: int) -> None:
        # Caller holds the lock.
        entries = self._entries
        entries[text] = value
        entries.move_to_end(text)
        while len(entries) > self._max_entries:
            entries.popitem(last=False)

    def __repr__(self) -> str:
        return f"CachedCounter({counter_label(self._inner)}, max_entries={self._max_entries})"
