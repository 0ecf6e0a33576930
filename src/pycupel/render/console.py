"""A selection report for the terminal, as rich renderables.

* :class:`BudgetBar` — the budget as one bar: a coloured segment per kind of included item, the
  free space up to ``max_tokens`` and the output reserve at its end, with a mark at
  ``target_tokens`` and a legend.
* :class:`ItemTable` — every candidate: included items in placed order (with their position),
  then excluded items by score, each with kind, tokens, score, reason (with the reason's data,
  ``BudgetExceeded: 900 tokens, 120 available``) and a one-line content preview.
* :func:`render_report` — headline, bar, table and a summary of the exclusions, together;
  for a chat fit, the reason column says why each unit is in or out in words (its
  :class:`~pycupel.diagnostics.Why`), and the excerpts kept of long units are listed below
  the table, run by run and gap by gap (with each gap's recall ref when there is one).

The renderables adapt to the console's width and print with any :class:`rich.console.Console`,
including a recording one (``Console(record=True, width=100)``, then ``export_text()``).
"""

from __future__ import annotations

from collections.abc import Iterator

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.table import Table
from rich.text import Text

from pycupel.diagnostics import SelectionReport
from pycupel.model import ContextBudget, ContextItem
from pycupel.render._view import (
    ItemRow,
    ReportView,
    allocate,
    format_score,
    kind_color,
    message_label,
    preview,
    view_report,
)

__all__ = ["BudgetBar", "ItemTable", "render_report", "report_headline"]

_BAR_MAX_WIDTH = 100
_FREE_STYLE = "grey62"
_RESERVE_STYLE = "grey42"
_INCLUDED_STYLE = "green"
_EXCLUDED_STYLE = "red"
_REASON_STYLE = "yellow"
_MIN_CONTENT = 16
_MAX_REASON = 52
_EXCERPT_PARTS = 12
"""Runs and gaps listed per excerpt below the table (the HTML page lists them all)."""
_POSITION_MIN = 2
_FATE_WIDTH = 3


class BudgetBar:
    """The budget as a bar with a segment per kind; see the module documentation.

    Args:
        view: the report view (:func:`~pycupel.render._view.view_report`).
        width: the bar's width in cells; by default the console's width, at most 100.
    """

    def __init__(self, view: ReportView, *, width: int | None = None) -> None:
        self._view = view
        self._width = width

    @classmethod
    def of(cls, report: SelectionReport, budget: ContextBudget) -> BudgetBar:
        """The bar of ``report``, a run at ``budget``."""
        return cls(view_report(report, budget))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        view = self._view
        budget = view.budget
        width = self._width or min(options.max_width, _BAR_MAX_WIDTH)
        yield _budget_line(view)
        scale = max(budget.max_tokens, view.used_tokens)
        if scale <= 0 or width < 10:
            return
        kind_cells = allocate([usage.tokens for usage in view.kinds], scale, width)
        used_cells = sum(kind_cells)
        reserve_cells = min(allocate([budget.output_reserve], scale, width)[0], width - used_cells)
        free_cells = width - used_cells - reserve_cells
        bar = Text()
        for usage, cells in zip(view.kinds, kind_cells, strict=True):
            bar.append("█" * cells, style=usage.color)
        bar.append("░" * free_cells, style=_FREE_STYLE)
        bar.append("▒" * reserve_cells, style=_RESERVE_STYLE)
        yield bar
        yield _marker_line(budget.target_tokens, scale, width)
        yield from _legend(view, reserve=reserve_cells > 0, width=options.max_width)


def _budget_line(view: ReportView) -> Text:
    budget = view.budget
    line = Text("Budget ", style="bold")
    line.append(f"{view.used_tokens:,}", style="bold")
    line.append(f" of {budget.target_tokens:,} target tokens used")
    share = view.target_share
    if share is not None:
        line.append(f" ({share:.0%})")
    line.append(f" · max {budget.max_tokens:,}")
    if budget.output_reserve:
        line.append(f" · output reserve {budget.output_reserve:,}")
    if budget.reserved_tokens:
        line.append(f" · reserved slots {budget.reserved_tokens:,}")
    if budget.estimation_safety_margin_percent:
        line.append(f" · safety margin {budget.estimation_safety_margin_percent:g}%")
    return line


