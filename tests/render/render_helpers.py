"""Reports built by hand for the rendering tests: every number in them is chosen, so the
tests can say exactly what must be shown."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pycupel.diagnostics import (
    BudgetExceeded,
    Deduplicated,
    ExcludedItem,
    IncludedItem,
    InclusionReason,
    NegativeTokens,
    PinnedOverride,
    QuotaCapExceeded,
    SelectionReport,
)
from pycupel.model import ContextBudget, ContextItem

HOSTILE = "<script>alert('owned')</script> & \"quotes\" <img src=x onerror=alert(1)>"
START = datetime(2024, 6, 1, 9, 0, tzinfo=UTC)


def item(content: str, tokens: int, kind: str = "Message", **extra: object) -> ContextItem:
    return ContextItem(content, tokens=tokens, kind=kind, **extra)  # type: ignore[arg-type]


def hand_report() -> tuple[SelectionReport, ContextBudget]:
    """Four included items (one pinned), four excluded with different reasons."""
    system = item("You are a careful assistant.", 100, "SystemPrompt", pinned=True)
    included = [
        IncludedItem(system, 1.0, InclusionReason.PINNED),
        IncludedItem(item("What is the refund policy?", 300), 0.91, InclusionReason.SCORED),
        IncludedItem(
            item("Refund policy text " * 20, 250, "Document"), 0.8, InclusionReason.SCORED
        ),
        IncludedItem(item("lookup(order=1) -> ok", 50, "ToolOutput"), 0.5, InclusionReason.SCORED),
    ]
    excluded = [
        ExcludedItem(item("A long manual", 900, "Document"), 0.7, BudgetExceeded(900, 120)),
        ExcludedItem(
            item("What is the refund policy?", 300), 0.6, Deduplicated("What is the refund policy?")
        ),
        ExcludedItem(
            item("old tool output", 80, "ToolOutput"), 0.4, PinnedOverride(system.content)
        ),
        ExcludedItem(item("broken", -5), 0.0, NegativeTokens(-5)),
    ]
    report = SelectionReport.build(events=(), included=included, excluded=excluded)
    budget = ContextBudget(max_tokens=1000, target_tokens=800, output_reserve=100)
    return report, budget


def hostile_report() -> tuple[SelectionReport, ContextBudget]:
    """Content, kind and reason data that would break out of HTML if not escaped."""
    kept = item(HOSTILE, 10, "Evil<b>Kind</b>")
    left = item("</td></tr></table><script>x()</script>", 20, "Document")
    report = SelectionReport.build(
        events=(),
        included=[IncludedItem(kept, 0.5, InclusionReason.SCORED)],
        excluded=[ExcludedItem(left, 0.25, QuotaCapExceeded("<svg onload=x>", 1, 2))],
    )
    return report, ContextBudget(max_tokens=100, target_tokens=100)


def timed_items(count: int) -> list[ContextItem]:
    """``count`` distinct messages, one minute apart."""
    return [
        item(f"message number {index}", 10 + index % 7, timestamp=START + timedelta(minutes=index))
        for index in range(count)
    ]
