"""The skip-and-continue packer: walk in score order, take what fits, stop after N misses.

Two faces share one walk (:func:`_walk`):

* :class:`PackerSlice`, a pipeline slicer over score-sorted :class:`ScoredItem` values;
* :func:`pack`, a plain function for memory engines without a pipeline: any records, a token
  counter and a score function. Tokens are counted lazily, record by record, so an early stop
  also saves the tokenizer calls for everything after it.

An item that does not fit is skipped and the walk continues, so smaller items further down
can still use the room a large one could not; ``max_consecutive_skips`` misses in a row end
the walk (the remaining items are assumed to be too large as well). ``None`` never stops.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Generic, TypeVar

from pycupel._checks import check_int
from pycupel.errors import SliceInputError, SlicerConfigError
from pycupel.model import ContextBudget, ScoredItem
from pycupel.slicers._common import Frozen, check_budget, check_scored_items
from pycupel.slicers.base import PackingStats, SliceResult

__all__ = ["PackResult", "PackerSlice", "pack"]

T = TypeVar("T")

_item_tokens: Callable[[ScoredItem], int] = attrgetter("item.tokens")


@dataclass(frozen=True, slots=True)
class PackResult(Generic[T]):
    """What :func:`pack` chose: the records taken (in walk order) and the walk's statistics."""

    selected: tuple[T, ...]
    stats: PackingStats


class PackerSlice(Frozen):
    """Pipeline slicer: the skip-and-continue packer over the score-sorted items.

    Items are visited in the order given (score descending). Each item that fits
    (``used + tokens <= target_tokens``) is taken; each that does not is skipped, and after
    ``max_consecutive_skips`` skips in a row the walk ends. Zero-token items always fit.
    The result carries :class:`~pycupel.slicers.PackingStats`; ``skipped_count`` counts every
    item not taken (whether skipped or never examined).

    Args:
        max_consecutive_skips: misses in a row that end the walk (>= 1), or ``None`` to walk
            every item.
    """

    __slots__ = ("_max_consecutive_skips",)

    _max_consecutive_skips: int | None

    def __init__(self, max_consecutive_skips: int | None = 3) -> None:
        limit = _check_max_skips(max_consecutive_skips)
        object.__setattr__(self, "_max_consecutive_skips", limit)

    @property
    def max_consecutive_skips(self) -> int | None:
        """Consecutive misses that end the walk; ``None`` = never stop early."""
        return self._max_consecutive_skips

    @property
    def budget_monotonic(self) -> bool:
        """True: the packer is classified with the greedy slicers for budget simulation."""
        return True

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        """Pack ``items`` (score order) into ``budget.target_tokens``."""
        target = check_budget(budget).target_tokens
        items = check_scored_items(items)
        if not items or target <= 0:
            return SliceResult((), packing=_nothing_taken(len(items)))
        walk = _walk(items, target, _item_tokens, self._max_consecutive_skips, _item_tokens_field)
        taken = walk.taken
        stats = PackingStats(
            selected_count=len(taken),
            total_tokens=walk.used,
            total_score=_total([scored.score for scored in taken]),
            skipped_count=len(items) - len(taken),
            budget_reached=walk.budget_reached,
            stopped_early=walk.stopped_early,
        )
        return SliceResult(tuple(scored.item for scored in taken), packing=stats)

    def __repr__(self) -> str:
        return f"PackerSlice(max_consecutive_skips={self._max_consecutive_skips})"


