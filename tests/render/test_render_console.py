"""The terminal renderables: budget bar, item table, whole report (recorded to text)."""

from __future__ import annotations

import re

import pytest
from render_helpers import REF, chat_report, hand_report, item, timed_items
from rich.console import Console, RenderableType

from pycupel.diagnostics import (
    BudgetExceeded,
    Deduplicated,
    Filtered,
    IncludedItem,
    InclusionReason,
    NegativeTokens,
    PinnedOverride,
    QuotaCapExceeded,
    QuotaRequireDisplaced,
    ScoredTooLow,
    SelectionReport,
    UnknownExclusionReason,
)
from pycupel.model import ContextBudget
from pycupel.pipeline import Pipeline
from pycupel.render._view import allocate, preview, reason_detail, view_report
from pycupel.render.console import BudgetBar, ItemTable, render_report
from pycupel.scorers import PriorityScorer
from pycupel.slicers import CountRequirementShortfall, TokenRequirementShortfall


def text_of(renderable: RenderableType, width: int = 120) -> str:
    console = Console(record=True, width=width, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


def test_budget_line_states_used_target_max_and_reserve() -> None:
    report, budget = hand_report()
    lines = text_of(BudgetBar.of(report, budget), 100).splitlines()
    assert lines[0] == (
        "Budget 700 of 800 target tokens used (88%) · max 1,000 · output reserve 100"
    )


def test_bar_segments_are_proportional_to_each_kind() -> None:
    report, budget = hand_report()
    bar_line = text_of(BudgetBar(view_report(report, budget), width=100), 120).splitlines()[1]
    # Scale 1,000 tokens over 100 cells: 10 tokens a cell. Kinds by tokens: Message 300,
    # Document 250, SystemPrompt 100, ToolOutput 50 -> 70 filled cells, 10 reserve cells.
    assert bar_line.count("█") == 70
    assert bar_line.count("▒") == 10
    assert bar_line.count("░") == 20
    assert len(bar_line.rstrip()) == 100


def test_target_marker_sits_under_the_target_cell() -> None:
    report, budget = hand_report()
    marker = text_of(BudgetBar(view_report(report, budget), width=100), 120).splitlines()[2]
    # 800 of 1,000 tokens on 100 cells: the marker's column is 80, labelled to its left since
    # the label does not fit on its right.
    assert marker.index("▲") == 80
    assert "target 800" in marker


def test_legend_lists_each_kind_with_tokens_and_item_count() -> None:
    report, budget = hand_report()
    text = text_of(BudgetBar.of(report, budget), 200)
    for entry in (
        "Message 300 (1 item)",
        "Document 250 (1 item)",
        "SystemPrompt 100 (1 item)",
        "ToolOutput 50 (1 item)",
        "output reserve",
    ):
        assert entry in text


def test_legend_wraps_between_entries_never_inside_one() -> None:
    report, budget = hand_report()
    lines = text_of(BudgetBar.of(report, budget), 40).splitlines()
    legend = [line for line in lines if "■" in line or "░ free" in line]
    assert len(legend) > 1
    for line in legend:
        assert not line.rstrip().endswith(("Message", "Document", "300", "("))


def test_zero_budget_prints_the_line_without_a_bar() -> None:
    report = SelectionReport.build(events=(), included=(), excluded=())
    text = text_of(BudgetBar.of(report, ContextBudget(max_tokens=0, target_tokens=0)))
    assert text.splitlines() == ["Budget 0 of 0 target tokens used · max 0"]


def test_table_has_every_item_with_position_reason_and_data() -> None:
    report, budget = hand_report()
    text = text_of(ItemTable.of(report, budget), 200)
    rows = [line for line in text.splitlines() if re.search(r"\b(in|out)\b", line)]
    assert len(rows) == 8
    included = [line for line in rows if " in " in line]
    assert [line.split()[0] for line in included] == ["1", "2", "3", "4"]
    assert "BudgetExceeded: 900 tokens, 120 available" in text
    assert "Deduplicated: identical to a kept item" in text
    assert "PinnedOverride: displaced by “You are a careful a…”" in text
    assert "NegativeTokens: -5 tokens" in text
    assert "Pinned" in included[0]
    assert "SystemPrompt" in included[0]


def test_table_rows_show_kind_tokens_score_and_a_preview() -> None:
    report, budget = hand_report()
    text = text_of(ItemTable.of(report, budget), 200)
    manual = next(line for line in text.splitlines() if "A long manual" in line)
    assert re.search(r"out\s+Document\s+900\s+0\.700\s+BudgetExceeded", manual)
    # Long content is clipped to one line with an ellipsis.
    document = next(line for line in text.splitlines() if "Refund policy text" in line)
    assert "…" in document


def test_included_rows_come_in_placed_order_then_excluded_by_score() -> None:
    report, budget = hand_report()
    text = text_of(ItemTable.of(report, budget), 200)
    order = [
        "You are a careful",
        "What is the refund policy?",
        "Refund policy text",
        "lookup(order=1)",
        "A long manual",
        "old tool output",
        "broken",
    ]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions)


def test_max_rows_caps_each_section_and_says_how_many_are_hidden() -> None:
    items = timed_items(30)
    budget = ContextBudget(max_tokens=150, target_tokens=150)
    report = Pipeline(budget=budget, scorer=PriorityScorer()).dry_run(items).report
    text = text_of(ItemTable.of(report, budget, max_rows=3), 160)
    body = [line for line in text.splitlines() if re.search(r"\b(in|out)\s", line)]
    assert len(body) == 6
    hidden_in = len(report.included) - 3
    hidden_out = len(report.excluded) - 3
    assert f"Not shown: {hidden_in} more included and {hidden_out} more excluded items." in text


