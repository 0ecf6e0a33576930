"""GreedySlice: fill the budget by value density (score per token), best first."""

from __future__ import annotations

import sys
from operator import truediv

import numpy as np

from pycupel.model import ContextBudget
from pycupel.slicers._common import ColumnSlicer, FloatArray, IntArray, check_token_counts

__all__ = ["GreedySlice"]

_MAX_FLOAT = sys.float_info.max


class GreedySlice(ColumnSlicer):
    """Select items in descending value density (``score / tokens``), skipping what does not fit.

    The specification's algorithm, exactly:

    * empty input or ``target_tokens <= 0`` selects nothing;
    * a zero-token item has density ``MAX_FLOAT`` (the largest finite double) and is always
      taken, whatever its score;
    * items are visited by density descending, original index ascending on ties (a stable
      sort), in a single pass: an item that does not fit the remaining budget is skipped, not
      deferred, and later smaller items may still be taken.

    The selection is returned in that visiting order. A NaN score gives a NaN density, which
    numpy's sort places after every number, so such an item is visited last.

    Fast path: densities and the stable sort run in numpy; the fill loop stops as soon as the
    remaining budget is smaller than every token count still ahead of it.
    """

    __slots__ = ()

    @property
    def budget_monotonic(self) -> bool:
        """True: the specification lets budget simulation use GreedySlice."""
        return True

    def select_positions(
        self, tokens: IntArray, scores: FloatArray, budget: ContextBudget
    ) -> list[int]:
        """Positions chosen within ``budget.target_tokens``, in visiting order."""
        target = budget.target_tokens
        if tokens.size == 0 or target <= 0:
            return []
        zero = tokens == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            density = scores / np.where(zero, 1, tokens)
        density[zero] = _MAX_FLOAT
        # Stable sort of the negated densities = density descending, index ascending on ties.
        order = np.argsort(-density, kind="stable")
        ordered_tokens = tokens[order]
        # The leading run whose running total fits is taken wholesale; the walk starts after it.
        cumulative = np.cumsum(ordered_tokens)
        lead = int(np.searchsorted(cumulative, target, side="right"))
        order_list: list[int] = order.tolist()
        chosen = order_list[:lead]
        if lead == len(order_list):
            return chosen
        remaining = target - (int(cumulative[lead - 1]) if lead else 0)
        # suffix_min[p]: the smallest token count at or after position p. Once the remaining
        # budget is below it, nothing further can fit and the walk can end early.
        suffix_min = np.minimum.accumulate(ordered_tokens[lead:][::-1])[::-1]
        token_list: list[int] = ordered_tokens[lead:].tolist()
        suffix_list: list[int] = suffix_min.tolist()
        append = chosen.append
        for offset, count in enumerate(token_list):
            if count <= remaining:
                append(order_list[lead + offset])
                remaining -= count
            elif remaining < suffix_list[offset]:
                break
        return chosen

    def select_positions_of_lists(
        self, tokens: list[int], scores: list[float], budget: ContextBudget
    ) -> list[int]:
        """:meth:`select_positions` in plain Python, for a few items (the same positions).

        The scores must be free of NaN (the pipeline refuses NaN scores before slicing): a
        Python sort, unlike numpy's, has no place for them.
        """
        target = budget.target_tokens
        if not tokens or target <= 0:
            return []
        check_token_counts(tokens)
        if 0 in tokens:
            # A zero-token item's density is MAX_FLOAT, as in the array form.
            densities = [
                score / count if count else _MAX_FLOAT
                for count, score in zip(tokens, scores, strict=True)
            ]
        else:
            densities = list(map(truediv, scores, tokens))
        chosen: list[int] = []
        append = chosen.append
        remaining = target
        # Python's sort stays stable with reverse=True: density descending, position
        # ascending on ties (the array form's stable sort of the negated densities).
        for position in sorted(range(len(densities)), key=densities.__getitem__, reverse=True):
            count = tokens[position]
            if count <= remaining:
                append(position)
                remaining -= count
        return chosen

    def __repr__(self) -> str:
        return "GreedySlice()"
