"""Placers: the final order of the selected items in the context window.

A placer receives the merged list (pinned items first with score 1.0, then the sliced items in
score order) and returns the same items, reordered. It never adds, drops or changes an item.

* :class:`ChronologicalPlacer` — oldest first, items without a timestamp at the end.
* :class:`UShapedPlacer` — the best items at both edges, the weakest in the middle, where
  language models pay the least attention.

Both are deterministic and O(N log N): each sorts integer positions by a precomputed key list
(no Python-level comparison function), relying on Python's stable sort for the index tie-break.
Both derive from :class:`ColumnPlacer`, which lets the pipeline hand them plain lists.

* :class:`SystemFirstPlacer` — not a specification placer: it wraps one and keeps pinned system
  prompts at the top of the window (the chronological order puts undated items last, and a
  system prompt usually has no timestamp).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from operator import attrgetter
from typing import Protocol, TypeVar, runtime_checkable

from pycupel.errors import PlacerConfigError, PlacerInputError
from pycupel.model import ContextItem, ContextKind, ScoredItem
from pycupel.slicers._common import scored_columns

__all__ = [
    "ChronologicalPlacer",
    "ColumnPlacer",
    "Placer",
    "SystemFirstPlacer",
    "UShapedPlacer",
    "u_shaped",
]

_T = TypeVar("_T")

# The timestamp column of the items; map() with it runs in C.
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
    :meth:`place` is the :class:`Placer` interface on top of it, and checks its input. The
    pipeline, which already holds both lists (checked), calls :meth:`order_positions`
    directly (unless a subclass overrides ``place``), so it builds no (item, score) pair just
    to have it taken apart again.
    """

    __slots__ = ()

    @abstractmethod
    def order_positions(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[int]:
        """The positions of ``items`` in presentation order (a permutation of their indices)."""

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        """Return the items of ``items`` in presentation order.

        Raises:
            PlacerInputError: ``items`` is not a sequence of :class:`ScoredItem` with
                real-number scores (checked as the slicers check their input: exact types
                pass three C-level passes, anything else is named by position).
        """
        context_items, scores = scored_columns(items, error=PlacerInputError)
        positions = self.order_positions(context_items, scores)
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
        return u_shaped(sorted(range(len(scores)), key=scores.__getitem__, reverse=True))

    def __repr__(self) -> str:
        return "UShapedPlacer()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UShapedPlacer)

    def __hash__(self) -> int:
        return hash(UShapedPlacer)


class SystemFirstPlacer(ColumnPlacer):
    """Pinned system prompts first, in their merge order; every other item in ``inner``'s order.

    A pinned item of kind ``SystemPrompt`` opens the window whatever ``inner`` would do with it
    (:class:`ChronologicalPlacer` puts undated items last; :class:`UShapedPlacer` may send a
    second pinned item to the far edge). Without such an item the order is ``inner``'s own.

    Args:
        inner: the placer for the other items (default :class:`ChronologicalPlacer`); any
            object with ``place(items)``. Wrapping a SystemFirstPlacer wraps its inner placer.

    Raises:
        PlacerConfigError: ``inner`` is not a placer instance (a class, say), or (when run)
            returned other items than it was given.
    """

    __slots__ = ("_inner",)

    _inner: Placer

    def __init__(self, inner: Placer | None = None) -> None:
        if inner is None:
            inner = ChronologicalPlacer()
        elif isinstance(inner, SystemFirstPlacer):
            inner = inner.inner
        elif isinstance(inner, type):
            raise PlacerConfigError(
                "inner", inner, f"must be a placer instance, not a class: write {inner.__name__}()"
            )
        elif not callable(getattr(inner, "place", None)):
            raise PlacerConfigError("inner", inner, "must be a placer with a place(items) method")
        object.__setattr__(self, "_inner", inner)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"SystemFirstPlacer is immutable; cannot set {name!r}")

    @property
    def inner(self) -> Placer:
        """The placer that orders everything but the pinned system prompts."""
        return self._inner

    def order_positions(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[int]:
        """Positions of the pinned system prompts, then ``inner``'s order of the others."""
        first = [index for index, item in enumerate(items) if _pinned_system(item)]
        if not first:
            return self._inner_positions(items, scores)
        leading = set(first)
        rest = [index for index in range(len(items)) if index not in leading]
        order = self._inner_positions(
            [items[index] for index in rest], [scores[index] for index in rest]
        )
        return first + [rest[position] for position in order]

    def _inner_positions(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[int]:
        inner = self._inner
        if isinstance(inner, ColumnPlacer) and type(inner).place is ColumnPlacer.place:
            return inner.order_positions(items, scores)
        placed = list(
            inner.place(
                [ScoredItem(item, score) for item, score in zip(items, scores, strict=True)]
            )
        )
        position_of = {id(item): index for index, item in enumerate(items)}
        order = [position_of.get(id(item), -1) for item in placed]
        if sorted(order) != list(range(len(items))):
            raise PlacerConfigError(
                f"{type(inner).__name__}.place",
                f"{len(placed)} items for {len(items)} given",
                "must return exactly the items it was given, each once, reordered",
            )
        return order

    def __repr__(self) -> str:
        return f"SystemFirstPlacer({self._inner!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SystemFirstPlacer) and other.inner == self._inner

    def __hash__(self) -> int:
        return hash((SystemFirstPlacer, self._inner))


def _pinned_system(item: ContextItem) -> bool:
    return item.pinned and item.kind == ContextKind.SYSTEM_PROMPT


def u_shaped(ranked: list[_T]) -> list[_T]:
    """``ranked`` (best first) in U-shaped order: even ranks from the left edge inwards, odd
    ranks from the right edge inwards."""
    left = ranked[0::2]  # ranks 0, 2, 4, ... fill positions 0, 1, 2, ...
    right = ranked[1::2]  # ranks 1, 3, 5, ... fill positions n-1, n-2, ...
    right.reverse()
    left.extend(right)
    return left
