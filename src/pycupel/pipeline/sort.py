"""Stage 4, Sort: score descending, input order on ties (a stable sort). It emits no event."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat

from pycupel._order import stable_argsort
from pycupel.model import ContextItem, ScoredItem
from pycupel.pipeline.score import Scores
from pycupel.scorers.base import FloatArray
from pycupel.slicers._common import CheckedScoredItems

__all__ = ["scored_items", "sort_by_score"]

_tuple_new = tuple.__new__


def sort_by_score(
    items: Sequence[ContextItem], scores: Scores
) -> tuple[list[ContextItem], list[float], FloatArray | None]:
    """``items`` and their ``scores`` (as a list, and as an array unless they came as a list),
    best score first."""
    if isinstance(scores, list):
        # Python's sort stays stable with reverse=True (equal scores keep input order); the
        # scores are finite (Score refuses the others).
        order_list = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
        return (
            list(map(items.__getitem__, order_list)),
            list(map(scores.__getitem__, order_list)),
            None,
        )
    order = stable_argsort(-scores)
    sorted_array = scores[order]
    sorted_scores: list[float] = sorted_array.tolist()
    sorted_items = list(map(items.__getitem__, order.tolist()))
    return sorted_items, sorted_scores, sorted_array


def scored_items(items: list[ContextItem], scores: list[float]) -> tuple[ScoredItem, ...]:
    """``items`` paired with ``scores`` as the specification's (item, score) entries.

    Marked as checked: the slicers' input check has nothing to find in the pipeline's own
    pairs (Classify checked the items, Score the scores).
    """
    # ScoredItem is a NamedTuple: build the tuples directly, without a Python-level loop.
    return CheckedScoredItems(map(_tuple_new, repeat(ScoredItem), zip(items, scores, strict=True)))
