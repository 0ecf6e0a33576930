"""A budget sweep as rows, a terminal table and chart series.

The rows come from the points of :func:`pycupel.analytics.simulation.sweep_budgets` (any object
with the same attributes will do: see :class:`SweepPointLike`). Each row compares its
selection with the previous row's, by item identity, to say which items a larger budget added
(and, for slicers whose selection is not monotonic in the budget, which it dropped).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rich import box
from rich.table import Table

from pycupel.model import ContextBudget, ContextItem
from pycupel.render.svg import SweepSeries, sweep_chart_svg

__all__ = [
    "SweepPointLike",
    "SweepRow",
    "sweep_chart",
    "sweep_rows",
    "sweep_series",
    "sweep_table",
]


class SweepPointLike(Protocol):
    """What a sweep row is made from (the attributes of ``SweepPoint``)."""

    @property
    def budget(self) -> ContextBudget: ...

    @property
    def selected(self) -> tuple[ContextItem, ...]: ...

    @property
    def tokens_used(self) -> int: ...

    @property
    def total_score(self) -> float: ...

    @property
    def feasible(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class SweepRow:
    """One budget of a sweep.

    Attributes:
        budget: the run's budget.
        items: how many items were selected.
        tokens_used: their tokens.
        total_score: the sum of their scores.
        added: items selected here but not at the previous budget (None for the first row).
        removed: items selected at the previous budget but not here (None for the first row).
        feasible: False when the pinned items alone do not fit this budget.
    """

    budget: ContextBudget
    items: int
    tokens_used: int
    total_score: float
    added: int | None
    removed: int | None
    feasible: bool

    @property
    def utilisation(self) -> float | None:
        """``tokens_used / target_tokens``; None for a zero target."""
        target = self.budget.target_tokens
        return self.tokens_used / target if target else None

    @property
    def change_text(self) -> str:
        """``"+3"``, ``"+3 −1"`` or ``""`` (first row)."""
        if self.added is None or self.removed is None:
            return ""
        text = f"+{self.added:,}"
        if self.removed:
            text += f" −{self.removed:,}"
        return text


def sweep_rows(points: Sequence[SweepPointLike]) -> list[SweepRow]:
    """One row per point, in the points' order."""
    rows: list[SweepRow] = []
    previous: set[int] | None = None
    for point in points:
        current = {id(item) for item in point.selected}
        added = removed = None
        if previous is not None:
            added = len(current - previous)
            removed = len(previous - current)
        rows.append(
            SweepRow(
                budget=point.budget,
                items=len(point.selected),
                tokens_used=point.tokens_used,
                total_score=point.total_score,
                added=added,
                removed=removed,
                feasible=point.feasible,
            )
        )
        previous = current
    return rows


def _budget_text(budget: ContextBudget) -> str:
    if budget.target_tokens == budget.max_tokens:
        return f"{budget.max_tokens:,}"
    return f"{budget.target_tokens:,} / {budget.max_tokens:,}"


def sweep_table(rows: Sequence[SweepRow]) -> Table:
    """The sweep as a terminal table: budget, items, tokens used, utilisation, total score,
    change against the previous budget."""
    table = Table(
        title="Budget sweep", title_justify="left", title_style="bold", box=box.SIMPLE_HEAD
    )
    table.add_column("budget", justify="right", no_wrap=True)
    table.add_column("items", justify="right", no_wrap=True)
    table.add_column("tokens used", justify="right", no_wrap=True)
    table.add_column("utilisation", justify="right", no_wrap=True)
    table.add_column("total score", justify="right", no_wrap=True)
    table.add_column("added", justify="right", no_wrap=True)
    for row in rows:
        if not row.feasible:
            table.add_row(
                _budget_text(row.budget), "—", "—", "—", "—", "pinned items do not fit", style="red"
            )
            continue
        share = row.utilisation
        table.add_row(
            _budget_text(row.budget),
            f"{row.items:,}",
            f"{row.tokens_used:,}",
            "—" if share is None else f"{share:.1%}",
            f"{row.total_score:.3f}",
            row.change_text,
        )
    return table


def sweep_series(rows: Sequence[SweepRow]) -> list[SweepSeries]:
    """The chart panels of a sweep: tokens used (with the target as reference), items
    selected, total score. Budgets where the pinned items do not fit are left out."""
    shown = [row for row in rows if row.feasible]
    return [
        SweepSeries(
            "Tokens used",
            [float(row.tokens_used) for row in shown],
            reference=[float(row.budget.target_tokens) for row in shown],
            reference_label="target tokens",
        ),
        SweepSeries("Items selected", [float(row.items) for row in shown]),
        SweepSeries("Total score", [row.total_score for row in shown]),
    ]


def sweep_chart(
    rows: Sequence[SweepRow], *, title: str = "Budget sweep", standalone: bool = True
) -> str:
    """The sweep's line charts as one SVG (x axis: ``max_tokens``): a standalone document by
    default, or an element for inline use in HTML."""
    budgets = [row.budget.max_tokens for row in rows if row.feasible]
    return sweep_chart_svg(budgets, sweep_series(rows), title=title, standalone=standalone)
