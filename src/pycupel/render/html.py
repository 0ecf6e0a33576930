"""Self-contained HTML pages: a selection report, and a budget sweep.

Each page is one HTML5 document with its CSS inline and its charts as inline SVG: no network
assets, nothing to install, readable offline and printable. Everything taken from the input
(contents, kinds, reasons, file names, settings) is HTML-escaped. The content is complete
without JavaScript: the fate filter is pure CSS (radio buttons), and long contents fold into
``<details>`` elements. A chat fit's rows say why each unit is in or out in words beside the
specification's reason (its :class:`~pycupel.diagnostics.Why`), and an excerpt's row folds
the list of its kept runs and elided gaps (with their recall refs). The page stays small
whatever the input: an item's content beyond 4,000 characters keeps its head and tail around
a note of how much was left out (characters and size), and the page embeds at most 2,000,000
characters of content in all (later rows keep their one-line preview and say why). A few
lines of inline script only add sorting by a column's header and a text filter; without
script those controls simply do not appear.

The output is deterministic: the same report gives the same bytes (no timestamps).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from pycupel import __version__
from pycupel.diagnostics import SelectionReport
from pycupel.model import ContextBudget
from pycupel.render._view import (
    ItemRow,
    ReportView,
    format_score,
    kind_color,
    message_label,
    preview,
    view_report,
)
from pycupel.render.svg import budget_bar_svg
from pycupel.render.sweep import SweepRow, sweep_chart

__all__ = ["report_html", "sweep_html"]

_SHORT_CONTENT = 160  # longer contents show a preview and fold the full text
_ITEM_TEXT_LIMIT = 4_000
"""Characters of one item's content embedded in the page; a longer one keeps its head and
tail around a note of what was left out and its size."""
_HEAD_SHARE = 3 / 4
"""Share of :data:`_ITEM_TEXT_LIMIT` given to the head of a cut content (the rest: its tail)."""
_PAGE_TEXT_LIMIT = 2_000_000
"""Characters of content embedded in the whole page; past it, rows show their preview only."""
_PARTS_LIMIT = 200
"""Runs and gaps listed per excerpt; a longer list ends with how many more there are."""

_CSS = """
:root { --fg: #1f2937; --muted: #6b7280; --line: #e5e7eb; --bg: #f7f8fa; --card: #ffffff;
  --in: #15803d; --in-bg: #dcfce7; --out: #b91c1c; --out-bg: #fee2e2; --accent: #2563eb; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header, main { max-width: 1280px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 24px; }
h1 { font-size: 1.6rem; margin: 0 0 4px; }
h2 { font-size: 1.15rem; margin: 0 0 12px; }
.meta { color: var(--muted); margin: 0; overflow-wrap: anywhere; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 18px 20px; margin: 18px 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(210px, 1fr)); gap: 12px;
  background: none; border: 0; padding: 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 14px 16px; }
