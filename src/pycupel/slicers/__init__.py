"""Slicers: choose the items that fit the budget (see :mod:`pycupel.slicers.base`)."""

from pycupel.slicers.base import (
    CountRequirementShortfall,
    PackingStats,
    Slicer,
    SliceResult,
    SolverStats,
)

__all__ = ["CountRequirementShortfall", "PackingStats", "SliceResult", "Slicer", "SolverStats"]
