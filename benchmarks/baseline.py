"""A literal baseline: the specification's per-item pseudocode, transcribed into plain Python.

This is the yardstick for ``run_all.py --compare``. It follows the chapters' loops as they are
written, with no caching, no sorting tricks and no numpy:

* RecencyScorer / PriorityScorer: each item counts the strictly older / lower items among all
  items, O(N) per item, O(N^2) per scoring pass;
* FrequencyScorer: each item tests every other item with SHARES-ANY-TAG (ASCII case-insensitive),
  O(N^2 * T^2);
* ScaledScorer: each item re-scores every item with the inner scorer to find min and max, O(N^2)
  inner calls (O(N^3) when the inner scorer is itself relative);
* CompositeScorer: per item, each child's per-item score times its normalised weight, in order;
* KindScorer: a weight-map lookup per item;
* GreedySlice: the density array, a stable sort, the single greedy pass;
* KnapsackSlice: the DP with a 1D value row and a 2D ``keep[n][capacity + 1]`` table of Python
  booleans, then the backwards reconstruction;
* the pipeline: Classify, Score (one call per item), Deduplicate (map of best index per content),
  Sort ((score, index) keys), Slice with the effective budget, Place (merge pinned at 1.0, scores
  re-associated by identity, UShapedPlacer or ChronologicalPlacer).

The reference implementation's scorers are O(N^2) for the same reason (the per-item interface
compares each item with every other), so this is the algorithmic comparison the measurements
support. It is kept under benchmarks/ and never imported by the package. It only reads
``ContextItem`` fields; overflow handling covers THROW only (the benchmark budgets never
overflow).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from time import perf_counter

from pycupel.model import ContextBudget, ContextItem

__all__ = [
    "DEFAULT_KIND_WEIGHTS",
    "BaselinePipeline",
    "Scorer",
    "composite",
    "frequency_score",
    "greedy_slice",
    "kind_scorer",
    "knapsack_slice",
    "priority_score",
    "recency_score",
    "scaled",
    "u_shaped_place",
]

MAX_FLOAT = sys.float_info.max

Scorer = Callable[[ContextItem, Sequence[ContextItem]], float]
"""The specification's scorer interface: ``Score(item, allItems) -> float64``."""

DEFAULT_KIND_WEIGHTS = {
    "systemprompt": 1.0,
    "memory": 0.8,
    "tooloutput": 0.6,
    "document": 0.4,
    "message": 0.2,
}
"""KindScorer's default weights, keyed by the ASCII-folded kind name."""


# --------------------------------------------------------------------------- scorers