.card .label { display: block; color: var(--muted); font-size: .85rem; }
.card .value { display: block; font-size: 1.6rem; font-weight: 650; }
.card .sub { display: block; color: var(--muted); font-size: .85rem; }
dl.settings { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
dl.settings dt { color: var(--muted); }
dl.settings dd { margin: 0; overflow-wrap: anywhere; }
svg { max-width: 100%; height: auto; display: block; }
svg.budget-bar, svg.sweep-chart { width: 100%; }
ul.legend { list-style: none; padding: 0; margin: 10px 0 0; display: flex; flex-wrap: wrap;
  gap: 6px 20px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 3px;
  margin-right: 6px; vertical-align: -1px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted);
  background: var(--card); position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.table-wrap { overflow-x: auto; }
tr.excluded td { background: #fffafa; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: .8rem;
  font-weight: 600; white-space: nowrap; }
.badge.in { color: var(--in); background: var(--in-bg); }
.badge.out { color: var(--out); background: var(--out-bg); }
.kind { white-space: nowrap; }
.reason { white-space: nowrap; font-weight: 600; }
.detail { display: block; color: var(--muted); font-size: .85rem; }
.why { display: block; font-size: .9rem; min-width: 16em; }
ol.parts { margin: 4px 0 0; padding-left: 1.4em; font-size: .85rem; }
ol.parts li.elided-part { color: var(--muted); }
td.content { max-width: 640px; overflow-wrap: anywhere; }
details summary { cursor: pointer; }
details .full { white-space: pre-wrap; margin-top: 6px; padding: 8px 10px; background: var(--bg);
  border-radius: 6px; font-size: .9rem; }
.msgs { color: var(--muted); font-size: .85rem; white-space: nowrap; }
.elided { display: block; margin: 6px 0; color: var(--muted); font-style: italic; }
.pinned { color: var(--muted); font-size: .8rem; }
.filters { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin-bottom: 12px; }
input.fate { position: absolute; opacity: 0; pointer-events: none; }
.filters label { border: 1px solid var(--line); border-radius: 999px; padding: 3px 12px;
  cursor: pointer; user-select: none; }
#fate-all:checked ~ .filters label[for=fate-all],
#fate-included:checked ~ .filters label[for=fate-included],
#fate-excluded:checked ~ .filters label[for=fate-excluded] { background: var(--accent);
  color: #fff; border-color: var(--accent); }
#fate-all:focus-visible ~ .filters label[for=fate-all],
#fate-included:focus-visible ~ .filters label[for=fate-included],
#fate-excluded:focus-visible ~ .filters label[for=fate-excluded] {
  outline: 2px solid var(--accent); outline-offset: 2px; }
.filters input[type=search] { margin-left: auto; padding: 4px 10px; border: 1px solid var(--line);
  border-radius: 6px; min-width: 220px; font: inherit; }
#fate-included:checked ~ .table-wrap tr.excluded,
#fate-excluded:checked ~ .table-wrap tr.included { display: none; }
th[data-sort] { cursor: pointer; }
th[aria-sort=ascending]::after { content: " \\25B2"; }
th[aria-sort=descending]::after { content: " \\25BC"; }
footer { max-width: 1280px; margin: 0 auto; padding: 0 24px 32px; color: var(--muted);
  font-size: .85rem; }
@media print { .filters { display: none; } section { break-inside: avoid; } }
"""

# Sorting by a header (numbers by their data-v value, text by its text) and a text filter.
# Optional: without script the table is complete and the CSS fate filter still works.
_SCRIPT = """
(function () {
  var table = document.getElementById("items");
  if (!table) { return; }
  var body = table.tBodies[0];
  var search = document.getElementById("item-search");
  search.hidden = false;
  search.addEventListener("input", function () {
    var needle = search.value.toLowerCase();
    Array.prototype.forEach.call(body.rows, function (row) {
      row.hidden = needle !== "" && row.textContent.toLowerCase().indexOf(needle) < 0;
    });
  });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
    if (!th.hasAttribute("data-sort")) { return; }
    th.tabIndex = 0;
    var sort = function () {
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(th.parentNode.cells, function (c) {
        c.removeAttribute("aria-sort");
      });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      var numeric = th.getAttribute("data-sort") === "number";
      var key = function (row) {
        var cell = row.cells[column];
        return numeric ? parseFloat(cell.getAttribute("data-v")) : cell.textContent.trim();
      };
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (numeric) {
          if (isNaN(x)) { return isNaN(y) ? 0 : 1; }
          if (isNaN(y)) { return -1; }
        }
        var order = x < y ? -1 : x > y ? 1 : 0;
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    };
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sort(); }
    });
  });
})();
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _page(title: str, subtitle: str, body: Sequence[str], *, script: bool) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="generator" content="pycupel">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<header>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="meta">{_e(subtitle)}</p>' if subtitle else "",
        "</header>",
        "<main>",
        *body,
        "</main>",
        f"<footer>Generated by pycupel {_e(__version__)}.</footer>",
    ]
    if script:
        parts.append(f"<script>{_SCRIPT}</script>")
    parts += ["</body>", "</html>", ""]
    return "\n".join(part for part in parts if part)


def _card(label: str, value: str, sub: str = "") -> str:
    sub_html = f'<span class="sub">{_e(sub)}</span>' if sub else ""
    return (
        f'<div class="card"><span class="label">{_e(label)}</span>'
        f'<span class="value">{_e(value)}</span>{sub_html}</div>'
    )


