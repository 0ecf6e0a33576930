"""What a run returns: :class:`PipelineResult`, and :class:`DryRunResult` with its report."""

from __future__ import annotations

from dataclasses import dataclass

from pycupel.diagnostics.events import OverflowEvent
from pycupel.diagnostics.report import SelectionReport
from pycupel.model import ContextItem
from pycupel.slicers.base import (
    CountRequirementShortfall,
    PackingStats,
    SolverStats,
    TokenRequirementShortfall,
)

__all__ = ["DryRunResult", "PipelineResult"]


@dataclass(frozen=True, slots=True)
class PipelineResult:
    """What a run selected.

    Attributes:
        items: the selected items in placed order (the context window, top to bottom).
        total_tokens: sum of ``tokens`` over ``items``.
        overflow: the overflow event when the strategy is PROCEED and the selection exceeds
            ``target_tokens``; None otherwise.
        shortfalls: count requirements the slicer could not meet.
        token_shortfalls: token requirements the slicer could not meet.
        packing: the packer's statistics, when the slicer reports them.
        solver: the optimiser's statistics, when the slicer reports them.
    """

    items: tuple[ContextItem, ...]
    total_tokens: int
    overflow: OverflowEvent | None
    shortfalls: tuple[CountRequirementShortfall, ...]
    token_shortfalls: tuple[TokenRequirementShortfall, ...]
    packing: PackingStats | None
    solver: SolverStats | None


@dataclass(frozen=True, slots=True)
class DryRunResult(PipelineResult):
    """A run's result plus its item-level :class:`~pycupel.diagnostics.SelectionReport`."""

    report: SelectionReport
