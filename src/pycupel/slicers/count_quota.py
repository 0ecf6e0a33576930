"""CountQuotaSlice: guarantee and limit the number of items of each kind."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from typing import Self

from pycupel._checks import check_int
from pycupel.errors import SlicerConfigError
from pycupel.model import ContextBudget, ContextKind, KindLike, ScoredItem, ascii_fold
from pycupel.slicers._common import (
    Frozen,
    check_budget,
    check_inner_slicer,
    check_scored_items,
    config_kind,
)
from pycupel.slicers._count_phases import (
    CountPolicy,
    count_satisfy,
    enforce_caps,
    residual_budget,
    residual_items,
)
from pycupel.slicers.base import Slicer, SliceResult
from pycupel.slicers.greedy import GreedySlice
from pycupel.slicers.knapsack import KnapsackSlice

__all__ = ["CountQuotaEntry", "CountQuotaSlice", "ScarcityBehavior"]


class ScarcityBehavior(enum.StrEnum):
    """What a count slicer does when a kind has fewer candidates than its ``require_count``."""

    DEGRADE = "degrade"
    """Commit what there is, record a :class:`~pycupel.slicers.CountRequirementShortfall`."""
    THROW = "throw"
    """Raise :class:`~pycupel.errors.CountRequirementError`."""

    @classmethod
    def parse(cls, value: str | ScarcityBehavior) -> Self:
        """Parse a behaviour name case-insensitively (``"Throw"`` -> ``THROW``)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            folded = ascii_fold(value.strip())
            for member in cls:
                if member.value == folded:
                    return member
        choices = ", ".join(m.value for m in cls)
        raise SlicerConfigError("scarcity", value, f"must be one of: {choices}")


class CountQuotaEntry(Frozen):
    """Count limits for one kind.

    Args:
        kind: the kind (compared case-insensitively).
        require_count: items of this kind committed before anything else (>= 0).
        cap_count: the most items of this kind in the result (>= require_count), or ``None``
            for no cap. A cap of 0 (with ``require_count`` 0) excludes the kind's phase-2 picks.
    """

    __slots__ = ("_cap_count", "_kind", "_require_count")

    _kind: ContextKind
    _require_count: int
    _cap_count: int | None

    def __init__(
        self, kind: KindLike, require_count: int = 0, cap_count: int | None = None
    ) -> None:
        object.__setattr__(self, "_kind", config_kind(kind))
        check_int(SlicerConfigError, "require_count", require_count, minimum=0)
        object.__setattr__(self, "_require_count", require_count)
        if cap_count is not None:
            check_int(SlicerConfigError, "cap_count", cap_count, minimum=0)
            if cap_count == 0 and require_count > 0:
                raise SlicerConfigError(
                    "cap_count",
                    cap_count,
                    f"must be > 0 when require_count is {require_count} for kind "
                    f"{self._kind.value!r} (a zero cap can never satisfy a requirement)",
                )
            if require_count > cap_count:
                raise SlicerConfigError(
                    "require_count",
                    require_count,
                    f"must be <= cap_count ({cap_count}) for kind {self._kind.value!r}",
                )
        object.__setattr__(self, "_cap_count", cap_count)

    @property
    def kind(self) -> ContextKind:
        """The kind this entry constrains."""
        return self._kind

    @property
    def require_count(self) -> int:
        """Items of this kind committed in phase 1."""
        return self._require_count

    @property
    def cap_count(self) -> int | None:
        """The most items of this kind in the result; ``None`` when uncapped."""
        return self._cap_count

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CountQuotaEntry):
            return NotImplemented
        return (self._kind, self._require_count, self._cap_count) == (
            other._kind,
            other._require_count,
            other._cap_count,
        )

    def __hash__(self) -> int:
        return hash((self._kind, self._require_count, self._cap_count))

    def __repr__(self) -> str:
        return (
            f"CountQuotaEntry({self._kind.value!r}, require_count={self._require_count}, "
            f"cap_count={self._cap_count})"
        )