def pack(
    records: Iterable[T],
    token_budget: int,
    count_tokens: Callable[[T], int],
    *,
    score: Callable[[T], float],
    max_consecutive_skips: int | None = 3,
) -> PackResult[T]:
    """Pack score-sorted ``records`` into ``token_budget`` tokens, skipping what does not fit.

    Args:
        records: the candidates, already sorted by score descending.
        token_budget: tokens available (>= 0); 0 takes nothing and counts nothing.
        count_tokens: ``record -> int``, called once per examined record, lazily in walk
            order; must return a non-negative integer.
        score: ``record -> float``, called for the records taken, to sum ``total_score``.
        max_consecutive_skips: misses in a row that end the walk (>= 1), or ``None``.

    Returns:
        the records taken, in walk order, and :class:`~pycupel.slicers.PackingStats`
        (``total_score`` is the exactly rounded sum of the taken records' scores).
    """
    if isinstance(records, str | bytes) or not isinstance(records, Iterable):
        raise SlicerConfigError("records", records, "must be a sequence of records")
    pool: Sequence[T] = records if isinstance(records, Sequence) else list(records)
    check_int(SlicerConfigError, "token_budget", token_budget, minimum=0)
    if not callable(count_tokens):
        raise SlicerConfigError("count_tokens", count_tokens, "must be callable: record -> int")
    if not callable(score):
        raise SlicerConfigError("score", score, "must be callable: record -> float")
    max_skips = _check_max_skips(max_consecutive_skips)
    if not pool or token_budget == 0:
        return PackResult((), _nothing_taken(len(pool)))
    walk = _walk(pool, token_budget, count_tokens, max_skips, _counter_field)
    taken = walk.taken
    stats = PackingStats(
        selected_count=len(taken),
        total_tokens=walk.used,
        total_score=_total([_score_value(score, record) for record in taken]),
        skipped_count=len(pool) - len(taken),
        budget_reached=walk.budget_reached,
        stopped_early=walk.stopped_early,
    )
    return PackResult(tuple(taken), stats)


class _Walk(Generic[T]):
    """The outcome of one walk (local to a call)."""

    __slots__ = ("budget_reached", "stopped_early", "taken", "used")

    def __init__(
        self, taken: list[T], used: int, budget_reached: bool, stopped_early: bool
    ) -> None:
        self.taken = taken
        self.used = used
        self.budget_reached = budget_reached
        self.stopped_early = stopped_early


def _walk(
    records: Sequence[T],
    budget: int,
    tokens_of: Callable[[T], object],
    max_skips: int | None,
    field: Callable[[int], str],
) -> _Walk[T]:
    """The packing loop both faces share: take what fits, skip what not, stop on N misses."""
    taken: list[T] = []
    used = 0
    misses = 0
    budget_reached = False
    last = len(records) - 1
    for index, record in enumerate(records):
        raw = tokens_of(record)
        count = raw if type(raw) is int else _as_count(raw, field(index))
        if count < 0:
            raise SliceInputError(field(index), count, "must be a non-negative integer")
        if used + count <= budget:
            taken.append(record)
            used += count
            misses = 0
            continue
        budget_reached = True
        misses += 1
        if max_skips is not None and misses >= max_skips:
            return _Walk(taken, used, budget_reached, index < last)
    return _Walk(taken, used, budget_reached, False)


def _as_count(value: object, field: str) -> int:
    """Accept any integral number (numpy integers included) but bool; reject the rest."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise SliceInputError(field, value, "must be a non-negative integer")
    return int(value)


def _score_value(score: Callable[[T], float], record: T) -> float:
    value: object = score(record)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise SliceInputError("score(record)", value, "must return a number")
    return float(value)


def _total(scores: list[float]) -> float:
    """The exactly rounded sum (no rounding to a few digits); infinities sum as IEEE does."""
    try:
        return math.fsum(scores)
    except (ValueError, OverflowError):  # inf - inf, or a finite sum beyond float range
        return sum(scores, 0.0)


def _check_max_skips(value: object) -> int | None:
    if value is None:
        return None
    return check_int(SlicerConfigError, "max_consecutive_skips", value, minimum=1)


def _nothing_taken(count: int) -> PackingStats:
    return PackingStats(0, 0, 0.0, count, budget_reached=False, stopped_early=False)


def _item_tokens_field(index: int) -> str:
    return f"items[{index}].item.tokens"


def _counter_field(index: int) -> str:
    return f"count_tokens(records[{index}])"
