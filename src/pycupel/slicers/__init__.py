"""Slicers: choose the items that fit the budget (see :mod:`pycupel.slicers.base`).

* :class:`GreedySlice` — value density (score per token), best first; fast, good enough.
* :class:`KnapsackSlice` — 0/1 knapsack DP; optimal for the discretised budget.
* :class:`QuotaSlice` — budget shared between kinds by percentage, an inner slicer per kind.
* :class:`CountQuotaSlice` — minimum and maximum item counts per kind around an inner slicer.
* :class:`CountConstrainedKnapsackSlice` — the same counts around a knapsack.
* :class:`PackerSlice` / :func:`pack` — skip-and-continue packing with an early stop.
* :class:`StreamSlice` — online greedy selection over an async source in micro-batches; stops
  reading once the budget is full.
* :class:`OptimalSlice` — the provably best subset under the budget, token and count quotas,
  all-or-none groups and alternative versions at once (mixed-integer program; needs SciPy).
"""

from pycupel.slicers.base import (
    CapExclusion,
    CountRequirementShortfall,
    PackingStats,
    Slicer,
    SliceResult,
    SolverStats,
    TokenRequirementShortfall,
)
from pycupel.slicers.count_constrained_knapsack import CountConstrainedKnapsackSlice
from pycupel.slicers.count_quota import CountQuotaEntry, CountQuotaSlice, ScarcityBehavior
from pycupel.slicers.greedy import GreedySlice
from pycupel.slicers.knapsack import DEFAULT_MAX_TABLE_BYTES, KnapsackSlice
from pycupel.slicers.optimal import OptimalSlice
from pycupel.slicers.packer import PackerSlice, PackResult, pack
from pycupel.slicers.quota import QuotaEntry, QuotaSlice
from pycupel.slicers.stream import StreamSlice, StreamSliceResult

__all__ = [
    "DEFAULT_MAX_TABLE_BYTES",
    "CapExclusion",
    "CountConstrainedKnapsackSlice",
    "CountQuotaEntry",
    "CountQuotaSlice",
    "CountRequirementShortfall",
    "GreedySlice",
    "KnapsackSlice",
    "OptimalSlice",
    "PackResult",
    "PackerSlice",
    "PackingStats",
    "QuotaEntry",
    "QuotaSlice",
    "ScarcityBehavior",
    "SliceResult",
    "Slicer",
    "SolverStats",
    "StreamSlice",
    "StreamSliceResult",
    "TokenRequirementShortfall",
    "pack",
]
