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

from typing import TYPE_CHECKING

from pycupel._lazy import lazy_attributes

# Each name loads its own module on first use: a pipeline that needs three scorers does not
# import the others (nor numpy, which only their array paths use).
if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_attributes(
    "pycupel.slicers",
    {
        "CapExclusion": "pycupel.slicers.base",
        "CountConstrainedKnapsackSlice": "pycupel.slicers.count_constrained_knapsack",
        "CountQuotaEntry": "pycupel.slicers.count_quota",
        "CountQuotaSlice": "pycupel.slicers.count_quota",
        "CountRequirementShortfall": "pycupel.slicers.base",
        "DEFAULT_MAX_TABLE_BYTES": "pycupel.slicers.knapsack",
        "GreedySlice": "pycupel.slicers.greedy",
        "KnapsackSlice": "pycupel.slicers.knapsack",
        "OptimalSlice": "pycupel.slicers.optimal",
        "PackResult": "pycupel.slicers.packer",
        "PackerSlice": "pycupel.slicers.packer",
        "PackingStats": "pycupel.slicers.base",
        "QuotaEntry": "pycupel.slicers.quota",
        "QuotaSlice": "pycupel.slicers.quota",
        "ScarcityBehavior": "pycupel.slicers.count_quota",
        "SliceResult": "pycupel.slicers.base",
        "Slicer": "pycupel.slicers.base",
        "SolverStats": "pycupel.slicers.base",
        "StreamSlice": "pycupel.slicers.stream",
        "StreamSliceResult": "pycupel.slicers.stream",
        "TokenRequirementShortfall": "pycupel.slicers.base",
        "pack": "pycupel.slicers.packer",
    },
    __all__,
)
