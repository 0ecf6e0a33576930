"""The HTML pages and SVG charts: complete, escaped, self-contained, well-formed."""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET

import pytest
from html_checks import assert_well_formed, body_rows
from render_helpers import (
    HOSTILE,
    REF,
    chat_report,
    hand_report,
    hostile_report,
    item,
    timed_items,
)

from pycupel.diagnostics import IncludedItem, InclusionReason, SelectionReport
from pycupel.model import ContextBudget
from pycupel.pipeline import Pipeline
from pycupel.render._view import view_report
from pycupel.render.html import report_html, sweep_html
from pycupel.render.svg import budget_bar_svg, nice_ticks, sweep_chart_svg
from pycupel.render.sweep import SweepRow, sweep_chart, sweep_rows, sweep_series
from pycupel.scorers import PriorityScorer

SVG = "{http://www.w3.org/2000/svg}"


def item_rows(page: str) -> list[list[str]]:
    parsed = assert_well_formed(page)
    return [row.cells for row in body_rows(parsed, "items")]


def test_every_item_has_a_row_with_fate_kind_tokens_score_and_reason() -> None:
    report, budget = hand_report()
    page = report_html(report, budget)
    parsed = assert_well_formed(page)
    rows = body_rows(parsed, "items")
    assert len(rows) == report.total_candidates == 8
    assert [row.classes for row in rows] == [["included"]] * 4 + [["excluded"]] * 4
    first = rows[0].cells
    assert first[:6] == ["1", "included", "SystemPrompt", "100", "1.000", "Pinned (pinned)"]
    manual = next(row.cells for row in rows if row.cells[-1] == "A long manual")
    assert manual[:6] == [
        "",
        "excluded",
        "Document",
        "900",
        "0.700",
        "BudgetExceeded 900 tokens, 120 available",
    ]


def test_header_cards_state_the_budget_and_totals() -> None:
    report, budget = hand_report()
    parsed = assert_well_formed(report_html(report, budget))
    text = " ".join(" ".join(parsed.text).split())
    assert "Tokens used 700 of 800 target tokens (88%)" in text
    assert "Budget (max tokens) 1,000 output reserve 100" in text
    assert "Included 4 of 8 candidates" in text
    assert "Excluded 4 1,275 tokens left out" in text


def test_kind_legend_and_reason_table() -> None:
    report, budget = hand_report()
    parsed = assert_well_formed(report_html(report, budget))
    text = " ".join(" ".join(parsed.text).split())
    assert "Message 300 tokens · 1 item (43%)" in text
    assert "free 200 tokens" in text
    reasons = [row.cells for row in body_rows(parsed, "reasons")]
    assert reasons == [
        ["BudgetExceeded", "1", "900"],
        ["Deduplicated", "1", "300"],
        ["NegativeTokens", "1", "-5"],
        ["PinnedOverride", "1", "80"],
    ]


def test_long_content_folds_into_details_with_the_full_text() -> None:
    report, budget = hand_report()
    page = report_html(report, budget)
    full = "Refund policy text " * 20
    assert f'<div class="full">{full}</div>' in page
    assert "<summary>Refund policy text Refund" in page


def _huge_report(*contents: str) -> tuple[SelectionReport, ContextBudget]:
    included = [
        IncludedItem(item(text, 100, "ToolOutput"), 0.5, InclusionReason.SCORED)
        for text in contents
    ]
    return SelectionReport.build(events=[], included=included, excluded=[]), ContextBudget(
        max_tokens=10_000, target_tokens=10_000
    )


def test_a_multi_megabyte_item_makes_a_small_page_that_says_what_was_cut() -> None:
    log = "".join(f"step {n}: ok\n" for n in range(500_000)) + "step 500000: FAILED (exit 2)"
    assert len(log) > 5_500_000
    report, budget = _huge_report(log)
    page = report_html(report, budget)
    assert len(page.encode()) < 40_000
    assert_well_formed(page)
    cut = len(log) - 4_000
    assert (
        f'<span class="elided">[… {cut:,} characters ({cut / 1e6:.1f} MB) not shown of '
        f"{len(log):,} ({len(log) / 1e6:.1f} MB) …]</span>"
    ) in page
    # The head and the tail stay: where the log starts, and the failure at its end.
    assert "step 0: ok\nstep 1: ok" in page
    assert page.count("step 500000: FAILED (exit 2)") == 1
    assert "step 250000" not in page


