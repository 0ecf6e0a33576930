"""Stage 2, Score: the scorer scores the scoreable items, once per run (the batch form).

A NaN or infinite score raises :class:`~pycupel.errors.NonFiniteScoreError`; a wrong number of
scores raises :class:`~pycupel.errors.ScorerConfigError`.
"""

from __future__ import annotations

import numpy as np

from pycupel.errors import ScorerConfigError
from pycupel.model import ContextItem
from pycupel.scorers.base import FloatArray, Scorer, check_finite_scores, score_array

__all__ = ["score"]


def score(scorer: Scorer, items: tuple[ContextItem, ...]) -> FloatArray:
    """The scores of ``items`` as a float64 array, in their order."""
    if not items:
        # The specification: an empty scoreable list is never passed to the scorer.
        return np.empty(0, dtype=np.float64)
    scores = np.asarray(score_array(scorer, items), dtype=np.float64)
    if scores.shape != (len(items),):
        raise ScorerConfigError(
            f"{type(scorer).__name__}.score_array",
            f"array of shape {scores.shape}",
            f"must return exactly one score per item ({len(items)})",
        )
    check_finite_scores(scorer, items, scores)
    return scores
