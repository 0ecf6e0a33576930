"""GreedySlice: fill the budget by value density (score per token), best first."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from operator import truediv
from typing import TYPE_CHECKING

from pycupel._numpy import FloatArray, IntArray
from pycupel._order import stable_argsort
from pycupel.model import ContextBudget
from pycupel.slicers._common import ColumnSlicer, check_token_counts

if TYPE_CHECKING:
    import numpy as np
else:
    from pycupel._numpy import numpy as np

__all__ = ["GreedySlice", "fill_lists"]

_MAX_FLOAT = sys.float_info.max
_ROUNDS = 16
"""Rounds of whole runs the array fill takes before it walks the rest item by item."""


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

    Fast path: densities, the stable sort and the fill run in numpy: the fill takes whole
    runs of items whose running total fits, dropping at each round the items larger than
    the remaining budget (they can never fit again).
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
        order = stable_argsort(-density)
        # The visit, in rounds of whole runs: of the items still ahead, only those no larger
        # than the remaining budget can ever fit again (the budget only shrinks), so the others
        # are dropped; the leading run of the rest whose running total fits is taken
        # wholesale (each of its items fits when visited); the item after it does not fit and
        # is skipped. The same items as visiting one by one, in the same order.
        ahead = order
        ahead_tokens = tokens[order]
        remaining = target
        taken: list[IntArray] = []
        for _ in range(_ROUNDS):
            fits = ahead_tokens <= remaining
            if not fits.all():
                ahead, ahead_tokens = ahead[fits], ahead_tokens[fits]
            if not ahead_tokens.size:
                break
            cumulative = np.cumsum(ahead_tokens)
            run = int(np.searchsorted(cumulative, remaining, side="right"))
            taken.append(ahead[:run])
            remaining -= int(cumulative[run - 1])
            ahead, ahead_tokens = ahead[run + 1 :], ahead_tokens[run + 1 :]
        chosen: list[int] = np.concatenate(taken).tolist() if taken else []
        if ahead_tokens.size:
            # Many rounds (token counts that keep just missing): finish one item at a time,
            # so the work stays linear whatever the counts.
            append = chosen.append
            for position, count in zip(ahead.tolist(), ahead_tokens.tolist(), strict=True):
                if count <= remaining:
                    append(position)
                    remaining -= count
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
        return fill_lists(range(len(tokens)), tokens, scores, target)[0]

    def __repr__(self) -> str:
        return "GreedySlice()"


def fill_lists(
    order: Iterable[int] | None, tokens: list[int], scores: list[float], target: int
) -> tuple[list[int], int]:
    """The greedy fill on lists: ``(chosen positions in visiting order, their tokens)``.

    ``order`` lists the candidate positions of ``tokens`` and ``scores`` score-sorted (best
    first); their densities (``score / tokens``, MAX_FLOAT for a zero count) are visited in
    a stable descending sort of ``order``, so equal densities keep that order. None stands
    for the score order of all positions (descending, index ascending on ties), built only
    when two densities tie: distinct densities have one descending order whatever the order
    they start in. The counts must have passed
    :func:`~pycupel.slicers._common.check_token_counts` and the scores be free of NaN (a
    Python sort, unlike numpy's, has no place for them).
    """
    if 0 in tokens:
        densities = [
            score / count if count else _MAX_FLOAT
            for count, score in zip(tokens, scores, strict=True)
        ]
    else:
        densities = list(map(truediv, scores, tokens))
    if order is None:
        order = range(len(densities))
        if len(set(densities)) != len(densities):
            order = sorted(order, key=scores.__getitem__, reverse=True)
    chosen: list[int] = []
    append = chosen.append
    remaining = target
    # Python's sort stays stable with reverse=True: density descending, ``order`` on ties
    # (the array form's stable sort of the negated densities).
    for position in sorted(order, key=densities.__getitem__, reverse=True):
        count = tokens[position]
        if count <= remaining:
            append(position)
            remaining -= count
    return chosen, target - remaining