def test_content_up_to_the_item_limit_is_embedded_whole() -> None:
    text = "x" * 3_999 + "y"
    report, budget = _huge_report(text)
    page = report_html(report, budget)
    assert f'<div class="full">{text}</div>' in page
    assert "elided" not in page.split("</style>", 1)[1]


def test_the_page_embeds_a_bounded_amount_of_content_in_all() -> None:
    report, budget = _huge_report(*(f"{n:04d} " + "z" * 200_000 for n in range(1_000)))
    page = report_html(report, budget)
    assert len(page.encode()) < 2_000_000 + 1_000 * 1_000  # the content, and each row's markup
    assert len(item_rows(page)) == 1_000  # every row is still there
    assert "is not embedded: the page already holds 2,000,000 characters of content" in page
    assert "<summary>0999 zzz" in page  # with its preview


def test_hostile_content_is_escaped_everywhere() -> None:
    report, budget = hostile_report()
    page = report_html(
        report, budget, title="<title>x", subtitle=HOSTILE, settings={"<k>": "<script>v"}
    )
    parsed = assert_well_formed(page)
    # The only script is the page's own; no injected element exists.
    assert len(parsed.scripts) == 1
    assert "alert" not in parsed.scripts[0]
    tags = {tag for tag, _ in parsed.tags}
    assert "img" not in tags
    assert "b" not in tags
    assert not any("onerror" in attrs or "onload" in attrs for _, attrs in parsed.tags)
    # ...and the text still reads as written.
    text = "".join(parsed.text)
    assert HOSTILE in text
    assert "Evil<b>Kind</b>" in text
    assert "</td></tr></table><script>x()</script>" in text
    assert "<svg onload=x> at its cap of 1 (2 wanted)" in text
    rows = body_rows(parsed, "items")
    assert len(rows) == 2


def test_page_is_self_contained() -> None:
    report, budget = hand_report()
    for page in (report_html(report, budget), sweep_html(_rows())):
        lowered = page.lower()
        assert "http://" not in lowered
        assert "https://" not in lowered
        assert "<link" not in lowered
        assert "@import" not in lowered
        assert "url(" not in lowered
        assert not re.search(r"\ssrc\s*=", lowered)
        assert "<style>" in lowered


def test_content_needs_no_script() -> None:
    report, budget = hand_report()
    page = report_html(report, budget)
    without_script = re.sub(r"<script>.*?</script>", "", page, flags=re.DOTALL)
    rows = item_rows(without_script)
    assert len(rows) == 8
    # The fate filter is CSS: radio inputs before the table, rules on their :checked state.
    assert "#fate-included:checked ~ .table-wrap tr.excluded" in page
    assert 'id="item-search"' in page
    assert "hidden>" in page


def test_output_is_deterministic() -> None:
    report, budget = hand_report()
    assert report_html(report, budget) == report_html(report, budget)


def test_report_of_a_real_run_lists_every_candidate() -> None:
    items = timed_items(40)
    budget = ContextBudget(max_tokens=200, target_tokens=180, output_reserve=10)
    report = Pipeline(budget=budget, scorer=PriorityScorer()).dry_run(items).report
    rows = item_rows(report_html(report, budget))
    assert len(rows) == 40
    contents = sorted(row[-1] for row in rows)
    assert contents == sorted(candidate.content for candidate in items)
    positions = [row[0] for row in rows if row[1] == "included"]
    assert positions == [str(n) for n in range(1, len(report.included) + 1)]


