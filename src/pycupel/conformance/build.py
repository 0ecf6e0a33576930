"""From vector specs to the real objects: scorers, slicers, placers, budgets, pipelines.

Components are looked up by name at run time rather than imported at module level, so that a
vector needing a part this build does not have (yet) fails on its own with a clear
:class:`ComponentUnavailableError` — the other vectors still run. Range validation is left to
the constructors: their :class:`~pycupel.errors.CupelError` is what construction-error vectors
expect.
"""

from __future__ import annotations

import importlib
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from pycupel.conformance.vectors import (
    BudgetSpec,
    CompositeScorerSpec,
    CountConstrainedKnapsackSliceSpec,
    CountEntrySpec,
    CountQuotaSliceSpec,
    CurveSpec,
    DecayScorerSpec,
    ExponentialCurveSpec,
    GreedySliceSpec,
    KindScorerSpec,
    KnapsackSliceSpec,
    MetadataKeyScorerSpec,
    MetadataTrustScorerSpec,
    PipelineVector,
    PlacerSpec,
    QuotaSliceSpec,
    ScaledScorerSpec,
    ScorerSpec,
    SimpleScorerSpec,
    SlicerSpec,
    StepCurveSpec,
    TagScorerSpec,
    WindowCurveSpec,
)
from pycupel.errors import CupelError
from pycupel.model import ContextBudget
from pycupel.placers import ChronologicalPlacer, Placer, UShapedPlacer

if TYPE_CHECKING:
    # Annotations only: importing these packages at run time could fail (a half-built
    # component), and that must cost only the vectors needing it, not the whole runner.
    from pycupel.scorers.base import Scorer
    from pycupel.slicers.base import Slicer

__all__ = [
    "ComponentUnavailableError",
    "build_budget",
    "build_pipeline",
    "build_placer",
    "build_scorer",
    "build_slicer",
]

_SCORERS = "pycupel.scorers"
_SLICERS = "pycupel.slicers"

_SIMPLE_SCORER_CLASSES = MappingProxyType(
    {
        "recency": "RecencyScorer",
        "priority": "PriorityScorer",
        "frequency": "FrequencyScorer",
        "reflexive": "ReflexiveScorer",
    }
)


