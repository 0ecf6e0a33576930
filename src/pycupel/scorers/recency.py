"""RecencyScorer: rank items by timestamp, most recent highest."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from pycupel.model import ContextItem
from pycupel.scorers._immutable import Immutable
from pycupel.scorers._rank import rank_score_list, rank_score_one, rank_scores
from pycupel.scorers.base import SMALL_BATCH, BaseScorer, FloatArray

_MICROS = attrgetter("timestamp_micros")

__all__ = ["RecencyScorer"]


class RecencyScorer(Immutable, BaseScorer):
    """Relative scorer: ``rank / (timestamped - 1)`` where ``rank`` counts strictly older items.

    The newest item scores 1.0 and the oldest 0.0; ties share the lower rank; items without a
    timestamp score 0.0 and do not count; a lone timestamped item scores 1.0. Timestamps are
    compared as UTC instants (integer microseconds).
    """

    __slots__ = ()

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        return rank_scores(list(map(_MICROS, items)))

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        keys: list[int | None] = list(map(_MICROS, items))
        if len(keys) <= SMALL_BATCH:
            return rank_score_list(keys)
        scores: list[float] = rank_scores(keys).tolist()
        return scores

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        return rank_score_one(item.timestamp_micros, [i.timestamp_micros for i in all_items])

    def __repr__(self) -> str:
        return "RecencyScorer()"
