"""QuotaSlice: share the budget between context kinds by percentage, then slice per kind."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from pycupel._checks import check_float, check_int
from pycupel.errors import SlicerConfigError
from pycupel.model import ContextBudget, ContextItem, ContextKind, KindLike, ScoredItem
from pycupel.slicers._common import (
    CheckedScoredItems,
    Frozen,
    check_budget,
    check_inner_slicer,
    check_scored_items,
    config_kind,
    negative_tokens_error,
)
from pycupel.slicers.base import (
    CapExclusion,
    CountRequirementShortfall,
    Slicer,
    SliceResult,
    TokenRequirementShortfall,
)
from pycupel.slicers.greedy import GreedySlice

__all__ = ["QuotaEntry", "QuotaSlice"]


class QuotaEntry(Frozen):
    """The budget share of one kind, as percentages of the slicer's target.

    Args:
        kind: the kind (compared case-insensitively).
        require: percentage reserved for this kind, in [0, 100].
        cap: the most this kind may receive, in [require, 100].
    """

    __slots__ = ("_cap", "_kind", "_require")

    _kind: ContextKind
    _require: float
    _cap: float

    def __init__(self, kind: KindLike, require: float = 0.0, cap: float = 100.0) -> None:
        object.__setattr__(self, "_kind", config_kind(kind))
        require = check_float(SlicerConfigError, "require", require, minimum=0, maximum=100)
        cap = check_float(SlicerConfigError, "cap", cap, minimum=0, maximum=100)
        object.__setattr__(self, "_require", require)
        object.__setattr__(self, "_cap", cap)
        if require > cap:
            raise SlicerConfigError(
                "require", require, f"must be <= cap ({self._cap!r}) for kind {self._kind.value!r}"
            )

    @property
    def kind(self) -> ContextKind:
        """The kind this entry configures."""
        return self._kind

    @property
    def require(self) -> float:
        """Guaranteed share, in percent of the target."""
        return self._require

    @property
    def cap(self) -> float:
        """Maximum share, in percent of the target."""
        return self._cap

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QuotaEntry):
            return NotImplemented
        return (self._kind, self._require, self._cap) == (other._kind, other._require, other._cap)

    def __hash__(self) -> int:
        return hash((self._kind, self._require, self._cap))

    def __repr__(self) -> str:
        return f"QuotaEntry({self._kind.value!r}, require={self._require!r}, cap={self._cap!r})"


class QuotaSlice(Frozen):
    """Partition items by kind, share the budget by quota, and let ``inner`` slice each kind.

    The specification's four phases:

    1. partition the items by kind (case-insensitive), in order of first appearance;
    2. sum each partition's tokens (its *candidate mass*);
    3. distribute: each configured kind gets ``floor(require% * target)``; what is left is
       shared in proportion to candidate mass among the kinds whose cap exceeds their require,
       ``floor(unassigned * mass / total_mass)``; each share is clamped to
       ``floor(cap% * target)``. Unconfigured kinds have require 0% and cap 100%. Requires of
       configured kinds with no candidates still come out of the shared remainder;
    4. call ``inner`` on each partition whose budget is positive, with
       ``ContextBudget(max_tokens=cap_tokens, target_tokens=kind_budget)``, and concatenate
       the selections in partition order.

    Every percentage-to-token conversion is floored, so the kind budgets may sum to less than
    the target. Shortfalls (count and token) and cap exclusions reported by ``inner`` are passed
    on in the result; ``inner``'s packing or solver statistics are not (they describe per-kind
    runs).

    Args:
        quotas: one :class:`QuotaEntry` per configured kind (no kind twice, requires summing to
            at most 100).
        inner: the slicer used within each kind; ``None`` means :class:`GreedySlice`.
    """

    __slots__ = ("_by_key", "_inner", "_quotas")

    _quotas: tuple[QuotaEntry, ...]
    _by_key: Mapping[str, QuotaEntry]
    _inner: Slicer

    def __init__(self, quotas: Iterable[QuotaEntry], inner: Slicer | None = None) -> None:
        if isinstance(quotas, str | bytes | Mapping) or not isinstance(quotas, Iterable):
            raise SlicerConfigError("quotas", quotas, "must be an iterable of QuotaEntry")
        entries = tuple(quotas)
        by_key: dict[str, QuotaEntry] = {}
        for index, entry in enumerate(entries):
            if not isinstance(entry, QuotaEntry):
                raise SlicerConfigError(f"quotas[{index}]", entry, "must be a QuotaEntry")
            if entry.kind.key in by_key:
                raise SlicerConfigError(
                    f"quotas[{index}].kind",
                    entry.kind.value,
                    "must not repeat a kind (kinds compare case-insensitively)",
                )
            by_key[entry.kind.key] = entry
        total_require = math.fsum(entry.require for entry in entries)
        if total_require > 100.0:
            raise SlicerConfigError(
                "quotas", total_require, "the require percentages must sum to at most 100"
            )
        object.__setattr__(self, "_quotas", entries)
        object.__setattr__(self, "_by_key", MappingProxyType(by_key))
        chosen = GreedySlice() if inner is None else check_inner_slicer("inner", inner)
        object.__setattr__(self, "_inner", chosen)

    @property
    def quotas(self) -> tuple[QuotaEntry, ...]:
        """The configured entries, in the order given."""
        return self._quotas

    @property
    def inner(self) -> Slicer:
        """The slicer applied within each kind."""
        return self._inner

    @property
    def budget_monotonic(self) -> bool:
        """False: the specification excludes QuotaSlice from budget simulation."""
        return False

    def kind_budgets(
        self, items: Sequence[ScoredItem], target_tokens: int
    ) -> dict[ContextKind, int]:
        """The token budget phase 3 gives each kind present in ``items``, in partition order.

        Exposed to explain a selection; :meth:`slice` uses exactly these numbers.
        """
        check_int(SlicerConfigError, "target_tokens", target_tokens, minimum=0)
        partitions = _partition(items)
        budgets = self._distribute(partitions, target_tokens)
        return {group.kind: budgets[key] for key, group in partitions.items()}

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        """Select from ``items`` with the budget shared between kinds by quota."""
        target = check_budget(budget).target_tokens
        items = check_scored_items(items)
        if not items or target <= 0:
            return SliceResult(())
        partitions = _partition(items)
        budgets = self._distribute(partitions, target)

        selected: list[ContextItem] = []
        shortfalls: list[CountRequirementShortfall] = []
        token_shortfalls: list[TokenRequirementShortfall] = []
        cap_exclusions: list[CapExclusion] = []
        inner = self._inner
        for key, group in partitions.items():
            kind_budget = budgets[key]
            if kind_budget <= 0:
                continue
            entry = self._by_key.get(key)
            cap_tokens = _percent_of(entry.cap if entry else 100.0, target)
            result = inner.slice(
                CheckedScoredItems(group.members),  # from input this slice() checked
                ContextBudget(max_tokens=cap_tokens, target_tokens=kind_budget),
            )
            selected.extend(result.selected)
            shortfalls.extend(result.shortfalls)
            token_shortfalls.extend(result.token_shortfalls)
            cap_exclusions.extend(result.cap_exclusions)
        return SliceResult(
            tuple(selected),
            shortfalls=tuple(shortfalls),
            token_shortfalls=tuple(token_shortfalls),
            cap_exclusions=tuple(cap_exclusions),
        )

    def _distribute(self, partitions: dict[str, _Partition], target: int) -> dict[str, int]:
        """DISTRIBUTE-BUDGET: the token budget of every partitioned kind."""
        require_tokens = {
            key: _percent_of(entry.require, target) for key, entry in self._by_key.items()
        }
        cap_tokens = {key: _percent_of(entry.cap, target) for key, entry in self._by_key.items()}
        unassigned = max(0, target - sum(require_tokens.values()))

        total_mass = 0
        for key, group in partitions.items():
            if cap_tokens.get(key, target) > require_tokens.get(key, 0):
                total_mass += group.mass

        budgets: dict[str, int] = {}
        for key, group in partitions.items():
            require = require_tokens.get(key, 0)
            cap = cap_tokens.get(key, target)
            proportional = 0
            if total_mass > 0 and cap > require:
                proportional = unassigned * group.mass // total_mass
            budgets[key] = min(require + proportional, cap)
        return budgets

    def __repr__(self) -> str:
        entries = ", ".join(repr(entry) for entry in self._quotas)
        return f"QuotaSlice([{entries}], inner={self._inner!r})"


def _partition(items: Sequence[ScoredItem]) -> dict[str, _Partition]:
    """Items grouped by case-folded kind, in order of first appearance, with token masses."""
    groups: dict[str, _Partition] = {}
    for index, scored in enumerate(items):
        item = scored.item
        tokens = item.tokens
        if tokens < 0:
            raise negative_tokens_error(index, tokens)
        group = groups.get(item.kind.key)
        if group is None:
            groups[item.kind.key] = _Partition(item.kind, tokens, [scored])
        else:
            group.mass += tokens
            group.members.append(scored)
    return groups


class _Partition:
    """One kind's candidates (input order) and their total tokens."""

    __slots__ = ("kind", "mass", "members")

    def __init__(self, kind: ContextKind, mass: int, members: list[ScoredItem]) -> None:
        self.kind = kind
        self.mass = mass
        self.members = members


def _percent_of(percent: float, target: int) -> int:
    """``floor(percent / 100.0 * target)``, the specification's conversion."""
    return math.floor(percent / 100.0 * target)
