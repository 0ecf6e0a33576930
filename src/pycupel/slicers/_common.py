"""Small pieces shared by the slicers: argument checks and fast column extraction.

Slicers accept only non-negative token counts. The pipeline removes negative-token items during
classification (exclusion reason ``NegativeTokens``), so a slicer that receives one is being
called directly with input that breaks its contract; it says so instead of guessing (greedy
would otherwise *gain* budget from such an item).
"""

from __future__ import annotations

import math
import numbers
import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, NoReturn

from pycupel._numpy import FloatArray, IntArray
from pycupel.errors import InvalidValueError, SliceInputError, SlicerConfigError
from pycupel.model import ContextBudget, ContextItem, ContextKind, KindLike, ScoredItem
from pycupel.slicers.base import Slicer, SliceResult

if TYPE_CHECKING:
    import numpy as np
else:
    from pycupel._numpy import numpy as np

__all__ = [
    "SCORE_RANGE_RULE",
    "TOKEN_TOTAL_LIMIT",
    "CheckedScoredItems",
    "ColumnSlicer",
    "Frozen",
    "check_budget",
    "check_inner_slicer",
    "check_scored_items",
    "check_token_counts",
    "config_kind",
    "negative_tokens_error",
    "score_desc_key",
    "scored_columns",
    "scores_of",
    "token_array",
    "tokens_of",
]

_item_tokens = attrgetter("item.tokens")
_tokens = attrgetter("tokens")
_item = itemgetter(0)
_score = itemgetter(1)


class Frozen:
    """Mixin for configuration objects: attributes are set once in ``__init__`` (through
    ``object.__setattr__``) and can never change, so an instance is safe to share."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot delete {name!r}")


class ColumnSlicer(ABC):
    """Base of the slicers whose choice depends only on the token and score columns.

    :meth:`select_positions` makes the whole decision from two arrays; :meth:`slice` is the
    :class:`Slicer` interface on top of it. The pipeline, which already holds the columns,
    calls :meth:`select_positions` directly (unless a subclass overrides ``slice``), so it
    builds no per-item pair for the slicer to take apart again. Both routes run the same
    code and so select the same items in the same order.
    """

    __slots__ = ()

    @abstractmethod
    def select_positions(
        self, tokens: IntArray, scores: FloatArray, budget: ContextBudget
    ) -> list[int]:
        """Positions of the selected items in ``slice``'s output order.

        ``tokens`` (int64, every count >= 0) and ``scores`` (float64) describe the
        score-sorted items; ``budget`` has been checked.
        """

    def select_positions_of_lists(
        self, tokens: list[int], scores: list[float], budget: ContextBudget
    ) -> list[int]:
        """:meth:`select_positions` for columns held as lists (small inputs).

        The same positions; this base form converts the lists to arrays. A slicer that can
        decide from plain lists faster than numpy can for a few items overrides it.
        """
        return self.select_positions(
            token_column(tokens), np.asarray(scores, dtype=np.float64), budget
        )

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        """Select from ``items`` (score-sorted) within ``budget.target_tokens``."""
        checked = check_budget(budget)
        context_items, scores = scored_columns(items)
        if not context_items or checked.target_tokens <= 0:
            return SliceResult(())
        tokens = token_array(context_items)
        positions = self.select_positions(tokens, np.array(scores, dtype=np.float64), checked)
        return SliceResult(tuple(map(context_items.__getitem__, positions)))


def check_budget(budget: object) -> ContextBudget:
    """Return ``budget`` if it is a :class:`ContextBudget`; raise :class:`SliceInputError`."""
    if not isinstance(budget, ContextBudget):
        raise SliceInputError("budget", budget, "must be a ContextBudget")
    return budget


_PLAIN_SCORE_TYPES = frozenset({float, int})

SCORE_RANGE_RULE = "must be within the float64 range (about ±1.8e308)"
"""The rule a score breaks when ``float()`` cannot hold it (an int past about 1.8e308)."""


def _score_types() -> frozenset[type]:
    """The exact score types the fast checks accept: float, int and, once numpy is loaded
    (before that no score can be one), numpy's float64."""
    numpy = sys.modules.get("numpy")
    return _PLAIN_SCORE_TYPES if numpy is None else _PLAIN_SCORE_TYPES | {numpy.float64}