def _marker_line(target: int, scale: int, width: int) -> Text:
    """A ``▲`` under the cell where the target falls, labelled on whichever side fits."""
    column = min(allocate([target], scale, width)[0], width - 1)
    label = f"target {target:,}"
    if column + 2 + len(label) <= width:
        return Text(" " * column + "▲ " + label, style="bold")
    start = max(column - len(label) - 1, 0)
    return Text(" " * start + label + " ▲", style="bold")


def _legend(view: ReportView, *, reserve: bool, width: int) -> Iterator[Text]:
    """Legend entries packed into lines, never breaking inside an entry."""
    entries: list[Text] = []
    for usage in view.kinds:
        plural = "" if usage.items == 1 else "s"
        entry = Text("■ ", style=usage.color)
        entry.append(f"{usage.kind.value} {usage.tokens:,} ({usage.items} item{plural})")
        entries.append(entry)
    entries.append(Text("░", style=_FREE_STYLE) + Text(" free"))
    if reserve:
        entries.append(Text("▒", style=_RESERVE_STYLE) + Text(" output reserve"))
    line = Text()
    for entry in entries:
        if line and len(line) + 2 + len(entry) > width:
            yield line
            line = Text()
        if line:
            line.append("  ")
        line.append_text(entry)
    if line:
        yield line


class ItemTable:
    """Every candidate with its fate; see the module documentation.

    Args:
        view: the report view.
        max_rows: show at most this many included and this many excluded rows (None: all);
            a caption says how many were left out.
    """

    def __init__(self, view: ReportView, *, max_rows: int | None = None) -> None:
        self._view = view
        self._max_rows = max_rows

    @classmethod
    def of(
        cls, report: SelectionReport, budget: ContextBudget, *, max_rows: int | None = None
    ) -> ItemTable:
        """The table of ``report``, a run at ``budget``."""
        return cls(view_report(report, budget), max_rows=max_rows)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Table]:
        yield self._table(options.max_width)

    def _table(self, width: int) -> Table:
        view = self._view
        limit = self._max_rows
        included = view.included if limit is None else view.included[:limit]
        excluded = view.excluded if limit is None else view.excluded[:limit]
        shown = included + excluded
        position_width = max(_POSITION_MIN, len(str(len(view.included))))
        kind_width = max(4, max((len(row.item.kind.value) for row in shown), default=4))
        tokens_width = max(6, max((len(f"{row.item.tokens:,}") for row in shown), default=6))
        score_width = max(5, max((len(format_score(row.score)) for row in shown), default=5))
        # Padding takes two cells per column and a separator one between columns. The reason
        # and the content share the rest: the reason (the point of the table) comes first, the
        # content keeps a short preview.
        rest = width - (position_width + _FATE_WIDTH + kind_width + tokens_width + score_width)
        rest -= 7 * 2 + 6
        longest_reason = max((len(row.reason_text) for row in shown), default=6)
        longest_content = max((len(preview(row.item.content, width)) for row in shown), default=0)
        content_need = min(_MIN_CONTENT, longest_content)
        reason_width = max(10, min(_MAX_REASON, longest_reason, rest - content_need))
        content_width = max(_MIN_CONTENT, rest - reason_width)

        table = Table(
            title="Candidates",
            title_justify="left",
            title_style="bold",
            caption_justify="left",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            expand=True,
        )
        table.add_column("#", justify="right", style="dim", no_wrap=True, min_width=position_width)
        table.add_column("", no_wrap=True, min_width=_FATE_WIDTH)
        table.add_column("kind", no_wrap=True, min_width=max(kind_width, 4))
        table.add_column("tokens", justify="right", no_wrap=True, min_width=tokens_width)
        table.add_column("score", justify="right", no_wrap=True, min_width=score_width)
        # A reason too long for its column wraps: its data matters more than one line.
        table.add_column("reason", overflow="fold", min_width=10, max_width=reason_width)
        table.add_column("content", no_wrap=True, overflow="ellipsis", ratio=1)
        for row in included:
            table.add_row(*_cells(row, content_width))
        if included and excluded:
            table.add_section()
        for row in excluded:
            table.add_row(*_cells(row, content_width))
        hidden_included = len(view.included) - len(included)
        hidden_excluded = len(view.excluded) - len(excluded)
        if hidden_included or hidden_excluded:
            parts = []
            if hidden_included:
                parts.append(f"{hidden_included:,} more included")
            if hidden_excluded:
                parts.append(f"{hidden_excluded:,} more excluded")
            table.caption = f"Not shown: {' and '.join(parts)} items."
        return table


