"""ReflexiveScorer: the caller's ``future_relevance_hint``, clamped to [0, 1]."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pycupel.model import ContextItem
from pycupel.scorers._clamp import clamp_unit
from pycupel.scorers._immutable import Immutable
from pycupel.scorers.base import FloatArray, ItemScorer

__all__ = ["ReflexiveScorer"]


class ReflexiveScorer(Immutable, ItemScorer):
    """Absolute scorer: the item's ``future_relevance_hint``.

    Order of the rules: no hint -> 0.0; a non-finite hint (NaN, +/-inf) -> 0.0; otherwise the
    hint clamped to [0.0, 1.0].
    """

    __slots__ = ()

    def score_item(self, item: ContextItem) -> float:
        hint = item.future_relevance_hint
        if hint is None or not math.isfinite(hint):
            return 0.0
        return clamp_unit(hint)

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        scores: list[float] = self.score_array(items).tolist()
        return scores

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        # A missing hint becomes NaN, which the non-finite rule maps to 0.0 like the spec's null.
        hints = np.fromiter(
            (math.nan if (hint := item.future_relevance_hint) is None else hint for item in items),
            dtype=np.float64,
            count=len(items),
        )
        clamped = np.where(hints < 0.0, 0.0, np.where(hints > 1.0, 1.0, hints))
        result: FloatArray = np.where(np.isfinite(hints), clamped, 0.0)
        return result

    def __repr__(self) -> str:
        return "ReflexiveScorer()"
