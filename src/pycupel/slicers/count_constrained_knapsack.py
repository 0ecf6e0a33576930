"""CountConstrainedKnapsackSlice: per-kind count limits around a knapsack-optimal fill."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pycupel.errors import SlicerConfigError
from pycupel.model import ContextBudget, ContextItem, ScoredItem
from pycupel.slicers._common import Frozen, check_budget, check_scored_items, score_desc_key
from pycupel.slicers._count_phases import (
    CountPolicy,
    count_satisfy,
    enforce_caps,
    residual_budget,
    residual_items,
)
from pycupel.slicers.base import SliceResult
from pycupel.slicers.count_quota import CountQuotaEntry, ScarcityBehavior
from pycupel.slicers.knapsack import KnapsackSlice

__all__ = ["CountConstrainedKnapsackSlice"]


class CountConstrainedKnapsackSlice(Frozen):
    """CountQuotaSlice's count limits with a :class:`KnapsackSlice` as the phase-2 engine.

    1. *count-satisfy*: exactly as :class:`~pycupel.slicers.CountQuotaSlice` (shortfall or
       :class:`~pycupel.errors.CountRequirementError` naming ``CountConstrainedKnapsackSlice``);
    2. *knapsack-distribute*: the knapsack selects from the remaining candidates within
       ``min(max(0, target - pre_allocated), max_tokens)``; its picks are then re-sorted by
       score descending, because the knapsack's output order is not a ranking. The re-sort
       is stable, so equal scores keep the knapsack's output order (zero-token items first,
       then the DP's reconstruction order), as the specification's stable sort does;
    3. *cap enforcement*: per-kind counts start from the phase-1 commitments; picks over a
       kind's ``cap_count`` are dropped and reported as
       :class:`~pycupel.slicers.CapExclusion` records in ``SliceResult.cap_exclusions``.

    The result lists the commitments, then the surviving picks in score order. A knapsack
    table over the memory cap raises :class:`~pycupel.errors.TableTooLargeError`.

    Args:
        entries: one :class:`CountQuotaEntry` per constrained kind (no kind twice).
        knapsack: the phase-2 knapsack; ``None`` means ``KnapsackSlice()`` (bucket size 100).
        scarcity: :class:`ScarcityBehavior` (or its name) for unmet requirements.
    """

    __slots__ = ("_knapsack", "_policy", "_scarcity")

    _policy: CountPolicy
    _knapsack: KnapsackSlice
    _scarcity: ScarcityBehavior

    def __init__(
        self,
        entries: Iterable[CountQuotaEntry],
        knapsack: KnapsackSlice | None = None,
        scarcity: ScarcityBehavior | str = ScarcityBehavior.DEGRADE,
    ) -> None:
        object.__setattr__(self, "_policy", CountPolicy(entries, CountQuotaEntry))
        if knapsack is None:
            knapsack = KnapsackSlice()
        elif not isinstance(knapsack, KnapsackSlice):
            raise SlicerConfigError("knapsack", knapsack, "must be a KnapsackSlice")
        object.__setattr__(self, "_knapsack", knapsack)
        object.__setattr__(self, "_scarcity", ScarcityBehavior.parse(scarcity))

    @property
    def entries(self) -> tuple[CountQuotaEntry, ...]:
        """The configured entries, in the order given."""
        return self._policy.entries

    @property
    def knapsack(self) -> KnapsackSlice:
        """The phase-2 knapsack."""
        return self._knapsack

    @property
    def scarcity(self) -> ScarcityBehavior:
        """What happens when a requirement cannot be met."""
        return self._scarcity

    @property
    def budget_monotonic(self) -> bool:
        """False: the specification excludes count-quota slicers from budget simulation."""
        return False

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        """Select from ``items`` honouring the count limits, knapsack-optimal in between."""
        check_budget(budget)
        items = check_scored_items(items)
        if not items or budget.target_tokens <= 0:
            return SliceResult(())
        policy = self._policy
        state = count_satisfy(
            items,
            policy,
            throw=self._scarcity is ScarcityBehavior.THROW,
            slicer_name="CountConstrainedKnapsackSlice",
        )
        residual = residual_items(items, state)
        picks = self._knapsack.slice(residual, residual_budget(budget, state)).selected
        kept, excluded = enforce_caps(_by_score(picks, residual), policy, state)
        return SliceResult(
            tuple(state.committed + kept),
            shortfalls=tuple(state.shortfalls),
            cap_exclusions=tuple(excluded),
        )

    def __repr__(self) -> str:
        entries = ", ".join(repr(entry) for entry in self._policy.entries)
        return (
            f"CountConstrainedKnapsackSlice([{entries}], knapsack={self._knapsack!r}, "
            f"scarcity=ScarcityBehavior.{self._scarcity.name})"
        )


def _by_score(picks: Sequence[ContextItem], pool: Sequence[ScoredItem]) -> list[ContextItem]:
    """``picks`` stably re-sorted by score descending (NaN last).

    The sort is stable over the knapsack's own output order, as the specification's re-sort
    is (every sort in the specification is stable), so equal scores keep the order in which
    the knapsack returned them (zero-token items, then reconstruction order), not their
    position in ``pool``.
    """
    if len(picks) < 2:
        return list(picks)
    score_of: dict[int, float] = {}
    for scored in pool:
        score_of.setdefault(id(scored.item), scored.score)
    return sorted(picks, key=lambda item: score_desc_key(score_of[id(item)]))