class ComponentUnavailableError(CupelError):
    """A scorer, slicer, placer or pipeline part that a vector needs is missing from this build.

    Nothing about the vector is wrong: the runner turns it into a failed result for that vector
    only (it is caught before other CupelErrors, so it never counts as an expected
    construction error).

    Attributes:
        component: what is missing (``"scorer 'recency'"``).
        detail: why it is unavailable.
    """

    def __init__(self, component: str, detail: str) -> None:
        self.component = component
        self.detail = detail
        super().__init__(f"{component} is not available: {detail}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.component, self.detail))


def _component(module_name: str, attribute: str, what: str) -> Any:
    """``module_name.attribute``, or ComponentUnavailableError naming ``what`` is missing."""
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import-time failure makes the component unavailable
        raise ComponentUnavailableError(
            what, f"cannot import {module_name} ({type(exc).__name__}: {exc})"
        ) from exc
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ComponentUnavailableError(what, f"{module_name} has no {attribute}") from None


# --------------------------------------------------------------------------- scorers


def build_scorer(spec: ScorerSpec) -> Scorer:
    """The scorer described by ``spec`` (children built first, depth first)."""
    what = f"scorer {spec.type!r}"
    scorer: Scorer
    match spec:
        case SimpleScorerSpec():
            scorer = _component(_SCORERS, _SIMPLE_SCORER_CLASSES[spec.type], what)()
        case KindScorerSpec():
            kind_scorer = _component(_SCORERS, "KindScorer", what)
            scorer = kind_scorer(None if spec.weights is None else dict(spec.weights))
        case TagScorerSpec():
            scorer = _component(_SCORERS, "TagScorer", what)(dict(spec.weights))
        case CompositeScorerSpec():
            composite = _component(_SCORERS, "CompositeScorer", what)
            scorer = composite([(build_scorer(e.scorer), e.weight) for e in spec.entries])
        case ScaledScorerSpec():
            scaled = _component(_SCORERS, "ScaledScorer", what)
            scorer = scaled(build_scorer(spec.inner))
        case DecayScorerSpec():
            scorer = _decay_scorer(spec, what)
        case MetadataTrustScorerSpec():
            trust = _component(_SCORERS, "MetadataTrustScorer", what)
            scorer = trust() if spec.default_score is None else trust(spec.default_score)
        case MetadataKeyScorerSpec():
            key_scorer = _component(_SCORERS, "MetadataKeyScorer", what)
            scorer = key_scorer(spec.key, spec.value, spec.boost)
    return scorer


def _decay_scorer(spec: DecayScorerSpec, what: str) -> Scorer:
    decay = _component(_SCORERS, "DecayScorer", what)
    clock = _component(_SCORERS, "FixedClock", what)(spec.reference_time)
    curve = _curve(spec.curve, what)
    if spec.null_timestamp_score is None:
        scorer: Scorer = decay(clock, curve)
    else:
        scorer = decay(clock, curve, null_timestamp_score=spec.null_timestamp_score)
    return scorer


def _curve(spec: CurveSpec, what: str) -> object:
    match spec:
        case ExponentialCurveSpec():
            curve: object = _component(_SCORERS, "ExponentialDecay", what)(spec.half_life)
        case StepCurveSpec():
            curve = _component(_SCORERS, "StepDecay", what)(list(spec.windows))
        case WindowCurveSpec():
            curve = _component(_SCORERS, "WindowDecay", what)(spec.max_age)
    return curve


# --------------------------------------------------------------------------- slicers


def build_slicer(spec: SlicerSpec) -> Slicer:
    """The slicer described by ``spec``."""
    what = f"slicer {spec.type!r}"
    slicer: Slicer
    match spec:
        case GreedySliceSpec():
            slicer = _component(_SLICERS, "GreedySlice", what)()
        case KnapsackSliceSpec():
            slicer = _knapsack(spec, what)
        case QuotaSliceSpec():
            entry_class = _component(_SLICERS, "QuotaEntry", what)
            quotas = []
            for quota in spec.quotas:
                options: dict[str, float] = {}
                if quota.require is not None:
                    options["require"] = quota.require
                if quota.cap is not None:
                    options["cap"] = quota.cap
                quotas.append(entry_class(quota.kind, **options))
            inner = None if spec.inner is None else build_slicer(spec.inner)
            slicer = _component(_SLICERS, "QuotaSlice", what)(quotas, inner)
        case CountQuotaSliceSpec():
            entries = _count_entries(spec.entries, what)
            inner = None if spec.inner is None else build_slicer(spec.inner)
            options_cq: dict[str, object] = {}
            if spec.scarcity is not None:
                options_cq["scarcity"] = _scarcity(spec.scarcity, what)
            slicer = _component(_SLICERS, "CountQuotaSlice", what)(entries, inner, **options_cq)
        case CountConstrainedKnapsackSliceSpec():
            entries = _count_entries(spec.entries, what)
            knapsack = None
            if spec.bucket_size is not None:
                knapsack = _knapsack(KnapsackSliceSpec(bucket_size=spec.bucket_size), what)
            options_ck: dict[str, object] = {}
            if spec.scarcity is not None:
                options_ck["scarcity"] = _scarcity(spec.scarcity, what)
            constrained = _component(_SLICERS, "CountConstrainedKnapsackSlice", what)
            slicer = constrained(entries, knapsack, **options_ck)
    return slicer


def _knapsack(spec: KnapsackSliceSpec, what: str) -> Slicer:
    knapsack = _component(_SLICERS, "KnapsackSlice", what)
    slicer: Slicer = knapsack() if spec.bucket_size is None else knapsack(spec.bucket_size)
    return slicer


def _count_entries(entries: tuple[CountEntrySpec, ...], what: str) -> list[object]:
    entry_class = _component(_SLICERS, "CountQuotaEntry", what)
    built: list[object] = []
    for entry in entries:
        options: dict[str, int] = {}
        if entry.require_count is not None:
            options["require_count"] = entry.require_count
        if entry.cap_count is not None:
            options["cap_count"] = entry.cap_count
        built.append(entry_class(entry.kind, **options))
    return built


def _scarcity(name: str, what: str) -> object:
    behavior = _component(_SLICERS, "ScarcityBehavior", what)
    try:
        member: object = getattr(behavior, name.upper())
    except AttributeError:
        raise ComponentUnavailableError(
            what, f"ScarcityBehavior has no member {name.upper()}"
        ) from None
    return member


# --------------------------------------------------------------------------- placers, budgets


def build_placer(spec: PlacerSpec) -> Placer:
    """The placer named by ``spec``."""
    if spec.type == "chronological":
        return ChronologicalPlacer()
    return UShapedPlacer()


def build_budget(spec: BudgetSpec) -> ContextBudget:
    """The budget of ``spec``; a missing ``max_tokens`` defaults to ``target_tokens``."""
    options: dict[str, Any] = {}
    if spec.output_reserve is not None:
        options["output_reserve"] = spec.output_reserve
    if spec.reserved_slots is not None:
        options["reserved_slots"] = dict(spec.reserved_slots)
    if spec.estimation_safety_margin_percent is not None:
        options["estimation_safety_margin_percent"] = spec.estimation_safety_margin_percent
    max_tokens = spec.target_tokens if spec.max_tokens is None else spec.max_tokens
    return ContextBudget(max_tokens=max_tokens, target_tokens=spec.target_tokens, **options)


# --------------------------------------------------------------------------- pipeline


def build_pipeline(vector: PipelineVector) -> Any:
    """The pipeline of a pipeline vector: a composite of its scorers, its slicer and placer."""
    pipeline_class = _component("pycupel.pipeline", "Pipeline", "the pipeline")
    composite = _component(_SCORERS, "CompositeScorer", "scorer 'composite'")
    scorer = composite([(build_scorer(entry.scorer), entry.weight) for entry in vector.scorers])
    options: dict[str, Any] = {}
    if vector.deduplicate is not None:
        options["deduplicate"] = vector.deduplicate
    if vector.overflow_strategy is not None:
        options["overflow_strategy"] = vector.overflow_strategy
    return pipeline_class(
        budget=build_budget(vector.budget),
        scorer=scorer,
        slicer=build_slicer(vector.slicer),
        placer=build_placer(vector.placer),
        **options,
    )
