"""Exact selection by mixed-integer programming (SciPy's ``milp``, which runs HiGHS).

The model (the integer data is described in :mod:`pycupel.slicers._selection_problem`):

* one binary ``y[u]`` per unit (an item, or an all-or-none group of items);
* hard rows ``limits @ y <= limit_bounds`` (token budget, token caps, count caps, at most one
  version of an item);
* requirement rows ``requirements @ y >= levels`` (count requires, token requires);
* objective: maximise ``values @ y`` (quantized scores, integers).

**Least shortfall first.** When the requirements cannot all be met they are relaxed as little
as possible, in this order: first the total number of missing items over all count
requirements is minimised, then the total number of missing tokens over all token
requirements, then the score is maximised with both totals held at their minima. For this each
requirement row gets a continuous slack ``s[r] in [0, level[r]]``
(``requirements @ y + s >= levels``) and the stage's totals become rows ``sum(s) <= limit``.
When the greedy start already meets every requirement, none of this is needed.

**Ties.** Among the selections with the best score (and least shortfall) the one with the
largest *tie key* wins (``tie_weights @ y``; the caller sets each item's weight to ``N - i`` for
its sorted position ``i``). Both levels go into one integer objective,
``c[u] = values[u] * K + tie_weights[u]`` over the undecided units, with
``K = 2 * sum(tie_weights) + 1``. Why this cannot change the best score: values are integers,
so a selection worth less than the best is worth at least one unit less, which costs ``K`` in
``c``, more than any tie key can make up (``0 <= key <= sum(tie_weights) < K``). The factor 2
leaves the same margin again for the solver's tolerance, so the best *score* stays exact even
if HiGHS settles the key only to within its tolerance. Units fixed beforehand (see below) are
the same in every optimal selection, so they do not take part in the comparison. Should
``K * sum(|values|)`` reach 2**52 (thousands of undecided units), the key is dropped rather
than risk the score, and the message says so.

**Speed.** The linear relaxation gives a *certified* upper bound by weak duality (the dual
values are clipped to their valid signs and the bound is recomputed from them, so it does not
rest on the LP solver's tolerances). Rounding the LP solution greedily gives a strong
incumbent. A unit whose reduced cost shows that flipping it away from its LP value would bring
any selection below the incumbent's score cannot be in an optimal selection and is fixed, so
the integer model keeps only the units whose choice is genuinely in doubt. Among those,
*dominance* rows ``y[b] <= y[a]`` cut symmetric branches: when ``a`` is worth more than ``b``
in the combined objective, uses no more of any limit and gives no less to any requirement, a
best selection never takes ``b`` without ``a``. Neither step removes a best selection, so
neither affects the tie-break.

Why not the stricter rule "at the first item where two selections differ, the one that takes
it wins"? As a linear objective it needs weights ``2**-i``, far beyond any solver's precision
past a few dozen items; enforcing it with extra models (find a best selection that is
lexicographically greater, repeat) was exact but took seconds to minutes on inputs with many
equal scores, where ties matter most.

**Tolerances.** Values are integers, so a selection is optimal when no feasible selection is
worth one unit more. HiGHS runs with ``mip_rel_gap = 0`` and proves optimality up to its
floating-point tolerances (primal feasibility 1e-7, integrality 1e-6; the quantization keeps
one unit of value far above them). Every solution it returns is rounded and re-checked here in
exact integer arithmetic; one that fails the check is discarded.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import numpy.typing as npt
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from pycupel.slicers._selection_problem import (
    BoolArray,
    Evaluation,
    IntArray,
    SelectionProblem,
    constrained_greedy,
    dominance_pairs,
    evaluate,
)

__all__ = ["STATUS_FALLBACK", "STATUS_OPTIMAL", "STATUS_TIME_LIMIT", "SolveOutcome", "solve"]

FloatArray = npt.NDArray[np.float64]

STATUS_OPTIMAL = "optimal"
STATUS_TIME_LIMIT = "time_limit"
STATUS_FALLBACK = "fallback_greedy"

_MIN_STAGE_SECONDS = 1e-3
"""The smallest time slice worth handing to HiGHS; with less left, a stage counts as timed out."""

_MILP_OPTIONS = MappingProxyType({"mip_rel_gap": 0.0})

_LP_MIN_UNITS = 48
"""Below this many units HiGHS solves the model faster than the LP bound could shrink it."""

_DOMINANCE_MAX_UNITS = 5000
"""Above this many undecided units the dominance search costs more than it can save."""

_EXACT_FLOAT_LIMIT = 2**52
"""Objective magnitudes must stay below this for every integer to be a float64."""


@dataclass(frozen=True, slots=True)
class SolveOutcome:
    """The selection and how it was reached."""

    selected: BoolArray
    evaluation: Evaluation
    status: str
    """``optimal``, ``time_limit`` or ``fallback_greedy``."""
    bound: float | None
    """Proven upper bound on the objective (quantized units), when one is known."""
    message: str


def solve(
    problem: SelectionProblem,
    *,
    time_limit: float,
    stop_when_unmet: bool = False,
) -> SolveOutcome:
    """Select the best units of ``problem`` within about ``time_limit`` seconds.

    With ``stop_when_unmet`` the solve ends as soon as the least shortfall is known to be
    positive (the caller is about to raise, so the score no longer matters).
    """
    run = _Run(problem, _Clock(time_limit))
    run.least_shortfall()
    if stop_when_unmet and (run.count_limit or run.token_limit):
        return run.outcome(bound=None)
    bound = run.best_selection()
    return run.outcome(bound=bound)


# --------------------------------------------------------------------------- the stages


class _Clock:
    """Seconds left until the deadline of one solve."""

    __slots__ = ("_deadline",)

    def __init__(self, seconds: float) -> None:
        self._deadline = time.perf_counter() + seconds

    def remaining(self) -> float:
        return self._deadline - time.perf_counter()


class _Run:
    """The state of one solve: the incumbent selection, the shortfall limits, the notes."""

    def __init__(self, problem: SelectionProblem, clock: _Clock) -> None:
        self.problem = problem
        self.clock = clock
        # Without requirements the LP-guided greedy of stage 2 usually makes this one
        # redundant; the empty selection (always feasible) holds the place until then.
        greedy_now = problem.has_requirements or problem.size < _LP_MIN_UNITS
        self.selected = (
            constrained_greedy(problem) if greedy_now else np.zeros(problem.size, dtype=np.bool_)
        )
        self.evaluation = evaluate(problem, self.selected)
        self.greedy_done = greedy_now
        self.from_solver = False
        self.count_limit = 0
        self.token_limit = 0
        self.unproven: list[str] = []
        self.notes: list[str] = []

    def accept(self, candidate: BoolArray | None, *, from_solver: bool = True) -> bool:
        """Take ``candidate`` if it is exactly feasible and no worse than the incumbent
        (shortfalls first, then score, then tie key)."""
        if candidate is None:
            return False
        found = evaluate(self.problem, candidate)
        if not found.feasible:
            return False
        if _rank(found) < _rank(self.evaluation):
            return False
        self.selected, self.evaluation = candidate, found
        self.from_solver = from_solver
        return True

    # ---- stage 1
    def least_shortfall(self) -> None:
        """Minimise the count shortfall, then the token shortfall (only when the greedy
        selection misses a requirement)."""
        for counts in (True, False):
            if _shortfall(self.evaluation, counts) > 0:
                limit = None if counts else self.count_limit
                region = _relaxed_region(self.problem, limit, None)
                objective = _slack_objective(self.problem, region, counts)
                result = _run_milp(objective, region, self.clock)
                candidate = _units_of(result.x, region)
                exact = candidate is not None and evaluate(self.problem, candidate).feasible
                self.accept(candidate)
                if result.status != "optimal" or not exact:
                    what = "count" if counts else "token"
                    self.unproven.append(
                        f"least {what} shortfall not proven ({_describe(result.status)})"
                    )
            if counts:
                self.count_limit = self.evaluation.count_shortfall
        self.token_limit = self.evaluation.token_shortfall
        if self.count_limit or self.token_limit:
            self.notes.append(
                f"requirements relaxed by {self.count_limit} item(s) and "
                f"{self.token_limit} token(s) in total"
            )

    # ---- stage 2
    def best_selection(self) -> float | None:
        """Maximise the score at the least shortfall, ties by the tie key.

        Returns the best proven upper bound on the score (quantized units), if any.
        """
        problem = self.problem
        relaxed = bool(self.count_limit or self.token_limit)
        region = (
            _relaxed_region(problem, self.count_limit, self.token_limit)
            if relaxed
            else _hard_region(problem)
        )
        score = np.zeros(region.variables)
        score[: problem.size] = problem.values
        lp = _lp_bound(score, region, self.clock) if problem.size >= _LP_MIN_UNITS else None
        if lp is not None:
            # Rounding the LP solution (greedily, in order of its values) usually beats the
            # density greedy, and a better incumbent fixes more units.
            self.accept(constrained_greedy(problem, preference=lp.solution), from_solver=False)
        elif not self.greedy_done:
            self.accept(constrained_greedy(problem), from_solver=False)
        fixing = _Fixing.none(problem.size) if lp is None else lp.fix(self.evaluation.value)
        reduced = fixing.reduce(region)
        free = fixing.free
        weights = problem.tie_weights[free]
        values = problem.values[free]
        scale = 2 * int(weights.sum()) + 1
        if scale * int(np.abs(values).sum()) + scale >= _EXACT_FLOAT_LIMIT:
            scale, weights = 1, np.zeros_like(weights)
            self.notes.append("tie key ignored: the combined objective would exceed 2**52")
        worth = values.astype(np.float64) * scale + weights
        objective = np.zeros(reduced.variables)
        objective[: reduced.units] = worth
        model = reduced
        if reduced.units <= _DOMINANCE_MAX_UNITS and self.clock.remaining() > _MIN_STAGE_SECONDS:
            model = _with_dominance(reduced, dominance_pairs(problem, free, worth), free)
        result = _run_milp(objective, model, self.clock)
        free_units = _units_of(result.x, reduced)
        candidate = None if free_units is None else fixing.expand(free_units)
        accepted = self.accept(candidate)
        bound = None if lp is None else lp.upper_bound
        if result.bound is not None:
            # c = value * scale + key with 0 <= key < scale, so an integer value is at most
            # floor(c / scale); the small pad keeps float rounding from cutting below it.
            fixed_value = float(problem.values[fixing.ones].sum())
            solver_bound = math.floor(result.bound / scale + 1e-6) + fixed_value
            bound = solver_bound if bound is None else min(bound, solver_bound)
        if result.status == "optimal" and accepted:
            return float(self.evaluation.value)
        if bound is not None and bound < self.evaluation.value + 1:
            # No integer score fits above the incumbent: only the tie key is unsettled.
            self.unproven.append(
                f"best score proven, tie-break unfinished ({_describe(result.status)})"
            )
            return float(self.evaluation.value)
        self.unproven.append(f"best selection not proven ({_describe(result.status)})")
        return bound

    def outcome(self, bound: float | None) -> SolveOutcome:
        if not self.unproven:
            status = STATUS_OPTIMAL
        elif not self.from_solver:
            status = STATUS_FALLBACK
        else:
            status = STATUS_TIME_LIMIT
        messages = [*self.notes, *self.unproven]
        if status == STATUS_FALLBACK:
            messages.append("returned the constraint-aware greedy selection")
        return SolveOutcome(
            selected=self.selected,
            evaluation=self.evaluation,
            status=status,
            bound=bound,
            message="; ".join(messages),
        )


def _rank(evaluation: Evaluation) -> tuple[int, int, int, int]:
    """Order of preference: fewer missing items, then fewer missing tokens, then more value,
    then a larger tie key."""
    return (
        -evaluation.count_shortfall,
        -evaluation.token_shortfall,
        evaluation.value,
        evaluation.tie_key,
    )


def _shortfall(evaluation: Evaluation, counts: bool) -> int:
    return evaluation.count_shortfall if counts else evaluation.token_shortfall


def _describe(status: str) -> str:
    return {
        "optimal": "solver answer failed the exact check",
        "time_limit": "time limit reached",
        "none": "no time left",
        "infeasible": "solver reported infeasible",
    }.get(status, f"solver status {status}")


# --------------------------------------------------------------------------- regions


@dataclass(frozen=True, slots=True)
class _Region:
    """The feasible region of one stage, as the arrays ``milp`` wants.

    Variables: the units (binary) first, then any continuous slacks.
    """

    matrix: sparse.csc_array
    lower: FloatArray
    upper: FloatArray
    var_lower: FloatArray
    var_upper: FloatArray
    integrality: npt.NDArray[np.uint8]
    units: int

    @property
    def variables(self) -> int:
        return int(self.var_lower.shape[0])


def _hard_region(problem: SelectionProblem) -> _Region:
    """Limits and requirements, all hard."""
    n = problem.size
    active = problem.levels > 0
    matrix = sparse.vstack([problem.limits, problem.requirements[active]], format="csc")
    hard = problem.limit_bounds.shape[0]
    lower = np.concatenate([np.full(hard, -np.inf), problem.levels[active].astype(np.float64)])
    upper = np.concatenate([problem.limit_bounds.astype(np.float64), np.full(active.sum(), np.inf)])
    return _Region(
        matrix=sparse.csc_array(matrix, dtype=np.float64),
        lower=lower,
        upper=upper,
        var_lower=np.zeros(n),
        var_upper=np.ones(n),
        integrality=np.ones(n, dtype=np.uint8),
        units=n,
    )


def _relaxed_region(
    problem: SelectionProblem, count_limit: int | None, token_limit: int | None
) -> _Region:
    """Limits, requirements with one slack each, and optional caps on the slack totals."""
    n = problem.size
    k = int(problem.levels.shape[0])
    hard = problem.limit_bounds.shape[0]
    blocks = [
        [problem.limits, None],
        [problem.requirements, sparse.eye_array(k, dtype=np.int64, format="csr")],
    ]
    lower = [np.full(hard, -np.inf), problem.levels.astype(np.float64)]
    upper = [problem.limit_bounds.astype(np.float64), np.full(k, np.inf)]
    is_count = problem.requirement_is_count
    for limit, mask in ((count_limit, is_count), (token_limit, ~is_count)):
        if limit is None:
            continue
        blocks.append([None, sparse.csr_array(mask.astype(np.int64)[None, :])])
        lower.append(np.array([-np.inf]))
        upper.append(np.array([float(limit)]))
    matrix = sparse.block_array(blocks, format="csc")
    return _Region(
        matrix=sparse.csc_array(matrix, dtype=np.float64),
        lower=np.concatenate(lower),
        upper=np.concatenate(upper),
        var_lower=np.zeros(n + k),
        var_upper=np.concatenate([np.ones(n), problem.levels.astype(np.float64)]),
        integrality=np.concatenate([np.ones(n, dtype=np.uint8), np.zeros(k, dtype=np.uint8)]),
        units=n,
    )


def _slack_objective(problem: SelectionProblem, region: _Region, counts: bool) -> FloatArray:
    """Maximise minus the total slack of one kind of requirement."""
    objective = np.zeros(region.variables)
    mask = problem.requirement_is_count if counts else ~problem.requirement_is_count
    objective[region.units :][mask] = -1.0
    return objective


def _units_of(x: FloatArray | None, region: _Region) -> BoolArray | None:
    """The unit part of a solver answer, rounded."""
    return None if x is None else np.asarray(x[: region.units] > 0.5)


def _with_dominance(region: _Region, pairs: list[tuple[int, int]], free: IntArray) -> _Region:
    """``region`` plus the rows ``y[b] - y[a] <= 0`` for the dominance pairs (unit ids)."""
    if not pairs:
        return region
    position = np.full(int(free.max()) + 1, -1, dtype=np.int64)
    position[free] = np.arange(free.shape[0])
    dominated = position[np.array([b for b, _ in pairs], dtype=np.int64)]
    dominating = position[np.array([a for _, a in pairs], dtype=np.int64)]
    count = len(pairs)
    rows = np.repeat(np.arange(count), 2)
    columns = np.column_stack([dominated, dominating]).ravel()
    data = np.tile([1.0, -1.0], count)
    extra = sparse.csc_array((data, (rows, columns)), shape=(count, region.variables))
    return _Region(
        matrix=sparse.csc_array(sparse.vstack([region.matrix, extra], format="csc")),
        lower=np.concatenate([region.lower, np.full(count, -np.inf)]),
        upper=np.concatenate([region.upper, np.zeros(count)]),
        var_lower=region.var_lower,
        var_upper=region.var_upper,
        integrality=region.integrality,
        units=region.units,
    )


# --------------------------------------------------------------------------- the solver call


@dataclass(frozen=True, slots=True)
class _MilpResult:
    status: str
    """``optimal``, ``time_limit``, ``infeasible``, ``none`` (no time) or another status."""
    x: FloatArray | None
    bound: float | None
    """Upper bound on the maximised objective."""


def _run_milp(objective: FloatArray, region: _Region, clock: _Clock) -> _MilpResult:
    """Maximise ``objective`` over ``region`` with the time that is left."""
    remaining = clock.remaining()
    if remaining < _MIN_STAGE_SECONDS:
        return _MilpResult("none", None, None)
    if region.variables == 0:
        return _MilpResult("optimal", np.zeros(0), 0.0)
    result = milp(
        -objective,
        integrality=region.integrality,
        bounds=Bounds(region.var_lower, region.var_upper),
        constraints=LinearConstraint(region.matrix, region.lower, region.upper),
        options={**_MILP_OPTIONS, "time_limit": remaining},
    )
    status = {0: "optimal", 1: "time_limit", 2: "infeasible"}.get(
        int(result.status), f"{result.status}: {result.message}"
    )
    x = None if result.x is None else np.asarray(result.x, dtype=np.float64)
    dual = getattr(result, "mip_dual_bound", None)
    bound = None if dual is None or not np.isfinite(dual) else -float(dual)
    return _MilpResult(status, x, bound)


# --------------------------------------------------------------------------- LP bound, fixing


@dataclass(frozen=True, slots=True)
class _Fixing:
    """Units fixed before the integer model is built (never all units of an optimum)."""

    zeros: BoolArray
    ones: BoolArray

    @classmethod
    def none(cls, units: int) -> _Fixing:
        empty = np.zeros(units, dtype=np.bool_)
        return cls(empty, empty)

    @property
    def free(self) -> IntArray:
        return np.flatnonzero(~(self.zeros | self.ones)).astype(np.int64)

    def agrees_with(self, selected: BoolArray) -> bool:
        return not bool(np.any(selected & self.zeros) or np.any(~selected & self.ones))

    def _columns(self, region: _Region) -> IntArray:
        slacks = np.arange(region.units, region.variables, dtype=np.int64)
        return np.concatenate([self.free, slacks])

    def reduce(self, region: _Region) -> _Region:
        """``region`` over the free units (and the slacks), fixed units moved to the bounds."""
        keep = self._columns(region)
        ones = np.flatnonzero(self.ones)
        shift = np.asarray(region.matrix[:, ones].sum(axis=1)).ravel() if ones.size else 0.0
        return _Region(
            matrix=sparse.csc_array(region.matrix[:, keep]),
            lower=region.lower - shift,
            upper=region.upper - shift,
            var_lower=region.var_lower[keep],
            var_upper=region.var_upper[keep],
            integrality=region.integrality[keep],
            units=int(self.free.shape[0]),
        )

    def restrict(self, objective: FloatArray, region: _Region) -> FloatArray:
        return objective[self._columns(region)]

    def expand(self, free_units: BoolArray) -> BoolArray:
        """A full unit selection from the free units' values."""
        selected = self.ones.copy()
        selected[self.free] = free_units
        return selected


