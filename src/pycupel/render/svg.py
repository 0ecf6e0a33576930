"""Inline SVG charts: the budget bar of a report and the line charts of a budget sweep.

Every chart is a self-contained ``<svg>`` element (with its namespace, so it is also a valid
standalone ``.svg`` file), sized by its ``viewBox`` so it scales with the page, with a
``<title>`` for assistive technology and tooltips on the data points. All text is escaped.
No scripts, no external references.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from html import escape

from pycupel.render._view import ReportView, allocate

__all__ = ["SweepSeries", "budget_bar_svg", "nice_ticks", "sweep_chart_svg"]

_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
_AXIS = "#6b7280"
_GRID = "#e5e7eb"
_FREE = "#eef0f3"
_RESERVE = "#c9ced6"
_TEXT = "#1f2937"
_LINE_COLORS = ("#2563eb", "#059669", "#d97706", "#7c3aed")


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def _num(value: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


_SVG_NAMESPACE = "http://www.w3.org/2000/svg"


def _open_svg(
    width: int, height: int, title: str, css_class: str, *, standalone: bool
) -> list[str]:
    # The namespace is needed in a .svg file, not inline in HTML (where the page then holds
    # no URL at all).
    namespace = f' xmlns="{_SVG_NAMESPACE}"' if standalone else ""
    return [
        f'<svg{namespace} class="{_attr(css_class)}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'font-family="{_attr(_FONT)}" font-size="12">',
        f"<title>{escape(title)}</title>",
    ]


def budget_bar_svg(view: ReportView, *, width: int = 960, standalone: bool = False) -> str:
    """The budget as a stacked bar: one segment per kind of included item (largest first),
    then the free space and the output reserve, with a marker at ``target_tokens``.

    The bar's full length is ``max_tokens`` (or the tokens used, if a PROCEED overflow went
    beyond it). Made for inline use in HTML; ``standalone`` adds the SVG namespace.
    """
    budget = view.budget
    height = 78
    left, right, top, bar_height = 8, 8, 20, 30
    inner = width - left - right
    scale = max(budget.max_tokens, view.used_tokens)
    title = (
        f"Budget: {view.used_tokens:,} of {budget.target_tokens:,} target tokens used, "
        f"max {budget.max_tokens:,}, output reserve {budget.output_reserve:,}"
    )
    parts = _open_svg(width, height, title, "budget-bar", standalone=standalone)
    if scale <= 0:
        parts.append(
            f'<text x="{left}" y="{top + 20}" fill="{_TEXT}">The budget is 0 tokens.</text>'
        )
        parts.append("</svg>")
        return "\n".join(parts)
    # Exact positions in user units (the SVG scales smoothly; no cell rounding needed), but
    # segments are laid end to end from rounded widths so they never overlap.
    resolution = inner * 4
    kind_widths = allocate([usage.tokens for usage in view.kinds], scale, resolution)
    x = float(left)
    parts.append(
        f'<rect x="{left}" y="{top}" width="{inner}" height="{bar_height}" fill="{_FREE}" '
        f'rx="3"><title>free: {max(scale - view.used_tokens, 0):,} tokens</title></rect>'
    )
    if budget.output_reserve:
        reserve_width = budget.output_reserve / scale * inner
        parts.append(
            f'<rect x="{_num(left + inner - reserve_width)}" y="{top}" '
            f'width="{_num(reserve_width)}" height="{bar_height}" fill="{_RESERVE}">'
            f"<title>output reserve: {budget.output_reserve:,} tokens</title></rect>"
        )
    for usage, cells in zip(view.kinds, kind_widths, strict=True):
        segment = cells / 4
        if segment <= 0:
            continue
        share = usage.tokens / view.used_tokens if view.used_tokens else 0.0
        parts.append(
            f'<rect x="{_num(x)}" y="{top}" width="{_num(segment)}" height="{bar_height}" '
            f'fill="{usage.color}"><title>{escape(usage.kind.value)}: {usage.tokens:,} tokens, '
            f"{usage.items:,} items ({share:.0%} of used)</title></rect>"
        )
        if segment >= 70:
            parts.append(
                f'<text x="{_num(x + 6)}" y="{top + 19}" fill="#ffffff" font-size="11">'
                f"{escape(_fit(usage.kind.value, segment))}</text>"
            )
        x += segment
    target_x = left + budget.target_tokens / scale * inner
    anchor = "end" if target_x > left + inner * 0.8 else "start"
    label_x = target_x - 4 if anchor == "end" else target_x + 4
    parts.append(
        f'<line x1="{_num(target_x)}" y1="{top - 6}" x2="{_num(target_x)}" '
        f'y2="{top + bar_height + 6}" stroke="{_TEXT}" stroke-width="2"/>'
    )
    parts.append(
        f'<text x="{_num(label_x)}" y="{top - 8}" text-anchor="{anchor}" fill="{_TEXT}" '
        f'font-weight="600">target {budget.target_tokens:,}</text>'
    )
    parts.append(
        f'<text x="{left}" y="{top + bar_height + 20}" fill="{_AXIS}">0</text>'
        f'<text x="{left + inner}" y="{top + bar_height + 20}" text-anchor="end" '
        f'fill="{_AXIS}">max {budget.max_tokens:,}</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts)


def _fit(label: str, width: float) -> str:
    # About 6.5 user units per character at font-size 11.
    room = int((width - 12) / 6.5)
    return label if len(label) <= room else label[: max(room - 1, 0)] + "…"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values (1, 2, 2.5 or 5 times a power of ten) covering
    ``[low, high]``; the first tick is <= low and the last >= high."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0, 1.0]
    if high < low:
        low, high = high, low
    if high == low:
        high = low + 1.0
    raw = (high - low) / max(count - 1, 1)
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * magnitude >= raw)
    start = math.floor(low / step) * step
    ticks = []
    value = start
    while value < high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 10))
    return ticks


def _y_position(value: float, *, top: float, height: float, low: float, high: float) -> float:
    """The y coordinate of ``value`` in a panel spanning ``[low, high]`` upwards."""
    return top + height - (value - low) / (high - low) * height


def _tick_label(value: float) -> str:
    if abs(value) >= 10_000 and value == int(value):
        return f"{value / 1000:g}k"
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:g}"


@dataclass(frozen=True, slots=True)
class SweepSeries:
    """One panel of a sweep chart: a y value per budget.

    Attributes:
        title: the panel's heading (``"Tokens used"``).
        values: one value per budget, in the budgets' order.
        reference: an optional dashed line, one value per budget (the target tokens, say).
        reference_label: what the dashed line is.
    """

    title: str
    values: Sequence[float]
    reference: Sequence[float] | None = None
    reference_label: str = ""


def sweep_chart_svg(
    budgets: Sequence[int],
    series: Sequence[SweepSeries],
    *,
    title: str = "Budget sweep",
    width: int = 960,
    panel_height: int = 200,
    standalone: bool = True,
) -> str:
    """Line charts over the budgets, one panel per series, sharing the x axis (tokens).

    Each point has a tooltip with its budget and value. Budgets need not be evenly spaced;
    the x axis is linear in tokens. ``standalone`` adds the SVG namespace (for a ``.svg``
    file; an inline chart in HTML needs none).
    """
    left, right, top_gap, bottom = 64, 28, 34, 38
    height = len(series) * (panel_height + top_gap) + bottom
    parts = _open_svg(width, height, title, "sweep-chart", standalone=standalone)
    if not budgets or not series:
        parts.append(f'<text x="{left}" y="40" fill="{_TEXT}">No budgets to chart.</text></svg>')
        return "\n".join(parts)
    x_ticks = nice_ticks(min(budgets), max(budgets), 8)
    x_low, x_high = x_ticks[0], x_ticks[-1]
    inner_width = width - left - right

    def x_of(value: float) -> float:
        return left + (value - x_low) / (x_high - x_low) * inner_width

    for index, panel in enumerate(series):
        color = _LINE_COLORS[index % len(_LINE_COLORS)]
        top = index * (panel_height + top_gap) + top_gap
        plot_height = panel_height - 14
        finite = [v for v in panel.values if math.isfinite(v)]
        finite += [v for v in panel.reference or () if math.isfinite(v)]
        y_ticks = nice_ticks(min([0.0, *finite]), max([0.0, *finite]) or 1.0)
        y_low, y_high = y_ticks[0], y_ticks[-1]

        y_of = partial(_y_position, top=top, height=plot_height, low=y_low, high=y_high)

        parts.append(
            f'<text x="{left}" y="{top - 12}" fill="{_TEXT}" font-weight="600" '
            f'font-size="13">{escape(panel.title)}</text>'
        )
        for tick in y_ticks:
            y = _num(y_of(tick))
            parts.append(
                f'<line x1="{left}" y1="{y}" x2="{left + inner_width}" y2="{y}" '
                f'stroke="{_GRID}"/><text x="{left - 8}" y="{y}" dy="4" text-anchor="end" '
                f'fill="{_AXIS}">{_tick_label(tick)}</text>'
            )
        for tick in x_ticks:
            x = _num(x_of(tick))
            parts.append(
                f'<line x1="{x}" y1="{_num(top)}" x2="{x}" y2="{_num(top + plot_height)}" '
                f'stroke="{_GRID}"/>'
            )
        if panel.reference is not None:
            points = " ".join(
                f"{_num(x_of(b))},{_num(y_of(v))}"
                for b, v in zip(budgets, panel.reference, strict=True)
                if math.isfinite(v)
            )
            parts.append(
                f'<polyline points="{points}" fill="none" stroke="{_AXIS}" '
                f'stroke-dasharray="5 4" stroke-width="1.5"/>'
            )
            if panel.reference_label:
                parts.append(
                    f'<text x="{left + inner_width}" y="{top - 12}" text-anchor="end" '
                    f'fill="{_AXIS}">- - {escape(panel.reference_label)}</text>'
                )
        pairs = [(b, v) for b, v in zip(budgets, panel.values, strict=True) if math.isfinite(v)]
        points = " ".join(f"{_num(x_of(b))},{_num(y_of(v))}" for b, v in pairs)
        parts.append(
            f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2.5" '
            f'stroke-linejoin="round"/>'
        )
        for budget, value in pairs:
            parts.append(
                f'<circle cx="{_num(x_of(budget))}" cy="{_num(y_of(value))}" r="3.5" '
                f'fill="{color}"><title>budget {budget:,}: {escape(panel.title.lower())} '
                f"{_tick_label(round(value, 3))}</title></circle>"
            )
        axis_y = _num(top + plot_height)
        parts.append(
            f'<line x1="{left}" y1="{axis_y}" x2="{left + inner_width}" y2="{axis_y}" '
            f'stroke="{_AXIS}"/>'
        )
        for tick in x_ticks:
            parts.append(
                f'<text x="{_num(x_of(tick))}" y="{_num(top + plot_height + 16)}" '
                f'text-anchor="middle" fill="{_AXIS}">{_tick_label(tick)}</text>'
            )
    parts.append(
        f'<text x="{left + inner_width / 2:.0f}" y="{height - 6}" text-anchor="middle" '
        f'fill="{_AXIS}">budget (tokens)</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts)
