"""What a question asks for: the kind of value that answers it, and the segments holding one.

A question that names the kind of value it wants ("which port", "what version", "the base
URL", "the timeout") is answered by a value of that kind. Among the segments that match the
question's words, those holding such a value are the likelier answers: a line that names the
service and holds a version answers "what version is the service running"; a line that names
the service and its owner, in the same words, does not. The kinds are the values a reader
looks for in tool outputs (versions, URLs, ports and addresses, durations, shares, rates,
days, owners, error codes, table names); a question naming none of them gets no preference.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import numpy as np

__all__ = ["answer_patterns", "holding"]

# (what the question says, what a value of that kind looks like, the value's flags)
_KINDS: Final[tuple[tuple[re.Pattern[str], re.Pattern[str]], ...]] = tuple(
    (re.compile(asked, re.IGNORECASE), re.compile(value, flags))
    for asked, value, flags in (
        (r"\bversions?\b|\breleases?\b", r"\bv?\d+\.\d+\.\d+", 0),
        (r"\burls?\b|\bendpoints?\b|\buris?\b", r"\b[a-z][a-z0-9+.-]*://[^\s\"'<>]", re.IGNORECASE),
        (r"\bports?\b", r":\d{2,5}\b|\bport\W{0,3}\d{2,5}\b", re.IGNORECASE),
        (r"\baddress(?:es)?\b|\bips?\b|\bhosts?\b", r"\b\d{1,3}(?:\.\d{1,3}){3}\b", 0),
        (
            r"\btime ?outs?\b|\bhow long\b|\blatency\b|\bdurations?\b|\bmilliseconds\b|\bseconds\b",
            r"\b\d+(?:\.\d+)?\s?(?:ms|milliseconds?|s|secs?|seconds?|minutes?|mins?|h|hours?)\b",
            re.IGNORECASE,
        ),
        (r"\bpercent(?:age)?\b|%|\brollouts?\b", r"\d\s?%|\bpct\b|\bpercent", re.IGNORECASE),
        (
            r"\brate limits?\b|\bper second\b|\brps\b|\bqps\b",
            r"\d\s?(?:req(?:uests)?/s|rps|qps)\b|\brequests per second\b|rps\b|rate_?limit",
            re.IGNORECASE,
        ),
        (r"\bdays\b", r"\b\d+\s?(?:days?|d)\b", re.IGNORECASE),
        (r"\bwho\b|\bown(?:s|er|ers|ing|ed)?\b", r"\bteam[-_ ]?\w|@[\w-]+", re.IGNORECASE),
        (
            r"\b(?:error|status|exit|response|return) codes?\b",
            r"\b[A-Z]+_[A-Z0-9_]{2,}\b|\b[A-Z]{1,4}-?\d{3,}\b|\b[1-5]\d\d\b",
            0,
        ),
        (r"\btables?\b", r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+){2,}\b", 0),
    )
)


def answer_patterns(question: str) -> list[re.Pattern[str]]:
    """The patterns of the kinds of value ``question`` asks for (none when it names none)."""
    return [value for asked, value in _KINDS if asked.search(question)]


def holding(
    texts: Sequence[str], candidates: np.ndarray, patterns: Sequence[re.Pattern[str]]
) -> np.ndarray:
    """1.0 for each of the ``candidates`` (positions in ``texts``) whose text holds a value
    of one of ``patterns``' kinds, else 0.0 (0.0 for every text not a candidate)."""
    held = np.zeros(len(texts), dtype=np.float64)
    if not len(candidates):
        return held
    chosen = [texts[position] for position in candidates.tolist()]
    # One scan of the candidates joined, each match placed by its start. No match spans
    # the separator (a line break, which no pattern takes as part of a value, then more
    # characters that are neither letters nor digits than any pattern crosses), so a text
    # holds a match exactly when it would alone.
    joined = _SEPARATOR.join(chosen)
    starts = np.zeros(len(chosen), dtype=np.intp)
    np.cumsum([len(text) + len(_SEPARATOR) for text in chosen[:-1]], out=starts[1:])
    found = [match.start() for pattern in patterns for match in pattern.finditer(joined)]
    if found:
        which = np.searchsorted(starts, found, side="right") - 1
        held[candidates[which]] = 1.0
    return held


_SEPARATOR: Final = "\n" + "\0" * 6 + "\n"
