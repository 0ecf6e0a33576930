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
from types import MappingProxyType
from typing import Final

import numpy as np

__all__ = ["answer_patterns", "holding"]

# (what the question says, what a value of that kind looks like, the value's flags, its
# clues). The clues are what :func:`holding` looks for first, in ASCII texts (lower-cased
# when the value's pattern ignores case): every value holds a match of one of them, and each
# is led by a literal or a character class, which the regex engine skips to at once (a
# pattern led by \b or by several alternatives is tried at every position: a scan of a long
# output is 3 to 10 times slower). A clue marked exact matches where the value's pattern
# does, so its matches are the values themselves.
_KINDS: Final[
    tuple[tuple[re.Pattern[str], re.Pattern[str], tuple[re.Pattern[str], ...], bool], ...]
] = tuple(
    (
        re.compile(asked, re.IGNORECASE),
        re.compile(value, flags),
        tuple(map(re.compile, clues)),
        exact,
    )
    for asked, value, flags, clues, exact in (
        (r"\bversions?\b|\breleases?\b", r"\bv?\d+\.\d+\.\d+", 0, [r"\.\d+\.\d"], False),
        (
            r"\burls?\b|\bendpoints?\b|\buris?\b",
            r"\b[a-z][a-z0-9+.-]*://[^\s\"'<>]",
            re.IGNORECASE,
            ["://"],
            False,
        ),
        (
            r"\bports?\b",
            r":\d{2,5}\b|\bport\W{0,3}\d{2,5}\b",
            re.IGNORECASE,
            [r":\d\d", "port"],
            False,
        ),
        (
            r"\baddress(?:es)?\b|\bips?\b|\bhosts?\b",
            r"\b\d{1,3}(?:\.\d{1,3}){3}\b",
            0,
            [r"\.\d{1,3}\.\d{1,3}\.\d"],
            False,
        ),
        (
            r"\btime ?outs?\b|\bhow long\b|\blatency\b|\bdurations?\b|\bmilliseconds\b|\bseconds\b",
            r"\b\d+(?:\.\d+)?\s?(?:ms|milliseconds?|s|secs?|seconds?|minutes?|mins?|h|hours?)\b",
            re.IGNORECASE,
            [r"[hms](?:(?<=\d[hms])|(?<=\d\s[hms]))"],  # a digit, a space or not, a unit
            False,
        ),
        (
            r"\bpercent(?:age)?\b|%|\brollouts?\b",
            r"\d\s?%|\bpct\b|\bpercent",
            re.IGNORECASE,
            ["%", "pct", "percent"],
            False,
        ),
        (
            r"\brate limits?\b|\bper second\b|\brps\b|\bqps\b",
            r"\d\s?(?:req(?:uests)?/s|rps|qps)\b|\brequests per second\b|rps\b|rate_?limit",
            re.IGNORECASE,
            ["req/s", "requests/s", "rps", "qps", "requests per second", "rate_?limit"],
            False,
        ),
        (
            r"\bdays\b",
            r"\b\d+\s?(?:days?|d)\b",
            re.IGNORECASE,
            [r"d(?:(?<=\dd)|(?<=\d\sd))"],
            False,
        ),
        (
            r"\bwho\b|\bown(?:s|er|ers|ing|ed)?\b",
            r"\bteam[-_ ]?\w|@[\w-]+",
            re.IGNORECASE,
            ["team", "@"],
            False,
        ),
        (
            r"\b(?:error|status|exit|response|return) codes?\b",
            r"\b[A-Z]+_[A-Z0-9_]{2,}\b|\b[A-Z]{1,4}-?\d{3,}\b|\b[1-5]\d\d\b",
            0,
            # The same three alternatives, led by their first character's class (the \b
            # before it read behind it).
            [
                r"[A-Z1-5](?<=\b[A-Z1-5])"
                r"(?:(?<=[A-Z])(?:[A-Z]*_[A-Z0-9_]{2,}|[A-Z]{0,3}-?\d{3,})|(?<=[1-5])\d\d)\b"
            ],
            True,
        ),
        (
            r"\btables?\b",
            r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+){2,}\b",
            0,
            [r"_[a-z0-9]+_[a-z0-9]"],
            False,
        ),
    )
)
_CLUES: Final = MappingProxyType({value: (clues, exact) for _, value, clues, exact in _KINDS})


