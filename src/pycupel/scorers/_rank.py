"""Rank scoring shared by RecencyScorer and PriorityScorer.

Both scorers give an item ``rank / (count - 1)``, where ``rank`` is the number of keyed items
whose key is strictly lower and ``count`` is the number of keyed items; items without a key
score 0.0 and a lone keyed item scores 1.0. Ranks come from one sort plus a binary search per
item (``searchsorted`` with ``side="left"`` counts the strictly lower keys, so ties share a
rank), which makes a scoring pass O(N log N) instead of the specification's O(N^2).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

import numpy as np

from pycupel.scorers.base import FloatArray


def rank_scores(keys: Sequence[int | None]) -> FloatArray:
    """Rank scores of ``keys`` (``None`` = no key) as a float64 array, in input order."""
    count = len(keys)
    scores = np.zeros(count, dtype=np.float64)
    present = np.fromiter((key is not None for key in keys), dtype=np.bool_, count=count)
    keyed = int(np.count_nonzero(present))
    if keyed == 0:
        return scores
    if keyed == 1:
        scores[present] = 1.0
        return scores
    try:
        values = np.fromiter((key for key in keys if key is not None), dtype=np.int64, count=keyed)
    except OverflowError:
        # Python ints are unbounded; keys beyond int64 take the exact pure-Python path.
        scores[present] = _rank_scores_python([key for key in keys if key is not None])
        return scores
    ranks = np.searchsorted(np.sort(values), values, side="left")
    scores[present] = ranks / (keyed - 1)
    return scores


def _rank_scores_python(values: list[int]) -> list[float]:
    ordered = sorted(values)
    denominator = len(values) - 1
    return [bisect_left(ordered, value) / denominator for value in values]


def rank_score_one(key: int | None, keys: Sequence[int | None]) -> float:
    """The specification's per-item form: the rank score of ``key`` among ``keys``, O(N).

    ``key`` need not be one of ``keys`` (the count then excludes it, exactly as the
    specification's loop over ``allItems`` does).
    """
    if key is None:
        return 0.0
    keyed = 0
    rank = 0
    for other in keys:
        if other is None:
            continue
        keyed += 1
        if other < key:
            rank += 1
    if keyed <= 1:
        return 1.0
    return rank / (keyed - 1)
