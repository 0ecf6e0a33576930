"""Per-policy figures of a replay's output, and the terminal table that shows them."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from pycupel.replay.formats import ROLE_CATEGORIES

__all__ = ["PolicySummary", "skipped_details", "summarize", "summary_table"]


@dataclass(frozen=True, slots=True)
class PolicySummary:
    """One policy's results over every replayed request.

    Attributes:
        policy: the policy's label.
        requests: requests replayed (rows with status ``ok``).
        failed: requests the policy could not fit (pinned messages over the budget...).
        skipped: malformed records skipped.
        tokens_before: mean input tokens of the original requests.
        tokens_after: mean input tokens of the fitted requests.
        valid_share: share of fitted requests that are valid.
        dropped: messages dropped, in total.
        dropped_by_role: messages dropped per role category.
        cost_before: predicted input cost of the original requests (USD, with caching).
        cost_after: predicted input cost of the fitted requests (USD, with caching).
        cached_share_before: share of the original requests' input tokens served from cache.
        cached_share_after: share of the fitted requests' input tokens served from cache.
        evidence_recall: mean evidence recall over labelled requests (None: none labelled).
        fit_ms_median: median time of one fit, in milliseconds.
    """

    policy: str
    requests: int
    failed: int
    skipped: int
    tokens_before: float
    tokens_after: float
    valid_share: float
    dropped: int
    dropped_by_role: tuple[tuple[str, int], ...]
    cost_before: float
    cost_after: float
    cached_share_before: float
    cached_share_after: float
    evidence_recall: float | None
    fit_ms_median: float


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def _share(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def summarize(table: Any) -> list[PolicySummary]:
    """One :class:`PolicySummary` per policy, in the policies' order."""
    columns = table.to_pydict()
    by_policy: dict[int, list[int]] = {}
    for row, index in enumerate(columns["policy_index"]):
        by_policy.setdefault(index, []).append(row)
    summaries = []
    for _, rows in sorted(by_policy.items()):

        def values(name: str, rows: Sequence[int] = rows) -> list[Any]:
            column = columns[name]
            return [column[row] for row in rows]

        statuses = values("status")
        ok = [row for row, status in zip(rows, statuses, strict=True) if status == "ok"]

        def ok_values(name: str, ok: Sequence[int] = ok) -> list[Any]:
            column = columns[name]
            return [column[row] for row in ok]

        before = ok_values("tokens_before")
        after = ok_values("tokens_after")
        recalls = [value for value in ok_values("evidence_recall") if value is not None]
        dropped_by_role = tuple(
            (category, sum(ok_values(f"dropped_{category}"))) for category in ROLE_CATEGORIES
        )
        summaries.append(
            PolicySummary(
                policy=columns["policy"][rows[0]],
                requests=len(ok),
                failed=sum(status not in ("ok", "skipped") for status in statuses),
                skipped=statuses.count("skipped"),
                tokens_before=_mean(before),
                tokens_after=_mean(after),
                valid_share=_share(sum(ok_values("valid")), len(ok)),
                dropped=sum(count for _, count in dropped_by_role),
                dropped_by_role=dropped_by_role,
                cost_before=sum(ok_values("cost_before_usd")),
                cost_after=sum(ok_values("cost_after_usd")),
                cached_share_before=_share(sum(ok_values("cached_tokens_before")), sum(before)),
                cached_share_after=_share(sum(ok_values("cached_tokens_after")), sum(after)),
                evidence_recall=_mean(recalls) if recalls else None,
                fit_ms_median=statistics.median(ok_values("fit_ms")) if ok else 0.0,
            )
        )
    return summaries


def summary_table(summaries: Sequence[PolicySummary], *, title: str = "Policy replay") -> Table:
    """The per-policy comparison as a rich table: one column per policy, one row per figure."""
    table = Table(title=title, title_justify="left")
    table.add_column("", no_wrap=True)
    for entry in summaries:
        table.add_column(entry.policy, justify="right", no_wrap=True)

    def row(label: str, cells: Sequence[str]) -> None:
        table.add_row(label, *cells)

    row("requests fitted", [f"{entry.requests:,}" for entry in summaries])
    if any(entry.failed for entry in summaries):
        row("failed (cannot fit)", [f"{entry.failed:,}" for entry in summaries])
    if any(entry.skipped for entry in summaries):
        row("skipped (malformed)", [f"{entry.skipped:,}" for entry in summaries])
    row("tokens before (mean)", [f"{entry.tokens_before:,.0f}" for entry in summaries])
    row("tokens after (mean)", [f"{entry.tokens_after:,.0f}" for entry in summaries])
    row("valid histories", [f"{entry.valid_share:.1%}" for entry in summaries])
    for category in ("user", "assistant", "tool", "system"):
        row(
            f"{category} messages dropped",
            [f"{dict(entry.dropped_by_role)[category]:,}" for entry in summaries],
        )
    row("cached input, original", [f"{entry.cached_share_before:.0%}" for entry in summaries])
    row("cached input, fitted", [f"{entry.cached_share_after:.0%}" for entry in summaries])
    row("input cost, original", [f"${entry.cost_before:,.4f}" for entry in summaries])
    row("input cost, fitted", [f"${entry.cost_after:,.4f}" for entry in summaries])
    row(
        "fitted / original cost",
        [
            f"{entry.cost_after / entry.cost_before:.2f}x" if entry.cost_before else "—"
            for entry in summaries
        ],
    )
    row(
        "evidence recall (mean)",
        [
            "—" if entry.evidence_recall is None else f"{entry.evidence_recall:.3f}"
            for entry in summaries
        ],
    )
    row("fit time (median)", [f"{entry.fit_ms_median:.2f} ms" for entry in summaries])
    return table


def skipped_details(table: Any) -> list[str]:
    """The error of every skipped record, once each, in input order."""
    statuses = table.column("status").to_pylist()
    details = table.column("detail").to_pylist()
    found = dict.fromkeys(
        detail for status, detail in zip(statuses, details, strict=True) if status == "skipped"
    )
    return [detail for detail in found if detail is not None]
