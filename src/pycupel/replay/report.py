"""The replay as one self-contained HTML page: the per-policy comparison, distributions of
tokens, cost and evidence recall, and the worst cases.

It uses the page, cards and style of :mod:`pycupel.render.html` (inline CSS, inline SVG, no
network assets) and is deterministic: the same output table gives the same bytes, with
``fit_ms`` shown only as a median in the comparison.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pycupel.render.html import _card, _e, _page, _settings
from pycupel.replay.compute import ReplayConfig
from pycupel.replay.summary import PolicySummary

__all__ = ["replay_html"]

_BINS = 10
_WORST = 10
_BAR_W = 28
_BAR_H = 90
_COLORS = ("#2563eb", "#d97706", "#059669", "#7c3aed", "#db2777", "#0891b2")


def _comparison(summaries: Sequence[PolicySummary]) -> str:
    head = "".join(f'<th class="num">{_e(entry.policy)}</th>' for entry in summaries)

    def row(label: str, cells: Sequence[str]) -> str:
        values = "".join(f'<td class="num">{_e(cell)}</td>' for cell in cells)
        return f"<tr><td>{_e(label)}</td>{values}</tr>"

    def ratio(entry: PolicySummary) -> str:
        return f"{entry.cost_after / entry.cost_before:.2f}x" if entry.cost_before else "—"

    rows = [
        row("requests fitted", [f"{e.requests:,}" for e in summaries]),
        row("failed (cannot fit)", [f"{e.failed:,}" for e in summaries]),
        row("skipped (malformed)", [f"{e.skipped:,}" for e in summaries]),
        row("tokens before (mean)", [f"{e.tokens_before:,.0f}" for e in summaries]),
        row("tokens after (mean)", [f"{e.tokens_after:,.0f}" for e in summaries]),
        row("valid histories", [f"{e.valid_share:.1%}" for e in summaries]),
        *(
            row(
                f"{role} messages dropped",
                [f"{dict(e.dropped_by_role)[role]:,}" for e in summaries],
            )
            for role in ("user", "assistant", "tool", "system")
        ),
        row("cached input, original", [f"{e.cached_share_before:.0%}" for e in summaries]),
        row("cached input, fitted", [f"{e.cached_share_after:.0%}" for e in summaries]),
        row("input cost, original", [f"${e.cost_before:,.4f}" for e in summaries]),
        row("input cost, fitted", [f"${e.cost_after:,.4f}" for e in summaries]),
        row("fitted / original cost", [ratio(e) for e in summaries]),
        row(
            "evidence recall (mean)",
            ["—" if e.evidence_recall is None else f"{e.evidence_recall:.3f}" for e in summaries],
        ),
        row("fit time (median)", [f"{e.fit_ms_median:.2f} ms" for e in summaries]),
    ]
    return (
        '<section aria-labelledby="compare-h"><h2 id="compare-h">Policies compared</h2>'
        '<div class="table-wrap"><table><thead><tr><th></th>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def _histogram(values: Sequence[float], low: float, high: float, color: str, label: str) -> str:
    """An inline SVG bar chart of ``values`` in :data:`_BINS` equal bins over low..high."""
    counts = [0] * _BINS
    span = (high - low) or 1.0
    for value in values:
        counts[min(_BINS - 1, max(0, int((value - low) / span * _BINS)))] += 1
    top = max(counts) or 1
    bars = []
    for index, count in enumerate(counts):
        height = round(count / top * _BAR_H)
        start = low + span * index / _BINS
        bars.append(
            f'<rect x="{index * (_BAR_W + 4)}" y="{_BAR_H - height}" width="{_BAR_W}" '
            f'height="{height}" fill="{color}"><title>{_e(f"{start:,.3g}+: {count:,}")}'
            "</title></rect>"
        )
    width = _BINS * (_BAR_W + 4)
    return (
        f'<figure style="margin:0 18px 12px 0;display:inline-block">'
        f'<svg role="img" aria-label="{_e(label)}" viewBox="0 0 {width} {_BAR_H + 2}" '
        f'width="{width}" height="{_BAR_H + 2}">{"".join(bars)}</svg>'
        f'<figcaption class="meta">{_e(label)}: {low:,.3g} to {high:,.3g}</figcaption></figure>'
    )


def _distributions(rows: Sequence[Mapping[str, Any]], policies: Sequence[str]) -> str:
    ok = [row for row in rows if row["status"] == "ok"]
    if not ok:
        return ""
    metrics = (
        ("tokens_after", "tokens after"),
        ("cost_after_usd", "input cost after (USD)"),
        ("dropped", "messages dropped"),
        ("evidence_recall", "evidence recall"),
    )
    parts = []
    for metric, label in metrics:
        values = {
            name: [
                v for row in ok if row["policy"] == name if (v := _value(row, metric)) is not None
            ]
            for name in policies
        }
        every = [value for found in values.values() for value in found]
        if not every:
            continue
        low, high = min(every), max(every)
        charts = "".join(
            _histogram(found, low, high, _COLORS[index % len(_COLORS)], f"{name}: {label}")
            for index, (name, found) in enumerate(values.items())
        )
        parts.append(f"<h3>{_e(label)}</h3><div>{charts}</div>")
    return (
        '<section aria-labelledby="dist-h"><h2 id="dist-h">Distributions per request</h2>'
        f"{''.join(parts)}</section>"
    )


def _value(row: Mapping[str, Any], metric: str) -> float | None:
    if metric == "dropped":
        return float(row["messages_before"] - row["messages_after"])
    value = row[metric]
    return None if value is None else float(value)


def _worst(rows: Sequence[Mapping[str, Any]], policies: Sequence[str]) -> str:
    """Per policy: the requests that went worst (failed or invalid first, then the lowest
    evidence recall, then the most messages dropped)."""

    def badness(row: Mapping[str, Any]) -> tuple[int, float, int, int, int]:
        failed = row["status"] != "ok" or not row["valid"]
        recall = row["evidence_recall"]
        dropped = 0 if failed else row["messages_before"] - row["messages_after"]
        return (
            0 if failed else 1,
            1.0 if recall is None else recall,
            -dropped,
            row["file_index"],
            row["line"],
        )

    sections = []
    for name in policies:
        mine = sorted((row for row in rows if row["policy"] == name), key=badness)[:_WORST]
        cells = []
        for row in mine:
            where = f"{row['file']}:{row['line']}"
            session = "" if row["session_id"] is None else f"{row['session_id']} #{row['turn']}"
            if row["status"] != "ok":
                outcome = row["status"]
                detail = row["detail"] or ""
            else:
                outcome = "valid" if row["valid"] else "invalid"
                detail = row["invalid_reason"] or ""
            recall = row["evidence_recall"]
            after = row["tokens_after"]
            kept = row["messages_after"]
            cells.append(
                f"<tr><td>{_e(where)}</td><td>{_e(session)}</td><td>{_e(outcome)}"
                f'<span class="detail">{_e(detail)}</span></td>'
                f'<td class="num">{row["tokens_before"] or 0:,}</td>'
                f'<td class="num">{"—" if after is None else f"{after:,}"}</td>'
                f'<td class="num">{"—" if kept is None else f"{kept:,}"} of '
                f"{row['messages_before'] or 0:,}</td>"
                f'<td class="num">{"—" if recall is None else f"{recall:.2f}"}</td></tr>'
            )
        sections.append(
            f"<h3>{_e(name)}</h3>"
            '<div class="table-wrap"><table><thead><tr><th>Request</th><th>Session</th>'
            '<th>Outcome</th><th class="num">Tokens before</th><th class="num">Tokens after'
            '</th><th class="num">Messages kept</th><th class="num">Evidence recall</th></tr>'
            f"</thead><tbody>{''.join(cells)}</tbody></table></div>"
        )
    return (
        '<section aria-labelledby="worst-h"><h2 id="worst-h">Worst cases</h2>'
        '<p class="meta">Per policy: failed or invalid fits first, then the lowest evidence '
        f"recall, then the most messages dropped ({_WORST} at most).</p>"
        f"{''.join(sections)}</section>"
    )


def replay_html(
    table: Any,
    summaries: Sequence[PolicySummary],
    *,
    sources: Sequence[str],
    config: ReplayConfig,
    title: str = "Policy replay",
) -> str:
    """The replay's output as one self-contained HTML page.

    Args:
        table: the output rows (:attr:`~pycupel.replay.ReplayResult.table`).
        summaries: :func:`~pycupel.replay.summary.summarize` of the same table.
        sources: the log files, for the page's subtitle.
        config: the replay's configuration (budget, policies, error handling).
        title: the page's title and heading.
    """
    rows = table.to_pylist()
    policies = [entry.name for entry in config.policies]
    requests = len({(row["file_index"], row["line"]) for row in rows})
    skipped = max((entry.skipped for entry in summaries), default=0)
    cards = [
        _card("Requests", f"{requests:,}", f"{skipped:,} malformed, skipped"),
        _card("Policies", f"{len(policies):,}", ", ".join(policies)),
        _card("Budget", f"{config.budget:,}", "tokens per request"),
        _card("Rows", f"{len(rows):,}", "one per request and policy"),
    ]
    body = [
        f'<section class="cards" aria-label="Totals">{"".join(cards)}</section>',
        _comparison(summaries),
        _distributions(rows, policies),
        _worst(rows, policies),
        _settings(
            {
                "logs": ", ".join(sources),
                "budget": f"{config.budget:,} tokens",
                "on error": config.on_error,
                "prices": "; ".join(
                    f"{name}: {price.model} ${price.input_per_mtok:g}/M, cached "
                    f"${price.cache_read_per_mtok:g}/M"
                    for name, price in config.prices
                ),
            }
        ),
    ]
    return _page(title, ", ".join(sources), [part for part in body if part], script=False)
