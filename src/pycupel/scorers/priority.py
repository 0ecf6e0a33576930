"""PriorityScorer: rank items by their integer priority, highest highest."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from pycupel.model import ContextItem
from pycupel.scorers._immutable import Immutable
from pycupel.scorers._rank import rank_score_list, rank_score_one, rank_scores
from pycupel.scorers.base import SMALL_BATCH, BaseScorer, FloatArray

_PRIORITY = attrgetter("priority")

__all__ = ["PriorityScorer"]


class PriorityScorer(Immutable, BaseScorer):
    """Relative scorer: ``rank / (prioritised - 1)`` where ``rank`` counts strictly lower
    priorities.

    The highest priority scores 1.0 and the lowest 0.0; ties share the lower rank; items
    without a priority score 0.0 and do not count; a lone prioritised item scores 1.0.
    Priorities are arbitrary Python ints (values beyond int64 are ranked exactly too).
    """

    __slots__ = ()

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        return rank_scores(list(map(_PRIORITY, items)))

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        keys: list[int | None] = list(map(_PRIORITY, items))
        if len(keys) <= SMALL_BATCH:
            return rank_score_list(keys)
        scores: list[float] = rank_scores(keys).tolist()
        return scores

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        return rank_score_one(item.priority, [i.priority for i in all_items])

    def __repr__(self) -> str:
        return "PriorityScorer()"