def _settings(settings: Mapping[str, str]) -> str:
    if not settings:
        return ""
    rows = "".join(f"<dt>{_e(key)}</dt><dd>{_e(value)}</dd>" for key, value in settings.items())
    return '<section aria-labelledby="settings-h"><h2 id="settings-h">Run</h2>' + (
        f'<dl class="settings">{rows}</dl></section>'
    )


def _budget_cards(view: ReportView) -> str:
    budget = view.budget
    share = view.target_share
    used_sub = f"of {budget.target_tokens:,} target tokens"
    if share is not None:
        used_sub += f" ({share:.0%})"
    limits = f"output reserve {budget.output_reserve:,}"
    if budget.reserved_tokens:
        limits += f", reserved slots {budget.reserved_tokens:,}"
    if budget.estimation_safety_margin_percent:
        limits += f", safety margin {budget.estimation_safety_margin_percent:g}%"
    cards = [
        _card("Tokens used", f"{view.used_tokens:,}", used_sub),
        _card("Budget (max tokens)", f"{budget.max_tokens:,}", limits),
        _card(
            "Included",
            f"{len(view.included):,}",
            f"of {view.total_candidates:,} candidates",
        ),
        _card(
            "Excluded",
            f"{len(view.excluded):,}",
            f"{view.excluded_tokens:,} tokens left out",
        ),
    ]
    return f'<section class="cards" aria-label="Totals">{"".join(cards)}</section>'


def _kind_section(view: ReportView) -> str:
    legend = []
    for usage in view.kinds:
        share = usage.tokens / view.used_tokens if view.used_tokens else 0.0
        plural = "" if usage.items == 1 else "s"
        legend.append(
            f'<li><span class="swatch" style="background:{_e(usage.color)}"></span>'
            f"<strong>{_e(usage.kind.value)}</strong> {usage.tokens:,} tokens · "
            f"{usage.items:,} item{plural} ({share:.0%})</li>"
        )
    free = max(view.budget.max_tokens - view.used_tokens - view.budget.output_reserve, 0)
    legend.append(
        f'<li><span class="swatch" style="background:#eef0f3;border:1px solid #d1d5db">'
        f"</span>free {free:,} tokens</li>"
    )
    if view.budget.output_reserve:
        legend.append(
            '<li><span class="swatch" style="background:#c9ced6"></span>'
            f"output reserve {view.budget.output_reserve:,} tokens</li>"
        )
    return (
        '<section aria-labelledby="kinds-h"><h2 id="kinds-h">Budget used per kind</h2>'
        f"{budget_bar_svg(view)}"
        f'<ul class="legend">{"".join(legend)}</ul></section>'
    )


def _reasons_section(view: ReportView) -> str:
    if not view.reasons:
        body = "<p>Nothing was excluded.</p>"
    else:
        rows = "".join(
            f'<tr><td class="reason">{_e(count.reason)}</td><td class="num">{count.items:,}</td>'
            f'<td class="num">{count.tokens:,}</td></tr>'
            for count in view.reasons
        )
        body = (
            '<div class="table-wrap"><table class="reasons"><thead><tr><th>Reason</th>'
            '<th class="num">Items</th><th class="num">Tokens</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></div>"
        )
    if view.shortfalls:
        items = "".join(f"<li>{_e(text)}</li>" for text in view.shortfalls)
        body += f"<p><strong>Unmet count requirements:</strong></p><ul>{items}</ul>"
    if view.token_shortfalls:
        items = "".join(f"<li>{_e(text)}</li>" for text in view.token_shortfalls)
        body += f"<p><strong>Unmet token requirements:</strong></p><ul>{items}</ul>"
    return (
        '<section aria-labelledby="reasons-h"><h2 id="reasons-h">Why items were left out</h2>'
        f"{body}</section>"
    )


class _TextBudget:
    """The characters of content the page may still embed (:data:`_PAGE_TEXT_LIMIT`)."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def take(self, wanted: int) -> int:
        granted = min(wanted, self.left)
        self.left -= granted
        return granted


def _size(text: str) -> str:
    """The UTF-8 size of ``text`` in words (``812 bytes``, ``4.2 KB``, ``5.6 MB``)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size < 1_000:
        return f"{size:,} bytes"
    if size < 1_000_000:
        return f"{size / 1_000:.1f} KB"
    return f"{size / 1_000_000:.1f} MB"


