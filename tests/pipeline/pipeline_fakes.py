"""Small stand-in components with obvious behaviour, for testing the pipeline's own logic."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pycupel.model import ContextBudget, ContextItem, ScoredItem
from pycupel.slicers.base import SliceResult


class InOrderSlice:
    """Takes items in the order given (score order) while they fit the target."""

    budget_monotonic = True

    def __init__(self) -> None:
        self.seen: list[tuple[tuple[ScoredItem, ...], ContextBudget]] = []

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        self.seen.append((tuple(items), budget))
        remaining = budget.target_tokens
        chosen: list[ContextItem] = []
        for entry in items:
            if entry.item.tokens <= remaining:
                chosen.append(entry.item)
                remaining -= entry.item.tokens
        return SliceResult.of(chosen)


class TakeAllSlice:
    """Selects everything, ignoring the budget (to provoke overflow)."""

    budget_monotonic = True

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        return SliceResult.of(entry.item for entry in items)


class FunctionSlice:
    """A slicer whose answer is computed by a function of the input (for buggy slicers)."""

    budget_monotonic = False

    def __init__(self, pick: Callable[[Sequence[ScoredItem], ContextBudget], object]) -> None:
        self.pick = pick

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        return self.pick(items, budget)  # type: ignore[return-value]


class AsGivenPlacer:
    """Keeps the merged order (pinned first, then sliced items by score)."""

    def __init__(self) -> None:
        self.seen: list[tuple[ScoredItem, ...]] = []

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        self.seen.append(tuple(items))
        return [entry.item for entry in items]


class FunctionPlacer:
    def __init__(self, order: Callable[[Sequence[ScoredItem]], list[ContextItem]]) -> None:
        self.order = order

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        return self.order(items)


def by_priority(item: ContextItem) -> float:
    """Score = priority / 10 (0 when absent): easy to reason about in tests."""
    return (item.priority or 0) / 10.0
