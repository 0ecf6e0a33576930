"""The phases CountQuotaSlice and CountConstrainedKnapsackSlice share.

Both slicers run the same phase 1 (*count-satisfy*: commit the top ``require_count`` items of
each required kind) and phase 3 (*cap enforcement*: drop phase-2 picks of a kind whose count
has reached ``cap_count``, counting from the phase-1 commitments). They differ only in phase 2
(any inner slicer versus the knapsack with a score re-sort), which each slicer implements.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from pycupel.errors import CountRequirementError, SlicerConfigError
from pycupel.model import ContextBudget, ContextItem, ContextKind, ScoredItem
from pycupel.slicers._common import (
    CheckedScoredItems,
    negative_tokens_error,
    score_desc_key,
    scores_of,
)
from pycupel.slicers.base import CapExclusion, CountRequirementShortfall

if TYPE_CHECKING:
    from pycupel.slicers.count_quota import CountQuotaEntry

__all__ = [
    "CountPolicy",
    "CountSatisfied",
    "count_satisfy",
    "enforce_caps",
    "residual_budget",
    "residual_items",
]


class CountPolicy:
    """Validated count entries, indexed by case-folded kind for the phases."""

    __slots__ = ("caps", "entries", "required")

    entries: tuple[CountQuotaEntry, ...]
    required: tuple[tuple[str, ContextKind, int], ...]
    """(folded kind, kind, require_count) of the entries with ``require_count > 0``, in order."""
    caps: Mapping[str, tuple[ContextKind, int]]
    """(kind, cap_count) of every entry that has a cap, by folded kind."""

    def __init__(self, entries: Iterable[CountQuotaEntry], entry_type: type[object]) -> None:
        if isinstance(entries, str | bytes | Mapping) or not isinstance(entries, Iterable):
            raise SlicerConfigError("entries", entries, "must be an iterable of CountQuotaEntry")
        checked = tuple(entries)
        seen: set[str] = set()
        for index, entry in enumerate(checked):
            if not isinstance(entry, entry_type):
                raise SlicerConfigError(f"entries[{index}]", entry, "must be a CountQuotaEntry")
            if entry.kind.key in seen:
                raise SlicerConfigError(
                    f"entries[{index}].kind",
                    entry.kind.value,
                    "must not repeat a kind (kinds compare case-insensitively)",
                )
            seen.add(entry.kind.key)
        self.entries = checked
        self.required = tuple(
            (e.kind.key, e.kind, e.require_count) for e in checked if e.require_count > 0
        )
        self.caps = {e.kind.key: (e.kind, e.cap_count) for e in checked if e.cap_count is not None}


class CountSatisfied:
    """What phase 1 committed (one run's local state, never stored on a slicer)."""

    __slots__ = ("committed", "counts", "pre_allocated", "shortfalls")

    def __init__(self) -> None:
        self.committed: list[ContextItem] = []
        self.counts: dict[str, int] = {}
        self.pre_allocated = 0
        self.shortfalls: list[CountRequirementShortfall] = []


def count_satisfy(
    items: Sequence[ScoredItem], policy: CountPolicy, *, throw: bool, slicer_name: str
) -> CountSatisfied:
    """Phase 1: commit the best ``require_count`` items of every required kind.

    Each required kind's candidates are ranked by score descending (input order on ties, NaN
    last), as the specification demands even for sorted input. When the input is already in
    that order (checked in numpy), ranking each kind is the identity, so the first
    ``require_count`` items of each kind are taken in a single early-exiting pass. A kind with
    too few candidates commits what it has and records a shortfall, or raises
    :class:`CountRequirementError` when ``throw`` is set.
    """
    state = CountSatisfied()
    if not policy.required:
        return state
    best_by_kind = _leading(items, policy) if _score_sorted(items) else _ranked(items, policy)

    for key, kind, require in policy.required:
        best = best_by_kind[key]
        for index, scored in best:
            tokens = scored.item.tokens
            if tokens < 0:
                raise negative_tokens_error(index, tokens)
            state.committed.append(scored.item)
            state.pre_allocated += tokens
        satisfied = len(best)
        state.counts[key] = satisfied
        if satisfied < require:
            if throw:
                raise CountRequirementError(slicer_name, kind.value, satisfied, require)
            state.shortfalls.append(CountRequirementShortfall(kind, require, satisfied))
    return state


Picks = dict[str, list[tuple[int, ScoredItem]]]
"""Per folded kind: the (input position, item) pairs phase 1 commits, best first."""


def _score_sorted(items: Sequence[ScoredItem]) -> bool:
    """Whether ``items`` is already in score-descending order (NaN last), as the pipeline
    delivers it. Then every kind's candidates are in ranked order too."""
    scores = scores_of(items)
    keys = np.where(np.isnan(scores), np.inf, -scores)
    return bool(np.all(keys[1:] >= keys[:-1]))


def _leading(items: Sequence[ScoredItem], policy: CountPolicy) -> Picks:
    """For sorted input: the first ``require_count`` items of each kind, in one pass that ends
    as soon as every requirement is met."""
    wanted = {key: require for key, _, require in policy.required}
    picks: Picks = {key: [] for key in wanted}
    open_kinds = len(wanted)
    for index, scored in enumerate(items):
        key = scored.item.kind.key
        chosen = picks.get(key)
        if chosen is not None and len(chosen) < wanted[key]:
            chosen.append((index, scored))
            if len(chosen) == wanted[key]:
                open_kinds -= 1
                if open_kinds == 0:
                    break
    return picks


def _ranked(items: Sequence[ScoredItem], policy: CountPolicy) -> Picks:
    """For any input: rank each required kind's candidates by score and take the best."""
    pools: Picks = {key: [] for key, _, _ in policy.required}
    for index, scored in enumerate(items):
        pool = pools.get(scored.item.kind.key)
        if pool is not None:
            pool.append((index, scored))
    # nsmallest is documented as sorted(...)[:n], so ties keep input order.
    return {
        key: heapq.nsmallest(require, pools[key], key=_rank) for key, _, require in policy.required
    }


def _rank(pair: tuple[int, ScoredItem]) -> float:
    return score_desc_key(pair[1].score)


def residual_items(items: Sequence[ScoredItem], state: CountSatisfied) -> Sequence[ScoredItem]:
    """The candidates phase 1 did not commit (input order; items compare by identity).

    ``items`` has been checked by the calling slicer, so the result is marked as checked.
    """
    if not state.committed:
        return CheckedScoredItems(items)
    committed = set(state.committed)
    return CheckedScoredItems(scored for scored in items if scored.item not in committed)


def residual_budget(budget: ContextBudget, state: CountSatisfied) -> ContextBudget:
    """Phase 2's budget: the target less the committed tokens, ``max_tokens`` unchanged."""
    residual_target = max(0, budget.target_tokens - state.pre_allocated)
    return ContextBudget(
        max_tokens=budget.max_tokens, target_tokens=min(residual_target, budget.max_tokens)
    )


def enforce_caps(
    picks: Iterable[ContextItem], policy: CountPolicy, state: CountSatisfied
) -> tuple[list[ContextItem], list[CapExclusion]]:
    """Phase 3: keep phase-2 picks while their kind is under its cap; return (kept, excluded).

    Counts start from the phase-1 commitments, which are never removed themselves. Each
    excluded pick comes with its kind's cap and the count the kind would have reached without
    the cap (commitments plus every phase-2 pick of the kind), known only here.
    """
    caps = policy.caps
    if not caps:
        return list(picks), []
    counts = state.counts
    # Without the cap every pick would stay: the kind's uncapped total is the commitments
    # plus all of its picks.
    uncapped = {key: counts.get(key, 0) for key in caps}
    kept: list[ContextItem] = []
    over: list[ContextItem] = []
    for item in picks:
        key = item.kind.key
        capped = caps.get(key)
        count = counts.get(key, 0)
        if capped is not None:
            uncapped[key] += 1
            if count >= capped[1]:
                over.append(item)
                continue
        kept.append(item)
        counts[key] = count + 1
    excluded: list[CapExclusion] = []
    for item in over:
        key = item.kind.key
        kind, cap = caps[key]
        excluded.append(CapExclusion(item, kind, cap, uncapped[key]))
    return kept, excluded
