"""The integer problem behind :class:`~pycupel.slicers.OptimalSlice`, free of items and solvers.

A *unit* is one decision: a single item, or a whole all-or-none group of items. Units are
numbered in tie-break priority order (unit ``u`` comes before ``u + 1`` when their earliest
items do in the score-sorted input). Every quantity is an integer, so feasibility, shortfalls
and objective values are checked exactly here, whatever tolerances the solver used:

* ``values[u]``: the unit's quantized score (the objective maximises their sum);
* ``tie_weights[u]``: the unit's tie-break key (among selections of equal value, the one with
  the largest total key wins);
* ``limits @ y <= limit_bounds``: the hard constraints (row 0 is the token budget; then token
  caps, count caps, at-most-one-version rows). All coefficients are non-negative, so the empty
  selection is always feasible;
* ``requirements @ y >= levels``: the soft requirements (count requires, then token requires).
  A requirement's *shortfall* is ``max(0, level - achieved)``.

This module also holds :func:`constrained_greedy`, the fast heuristic that seeds the solver and
stands in for it when the solver finds nothing in time.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy import sparse

__all__ = [
    "BoolArray",
    "Evaluation",
    "IntArray",
    "SelectionProblem",
    "constrained_greedy",
    "dominance_pairs",
    "evaluate",
]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True, eq=False)
class SelectionProblem:
    """One instance: ``n`` units, their values and token counts, hard limits and requirements.

    ``limits`` and ``requirements`` are ``scipy.sparse`` CSR matrices of int64 with one column
    per unit. ``requirement_is_count[r]`` tells a count requirement (shortfall in items) from a
    token requirement (shortfall in tokens); the two are never added together.
    """

    values: IntArray
    tie_weights: IntArray
    tokens: IntArray
    limits: sparse.csr_array
    limit_bounds: IntArray
    requirements: sparse.csr_array
    levels: IntArray
    requirement_is_count: BoolArray
    limit_columns: list[list[tuple[int, int]]] = field(init=False, repr=False)
    """Per unit, the ``(row, coefficient)`` pairs of its column in ``limits`` (plain ints)."""
    requirement_columns: list[list[tuple[int, int]]] = field(init=False, repr=False)
    """Per unit, the ``(row, coefficient)`` pairs of its column in ``requirements``."""

    def __post_init__(self) -> None:
        # Cached once: the greedy and the dominance search walk columns unit by unit.
        object.__setattr__(self, "limit_columns", _columns(self.limits))
        object.__setattr__(self, "requirement_columns", _columns(self.requirements))

    @property
    def size(self) -> int:
        """Number of units."""
        return int(self.values.shape[0])

    @property
    def has_requirements(self) -> bool:
        """Whether any requirement asks for more than zero."""
        return bool(self.levels.size and int(self.levels.max()) > 0)


def build_problem(
    *,
    values: IntArray,
    tie_weights: IntArray,
    tokens: IntArray,
    limit_rows: Sequence[tuple[IntArray, int]],
    at_most_one: Sequence[IntArray],
    requirement_rows: Sequence[tuple[IntArray, int, bool]],
) -> SelectionProblem:
    """Assemble a problem from per-unit arrays.

    Args:
        values, tie_weights, tokens: one entry per unit.
        limit_rows: ``(coefficients per unit, bound)``; the first is the token budget.
        at_most_one: unit indices of each set of which at most one unit may be taken.
        requirement_rows: ``(coefficients per unit, level, is_count)``.
    """
    n = int(values.shape[0])
    dense = np.array([coef for coef, _ in limit_rows], dtype=np.int64).reshape(len(limit_rows), n)
    rows: list[sparse.csr_array] = [sparse.csr_array(dense)]
    if at_most_one:
        members = np.concatenate(list(at_most_one))
        row_ids = np.repeat(np.arange(len(at_most_one)), [m.shape[0] for m in at_most_one])
        ones = np.ones(members.shape[0], dtype=np.int64)
        shape = (len(at_most_one), n)
        rows.append(sparse.csr_array((ones, (row_ids, members)), shape=shape))
    bounds = [bound for _, bound in limit_rows] + [1] * len(at_most_one)
    needs = np.array([coef for coef, _, _ in requirement_rows], dtype=np.int64)
    needs = needs.reshape(len(requirement_rows), n)
    return SelectionProblem(
        values=values.astype(np.int64),
        tie_weights=tie_weights.astype(np.int64),
        tokens=tokens.astype(np.int64),
        limits=sparse.csr_array(sparse.vstack(rows, format="csr"), dtype=np.int64),
        limit_bounds=np.array(bounds, dtype=np.int64),
        requirements=sparse.csr_array(needs),
        levels=np.array([level for _, level, _ in requirement_rows], dtype=np.int64),
        requirement_is_count=np.array([c for _, _, c in requirement_rows], dtype=np.bool_),
    )


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Exact facts about one selection (a boolean vector over the units)."""

    feasible: bool
    """Every hard limit holds."""
    value: int
    """Sum of the selected units' values."""
    tie_key: int
    """Sum of the selected units' tie weights."""
    achieved: IntArray
    """Per requirement row: what the selection contributes (items or tokens)."""
    count_shortfall: int
    """Total items missing over all count requirements."""
    token_shortfall: int
    """Total tokens missing over all token requirements."""


