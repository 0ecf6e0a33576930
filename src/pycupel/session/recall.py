"""The recall index: which dropped messages are relevant to the latest user message.

A session's recall zone holds units that compaction dropped but that the latest user message
asks about. Finding them must not cost a pass over the whole history each turn, so every unit
is indexed once, when it is first seen: its words go into an inverted index (word -> units
holding it, with counts). A query then touches only the postings of its own words, scored with
Okapi BM25 (k1 = 1.2, b = 0.75): rare words that a unit repeats weigh most, words found in more
than half of the units are skipped as carrying no signal.

Words are runs of letters and digits, lower-cased, without a short list of English function
words; that is enough to match names, places and numbers between a question and the turn that
answers it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Container, Sequence

__all__ = ["RecallIndex", "words"]

_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    )
)
_K1 = 1.2
_B = 0.75


def words(text: str) -> list[str]:
    """The indexed words of ``text``, in order (lower-cased, function words removed)."""
    return [word for word in _WORD.findall(text.lower()) if word not in _STOP]


class RecallIndex:
    """An append-only BM25 index over units, truncatable from the end (for edits).

    Not thread-safe on its own: a session guards it with its lock.
    """

    __slots__ = ("_lengths", "_postings", "_terms", "_total_length")

    def __init__(self) -> None:
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._terms: list[tuple[str, ...]] = []
        self._lengths: list[int] = []
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, text: str) -> None:
        """Index the next unit (its position is the number of units indexed before it)."""
        position = len(self._lengths)
        tokens = words(text)
        counts = Counter(tokens)
        for term, count in counts.items():
            self._postings.setdefault(term, []).append((position, count))
        self._terms.append(tuple(counts))
        self._lengths.append(len(tokens))
        self._total_length += len(tokens)

    def truncate(self, size: int) -> None:
        """Forget every unit from position ``size`` on."""
        while len(self._lengths) > size:
            for term in self._terms.pop():
                postings = self._postings[term]
                postings.pop()
                if not postings:
                    del self._postings[term]
            self._total_length -= self._lengths.pop()

    def search(self, query: str, excluded: Container[int] = ()) -> dict[int, float]:
        """BM25 scores (> 0) of the units matching ``query``, except the ``excluded`` ones."""
        count = len(self._lengths)
        if not count:
            return {}
        average = self._total_length / count or 1.0
        lengths: Sequence[int] = self._lengths
        scores: dict[int, float] = {}
        for term in dict.fromkeys(words(query)):
            postings = self._postings.get(term)
            if not postings or len(postings) * 2 > count:
                continue
            idf = math.log(1.0 + (count - len(postings) + 0.5) / (len(postings) + 0.5))
            for position, frequency in postings:
                if position in excluded:
                    continue
                norm = _K1 * (1.0 - _B + _B * lengths[position] / average)
                gain = idf * frequency * (_K1 + 1.0) / (frequency + norm)
                scores[position] = scores.get(position, 0.0) + gain
        return scores
