"""Stage 6, Place: merge pinned and sliced items, apply the overflow strategy, then order them.

Pinned items (score 1.0) then the sliced items in the slicer's output order (with their scores)
are merged, as the specification's pseudocode does. If they exceed the *original*
``target_tokens`` (or the hard ceiling ``max_tokens - output_reserve`` when the target lies
above it: see :func:`overflow_limit`) the overflow strategy applies: THROW raises
:class:`~pycupel.errors.BudgetOverflowError`; TRUNCATE drops non-pinned items that no longer
fit, walking from the front; PROCEED keeps them all and reports an
:class:`~pycupel.diagnostics.OverflowEvent`. The placer then orders the result.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter

from pycupel._identity import same_by_identity
from pycupel.diagnostics.events import OverflowEvent
from pycupel.errors import BudgetOverflowError, PlacerConfigError
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy, ScoredItem
from pycupel.pipeline.sort import scored_items
from pycupel.placers import ColumnPlacer, Placer
from pycupel.slicers._common import CheckedScoredItems

__all__ = ["PINNED_SCORE", "column_placer", "overflow_limit", "place", "truncate"]

PINNED_SCORE = 1.0
"""The score a pinned item carries into Place (and into the report)."""

_ITEM = itemgetter(0)
_SCORE = itemgetter(1)
_COLUMN_PLACE: object = ColumnPlacer.place
_tuple_new = tuple.__new__


def overflow_limit(budget: ContextBudget) -> int:
    """The most tokens the window may hold before the overflow strategy applies.

    ``target_tokens``, unless it lies above the hard ceiling ``max_tokens - output_reserve``
    (the budget allows that): then the ceiling, which the selection must never exceed (the
    pinned items alone cannot: Classify refuses them). Only count requirements, committed
    whatever the budget, and custom slicers can reach past the effective budget to it.
    """
    ceiling = budget.max_tokens - budget.output_reserve
    target = budget.target_tokens
    return target if target <= ceiling else ceiling


def column_placer(placer: Placer) -> ColumnPlacer | None:
    """``placer`` when it is a built-in columnar placer whose ``place`` is not overridden."""
    if isinstance(placer, ColumnPlacer) and getattr(type(placer), "place", None) is _COLUMN_PLACE:
        return placer
    return None


def place(  # noqa: PLR0917 (positional: called once per run on the hot path)
    placer: Placer,
    columnar: ColumnPlacer | None,
    strategy: OverflowStrategy,
    pinned: list[ContextItem],
    chosen_items: list[ContextItem],
    chosen_scores: list[float],
    scored: tuple[ScoredItem, ...] | None,
    positions: list[int],
    merged_tokens: int,
    budget: ContextBudget,
) -> tuple[
    tuple[ContextItem, ...],
    int,
    OverflowEvent | None,
    list[tuple[ScoredItem, int]],
    list[ContextItem],
    list[float],
    int,
]:
    """Merge, apply the overflow strategy and order the context window.

    ``columnar`` is :func:`column_placer` of ``placer``.
    ``chosen_items``/``chosen_scores`` are the slicer's selection in its output order, at
    ``positions`` of the sorted (item, score) pairs ``scored`` (when those were built);
    ``merged_tokens`` is the pinned plus the selected tokens.

    Returns ``(placed, total_tokens, overflow, truncated, merged_items, merged_scores,
    merged_count)``: ``truncated`` holds each entry TRUNCATE dropped with the tokens kept when
    it was dropped; ``merged_items``/``merged_scores`` are the (possibly truncated) merge,
    pinned first; ``merged_count`` counts the merge before truncation.

    Raises:
        BudgetOverflowError: the merge exceeds ``target_tokens`` under THROW.
        PlacerConfigError: the placer did not return exactly the items it was given.
    """
    target = overflow_limit(budget)
    overflow: OverflowEvent | None = None
    truncated: list[tuple[ScoredItem, int]] = []
    if merged_tokens <= target and columnar is not None:
        # Nothing to truncate: a built-in placer orders the plain lists, and its positions
        # are a permutation by construction.
        merged_items = pinned + chosen_items
        merged_scores = [PINNED_SCORE] * len(pinned) + chosen_scores
        order = columnar.order_positions(merged_items, merged_scores)
        placed = tuple(map(merged_items.__getitem__, order))
        return placed, merged_tokens, None, truncated, merged_items, merged_scores, len(placed)
    merged = [_tuple_new(ScoredItem, (item, PINNED_SCORE)) for item in pinned]
    if scored is not None:
        merged.extend(map(scored.__getitem__, positions))
    else:
        merged.extend(scored_items(chosen_items, chosen_scores))
    if merged_tokens > target:
        if strategy is OverflowStrategy.THROW:
            if target < budget.target_tokens:
                raise BudgetOverflowError(
                    merged_tokens, budget.target_tokens, ceiling_tokens=target
                )
            raise BudgetOverflowError(merged_tokens, target)
        if strategy is OverflowStrategy.TRUNCATE:
            merged, truncated = truncate(merged, target)
        else:
            overflow = OverflowEvent(
                merged_tokens - target, tuple(entry.item for entry in merged), budget
            )
    merged_count = len(merged) + len(truncated)
    # The pipeline's own pairs: a built-in placer's input check passes them without a look.
    to_place = CheckedScoredItems(merged)
    placed = _checked_place(placer, to_place)
    # The placer only reorders: the total is that of the (possibly truncated) merge.
    total_tokens = merged_tokens - sum(entry.item.tokens for entry, _ in truncated)
    return (
        placed,
        total_tokens,
        overflow,
        truncated,
        list(map(_ITEM, to_place)),
        list(map(_SCORE, to_place)),
        merged_count,
    )


def truncate(
    merged: list[ScoredItem], target: int
) -> tuple[list[ScoredItem], list[tuple[ScoredItem, int]]]:
    """The specification's TRUNCATE walk: pinned items always stay; others stay while they fit.

    Returns the kept entries and, for each dropped one, the tokens kept when it was dropped.
    """
    kept: list[ScoredItem] = []
    dropped: list[tuple[ScoredItem, int]] = []
    current = 0
    for entry in merged:
        tokens = entry.item.tokens
        if entry.item.pinned or current + tokens <= target:
            kept.append(entry)
            current += tokens
        else:
            dropped.append((entry, current))
    return kept, dropped


def _checked_place(placer: Placer, merged: tuple[ScoredItem, ...]) -> tuple[ContextItem, ...]:
    returned: object = placer.place(merged)
    if isinstance(returned, str | bytes) or not isinstance(returned, Iterable):
        raise PlacerConfigError(
            f"{type(placer).__name__}.place",
            returned,
            "must return the items it was given, reordered (a sequence of ContextItem)",
        )
    placed = tuple(returned)
    if len(placed) != len(merged) or not same_by_identity(placed, list(map(_ITEM, merged))):
        raise PlacerConfigError(
            f"{type(placer).__name__}.place",
            f"{len(placed)} items for {len(merged)} given",
            "must return exactly the items it was given, each once, reordered",
        )
    return placed
