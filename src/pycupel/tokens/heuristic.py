"""A dependency-free token estimate that tracks BPE tokenizers closely on English text.

Modern BPE tokenizers (tiktoken's ``cl100k_base`` and ``o200k_base``, Llama 3, ...) first split
text into pieces with a regular expression (words with their leading space, digit groups of up
to three, punctuation runs, whitespace runs), then merge bytes inside each piece. For English,
almost every common word is one token, so counting the pieces gets within a few percent of the
real count. :class:`HeuristicCounter` does exactly that, with a split that stands in for the
merges:

* ASCII letters, with one leading space, punctuation character or underscore attached:
  one token per 11 letters (``" the"`` is 1, ``"internationalization"`` is 2);
* digits: one token per group of up to 3 (``"2024"`` is 2);
* ASCII punctuation, optionally after one space: one token per run of up to 4 (``'":'``);
* a line break, with the spaces before it: 1; a run of spaces or tabs (indentation): 1;
* Greek, Cyrillic, Hebrew, Arabic, accented Latin (2-byte UTF-8): one token per 2 characters;
* Chinese, Japanese and Korean characters: one token each;
* general punctuation and symbols (U+2000-U+2BFF: dashes, quotes, arrows, dingbats): 1 each;
* other 3-byte characters (Devanagari, Thai, ...): one token per 2 characters;
* emoji and other characters beyond U+FFFF: 2 tokens each;
* anything else (control characters): 1 each.

Measured on the mixed sample in the test data (see ``benchmarks/bench_tokens.py``), the total
estimate is within about 3% of both ``cl100k_base`` and ``o200k_base`` for English prose, chat and
Markdown, 2% for JSON and 5% for code (2% on Python standard-library modules it was not tuned on);
single short texts can be off by up to ~15%. Non-Latin scripts are where the two encodings
disagree most (``o200k_base`` needs about half the tokens of ``cl100k_base``); the estimate
deliberately sits between them, so expect it to be ~30% below ``cl100k_base`` and ~45% above
``o200k_base`` there. When the exact count matters, use :class:`~pycupel.tokens.TiktokenCounter`
or :class:`~pycupel.tokens.HuggingFaceCounter`; when underestimating is costly, use
``safety_margin`` (or the budget's ``estimation_safety_margin_percent``).
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from fractions import Fraction
from itertools import compress
from typing import Final

from pycupel._numpy import numpy as np
from pycupel.errors import TokenizerError
from pycupel.tokens.base import BaseTokenCounter, require_text, require_texts

__all__ = ["HeuristicCounter"]

# One match per estimated token. The order matters: at each position the first alternative
# that matches wins, so the specific classes come before the catch-all ones (and the most
# common case, a space and a word, comes first: it is the fastest to try).
_PIECE: Final = re.compile(
    r" ?[A-Za-z]{1,11}"  # a word (or an 11-letter chunk of one), with its leading space
    r"|(?:[^\w\r\n]|_)[A-Za-z]{1,11}"  # ... or with another leading non-letter: ".get", "_id"
    r"|\d{1,3}"  # digit groups, as cl100k/o200k split them
    r"| ?[!-/:-@\[-`{-~]{1,4}"  # ASCII punctuation runs
    r"| ?[\u0080-\u07ff]{1,2}"  # 2-byte UTF-8: accented Latin, Greek, Cyrillic, Hebrew, Arabic
    r"| ?[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"  # CJK, kana, Hangul: 1 each
    r"| ?[\u2000-\u2bff]"  # general punctuation, arrows, math and misc symbols, dingbats
    r"| ?[\u0800-\uffff]{1,2}"  # other 3-byte UTF-8: Devanagari, Thai, ...
    r"| ?[\U00010000-\U0010ffff]"  # emoji and other astral characters (first of 2 tokens)
    r"|\s*[\r\n]"  # line breaks, with the spaces before them
    r"|\s+(?!\S)"  # whitespace runs, leaving the last space to the word that follows
    r"|[\s\S]"  # anything else: one token per character
)
# Astral characters (emoji) cost one more token than their match in _PIECE.
_ASTRAL: Final = re.compile(r"[\U00010000-\U0010ffff]")
_MAX_MARGIN: Final = 1.0

# ---------------------------------------------------------------- a batch of ASCII texts
#
# On ASCII text the pieces of _PIECE follow from its runs of letters (L), digits (D), ASCII
# punctuation (P) and whitespace (W), so a batch is counted with array arithmetic instead of
# one regular-expression pass per text (the same counts: the tests compare both on every
# short string over an alphabet of each class and on long random ones):
#
# * letters: one piece per 11 (the leading space or single punctuation mark rides along);
# * digits: one piece per 3;
# * punctuation: one piece per 4, except that a last mark starting a chunk of its own is
#   taken by the letters right after it (".get"), unless it is a lone mark that a space
#   before it has already joined (" .get" is " ." and "get");
# * whitespace: one piece for everything up to the last line break, if any; then, for what
#   follows it, one piece when it ends the text, else one piece for all but its last
#   character (two or more left) and one for the last, unless letters (or, for a space,
#   punctuation) follow and take it along.
#
# Texts holding other characters (controls, DEL) are counted by the regular expression.

_B, _L, _D, _P, _W, _X = range(6)  # _B: the boundary between two texts of the batch
_CLASS_OF_BYTE: Final = bytes(
    _B
    if code == 0
    else _L
    if chr(code).isascii() and chr(code).isalpha()
    else _D
    if 48 <= code <= 57
    else _W
    if code < 128 and chr(code).isspace()
    else _P
    if 33 <= code <= 126
    else _X
    for code in range(256)
)
_LONG_RUN: Final = 63  # runs this long or longer are counted one by one
_SPACE: Final = 32
# Below this many characters a batch is counted text by text (numpy's fixed costs win);
# above it, too, while numpy is not loaded yet, unless the batch is so large that loading it
# (about 0.1 s) pays for itself.
_ARRAY_BATCH_CHARS: Final = 4_096
_IMPORT_BATCH_CHARS: Final = 4_000_000


def _run_pieces(kind: int, after: int, space_flag: bool, length: int) -> int:
    """Pieces of a run of ``length`` characters of class ``kind`` followed by class
    ``after``; ``space_flag``: a space just before a punctuation run, or a whitespace run
    ending in a space. Whitespace runs here hold no line break."""
    if kind == _L:
        return -(-length // 11)
    if kind == _D:
        return -(-length // 3)
    if kind == _P:
        taken = length % 4 == 1 and after == _L and not (length == 1 and space_flag)
        return -(-length // 4) - taken
    if kind == _W:
        if after == _B:
            return 1
        taken = after == _L or (space_flag and after == _P)
        return (length >= 2) + (not taken)
    return 0


def _build_table() -> tuple[int, ...]:
    # Indexed by ((kind * 6 + after) * 2 + space_flag) * (_LONG_RUN + 1) + length.
    return tuple(
        _run_pieces(kind, after, bool(flag), length)
        for kind in range(6)
        for after in range(6)
        for flag in range(2)
        for length in range(_LONG_RUN + 1)
    )


_RUN_TABLE: Final = _build_table()
_RUN_TABLE_BYTES: Final = bytes(_RUN_TABLE)  # every entry is under 256: read as an array at once


def _ascii_pieces(joined_texts: str) -> tuple[list[int], set[int]]:
    """Pieces of each text of ``joined_texts`` (non-empty ASCII texts without NUL, joined
    around NUL), and the positions of the texts holding characters the run arithmetic leaves to the
    regular expression."""
    padded = b"".join((b"\x00", joined_texts.encode(), b"\x00"))
    raw = np.frombuffer(padded, dtype=np.uint8)
    classes = np.frombuffer(padded.translate(_CLASS_OF_BYTE), dtype=np.uint8)  # NUL is _B
    changes = np.flatnonzero(classes[1:] != classes[:-1])
    # The run arrays are int32 when the text allows (half the memory traffic of intp).
    index = np.int32 if len(classes) < 2**31 else np.intp
    bounds = np.empty(len(changes) + 2, dtype=index)
    bounds[0] = 0
    bounds[1:-1] = changes
    bounds[1:-1] += 1
    bounds[-1] = len(classes)
    starts = bounds[:-1]
    lengths = np.diff(bounds)
    kinds = classes[starts]
    after = np.empty_like(kinds)
    after[:-1] = kinds[1:]
    after[-1] = _B
    # A space just before a run: for punctuation it is the joined space, for whitespace
    # (the next run's) it is the run's last character. Runs alternate classes, so a run
    # never has both.
    space_before = raw[starts - 1] == _SPACE
    flag = space_before.copy()
    flag[:-1] |= space_before[1:]
    codes = ((kinds * 6 + after) * 2 + flag.view(np.uint8)).astype(index)
    codes *= _LONG_RUN + 1
    codes += np.minimum(lengths, _LONG_RUN)
    table = np.frombuffer(_RUN_TABLE_BYTES, dtype=np.uint8).astype(np.intp)
    pieces = table[codes]
    # Whitespace runs holding a line break: one piece up to the last break, then the rest.
    breaks = np.flatnonzero((raw == 10) | (raw == 13)).astype(index)
    rests = lengths.copy()
    broken = np.zeros(0, dtype=index)
    if len(breaks):
        # The runs holding a break, in order (breaks are sorted, so are their runs: the
        # repeats are dropped without the sort np.unique would do).
        holding = np.searchsorted(starts, breaks, side="right") - 1
        broken = holding[np.r_[True, holding[1:] != holding[:-1]]]
        last_break = breaks[np.searchsorted(breaks, bounds[broken + 1], side="left") - 1]
        rests[broken] = bounds[broken + 1] - 1 - last_break
    for run in np.flatnonzero(rests >= _LONG_RUN).tolist():
        pieces[run] = _run_pieces(
            int(kinds[run]), int(after[run]), bool(flag[run]), int(rests[run])
        )
    if len(broken):
        short = broken[rests[broken] < _LONG_RUN]
        pieces[short] = table[codes[short] - lengths[short].clip(max=_LONG_RUN) + rests[short]]
        pieces[broken] *= rests[broken] > 0
        pieces[broken] += 1
    boundaries = np.flatnonzero(kinds == _B)
    totals: list[int] = np.add.reduceat(pieces, boundaries)[:-1].tolist()
    others = np.flatnonzero(kinds == _X)
    unsure = (
        set((np.searchsorted(boundaries, others, side="right") - 1).tolist())
        if len(others)
        else set()
    )
    return totals, unsure


class HeuristicCounter(BaseTokenCounter):
    """Estimate token counts without a tokenizer (the default counter; no dependencies).

    Deterministic, thread-safe and fast (a few microseconds for a chat message). The empty
    string counts 0 and any other text at least 1. See the module documentation for the rules
    and the measured accuracy.

    Args:
        safety_margin: a fraction in ``[0, 1]`` added on top of the estimate and rounded up,
            to make underestimates rarer: with ``0.1`` an estimate of 40 becomes 44, and any
            non-zero estimate grows by at least one token. ``0`` (the default) leaves the
            estimate unchanged.

    Example:
        >>> counter = HeuristicCounter()
        >>> counter.count("The quick brown fox jumps over the lazy dog.")
        10
        >>> counter.count("")
        0
        >>> padded = HeuristicCounter(safety_margin=0.1)
        >>> padded.count("The quick brown fox jumps over the lazy dog.")
        11
    """

    __slots__ = ("_margin", "_safety_margin")

    def __init__(self, *, safety_margin: float = 0.0) -> None:
        if isinstance(safety_margin, bool) or not isinstance(safety_margin, int | float):
            raise TokenizerError(
                "HeuristicCounter", f"safety_margin: must be a number, got {safety_margin!r}"
            )
        if not math.isfinite(safety_margin) or not 0.0 <= safety_margin <= _MAX_MARGIN:
            raise TokenizerError(
                "HeuristicCounter",
                f"safety_margin: must be between 0 and {_MAX_MARGIN} (a fraction of the "
                f"estimate), got {safety_margin!r}",
            )
        self._safety_margin = float(safety_margin)
        # Exact rational arithmetic: 40 * 0.1 must round up to 4, not to 5 via 4.000000000000001.
        self._margin = Fraction(repr(self._safety_margin))

    @property
    def safety_margin(self) -> float:
        """The fraction added on top of each estimate (0 when disabled)."""
        return self._safety_margin

    def count(self, text: str) -> int:
        """The estimated number of tokens in ``text``."""
        # subn counts the matches without building a list of them (every character is
        # matched, so the replaced text it also returns is empty).
        pieces = _PIECE.subn("", require_text(self, text))[1]
        if not text.isascii():
            pieces += len(_ASTRAL.findall(text))
        if self._margin and pieces:
            pieces += -(-pieces * self._margin.numerator // self._margin.denominator)
        return pieces

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts of ``texts`` in order, exactly ``[count(t) for t in texts]``.

        A large batch of ASCII texts is counted with array arithmetic over its character
        runs (see the comment above :func:`_ascii_pieces`), several times faster than one
        regular-expression pass per text; the rest is counted text by text.
        """
        texts = require_texts(self, texts)
        count = self.count
        size = sum(map(len, texts))
        if size < _ARRAY_BATCH_CHARS or (size < _IMPORT_BATCH_CHARS and "numpy" not in sys.modules):
            return [count(text) for text in texts]
        # Empty texts count 0 and NUL separates the batch's texts: such texts, and non-ASCII
        # ones, are counted one by one.
        chosen = [bool(text) and text.isascii() for text in texts]
        positions = list(compress(range(len(texts)), chosen))
        batch = list(map(texts.__getitem__, positions))
        joined = "\x00".join(batch)
        if joined.count("\x00") != max(len(batch) - 1, 0):
            chosen = [flag and "\x00" not in text for flag, text in zip(chosen, texts, strict=True)]
            positions = list(compress(range(len(texts)), chosen))
            batch = list(map(texts.__getitem__, positions))
            joined = "\x00".join(batch)
        counts = [0 if flag else count(text) for flag, text in zip(chosen, texts, strict=True)]
        if not batch:
            return counts
        pieces, unsure = _ascii_pieces(joined)
        margin = self._margin
        if margin:
            pieces = [found - (-found * margin.numerator // margin.denominator) for found in pieces]
        for offset in unsure:
            pieces[offset] = count(batch[offset])
        for position, found in zip(positions, pieces, strict=True):
            counts[position] = found
        return counts

    def __repr__(self) -> str:
        if self._safety_margin:
            return f"HeuristicCounter(safety_margin={self._safety_margin!r})"
        return "HeuristicCounter()"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HeuristicCounter):
            return NotImplemented
        return self._safety_margin == other._safety_margin

    def __hash__(self) -> int:
        return hash((HeuristicCounter, self._safety_margin))