_NAME_WITH_DIGITS: Final = re.compile(
    r"\w*(?:[a-z]\w*[-_./]\w*\d|\d\w*[-_./]\w*[a-z])[\w./-]*", re.IGNORECASE
)
"""A name of letters and digits joined by ``-``, ``_``, ``.`` or ``/`` (a host
``ip-10-7-30-138``, a region ``us-east-1``, a pod ``api-7f9c``)."""


def answer_patterns(question: str) -> list[re.Pattern[str]]:
    """The patterns of the kinds of value ``question`` asks for (none when it names none).

    A kind's word inside a name of letters and digits names a thing and asks for nothing:
    "restarted on node ip-10-7-30-138" does not ask for an IP address."""
    asking = _NAME_WITH_DIGITS.sub(" ", question)
    return [value for asked, value, _, _ in _KINDS if asked.search(asking)]


def holding(
    texts: Sequence[str], candidates: np.ndarray, patterns: Sequence[re.Pattern[str]]
) -> np.ndarray:
    """1.0 for each of the ``candidates`` (positions in ``texts``) whose text holds a value
    of one of ``patterns``' kinds, else 0.0 (0.0 for every text not a candidate)."""
    held = np.zeros(len(texts), dtype=np.float64)
    if not len(candidates):
        return held
    chosen = [texts[position] for position in candidates.tolist()]
    # The ASCII texts are searched for the kinds' clues first, the value's pattern then
    # only where one is found; the others are searched for values.
    plain = np.fromiter(map(str.isascii, chosen), dtype=bool, count=len(chosen))
    ascii_texts = np.flatnonzero(plain)
    others = np.flatnonzero(~plain)
    ascii_joined, ascii_starts = _joined([chosen[number] for number in ascii_texts.tolist()])
    lowered = ascii_joined.lower() if any(p.flags & re.IGNORECASE for p in patterns) else ""
    found = np.zeros(len(chosen), dtype=bool)
    for pattern in patterns:
        clues, exact = _CLUES.get(pattern, ((), False))
        if not clues:  # a pattern of no kind: every text is searched
            searched = np.arange(len(chosen), dtype=np.intp)
        else:
            text = lowered if pattern.flags & re.IGNORECASE else ascii_joined
            where = [match.start() for clue in clues for match in clue.finditer(text)]
            clued = np.unique(ascii_texts[_placed(ascii_starts, where)])
            if exact:
                found[clued] = True
                searched = others
            else:
                searched = np.concatenate([clued, others])
        searched = searched[~found[searched]]  # a text found to hold one already is done
        if len(searched):
            joined, starts = _joined([chosen[number] for number in searched.tolist()])
            where = [match.start() for match in pattern.finditer(joined)]
            found[searched[_placed(starts, where)]] = True
    held[candidates[found]] = 1.0
    return held


def _joined(texts: Sequence[str]) -> tuple[str, np.ndarray]:
    """``texts`` joined around :data:`_SEPARATOR`, and where each starts.

    No match spans the separator (a line break, which no pattern takes as part of a value,
    then more characters that are neither letters nor digits than any pattern crosses), so
    one scan of the joined texts finds a match in a text exactly when the text holds one.
    """
    starts = np.zeros(len(texts), dtype=np.intp)
    np.cumsum([len(text) + len(_SEPARATOR) for text in texts[:-1]], out=starts[1:])
    return _SEPARATOR.join(texts), starts


def _placed(starts: np.ndarray, where: Sequence[int]) -> np.ndarray:
    """The number of the text each position of :func:`_joined`'s string lies in."""
    placed: np.ndarray = np.searchsorted(starts, where, side="right") - 1
    return placed.astype(np.intp)


_SEPARATOR: Final = "\n" + "\0" * 6 + "\n"
