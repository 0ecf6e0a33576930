"""Stage 2, Score: the scorer scores the scoreable items, once per run (the batch form).

The run's query (``Pipeline.run(items, query=...)``) is handed to query-aware scorers
(:func:`~pycupel.scorers.score_array_for`); other scorers never see it.

A NaN or infinite score raises :class:`~pycupel.errors.NonFiniteScoreError`; a wrong number of
scores raises :class:`~pycupel.errors.ScorerConfigError`.

Up to :data:`~pycupel.scorers.base.SMALL_BATCH` items the scores stay a list of floats through
the run (numpy's per-call overhead dominates at that size); above, they are a float64 array.
Both give bitwise identical scores, and the later stages accept either.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pycupel.errors import NonFiniteScoreError, ScorerConfigError
from pycupel.model import ContextItem
from pycupel.scorers.base import (
    SMALL_BATCH,
    BaseScorer,
    FloatArray,
    Scorer,
    check_finite_scores,
    is_builtin,
    score_array_for,
)

if TYPE_CHECKING:
    import numpy as np
else:
    from pycupel._numpy import numpy as np

__all__ = ["Scores", "checked_score_list", "score"]

Scores = FloatArray | list[float]
"""A run's scores: a list of floats for a small batch, a float64 array otherwise."""


def score(scorer: Scorer, items: tuple[ContextItem, ...], query: str | None = None) -> Scores:
    """The scores of ``items`` for the run's ``query``, in their order: a list for a small
    batch of items scored by a built-in scorer, else a float64 array."""
    if not items:
        # The specification: an empty scoreable list is never passed to the scorer.
        return np.empty(0, dtype=np.float64)
    if len(items) <= SMALL_BATCH and is_builtin(scorer):
        return checked_score_list(scorer, items, query)
    scores = np.asarray(score_array_for(scorer, items, query), dtype=np.float64)
    if scores.shape != (len(items),):
        raise ScorerConfigError(
            f"{type(scorer).__name__}.score_array",
            f"array of shape {scores.shape}",
            f"must return exactly one score per item ({len(items)})",
        )
    check_finite_scores(scorer, items, scores)
    return scores


def checked_score_list(
    scorer: BaseScorer, items: tuple[ContextItem, ...], query: str | None
) -> list[float]:
    """The list path of :func:`score`: a built-in ``scorer``'s scores of a small batch of
    ``items`` (at least one), checked as the array path checks them."""
    listed = scorer.score_all_for(items, query)
    if len(listed) != len(items):
        raise ScorerConfigError(
            f"{type(scorer).__name__}.score_all",
            f"{len(listed)} scores",
            f"must return exactly one score per item ({len(items)})",
        )
    if not all(map(math.isfinite, listed)):
        index = next(i for i, value in enumerate(listed) if not math.isfinite(value))
        raise NonFiniteScoreError(
            type(scorer).__name__, index, float(listed[index]), items[index].content
        )
    return listed