class CountQuotaSlice(Frozen):
    """Commit a minimum number of items per kind, let ``inner`` fill the rest, cap the counts.

    The specification's three phases:

    1. *count-satisfy*: for each entry with ``require_count > 0`` (in entry order), commit the
       kind's best ``require_count`` candidates by score, whatever their size; their tokens
       are pre-allocated. Too few candidates: a shortfall (DEGRADE) or
       :class:`~pycupel.errors.CountRequirementError` (THROW);
    2. *budget-distribute*: ``inner`` slices the remaining candidates with
       ``target_tokens = min(max(0, target - pre_allocated), max_tokens)``;
    3. *cap enforcement*: walking ``inner``'s picks in its order, a pick whose kind already
       has ``cap_count`` items (phase-1 commitments included) is dropped and reported as a
       :class:`~pycupel.slicers.CapExclusion` in ``SliceResult.cap_exclusions``.

    The result lists the commitments, then the surviving picks. Shortfalls (count and token)
    and cap exclusions reported by ``inner`` are passed on, as are its packing or solver
    statistics (which describe the phase-2 run).

    KnapsackSlice cannot be the inner slicer (the specification forbids it; use
    :class:`~pycupel.slicers.CountConstrainedKnapsackSlice`).

    Args:
        entries: one :class:`CountQuotaEntry` per constrained kind (no kind twice). Kinds
            without an entry are unconstrained.
        inner: phase-2 slicer; ``None`` means :class:`GreedySlice`.
        scarcity: :class:`ScarcityBehavior` (or its name) for unmet requirements.
    """

    __slots__ = ("_inner", "_policy", "_scarcity")

    _policy: CountPolicy
    _inner: Slicer
    _scarcity: ScarcityBehavior

    def __init__(
        self,
        entries: Iterable[CountQuotaEntry],
        inner: Slicer | None = None,
        scarcity: ScarcityBehavior | str = ScarcityBehavior.DEGRADE,
    ) -> None:
        object.__setattr__(self, "_policy", CountPolicy(entries, CountQuotaEntry))
        if isinstance(inner, KnapsackSlice):
            raise SlicerConfigError(
                "inner",
                inner,
                "must not be a KnapsackSlice (use CountConstrainedKnapsackSlice for count "
                "limits with knapsack selection)",
            )
        chosen = GreedySlice() if inner is None else check_inner_slicer("inner", inner)
        object.__setattr__(self, "_inner", chosen)
        object.__setattr__(self, "_scarcity", ScarcityBehavior.parse(scarcity))

    @property
    def entries(self) -> tuple[CountQuotaEntry, ...]:
        """The configured entries, in the order given."""
        return self._policy.entries

    @property
    def inner(self) -> Slicer:
        """The phase-2 slicer."""
        return self._inner

    @property
    def scarcity(self) -> ScarcityBehavior:
        """What happens when a requirement cannot be met."""
        return self._scarcity

    @property
    def budget_monotonic(self) -> bool:
        """False: the specification excludes CountQuotaSlice from budget simulation."""
        return False

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        """Select from ``items`` honouring the per-kind count requirements and caps."""
        check_budget(budget)
        items = check_scored_items(items)
        if not items or budget.target_tokens <= 0:
            return SliceResult(())
        policy = self._policy
        state = count_satisfy(
            items,
            policy,
            throw=self._scarcity is ScarcityBehavior.THROW,
            slicer_name="CountQuotaSlice",
        )
        inner = self._inner.slice(residual_items(items, state), residual_budget(budget, state))
        kept, excluded = enforce_caps(inner.selected, policy, state)
        return SliceResult(
            tuple(state.committed + kept),
            shortfalls=(*state.shortfalls, *inner.shortfalls),
            token_shortfalls=inner.token_shortfalls,
            cap_exclusions=(*excluded, *inner.cap_exclusions),
            packing=inner.packing,
            solver=inner.solver,
        )

    def __repr__(self) -> str:
        entries = ", ".join(repr(entry) for entry in self._policy.entries)
        return (
            f"CountQuotaSlice([{entries}], inner={self._inner!r}, "
            f"scarcity=ScarcityBehavior.{self._scarcity.name})"
        )