def _content_cell(text: str, budget: _TextBudget, label: str = "") -> str:
    """The content of a row: whole when short, else a preview folding the (capped) text; led
    by the messages a history's item holds (``msgs 4-5 (placeholder)``)."""
    lead = f'<span class="msgs">{_e(label)}</span> ' if label else ""
    flat = " ".join(text[: _SHORT_CONTENT * 4 + 64].split())
    if len(text) <= _SHORT_CONTENT and flat == text:
        budget.take(len(text))
        return f'<td class="content">{lead}{_e(text)}</td>'
    room = budget.take(min(len(text), _ITEM_TEXT_LIMIT))
    if room >= len(text):
        full = _e(text)
    elif room == 0:
        full = (
            f'<span class="elided">[the text of this item ({len(text):,} characters, '
            f"{_size(text)}) is not embedded: the page already holds "
            f"{_PAGE_TEXT_LIMIT:,} characters of content]</span>"
        )
    else:
        head = round(room * _HEAD_SHARE)
        tail = room - head
        cut = text[head : len(text) - tail]
        full = (
            f"{_e(text[:head])}"
            f'<span class="elided">[… {len(cut):,} characters ({_size(cut)}) not shown of '
            f"{len(text):,} ({_size(text)}) …]</span>"
            f"{_e(text[len(text) - tail :])}"
        )
    return (
        f'<td class="content">{lead}<details><summary>{_e(preview(text, _SHORT_CONTENT))}</summary>'
        f'<div class="full">{full}</div></details></td>'
    )


def _item_row(row: ItemRow, budget: _TextBudget) -> str:
    item = row.item
    fate = "included" if row.included else "excluded"
    badge = (
        '<span class="badge in">included</span>'
        if row.included
        else ('<span class="badge out">excluded</span>')
    )
    position = "" if row.position is None else str(row.position)
    position_value = row.position if row.position is not None else "NaN"
    if row.why:
        detail = f' <span class="why">{_e(row.why)}</span>{_parts(row)}'
    else:
        detail = f' <span class="detail">{_e(row.detail)}</span>' if row.detail else ""
    pinned = ""
    if item.pinned and row.included and not row.why:  # a why says so in words
        pinned = ' <span class="pinned">(pinned)</span>'
    score_value = repr(row.score)  # nan/inf parse as NaN in the sorting script
    color = kind_color(item.kind)
    return (
        f'<tr class="{fate}">'
        f'<td class="num" data-v="{position_value}">{position}</td>'
        f"<td>{badge}</td>"
        f'<td class="kind"><span class="swatch" style="background:{_e(color)}"></span>'
        f"{_e(item.kind.value)}</td>"
        f'<td class="num" data-v="{item.tokens}">{item.tokens:,}</td>'
        f'<td class="num" data-v="{_e(score_value)}">{_e(format_score(row.score))}</td>'
        f'<td><span class="reason">{_e(row.reason)}</span>{pinned}{detail}</td>'
        f"{_content_cell(item.content, budget, message_label(item))}"
        "</tr>"
    )


def _parts(row: ItemRow) -> str:
    """An excerpt's kept runs and elided gaps, folded (empty for other rows)."""
    if not row.parts:
        return ""
    shown = row.parts[:_PARTS_LIMIT]
    items = "".join(
        f'<li class="{"kept-part" if part.kept else "elided-part"}">{_e(part.describe())}</li>'
        for part in shown
    )
    hidden = len(row.parts) - len(shown)
    if hidden:
        items += f"<li>and {hidden:,} more</li>"
    kept = sum(1 for part in row.parts if part.kept)
    summary = f"lines kept ({kept:,}) and elided ({len(row.parts) - kept:,})"
    return f'<details><summary>{_e(summary)}</summary><ol class="parts">{items}</ol></details>'