def recency_score(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
    """RECENCY-SCORE."""
    # The instant as integer UTC microseconds: the same ordering as the timestamps, and the
    # cheapest comparison Python has, so the baseline is not slowed by datetime arithmetic.
    if item.timestamp_micros is None:
        return 0.0
    count_with_timestamp = 0
    rank = 0
    for i in range(len(all_items)):
        if all_items[i].timestamp_micros is None:
            continue
        count_with_timestamp += 1
        if all_items[i].timestamp_micros < item.timestamp_micros:  # type: ignore[operator]
            rank += 1
    if count_with_timestamp <= 1:
        return 1.0
    return rank / (count_with_timestamp - 1)


def priority_score(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
    """PRIORITY-SCORE."""
    if item.priority is None:
        return 0.0
    count_with_priority = 0
    rank = 0
    for i in range(len(all_items)):
        if all_items[i].priority is None:
            continue
        count_with_priority += 1
        if all_items[i].priority < item.priority:  # type: ignore[operator]
            rank += 1
    if count_with_priority <= 1:
        return 1.0
    return rank / (count_with_priority - 1)


def _ascii_fold(text: str) -> str:
    # ASCII case folding; str.lower() is the same thing (and C-fast) on ASCII text.
    if text.isascii():
        return text.lower()
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


def _shares_any_tag(tags_a: Sequence[str], tags_b: Sequence[str]) -> bool:
    """SHARES-ANY-TAG with CASE-INSENSITIVE-EQUAL (ASCII case folding)."""
    for i in range(len(tags_a)):
        for j in range(len(tags_b)):
            if _ascii_fold(tags_a[i]) == _ascii_fold(tags_b[j]):
                return True
    return False


def frequency_score(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
    """FREQUENCY-SCORE."""
    if len(item.tags) == 0 or len(all_items) <= 1:
        return 0.0
    matching_items = 0
    for i in range(len(all_items)):
        if all_items[i] is item:
            continue
        if len(all_items[i].tags) == 0:
            continue
        if _shares_any_tag(item.tags, all_items[i].tags):
            matching_items += 1
    return matching_items / (len(all_items) - 1)


def kind_scorer(weights: dict[str, float] | None = None) -> Scorer:
    """KIND-SCORE over a weight map keyed by the folded kind name."""
    table = DEFAULT_KIND_WEIGHTS if weights is None else weights

    def kind_score(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        key = item.kind.key  # the kind's name, ASCII-folded once when the item was built
        if key in table:
            return table[key]
        return 0.0

    return kind_score


def scaled(inner: Scorer) -> Scorer:
    """SCALED-SCORE around ``inner``: every call re-scores every item."""

    def scaled_score(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        if len(all_items) == 0:
            return 0.5
        raw_score = math.nan
        low = math.inf
        high = -math.inf
        for i in range(len(all_items)):
            s = inner(all_items[i], all_items)
            low = min(low, s)
            high = max(high, s)
            if all_items[i] is item:
                raw_score = s
        if high == low:
            return 0.5
        return (raw_score - low) / (high - low)

    return scaled_score


@dataclass
class StageClock:
    """Seconds spent per named part of a run (children of a composite, pipeline stages)."""

    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, elapsed: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + elapsed


def composite(
    entries: Sequence[tuple[str, Scorer, float]], clock: StageClock | None = None
) -> Scorer:
    """COMPOSITE-SCORE with CONSTRUCT-COMPOSITE's normalised weights.

    ``entries`` are ``(name, scorer, weight)``; with a ``clock`` the time of each child is
    added up under its name (one clock read per child call, negligible next to O(N) calls).
    """
    total_weight = 0.0
    for _, _, weight in entries:
        total_weight += weight
    normalized = [weight / total_weight for _, _, weight in entries]
    scorers = [scorer for _, scorer, _ in entries]
    names = [name for name, _, _ in entries]

    def composite_score(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        result = 0.0
        for i in range(len(scorers)):
            if clock is None:
                result = result + scorers[i](item, all_items) * normalized[i]
            else:
                started = perf_counter()
                result = result + scorers[i](item, all_items) * normalized[i]
                clock.add(names[i], perf_counter() - started)
        return result

    return composite_score


# --------------------------------------------------------------------------- slicers

ScoredPair = tuple[ContextItem, float]


def greedy_slice(scored_items: Sequence[ScoredPair], budget: ContextBudget) -> list[ContextItem]:
    """GREEDY-SLICE."""
    if len(scored_items) == 0 or budget.target_tokens <= 0:
        return []
    densities: list[tuple[float, int]] = []
    for i in range(len(scored_items)):
        tokens = scored_items[i][0].tokens
        if tokens == 0:
            densities.append((MAX_FLOAT, i))
        else:
            densities.append((scored_items[i][1] / tokens, i))
    densities.sort(key=lambda entry: (-entry[0], entry[1]))
    remaining = budget.target_tokens
    selected = []
    for i in range(len(densities)):
        original_index = densities[i][1]
        item = scored_items[original_index][0]
        tokens = item.tokens
        if tokens == 0:
            selected.append(item)
        elif tokens <= remaining:
            selected.append(item)
            remaining = remaining - tokens
    return selected


def knapsack_slice(
    scored_items: Sequence[ScoredPair], budget: ContextBudget, bucket_size: int = 100
) -> list[ContextItem]:
    """KNAPSACK-SLICE with the 2D keep table."""
    if len(scored_items) == 0 or budget.target_tokens <= 0:
        return []
    zero_token_items = []
    candidates = []
    for i in range(len(scored_items)):
        if scored_items[i][0].tokens == 0:
            zero_token_items.append(scored_items[i][0])
        elif scored_items[i][0].tokens > 0:
            candidates.append(scored_items[i])
    if len(candidates) == 0:
        return zero_token_items
    n = len(candidates)
    weights = [0] * n
    values = [0] * n
    items: list[ContextItem] = [candidates[i][0] for i in range(n)]
    for i in range(n):
        weights[i] = candidates[i][0].tokens
        values[i] = max(0, math.floor(candidates[i][1] * 10000))
    capacity = budget.target_tokens // bucket_size
    if capacity == 0:
        return zero_token_items
    discretized = [0] * n
    for i in range(n):
        discretized[i] = -(-weights[i] // bucket_size)  # ceil
    dp = [0] * (capacity + 1)
    keep = [[False] * (capacity + 1) for _ in range(n)]
    for i in range(n):
        dw = discretized[i]
        dv = values[i]
        row = keep[i]
        for w in range(capacity, dw - 1, -1):
            with_item = dp[w - dw] + dv
            if with_item > dp[w]:
                dp[w] = with_item
                row[w] = True
    selected = []
    remaining_capacity = capacity
    for i in range(n - 1, -1, -1):
        if keep[i][remaining_capacity]:
            selected.append(items[i])
            remaining_capacity = remaining_capacity - discretized[i]
    return zero_token_items + selected


# --------------------------------------------------------------------------- placers


def u_shaped_place(items: Sequence[ScoredPair]) -> list[ContextItem]:
    """U-SHAPED-PLACE."""
    if len(items) <= 1:
        return [pair[0] for pair in items]
    scored = [(items[i][1], i) for i in range(len(items))]
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    result: list[ContextItem | None] = [None] * len(items)
    left = 0
    right = len(items) - 1
    for i in range(len(scored)):
        item = items[scored[i][1]][0]
        if i % 2 == 0:
            result[left] = item
            left += 1
        else:
            result[right] = item
            right -= 1
    return [item for item in result if item is not None]


# --------------------------------------------------------------------------- pipeline


def effective_budget(budget: ContextBudget, pinned_tokens: int) -> ContextBudget:
    """COMPUTE-EFFECTIVE-BUDGET."""
    reserved = sum(budget.reserved_slots.values()) if budget.reserved_slots else 0
    effective_max = max(0, budget.max_tokens - budget.output_reserve - pinned_tokens - reserved)
    effective_target = max(0, budget.target_tokens - pinned_tokens - reserved)
    effective_target = min(effective_target, effective_max)
    margin = budget.estimation_safety_margin_percent
    if margin > 0:
        multiplier = 1.0 - margin / 100.0
        effective_max = math.floor(effective_max * multiplier)
        effective_target = math.floor(effective_target * multiplier)
        effective_target = min(effective_target, effective_max)
    return ContextBudget(max_tokens=effective_max, target_tokens=effective_target)


Slicer = Callable[[Sequence[ScoredPair], ContextBudget], list[ContextItem]]
Placer = Callable[[Sequence[ScoredPair]], list[ContextItem]]


@dataclass
class BaselinePipeline:
    """The six stages as the pipeline chapters write them."""

    budget: ContextBudget
    scorer: Scorer
    slicer: Slicer = greedy_slice
    placer: Placer = u_shaped_place
    deduplicate: bool = True
    clock: StageClock | None = None

    def _time(self, name: str, started: float) -> float:
        now = perf_counter()
        if self.clock is not None:
            self.clock.add(name, now - started)
        return now

    def run(self, items: Sequence[ContextItem]) -> list[ContextItem]:
        started = perf_counter()
        # Classify
        pinned = []
        scoreable = []
        for i in range(len(items)):
            item = items[i]
            if item.tokens < 0:
                continue
            if item.pinned:
                pinned.append(item)
            else:
                scoreable.append(item)
        pinned_tokens = 0
        for i in range(len(pinned)):
            pinned_tokens += pinned[i].tokens
        if pinned_tokens > self.budget.max_tokens - self.budget.output_reserve:
            raise ValueError("pinned items exceed the available budget")
        started = self._time("classify", started)

        # Score: the scorer sees the whole scoreable list for every item.
        scored: list[ScoredPair] = []
        for i in range(len(scoreable)):
            scored.append((scoreable[i], self.scorer(scoreable[i], scoreable)))
        started = self._time("score", started)

        # Deduplicate
        if self.deduplicate and len(scored) > 0:
            best_by_content: dict[str, int] = {}
            for i in range(len(scored)):
                content = scored[i][0].content
                if content in best_by_content:
                    if scored[i][1] > scored[best_by_content[content]][1]:
                        best_by_content[content] = i
                else:
                    best_by_content[content] = i
            scored = [
                scored[i] for i in range(len(scored)) if best_by_content[scored[i][0].content] == i
            ]
        started = self._time("deduplicate", started)

        # Sort: (score, index) keys, score descending then index ascending.
        keys = [(scored[i][1], i) for i in range(len(scored))]
        keys.sort(key=lambda key: (-key[0], key[1]))
        ordered = [scored[key[1]] for key in keys]
        started = self._time("sort", started)

        # Slice
        sliced = self.slicer(ordered, effective_budget(self.budget, pinned_tokens))
        started = self._time("slice", started)

        # Place: pinned at 1.0, then the sliced items with their scores re-associated by
        # identity, in sorted order.
        sliced_ids = {id(item) for item in sliced}
        merged: list[ScoredPair] = [(item, 1.0) for item in pinned]
        merged.extend(pair for pair in ordered if id(pair[0]) in sliced_ids)
        merged_tokens = sum(pair[0].tokens for pair in merged)
        if merged_tokens > self.budget.target_tokens:
            raise ValueError("selection exceeds target_tokens (THROW)")
        placed = self.placer(merged)
        self._time("place", started)
        return placed