@dataclass(frozen=True, slots=True)
class _LpBound:
    upper_bound: float
    """Certified upper bound on the objective over the region (weak duality, padded)."""
    solution: FloatArray
    """The LP's values of the units."""
    reduced_costs: FloatArray
    """Per unit, in minimisation form: > 0 means the LP prefers 0, < 0 means it prefers 1."""
    tolerance: float

    def fix(self, lower_value: int) -> _Fixing:
        """Units that no selection worth ``>= lower_value`` can flip away from the LP choice.

        For a flipped unit ``j`` every feasible selection is worth at most
        ``upper_bound - |reduced_cost[j]|``; below ``lower_value`` it cannot be optimal.
        """
        r = self.reduced_costs
        hopeless = self.upper_bound - np.abs(r) + self.tolerance < lower_value
        return _Fixing(zeros=hopeless & (r > 0), ones=hopeless & (r < 0))


def _lp_bound(objective: FloatArray, region: _Region, clock: _Clock) -> _LpBound | None:
    """Solve the linear relaxation and turn its duals into a certified bound.

    For ``min c.x`` subject to ``A x <= b`` and ``l <= x <= u``, any ``y <= 0`` gives reduced
    costs ``r = c - A^T y`` and, for every feasible ``x``,
    ``c.x >= b.y + sum(r_j * (l_j if r_j > 0 else u_j)) + sum(|r_j| * distance of x_j from
    that bound)``. The duals HiGHS returns are only used as a good choice of ``y``.
    """
    remaining = clock.remaining()
    if remaining < _MIN_STAGE_SECONDS:
        return None
    matrix = sparse.csr_array(region.matrix)
    upper_rows = np.flatnonzero(np.isfinite(region.upper))
    lower_rows = np.flatnonzero(np.isfinite(region.lower))
    a_ub = sparse.vstack([matrix[upper_rows], -matrix[lower_rows]], format="csr")
    b_ub = np.concatenate([region.upper[upper_rows], -region.lower[lower_rows]])
    c = -objective
    result = linprog(
        c,
        A_ub=a_ub,
        b_ub=b_ub,
        bounds=np.column_stack([region.var_lower, region.var_upper]),
        method="highs",
        # HiGHS's LP presolve grows quadratically with the columns here; the LP needs none.
        options={"time_limit": remaining, "presolve": False},
    )
    if result.status != 0 or result.ineqlin is None:
        return None
    y = np.minimum(np.asarray(result.ineqlin.marginals, dtype=np.float64), 0.0)
    r = c - a_ub.T @ y
    at_bound = np.where(r > 0, region.var_lower, region.var_upper)
    dual_value = float(b_ub @ y + r @ at_bound)
    magnitude = float(np.abs(b_ub) @ np.abs(y) + np.abs(r) @ np.abs(at_bound)) + 1.0
    tolerance = 1e-9 * magnitude
    return _LpBound(
        upper_bound=-dual_value + tolerance,
        solution=np.asarray(result.x[: region.units], dtype=np.float64),
        reduced_costs=np.asarray(r[: region.units]),
        tolerance=tolerance,
    )