def evaluate(problem: SelectionProblem, selected: BoolArray) -> Evaluation:
    """Check ``selected`` against every constraint in exact integer arithmetic."""
    y = selected.astype(np.int64)
    usage = problem.limits @ y
    feasible = bool(np.all(usage <= problem.limit_bounds))
    achieved = np.asarray(problem.requirements @ y, dtype=np.int64)
    missing = np.maximum(problem.levels - achieved, 0)
    is_count = problem.requirement_is_count
    return Evaluation(
        feasible=feasible,
        value=int(problem.values @ y),
        tie_key=int(problem.tie_weights @ y),
        achieved=achieved,
        count_shortfall=int(missing[is_count].sum()),
        token_shortfall=int(missing[~is_count].sum()),
    )


def constrained_greedy(
    problem: SelectionProblem, preference: npt.NDArray[np.float64] | None = None
) -> BoolArray:
    """A fast selection that honours every hard limit and tries to meet the requirements.

    Units are visited by value density (value per token, zero-token units first), unit order
    on ties — GreedySlice's rule, applied to units. With ``preference`` (one number per unit,
    e.g. a linear-relaxation solution) units are visited by preference descending first.

    First, for each requirement in order (count requirements, then token requirements), the
    first units in that order that contribute to it are taken while they fit, until it is met.
    Then every remaining unit that fits and whose value is not negative is taken. A unit
    *fits* when adding it keeps every hard limit (budget, caps, at most one version per item).
    Without requirements, extra limits or ``preference`` this is exactly GreedySlice, except
    that negative-value units are left out (they can only lower the score).
    """
    n = problem.size
    taken = np.zeros(n, dtype=np.bool_)
    if n == 0:
        return taken
    tokens = problem.tokens
    values = problem.values.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        density = np.where(tokens > 0, values / np.maximum(tokens, 1), np.inf)
    keys = [np.arange(n), -density]
    if preference is not None:
        keys.append(-np.round(preference, 9))  # rounded: LP noise must not reorder equals
    order: list[int] = np.lexsort(keys).tolist()

    columns = problem.limit_columns
    usage = [0] * problem.limit_bounds.shape[0]
    bounds: list[int] = problem.limit_bounds.tolist()

    def take_if_fits(unit: int) -> bool:
        entries = columns[unit]
        for row, coef in entries:
            if usage[row] + coef > bounds[row]:
                return False
        for row, coef in entries:
            usage[row] += coef
        taken[unit] = True
        return True

    requirement_columns = problem.requirement_columns
    levels: list[int] = problem.levels.tolist()
    achieved = [0] * len(levels)
    for row in _requirement_order(problem):
        if achieved[row] >= levels[row]:
            continue
        for unit in order:
            if taken[unit]:
                continue
            contribution = dict(requirement_columns[unit]).get(row, 0)
            if contribution > 0 and take_if_fits(unit):
                for other, coef in requirement_columns[unit]:
                    achieved[other] += coef
                if achieved[row] >= levels[row]:
                    break

    value_list: list[int] = problem.values.tolist()
    for unit in order:
        if not taken[unit] and value_list[unit] >= 0:
            take_if_fits(unit)
    return taken