def test_narrow_console_wraps_the_reason_instead_of_dropping_its_data() -> None:
    report, budget = hand_report()
    text = text_of(ItemTable.of(report, budget), 80)
    assert all(len(line) <= 80 for line in text.splitlines())
    flat = " ".join(text.split())
    assert "900 tokens, 120 available" in flat


def test_whole_report_has_headline_bar_table_and_exclusion_summary() -> None:
    report, budget = hand_report()
    text = text_of(render_report(report, budget), 140)
    assert text.startswith("Included 4 of 8 items (700 tokens); excluded 4 (1,275 tokens).")
    assert "Budget 700 of 800" in text
    assert "Candidates" in text
    assert (
        "Exclusions: BudgetExceeded 1 item (900 tokens), Deduplicated 1 item (300 tokens), "
        "NegativeTokens 1 item (-5 tokens), PinnedOverride 1 item (80 tokens)."
        in " ".join(text.split())
    )


def test_report_without_exclusions_says_so() -> None:
    kept = item("only item", 5)
    report = SelectionReport.build(
        events=(), included=[IncludedItem(kept, 0.5, InclusionReason.SCORED)], excluded=()
    )
    text = text_of(render_report(report, ContextBudget(max_tokens=10, target_tokens=10)))
    assert "Nothing was excluded." in text


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        (BudgetExceeded(2048, 512), "2,048 tokens, 512 available"),
        (Deduplicated("x"), "identical to a kept item"),
        (Deduplicated("tool_output_abc123"), "duplicate of “tool_output_abc123”"),
        (NegativeTokens(-1), "-1 tokens"),
        (PinnedOverride("the system prompt"), "displaced by “the system prompt”"),
        (QuotaCapExceeded("ToolOutput", 3, 4), "ToolOutput at its cap of 3 (4 wanted)"),
        (QuotaRequireDisplaced("SystemPrompt"), "displaced by the SystemPrompt requirement"),
        (ScoredTooLow(0.12, 0.25), "score 0.120 below 0.250"),
        (Filtered("max_age_filter"), "filter max_age_filter"),
        (UnknownExclusionReason("FutureReason", {"a": 1}), "a=1"),
    ],
)
def test_reason_detail_gives_each_variants_data(reason: object, expected: str) -> None:
    assert reason_detail(reason, item("x", 1)) == expected  # type: ignore[arg-type]


def test_reason_detail_is_empty_for_inclusions() -> None:
    assert reason_detail(InclusionReason.SCORED, item("x", 1)) == ""


@pytest.mark.parametrize(
    ("values", "total", "cells"),
    [([300, 250, 100, 50], 1000, 100), ([1, 1, 1], 3, 10), ([5], 0, 10), ([7, 0, 3], 13, 7)],
)
def test_allocate_matches_the_rounded_share(values: list[int], total: int, cells: int) -> None:
    parts = allocate(values, total, cells)
    assert len(parts) == len(values)
    if total:
        assert sum(parts) == min(cells, round(sum(values) * cells / total))
        for part, value in zip(parts, values, strict=True):
            assert abs(part - value * cells / total) < 1
    else:
        assert parts == [0] * len(values)


def test_preview_collapses_whitespace_and_clips() -> None:
    assert preview("a\n\n  b\tc", 10) == "a b c"
    assert preview("x" * 50, 10) == "x" * 9 + "…"


def test_unmet_requirements_are_listed_after_the_table() -> None:
    kind = item("x", 1, "Document").kind
    report = SelectionReport.build(
        events=(),
        included=(),
        excluded=(),
        count_requirement_shortfalls=[CountRequirementShortfall(kind, 3, 1)],
        token_requirement_shortfalls=[TokenRequirementShortfall(kind, 1200, 450)],
    )
    text = " ".join(
        text_of(render_report(report, ContextBudget(max_tokens=10, target_tokens=10))).split()
    )
    assert "Unmet count requirements: Document: 1 of 3 required." in text
    assert "Unmet token requirements: Document: 450 of 1,200 tokens required." in text


def test_a_chat_fit_says_why_in_words_and_lists_its_excerpts_lines() -> None:
    report, budget = chat_report()
    rows = [row.reason_text for row in view_report(report, budget).rows]
    assert rows == [
        "pinned: the system prompt",
        "the dated header of the session of msg 2",
        "relevant to the query (score 1.572)",
        "next to a relevant turn (msg 2)",
        "the room left went to its most valuable lines; shortened to an excerpt (560 of 2,660 "
        "tokens; 1 gap of 2,100 tokens elided with recall refs)",
        "part of the recent tail",
        "pinned: the latest user turn",
        "the budget ran out: it needs 3,933 tokens, 199 were free",
    ]
    out = " ".join(text_of(render_report(report, budget), width=200).split())
    for words in (
        "relevant to the query (score 1.572)",
        "the budget ran out: it needs 3,933 tokens,",
        "Excerpts, by lines of the original text:",
        f"msgs 4-5 (excerpt) kept lines 1-12 (300 tokens); elided lines 13-39 (2,100 tokens), "
        f"ref {REF}; kept lines 40-52 (200 tokens)",
    ):
        assert words in out, words
    # The specification's reason is still counted, but no row claims a displacement.
    assert "displaced" not in out
    assert "Exclusions: PinnedOverride 1 item (3,933 tokens)." in out