def test_empty_report_renders() -> None:
    report = SelectionReport.build(events=(), included=(), excluded=())
    page = report_html(report, ContextBudget(max_tokens=0, target_tokens=0))
    assert item_rows(page) == []
    assert "The budget is 0 tokens." in page
    assert "Nothing was excluded." in page


def test_budget_bar_svg_segments_follow_the_kinds() -> None:
    report, budget = hand_report()
    svg = budget_bar_svg(view_report(report, budget), standalone=True)
    root = ET.fromstring(svg)
    rects = root.findall(f"{SVG}rect")
    titles = [rect.findtext(f"{SVG}title") for rect in rects]
    assert titles[0] == "free: 300 tokens"
    assert titles[1] == "output reserve: 100 tokens"
    assert titles[2].startswith("Message: 300 tokens")
    widths = {
        title.split(":")[0]: float(rect.get("width", "0"))
        for rect, title in zip(rects, titles, strict=True)
    }
    # 944 user units stand for 1,000 tokens.
    assert widths["Message"] == pytest.approx(300 / 1000 * 944, abs=0.3)
    assert widths["ToolOutput"] == pytest.approx(50 / 1000 * 944, abs=0.3)


def _rows() -> list[SweepRow]:
    items = timed_items(25)
    pipeline = Pipeline(
        budget=ContextBudget(max_tokens=400, target_tokens=400), scorer=PriorityScorer()
    )

    class Point:
        def __init__(self, tokens: int) -> None:
            self.budget = ContextBudget(max_tokens=tokens, target_tokens=tokens)
            report = pipeline.dry_run(items, budget=self.budget).report
            self.selected = tuple(entry.item for entry in report.included)
            self.tokens_used = sum(entry.item.tokens for entry in report.included)
            self.total_score = sum(entry.score for entry in report.included)
            self.feasible = True

    return sweep_rows([Point(tokens) for tokens in (50, 100, 200, 400)])


def test_sweep_rows_count_added_and_removed_items() -> None:
    rows = _rows()
    assert rows[0].added is None
    assert rows[0].change_text == ""
    for before, after in itertools.pairwise(rows):
        assert after.added is not None
        assert after.removed is not None
        assert after.items == before.items + after.added - after.removed


def test_sweep_html_has_a_row_per_budget_and_the_chart() -> None:
    rows = _rows()
    page = sweep_html(rows, title="Sweep <x>", settings={"items": "a.json"})
    parsed = assert_well_formed(page)
    table = [row.cells for row in body_rows(parsed, "sweep")]
    assert [cells[0] for cells in table] == ["50", "100", "200", "400"]
    assert table[1][5] == rows[1].change_text
    assert table[0][3] == f"{rows[0].utilisation:.1%}"
    assert page.count('<svg class="sweep-chart"') == 1
    assert "<title>Sweep &lt;x&gt;</title>" in page
    assert parsed.scripts == []


def test_standalone_sweep_chart_is_valid_svg_with_a_point_per_budget() -> None:
    rows = _rows()
    root = ET.fromstring(sweep_chart(rows, title="Sweep & co"))
    assert root.tag == f"{SVG}svg"
    assert root.findtext(f"{SVG}title") == "Sweep & co"
    circles = root.findall(f"{SVG}circle")
    assert len(circles) == 3 * len(rows)
    tips = [circle.findtext(f"{SVG}title") for circle in circles[: len(rows)]]
    assert tips == [
        f"budget {row.budget.max_tokens:,}: tokens used {row.tokens_used:,}" for row in rows
    ]


def test_sweep_chart_points_rise_with_the_values() -> None:
    rows = _rows()
    root = ET.fromstring(sweep_chart_svg([50, 100, 200, 400], sweep_series(rows)))
    first_panel = root.findall(f"{SVG}circle")[: len(rows)]
    ys = [float(circle.get("cy", "nan")) for circle in first_panel]
    values = [row.tokens_used for row in rows]
    # A larger value is drawn higher (a smaller y).
    for (y1, v1), (y2, v2) in itertools.pairwise(zip(ys, values, strict=True)):
        assert (v2 > v1) == (y2 < y1)
    xs = [float(circle.get("cx", "nan")) for circle in first_panel]
    assert xs == sorted(xs)


