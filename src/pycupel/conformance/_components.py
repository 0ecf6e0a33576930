"""Reading the scorer, slicer and placer specs of a vector from its TOML tables."""

from __future__ import annotations

from pycupel.conformance._toml import TomlTable
from pycupel.conformance.specs import (
    INNER_SLICER_TYPES,
    PLACER_TYPES,
    SCARCITY_BEHAVIORS,
    SCORER_TYPES,
    SLICER_TYPES,
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
    PlacerSpec,
    QuotaEntrySpec,
    QuotaSliceSpec,
    ScaledScorerSpec,
    ScorerSpec,
    SimpleScorerSpec,
    SlicerSpec,
    StepCurveSpec,
    TagScorerSpec,
    WeightedScorerSpec,
    WindowCurveSpec,
)
from pycupel.errors import ConformanceVectorError, InvalidValueError
from pycupel.model import OverflowStrategy, ascii_fold

__all__ = [
    "overflow_strategy_of",
    "placer_spec",
    "scorer_spec",
    "slicer_spec",
    "weighted_scorer_spec",
]


# =========================================================================== scorers


def weighted_scorer_spec(entry: TomlTable) -> WeightedScorerSpec:
    return WeightedScorerSpec(
        scorer=scorer_spec(entry.req_str("type"), entry, entry.loc("type")),
        weight=entry.req_float("weight"),
    )


def scorer_spec(type_name: str, config: TomlTable, where: str) -> ScorerSpec:
    """The scorer ``type_name`` configured by the keys of ``config``.

    ``config`` is ``[config]`` for the scorer under test, or the entry table itself for a
    composite child (``[[config.scorers]]``/``children``) — its own keys configure it.
    """
    if type_name in ("recency", "priority", "frequency", "reflexive"):
        return SimpleScorerSpec(type=type_name)
    if type_name == "kind":
        return _kind_scorer(config)
    if type_name == "tag":
        weights = _weight_pairs(config, "tag_weights", "tag")
        return TagScorerSpec(weights=weights or ())
    if type_name == "composite":
        return _composite_scorer(config)
    if type_name == "scaled":
        return ScaledScorerSpec(inner=_inner_scorer(config))
    if type_name == "decay":
        return DecayScorerSpec(
            reference_time=config.req_datetime("reference_time"),
            curve=_curve(config.req_table("curve")),
            null_timestamp_score=config.opt_float("null_timestamp_score"),
        )
    if type_name == "metadata_trust":
        return MetadataTrustScorerSpec(default_score=config.opt_float("default_score"))
    if type_name == "metadata_key":
        return MetadataKeyScorerSpec(
            key=config.req_str("key"),
            value=config.req_str("value"),
            boost=config.req_float("boost"),
        )
    raise ConformanceVectorError(
        config.source,
        where,
        f"unknown scorer type {type_name!r}; expected one of {', '.join(SCORER_TYPES)}",
    )


def _kind_scorer(config: TomlTable) -> KindScorerSpec:
    use_default = config.opt_bool("use_default_weights")
    weights = _weight_pairs(config, "weights", "kind")
    if use_default and weights is not None:
        raise config.error("use_default_weights", "cannot be true when [[weights]] are also given")
    if weights is None and use_default is False:
        # Explicitly no defaults and no weights: an empty custom map (every kind scores 0.0).
        return KindScorerSpec(weights=())
    return KindScorerSpec(weights=weights)


def _weight_pairs(
    config: TomlTable, key: str, name_key: str
) -> tuple[tuple[str, float], ...] | None:
    if not config.has(key):
        return None
    pairs: list[tuple[str, float]] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(config.tables(key)):
        name = entry.req_str(name_key)
        if name in seen:
            raise entry.error(name_key, f"{name!r} is already configured by {key}[{seen[name]}]")
        seen[name] = index
        pairs.append((name, entry.req_float("weight")))
    return tuple(pairs)


def _composite_scorer(config: TomlTable) -> CompositeScorerSpec:
    has_scorers = config.has("scorers")
    has_children = config.has("children")
    if has_scorers and has_children:
        raise config.error("children", "give the children either as 'scorers' or 'children'")
    if not has_scorers and not has_children:
        raise config.error("scorers", "a composite scorer needs [[scorers]] (or [[children]])")
    key = "scorers" if has_scorers else "children"
    # An empty list is passed on: the library rejects it as a construction error.
    return CompositeScorerSpec(
        entries=tuple(weighted_scorer_spec(entry) for entry in config.tables(key))
    )