def _cells(row: ItemRow, content_width: int) -> tuple[Text | str, ...]:
    item = row.item
    fate = Text("in", style=_INCLUDED_STYLE) if row.included else Text("out", style=_EXCLUDED_STYLE)
    reason = Text(row.reason_text, style="" if row.included else _REASON_STYLE)
    return (
        "" if row.position is None else str(row.position),
        fate,
        Text(item.kind.value, style=kind_color(item.kind)),
        f"{item.tokens:,}",
        format_score(row.score),
        reason,
        _content_cell(item, content_width),
    )


def _content_cell(item: ContextItem, width: int) -> Text | str:
    """The content preview, led by the message indices of a history's item (dimmed)."""
    label = message_label(item)
    if not label:
        return preview(item.content, width)
    cell = Text(label, style="dim")
    cell.append(" " + preview(item.content, max(width - len(label) - 1, 0)))
    return cell


def report_headline(view: ReportView) -> Text:
    """``Included 12 of 20 items (1,150 tokens); excluded 8 (3,400 tokens).``"""
    line = Text()
    line.append(f"Included {len(view.included):,}", style=f"bold {_INCLUDED_STYLE}")
    line.append(f" of {view.total_candidates:,} items ({view.used_tokens:,} tokens); ")
    line.append(f"excluded {len(view.excluded):,}", style=f"bold {_EXCLUDED_STYLE}")
    line.append(f" ({view.excluded_tokens:,} tokens).")
    return line


def _exclusion_summary(view: ReportView) -> Text:
    if not view.reasons:
        return Text("Nothing was excluded.")
    line = Text("Exclusions: ")
    for index, count in enumerate(view.reasons):
        if index:
            line.append(", ")
        line.append(count.reason, style=_REASON_STYLE)
        plural = "" if count.items == 1 else "s"
        line.append(f" {count.items:,} item{plural} ({count.tokens:,} tokens)")
    line.append(".")
    return line


def _excerpts(view: ReportView) -> Iterator[RenderableType]:
    """The kept runs and elided gaps of every excerpt in the window, a row per excerpt."""
    rows = [row for row in view.included if row.parts]
    if not rows:
        return
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column()
    for row in rows:
        line = Text()
        shown = row.parts[:_EXCERPT_PARTS]
        for index, part in enumerate(shown):
            if index:
                line.append("; ")
            line.append(part.describe(), style="" if part.kept else _REASON_STYLE)
        hidden = len(row.parts) - len(shown)
        if hidden:
            line.append(f"; and {hidden:,} more")
        grid.add_row(message_label(row.item) or f"#{row.position}", line)
    yield Text("Excerpts, by lines of the original text:", style="bold")
    yield grid


def render_report(
    report: SelectionReport, budget: ContextBudget, *, max_rows: int | None = None
) -> RenderableType:
    """The whole report: headline, budget bar, item table and exclusion summary.

    Args:
        report: the run's selection report.
        budget: the budget of the run (the report does not hold it).
        max_rows: see :class:`ItemTable`.
    """
    view = view_report(report, budget)
    parts: list[RenderableType] = [
        report_headline(view),
        Text(),
        BudgetBar(view),
        Text(),
        ItemTable(view, max_rows=max_rows),
        *_excerpts(view),
        _exclusion_summary(view),
    ]
    if view.shortfalls:
        parts.append(
            Text("Unmet count requirements: " + "; ".join(view.shortfalls) + ".", style="bold")
        )
    if view.token_shortfalls:
        parts.append(
            Text(
                "Unmet token requirements: " + "; ".join(view.token_shortfalls) + ".",
                style="bold",
            )
        )
    return Group(*parts)
