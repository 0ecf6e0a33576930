"""Metrics of a :class:`~pycupel.diagnostics.SelectionReport`.

* :func:`budget_utilization` — included tokens / ``budget.max_tokens`` (the testing
  vocabulary's PD-2: the hard ceiling, not the target).
* :func:`kind_diversity` — how many distinct kinds were included.
* :func:`timestamp_coverage` — the share of included items that have a timestamp.
* :func:`quota_utilization` — per quota kind, the tokens used against its require and cap.

Edge cases are defined, never an exception or a NaN: a budget with ``max_tokens == 0`` gives
0.0 utilization when nothing uses tokens (and ``inf`` if included items somehow do); an empty
selection has 0.0 timestamp coverage (no evidence of timing, rather than a vacuous 100%).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pycupel._checks import check_float
from pycupel.diagnostics import InclusionReason, SelectionReport
from pycupel.errors import InvalidValueError, PipelineConfigError
from pycupel.model import ContextBudget, ContextKind, KindLike, compute_effective_budget
from pycupel.slicers import QuotaSlice

__all__ = [
    "QuotaLike",
    "QuotaUsage",
    "budget_utilization",
    "included_tokens",
    "kind_diversity",
    "quota_utilization",
    "timestamp_coverage",
]


def _check_report(report: object) -> SelectionReport:
    if not isinstance(report, SelectionReport):
        raise PipelineConfigError("report", report, "must be a SelectionReport")
    return report


def _check_budget(budget: object) -> ContextBudget:
    if not isinstance(budget, ContextBudget):
        raise PipelineConfigError("budget", budget, "must be a ContextBudget")
    return budget


def included_tokens(report: SelectionReport) -> int:
    """Sum of ``tokens`` over the included items."""
    return sum(entry.item.tokens for entry in _check_report(report).included)


def budget_utilization(report: SelectionReport, budget: ContextBudget) -> float:
    """``sum(included tokens) / budget.max_tokens``.

    ``max_tokens == 0``: 0.0 when the included items use no tokens, else ``inf``.
    """
    used = included_tokens(report)
    ceiling = _check_budget(budget).max_tokens
    if ceiling == 0:
        return 0.0 if used == 0 else math.inf
    return used / ceiling


def kind_diversity(report: SelectionReport) -> int:
    """The number of distinct kinds among the included items (kinds compare
    case-insensitively)."""
    return len({entry.item.kind for entry in _check_report(report).included})


def timestamp_coverage(report: SelectionReport) -> float:
    """The fraction of included items that have a timestamp; 0.0 when nothing is included."""
    included = _check_report(report).included
    if not included:
        return 0.0
    return sum(entry.item.timestamp is not None for entry in included) / len(included)


@runtime_checkable
class QuotaLike(Protocol):
    """A QuotaSlice-style entry: :class:`~pycupel.slicers.QuotaEntry` or
    :class:`~pycupel.policy.QuotaSpec`."""

    @property
    def kind(self) -> KindLike: ...

    @property
    def require(self) -> float: ...

    @property
    def cap(self) -> float: ...


@dataclass(frozen=True, slots=True)
class QuotaUsage:
    """How one quota kind used its share of a run.

    Token amounts follow QuotaSlice: ``floor(percent / 100 * target)``, where ``target`` is
    the effective target the slicer received (``target_tokens`` less pinned tokens and
    reserved slots, after the safety margin). ``used_tokens`` counts the included, non-pinned
    items of the kind (pinned items never go through the slicer).
    """

    kind: ContextKind
    require_percent: float
    cap_percent: float
    target_tokens: int
    require_tokens: int
    cap_tokens: int
    used_tokens: int

    @property
    def meets_require(self) -> bool:
        """Whether the kind got at least its required tokens."""
        return self.used_tokens >= self.require_tokens

    @property
    def within_cap(self) -> bool:
        """Whether the kind stayed within its cap."""
        return self.used_tokens <= self.cap_tokens

    @property
    def cap_fraction(self) -> float:
        """``used_tokens / cap_tokens`` (0.0 for a zero cap with nothing used, else inf)."""
        if self.cap_tokens == 0:
            return 0.0 if self.used_tokens == 0 else math.inf
        return self.used_tokens / self.cap_tokens


def _quota_entries(quotas: object) -> list[tuple[ContextKind, float, float]]:
    source = quotas.quotas if isinstance(quotas, QuotaSlice) else quotas
    if isinstance(source, str | bytes) or not isinstance(source, Iterable):
        raise PipelineConfigError("quotas", quotas, "must be quota entries or a QuotaSlice")
    entries = []
    for index, entry in enumerate(source):
        if not isinstance(entry, QuotaLike):
            raise PipelineConfigError(
                f"quotas[{index}]", entry, "must have kind, require and cap (a quota entry)"
            )
        try:
            kind = ContextKind.of(entry.kind)
        except InvalidValueError as exc:
            raise PipelineConfigError(f"quotas[{index}].kind", entry.kind, exc.rule) from exc
        require = check_float(
            PipelineConfigError, f"quotas[{index}].require", entry.require, minimum=0, maximum=100
        )
        cap = check_float(
            PipelineConfigError, f"quotas[{index}].cap", entry.cap, minimum=0, maximum=100
        )
        entries.append((kind, require, cap))
    return entries


def quota_utilization(
    report: SelectionReport,
    quotas: Iterable[QuotaLike] | QuotaSlice,
    budget: ContextBudget,
) -> tuple[QuotaUsage, ...]:
    """Per quota entry (in the given order): tokens used against the require and cap amounts.

    ``budget`` is the run's budget; see :class:`QuotaUsage` for the token amounts.
    """
    included = _check_report(report).included
    run_budget = _check_budget(budget)
    entries = _quota_entries(quotas)
    pinned = sum(e.item.tokens for e in included if e.reason is InclusionReason.PINNED)
    target = compute_effective_budget(run_budget, pinned).target_tokens
    used: dict[ContextKind, int] = {}
    for entry in included:
        if entry.reason is not InclusionReason.PINNED:
            used[entry.item.kind] = used.get(entry.item.kind, 0) + entry.item.tokens
    return tuple(
        QuotaUsage(
            kind=kind,
            require_percent=require,
            cap_percent=cap,
            target_tokens=target,
            require_tokens=math.floor(require / 100.0 * target),
            cap_tokens=math.floor(cap / 100.0 * target),
            used_tokens=used.get(kind, 0),
        )
        for kind, require, cap in entries
    )
