"""Metrics of a selection report."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pycupel.analytics import (
    QuotaUsage,
    budget_utilization,
    kind_diversity,
    quota_utilization,
    timestamp_coverage,
)
from pycupel.diagnostics import (
    BudgetExceeded,
    ExcludedItem,
    IncludedItem,
    InclusionReason,
    SelectionReport,
)
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextBudget, ContextItem, ContextKind
from pycupel.pipeline import Pipeline
from pycupel.policy import QuotaSpec
from pycupel.scorers import ReflexiveScorer
from pycupel.slicers import QuotaEntry, QuotaSlice

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def report(*included: tuple[ContextItem, InclusionReason], excluded: int = 0) -> SelectionReport:
    left_out = [
        ExcludedItem(ContextItem(f"x{n}", tokens=500), 0.1, BudgetExceeded(500, 0))
        for n in range(excluded)
    ]
    return SelectionReport.build(
        events=(),
        included=[IncludedItem(item, 0.5, reason) for item, reason in included],
        excluded=left_out,
    )


SCORED = InclusionReason.SCORED
PINNED = InclusionReason.PINNED


def test_budget_utilization_divides_by_max_tokens() -> None:
    r = report(
        (ContextItem("a", tokens=300), SCORED), (ContextItem("b", tokens=100), PINNED), excluded=3
    )
    assert budget_utilization(r, ContextBudget(max_tokens=1000, target_tokens=500)) == 0.4
    assert budget_utilization(report(), ContextBudget(max_tokens=10, target_tokens=10)) == 0.0


def test_budget_utilization_with_zero_max_tokens() -> None:
    zero = ContextBudget(max_tokens=0, target_tokens=0)
    assert budget_utilization(report((ContextItem("z", tokens=0), SCORED)), zero) == 0.0
    assert budget_utilization(report((ContextItem("a", tokens=5), SCORED)), zero) == math.inf


def test_kind_diversity_is_case_insensitive() -> None:
    r = report(
        (ContextItem("a", tokens=1, kind="Message"), SCORED),
        (ContextItem("b", tokens=1, kind="message"), SCORED),
        (ContextItem("c", tokens=1, kind="Document"), SCORED),
        excluded=2,
    )
    assert kind_diversity(r) == 2
    assert kind_diversity(report()) == 0


def test_timestamp_coverage() -> None:
    r = report(
        (ContextItem("a", tokens=1, timestamp=NOW), SCORED),
        (ContextItem("b", tokens=1), SCORED),
        (ContextItem("c", tokens=1), SCORED),
        (ContextItem("d", tokens=1, timestamp=NOW), PINNED),
    )
    assert timestamp_coverage(r) == 0.5
    assert timestamp_coverage(report()) == 0.0


def test_quota_utilization_against_the_effective_target() -> None:
    r = report(
        (ContextItem("sys", tokens=100, kind="SystemPrompt"), PINNED),
        (ContextItem("m1", tokens=150, kind="Message"), SCORED),
        (ContextItem("m2", tokens=50, kind="message"), SCORED),
        (ContextItem("d", tokens=300, kind="Document"), SCORED),
    )
    budget = ContextBudget(max_tokens=1200, target_tokens=1100)
    usage = quota_utilization(
        r, [QuotaSpec("Message", 10, 30), QuotaEntry("Memory", 5, 50)], budget
    )
    # Effective target: 1100 - 100 pinned = 1000.
    assert usage == (
        QuotaUsage(
            kind=usage[0].kind,
            require_percent=10.0,
            cap_percent=30.0,
            target_tokens=1000,
            require_tokens=100,
            cap_tokens=300,
            used_tokens=200,
        ),
        QuotaUsage(
            kind=usage[1].kind,
            require_percent=5.0,
            cap_percent=50.0,
            target_tokens=1000,
            require_tokens=50,
            cap_tokens=500,
            used_tokens=0,
        ),
    )
    assert usage[0].kind == ContextKind.MESSAGE
    assert usage[0].meets_require
    assert usage[0].within_cap
    assert usage[0].cap_fraction == pytest.approx(2 / 3)
    assert not usage[1].meets_require
    zero_cap = quota_utilization(r, [QuotaSpec("Document", 0, 0)], budget)[0]
    assert not zero_cap.within_cap
    assert zero_cap.cap_fraction == math.inf
    assert quota_utilization(r, [QuotaSpec("Tool", 0, 0)], budget)[0].cap_fraction == 0.0


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Message", "Document", "Memory"]), st.integers(1, 200), st.floats(0, 1)
        ),
        max_size=15,
    ),
    st.integers(0, 2000),
)
def test_quota_slice_runs_stay_within_their_caps(
    specs: list[tuple[str, int, float]], target: int
) -> None:
    quotas = QuotaSlice([QuotaEntry("Message", 20, 40), QuotaEntry("Document", 10, 30)])
    budget = ContextBudget(max_tokens=2000, target_tokens=target)
    pipeline = Pipeline(budget=budget, scorer=ReflexiveScorer(), slicer=quotas)
    items = [
        ContextItem(f"i{n}", tokens=t, kind=k, future_relevance_hint=h)
        for n, (k, t, h) in enumerate(specs)
    ]
    usage = quota_utilization(pipeline.dry_run(items).report, quotas, budget)
    assert [u.kind.value for u in usage] == ["Message", "Document"]
    assert all(u.within_cap for u in usage)


def test_argument_errors() -> None:
    budget = ContextBudget(max_tokens=10, target_tokens=10)
    with pytest.raises(PipelineConfigError, match="report: must be a SelectionReport"):
        budget_utilization({}, budget)  # type: ignore[arg-type]
    with pytest.raises(PipelineConfigError, match="budget: must be a ContextBudget"):
        budget_utilization(report(), 10)  # type: ignore[arg-type]
    with pytest.raises(PipelineConfigError, match=r"quotas\[0\]: must have kind"):
        quota_utilization(report(), [("Message", 10, 20)], budget)  # type: ignore[list-item]
    with pytest.raises(PipelineConfigError, match="quotas: must be quota entries"):
        quota_utilization(report(), 3, budget)  # type: ignore[arg-type]
