"""The assertion vocabulary: every pattern passing, and failing with its documented message.

These tests double as usage examples of :mod:`pycupel.testing`.
"""

from __future__ import annotations

import unittest

import pytest

from pycupel.diagnostics import (
    BudgetExceeded,
    Deduplicated,
    ExcludedItem,
    IncludedItem,
    InclusionReason,
    NegativeTokens,
    ScoredTooLow,
    SelectionReport,
)
from pycupel.errors import CupelError, InvalidValueError, ReportAssertionError
from pycupel.model import ContextBudget, ContextItem, ContextKind
from pycupel.pipeline import Pipeline
from pycupel.placers import UShapedPlacer
from pycupel.scorers import ReflexiveScorer
from pycupel.testing import ReportAssertions, assert_report

SYSTEM = ContextItem("system prompt", tokens=100, kind="SystemPrompt")
TURN = ContextItem("latest turn", tokens=200, kind="Message")
TOOL = ContextItem("tool result", tokens=50, kind="ToolOutput")
OLD_LOG = ContextItem("old log", tokens=400, kind="ToolOutput")
COPY = ContextItem("latest turn", tokens=200, kind="Message")
BROKEN = ContextItem("broken", tokens=-1, kind="message")

REPORT = SelectionReport.build(
    events=(),
    included=[
        IncludedItem(SYSTEM, 1.0, InclusionReason.PINNED),
        IncludedItem(TURN, 0.9, InclusionReason.SCORED),
        IncludedItem(TOOL, 0.7, InclusionReason.SCORED),
    ],
    excluded=[
        ExcludedItem(OLD_LOG, 0.6, BudgetExceeded(item_tokens=400, available_tokens=150)),
        ExcludedItem(COPY, 0.5, Deduplicated(deduplicated_against="latest turn")),
        ExcludedItem(BROKEN, 0.0, NegativeTokens(tokens=-1)),
    ],
)
EMPTY = SelectionReport.build(events=(), included=[], excluded=[])


def failure(call: object) -> ReportAssertionError:
    """The error a failing assertion raises (checked to be a test failure)."""
    assert callable(call)
    with pytest.raises(ReportAssertionError) as exc:
        call()
    error = exc.value
    assert isinstance(error, AssertionError)
    assert isinstance(error, CupelError)
    assert str(error).splitlines()[0] == error.summary
    return error


def test_chain_returns_itself_and_reads_as_a_sentence() -> None:
    chain = assert_report(REPORT)
    assert isinstance(chain, ReportAssertions)
    assert chain.report is REPORT
    result = (
        chain.include_item_with_kind("SystemPrompt")
        .include_item_with_kind("message")
        .include_exactly_n_items_with_kind("ToolOutput", 1)
        .exclude_item_with_reason(BudgetExceeded)
        .have_no_exclusions_for_kind("SystemPrompt")
        .have_at_least_n_exclusions(3)
        .excluded_items_are_sorted_by_score_descending()
        .have_kind_coverage_count(3)
    )
    assert result is chain


# --------------------------------------------------------------------------- 1


def test_include_item_with_kind() -> None:
    assert_report(REPORT).include_item_with_kind("ToolOutput")
    error = failure(lambda: assert_report(REPORT).include_item_with_kind("Memory"))
    assert error.summary == (
        "IncludeItemWithKind(Memory) failed: Included contained 0 items with Kind=Memory. "
        "Included had 3 items with kinds: [SystemPrompt, Message, ToolOutput]."
    )
    assert error.assertion == "IncludeItemWithKind"
    assert "content='latest turn'" in error.details
    error = failure(lambda: assert_report(EMPTY).include_item_with_kind("Message"))
    assert error.summary == (
        "IncludeItemWithKind(Message) failed: Included contained 0 items with Kind=Message. "
        "Included had 0 items with kinds: []."
    )


# --------------------------------------------------------------------------- 2


def test_include_item_matching() -> None:
    assert_report(REPORT).include_item_matching(lambda i: i.score > 0.8 and i.item is TURN)
    assert_report(REPORT).include_item_matching(lambda i: i.reason is InclusionReason.PINNED)
    error = failure(lambda: assert_report(REPORT).include_item_matching(lambda i: i.score > 2))
    assert error.summary == (
        "IncludeItemMatching failed: no item in Included matched the predicate. "
        "Included had 3 items."
    )
    assert "reason=Pinned" in error.details
    error = failure(lambda: assert_report(EMPTY).include_item_matching(lambda i: True))
    assert error.summary.endswith("Included had 0 items.")


