"""Readable selection reports: rich renderables for the terminal, self-contained HTML pages
and SVG charts.

* :func:`~pycupel.render.console.render_report`, :class:`~pycupel.render.console.BudgetBar`,
  :class:`~pycupel.render.console.ItemTable` — a report in the terminal.
* :func:`~pycupel.render.html.report_html` — a report as one HTML page.
* :func:`~pycupel.render.html.sweep_html`, :func:`~pycupel.render.sweep.sweep_chart`,
  :func:`~pycupel.render.sweep.sweep_table` — a budget sweep as a page, an SVG, a table.

Each module loads on first use of one of its names: a terminal report never loads the HTML
renderer.
"""

from typing import TYPE_CHECKING

from pycupel._lazy import lazy_attributes

if TYPE_CHECKING:
    from pycupel.render.console import BudgetBar, ItemTable, render_report
    from pycupel.render.html import report_html, sweep_html
    from pycupel.render.sweep import SweepRow, sweep_chart, sweep_rows, sweep_table

__all__ = [
    "BudgetBar",
    "ItemTable",
    "SweepRow",
    "render_report",
    "report_html",
    "sweep_chart",
    "sweep_html",
    "sweep_rows",
    "sweep_table",
]

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "BudgetBar": "pycupel.render.console",
        "ItemTable": "pycupel.render.console",
        "render_report": "pycupel.render.console",
        "report_html": "pycupel.render.html",
        "sweep_html": "pycupel.render.html",
        "SweepRow": "pycupel.render.sweep",
        "sweep_chart": "pycupel.render.sweep",
        "sweep_rows": "pycupel.render.sweep",
        "sweep_table": "pycupel.render.sweep",
    },
    __all__,
)