def test_infeasible_budgets_are_rows_but_not_points() -> None:
    rows = _rows()
    blocked = SweepRow(ContextBudget(max_tokens=5, target_tokens=5), 0, 0, 0.0, None, None, False)
    page = sweep_html([blocked, *rows])
    assert "the pinned items alone do not fit this budget" in page
    root = ET.fromstring(sweep_chart([blocked, *rows]))
    assert len(root.findall(f"{SVG}circle")) == 3 * len(rows)


@pytest.mark.parametrize(
    ("low", "high"), [(0, 1), (200, 1600), (0, 1234567), (0.001, 0.009), (5, 5), (-3, 17)]
)
def test_nice_ticks_cover_the_range_with_round_steps(low: float, high: float) -> None:
    ticks = nice_ticks(low, high)
    assert ticks[0] <= low
    assert ticks[-1] >= high
    steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
    assert len(steps) == 1
    step = steps.pop()
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert round(mantissa, 6) in {1.0, 2.0, 2.5, 5.0}
    assert 2 <= len(ticks) <= 8


def test_view_counts_kinds_and_reasons() -> None:
    report, budget = hand_report()
    view = view_report(report, budget)
    assert [(usage.kind.value, usage.tokens) for usage in view.kinds] == [
        ("Message", 300),
        ("Document", 250),
        ("SystemPrompt", 100),
        ("ToolOutput", 50),
    ]
    assert view.used_tokens == 700
    assert view.excluded_tokens == 1275
    assert view.target_share == pytest.approx(700 / 800)
    assert item("x", 1).kind.value == "Message"


def test_unmet_requirements_are_listed_under_the_reasons() -> None:
    from pycupel.slicers import CountRequirementShortfall, TokenRequirementShortfall

    report, budget = hand_report()
    kind = report.excluded[0].item.kind
    with_shortfalls = SelectionReport.build(
        events=report.events,
        included=report.included,
        excluded=report.excluded,
        count_requirement_shortfalls=[CountRequirementShortfall(kind, 2, 0)],
        token_requirement_shortfalls=[TokenRequirementShortfall(kind, 400, 0)],
    )
    page = report_html(with_shortfalls, budget)
    assert_well_formed(page)
    assert "<strong>Unmet count requirements:</strong></p><ul><li>Document: 0 of 2 required" in page
    assert "<strong>Unmet token requirements:</strong></p><ul><li>Document: 0 of 400 tokens" in page
    assert "Unmet" not in report_html(report, budget)


def test_a_chat_fits_rows_give_the_reason_and_the_why_and_fold_an_excerpts_lines() -> None:
    report, budget = chat_report()
    page = report_html(report, budget)
    rows = {cells[-1][:40]: cells for cells in item_rows(page)}
    reasons = [cells[5] for cells in item_rows(page)]
    assert reasons[0] == "Pinned pinned: the system prompt"
    assert "Scored relevant to the query (score 1.572)" in reasons
    assert "Scored next to a relevant turn (msg 2)" in reasons
    assert "Scored the dated header of the session of msg 2" in reasons
    dropped = next(cells for cells in rows.values() if cells[1] == "excluded")
    # The specification's reason stays, and the words say what happened.
    assert dropped[5] == "PinnedOverride the budget ran out: it needs 3,933 tokens, 199 were free"
    excerpt = next(cells for cells in rows.values() if "(excerpt)" in cells[-1])
    assert excerpt[5].startswith(
        "Scored the room left went to its most valuable lines; shortened to an excerpt (560 of "
        "2,660 tokens; "
    )
    assert "lines kept (2) and elided (1)" in excerpt[5]
    assert f"elided lines 13-39 (2,100 tokens), ref {REF}" in excerpt[5]
    assert '<li class="elided-part">' in page
    assert HOSTILE not in page  # the recent turn's content is escaped
