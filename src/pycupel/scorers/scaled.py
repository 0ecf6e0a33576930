"""ScaledScorer: min-max normalisation of another scorer over the item list."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from pycupel.errors import ScorerConfigError
from pycupel.model import ContextItem
from pycupel.scorers._immutable import Immutable
from pycupel.scorers.base import (
    BaseScorer,
    FloatArray,
    Scorer,
    as_scorer,
    check_nesting,
    score_array,
    score_array_for,
)

__all__ = ["ScaledScorer"]

DEGENERATE_SCORE = 0.5
"""The score of every item when the inner scores are all equal (or the list is empty)."""


class ScaledScorer(Immutable, BaseScorer):
    """Composite scorer: ``(raw - min) / (max - min)`` of the inner scorer's scores.

    The inner scorer runs once per pass over the whole list (the specification re-runs it for
    every item; the result is identical). When all inner scores are equal, every item scores
    exactly 0.5. As in the specification, ``min``/``max`` skip NaN inner scores (a NaN never
    compares below or above), and a NaN inner score scales to NaN.

    Args:
        inner: any scorer, or a plain function ``item -> float``.
    """

    __slots__ = ("_inner",)

    _inner: Scorer

    def __init__(self, inner: Scorer | Callable[[ContextItem], float]) -> None:
        if inner is None:
            raise ScorerConfigError("inner", inner, "must be a scorer, not None")
        try:
            scorer = as_scorer(inner)
        except ScorerConfigError as exc:
            raise ScorerConfigError("inner", inner, exc.rule) from exc
        check_nesting("inner", scorer)
        object.__setattr__(self, "_inner", scorer)

    @property
    def inner(self) -> Scorer:
        """The wrapped scorer."""
        return self._inner

    def children(self) -> tuple[Scorer, ...]:
        return (self._inner,)

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        return self.score_array_for(items, None)

    def score_array_for(self, items: Sequence[ContextItem], query: str | None) -> FloatArray:
        """The min-max normalised inner scores, the inner scorer scored for ``query``."""
        raw = score_array_for(self._inner, items, query)
        low, high = _min_max(raw)
        if high == low:
            return np.full(len(items), DEGENERATE_SCORE, dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            scaled: FloatArray = (raw - low) / (high - low)
        return scaled

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        """The specification's per-item form.

        ``item`` is found in ``all_items`` by identity (the last occurrence wins, as in the
        specification's loop). If it is absent, its raw score stays the specification's NaN
        sentinel, so the result is NaN unless the list is empty or degenerate (0.5).
        """
        if not all_items:
            return DEGENERATE_SCORE
        raw = score_array(self._inner, all_items)
        low, high = _min_max(raw)
        if high == low:
            return DEGENERATE_SCORE
        own = math.nan
        for index, candidate in enumerate(all_items):
            if candidate is item:
                own = float(raw[index])
        return (own - low) / (high - low)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self._inner,))

    def __repr__(self) -> str:
        return f"ScaledScorer({self._inner!r})"


def _min_max(raw: FloatArray) -> tuple[float, float]:
    """The specification's running min/max: starts at +/-inf and ignores NaN."""
    low = float(np.fmin.reduce(raw, initial=math.inf))
    high = float(np.fmax.reduce(raw, initial=-math.inf))
    return low, high
