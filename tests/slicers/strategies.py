"""Hypothesis strategies and literal transcriptions of the specification's pseudocode.

The transcriptions are deliberately naive (lists, nested loops) so they can serve as oracles
for the vectorised implementations.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable

from hypothesis import strategies as st

from pycupel.model import ContextItem, ScoredItem

KINDS = ["Message", "Document", "tool", "TOOL", "memory"]

scores = st.one_of(
    st.floats(min_value=-0.5, max_value=1.5, allow_nan=False),
    st.sampled_from([0.0, 0.25, 0.5, 1.0, 0.00005, -0.0]),
)
tokens = st.one_of(st.integers(min_value=0, max_value=400), st.sampled_from([0, 1, 100, 150]))

# Count entries (kind, require_count, cap_count) that pass validation, kinds unique.
entries_strategy = st.lists(
    st.tuples(
        st.sampled_from(["Message", "tool", "memory"]),
        st.integers(min_value=0, max_value=3),
        st.one_of(st.none(), st.integers(min_value=0, max_value=4)),
    ).filter(lambda e: e[2] is None or (e[1] <= e[2] and not (e[2] == 0 and e[1] > 0))),
    max_size=3,
    unique_by=lambda e: e[0].lower(),
)


@st.composite
def scored_lists(
    draw: st.DrawFn, max_size: int = 12, nan: bool = False, kinds: bool = False
) -> list[ScoredItem]:
    """Score-sorted (descending, stable) lists of scored items with unique contents."""
    count = draw(st.integers(min_value=0, max_value=max_size))
    score_strategy = st.one_of(scores, st.just(math.nan)) if nan else scores
    items = []
    for index in range(count):
        kind = draw(st.sampled_from(KINDS)) if kinds else "Message"
        item = ContextItem(f"item-{index}", tokens=draw(tokens), kind=kind)
        items.append(ScoredItem(item, draw(score_strategy)))
    items.sort(key=lambda s: -s.score if not math.isnan(s.score) else math.inf)
    return items


def literal_greedy(items: list[ScoredItem], target: int) -> list[ContextItem]:
    """GREEDY-SLICE, line by line (NaN densities ranked last, as the implementation does)."""
    if not items or target <= 0:
        return []
    densities = []
    for i, s in enumerate(items):
        if s.item.tokens == 0:
            densities.append((sys.float_info.max, i))
        else:
            densities.append((s.score / s.item.tokens, i))

    def key(entry: tuple[float, int]) -> tuple[int, float, int]:
        density, index = entry
        return (1, 0.0, index) if math.isnan(density) else (0, -density, index)

    densities.sort(key=key)
    remaining = target
    chosen = []
    for _, index in densities:
        item = items[index].item
        if item.tokens == 0:
            chosen.append(item)
        elif item.tokens <= remaining:
            chosen.append(item)
            remaining -= item.tokens
    return chosen


def literal_knapsack(items: list[ScoredItem], target: int, bucket: int) -> list[ContextItem]:
    """KNAPSACK-SLICE, line by line, with a full boolean keep table (NaN scores worth 0)."""
    if not items or target <= 0:
        return []
    zero = [s.item for s in items if s.item.tokens == 0]
    candidates = [s for s in items if s.item.tokens > 0]
    if not candidates:
        return zero
    n = len(candidates)
    values = [0 if math.isnan(s.score) else max(0, math.floor(s.score * 10000)) for s in candidates]
    capacity = target // bucket
    if capacity == 0:
        return zero
    weights = [math.ceil(s.item.tokens / bucket) for s in candidates]
    dp = [0] * (capacity + 1)
    keep = [[False] * (capacity + 1) for _ in range(n)]
    for i in range(n):
        dw, dv = weights[i], values[i]
        for w in range(capacity, dw - 1, -1):
            with_item = dp[w - dw] + dv
            if with_item > dp[w]:
                dp[w] = with_item
                keep[i][w] = True
    chosen = []
    remaining = capacity
    for i in range(n - 1, -1, -1):
        if keep[i][remaining]:
            chosen.append(candidates[i].item)
            remaining -= weights[i]
    return zero + chosen


def _desc(score: float) -> float:
    return math.inf if math.isnan(score) else -score


def literal_count_quota(
    items: list[ScoredItem],
    target: int,
    max_tokens: int,
    entries: list[tuple[str, int, int | None]],
    inner: Callable[[list[ScoredItem], int], list[ContextItem]],
    *,
    resort: bool,
) -> tuple[list[ContextItem], list[tuple[str, int, int]], list[tuple[str, int, int]]]:
    """COUNT-QUOTA-SLICE / COUNT-KNAPSACK-CAP, line by line.

    Returns (selected, shortfalls as (kind, required, satisfied), cap exclusions as
    (content, cap, count the kind would have reached without its cap)).
    ``resort`` stably re-sorts the inner picks by score descending: equal scores keep the
    inner slicer's output order, as the specification's (stable) sort does.
    """
    if not items or target <= 0:
        return [], [], []
    entry_by_kind = {kind.lower(): (req, cap) for kind, req, cap in entries}
    partitions: dict[str, list[ScoredItem]] = {}
    for s in items:
        partitions.setdefault(s.item.kind.key, []).append(s)
    for group in partitions.values():
        group.sort(key=lambda s: _desc(s.score))
    committed: list[ContextItem] = []
    selected_count: dict[str, int] = {}
    pre_allocated = 0
    shortfalls = []
    for kind, require, _ in entries:
        if require <= 0:
            continue
        satisfied = 0
        for candidate in partitions.get(kind.lower(), []):
            if satisfied >= require:
                break
            committed.append(candidate.item)
            pre_allocated += candidate.item.tokens
            satisfied += 1
        selected_count[kind.lower()] = satisfied
        if satisfied < require:
            shortfalls.append((kind, require, satisfied))
    residual = [s for s in items if all(s.item is not c for c in committed)]
    residual_target = min(max(0, target - pre_allocated), max_tokens)
    picks = inner(residual, residual_target)
    if resort:
        score_of = {id(s.item): s.score for s in residual}
        picks = sorted(picks, key=lambda it: _desc(score_of[id(it)]))
    result = list(committed)
    # Without caps every pick would stay, on top of the commitments.
    uncapped = dict(selected_count)
    for item in picks:
        uncapped[item.kind.key] = uncapped.get(item.kind.key, 0) + 1
    excluded = []
    for item in picks:
        key = item.kind.key
        count = selected_count.get(key, 0)
        cap = entry_by_kind[key][1] if key in entry_by_kind else None
        if cap is not None and count >= cap:
            excluded.append((item.content, cap, uncapped[key]))
        else:
            result.append(item)
            selected_count[key] = count + 1
    return result, shortfalls, excluded
