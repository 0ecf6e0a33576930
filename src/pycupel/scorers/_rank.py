"""Rank scoring shared by RecencyScorer and PriorityScorer.

Both scorers give an item ``rank / (count - 1)``, where ``rank`` is the number of keyed items
whose key is strictly lower and ``count`` is the number of keyed items; items without a key
score 0.0 and a lone keyed item scores 1.0. Ranks come from one sort (or, for a narrow range
of keys such as priorities, one counting pass), which makes a scoring pass O(N log N) instead
of the specification's O(N^2); the counts are exactly the specification's, so the scores are
identical.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import compress, repeat
from operator import is_not, truediv
from typing import TYPE_CHECKING, cast

from pycupel._numpy import IntArray
from pycupel.scorers.base import FloatArray

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from pycupel._numpy import numpy as np


def rank_scores(keys: Sequence[int | None]) -> FloatArray:
    """Rank scores of ``keys`` (``None`` = no key) as a float64 array, in input order."""
    count = len(keys)
    scores = np.zeros(count, dtype=np.float64)
    if not isinstance(keys, list):
        keys = list(keys)
    missing = keys.count(None)  # a C-level scan; items are usually all keyed or mostly keyed
    keyed = count - missing
    if keyed == 0:
        return scores
    present: npt.NDArray[np.bool_] | None = None
    values_list: list[int] = keys  # type: ignore[assignment]  # no None left when missing == 0
    if missing:
        present = np.fromiter(map(is_not, keys, repeat(None)), dtype=np.bool_, count=count)
        values_list = cast("list[int]", list(compress(keys, present.tolist())))
    if keyed == 1:
        scores[present if present is not None else slice(None)] = 1.0
        return scores
    try:
        values = np.array(values_list, dtype=np.int64)
    except OverflowError:
        # Python ints are unbounded; keys beyond int64 take the exact pure-Python path.
        exact = _rank_scores_python(values_list)
        if present is None:
            return np.array(exact, dtype=np.float64)
        scores[present] = exact
        return scores
    ranked = _ranks(values) / (keyed - 1)
    if present is None:
        result: FloatArray = ranked
        return result
    scores[present] = ranked
    return scores


def _ranks(values: IntArray) -> IntArray:
    """For each value, how many values are strictly lower (ties share the lowest rank).

    Narrow ranges (priorities) are counted with ``bincount`` in O(N + range); wide ones
    (timestamps) sort once. The sort need not be stable: tied values get the same rank
    whatever their order, and reading the ranks back in sorted order keeps memory access
    sequential (a binary search per item would jump around the whole array).
    """
    size = len(values)
    low, high = int(values.min()), int(values.max())
    if high - low <= 4 * size + 1024:
        offsets = values - low
        counts = np.bincount(offsets)
        lower = np.cumsum(counts) - counts
        ranks: IntArray = lower[offsets]
        return ranks
    order = np.argsort(values)
    ordered = values[order]
    starts = np.empty(size, dtype=np.bool_)
    starts[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    # Position of the first element of each run of equal values, carried along the run.
    first = np.maximum.accumulate(np.where(starts, np.arange(size, dtype=np.int64), 0))
    ranks = np.empty(size, dtype=np.int64)
    ranks[order] = first
    return ranks


BISECT_LIMIT = 32
"""Up to this many keys (none missing), :func:`rank_score_list` ranks by binary search."""


def rank_score_list(keys: list[int | None]) -> list[float]:
    """:func:`rank_scores` as a list of floats, computed without numpy (for small batches).

    The same counts divided the same way (an int by an int, correctly rounded, as numpy
    divides int64 ranks by a Python int), so the scores are identical.
    """
    if len(keys) <= BISECT_LIMIT and None not in keys and len(keys) > 1:
        # A few keys, all present: each key's rank is its insertion point in sorted order,
        # found by C-level binary searches (cheaper than building the table below for so
        # few keys; the table wins from a few dozen up).
        known = cast("list[int]", keys)  # no None in keys
        ascending = sorted(known)
        ranks = map(bisect_left, repeat(ascending), known)
        return list(map(truediv, ranks, repeat(len(known) - 1)))
    present = [key for key in keys if key is not None] if None in keys else keys
    if not present:
        return [0.0] * len(keys)
    if len(present) == 1:
        return [0.0 if key is None else 1.0 for key in keys]
    ordered = sorted(present)  # type: ignore[type-var]  # no None left in present
    denominator = len(ordered) - 1
    # Each key's score at the first position it holds in sorted order (positions run
    # backwards, so the first one is written last); a missing key (None) scores 0.0. All
    # C-level passes.
    scores = map(truediv, range(denominator, -1, -1), repeat(denominator))
    score_of: dict[int | None, float] = dict(zip(reversed(ordered), scores, strict=True))
    score_of[None] = 0.0
    return list(map(score_of.__getitem__, keys))


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
