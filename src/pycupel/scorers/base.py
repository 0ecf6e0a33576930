"""The scorer contract.

A scorer turns the list of scoreable items into one float64 score per item. The batch form,
``score_all(items)``, is what the pipeline calls: relative scorers (recency, priority,
frequency, scaled) see the whole list once, so they can rank with one sort instead of
comparing every item with every other. ``score(item, all_items)`` is the specification's
per-item form, kept for custom scorers and compatibility.

Custom scorers can be any object with ``score_all``, a subclass of :class:`ItemScorer`
(implement ``score_item``), or a plain function ``item -> float`` passed through
:func:`as_scorer`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from pycupel.errors import NonFiniteScoreError, ScorerConfigError
from pycupel.model import ContextItem

__all__ = [
    "SMALL_BATCH",
    "BaseScorer",
    "FloatArray",
    "FunctionScorer",
    "ItemScorer",
    "Scorer",
    "as_scorer",
    "check_finite_scores",
    "is_builtin",
    "score_array",
]

FloatArray = npt.NDArray[np.float64]

SMALL_BATCH = 256
"""Up to this many items, the built-in scorers' ``score_all`` works on plain Python lists: at
that size numpy's per-call overhead costs more than the loops it replaces. Both forms give
bitwise identical scores."""


@runtime_checkable
class Scorer(Protocol):
    """Anything that scores a list of items: one float per item, in input order."""

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        """Score every item of ``items`` (each against the whole list); same length and order."""
        ...


class BaseScorer(ABC):
    """Base of the built-in scorers.

    Subclasses implement :meth:`score_array` (the vectorised batch form). ``score_all`` and the
    per-item ``score`` derive from it. Scorers hold configuration only, never per-run state,
    so one instance can serve many threads.
    """

    __slots__ = ()

    @abstractmethod
    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        """Scores of ``items`` as a float64 array (same length and order)."""

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        """Scores of ``items`` as a list of floats (same length and order)."""
        scores: list[float] = self.score_array(items).tolist()
        return scores

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        """The specification's per-item form: the score of ``item`` among ``all_items``.

        ``item`` is looked up in ``all_items`` by identity; relative scorers override this
        when ``item`` may be absent from the list.
        """
        for index, candidate in enumerate(all_items):
            if candidate is item:
                return float(self.score_array(all_items)[index])
        return float(self.score_array([*all_items, item])[-1])

    def children(self) -> tuple[Scorer, ...]:
        """Scorers this one delegates to (for cycle detection); empty for leaf scorers."""
        return ()


class ItemScorer(BaseScorer):
    """Base for absolute scorers: the score depends on the item alone."""

    __slots__ = ()

    @abstractmethod
    def score_item(self, item: ContextItem) -> float:
        """The score of one item."""

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        score_item = self.score_item
        return np.fromiter((score_item(i) for i in items), dtype=np.float64, count=len(items))

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        score_item = self.score_item
        return [score_item(i) for i in items]

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        return self.score_item(item)


class FunctionScorer(ItemScorer):
    """An absolute scorer from a plain function ``item -> float``."""

    __slots__ = ("_function", "name")

    def __init__(self, function: Callable[[ContextItem], float], name: str | None = None) -> None:
        if not callable(function):
            raise ScorerConfigError("function", function, "must be callable")
        self._function = function
        self.name = name or getattr(function, "__name__", "function")

    def score_item(self, item: ContextItem) -> float:
        return float(self._function(item))

    def __repr__(self) -> str:
        return f"FunctionScorer({self.name})"


def as_scorer(value: Scorer | Callable[[ContextItem], float]) -> Scorer:
    """Accept a scorer object or a function ``item -> float``; reject anything else."""
    if isinstance(value, Scorer):
        return value
    if callable(value):
        return FunctionScorer(value)
    raise ScorerConfigError(
        "scorer", value, "must have a score_all(items) method or be a function item -> float"
    )


def is_builtin(scorer: object) -> bool:
    """Whether ``scorer`` is an instance of one of pycupel's own scorer classes (not of a
    subclass defined elsewhere): then its ``score_all`` returns floats by construction."""
    return type(scorer).__module__.startswith("pycupel.scorers.")


def score_array(scorer: Scorer, items: Sequence[ContextItem]) -> FloatArray:
    """Scores of ``items`` from any scorer as a float64 array, checking the scorer's output.

    Built-in scorers take their vectorised path; for other scorers the result of
    ``score_all`` must have exactly one number per item.
    """
    if isinstance(scorer, BaseScorer):
        return scorer.score_array(items)
    raw = scorer.score_all(items)
    try:
        array = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ScorerConfigError(
            f"{type(scorer).__name__}.score_all", raw, "must return a sequence of numbers"
        ) from exc
    if array.shape != (len(items),):
        raise ScorerConfigError(
            f"{type(scorer).__name__}.score_all",
            f"{array.size} scores",
            f"must return exactly one score per item ({len(items)})",
        )
    return array


def check_finite_scores(scorer: Scorer, items: Sequence[ContextItem], scores: FloatArray) -> None:
    """Raise :class:`~pycupel.errors.NonFiniteScoreError` for the first NaN or infinite score.

    The pipeline calls this on its final scores: a NaN has no place in a descending order and
    no slicer can weigh an infinity, so such scores are refused rather than ranked by a rule
    that would silently decide the window. (Inner scores inside a ScaledScorer or a
    CompositeScorer follow those scorers' own rules.)
    """
    finite = np.isfinite(scores)
    if finite.all():
        return
    index = int(np.flatnonzero(~finite)[0])
    raise NonFiniteScoreError(
        type(scorer).__name__, index, float(scores[index]), items[index].content
    )
