"""Stage 5, Slice: the slicer chooses from the sorted items within the effective budget.

The effective budget (:func:`~pycupel.model.compute_effective_budget`) leaves room for the
pinned items and the output reserve. A built-in columnar slicer
(:class:`~pycupel.slicers._common.ColumnSlicer` whose ``slice`` is not overridden) decides from
the token and score columns alone; any other slicer gets the (item, score) pairs and must return
each selected item once, all from its input.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import cast

from pycupel._identity import by_id, identity_key
from pycupel.errors import SlicerConfigError
from pycupel.model import ContextBudget, ContextItem, ScoredItem, effective_budget_of
from pycupel.pipeline.classify import check_no_repeats
from pycupel.scorers.base import FloatArray
from pycupel.slicers._common import ColumnSlicer, token_array
from pycupel.slicers.base import Slicer, SliceResult

__all__ = ["chosen_flags", "column_slicer", "slice_sorted"]

_TOKENS = attrgetter("tokens")
_COLUMN_SLICE: object = ColumnSlicer.slice
# What a built-in columnar slicer reports beside its positions: nothing (ColumnSlicer.slice
# returns a result with the selection alone).
_COLUMNAR_FACTS = SliceResult(())


def column_slicer(slicer: Slicer) -> ColumnSlicer | None:
    """``slicer`` when it decides from the columns alone and its ``slice`` is the columnar
    one (a subclass that overrides ``slice`` keeps its own), else None."""
    if isinstance(slicer, ColumnSlicer) and getattr(type(slicer), "slice", None) is _COLUMN_SLICE:
        return slicer
    return None


def slice_sorted(  # noqa: PLR0917 (positional: called once per run on the hot path)
    slicer: Slicer,
    columnar: ColumnSlicer | None,
    sorted_items: list[ContextItem],
    sorted_scores: list[float],
    sorted_array: FloatArray | None,
    scored: tuple[ScoredItem, ...] | None,
    budget: ContextBudget,
    pinned_tokens: int,
    candidates: Sequence[ContextItem],
    plain: bool,
) -> tuple[SliceResult, list[int], int, int]:
    """Run the slicer on the sorted items.

    ``columnar`` is :func:`column_slicer` of ``slicer``; ``scored`` the sorted (item, score)
    pairs, needed only when it is None; ``sorted_array`` the sorted scores as an array, None
    for a small batch (the columns then stay lists). ``candidates`` and ``plain`` come from
    Classify; ``budget`` and ``pinned_tokens`` are the run's, already valid.

    Returns ``(facts, positions, selected_tokens, effective_target)``: ``facts`` is the
    slicer's result for what it reports beside the selection (shortfalls, cap exclusions,
    statistics; a built-in columnar slicer reports none); ``positions`` are where the
    selected items sit in the sorted list, in the slicer's output order (the order the
    specification's Place stage merges them in).

    Raises:
        SlicerConfigError: the slicer returned something other than a selection of its input.
        PipelineConfigError: the run was given the same item object twice.
    """
    effective = effective_budget_of(budget, pinned_tokens)
    if columnar is not None:
        # A built-in slicer's positions are distinct positions of its input by construction:
        # nothing to check.
        positions: list[int] = []
        selected_tokens = 0
        if sorted_items and effective.target_tokens > 0:
            if sorted_array is None:
                # A small batch: its columns stay lists.
                counts = list(map(_TOKENS, sorted_items))
                positions = columnar.select_positions_of_lists(counts, sorted_scores, effective)
                selected_tokens = sum(map(counts.__getitem__, positions))
            else:
                tokens = token_array(sorted_items)
                positions = columnar.select_positions(tokens, sorted_array, effective)
                selected_tokens = int(tokens[positions].sum())
        return _COLUMNAR_FACTS, positions, selected_tokens, effective.target_tokens
    assert scored is not None
    result = _custom_slice(slicer, scored, effective)
    selected = result.selected
    keys = identity_key(selected) if plain else by_id
    selected_keys = set(keys(selected))
    if len(selected_keys) != len(selected):
        check_no_repeats(candidates)
        raise SlicerConfigError(
            f"{type(slicer).__name__}.slice",
            f"{len(selected)} items, {len(selected_keys)} distinct",
            "must return each selected item once",
        )
    # Where each selected item sits in the sorted list, found by identity in C (no Python
    # frame per item).
    position_of = dict(zip(keys(sorted_items), range(len(sorted_items)), strict=True))
    found = list(map(position_of.get, keys(selected)))
    if None in found:
        check_no_repeats(candidates)
        raise SlicerConfigError(
            f"{type(slicer).__name__}.slice",
            f"{found.count(None)} items not among its input",
            "must return only items it was given",
        )
    positions = cast("list[int]", found)
    return result, positions, sum(map(_TOKENS, selected)), effective.target_tokens


def chosen_flags(positions: list[int], count: int) -> list[bool]:
    """For each of ``count`` sorted entries, whether it is at one of ``positions``."""
    flags = [False] * count
    for position in positions:
        flags[position] = True
    return flags


def _custom_slice(
    slicer: Slicer, items: tuple[ScoredItem, ...], budget: ContextBudget
) -> SliceResult:
    result: object = slicer.slice(items, budget)
    if isinstance(result, SliceResult):
        return result
    name = f"{type(slicer).__name__}.slice"
    if isinstance(result, list | tuple):
        for value in result:
            if not isinstance(value, ContextItem):
                raise SlicerConfigError(name, value, "must return ContextItem instances")
        return SliceResult.of(result)
    raise SlicerConfigError(name, result, "must return a SliceResult or a sequence of items")