def _requirement_order(problem: SelectionProblem) -> list[int]:
    """Requirement rows in the order the greedy serves them: counts first, then tokens."""
    is_count: list[bool] = problem.requirement_is_count.tolist()
    rows = range(len(is_count))
    return [r for r in rows if is_count[r]] + [r for r in rows if not is_count[r]]


def _columns(matrix: sparse.csr_array) -> list[list[tuple[int, int]]]:
    """Per unit, the ``(row, coefficient)`` pairs of its column (plain ints, for fast loops)."""
    csc = sparse.csc_array(matrix)
    indptr: list[int] = csc.indptr.tolist()
    rows: list[int] = csc.indices.tolist()
    data: list[int] = csc.data.tolist()
    return [
        sorted(zip(rows[indptr[u] : indptr[u + 1]], data[indptr[u] : indptr[u + 1]], strict=True))
        for u in range(matrix.shape[1])
    ]


def dominance_pairs(
    problem: SelectionProblem, units: IntArray, worth: npt.NDArray[np.float64]
) -> list[tuple[int, int]]:
    """Pairs ``(b, a)`` among ``units`` such that every best selection that takes ``b`` also
    takes ``a`` (so ``y[b] <= y[a]`` may be added to the model without losing any of them).

    ``a`` dominates ``b`` when ``worth`` (the objective, one entry per unit of ``units``) is
    larger for ``a`` and
    swapping ``b`` for ``a`` keeps every constraint: ``a`` uses no more of any hard limit and
    contributes no less to any requirement. A selection with ``b`` but not ``a`` could then be
    improved by the swap, so it is not a best one. Units are compared within classes of equal
    column shape, where coefficients equal to the unit's own token count are compared through
    the token counts. Each unit gets at most one pair (with the dominating unit of the next
    higher worth), which is enough to cut most of the symmetric branches of near-equal units.
    """
    limit_columns = problem.limit_columns
    requirement_columns = problem.requirement_columns
    tokens: list[int] = problem.tokens.tolist()
    shape_type = tuple[tuple[int, int | None], ...]
    classes: dict[tuple[shape_type, shape_type], list[int]] = {}
    for unit in units.tolist():
        t = tokens[unit]
        limit_shape = tuple((row, None if coef == t else coef) for row, coef in limit_columns[unit])
        need_shape = tuple(
            (row, None if coef == t else coef) for row, coef in requirement_columns[unit]
        )
        classes.setdefault((limit_shape, need_shape), []).append(unit)

    worth_of: dict[int, float] = dict(zip(units.tolist(), worth.tolist(), strict=True))
    pairs: list[tuple[int, int]] = []
    for (_, need_shape), members in classes.items():
        if len(members) < 2:
            continue
        # Token-valued requirement coefficients must not shrink: then only equal token counts
        # compare; otherwise fewer tokens is never worse.
        equal_tokens_only = any(coef is None for _, coef in need_shape)
        members.sort(key=lambda u: (tokens[u], -worth_of[u], u))
        seen_worth: list[float] = []
        seen_unit: list[int] = []
        previous_tokens: int | None = None
        for unit in members:
            if equal_tokens_only and tokens[unit] != previous_tokens:
                seen_worth, seen_unit = [], []
            previous_tokens = tokens[unit]
            position = bisect.bisect_right(seen_worth, worth_of[unit])
            if position < len(seen_worth):
                pairs.append((unit, seen_unit[position]))
            seen_worth.insert(position, worth_of[unit])
            seen_unit.insert(position, unit)
    return pairs