def _inner_scorer(config: TomlTable) -> ScorerSpec:
    value = config.req_any("inner_scorer")
    if isinstance(value, str):
        if value in ("composite", "scaled"):
            raise config.error(
                "inner_scorer",
                f"a {value!r} inner scorer needs its own configuration: give it as a table "
                "with a 'type' key",
            )
        # A named inner scorer reads its configuration from the same table.
        return scorer_spec(value, config, config.loc("inner_scorer"))
    inner = config.req_table("inner_scorer")
    return scorer_spec(inner.req_str("type"), inner, inner.loc("type"))


def _curve(table: TomlTable) -> CurveSpec:
    curve_type = table.req_str("type")
    if curve_type == "exponential":
        return ExponentialCurveSpec(half_life=table.req_seconds("half_life_secs"))
    if curve_type == "step":
        windows = tuple(
            (window.req_seconds("max_age_secs"), window.req_float("score"))
            for window in table.tables("windows")
        )
        return StepCurveSpec(windows=windows)
    if curve_type == "window":
        return WindowCurveSpec(max_age=table.req_seconds("max_age_secs"))
    raise table.error(
        "type", f"unknown curve type {curve_type!r}; expected exponential, step or window"
    )


# =========================================================================== slicers, placers


def slicer_spec(type_name: str, config: TomlTable, where: str) -> SlicerSpec:
    if type_name == "greedy":
        return GreedySliceSpec()
    if type_name == "knapsack":
        return KnapsackSliceSpec(bucket_size=config.opt_int("bucket_size"))
    if type_name == "quota":
        quotas = tuple(
            QuotaEntrySpec(
                kind=entry.req_str("kind"),
                require=entry.opt_float("require"),
                cap=entry.opt_float("cap"),
            )
            for entry in config.tables("quotas")
        )
        return QuotaSliceSpec(quotas=quotas, inner=_inner_slicer(config))
    if type_name == "count_quota":
        return CountQuotaSliceSpec(
            entries=_count_entries(config),
            inner=_inner_slicer(config),
            scarcity=_scarcity(config),
        )
    if type_name == "count_constrained_knapsack":
        inner = config.opt_str("inner_slicer")
        if inner is not None and inner != "knapsack":
            raise config.error(
                "inner_slicer",
                f"count_constrained_knapsack always wraps a knapsack, got {inner!r}",
            )
        return CountConstrainedKnapsackSliceSpec(
            entries=_count_entries(config),
            bucket_size=config.opt_int("bucket_size"),
            scarcity=_scarcity(config),
        )
    raise ConformanceVectorError(
        config.source,
        where,
        f"unknown slicer type {type_name!r}; expected one of {', '.join(SLICER_TYPES)}",
    )


def _inner_slicer(config: TomlTable) -> GreedySliceSpec | KnapsackSliceSpec | None:
    inner = config.opt_str("inner_slicer")
    if inner is None:
        return None
    if inner == "greedy":
        return GreedySliceSpec()
    if inner == "knapsack":
        return KnapsackSliceSpec(bucket_size=config.opt_int("bucket_size"))
    raise config.error(
        "inner_slicer",
        f"unknown inner slicer {inner!r}; expected one of {', '.join(INNER_SLICER_TYPES)}",
    )


def _count_entries(config: TomlTable) -> tuple[CountEntrySpec, ...]:
    return tuple(
        CountEntrySpec(
            kind=entry.req_str("kind"),
            require_count=entry.opt_int("require_count"),
            cap_count=entry.opt_int("cap_count"),
        )
        for entry in config.tables("entries")
    )


def _scarcity(config: TomlTable) -> str | None:
    value = config.opt_str("scarcity_behavior")
    if value is None:
        return None
    folded = ascii_fold(value)
    if folded not in SCARCITY_BEHAVIORS:
        raise config.error(
            "scarcity_behavior",
            f"must be one of {', '.join(SCARCITY_BEHAVIORS)}, got {value!r}",
        )
    return folded


def overflow_strategy_of(config: TomlTable) -> OverflowStrategy | None:
    value = config.opt_str("overflow_strategy")
    if value is None:
        return None
    try:
        return OverflowStrategy.parse(value)
    except InvalidValueError as exc:
        raise config.error("overflow_strategy", exc.rule + f", got {value!r}") from exc


def placer_spec(table: TomlTable, key: str) -> PlacerSpec:
    type_name = table.req_str(key)
    if type_name not in PLACER_TYPES:
        raise table.error(
            key, f"unknown placer type {type_name!r}; expected one of {', '.join(PLACER_TYPES)}"
        )
    return PlacerSpec(type=type_name)