def _all_exactly(values: Sequence[object], kind: type) -> bool:
    """Whether every one of ``values`` is exactly of type ``kind`` (no subclass).

    Counting a list of types compares pointers in C; it takes about two thirds of the time of
    building a set of them (no hashing, no insertion).
    """
    return list(map(type, values)).count(kind) == len(values)


def _real_scores(scores: Sequence[object]) -> bool:
    """Whether every score has one of the fast checks' exact types (see :func:`_score_types`)
    and, when some are ints, every one converts to a float."""
    if _all_exactly(scores, float):
        return True
    types = set(map(type, scores))
    return types <= _score_types() and (int not in types or _all_floatable(scores))


def _all_floatable(scores: Sequence[object]) -> bool:
    """Whether ``float()`` takes every one of ``scores`` (an int beyond float64's range, about
    1.8e308, does not: the per-element walk names it)."""
    try:
        list(map(float, scores))  # type: ignore[arg-type]
    except OverflowError:
        return False
    return True


class CheckedScoredItems(tuple[ScoredItem, ...]):
    """A tuple of :class:`ScoredItem` whose shape is known good: built by the pipeline from
    its own scores, or by a slicer from input it has checked. :func:`check_scored_items`
    passes it without a look, so the check costs nothing on the pipeline's path."""

    __slots__ = ()


def check_scored_items(
    items: object, *, error: type[InvalidValueError] = SliceInputError
) -> Sequence[ScoredItem]:
    """Return ``items`` if it is a sequence of :class:`ScoredItem` with real-number scores
    (each within the float64 range).

    Every slicer's ``slice`` starts here, so a direct call with the wrong shape of input gets
    the same :class:`SliceInputError` from all of them (the placers pass their own ``error``,
    :class:`~pycupel.errors.PlacerInputError`). The common case (exact types
    throughout) is decided by three C-level passes; the per-element walk that names the
    culprit runs only when one of them finds something else.
    """
    if type(items) is CheckedScoredItems:
        return items
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise error("items", items, "must be a sequence of ScoredItem")
    if (
        _all_exactly(items, ScoredItem)
        and _all_exactly(list(map(_item, items)), ContextItem)
        and _real_scores(list(map(_score, items)))
    ):
        return items
    entry: object
    for index, entry in enumerate(items):
        if not isinstance(entry, ScoredItem):
            raise error(f"items[{index}]", entry, "must be a ScoredItem(item, score)")
        if not isinstance(entry.item, ContextItem):
            raise error(f"items[{index}].item", entry.item, "must be a ContextItem")
        score: object = entry.score
        if isinstance(score, bool) or not isinstance(score, numbers.Real):
            raise error(
                f"items[{index}].score",
                score,
                "must be a real number (int or float; text and Decimal are not converted)",
            )
        try:
            float(score)
        except OverflowError:  # an int (or fraction) beyond float64: no slicer can rank it
            raise error(f"items[{index}].score", score, SCORE_RANGE_RULE) from None
    return items


def scored_columns(
    items: object, *, error: type[InvalidValueError] = SliceInputError
) -> tuple[Sequence[ContextItem], Sequence[float]]:
    """The items and the scores of ``items`` (checked as :func:`check_scored_items` does,
    raising ``error``), as two columns.

    The usual input (exact types throughout) is split and checked in C-level passes.
    """
    if type(items) is CheckedScoredItems or (
        isinstance(items, list | tuple) and _all_exactly(items, ScoredItem)
    ):
        if not items:
            return (), ()
        # Two C-level passes: zip(*items) would make an iterator per pair, and on large
        # inputs the garbage collector's passes those allocations trigger cost more than
        # the split itself.
        context_items = list(map(_item, items))
        scores = list(map(_score, items))
        if type(items) is CheckedScoredItems or (
            _all_exactly(context_items, ContextItem) and _real_scores(scores)
        ):
            return context_items, scores
    checked = check_scored_items(items, error=error)
    return list(map(_item, checked)), list(map(_score, checked))


