"""Builders shared by the slicer tests."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pycupel.model import ContextBudget, ContextItem, ScoredItem
from pycupel.slicers import SliceResult


def scored(content: str, tokens: int, score: float, kind: str = "Message") -> ScoredItem:
    """One scored item."""
    return ScoredItem(ContextItem(content, tokens=tokens, kind=kind), score)


def budget(target: int, max_tokens: int | None = None) -> ContextBudget:
    """A budget with ``max_tokens`` defaulting to the target."""
    return ContextBudget(
        max_tokens=target if max_tokens is None else max_tokens, target_tokens=target
    )


def names(items: Iterable[ContextItem]) -> list[str]:
    """Contents of ``items`` in order."""
    return [item.content for item in items]


def selected(result: SliceResult) -> list[str]:
    """Contents of the selected items in order."""
    return names(result.selected)


def capped(result: SliceResult) -> list[str]:
    """Contents of the items a count cap removed, in the order reported."""
    return [record.item.content for record in result.cap_exclusions]


def cap_records(result: SliceResult) -> list[tuple[str, int, int]]:
    """(content, cap, uncapped count) of every cap exclusion, in the order reported."""
    return [(record.item.content, record.cap, record.actual) for record in result.cap_exclusions]


def ranked(items: Sequence[ScoredItem]) -> list[ScoredItem]:
    """``items`` in the pipeline's order: score descending, input order on ties."""
    return sorted(items, key=lambda s: -s.score)
