"""OptimalSlice: the best-scoring selection under every constraint at once.

The other slicers are heuristics, or handle one kind of constraint at a time. OptimalSlice
states the whole choice as one mixed-integer program and solves it with SciPy's ``milp``
(HiGHS), so the selection it returns maximises the total score subject to, all together:

* **the budget** — the selected tokens sum to at most ``budget.target_tokens`` (exact counts,
  no buckets);
* **token quotas** (``quotas``: :class:`~pycupel.slicers.QuotaEntry`, percentages of
  ``target_tokens`` as QuotaSlice reads them) — a *cap* of ``c`` % means at most
  ``floor(c / 100 * target)`` tokens of that kind; a *require* of ``r`` % means at least
  ``floor(r / 100 * target)`` tokens of that kind;
* **count quotas** (``count_quotas``: :class:`~pycupel.slicers.CountQuotaEntry`) — at least
  ``require_count`` and at most ``cap_count`` items of that kind;
* **groups** — items sharing a value under the metadata key ``group_key`` (default
  ``"cupel:group"``) are taken all together or not at all;
* **alternatives** — items sharing a value under ``variant_key`` (default
  ``"cupel:variant-of"``) are versions of one thing (the original, a summary, a truncated
  form; each a separate candidate with its own tokens and score) of which at most one is taken.

Kinds compare case-insensitively. Groups and alternatives ride on ordinary items, so they flow
through the normal pipeline: the scorer scores every version, deduplication and sorting treat
them as the items they are, and only the slicer reads the keys::

    doc = "Quarterly report ..."
    items = [
        ContextItem(doc, tokens=1800, kind="Document",
                    metadata={"cupel:variant-of": "report-q3"}),
        ContextItem("Summary: revenue up 4 % ...", tokens=150, kind="Document",
                    metadata={"cupel:variant-of": "report-q3"}),
        ContextItem("call get_weather(city='Oslo')", tokens=40, kind="ToolOutput",
                    metadata={"cupel:group": "call-17"}),
        ContextItem("result: 4 degrees, light snow", tokens=25, kind="ToolOutput",
                    metadata={"cupel:group": "call-17"}),
    ]
    slicer = OptimalSlice(
        quotas=[QuotaEntry("Document", require=10, cap=60)],
        count_quotas=[CountQuotaEntry("ToolOutput", cap_count=6)],
    )

Here at most one of the report and its summary is chosen, and the tool call and its result
come together or not at all. A group may hold a version of an item (the group then stands for
that version), but never two versions of the same item. Values under the keys must be
non-empty strings; anything else raises :class:`~pycupel.errors.SliceInputError`. Group and
version constraints apply among the candidates the slicer sees (pinned items never reach it).

**The objective, exactly.** Scores are float64; the model works with integers. Each score is
rounded to a multiple of ``2**(e - 16)``, where ``2**e`` is the smallest power of two at
least the largest ``|score|`` (for scores in (0.5, 1] one unit is ``2**-16``, about 1.5e-5).
Scores closer than that may count as equal. ``SolverStats.objective`` reports the true float
total of the selection.

**Ties.** Among selections with the same (rounded) total score, the one with the larger
*index-weighted count* ``sum(N - i)`` over its items wins, ``i`` being an item's position in
the score-sorted input and ``N`` the number of candidates. Every item taken adds to the key,
earlier items more: a zero-score item that fits is taken, and of two equally good items the
earlier one wins. The rare selections equal on both are told apart by the solver,
deterministically: the same input always gives the same selection when the solve finishes
within the time limit (status ``optimal``). The tie key is folded into the objective with a
weight that provably cannot change the best score; see :mod:`pycupel.slicers._milp`.

**Zero-token items** are always taken and stay outside the model, like in the other slicers —
unless they are in a group or a set of versions, or their kind has a ``cap_count`` (a capped
kind must be able to leave them out); then they are candidates like any other item.
Zero-token items count toward their kind's ``require_count``.

**Requirements that cannot be met.** A requirement can fail because the kind has too few
candidates (fewer items than ``require_count``, fewer tokens than the token requirement), or
because the budget, the caps, the groups and versions and the other requirements leave no room.
With ``ScarcityBehavior.DEGRADE`` the requirements are relaxed as little as possible — first
the total number of missing items over all count requirements is minimised, then the total of
missing tokens over all token requirements, then the score is maximised — and the result
reports a :class:`~pycupel.slicers.CountRequirementShortfall` per short count requirement
(``SliceResult.shortfalls``) and a :class:`TokenRequirementShortfall` per short token
requirement (``SliceResult.token_shortfalls``). With ``ScarcityBehavior.THROW``, too few
candidates raise :class:`~pycupel.errors.CountRequirementError` (count requirements) and
everything else raises :class:`~pycupel.errors.RequirementUnreachableError`. Groups are not
requirements: a group that cannot fit is simply not taken.

**Time limit.** The search stops after about ``time_limit`` seconds (default 0.2; building
the model and the greedy start come on top, some tens of milliseconds per 10,000 items). The
result always carries :class:`~pycupel.slicers.SolverStats`: ``optimal`` (proven, gap 0,
within HiGHS's tolerances), ``time_limit`` (the best selection found, with the relative
``gap`` to the proven bound — 0 when only the tie-break was left unfinished), or
``fallback_greedy`` (nothing better than the constraint-aware greedy selection was found in
time; it still honours the budget, caps, groups and versions, and tries to meet the
requirements). A selection cut short by the time limit may differ between machines. Under
THROW, a requirement missed after a time-out also raises, although more time might have met
it.

**Budget simulation.** ``budget_monotonic`` is False. An exact optimum is not monotonic in the
budget even without quotas: with items A (10 tokens, score 1.0) and B (5 tokens, score 0.6), a
budget of 5 selects B and a budget of 10 selects A alone. Quotas (percentages of the target),
groups and versions make such swaps more common. Binary searches over the budget would give
wrong answers, so budget simulation refuses this slicer.

The instance holds configuration only and may be shared between threads.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from pycupel._checks import check_float, check_str
from pycupel.errors import (
    CountRequirementError,
    RequirementUnreachableError,
    SliceInputError,
    SlicerConfigError,
    SolverUnavailableError,
)
from pycupel.model import ContextBudget, ContextItem, ContextKind, ScoredItem
from pycupel.slicers._common import (
    TOKEN_TOTAL_LIMIT,
    Frozen,
    check_budget,
    check_scored_items,
    scores_of,
    tokens_of,
)
from pycupel.slicers.base import (
    CountRequirementShortfall,
    SliceResult,
    SolverStats,
    TokenRequirementShortfall,
)
from pycupel.slicers.count_quota import CountQuotaEntry, ScarcityBehavior
from pycupel.slicers.quota import QuotaEntry

if TYPE_CHECKING:
    from pycupel.slicers._milp import SolveOutcome
    from pycupel.slicers._selection_problem import SelectionProblem

__all__ = [
    "DEFAULT_GROUP_KEY",
    "DEFAULT_TIME_LIMIT",
    "DEFAULT_VARIANT_KEY",
    "SCORE_BITS",
    "OptimalSlice",
    "quantize_scores",
]

DEFAULT_GROUP_KEY = "cupel:group"
"""Metadata key whose value names an all-or-none group."""
DEFAULT_VARIANT_KEY = "cupel:variant-of"
"""Metadata key whose value names the item that several versions stand for."""
DEFAULT_TIME_LIMIT = 0.2
"""Seconds the solver may spend per slice by default."""
SCORE_BITS = 16
"""Scores are rounded to ``2**-SCORE_BITS`` of the power of two that bounds them."""

_SLICER = "OptimalSlice"
_SOLVER_MODULE = "pycupel.slicers._milp"
_PROBLEM_MODULE = "pycupel.slicers._selection_problem"

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class OptimalSlice(Frozen):
    """Select the highest-scoring subset under the budget, quotas, groups and alternatives.

    See the module documentation for the exact objective, tie rule and edge cases.

    Args:
        quotas: token quotas per kind (:class:`~pycupel.slicers.QuotaEntry`; no kind twice,
            requires summing to at most 100 %).
        count_quotas: count limits per kind (:class:`~pycupel.slicers.CountQuotaEntry`; no
            kind twice).
        scarcity: what to do when a requirement cannot be met
            (:class:`~pycupel.slicers.ScarcityBehavior` or its name).
        group_key: metadata key naming all-or-none groups, or None to ignore groups.
        variant_key: metadata key naming sets of versions of which at most one is taken, or
            None to ignore versions.
        time_limit: seconds the solver may spend per slice (> 0).

    Raises:
        SolverUnavailableError: SciPy is not installed (``pip install 'pycupel[optimal]'``).
    """

    __slots__ = (
        "_count_quotas",
        "_group_key",
        "_quotas",
        "_scarcity",
        "_time_limit",
        "_variant_key",
    )

    _quotas: tuple[QuotaEntry, ...]
    _count_quotas: tuple[CountQuotaEntry, ...]
    _scarcity: ScarcityBehavior
    _group_key: str | None
    _variant_key: str | None
    _time_limit: float

    def __init__(
        self,
        *,
        quotas: Iterable[QuotaEntry] = (),
        count_quotas: Iterable[CountQuotaEntry] = (),
        scarcity: ScarcityBehavior | str = ScarcityBehavior.DEGRADE,
        group_key: str | None = DEFAULT_GROUP_KEY,
        variant_key: str | None = DEFAULT_VARIANT_KEY,
        time_limit: float = DEFAULT_TIME_LIMIT,
    ) -> None:
        _load_solver()
        setter = object.__setattr__
        setter(self, "_quotas", _check_entries("quotas", quotas, QuotaEntry))
        total_require = math.fsum(entry.require for entry in self._quotas)
        if total_require > 100.0:
            raise SlicerConfigError(
                "quotas", total_require, "the require percentages must sum to at most 100"
            )
        setter(self, "_count_quotas", _check_entries("count_quotas", count_quotas, CountQuotaEntry))
        setter(self, "_scarcity", ScarcityBehavior.parse(scarcity))
        setter(self, "_group_key", _check_key("group_key", group_key))
        setter(self, "_variant_key", _check_key("variant_key", variant_key))
        if group_key is not None and group_key == variant_key:
            raise SlicerConfigError(
                "variant_key",
                variant_key,
                "must differ from group_key (they mean different things)",
            )
        setter(
            self,
            "_time_limit",
            check_float(SlicerConfigError, "time_limit", time_limit, positive=True),
        )

    @property
    def quotas(self) -> tuple[QuotaEntry, ...]:
        """Token quotas, in the order given."""
        return self._quotas

    @property
    def count_quotas(self) -> tuple[CountQuotaEntry, ...]:
        """Count limits, in the order given."""
        return self._count_quotas

    @property
    def scarcity(self) -> ScarcityBehavior:
        """What happens when a requirement cannot be met."""
        return self._scarcity

    @property
    def group_key(self) -> str | None:
        """Metadata key of all-or-none groups (None: groups ignored)."""
        return self._group_key

    @property
    def variant_key(self) -> str | None:
        """Metadata key of version sets (None: versions ignored)."""
        return self._variant_key

    @property
    def time_limit(self) -> float:
        """Seconds the solver may spend per slice."""
        return self._time_limit

    @property
    def budget_monotonic(self) -> bool:
        """False: an exact optimum can drop an item when the budget grows (module docs)."""
        return False

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        """Select from ``items`` (score-sorted) the best subset that meets every constraint."""
        started = time.perf_counter()
        target = check_budget(budget).target_tokens
        items = check_scored_items(items)
        if not items or target <= 0:
            return SliceResult((), solver=_trivial_stats(started))
        if target >= TOKEN_TOTAL_LIMIT:
            # The budget rows are int64 like the token counts: refuse, never wrap.
            raise SliceInputError(
                "budget.target_tokens", target, "must be less than 2**62 for OptimalSlice"
            )
        tokens = tokens_of(items)
        scores = scores_of(items)
        _check_scores(scores)
        setup = _Setup.of(self, items, tokens, scores, target)
        throw = self._scarcity is ScarcityBehavior.THROW
        if throw:
            setup.raise_if_pool_short()
        solver = _load_solver()
        outcome = solver.solve(
            setup.problem,
            time_limit=max(self._time_limit - (time.perf_counter() - started), 0.0),
            stop_when_unmet=throw,
        )
        chosen = setup.chosen_items(outcome.selected)
        if throw:
            setup.raise_if_unmet(chosen)
        return SliceResult(
            tuple(items[i].item for i in np.flatnonzero(chosen).tolist()),
            shortfalls=setup.count_shortfalls(chosen),
            token_shortfalls=setup.token_shortfalls(chosen),
            solver=setup.stats(outcome, chosen, started),
        )

    def __repr__(self) -> str:
        parts = []
        if self._quotas:
            parts.append(f"quotas={list(self._quotas)!r}")
        if self._count_quotas:
            parts.append(f"count_quotas={list(self._count_quotas)!r}")
        if self._scarcity is not ScarcityBehavior.DEGRADE:
            parts.append(f"scarcity={self._scarcity.value!r}")
        if self._group_key != DEFAULT_GROUP_KEY:
            parts.append(f"group_key={self._group_key!r}")
        if self._variant_key != DEFAULT_VARIANT_KEY:
            parts.append(f"variant_key={self._variant_key!r}")
        if self._time_limit != DEFAULT_TIME_LIMIT:
            parts.append(f"time_limit={self._time_limit!r}")
        return f"OptimalSlice({', '.join(parts)})"


# --------------------------------------------------------------------------- configuration


def _load_solver() -> Any:
    """The solver module (it needs SciPy); a clear error when SciPy is missing."""
    try:
        return import_module(_SOLVER_MODULE)
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] != "scipy":
            raise
        raise SolverUnavailableError(_SLICER, "scipy", "optimal") from exc


_Entry = TypeVar("_Entry", QuotaEntry, CountQuotaEntry)


def _check_entries(field: str, entries: object, entry_type: type[_Entry]) -> tuple[_Entry, ...]:
    """A tuple of ``entry_type`` with no kind twice."""
    name = entry_type.__name__
    if isinstance(entries, str | bytes | Mapping) or not isinstance(entries, Iterable):
        raise SlicerConfigError(field, entries, f"must be an iterable of {name}")
    checked = tuple(entries)
    seen: set[str] = set()
    for index, entry in enumerate(checked):
        if not isinstance(entry, entry_type):
            raise SlicerConfigError(f"{field}[{index}]", entry, f"must be a {name}")
        kind = entry.kind
        if kind.key in seen:
            raise SlicerConfigError(
                f"{field}[{index}].kind",
                kind.value,
                "must not repeat a kind (kinds compare case-insensitively)",
            )
        seen.add(kind.key)
    return checked


def _check_key(field: str, key: object) -> str | None:
    if key is None:
        return None
    return check_str(SlicerConfigError, field, key, non_blank=True)


def _check_scores(scores: npt.NDArray[np.float64]) -> None:
    bad = ~np.isfinite(scores)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise SliceInputError(
            f"items[{index}].score",
            float(scores[index]),
            "must be a finite number (OptimalSlice maximises the total score)",
        )


def _trivial_stats(started: float) -> SolverStats:
    return SolverStats(
        status="optimal",
        objective=0.0,
        bound=0.0,
        gap=0.0,
        seconds=time.perf_counter() - started,
        message="nothing to select (no items or no budget)",
    )


# --------------------------------------------------------------------------- one run


def quantize_scores(scores: npt.NDArray[np.float64]) -> tuple[IntArray, float]:
    """Scores as the integers the model maximises, and the score one integer unit stands for.

    Each score is multiplied by ``2**(SCORE_BITS - e)`` (exact: a power of two) and rounded
    half to even, ``2**e`` being the smallest power of two at least the largest ``|score|``.
    """
    largest = float(np.abs(scores).max()) if scores.size else 0.0
    if largest == 0.0:
        return np.zeros(scores.shape[0], dtype=np.int64), 1.0
    mantissa, exponent = math.frexp(largest)
    if mantissa == 0.5:  # an exact power of two bounds itself
        exponent -= 1
    shift = SCORE_BITS - exponent
    # Multiplying by a power of two is exact; only the rounding to integers loses precision.
    return np.rint(np.ldexp(scores, shift)).astype(np.int64), math.ldexp(1.0, -shift)


@dataclass(frozen=True, slots=True)
class _Setup:
    """One run's translation of items into the integer problem, and back."""

    items: Sequence[ScoredItem]
    scores: npt.NDArray[np.float64]
    tokens: IntArray
    kind_keys: list[str]
    values: IntArray
    unit: float
    unit_of_item: IntArray
    """Unit index of every item, -1 for the always-taken zero-token items."""
    always: BoolArray
    """Items taken outside the model."""
    model_units: IntArray
    """For each problem unit, the index of its unit among all units."""
    problem: SelectionProblem
    count_requires: tuple[tuple[CountQuotaEntry, int], ...]
    """Entries with ``require_count > 0`` and the kind's candidate count."""
    token_requires: tuple[tuple[QuotaEntry, int, int], ...]
    """Entries with a positive token requirement, the required tokens, the kind's tokens."""

    @classmethod
    def of(
        cls,
        slicer: OptimalSlice,
        items: Sequence[ScoredItem],
        tokens: IntArray,
        scores: npt.NDArray[np.float64],
        target: int,
    ) -> _Setup:
        n = len(items)
        contexts: list[ContextItem] = [entry.item for entry in items]
        kind_keys = [item.kind.key for item in contexts]
        kinds = np.array(kind_keys, dtype=object)
        values, unit = quantize_scores(scores)
        unit_of_item, units = _units(_labels(contexts, slicer.group_key, "a group"))
        versions = _labels(contexts, slicer.variant_key, "the item these are versions of")
        version_sets = _version_sets(versions, unit_of_item, slicer.variant_key)

        def per_unit(weights: npt.NDArray[Any]) -> IntArray:
            total = np.zeros(units, dtype=np.int64)
            np.add.at(total, unit_of_item, weights.astype(np.int64))
            return total

        unit_tokens = per_unit(tokens)
        in_version_set = np.zeros(units, dtype=np.bool_)
        for members in version_sets:
            in_version_set[members] = True
        capped = [e.kind.key for e in slicer.count_quotas if e.cap_count is not None]
        in_capped_kind = per_unit(np.isin(kinds, capped)) > 0
        always_unit = (unit_tokens == 0) & ~in_version_set & ~in_capped_kind
        always = always_unit[unit_of_item]

        # Hard limits: the budget, token caps below the target, count caps.
        limit_rows: list[tuple[IntArray, int]] = [(unit_tokens, target)]
        for quota in slicer.quotas:
            cap = math.floor(quota.cap / 100.0 * target)
            if cap < target:
                limit_rows.append((per_unit(np.where(kinds == quota.kind.key, tokens, 0)), cap))
        for limit in slicer.count_quotas:
            if limit.cap_count is not None:
                limit_rows.append((per_unit(kinds == limit.kind.key), limit.cap_count))

        # Requirements. One above the kind's candidates is short by a constant whatever is
        # chosen, so only the part the candidates can cover goes to the model (the least total
        # shortfall is reached by the same selections).
        requirement_rows: list[tuple[IntArray, int, bool]] = []
        count_requires: list[tuple[CountQuotaEntry, int]] = []
        for limit in slicer.count_quotas:
            if limit.require_count > 0:
                of_kind = kinds == limit.kind.key
                pool = int(of_kind.sum())
                already = int((of_kind & always).sum())
                level = max(0, min(limit.require_count, pool) - already)
                count_requires.append((limit, pool))
                requirement_rows.append((per_unit(of_kind), level, True))
        token_requires: list[tuple[QuotaEntry, int, int]] = []
        for quota in slicer.quotas:
            required = math.floor(quota.require / 100.0 * target)
            if required > 0:
                kind_tokens = np.where(kinds == quota.kind.key, tokens, 0)
                mass = int(kind_tokens.sum())
                token_requires.append((quota, required, mass))
                requirement_rows.append((per_unit(kind_tokens), min(required, mass), False))

        # The model keeps the units that are not always taken and fit every limit alone.
        dense = np.array([coef for coef, _ in limit_rows], dtype=np.int64)
        bounds = np.array([bound for _, bound in limit_rows], dtype=np.int64)
        keep = np.flatnonzero(~always_unit & np.all(dense <= bounds[:, None], axis=0))
        position = np.full(units, -1, dtype=np.int64)
        position[keep] = np.arange(keep.shape[0])
        kept_sets = [position[m][position[m] >= 0] for m in version_sets]
        builder = import_module(_PROBLEM_MODULE)
        problem = builder.build_problem(
            values=per_unit(values)[keep],
            tie_weights=per_unit(n - np.arange(n, dtype=np.int64))[keep],
            tokens=unit_tokens[keep],
            limit_rows=[(coef[keep], bound) for coef, bound in limit_rows],
            at_most_one=[m for m in kept_sets if m.shape[0] > 1],
            requirement_rows=[(coef[keep], level, c) for coef, level, c in requirement_rows],
        )
        return cls(
            items=items,
            scores=scores,
            tokens=tokens,
            kind_keys=kind_keys,
            values=values,
            unit=unit,
            unit_of_item=unit_of_item,
            always=always,
            model_units=keep,
            problem=problem,
            count_requires=tuple(count_requires),
            token_requires=tuple(token_requires),
        )

    # ---- results
    def chosen_items(self, selected_units: BoolArray) -> BoolArray:
        """Per item: selected (always-taken items included)."""
        taken_unit = np.zeros(int(self.unit_of_item.max()) + 1, dtype=np.bool_)
        taken_unit[self.model_units[selected_units]] = True
        return self.always | taken_unit[self.unit_of_item]

    def _of_kind(self, kind: ContextKind) -> BoolArray:
        return np.array([key == kind.key for key in self.kind_keys], dtype=np.bool_)

    def count_shortfalls(self, chosen: BoolArray) -> tuple[CountRequirementShortfall, ...]:
        shortfalls = []
        for count_quota, _ in self.count_requires:
            have = int((chosen & self._of_kind(count_quota.kind)).sum())
            if have < count_quota.require_count:
                shortfalls.append(
                    CountRequirementShortfall(count_quota.kind, count_quota.require_count, have)
                )
        return tuple(shortfalls)

    def token_shortfalls(self, chosen: BoolArray) -> tuple[TokenRequirementShortfall, ...]:
        shortfalls = []
        for entry, required, _ in self.token_requires:
            have = int(self.tokens[chosen & self._of_kind(entry.kind)].sum())
            if have < required:
                shortfalls.append(TokenRequirementShortfall(entry.kind, required, have))
        return tuple(shortfalls)

    def raise_if_pool_short(self) -> None:
        """THROW: a kind with too few candidates fails before any solving."""
        for count_quota, pool in self.count_requires:
            if pool < count_quota.require_count:
                raise CountRequirementError(
                    _SLICER, count_quota.kind.value, pool, count_quota.require_count
                )
        for quota, required, mass in self.token_requires:
            if mass < required:
                raise RequirementUnreachableError(
                    _SLICER, quota.kind.value, "tokens", mass, required
                )

    def raise_if_unmet(self, chosen: BoolArray) -> None:
        """THROW: the least-shortfall selection still misses a requirement."""
        for shortfall in self.count_shortfalls(chosen):
            raise RequirementUnreachableError(
                _SLICER,
                shortfall.kind.value,
                "items",
                shortfall.satisfied_count,
                shortfall.required_count,
            )
        for token_shortfall in self.token_shortfalls(chosen):
            raise RequirementUnreachableError(
                _SLICER,
                token_shortfall.kind.value,
                "tokens",
                token_shortfall.satisfied_tokens,
                token_shortfall.required_tokens,
            )

    def stats(self, outcome: SolveOutcome, chosen: BoolArray, started: float) -> SolverStats:
        """Solver statistics in score units (the bound and gap come from the integer model)."""
        objective = math.fsum(self.scores[chosen].tolist())
        total = int(self.values[chosen].sum())
        fixed = total - outcome.evaluation.value
        bound: float | None = None
        gap: float | None = None
        if outcome.status == "optimal":
            bound, gap = objective, 0.0
        elif outcome.bound is not None:
            bound_total = max(outcome.bound + fixed, float(total))
            bound = objective + (bound_total - total) * self.unit
            gap = (bound_total - total) / max(abs(bound_total), 1e-12)
        return SolverStats(
            status=outcome.status,
            objective=objective,
            bound=bound,
            gap=gap,
            seconds=time.perf_counter() - started,
            message=outcome.message,
        )


