"""Reports built by hand for the rendering tests: every number in them is chosen, so the
tests can say exactly what must be shown."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pycupel.diagnostics import (
    BudgetExceeded,
    Cause,
    Deduplicated,
    ExcludedItem,
    IncludedItem,
    InclusionReason,
    NegativeTokens,
    PinnedOverride,
    QuotaCapExceeded,
    SelectionReport,
    Why,
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


REF = "3f9a2c5d0e1b7a44"


def chat_report() -> tuple[SelectionReport, ContextBudget]:
    """A chat fit's report with a why for every unit: the system prompt and the latest turn
    pinned, a relevant turn with its neighbour and its session's header, the recent tail, an
    excerpt whose gaps carry recall refs, and a tool output too large for what was left (the
    pipeline calls it PinnedOverride; its why says it needed more than was free)."""

    def unit(content: str, tokens: int, *messages: int, kind: str = "Message", **meta: object):
        return item(content, tokens, kind, metadata={"message_indices": messages, **meta})

    system = unit("system: You are an ops agent.", 40, 0, kind="SystemPrompt", pinned=True)
    header = unit("user: [9:00 am on 3 March, 2024] Morning.", 20, 1)
    question = unit("user: Which port does the ledger replica use?", 13, 2)
    answer = unit("assistant: Port 7421.", 8, 3)
    excerpt = unit(
        f"assistant: fetch_logs()\n\ntool: ok\n[... 27 lines (2,100 tokens) elided: ref {REF} ...]",
        560,
        4,
        5,
        kind="ToolOutput",
        variant="excerpt",
        excerpt={"kept": [[1, 12, 300], [40, 52, 200]], "elided": [[13, 39, 2100, REF]]},
    )
    recent = unit(f"assistant: {HOSTILE}", 30, 8)
    latest = unit("user: Nice. Now, which port?", 9, 9, pinned=True)
    dropped = unit("assistant: read_file()\n\ntool: a huge file", 3_933, 6, 7, kind="ToolOutput")
    included = [
        IncludedItem(system, 1.0, InclusionReason.PINNED),
        IncludedItem(header, 0.6, InclusionReason.SCORED),
        IncludedItem(question, 1.5723, InclusionReason.SCORED),
        IncludedItem(answer, 1.2, InclusionReason.SCORED),
        IncludedItem(excerpt, 0.9, InclusionReason.SCORED),
        IncludedItem(recent, 0.3, InclusionReason.SCORED),
        IncludedItem(latest, 1.0, InclusionReason.PINNED),
    ]
    why = {
        system: Why(Cause.SYSTEM_PROMPT),
        header: Why(Cause.SESSION_HEADER, beside=(2,)),
        question: Why(Cause.RELEVANT),
        answer: Why(Cause.NEIGHBOUR, beside=(2,)),
        excerpt: Why(Cause.ROOM_LEFT, version="excerpt", whole_tokens=2_660),
        recent: Why(Cause.RECENT),
        latest: Why(Cause.LATEST_TURN),
        dropped: Why(Cause.NO_ROOM, free_tokens=199),
    }
    report = SelectionReport.build(
        events=(),
        included=included,
        excluded=[ExcludedItem(dropped, 0.95, PinnedOverride(latest.content))],
        why=why,
    )
    return report, ContextBudget(max_tokens=900, target_tokens=900)


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
