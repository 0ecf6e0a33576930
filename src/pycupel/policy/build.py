"""Policy -> live components: scorers, slicer, placer, and the pipeline for a budget.

Every spec reaching these functions has been validated against the same rules the components
enforce, so building does not fail. Each registry type has exactly one builder below (the
test suite checks the two tables list the same names).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from pycupel._checks import check_bool
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextBudget, ContextKind
from pycupel.pipeline import Pipeline
from pycupel.placers import ChronologicalPlacer, Placer, SystemFirstPlacer, UShapedPlacer
from pycupel.policy import registry
from pycupel.policy.model import CurveSpec, Policy, ScorerSpec, SlicerSpec
from pycupel.scorers import (
    Clock,
    CompositeScorer,
    DecayCurve,
    DecayScorer,
    ExponentialDecay,
    FixedClock,
    FrequencyScorer,
    KindScorer,
    MetadataKeyScorer,
    MetadataTrustScorer,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    RelevanceScorer,
    RetrievalScoreScorer,
    ScaledScorer,
    Scorer,
    StepDecay,
    SystemClock,
    TagScorer,
    WindowDecay,
)
from pycupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    GreedySlice,
    KnapsackSlice,
    PackerSlice,
    QuotaEntry,
    QuotaSlice,
    ScarcityBehavior,
    Slicer,
)

__all__ = [
    "PLACER_BUILDERS",
    "SCORER_BUILDERS",
    "SLICER_BUILDERS",
    "build_pipeline",
    "build_placer",
    "build_scorer",
    "build_slicer",
]


# --------------------------------------------------------------------------- scorers


def _recency(spec: ScorerSpec, clock: Clock | None) -> Scorer:
    return RecencyScorer()


def _priority(spec: ScorerSpec, clock: Clock | None) -> Scorer:
    return PriorityScorer()


def _kind(spec: ScorerSpec, clock: Clock | None) -> Scorer:
    weights: Mapping[str, float] | None = spec.options.get("weights")
    if weights is None:
        return KindScorer()
    return KindScorer({ContextKind(kind): weight for kind, weight in weights.items()})


def _tag(spec: ScorerSpec, clock: Clock | None) -> Scorer:
    return TagScorer(dict(spec.options["weights"]))


def _frequency(spec: ScorerSpec, clock: Clock | None) -> Scorer:
    return FrequencyScorer()


def _reflexive(spec: ScorerSpec, clock: Clock | None) -> Scorer:
    return ReflexiveScorer()


def _relevance(spec: ScorerSpec, clock: Clock | None) -> Scorer:
    options = spec.options
    return RelevanceScorer(
        k1=options.get("k1", 1.2), b=options.get("b", 0.75), expansion=options.get("expansion", 0.0)
    )


def _retrieval_score(spec: ScorerSpec, clock: Clock | None) -> Scorer:
    options = spec.options
    return RetrievalScoreScorer(
        key=options.get("key", "retrieval_score"), scale=options.get("scale", "rank")
    )


def _scaled(spec: ScorerSpec, clock: Clock | None) -> Scorer:
    return ScaledScorer(build_scorer(spec.options["inner"], clock=clock))


def _composite(spec: ScorerSpec, clock: Clock | None) -> Scorer:
    children: tuple[ScorerSpec, ...] = spec.options["scorers"]
    return CompositeScorer([(build_scorer(child, clock=clock), child.weight) for child in children])


def _curve(spec: CurveSpec) -> DecayCurve:
    if spec.type == "exponential":
        return ExponentialDecay(spec.options["half_life"])
    if spec.type == "step":
        return StepDecay([(window.max_age, window.score) for window in spec.options["windows"]])
    return WindowDecay(spec.options["max_age"])


def _decay(spec: ScorerSpec, clock: Clock | None) -> Scorer:
    reference = spec.options.get("reference_time")
    chosen: Clock
    if reference is not None:
        chosen = FixedClock(reference)
    elif clock is not None:
        chosen = clock
    else:
        chosen = SystemClock()
    return DecayScorer(
        chosen,
        _curve(spec.options["curve"]),
        null_timestamp_score=spec.options.get("null_timestamp_score", 0.5),
    )


def _metadata_trust(spec: ScorerSpec, clock: Clock | None) -> Scorer:
    return MetadataTrustScorer(default_score=spec.options.get("default_score", 0.5))


def _metadata_key(spec: ScorerSpec, clock: Clock | None) -> Scorer:
    options = spec.options
    return MetadataKeyScorer(options["key"], options["value"], options["boost"])


SCORER_BUILDERS: Final[Mapping[str, Callable[[ScorerSpec, Clock | None], Scorer]]] = (
    MappingProxyType(
        {
            "recency": _recency,
            "priority": _priority,
            "kind": _kind,
            "tag": _tag,
            "frequency": _frequency,
            "reflexive": _reflexive,
            "relevance": _relevance,
            "retrieval_score": _retrieval_score,
            "scaled": _scaled,
            "composite": _composite,
            "decay": _decay,
            "metadata_trust": _metadata_trust,
            "metadata_key": _metadata_key,
        }
    )
)


def build_scorer(spec: ScorerSpec, *, clock: Clock | None = None) -> Scorer:
    """The scorer ``spec`` describes (its own ``weight`` is not part of the scorer).

    ``clock`` replaces the system clock of ``decay`` scorers without a ``reference_time``.
    """
    if not isinstance(spec, ScorerSpec):
        raise PipelineConfigError("spec", spec, "must be a ScorerSpec")
    return SCORER_BUILDERS[spec.type](spec, clock)


def _policy_scorer(policy: Policy, clock: Clock | None) -> Scorer:
    if len(policy.scorers) == 1:
        return build_scorer(policy.scorers[0], clock=clock)
    return CompositeScorer(
        [(build_scorer(spec, clock=clock), spec.weight) for spec in policy.scorers]
    )


# --------------------------------------------------------------------------- slicers


def _option(spec: SlicerSpec, name: str) -> Any:
    """The option's value, or the registry's declared default when absent."""
    if name in spec.options:
        return spec.options[name]
    declared = registry.SLICERS.get(spec.type).option(name)
    assert declared is not None
    return declared.default


def _greedy(spec: SlicerSpec) -> Slicer:
    return GreedySlice()


def _knapsack_slice(spec: SlicerSpec) -> KnapsackSlice:
    table_bytes: int | None = spec.options.get("max_table_bytes")
    if table_bytes is None:
        return KnapsackSlice(bucket_size=_option(spec, "bucket_size"))
    return KnapsackSlice(bucket_size=_option(spec, "bucket_size"), max_table_bytes=table_bytes)


def _knapsack(spec: SlicerSpec) -> Slicer:
    return _knapsack_slice(spec)


def _inner(spec: SlicerSpec) -> Slicer:
    inner: SlicerSpec | None = spec.options.get("inner")
    if inner is None:
        return GreedySlice()
    return build_slicer(inner)


def _scarcity(spec: SlicerSpec) -> ScarcityBehavior:
    return ScarcityBehavior.parse(str(_option(spec, "scarcity")))


def _count_entries(spec: SlicerSpec, option: str = "entries") -> list[CountQuotaEntry]:
    return [
        CountQuotaEntry(entry.kind, require_count=entry.require_count, cap_count=entry.cap_count)
        for entry in _option(spec, option)
    ]


def _quota(spec: SlicerSpec) -> Slicer:
    entries = [
        QuotaEntry(entry.kind, require=entry.require, cap=entry.cap)
        for entry in _option(spec, "quotas")
    ]
    return QuotaSlice(entries, inner=_inner(spec))


def _count_quota(spec: SlicerSpec) -> Slicer:
    return CountQuotaSlice(_count_entries(spec), inner=_inner(spec), scarcity=_scarcity(spec))


def _count_constrained_knapsack(spec: SlicerSpec) -> Slicer:
    return CountConstrainedKnapsackSlice(
        _count_entries(spec),
        knapsack=_knapsack_slice(spec),
        scarcity=_scarcity(spec),
    )


def _optimal(spec: SlicerSpec) -> Slicer:
    from pycupel.slicers.optimal import OptimalSlice  # noqa: PLC0415 (SciPy loads on demand)

    return OptimalSlice(
        quotas=[
            QuotaEntry(entry.kind, require=entry.require, cap=entry.cap)
            for entry in _option(spec, "quotas")
        ],
        count_quotas=_count_entries(spec, "count_quotas"),
        scarcity=_scarcity(spec),
        group_key=_option(spec, "group_key"),
        variant_key=_option(spec, "variant_key"),
        time_limit=_option(spec, "time_limit"),
    )


def _packer(spec: SlicerSpec) -> Slicer:
    skips = _option(spec, "max_consecutive_skips")
    return PackerSlice(max_consecutive_skips=None if skips == "unlimited" else skips)


SLICER_BUILDERS: Final[Mapping[str, Callable[[SlicerSpec], Slicer]]] = MappingProxyType(
    {
        "greedy": _greedy,
        "knapsack": _knapsack,
        "quota": _quota,
        "count_quota": _count_quota,
        "count_constrained_knapsack": _count_constrained_knapsack,
        "optimal": _optimal,
        "packer": _packer,
    }
)


def build_slicer(spec: SlicerSpec) -> Slicer:
    """The slicer ``spec`` describes."""
    if not isinstance(spec, SlicerSpec):
        raise PipelineConfigError("spec", spec, "must be a SlicerSpec")
    return SLICER_BUILDERS[spec.type](spec)


# --------------------------------------------------------------------------- placers


def _chronological() -> Placer:
    return ChronologicalPlacer()


def _u_shaped() -> Placer:
    return UShapedPlacer()


PLACER_BUILDERS: Final[Mapping[str, Callable[[], Placer]]] = MappingProxyType(
    {
        "chronological": _chronological,
        "u-shaped": _u_shaped,
    }
)


def build_placer(name: str) -> Placer:
    """The placer called ``name`` (canonical spelling, as stored in a :class:`Policy`)."""
    if name not in PLACER_BUILDERS:
        raise PipelineConfigError("placer", name, f"must be one of: {', '.join(PLACER_BUILDERS)}")
    return PLACER_BUILDERS[name]()


# --------------------------------------------------------------------------- pipeline


def build_pipeline(
    policy: Policy,
    budget: ContextBudget,
    *,
    clock: Clock | None = None,
    system_first: bool = False,
) -> Pipeline:
    """The pipeline running ``policy`` with ``budget`` (see :meth:`Policy.build`)."""
    if not isinstance(policy, Policy):
        raise PipelineConfigError("policy", policy, "must be a Policy")
    if not isinstance(budget, ContextBudget):
        raise PipelineConfigError("budget", budget, "must be a ContextBudget")
    check_bool(PipelineConfigError, "system_first", system_first)
    placer = build_placer(policy.placer)
    return Pipeline(
        budget=budget,
        scorer=_policy_scorer(policy, clock),
        slicer=build_slicer(policy.slicer),
        placer=SystemFirstPlacer(placer) if system_first else placer,
        deduplicate=policy.deduplicate,
        overflow_strategy=policy.overflow_strategy,
    )