# --------------------------------------------------------------------------- 3


def test_include_exactly_n_items_with_kind() -> None:
    assert_report(REPORT).include_exactly_n_items_with_kind("Message", 1)
    assert_report(REPORT).include_exactly_n_items_with_kind("Memory", 0)
    assert_report(EMPTY).include_exactly_n_items_with_kind("Memory", 0)
    error = failure(lambda: assert_report(REPORT).include_exactly_n_items_with_kind("Message", 2))
    assert error.summary == (
        "IncludeExactlyNItemsWithKind(Message, 2) failed: expected 2 items with Kind=Message in "
        "Included, but found 1. Included had 3 items total."
    )
    with pytest.raises(InvalidValueError, match="n: must be >= 0"):
        assert_report(REPORT).include_exactly_n_items_with_kind("Message", -1)


# --------------------------------------------------------------------------- 4


def test_exclude_item_with_reason() -> None:
    chain = assert_report(REPORT)
    chain.exclude_item_with_reason(BudgetExceeded)
    chain.exclude_item_with_reason("Deduplicated")
    chain.exclude_item_with_reason(NegativeTokens(tokens=-99))  # the variant, not the fields
    error = failure(lambda: chain.exclude_item_with_reason(ScoredTooLow))
    assert error.summary == (
        "ExcludeItemWithReason(ScoredTooLow) failed: no excluded item had reason ScoredTooLow. "
        "Excluded had 3 items with reasons: [BudgetExceeded, Deduplicated, NegativeTokens]."
    )
    assert "BudgetExceeded: " in error.details
    error = failure(lambda: assert_report(EMPTY).exclude_item_with_reason("Filtered"))
    assert error.summary == (
        "ExcludeItemWithReason(Filtered) failed: no excluded item had reason Filtered. "
        "Excluded had 0 items with reasons: []."
    )
    with pytest.raises(InvalidValueError, match="reason"):
        chain.exclude_item_with_reason(42)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- 5


def test_exclude_item_matching_with_reason() -> None:
    chain = assert_report(REPORT)
    chain.exclude_item_matching_with_reason(lambda x: x.content == "old log", BudgetExceeded)
    chain.exclude_item_matching_with_reason(lambda x: x.kind == ContextKind.MESSAGE, "Deduplicated")
    error = failure(
        lambda: chain.exclude_item_matching_with_reason(
            lambda x: x.kind.key == "message", BudgetExceeded
        )
    )
    assert error.summary == (
        "ExcludeItemMatchingWithReason(reason=BudgetExceeded) failed: predicate matched 2 "
        "excluded item(s) but none had reason BudgetExceeded. Matched items had reasons: "
        "[Deduplicated, NegativeTokens]."
    )
    assert "[1]" in error.details
    assert "[2]" in error.details
    error = failure(
        lambda: chain.exclude_item_matching_with_reason(lambda x: False, "BudgetExceeded")
    )
    assert error.summary == (
        "ExcludeItemMatchingWithReason(reason=BudgetExceeded) failed: predicate matched 0 "
        "excluded item(s) but none had reason BudgetExceeded. Matched items had reasons: []."
    )


# --------------------------------------------------------------------------- 6


def test_exclude_item_with_budget_details() -> None:
    chain = assert_report(REPORT)
    chain.exclude_item_with_budget_details(lambda x: x is OLD_LOG, 400, 150)
    error = failure(
        lambda: chain.exclude_item_with_budget_details(lambda x: x is OLD_LOG, 400, 100)
    )
    assert error.summary == (
        "ExcludeItemWithBudgetDetails failed: expected BudgetExceeded with item_tokens=400, "
        "available_tokens=100, but found item_tokens=400, available_tokens=150."
    )
    error = failure(lambda: chain.exclude_item_with_budget_details(lambda x: x is COPY, 200, 0))
    assert error.summary == (
        "ExcludeItemWithBudgetDetails failed: expected BudgetExceeded with item_tokens=200, "
        "available_tokens=0, but no matching item had reason BudgetExceeded."
    )
    assert "Deduplicated" in error.details


# --------------------------------------------------------------------------- 7


def test_have_no_exclusions_for_kind() -> None:
    assert_report(REPORT).have_no_exclusions_for_kind("SystemPrompt")
    assert_report(EMPTY).have_no_exclusions_for_kind("Message")
    error = failure(lambda: assert_report(REPORT).have_no_exclusions_for_kind("Message"))
    assert error.summary == (
        "HaveNoExclusionsForKind(Message) failed: found 2 excluded item(s) with Kind=Message. "
        "First: score=0.5, reason=Deduplicated."
    )


