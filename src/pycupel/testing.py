"""Assertions about selection reports, for tests: the Cupel.Testing vocabulary.

:func:`assert_report` wraps a :class:`~pycupel.diagnostics.SelectionReport` in a
:class:`ReportAssertions` chain. Each method checks one pattern of the vocabulary and returns
the chain, so checks read as one sentence; the first that fails raises
:class:`~pycupel.errors.ReportAssertionError` — an :class:`AssertionError`, so pytest and
unittest report it as a test failure. Its first line is the vocabulary's failure message
(word for word, including the pattern name); the lines after it show the part of the report
concerned. Passing checks change nothing.

Example::

    from pycupel.testing import assert_report

    result = pipeline.dry_run(items)
    (
        assert_report(result.report)
        .include_item_with_kind("SystemPrompt")
        .have_no_exclusions_for_kind("SystemPrompt")
        .exclude_item_matching_with_reason(lambda item: item.content == "old log", "BudgetExceeded")
        .have_budget_utilization_above(0.5, budget)
        .excluded_items_are_sorted_by_score_descending()
    )

The thirteen patterns, and the method for each:

* IncludeItemWithKind -> :meth:`~ReportAssertions.include_item_with_kind`
* IncludeItemMatching -> :meth:`~ReportAssertions.include_item_matching`
* IncludeExactlyNItemsWithKind -> :meth:`~ReportAssertions.include_exactly_n_items_with_kind`
* ExcludeItemWithReason -> :meth:`~ReportAssertions.exclude_item_with_reason`
* ExcludeItemMatchingWithReason -> :meth:`~ReportAssertions.exclude_item_matching_with_reason`
* ExcludeItemWithBudgetDetails -> :meth:`~ReportAssertions.exclude_item_with_budget_details`
* HaveNoExclusionsForKind -> :meth:`~ReportAssertions.have_no_exclusions_for_kind`
* HaveAtLeastNExclusions -> :meth:`~ReportAssertions.have_at_least_n_exclusions`
* ExcludedItemsAreSortedByScoreDescending ->
  :meth:`~ReportAssertions.excluded_items_are_sorted_by_score_descending`
* HaveBudgetUtilizationAbove -> :meth:`~ReportAssertions.have_budget_utilization_above`
* HaveKindCoverageCount -> :meth:`~ReportAssertions.have_kind_coverage_count`
* PlaceItemAtEdge -> :meth:`~ReportAssertions.place_item_at_edge`
* PlaceTopNScoredAtEdges -> :meth:`~ReportAssertions.place_top_n_scored_at_edges`

Predicates receive an :class:`~pycupel.diagnostics.IncludedItem` (inclusion and ordering
patterns) or a :class:`~pycupel.ContextItem` (exclusion patterns), as the vocabulary says. An
exclusion reason is named by its class (``BudgetExceeded``), an instance, or its variant
name (``"BudgetExceeded"``); matching compares the variant, never a message. Kinds compare
case-insensitively. Threshold comparisons are exact (``>=``, no epsilon).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final, Self

from pycupel._checks import check_float, check_int
from pycupel.analytics.metrics import budget_utilization, included_tokens
from pycupel.diagnostics import (
    BudgetExceeded,
    ExcludedItem,
    ExclusionReason,
    IncludedItem,
    SelectionReport,
)
from pycupel.errors import InvalidValueError, ReportAssertionError
from pycupel.model import ContextBudget, ContextItem, ContextKind, KindLike

__all__ = ["ReportAssertions", "assert_report"]

ReasonLike = type[ExclusionReason] | ExclusionReason | str
"""An exclusion reason variant: its class, an instance of it, or its name."""

_SHOWN: Final = 10
"""Report entries listed under a failure message."""


def assert_report(report: SelectionReport) -> ReportAssertions:
    """Start a chain of assertions about ``report`` (the vocabulary's ``report.Should()``)."""
    return ReportAssertions(report)


# --------------------------------------------------------------------------- formatting


def _kind_name(kind: KindLike) -> str:
    try:
        return ContextKind.of(kind).value
    except InvalidValueError as exc:
        raise InvalidValueError("kind", kind, exc.rule) from exc


def _reason_name(reason: object) -> str:
    if isinstance(reason, type) and issubclass(reason, ExclusionReason):
        return reason.__name__
    if isinstance(reason, ExclusionReason):
        return reason.name
    if isinstance(reason, str) and reason.strip():
        return reason
    raise InvalidValueError(
        "reason", reason, "must be an ExclusionReason class, instance or variant name"
    )


def _check_predicate(predicate: object) -> None:
    if not callable(predicate):
        raise InvalidValueError("predicate", predicate, "must be callable")


def _distinct(names: Sequence[str]) -> str:
    """Distinct names in order of first appearance, comma-separated."""
    return ", ".join(dict.fromkeys(names))


def _kinds_of(entries: Sequence[IncludedItem] | Sequence[ExcludedItem]) -> list[str]:
    # Distinct by case-folded key; shown as first spelled.
    by_key: dict[str, str] = {}
    for entry in entries:
        by_key.setdefault(entry.item.kind.key, entry.item.kind.value)
    return list(by_key.values())


def _preview(text: str, limit: int = 50) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _line(index: int, item: ContextItem, score: float, reason: str) -> str:
    return (
        f"  [{index}] kind={item.kind.value} tokens={item.tokens} score={score!r} "
        f"reason={reason} content={_preview(item.content)}"
    )


def _included_lines(
    entries: Sequence[IncludedItem], limit: int = _SHOWN, title: str = "Included"
) -> str:
    lines = [f"{title} ({len(entries)} items, placed order):"]
    lines += [
        _line(i, entry.item, entry.score, entry.reason.value)
        for i, entry in enumerate(entries[:limit])
    ]
    if len(entries) > limit:
        lines.append(f"  ... {len(entries) - limit} more")
    return "\n".join(lines)


def _excluded_lines(
    entries: Sequence[ExcludedItem],
    limit: int = _SHOWN,
    title: str = "Excluded",
    indexes: Sequence[int] | None = None,
) -> str:
    lines = [f"{title} ({len(entries)} items, by score):"]
    positions = list(indexes) if indexes is not None else list(range(len(entries)))
    lines += [
        _line(position, entry.item, entry.score, str(entry.reason))
        for position, entry in zip(positions[:limit], entries[:limit], strict=False)
    ]
    if len(entries) > limit:
        lines.append(f"  ... {len(entries) - limit} more")
    return "\n".join(lines)


def _edge_positions(n: int, count: int) -> list[int]:
    """The first ``n`` edge positions of a list of ``count``: 0, count-1, 1, count-2, ..."""
    positions: list[int] = []
    left, right = 0, count - 1
    while len(positions) < n and left <= right:
        positions.append(left)
        left += 1
        if len(positions) < n and left <= right:
            positions.append(right)
            right -= 1
    return positions


# --------------------------------------------------------------------------- the chain


class ReportAssertions:
    """A chain of assertions about one report (the vocabulary's assertion chain)."""

    __slots__ = ("_report",)

    def __init__(self, report: SelectionReport) -> None:
        if not isinstance(report, SelectionReport):
            raise InvalidValueError("report", report, "must be a SelectionReport")
        self._report = report

    @property
    def report(self) -> SelectionReport:
        """The report under test."""
        return self._report

    def _fail(self, assertion: str, summary: str, details: str = "") -> ReportAssertionError:
        return ReportAssertionError(assertion, summary, details)

    # ------------------------------------------------------------------ inclusion

    def include_item_with_kind(self, kind: KindLike) -> Self:
        """At least one included item has ``kind`` (IncludeItemWithKind)."""
        name = _kind_name(kind)
        included = self._report.included
        if any(entry.item.kind == ContextKind(name) for entry in included):
            return self
        raise self._fail(
            "IncludeItemWithKind",
            f"IncludeItemWithKind({name}) failed: Included contained 0 items with Kind={name}. "
            f"Included had {len(included)} items with kinds: [{', '.join(_kinds_of(included))}].",
            _included_lines(included),
        )

    def include_item_matching(self, predicate: Callable[[IncludedItem], bool]) -> Self:
        """At least one included item satisfies ``predicate`` (IncludeItemMatching)."""
        _check_predicate(predicate)
        included = self._report.included
        if any(predicate(entry) for entry in included):
            return self
        raise self._fail(
            "IncludeItemMatching",
            "IncludeItemMatching failed: no item in Included matched the predicate. "
            f"Included had {len(included)} items.",
            _included_lines(included, limit=5),
        )

    def include_exactly_n_items_with_kind(self, kind: KindLike, n: int) -> Self:
        """Exactly ``n`` included items have ``kind`` (IncludeExactlyNItemsWithKind; ``n`` may
        be 0)."""
        name = _kind_name(kind)
        check_int(InvalidValueError, "n", n, minimum=0)
        included = self._report.included
        actual = sum(entry.item.kind == ContextKind(name) for entry in included)
        if actual == n:
            return self
        raise self._fail(
            "IncludeExactlyNItemsWithKind",
            f"IncludeExactlyNItemsWithKind({name}, {n}) failed: expected {n} items with "
            f"Kind={name} in Included, but found {actual}. Included had {len(included)} items "
            "total.",
            _included_lines(included),
        )

    # ------------------------------------------------------------------ exclusion

    def exclude_item_with_reason(self, reason: ReasonLike) -> Self:
        """At least one excluded item has the reason variant ``reason``
        (ExcludeItemWithReason)."""
        name = _reason_name(reason)
        excluded = self._report.excluded
        if any(entry.reason.name == name for entry in excluded):
            return self
        reasons = _distinct([entry.reason.name for entry in excluded])
        raise self._fail(
            "ExcludeItemWithReason",
            f"ExcludeItemWithReason({name}) failed: no excluded item had reason {name}. "
            f"Excluded had {len(excluded)} items with reasons: [{reasons}].",
            _excluded_lines(excluded),
        )

    def exclude_item_matching_with_reason(
        self, predicate: Callable[[ContextItem], bool], reason: ReasonLike
    ) -> Self:
        """An excluded item satisfies ``predicate`` and has the reason variant ``reason``
        (ExcludeItemMatchingWithReason)."""
        _check_predicate(predicate)
        name = _reason_name(reason)
        excluded = self._report.excluded
        matched = [(i, entry) for i, entry in enumerate(excluded) if predicate(entry.item)]
        if any(entry.reason.name == name for _, entry in matched):
            return self
        reasons = _distinct([entry.reason.name for _, entry in matched])
        raise self._fail(
            "ExcludeItemMatchingWithReason",
            f"ExcludeItemMatchingWithReason(reason={name}) failed: predicate matched "
            f"{len(matched)} excluded item(s) but none had reason {name}. Matched items had "
            f"reasons: [{reasons}].",
            _excluded_lines(
                [entry for _, entry in matched],
                title="Excluded items matching the predicate",
                indexes=[i for i, _ in matched],
            ),
        )

    def exclude_item_with_budget_details(
        self,
        predicate: Callable[[ContextItem], bool],
        expected_item_tokens: int,
        expected_available_tokens: int,
    ) -> Self:
        """An excluded item satisfies ``predicate`` and was excluded with
        ``BudgetExceeded(item_tokens=expected_item_tokens,
        available_tokens=expected_available_tokens)`` exactly (ExcludeItemWithBudgetDetails)."""
        _check_predicate(predicate)
        check_int(InvalidValueError, "expected_item_tokens", expected_item_tokens)
        check_int(InvalidValueError, "expected_available_tokens", expected_available_tokens)
        excluded = self._report.excluded
        matched = [(i, entry) for i, entry in enumerate(excluded) if predicate(entry.item)]
        budget_matches = [
            entry.reason for _, entry in matched if isinstance(entry.reason, BudgetExceeded)
        ]
        for found in budget_matches:
            if (
                found.item_tokens == expected_item_tokens
                and found.available_tokens == expected_available_tokens
            ):
                return self
        expected = (
            f"ExcludeItemWithBudgetDetails failed: expected BudgetExceeded with "
            f"item_tokens={expected_item_tokens}, available_tokens={expected_available_tokens}, "
        )
        if budget_matches:
            first = budget_matches[0]
            summary = (
                f"{expected}but found item_tokens={first.item_tokens}, "
                f"available_tokens={first.available_tokens}."
            )
        else:
            summary = f"{expected}but no matching item had reason BudgetExceeded."
        raise self._fail(
            "ExcludeItemWithBudgetDetails",
            summary,
            _excluded_lines(
                [entry for _, entry in matched],
                title="Excluded items matching the predicate",
                indexes=[i for i, _ in matched],
            ),
        )

    def have_no_exclusions_for_kind(self, kind: KindLike) -> Self:
        """No excluded item has ``kind`` (HaveNoExclusionsForKind)."""
        name = _kind_name(kind)
        excluded = self._report.excluded
        wanted = ContextKind(name)
        matched = [(i, entry) for i, entry in enumerate(excluded) if entry.item.kind == wanted]
        if not matched:
            return self
        first = matched[0][1]
        raise self._fail(
            "HaveNoExclusionsForKind",
            f"HaveNoExclusionsForKind({name}) failed: found {len(matched)} excluded item(s) with "
            f"Kind={name}. First: score={first.score!r}, reason={first.reason.name}.",
            _excluded_lines(
                [entry for _, entry in matched],
                title=f"Excluded items of kind {name}",
                indexes=[i for i, _ in matched],
            ),
        )

    # ------------------------------------------------------------------ aggregates

    def have_at_least_n_exclusions(self, n: int) -> Self:
        """At least ``n`` items were excluded (HaveAtLeastNExclusions; ``n = 0`` always
        passes)."""
        check_int(InvalidValueError, "n", n, minimum=0)
        excluded = self._report.excluded
        if len(excluded) >= n:
            return self
        raise self._fail(
            "HaveAtLeastNExclusions",
            f"HaveAtLeastNExclusions({n}) failed: expected at least {n} excluded items, but "
            f"Excluded had {len(excluded)}.",
            _excluded_lines(excluded),
        )

    def excluded_items_are_sorted_by_score_descending(self) -> Self:
        """The excluded list is in non-increasing score order
        (ExcludedItemsAreSortedByScoreDescending; a conformance check)."""
        excluded = self._report.excluded
        for i in range(len(excluded) - 1):
            current, following = excluded[i].score, excluded[i + 1].score
            if following > current:
                window = excluded[max(0, i - 2) : i + 4]
                raise self._fail(
                    "ExcludedItemsAreSortedByScoreDescending",
                    f"ExcludedItemsAreSortedByScoreDescending failed: item at index {i + 1} "
                    f"(score={following!r}) is higher than item at index {i} "
                    f"(score={current!r}). Expected non-increasing scores.",
                    _excluded_lines(
                        window,
                        title="Excluded items around the violation",
                        indexes=range(max(0, i - 2), i + 4),
                    ),
                )
        return self

    # ------------------------------------------------------------------ budget

    def have_budget_utilization_above(self, threshold: float, budget: ContextBudget) -> Self:
        """``sum(included tokens) / budget.max_tokens >= threshold``, exactly
        (HaveBudgetUtilizationAbove)."""
        limit = check_float(InvalidValueError, "threshold", threshold, finite=False)
        if math.isnan(limit):
            raise InvalidValueError("threshold", threshold, "must not be NaN")
        if not isinstance(budget, ContextBudget):
            raise InvalidValueError("budget", budget, "must be a ContextBudget")
        actual = budget_utilization(self._report, budget)
        if actual >= limit:
            return self
        raise self._fail(
            "HaveBudgetUtilizationAbove",
            f"HaveBudgetUtilizationAbove({threshold}) failed: computed utilization was "
            f"{actual:.6f} (includedTokens={included_tokens(self._report)}, "
            f"budget.MaxTokens={budget.max_tokens}).",
            _included_lines(self._report.included),
        )

    # ------------------------------------------------------------------ coverage

    def have_kind_coverage_count(self, n: int) -> Self:
        """At least ``n`` distinct kinds are included (HaveKindCoverageCount)."""
        check_int(InvalidValueError, "n", n, minimum=0)
        kinds = _kinds_of(self._report.included)
        if len(kinds) >= n:
            return self
        raise self._fail(
            "HaveKindCoverageCount",
            f"HaveKindCoverageCount({n}) failed: expected at least {n} distinct ContextKind "
            f"values in Included, but found {len(kinds)}: [{', '.join(kinds)}].",
            _included_lines(self._report.included),
        )

    # ------------------------------------------------------------------ ordering

    def place_item_at_edge(self, predicate: Callable[[IncludedItem], bool]) -> Self:
        """The first or the last included item satisfies ``predicate`` (PlaceItemAtEdge).

        Only meaningful with a placer whose order you know (e.g. u-shaped)."""
        _check_predicate(predicate)
        included = self._report.included
        if included and (predicate(included[0]) or predicate(included[-1])):
            return self
        index = next((i for i, entry in enumerate(included) if predicate(entry)), None)
        if index is None:
            raise self._fail(
                "PlaceItemAtEdge",
                "PlaceItemAtEdge failed: no item in Included matched the predicate.",
                _included_lines(included),
            )
        last = len(included) - 1
        raise self._fail(
            "PlaceItemAtEdge",
            f"PlaceItemAtEdge failed: item matching predicate was at index {index} (not at "
            f"edge). Edge positions: 0 and {last}. Included had {len(included)} items.",
            _included_lines(included),
        )

    def place_top_n_scored_at_edges(self, n: int) -> Self:
        """The ``n`` highest-scored included items occupy the ``n`` outermost positions
        (0, count-1, 1, count-2, ...) (PlaceTopNScoredAtEdges).

        At the boundary, any item tied with the n-th highest score may take the n-th edge
        position. Only meaningful with a placer whose order you know (e.g. u-shaped)."""
        check_int(InvalidValueError, "n", n, minimum=0)
        included = self._report.included
        count = len(included)
        if n == 0:
            return self
        if n > count:
            raise self._fail(
                "PlaceTopNScoredAtEdges",
                f"PlaceTopNScoredAtEdges({n}) failed: Included had only {count} items, fewer "
                f"than the {n} edge positions to check.",
                _included_lines(included),
            )
        edges = _edge_positions(n, count)
        ranked = sorted(range(count), key=lambda i: (-included[i].score, i))
        threshold = included[ranked[n - 1]].score
        # An edge holding an item scored below the n-th best means a top-n item is elsewhere.
        fail_count = sum(included[position].score < threshold for position in edges)
        if fail_count == 0:
            return self
        top = ", ".join(
            f"(kind={included[i].item.kind.value}, score={included[i].score!r}, idx={i})"
            for i in ranked[:n]
        )
        raise self._fail(
            "PlaceTopNScoredAtEdges",
            f"PlaceTopNScoredAtEdges({n}) failed: {fail_count} of the top-{n} scored items were "
            f"not at expected edge positions. Top-{n} items (by score): [{top}]. Expected edge "
            f"positions: [{', '.join(map(str, edges))}].",
            _included_lines(included),
        )
