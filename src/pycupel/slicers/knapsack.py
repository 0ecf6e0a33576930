"""KnapsackSlice: the 0/1 knapsack dynamic programme of the specification, run in numpy.

The specification's DP keeps one value row ``dp[0..C]`` and a boolean keep table
``keep[i][w]``; for each candidate ``i`` (weight ``dw``, value ``dv``) it walks ``w`` from ``C``
down to ``dw`` and sets ``dp[w] = dp[w - dw] + dv`` and ``keep[i][w]`` when that is *strictly*
better. Walking downwards means every candidate reads the previous candidate's row, so the
whole walk is one vector operation: ``cand = dp[:L] + dv`` (computed before anything is
written), ``keep = cand > dp[dw:]``, ``dp[dw:] = max(dp[dw:], cand)``.

Reach. ``dp`` is non-decreasing in ``w`` and, after the candidates so far, constant beyond
their total discretised weight ``R`` (the *reach*, capped at ``C``): every capacity past ``R``
already holds all of them. Only ``dp[0..R]`` is stored, so a budget larger than the items
need costs nothing. For candidate ``i`` the new reach is ``R' = min(C, R + dw)``; capacities
past ``R'`` would all keep the item (``T + dv > T`` for ``dv > 0``), so a keep row stores just
the bits for ``w`` in ``[dw, R']``: below ``dw`` the bit is false, above ``R'`` it is true.
Candidates that can never be kept (``dw > C`` or ``dv == 0``: with ``dp`` non-decreasing,
``dp[w - dw] + 0 > dp[w]`` never holds) get no row at all.

Keep rows are bit-packed with :func:`numpy.packbits`, one bit per capacity cell.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from pycupel._checks import check_int
from pycupel._numpy import FloatArray, IntArray
from pycupel.errors import SliceInputError, SlicerConfigError, TableTooLargeError
from pycupel.model import ContextBudget
from pycupel.slicers._common import ColumnSlicer, Frozen

__all__ = ["DEFAULT_MAX_TABLE_BYTES", "SCORE_SCALE", "KnapsackSlice"]

SCORE_SCALE = 10_000
"""Scores become integer DP values as ``max(0, floor(score * SCORE_SCALE))`` (the spec's 10000)."""

DEFAULT_MAX_TABLE_BYTES = 256 * 1024 * 1024
"""Default cap on the DP's memory (keep table plus working rows): 256 MiB."""

# Sums of DP values must stay exactly representable in int64 (and in float64 before the cast).
_VALUE_TOTAL_LIMIT = 2**62
_INT32_LIMIT = 2**31 - 1
_DENSE_TABLE_BYTES = 16 * 1024 * 1024
"""Keep tables up to this size hold one byte per bit (no packing per candidate)."""


class KnapsackSlice(Frozen, ColumnSlicer):
    """Select the subset with the largest total scaled score that fits the budget.

    Exactly the specification's DP:

    * zero-token items are taken out first and always included;
    * value = ``max(0, floor(score * 10000))``; weight = ``ceil(tokens / bucket_size)``;
      capacity = ``floor(target_tokens / bucket_size)`` (capacity 0 selects only the
      zero-token items);
    * updates require a *strict* improvement, and the solution is reconstructed from the last
      candidate to the first;
    * the result lists the zero-token items, then the DP's picks in reconstruction order.

    Scores the integer scaling cannot represent are decided here, since the specification is
    silent: a NaN score is worth 0 (like a negative score: ``max(0, NaN)`` taken as 0), and
    ``+inf`` raises :class:`~pycupel.errors.SliceInputError`, as does a candidate set whose
    scaled values sum to ``2**62`` or more (scores are meant to lie in [0, 1]).

    Args:
        bucket_size: tokens per capacity cell (> 0). Smaller is more exact and costs more.
        max_table_bytes: refuse with :class:`~pycupel.errors.TableTooLargeError` when the
            bit-packed keep table plus the DP's working rows would exceed this many bytes.
    """

    __slots__ = ("_bucket_size", "_max_table_bytes")

    _bucket_size: int
    _max_table_bytes: int

    def __init__(
        self, bucket_size: int = 100, *, max_table_bytes: int = DEFAULT_MAX_TABLE_BYTES
    ) -> None:
        check_int(SlicerConfigError, "bucket_size", bucket_size, minimum=1)
        check_int(SlicerConfigError, "max_table_bytes", max_table_bytes, minimum=1)
        object.__setattr__(self, "_bucket_size", bucket_size)
        object.__setattr__(self, "_max_table_bytes", max_table_bytes)

    @property
    def bucket_size(self) -> int:
        """Tokens per discretised capacity cell."""
        return self._bucket_size

    @property
    def max_table_bytes(self) -> int:
        """Memory cap for the DP (keep table plus working rows), in bytes."""
        return self._max_table_bytes

    @property
    def budget_monotonic(self) -> bool:
        """True: the specification lets budget simulation use KnapsackSlice."""
        return True

    def select_positions(
        self, tokens: IntArray, scores: FloatArray, budget: ContextBudget
    ) -> list[int]:
        """Zero-token positions, then the DP's picks in reconstruction order."""
        target = budget.target_tokens
        if tokens.size == 0 or target <= 0:
            return []
        zero_positions: list[int] = np.flatnonzero(tokens == 0).tolist()
        candidate_index = np.flatnonzero(tokens > 0)
        capacity = target // self._bucket_size
        if candidate_index.size == 0 or capacity == 0:
            return zero_positions

        values = _scaled_values(scores, candidate_index)
        bucket = self._bucket_size
        weights = (tokens[candidate_index] + (bucket - 1)) // bucket
        picks = self._solve(weights.tolist(), values, capacity)
        index_list: list[int] = candidate_index.tolist()
        return zero_positions + [index_list[k] for k in picks]

    def _solve(self, weights: list[int], values: npt.NDArray[np.int64], capacity: int) -> list[int]:
        """Run the DP; return the chosen candidate positions in reconstruction order."""
        value_list: list[int] = values.tolist()
        # Candidates that can ever be kept, with the reach after each of them.
        active: list[int] = []
        reaches: list[int] = []
        reach = 0
        row_bits = 0
        row_bytes = 0
        for k, (dw, dv) in enumerate(zip(weights, value_list, strict=True)):
            if dw > capacity or dv == 0:
                continue
            reach = min(capacity, reach + dw)
            active.append(k)
            reaches.append(reach)
            span = reach - dw + 1
            row_bits += span
            row_bytes += (span + 7) // 8
        if not active:
            return []

        total_value = sum(value_list[k] for k in active)
        dtype = np.int32 if total_value <= _INT32_LIMIT else np.int64
        cells = reach + 1
        itemsize = np.dtype(dtype).itemsize
        working_bytes = cells * (2 * itemsize + 1)
        table_bytes = row_bytes + working_bytes
        if table_bytes > self._max_table_bytes:
            raise TableTooLargeError(len(weights), capacity, table_bytes, self._max_table_bytes)
        # A small table keeps one byte per bit, written in place by the comparison (no packing
        # call per candidate); a large one is bit-packed row by row.
        dense = row_bits <= _DENSE_TABLE_BYTES and row_bits + working_bytes <= self._max_table_bytes

        dp = np.zeros(cells, dtype=dtype)
        candidate = np.empty(cells, dtype=dtype)
        improved = np.empty(cells, dtype=np.bool_)
        flat = np.empty(row_bits if dense else 0, dtype=np.bool_)
        rows: list[npt.NDArray[np.uint8]] = []
        starts: list[int] = []
        start = 0
        reach = 0
        for k, new_reach in zip(active, reaches, strict=True):
            dw = weights[k]
            if new_reach > reach:
                # Make the implicit constant tail explicit up to the new reach.
                dp[reach + 1 : new_reach + 1] = dp[reach]
            span = new_reach - dw + 1
            cand = candidate[:span]
            upper = dp[dw : new_reach + 1]
            np.add(dp[:span], value_list[k], out=cand)  # reads the previous row only
            if dense:
                np.greater(cand, upper, out=flat[start : start + span])
                starts.append(start)
                start += span
            else:
                keep = improved[:span]
                np.greater(cand, upper, out=keep)
                rows.append(np.packbits(keep, bitorder="little"))
            np.maximum(upper, cand, out=upper)
            reach = new_reach

        picks: list[int] = []
        remaining = capacity
        for j in range(len(active) - 1, -1, -1):
            k = active[j]
            dw = weights[k]
            if remaining < dw:
                continue
            offset = remaining - dw
            if remaining > reaches[j]:
                kept = True
            elif dense:
                kept = bool(flat[starts[j] + offset])
            else:
                kept = bool((int(rows[j][offset >> 3]) >> (offset & 7)) & 1)
            if kept:
                picks.append(k)
                remaining -= dw
        return picks

    def __repr__(self) -> str:
        if self._max_table_bytes == DEFAULT_MAX_TABLE_BYTES:
            return f"KnapsackSlice(bucket_size={self._bucket_size})"
        return (
            f"KnapsackSlice(bucket_size={self._bucket_size}, "
            f"max_table_bytes={self._max_table_bytes})"
        )


def _scaled_values(
    scores: npt.NDArray[np.float64], index: npt.NDArray[np.intp]
) -> npt.NDArray[np.int64]:
    """``max(0, floor(score * 10000))`` for the candidates; NaN -> 0, +inf rejected."""
    candidate_scores = scores[index]
    if np.isposinf(candidate_scores).any():
        position = int(index[np.flatnonzero(np.isposinf(candidate_scores))[0]])
        raise SliceInputError(
            f"items[{position}].score",
            math.inf,
            "must be finite for KnapsackSlice (scores are scaled to integers)",
        )
    scaled = np.floor(candidate_scores * SCORE_SCALE)
    scaled = np.where(scaled > 0, scaled, 0.0)  # also maps NaN to 0
    total = float(scaled.sum())
    if total >= _VALUE_TOTAL_LIMIT:
        raise SliceInputError(
            "items[*].score",
            total,
            f"the scaled scores (floor(score * {SCORE_SCALE})) of the knapsack candidates must "
            f"sum to less than 2**62; scale scores to [0, 1]",
        )
    return scaled.astype(np.int64)
