"""Placers: the final order of the selected items in the context window.

A placer receives the merged list (pinned items first with score 1.0, then the sliced items in
score order) and returns the same items, reordered. It never adds, drops or changes an item.

* :class:`ChronologicalPlacer` — oldest first, items without a timestamp at the end.
* :class:`UShapedPlacer` — the best items at both edges, the weakest in the middle, where
  language models pay the least attention.

Both are deterministic and O(N log N): each sorts integer positions by a precomputed key list
(no Python-level comparison function), relying on Python's stable sort for the index tie-break.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from operator import itemgetter
from typing import Protocol, runtime_checkable

from pycupel.model import ContextItem, ScoredItem

__all__ = ["ChronologicalPlacer", "Placer", "UShapedPlacer"]

# Field accessors of ScoredItem (a NamedTuple: item, score); map() with them runs in C.
_ITEM = itemgetter(0)
_SCORE = itemgetter(1)


@runtime_checkable
class Placer(Protocol):
    """Orders the selected items for the model's attention."""

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        """Return the items of ``items`` in presentation order."""
        ...


class ChronologicalPlacer:
    """Orders items by ascending timestamp, so the window reads oldest to newest.

    Timestamped items come first, ordered by their UTC instant; items without a timestamp follow
    in their input order. Equal timestamps keep their input order. Scores are ignored.
    """

    __slots__ = ()

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        """Return the items of ``items`` oldest first, untimestamped items last."""
        context_items = list(map(_ITEM, items))
        stamped: list[ContextItem] = []
        instants: list[int] = []
        undated: list[ContextItem] = []
        for item in context_items:
            micros = item.timestamp_micros
            if micros is None:
                undated.append(item)
            else:
                stamped.append(item)
                instants.append(micros)
        if len(stamped) <= 1:
            return stamped + undated
        # Sorting positions by their integer instant is stable: equal instants keep input order.
        order = sorted(range(len(stamped)), key=instants.__getitem__)
        result = list(itemgetter(*order)(stamped))
        result.extend(undated)
        return result

    def __repr__(self) -> str:
        return "ChronologicalPlacer()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChronologicalPlacer)

    def __hash__(self) -> int:
        return hash(ChronologicalPlacer)


class UShapedPlacer:
    """Puts the highest-scored items at both edges and the lowest in the middle.

    Items are ranked by score descending (input index ascending on ties; a NaN score ranks
    lowest, tied with ``-inf``, as in the pipeline's sort). Even ranks fill the
    window from the left edge inwards, odd ranks from the right edge inwards, so rank 0 opens
    the window and rank 1 closes it. Pinned items arrive with score 1.0 and so land at the edges.
    """

    __slots__ = ()

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        """Return the items of ``items`` in U-shaped order (strongest at the edges)."""
        context_items = list(map(_ITEM, items))
        if len(context_items) <= 1:
            return context_items
        scores = list(map(_SCORE, items))
        if any(map(math.isnan, scores)):  # NaN compares false both ways: rank it last
            scores = [-math.inf if math.isnan(score) else score for score in scores]
        # Python's sort stays stable with reverse=True: score descending, index ascending.
        ranked = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
        left = ranked[0::2]  # ranks 0, 2, 4, ... fill positions 0, 1, 2, ...
        right = ranked[1::2]  # ranks 1, 3, 5, ... fill positions n-1, n-2, ...
        right.reverse()
        return list(itemgetter(*(left + right))(context_items))

    def __repr__(self) -> str:
        return "UShapedPlacer()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UShapedPlacer)

    def __hash__(self) -> int:
        return hash(UShapedPlacer)