def check_inner_slicer(field: str, inner: object) -> Slicer:
    """Return ``inner`` if it is a slicer instance (the :class:`Slicer` protocol)."""
    if isinstance(inner, type):
        raise SlicerConfigError(
            field, inner, f"must be a slicer instance, not a class: write {inner.__name__}(...)"
        )
    if not isinstance(inner, Slicer):
        raise SlicerConfigError(
            field, inner, "must be a slicer (a budget_monotonic property and a slice method)"
        )
    return inner


def config_kind(kind: KindLike) -> ContextKind:
    """A kind named in slicer configuration; a bad name is a :class:`SlicerConfigError`."""
    try:
        return ContextKind.of(kind)
    except InvalidValueError as exc:
        raise SlicerConfigError("kind", kind, exc.rule) from exc


def negative_tokens_error(index: int, tokens: int) -> SliceInputError:
    """The error for an item with a negative token count at position ``index``."""
    return SliceInputError(
        f"items[{index}].item.tokens",
        tokens,
        "must be >= 0 (the pipeline excludes negative-token items before slicing)",
    )


TOKEN_TOTAL_LIMIT = 2**62
"""Token counts handed to a numpy slicer must sum below this, so that every running total
(a cumulative sum, a remaining budget) is exact in int64 instead of silently wrapping."""


def tokens_of(items: Sequence[ScoredItem]) -> IntArray:
    """Token counts of ``items`` as an int64 array (see :func:`token_column`)."""
    return token_column(list(map(_item_tokens, items)))


def token_array(items: Sequence[ContextItem]) -> IntArray:
    """Token counts of ``items`` as an int64 array, checked as :func:`token_column` checks.

    Read straight into the array; the exact check on Python integers runs only when the
    array's minimum and maximum cannot rule out a negative count or a total at the limit.
    """
    try:
        tokens = np.fromiter(map(_tokens, items), dtype=np.int64, count=len(items))
    except OverflowError:  # a count beyond int64: the exact check names it
        return token_column(list(map(_tokens, items)))
    if tokens.size and (
        int(tokens.min()) < 0 or int(tokens.max()) * tokens.size >= TOKEN_TOTAL_LIMIT
    ):
        return token_column(list(map(_tokens, items)))
    return tokens


def token_column(counts: list[int]) -> IntArray:
    """Token counts as an int64 array, checked on the exact Python integers first.

    Raises:
        SliceInputError: a count is negative, or the counts sum to :data:`TOKEN_TOTAL_LIMIT`
            (``2**62``) or more (int64 running totals would no longer be exact).
    """
    if not counts:
        return np.zeros(0, dtype=np.int64)
    check_token_counts(counts)
    return np.array(counts, dtype=np.int64)


def check_token_counts(counts: list[int]) -> None:
    """The checks of :func:`token_column`, for slicers that keep the counts as a list.

    Raises:
        SliceInputError: a count is negative, or the counts sum to :data:`TOKEN_TOTAL_LIMIT`
            or more (the same limit for every slicer, whatever its arithmetic).
    """
    if not counts:
        return
    if min(counts) < 0:
        index = next(position for position, count in enumerate(counts) if count < 0)
        raise negative_tokens_error(index, counts[index])
    total = sum(counts)
    if total >= TOKEN_TOTAL_LIMIT:
        raise SliceInputError(
            "items[].item.tokens",
            total,
            "must sum to less than 2**62 so that int64 token arithmetic is exact",
        )


def scores_of(items: Sequence[ScoredItem]) -> FloatArray:
    """Scores of ``items`` as a float64 array."""
    return np.fromiter(map(_score, items), dtype=np.float64, count=len(items))


def score_desc_key(score: float) -> float:
    """Sort key for "score descending": NaN ranks last (tied with -inf), never in between."""
    return -score if not math.isnan(score) else math.inf
