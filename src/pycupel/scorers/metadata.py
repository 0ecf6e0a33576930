"""Scorers that read the reserved ``cupel:`` metadata conventions.

* :class:`MetadataTrustScorer` passes through ``metadata["cupel:trust"]``.
* :class:`MetadataKeyScorer` returns a boost multiplier when ``metadata[key] == value``.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Sequence

import numpy as np

from pycupel._checks import check_float, check_str
from pycupel.errors import ScorerConfigError
from pycupel.model import ContextItem
from pycupel.scorers._clamp import clamp_unit
from pycupel.scorers._immutable import Immutable
from pycupel.scorers.base import FloatArray, ItemScorer

__all__ = ["TRUST_KEY", "MetadataKeyScorer", "MetadataTrustScorer", "parse_decimal_float"]

TRUST_KEY = "cupel:trust"
"""The metadata key read by :class:`MetadataTrustScorer`."""

# The grammar of a decimal float64 literal as the specification's reference parser
# (Rust's `str::parse::<f64>`) accepts it: an optional sign, then `inf`, `infinity`, `nan`
# (any ASCII case) or digits with an optional fraction and exponent. No surrounding
# whitespace, no underscores, no hexadecimal, ASCII digits only. Python's own float() is
# more permissive (whitespace, underscores, Unicode digits), so it only converts strings that
# already matched.
_DECIMAL_FLOAT = re.compile(
    r"[+-]?(?:inf|infinity|nan|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[+-]?[0-9]+)?)",
    re.IGNORECASE | re.ASCII,
)


def parse_decimal_float(text: str) -> float | None:
    """Parse ``text`` as a decimal float64 literal, or return None if it is not one.

    Accepts e.g. ``"0.85"``, ``"1."``, ``".5"``, ``"1e-3"``, ``"-0"``, ``"NaN"``, ``"inf"``,
    ``"+Infinity"``; rejects ``""``, ``" 1"``, ``"1_0"``, ``"0x1p3"``, ``"high"``.
    Out-of-range magnitudes round to infinity (or zero), as IEEE parsing does.
    """
    if _DECIMAL_FLOAT.fullmatch(text) is None:
        return None
    return float(text)


class MetadataTrustScorer(Immutable, ItemScorer):
    """Absolute scorer: the trust value stored under ``metadata["cupel:trust"]``.

    The value may be a string holding a decimal float literal (see
    :func:`parse_decimal_float`) or a real number (int, float, or another
    ``numbers.Real``, but not bool) used directly. Rules, in order: key absent ->
    ``default_score``; any other type, or an unparseable string -> ``default_score``;
    non-finite (NaN, +/-inf, or an int too large for a float) -> ``default_score``; otherwise
    the value clamped to [0, 1].

    Args:
        default_score: in [0, 1] (default 0.5).
    """

    __slots__ = ("_default_score",)

    _default_score: float

    def __init__(self, default_score: float = 0.5) -> None:
        score = check_float(
            ScorerConfigError, "default_score", default_score, minimum=0.0, maximum=1.0
        )
        object.__setattr__(self, "_default_score", score)

    @property
    def default_score(self) -> float:
        """The score when the trust value is absent, unusable or non-finite."""
        return self._default_score

    def score_item(self, item: ContextItem) -> float:
        return self._score_value(item.metadata.get(TRUST_KEY))

    def _score_value(self, raw: object) -> float:
        value = _trust_value(raw)
        if value is None or not math.isfinite(value):
            return self._default_score
        return clamp_unit(value)

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        # Trust strings repeat a lot ("0.9", "1.0"); parse each distinct one once per call.
        parsed: dict[str, float] = {}
        score_value = self._score_value

        def score(item: ContextItem) -> float:
            raw = item.metadata.get(TRUST_KEY)
            if type(raw) is not str:
                return score_value(raw)
            result = parsed.get(raw)
            if result is None:
                result = parsed[raw] = score_value(raw)
            return result

        return np.fromiter(map(score, items), dtype=np.float64, count=len(items))

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self._default_score,))

    def __repr__(self) -> str:
        return f"MetadataTrustScorer(default_score={self._default_score!r})"


def _trust_value(raw: object) -> float | None:
    if isinstance(raw, str):
        return parse_decimal_float(raw)
    if isinstance(raw, bool) or not isinstance(raw, numbers.Real):
        return None
    try:
        return float(raw)
    except OverflowError:
        # An integer beyond the float64 range is not a finite float64.
        return None


class MetadataKeyScorer(Immutable, ItemScorer):
    """Absolute scorer: ``boost`` when ``metadata[key]`` equals ``value``, else 1.0.

    The result is a multiplier and is not clamped. Matching is exact string equality: only a
    ``str`` stored under ``key`` can match. Values of any other type (numbers, booleans,
    None, lists...) never match and give 1.0; they are not converted to text, because a
    textual rendering (``str(True)`` is ``"True"``, ``str(1.0)`` is ``"1.0"``) is
    language-specific and would make the rule depend on the host language.

    Args:
        key: the metadata key to read (any string).
        value: the string it must equal (case-sensitive, no normalisation).
        boost: the multiplier for matching items; finite and > 0.
    """

    __slots__ = ("_boost", "_key", "_value")

    DEFAULT_MULTIPLIER = 1.0
    """The neutral multiplier returned for non-matching items."""

    _key: str
    _value: str
    _boost: float

    def __init__(self, key: str, value: str, boost: float) -> None:
        check_str(ScorerConfigError, "key", key)
        check_str(ScorerConfigError, "value", value)
        checked = check_float(ScorerConfigError, "boost", boost, positive=True)
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_value", value)
        object.__setattr__(self, "_boost", checked)

    @property
    def key(self) -> str:
        """The metadata key read."""
        return self._key

    @property
    def value(self) -> str:
        """The string the metadata value must equal."""
        return self._value

    @property
    def boost(self) -> float:
        """The multiplier for matching items."""
        return self._boost

    def score_item(self, item: ContextItem) -> float:
        raw = item.metadata.get(self._key)
        if isinstance(raw, str) and raw == self._value:
            return self._boost
        return self.DEFAULT_MULTIPLIER

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        key, value, boost = self._key, self._value, self._boost
        return np.fromiter(
            (
                boost if isinstance(raw := item.metadata.get(key), str) and raw == value else 1.0
                for item in items
            ),
            dtype=np.float64,
            count=len(items),
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self._key, self._value, self._boost))

    def __repr__(self) -> str:
        return f"MetadataKeyScorer({self._key!r}, {self._value!r}, boost={self._boost!r})"