# --------------------------------------------------------------------------- 8


def test_have_at_least_n_exclusions() -> None:
    assert_report(REPORT).have_at_least_n_exclusions(0).have_at_least_n_exclusions(3)
    assert_report(EMPTY).have_at_least_n_exclusions(0)
    error = failure(lambda: assert_report(REPORT).have_at_least_n_exclusions(4))
    assert error.summary == (
        "HaveAtLeastNExclusions(4) failed: expected at least 4 excluded items, but Excluded had 3."
    )


# --------------------------------------------------------------------------- 9


def test_excluded_items_are_sorted_by_score_descending() -> None:
    assert_report(REPORT).excluded_items_are_sorted_by_score_descending()
    assert_report(EMPTY).excluded_items_are_sorted_by_score_descending()
    # A hand-made report in the wrong order (the constructor does not sort, build() does).
    unsorted = SelectionReport(
        events=(),
        included=(),
        excluded=(
            ExcludedItem(OLD_LOG, 0.6, BudgetExceeded(400, 150)),
            ExcludedItem(COPY, 0.6, Deduplicated("latest turn")),
            ExcludedItem(TOOL, 0.8, BudgetExceeded(50, 0)),
        ),
        total_candidates=3,
        total_tokens_considered=650,
    )
    error = failure(lambda: assert_report(unsorted).excluded_items_are_sorted_by_score_descending())
    assert error.summary == (
        "ExcludedItemsAreSortedByScoreDescending failed: item at index 2 (score=0.8) is higher "
        "than item at index 1 (score=0.6). Expected non-increasing scores."
    )


# --------------------------------------------------------------------------- 10


def test_have_budget_utilization_above() -> None:
    budget = ContextBudget(max_tokens=1000, target_tokens=500)
    assert_report(REPORT).have_budget_utilization_above(0.35, budget)  # 350 / 1000, exact >=
    assert_report(EMPTY).have_budget_utilization_above(0.0, budget)
    error = failure(lambda: assert_report(REPORT).have_budget_utilization_above(0.5, budget))
    assert error.summary == (
        "HaveBudgetUtilizationAbove(0.5) failed: computed utilization was 0.350000 "
        "(includedTokens=350, budget.MaxTokens=1000)."
    )
    with pytest.raises(InvalidValueError, match="threshold: must not be NaN"):
        assert_report(REPORT).have_budget_utilization_above(float("nan"), budget)


# --------------------------------------------------------------------------- 11


def test_have_kind_coverage_count() -> None:
    assert_report(REPORT).have_kind_coverage_count(3).have_kind_coverage_count(0)
    assert_report(EMPTY).have_kind_coverage_count(0)
    error = failure(lambda: assert_report(REPORT).have_kind_coverage_count(4))
    assert error.summary == (
        "HaveKindCoverageCount(4) failed: expected at least 4 distinct ContextKind values in "
        "Included, but found 3: [SystemPrompt, Message, ToolOutput]."
    )
    error = failure(lambda: assert_report(EMPTY).have_kind_coverage_count(1))
    assert error.summary == (
        "HaveKindCoverageCount(1) failed: expected at least 1 distinct ContextKind values in "
        "Included, but found 0: []."
    )


# --------------------------------------------------------------------------- 12


def test_place_item_at_edge() -> None:
    chain = assert_report(REPORT)
    chain.place_item_at_edge(lambda i: i.item is SYSTEM)
    chain.place_item_at_edge(lambda i: i.item is TOOL)
    error = failure(lambda: chain.place_item_at_edge(lambda i: i.item is TURN))
    assert error.summary == (
        "PlaceItemAtEdge failed: item matching predicate was at index 1 (not at edge). Edge "
        "positions: 0 and 2. Included had 3 items."
    )
    error = failure(lambda: chain.place_item_at_edge(lambda i: i.item is OLD_LOG))
    assert error.summary == "PlaceItemAtEdge failed: no item in Included matched the predicate."
    error = failure(lambda: assert_report(EMPTY).place_item_at_edge(lambda i: True))
    assert error.summary == "PlaceItemAtEdge failed: no item in Included matched the predicate."
    single = SelectionReport.build(
        events=(), included=[IncludedItem(TURN, 0.1, InclusionReason.SCORED)], excluded=[]
    )
    assert_report(single).place_item_at_edge(lambda i: i.item is TURN)


