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

__all__ = ["DryRunResult", "PipelineResult", "new_result"]


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


_result_fields = tuple(
    getattr(PipelineResult, name).__set__
    for name in (
        "items",
        "total_tokens",
        "overflow",
        "shortfalls",
        "token_shortfalls",
        "packing",
        "solver",
    )
)


def new_result(
    items: tuple[ContextItem, ...], total_tokens: int, overflow: OverflowEvent | None
) -> PipelineResult:
    """A :class:`PipelineResult` with no shortfalls or statistics (a slicer that reports
    none), built through the slots' own setters: the frozen dataclass's ``__init__`` sets each
    field by name through ``object.__setattr__``, a measurable share of a small run."""
    result = object.__new__(PipelineResult)
    set_items, set_total, set_overflow, set_shortfalls, set_tokens, set_packing, set_solver = (
        _result_fields
    )
    set_items(result, items)
    set_total(result, total_tokens)
    set_overflow(result, overflow)
    set_shortfalls(result, ())
    set_tokens(result, ())
    set_packing(result, None)
    set_solver(result, None)
    return result
