"""GreedySlice: fill the budget by value density (score per token), best first."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np

from pycupel.model import ContextBudget, ScoredItem
from pycupel.slicers._common import check_budget, scores_of, tokens_of
from pycupel.slicers.base import SliceResult

__all__ = ["GreedySlice"]

_MAX_FLOAT = sys.float_info.max


class GreedySlice:
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

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        """Select from ``items`` (score-sorted) within ``budget.target_tokens``."""
        target = check_budget(budget).target_tokens
        if not items or target <= 0:
            return SliceResult(())
        tokens = tokens_of(items)
        scores = scores_of(items)
        zero = tokens == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            density = scores / np.where(zero, 1, tokens)
        density[zero] = _MAX_FLOAT
        # Stable sort of the negated densities = density descending, index ascending on ties.
        order = np.argsort(-density, kind="stable")
        ordered_tokens = tokens[order]
        # suffix_min[p]: the smallest token count at or after position p. Once the remaining
        # budget is below it, nothing further can fit and the walk can end early.
        suffix_min = np.minimum.accumulate(ordered_tokens[::-1])[::-1]

        # The leading run whose running total fits is taken wholesale; the walk starts after it.
        cumulative = np.cumsum(ordered_tokens)
        lead = int(np.searchsorted(cumulative, target, side="right"))
        order_list: list[int] = order.tolist()
        chosen = [items[index].item for index in order_list[:lead]]
        remaining = target - (int(cumulative[lead - 1]) if lead else 0)
        token_list: list[int] = ordered_tokens.tolist()
        suffix_list: list[int] = suffix_min.tolist()
        append = chosen.append
        for position in range(lead, len(token_list)):
            count = token_list[position]
            if count <= remaining:
                append(items[order_list[position]].item)
                remaining -= count
            elif remaining < suffix_list[position]:
                break
        return SliceResult(tuple(chosen))

    def __repr__(self) -> str:
        return "GreedySlice()"
