"""Placers: the final order of the selected items in the context window.

A placer receives the merged list (pinned items first with score 1.0, then the sliced items in
score order) and returns the same items, reordered. It never adds, drops or changes an item.

* :class:`ChronologicalPlacer` — oldest first, items without a timestamp at the end.
* :class:`UShapedPlacer` — the best items at both edges, the weakest in the middle, where
  language models pay the least attention.

Both are deterministic and O(N log N): each sorts integer positions by a precomputed key list
(no Python-level comparison function), relying on Python's stable sort for the index tie-break.
Both derive from :class:`ColumnPlacer`, which lets the pipeline hand them plain lists.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from operator import attrgetter, itemgetter
from typing import Protocol, runtime_checkable

from pycupel.model import ContextItem, ScoredItem

__all__ = ["ChronologicalPlacer", "ColumnPlacer", "Placer", "UShapedPlacer"]

# Field accessors of ScoredItem (a NamedTuple: item, score); map() with them runs in C.
_ITEM = itemgetter(0)
_SCORE = itemgetter(1)
_MICROS = attrgetter("timestamp_micros")


@runtime_checkable
class Placer(Protocol):
    """Orders the selected items for the model's attention."""

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        """Return the items of ``items`` in presentation order."""
        ...


class ColumnPlacer(ABC):
    """Base of the built-in placers: the order is computed as positions from plain columns.

    :meth:`order_positions` decides from the items and their scores as two lists;
    :meth:`place` is the :class:`Placer` interface on top of it. The pipeline, which already
    holds both lists, calls :meth:`order_positions` directly (unless a subclass overrides
    ``place``), so it builds no (item, score) pair just to have it taken apart again.
    """

    __slots__ = ()

    @abstractmethod
    def order_positions(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[int]:
        """The positions of ``items`` in presentation order (a permutation of their indices)."""

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        """Return the items of ``items`` in presentation order."""
        context_items = list(map(_ITEM, items))
        positions = self.order_positions(context_items, list(map(_SCORE, items)))
        return list(map(context_items.__getitem__, positions))


class ChronologicalPlacer(ColumnPlacer):
    """Orders items by ascending timestamp, so the window reads oldest to newest.

    Timestamped items come first, ordered by their UTC instant; items without a timestamp follow
    in their input order. Equal timestamps keep their input order. Scores are ignored.
    """

    __slots__ = ()

    def order_positions(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[int]:
        """Positions oldest first, untimestamped items last (each group stable)."""
        instants = list(map(_MICROS, items))
        undated = [index for index, micros in enumerate(instants) if micros is None]
        if not undated:
            # Sorting positions by their integer instant is stable: equal instants keep order.
            return sorted(range(len(instants)), key=instants.__getitem__)
        stamped = [index for index, micros in enumerate(instants) if micros is not None]
        stamped.sort(key=instants.__getitem__)
        return stamped + undated

    def __repr__(self) -> str:
        return "ChronologicalPlacer()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChronologicalPlacer)

    def __hash__(self) -> int:
        return hash(ChronologicalPlacer)


class UShapedPlacer(ColumnPlacer):
    """Puts the highest-scored items at both edges and the lowest in the middle.

    Items are ranked by score descending (input index ascending on ties; a NaN score ranks
    lowest, tied with ``-inf``, as in the pipeline's sort). Even ranks fill the
    window from the left edge inwards, odd ranks from the right edge inwards, so rank 0 opens
    the window and rank 1 closes it. Pinned items arrive with score 1.0 and so land at the edges.
    """

    __slots__ = ()

    def order_positions(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[int]:
        """Positions in U-shaped order (strongest at the edges)."""
        if any(map(math.isnan, scores)):  # NaN compares false both ways: rank it last
            scores = [-math.inf if math.isnan(score) else score for score in scores]
        # Python's sort stays stable with reverse=True: score descending, index ascending.
        ranked = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
        left = ranked[0::2]  # ranks 0, 2, 4, ... fill positions 0, 1, 2, ...
        right = ranked[1::2]  # ranks 1, 3, 5, ... fill positions n-1, n-2, ...
        right.reverse()
        left.extend(right)
        return left

    def __repr__(self) -> str:
        return "UShapedPlacer()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UShapedPlacer)

    def __hash__(self) -> int:
        return hash(UShapedPlacer)
