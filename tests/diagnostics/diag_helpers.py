"""Stand-in components shared by the diagnostics tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pycupel.model import ContextBudget, ContextItem, ScoredItem
from pycupel.pipeline import Pipeline
from pycupel.slicers.base import SliceResult


class InOrderSlice:
    """Takes items in score order while they fit the target."""

    budget_monotonic = True

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        remaining = budget.target_tokens
        chosen: list[ContextItem] = []
        for entry in items:
            if entry.item.tokens <= remaining:
                chosen.append(entry.item)
                remaining -= entry.item.tokens
        return SliceResult.of(chosen)


class CustomSlice:
    budget_monotonic = False

    def __init__(self, pick: Callable[[Sequence[ScoredItem], ContextBudget], SliceResult]) -> None:
        self.pick = pick

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        return self.pick(items, budget)


class AsGivenPlacer:
    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        return [entry.item for entry in items]


def by_priority(item: ContextItem) -> float:
    return (item.priority or 0) / 10.0


def item(content: str, tokens: int = 10, priority: int | None = None, **kw: object) -> ContextItem:
    return ContextItem(content, tokens=tokens, priority=priority, **kw)  # type: ignore[arg-type]


def make_pipeline(target: int = 500, max_tokens: int = 1000, **kw: object) -> Pipeline:
    options: dict[str, object] = {
        "budget": ContextBudget(max_tokens=max_tokens, target_tokens=target),
        "scorer": by_priority,
        "slicer": InOrderSlice(),
        "placer": AsGivenPlacer(),
    }
    options.update(kw)
    return Pipeline(**options)  # type: ignore[arg-type]
