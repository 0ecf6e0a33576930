"""The slicer contract.

A slicer receives the scored items sorted by score descending (original index ascending on
ties) and the *effective* budget, and returns the subset it selects as a :class:`SliceResult`.
Facts about one run (count- and token-requirement shortfalls, items dropped by a count cap,
packing or solver statistics) travel in the result, never on the slicer: a slicer instance
holds only configuration and is safe to share between concurrent runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pycupel.model import ContextBudget, ContextItem, ContextKind, ScoredItem

__all__ = [
    "CapExclusion",
    "CountRequirementShortfall",
    "PackingStats",
    "SliceResult",
    "Slicer",
    "SolverStats",
    "TokenRequirementShortfall",
]


@dataclass(frozen=True, slots=True)
class CountRequirementShortfall:
    """A kind whose ``require_count`` could not be met (scarcity behaviour DEGRADE)."""

    kind: ContextKind
    required_count: int
    satisfied_count: int


@dataclass(frozen=True, slots=True)
class TokenRequirementShortfall:
    """A kind whose token requirement could not be met (scarcity behaviour DEGRADE)."""

    kind: ContextKind
    required_tokens: int
    """``floor(require / 100 * target_tokens)``."""
    satisfied_tokens: int
    """Tokens of this kind in the selection."""


@dataclass(frozen=True, slots=True)
class CapExclusion:
    """An item a per-kind count cap removed from the selection, with the numbers behind it.

    The slicer that enforces the cap records these facts where it knows them; the pipeline turns
    each record into a :class:`~pycupel.diagnostics.QuotaCapExceeded` reason as it is.
    """

    item: ContextItem
    kind: ContextKind
    """The capped kind (the configured entry's kind)."""
    cap: int
    """The kind's configured ``cap_count``."""
    actual: int
    """Items of the kind the slicer would have selected without the cap: the ones it committed
    before the cap applied plus every item of the kind its inner selection chose."""


@dataclass(frozen=True, slots=True)
class PackingStats:
    """Statistics of the skip-and-continue packer (:class:`~pycupel.slicers.PackerSlice`)."""

    selected_count: int
    total_tokens: int
    total_score: float
    skipped_count: int
    """Items not taken: those that did not fit plus those never examined after an early stop."""
    budget_reached: bool
    """True when at least one item was skipped because it did not fit."""
    stopped_early: bool
    """True when the consecutive-skip limit ended the walk before the last item."""


@dataclass(frozen=True, slots=True)
class SolverStats:
    """How an optimising slicer (:class:`~pycupel.slicers.OptimalSlice`) reached its answer."""

    status: str
    """``"optimal"``, ``"time_limit"`` (best found, see ``gap``) or ``"fallback_greedy"``."""
    objective: float
    """Total score of the selection."""
    bound: float | None
    """Best proven upper bound on the total score, when the solver reported one."""
    gap: float | None
    """Relative optimality gap ``(bound - objective) / max(|bound|, tiny)``; 0 when optimal."""
    seconds: float
    message: str = ""


@dataclass(frozen=True, slots=True)
class SliceResult:
    """What a slicer selected, plus the per-run facts it observed."""

    selected: tuple[ContextItem, ...]
    shortfalls: tuple[CountRequirementShortfall, ...] = ()
    """Count requirements the slicer could not meet."""
    token_shortfalls: tuple[TokenRequirementShortfall, ...] = ()
    """Token requirements the slicer could not meet (slicers with token requirements)."""
    cap_exclusions: tuple[CapExclusion, ...] = ()
    """Items the slicer's inner selection chose but a per-kind count cap then removed."""
    packing: PackingStats | None = None
    solver: SolverStats | None = None

    @classmethod
    def of(cls, selected: Iterable[ContextItem]) -> SliceResult:
        """A result carrying only the selected items."""
        return cls(tuple(selected))


@runtime_checkable
class Slicer(Protocol):
    """Selects the items that fit the budget from a score-sorted list."""

    @property
    def budget_monotonic(self) -> bool:
        """Whether a larger budget never drops an item a smaller one selected (as the
        specification classifies slicers). Budget simulation refuses slicers where False."""
        ...

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        """Select from ``items`` (score descending) within ``budget.target_tokens``."""
        ...