# --------------------------------------------------------------------------- 13


def included(*scores: float) -> SelectionReport:
    return SelectionReport.build(
        events=(),
        included=[
            IncludedItem(
                ContextItem(f"s{i}", tokens=1, kind=f"K{i}"), score, InclusionReason.SCORED
            )
            for i, score in enumerate(scores)
        ],
        excluded=[],
    )


def test_place_top_n_scored_at_edges() -> None:
    u_shape = included(0.9, 0.5, 0.1, 0.3, 0.8)
    assert_report(u_shape).place_top_n_scored_at_edges(0)
    assert_report(u_shape).place_top_n_scored_at_edges(2)
    assert_report(u_shape).place_top_n_scored_at_edges(4)  # 0, 4, 1, 3
    assert_report(u_shape).place_top_n_scored_at_edges(5)
    error = failure(
        lambda: assert_report(included(0.9, 0.8, 0.1, 0.3)).place_top_n_scored_at_edges(2)
    )
    assert error.summary == (
        "PlaceTopNScoredAtEdges(2) failed: 1 of the top-2 scored items were not at expected "
        "edge positions. Top-2 items (by score): [(kind=K0, score=0.9, idx=0), "
        "(kind=K1, score=0.8, idx=1)]. Expected edge positions: [0, 3]."
    )
    six = included(0.9, 0.7, 0.1, 0.2, 0.6, 0.8)
    assert_report(six).place_top_n_scored_at_edges(4)
    error = failure(
        lambda: assert_report(included(0.1, 0.9, 0.8, 0.7, 0.6, 0.5)).place_top_n_scored_at_edges(4)
    )
    assert error.summary.endswith("Expected edge positions: [0, 5, 1, 4].")
    assert error.summary.startswith("PlaceTopNScoredAtEdges(4) failed: 2 of the top-4")


def test_place_top_n_ties_at_the_boundary() -> None:
    # The 2nd-best score is shared: either tied item may hold the 2nd edge position.
    assert_report(included(0.9, 0.5, 0.1, 0.5)).place_top_n_scored_at_edges(2)
    assert_report(included(0.9, 0.5, 0.5, 0.1)).place_top_n_scored_at_edges(1)
    failure(lambda: assert_report(included(0.9, 0.5, 0.5, 0.1)).place_top_n_scored_at_edges(2))


def test_place_top_n_needs_enough_items() -> None:
    error = failure(lambda: assert_report(included(0.5)).place_top_n_scored_at_edges(2))
    assert error.summary == (
        "PlaceTopNScoredAtEdges(2) failed: Included had only 1 items, fewer than the 2 edge "
        "positions to check."
    )
    failure(lambda: assert_report(EMPTY).place_top_n_scored_at_edges(1))
    assert_report(EMPTY).place_top_n_scored_at_edges(0)


def test_with_a_real_u_shaped_run() -> None:
    items = [
        ContextItem(f"doc{n}", tokens=10, kind="Document", future_relevance_hint=n / 10)
        for n in range(8)
    ]
    budget = ContextBudget(max_tokens=60, target_tokens=60)
    pipeline = Pipeline(budget=budget, scorer=ReflexiveScorer(), placer=UShapedPlacer())
    report = pipeline.dry_run(items).report
    (
        assert_report(report)
        .include_exactly_n_items_with_kind("Document", 6)
        .have_at_least_n_exclusions(2)
        .exclude_item_with_budget_details(lambda x: x.content == "doc1", 10, 0)
        .place_item_at_edge(lambda i: i.item.content == "doc7")
        .place_top_n_scored_at_edges(6)
        .have_budget_utilization_above(0.999, budget)
        .excluded_items_are_sorted_by_score_descending()
    )


# --------------------------------------------------------------------------- plumbing


def test_argument_checks() -> None:
    with pytest.raises(InvalidValueError, match="report: must be a SelectionReport"):
        assert_report({})  # type: ignore[arg-type]
    with pytest.raises(InvalidValueError, match="predicate: must be callable"):
        assert_report(REPORT).include_item_matching("yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidValueError, match="kind"):
        assert_report(REPORT).include_item_with_kind(" ")


def test_unittest_counts_it_as_a_failure() -> None:
    class Case(unittest.TestCase):
        def runTest(self) -> None:
            assert_report(EMPTY).include_item_with_kind("Message")

    result = unittest.TestResult()
    Case().run(result)
    assert len(result.failures) == 1
    assert result.errors == []
    assert "IncludeItemWithKind(Message) failed" in result.failures[0][1]
