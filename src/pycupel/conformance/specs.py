"""The components a conformance vector names, as plain data: scorer, slicer, placer and budget
specs (what :mod:`pycupel.conformance.build` turns into library objects), and the type names a
vector may use."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final, TypeAlias

__all__ = [
    "INNER_SLICER_TYPES",
    "PLACER_TYPES",
    "SCARCITY_BEHAVIORS",
    "SCORER_TYPES",
    "SLICER_TYPES",
    "BudgetSpec",
    "CompositeScorerSpec",
    "CountConstrainedKnapsackSliceSpec",
    "CountEntrySpec",
    "CountQuotaSliceSpec",
    "CurveSpec",
    "DecayScorerSpec",
    "ExponentialCurveSpec",
    "GreedySliceSpec",
    "KindScorerSpec",
    "KnapsackSliceSpec",
    "MetadataKeyScorerSpec",
    "MetadataTrustScorerSpec",
    "PlacerSpec",
    "QuotaEntrySpec",
    "QuotaSliceSpec",
    "ScaledScorerSpec",
    "ScorerSpec",
    "SimpleScorerSpec",
    "SlicerSpec",
    "StepCurveSpec",
    "TagScorerSpec",
    "WeightedScorerSpec",
    "WindowCurveSpec",
]

SCORER_TYPES: Final = (
    "recency",
    "priority",
    "kind",
    "tag",
    "frequency",
    "reflexive",
    "composite",
    "scaled",
    "decay",
    "metadata_trust",
    "metadata_key",
)
SLICER_TYPES: Final = ("greedy", "knapsack", "quota", "count_quota", "count_constrained_knapsack")
INNER_SLICER_TYPES: Final = ("greedy", "knapsack")
PLACER_TYPES: Final = ("chronological", "u-shaped")
SCARCITY_BEHAVIORS: Final = ("degrade", "throw")


# =========================================================================== specs: scorers


@dataclass(frozen=True, slots=True, kw_only=True)
class SimpleScorerSpec:
    """A scorer without configuration: recency, priority, frequency or reflexive."""

    type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class KindScorerSpec:
    """KindScorer; ``weights`` None means the spec's default weight map."""

    weights: tuple[tuple[str, float], ...] | None
    type: str = "kind"


@dataclass(frozen=True, slots=True, kw_only=True)
class TagScorerSpec:
    """TagScorer with its (tag, weight) pairs."""

    weights: tuple[tuple[str, float], ...]
    type: str = "tag"


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightedScorerSpec:
    """One child of a composite: a scorer and its raw (un-normalised) weight."""

    scorer: ScorerSpec
    weight: float


@dataclass(frozen=True, slots=True, kw_only=True)
class CompositeScorerSpec:
    """CompositeScorer over weighted children (which may be composites themselves)."""

    entries: tuple[WeightedScorerSpec, ...]
    type: str = "composite"


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaledScorerSpec:
    """ScaledScorer (min-max normalisation) around one inner scorer."""

    inner: ScorerSpec
    type: str = "scaled"


@dataclass(frozen=True, slots=True, kw_only=True)
class ExponentialCurveSpec:
    """``2^(-age / half_life)``."""

    half_life: timedelta
    type: str = "exponential"


@dataclass(frozen=True, slots=True, kw_only=True)
class StepCurveSpec:
    """Score of the first window whose max age is strictly above the item's age."""

    windows: tuple[tuple[timedelta, float], ...]
    type: str = "step"


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowCurveSpec:
    """1.0 while ``age < max_age``, else 0.0."""

    max_age: timedelta
    type: str = "window"


CurveSpec: TypeAlias = ExponentialCurveSpec | StepCurveSpec | WindowCurveSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class DecayScorerSpec:
    """DecayScorer with a fixed clock at ``reference_time``."""

    reference_time: datetime
    curve: CurveSpec
    null_timestamp_score: float | None
    type: str = "decay"


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataTrustScorerSpec:
    """MetadataTrustScorer; ``default_score`` None means the library default."""

    default_score: float | None
    type: str = "metadata_trust"


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataKeyScorerSpec:
    """MetadataKeyScorer: ``boost`` when ``metadata[key] == value``, else 1.0."""

    key: str
    value: str
    boost: float
    type: str = "metadata_key"


ScorerSpec: TypeAlias = (
    SimpleScorerSpec
    | KindScorerSpec
    | TagScorerSpec
    | CompositeScorerSpec
    | ScaledScorerSpec
    | DecayScorerSpec
    | MetadataTrustScorerSpec
    | MetadataKeyScorerSpec
)


# =========================================================================== specs: slicers


@dataclass(frozen=True, slots=True, kw_only=True)
class GreedySliceSpec:
    """GreedySlice."""

    type: str = "greedy"


@dataclass(frozen=True, slots=True, kw_only=True)
class KnapsackSliceSpec:
    """KnapsackSlice; ``bucket_size`` None means the library default (100)."""

    bucket_size: int | None
    type: str = "knapsack"


@dataclass(frozen=True, slots=True, kw_only=True)
class QuotaEntrySpec:
    """One QuotaSlice entry: percentages of the budget for a kind (None = library default)."""

    kind: str
    require: float | None
    cap: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class QuotaSliceSpec:
    """QuotaSlice; ``inner`` None means the library default (GreedySlice)."""

    quotas: tuple[QuotaEntrySpec, ...]
    inner: GreedySliceSpec | KnapsackSliceSpec | None
    type: str = "quota"


@dataclass(frozen=True, slots=True, kw_only=True)
class CountEntrySpec:
    """One count-quota entry (None = library default: require 0, uncapped)."""

    kind: str
    require_count: int | None
    cap_count: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class CountQuotaSliceSpec:
    """CountQuotaSlice; ``scarcity`` is ``"degrade"``, ``"throw"`` or None (library default)."""

    entries: tuple[CountEntrySpec, ...]
    inner: GreedySliceSpec | KnapsackSliceSpec | None
    scarcity: str | None
    type: str = "count_quota"


@dataclass(frozen=True, slots=True, kw_only=True)
class CountConstrainedKnapsackSliceSpec:
    """CountConstrainedKnapsackSlice around a KnapsackSlice of ``bucket_size``."""

    entries: tuple[CountEntrySpec, ...]
    bucket_size: int | None
    scarcity: str | None
    type: str = "count_constrained_knapsack"


SlicerSpec: TypeAlias = (
    GreedySliceSpec
    | KnapsackSliceSpec
    | QuotaSliceSpec
    | CountQuotaSliceSpec
    | CountConstrainedKnapsackSliceSpec
)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlacerSpec:
    """A placer by name: ``chronological`` or ``u-shaped``."""

    type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetSpec:
    """The ``[budget]`` table; ``max_tokens`` None (slicing only) means ``target_tokens``."""

    max_tokens: int | None
    target_tokens: int
    output_reserve: int | None = None
    reserved_slots: tuple[tuple[str, int], ...] | None = None
    estimation_safety_margin_percent: float | None = None