def _items_section(view: ReportView) -> str:
    budget = _TextBudget(_PAGE_TEXT_LIMIT)
    rows = "\n".join(_item_row(row, budget) for row in view.rows)
    total = view.total_candidates
    # The radios must be siblings of (and precede) the labels' box and the table they filter:
    # the CSS filter and the highlighted label are sibling selectors.
    controls = (
        '<input type="radio" class="fate" name="fate" id="fate-all" checked>'
        '<input type="radio" class="fate" name="fate" id="fate-included">'
        '<input type="radio" class="fate" name="fate" id="fate-excluded">'
        '<div class="filters" role="group" aria-label="Show">'
        f'<label for="fate-all">All ({total:,})</label>'
        f'<label for="fate-included">Included ({len(view.included):,})</label>'
        f'<label for="fate-excluded">Excluded ({len(view.excluded):,})</label>'
        '<input type="search" id="item-search" placeholder="Filter by text…" '
        'aria-label="Filter items by text" hidden></div>'
    )
    return (
        '<section aria-labelledby="items-h"><h2 id="items-h">Every item and its fate</h2>'
        f"{controls}"
        '<div class="table-wrap"><table id="items"><thead><tr>'
        '<th class="num" data-sort="number" title="Position in the context window">#</th>'
        '<th data-sort="text">Fate</th><th data-sort="text">Kind</th>'
        '<th class="num" data-sort="number">Tokens</th>'
        '<th class="num" data-sort="number">Score</th>'
        '<th data-sort="text">Reason</th><th>Content</th></tr></thead>'
        f"<tbody>\n{rows}\n</tbody></table></div></section>"
    )


def report_html(
    report: SelectionReport,
    budget: ContextBudget,
    *,
    title: str = "Selection report",
    subtitle: str = "",
    settings: Mapping[str, str] | None = None,
) -> str:
    """The report as one self-contained HTML page.

    Args:
        report: the run's selection report.
        budget: the run's budget (the report does not hold it).
        title: the page's title and heading.
        subtitle: a line under the heading (the input file, say).
        settings: name/value pairs describing the run (scorer, slicer, placer...), shown as
            a list.
    """
    view = view_report(report, budget)
    body = [
        _budget_cards(view),
        _kind_section(view),
        _reasons_section(view),
        _items_section(view),
        _settings(settings or {}),
    ]
    return _page(title, subtitle, body, script=True)


def sweep_html(
    rows: Sequence[SweepRow],
    *,
    title: str = "Budget sweep",
    subtitle: str = "",
    settings: Mapping[str, str] | None = None,
) -> str:
    """A budget sweep as one self-contained HTML page: the table and the line charts."""
    table_rows = []
    for row in rows:
        budget = row.budget
        budget_cell = f"{budget.max_tokens:,}"
        if budget.target_tokens != budget.max_tokens:
            budget_cell = f"{budget.target_tokens:,} / {budget_cell}"
        if not row.feasible:
            table_rows.append(
                f'<tr class="excluded"><td class="num">{_e(budget_cell)}</td>'
                '<td colspan="5">the pinned items alone do not fit this budget</td></tr>'
            )
            continue
        share = row.utilisation
        table_rows.append(
            f'<tr><td class="num">{_e(budget_cell)}</td><td class="num">{row.items:,}</td>'
            f'<td class="num">{row.tokens_used:,}</td>'
            f'<td class="num">{"—" if share is None else f"{share:.1%}"}</td>'
            f'<td class="num">{row.total_score:.3f}</td>'
            f'<td class="num">{_e(row.change_text)}</td></tr>'
        )
    table = (
        '<div class="table-wrap"><table class="sweep"><thead><tr>'
        '<th class="num">Budget</th><th class="num">Items</th><th class="num">Tokens used</th>'
        '<th class="num">Utilisation</th><th class="num">Total score</th>'
        '<th class="num">Added</th></tr></thead>'
        f"<tbody>{''.join(table_rows)}</tbody></table></div>"
    )
    body = [
        '<section aria-labelledby="chart-h"><h2 id="chart-h">Selection by budget</h2>'
        f"{sweep_chart(rows, title=title, standalone=False)}</section>",
        f'<section aria-labelledby="table-h"><h2 id="table-h">Budgets</h2>{table}</section>',
        _settings(settings or {}),
    ]
    return _page(title, subtitle, body, script=False)
