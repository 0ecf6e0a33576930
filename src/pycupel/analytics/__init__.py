"""Analytics over pipeline runs.

* Budget simulation (:mod:`pycupel.analytics.simulation`): :func:`marginal_items`,
  :func:`find_min_budget`, :func:`sweep_budgets`.
* Policy sensitivity (:mod:`pycupel.analytics.sensitivity`): :func:`policy_sensitivity`.
* Report metrics (:mod:`pycupel.analytics.metrics`): :func:`budget_utilization`,
  :func:`kind_diversity`, :func:`timestamp_coverage`, :func:`quota_utilization`.
"""

from pycupel.analytics.metrics import (
    QuotaLike,
    QuotaUsage,
    budget_utilization,
    included_tokens,
    kind_diversity,
    quota_utilization,
    timestamp_coverage,
)
from pycupel.analytics.sensitivity import (
    ItemStatus,
    SensitivityDiff,
    SensitivityReport,
    policy_sensitivity,
)
from pycupel.analytics.simulation import (
    SweepPoint,
    find_min_budget,
    marginal_items,
    probe_budget,
    sweep_budgets,
)

__all__ = [
    "ItemStatus",
    "QuotaLike",
    "QuotaUsage",
    "SensitivityDiff",
    "SensitivityReport",
    "SweepPoint",
    "budget_utilization",
    "find_min_budget",
    "included_tokens",
    "kind_diversity",
    "marginal_items",
    "policy_sensitivity",
    "probe_budget",
    "quota_utilization",
    "sweep_budgets",
    "timestamp_coverage",
]
