"""A brute-force oracle for OptimalSlice, written from its documentation alone.

It enumerates every subset of the items, keeps those that satisfy every hard rule (budget,
token caps, count caps, groups, versions, always-taken zero-token items) and ranks them by
(least count shortfall, least token shortfall, largest rounded score, largest index-weighted
count). Rounding uses exact fractions, independently of the implementation's numpy code.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from pycupel.model import ScoredItem
from pycupel.slicers import CountQuotaEntry, QuotaEntry

GROUP = "cupel:group"
VERSION = "cupel:variant-of"


def rounded_scores(scores: Sequence[float], bits: int = 16) -> list[int]:
    """Scores in units of 2**(e - bits), e the least integer with max|score| <= 2**e."""
    largest = max((abs(Fraction(s)) for s in scores), default=Fraction(0))
    if largest == 0:
        return [0] * len(scores)
    exponent = 0
    while largest > Fraction(2) ** exponent:
        exponent += 1
    while largest <= Fraction(2) ** (exponent - 1):
        exponent -= 1
    scale = Fraction(2) ** (bits - exponent)
    return [round(Fraction(s) * scale) for s in scores]  # round half to even, like numpy


@dataclass(frozen=True)
class Ranked:
    """One feasible subset and its rank key."""

    chosen: frozenset[int]
    count_shortfall: int
    token_shortfall: int
    value: int
    tie_key: int

    @property
    def key(self) -> tuple[int, int, int, int]:
        return (-self.count_shortfall, -self.token_shortfall, self.value, self.tie_key)


def best_selections(
    items: Sequence[ScoredItem],
    target: int,
    quotas: Sequence[QuotaEntry] = (),
    count_quotas: Sequence[CountQuotaEntry] = (),
) -> tuple[list[frozenset[int]], Ranked | None]:
    """All best subsets (as sets of positions) and the rank of one of them."""
    n = len(items)
    if n == 0 or target <= 0:
        return [frozenset()], None
    tokens = [s.item.tokens for s in items]
    kinds = [s.item.kind.key for s in items]
    groups = [s.item.metadata.get(GROUP) for s in items]
    versions = [s.item.metadata.get(VERSION) for s in items]
    values = rounded_scores([s.score for s in items])
    capped = {e.kind.key for e in count_quotas if e.cap_count is not None}
    version_count = {v: versions.count(v) for v in versions if v is not None}

    def group_members(i: int) -> list[int]:
        return [j for j in range(n) if groups[i] is not None and groups[j] == groups[i]] or [i]

    forced = set()
    for i in range(n):
        members = group_members(i)
        if (
            all(tokens[j] == 0 for j in members)
            and all(versions[j] is None or version_count[versions[j]] < 2 for j in members)
            and all(kinds[j] not in capped for j in members)
        ):
            forced.add(i)

    token_caps = [(e.kind.key, math.floor(e.cap / 100.0 * target)) for e in quotas]
    token_needs = [
        (e.kind.key, math.floor(e.require / 100.0 * target))
        for e in quotas
        if math.floor(e.require / 100.0 * target) > 0
    ]
    count_caps = [(e.kind.key, e.cap_count) for e in count_quotas if e.cap_count is not None]
    count_needs = [(e.kind.key, e.require_count) for e in count_quotas if e.require_count > 0]

    best: list[Ranked] = []
    for mask in range(1 << n):
        chosen = [i for i in range(n) if mask >> i & 1]
        chosen_set = set(chosen)
        if not forced <= chosen_set:
            continue
        if sum(tokens[i] for i in chosen) > target:
            continue
        if any(
            groups[i] is not None
            and any(groups[j] == groups[i] and j not in chosen_set for j in range(n))
            for i in chosen
        ):
            continue
        picked_versions = [versions[i] for i in chosen if versions[i] is not None]
        if len(picked_versions) != len(set(picked_versions)):
            continue
        if any(
            sum(tokens[i] for i in chosen if kinds[i] == kind) > cap for kind, cap in token_caps
        ):
            continue
        if any(sum(1 for i in chosen if kinds[i] == kind) > cap for kind, cap in count_caps):
            continue
        ranked = Ranked(
            chosen=frozenset(chosen),
            count_shortfall=sum(
                max(0, need - sum(1 for i in chosen if kinds[i] == kind))
                for kind, need in count_needs
            ),
            token_shortfall=sum(
                max(0, need - sum(tokens[i] for i in chosen if kinds[i] == kind))
                for kind, need in token_needs
            ),
            value=sum(values[i] for i in chosen),
            tie_key=sum(n - i for i in chosen),
        )
        if not best or ranked.key > best[0].key:
            best = [ranked]
        elif ranked.key == best[0].key:
            best.append(ranked)
    return [r.chosen for r in best], best[0]