def _units(groups: list[str | None]) -> tuple[IntArray, int]:
    """Unit index per item and the number of units: a group is one unit, every other item
    its own; units are numbered in order of their first item."""
    unit_of_item = np.empty(len(groups), dtype=np.int64)
    group_unit: dict[str, int] = {}
    units = 0
    for index, label in enumerate(groups):
        if label is None:
            unit_of_item[index] = units
            units += 1
        else:
            if label not in group_unit:
                group_unit[label] = units
                units += 1
            unit_of_item[index] = group_unit[label]
    return unit_of_item, units


def _version_sets(
    versions: list[str | None], unit_of_item: IntArray, key: str | None
) -> list[IntArray]:
    """The units of each set of versions that spans two units or more."""
    members: dict[str, list[int]] = {}
    for index, label in enumerate(versions):
        if label is not None:
            members.setdefault(label, []).append(index)
    sets: list[IntArray] = []
    for label, indices in members.items():
        owners = unit_of_item[indices]
        if np.unique(owners).shape[0] != owners.shape[0]:
            raise SliceInputError(
                f"items[{indices[-1]}].item.metadata[{key!r}]",
                label,
                "must not name an item of which another version is in the same group (the "
                "group could never be taken)",
            )
        if owners.shape[0] > 1:
            sets.append(owners)
    return sets


def _labels(items: Sequence[ContextItem], key: str | None, meaning: str) -> list[str | None]:
    """The value under ``key`` of every item (None when absent); non-strings are rejected."""
    if key is None:
        return [None] * len(items)
    labels: list[str | None] = []
    for index, item in enumerate(items):
        if key not in item.metadata:
            labels.append(None)
            continue
        value = item.metadata[key]
        if not isinstance(value, str) or not value.strip():
            raise SliceInputError(
                f"items[{index}].item.metadata[{key!r}]",
                value,
                f"must be a non-empty string naming {meaning}",
            )
        labels.append(value)
    return labels
