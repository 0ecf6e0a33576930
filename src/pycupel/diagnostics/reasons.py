"""Why an item was included in, or excluded from, the context window.

Exclusion reasons are data-carrying: each variant holds the facts of its decision, so callers
inspect fields instead of parsing messages. The wire discriminator of every variant is its
:attr:`ExclusionReason.name`. Variants marked *reserved* by the specification are defined for
forward compatibility; the built-in stages emit only the active ones (plus
:class:`QuotaCapExceeded` for items a count-capping slicer removed; see the pipeline).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = [
    "BudgetExceeded",
    "Deduplicated",
    "ExclusionReason",
    "Filtered",
    "InclusionReason",
    "NegativeTokens",
    "PinnedOverride",
    "QuotaCapExceeded",
    "QuotaRequireDisplaced",
    "ScoredTooLow",
    "UnknownExclusionReason",
]


class InclusionReason(enum.StrEnum):
    """Why an item was selected (the value is the wire name)."""

    SCORED = "Scored"
    """Selected by the slicer on its score, within the budget."""
    PINNED = "Pinned"
    """Pinned: bypassed scoring and slicing."""
    ZERO_TOKEN = "ZeroToken"
    """A non-pinned item costing zero tokens: included at no budget cost."""


class ExclusionReason:
    """Base of the exclusion reasons. ``name`` is the wire discriminator (the variant name)."""

    __slots__ = ()

    @property
    def name(self) -> str:
        """The variant name, e.g. ``"BudgetExceeded"``."""
        return type(self).__name__

    def describe(self) -> str:
        """A short human-readable account of the decision (without the variant name)."""
        raise NotImplementedError

    def __str__(self) -> str:
        return f"{self.name}: {self.describe()}"


@dataclass(frozen=True, slots=True)
class BudgetExceeded(ExclusionReason):
    """The item did not fit in the tokens still available (Slice, or Place when truncating).

    ``available_tokens`` is the slicer's effective target minus the tokens of everything it
    selected (at Slice), or the target minus the tokens kept so far (at Place).
    """

    item_tokens: int
    available_tokens: int

    def describe(self) -> str:
        return f"{self.item_tokens} tokens requested, {self.available_tokens} available"


@dataclass(frozen=True, slots=True)
class ScoredTooLow(ExclusionReason):
    """Reserved: the item scored below a selection threshold."""

    score: float
    threshold: float

    def describe(self) -> str:
        return f"score {self.score!r} below threshold {self.threshold!r}"


@dataclass(frozen=True, slots=True)
class Deduplicated(ExclusionReason):
    """A byte-exact duplicate of a better-scored (or earlier, on ties) item that was kept."""

    deduplicated_against: str
    """The content of the kept item."""

    def describe(self) -> str:
        return f"duplicate of {_preview(self.deduplicated_against)}"


@dataclass(frozen=True, slots=True)
class QuotaCapExceeded(ExclusionReason):
    """The item's kind had reached its cap in the slicer's selection."""

    kind: str
    cap: int
    actual: int
    """How many items of the kind the selection would hold without the cap."""

    def describe(self) -> str:
        return f"kind {self.kind} at its cap of {self.cap} ({self.actual} wanted)"


@dataclass(frozen=True, slots=True)
class QuotaRequireDisplaced(ExclusionReason):
    """Reserved: displaced to satisfy another kind's quota requirement."""

    displaced_by_kind: str

    def describe(self) -> str:
        return f"displaced to satisfy the requirement of kind {self.displaced_by_kind}"


@dataclass(frozen=True, slots=True)
class NegativeTokens(ExclusionReason):
    """The item declared a negative token count (excluded at Classify, even when pinned)."""

    tokens: int

    def describe(self) -> str:
        return f"{self.tokens} tokens"


@dataclass(frozen=True, slots=True)
class PinnedOverride(ExclusionReason):
    """The pinned items left too little room for the item.

    At the Slice stage: the item is larger than the slicer's effective target (the budget less
    the pinned tokens) but no larger than the target the budget would give with no pinned
    items; an item that merely lost out to better-scored items is ``BudgetExceeded`` instead.
    When TRUNCATE drops it: it would have fit in the original target without the pinned items.
    """

    displaced_by: str
    """The content of the pinned item that displaced it (the largest one)."""

    def describe(self) -> str:
        return f"displaced by pinned item {_preview(self.displaced_by)}"


@dataclass(frozen=True, slots=True)
class Filtered(ExclusionReason):
    """Reserved: excluded by a user-defined filter predicate."""

    filter_name: str

    def describe(self) -> str:
        return f"removed by filter {self.filter_name!r}"


@dataclass(frozen=True, slots=True)
class UnknownExclusionReason(ExclusionReason):
    """A reason read from JSON whose variant this version does not know.

    It keeps the variant name and every other field as read, so a report from a newer
    implementation can be inspected and written back without loss.
    """

    name: str  # a field here, a computed property on the base class
    fields: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", MappingProxyType(dict(self.fields)))

    def describe(self) -> str:
        details = ", ".join(f"{key}={value!r}" for key, value in self.fields.items())
        return details or "(no details)"

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted(self.fields))))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UnknownExclusionReason):
            return NotImplemented
        return self.name == other.name and dict(self.fields) == dict(other.fields)


def _preview(text: str, limit: int = 60) -> str:
    clipped = text if len(text) <= limit else text[: limit - 3] + "..."
    return repr(clipped)
