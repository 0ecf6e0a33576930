"""Analytics over pipeline runs.

* Budget simulation (:mod:`pycupel.analytics.simulation`): :func:`marginal_items`,
  :func:`find_min_budget`, :func:`sweep_budgets`.
* Policy sensitivity (:mod:`pycupel.analytics.sensitivity`): :func:`policy_sensitivity`.
* Report metrics (:mod:`pycupel.analytics.metrics`): :func:`budget_utilization`,
  :func:`kind_diversity`, :func:`timestamp_coverage`, :func:`quota_utilization`.
* Input cost with prompt caching (:mod:`pycupel.analytics.cost`): :func:`replay_cost`,
  :func:`replay_windows`, :func:`render_request`, :class:`ModelPrice` and
  :data:`DEFAULT_PRICES`.
"""

from pycupel.analytics.cost import (
    DEFAULT_PRICES,
    PRICES_CHECKED,
    CostReport,
    ModelPrice,
    RenderedRequest,
    TurnCost,
    render_request,
    replay_cost,
    replay_windows,
    resolve_price,
)
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
    "DEFAULT_PRICES",
    "PRICES_CHECKED",
    "CostReport",
    "ItemStatus",
    "ModelPrice",
    "QuotaLike",
    "QuotaUsage",
    "RenderedRequest",
    "SensitivityDiff",
    "SensitivityReport",
    "SweepPoint",
    "TurnCost",
    "budget_utilization",
    "find_min_budget",
    "included_tokens",
    "kind_diversity",
    "marginal_items",
    "policy_sensitivity",
    "probe_budget",
    "quota_utilization",
    "render_request",
    "replay_cost",
    "replay_windows",
    "resolve_price",
    "sweep_budgets",
    "timestamp_coverage",
]
