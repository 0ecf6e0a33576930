"""Reading conformance vectors: one TOML file -> one typed, validated vector object.

The format is the one of the spec's *Test Vector Format* chapter plus the extensions the public
vectors use (decay curves, metadata scorers, count quotas, construction-error expectations,
diagnostics blocks). Everything here is pure data: no scorer, slicer or placer is created (that
is :mod:`pycupel.conformance.build`), but every value's TOML type is checked so that a malformed
file fails with a :class:`~pycupel.errors.ConformanceVectorError` naming the file, the key and
the problem. Range rules (a positive weight, a bucket size >= 1...) are left to the library's own
constructors: a vector may deliberately break them to test construction errors.

Unknown keys are ignored, as the format chapter asks, so newer vectors stay readable.

Format reference (``?`` marks optional keys)::

    [test]        name, stage ("scoring" | "slicing" | "placing" | "pipeline"),
                  expect_construction_error? (bool; building the objects must raise a CupelError),
                  scorer (scoring), slicer (slicing), placer (placing)
    [[items]]     content, tokens, kind?, source?, priority?, tags?, metadata? (table),
                  timestamp? (offset date-time), futureRelevanceHint? (alias
                  future_relevance_hint), pinned?, originalTokens? (alias original_tokens),
                  score (placing only)
    [[scored_items]]  (slicing) the item keys above plus score
    [tolerance]   score_epsilon? (default 1e-9; scores match when abs(actual - expected) < eps)

    scoring:   [config] configures the scorer; [[expected]] content, score_approx
    slicing:   [budget] target_tokens, max_tokens? (default target_tokens);
               [config] slicer settings; [expected] selected_contents (a set),
               shortfall_count?, cap_excluded_count?
    placing:   [expected] ordered_contents (in order)
    pipeline:  [budget] max_tokens, target_tokens, output_reserve?, reserved_slots? (table
               kind -> int), estimation_safety_margin_percent?;
               [config] slicer, placer, deduplication?, overflow_strategy? (throw | truncate |
               proceed), slicer settings, [[config.scorers]] type, weight, scorer settings
               (combined in a CompositeScorer);
               [[expected_output]] content (in order; or a plain array of contents; absent =
               empty); [expected.diagnostics] summary? (table of report fields, e.g.
               total_candidates, total_tokens_considered), [[included]]? content, score_approx,
               inclusion_reason (placed order), [[excluded]]? content, score_approx,
               exclusion_reason plus that reason's own fields (item_tokens, available_tokens,
               deduplicated_against, displaced_by, tokens, ...; report order)

    scorer settings, by type (in [config] for the scorer under test, in the entry otherwise):
      recency, priority, frequency, reflexive   none
      kind            use_default_weights? | [[weights]] kind, weight (neither = defaults)
      tag             [[tag_weights]] tag, weight
      composite       [[scorers]] (or [[children]]) type, weight, settings
      scaled          inner_scorer: a type name (settings read from the same table) or a
                      table with type and settings
      decay           reference_time (offset date-time), null_timestamp_score?,
                      [curve] type = exponential (half_life_secs) | step ([[windows]]
                      max_age_secs, score) | window (max_age_secs)
      metadata_trust  default_score?
      metadata_key    key, value, boost

    slicer settings, by type:
      greedy                       none
      knapsack                     bucket_size?
      quota                        [[quotas]] kind, require?, cap?; inner_slicer? (greedy |
                                   knapsack, with bucket_size?)
      count_quota                  [[entries]] kind, require_count?, cap_count?;
                                   inner_slicer?; scarcity_behavior? (degrade | throw)
      count_constrained_knapsack   [[entries]]; bucket_size?; scarcity_behavior?;
                                   inner_slicer? (only "knapsack")
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

import tomli

from pycupel.errors import ConformanceVectorError, InvalidValueError
from pycupel.model import ContextItem, OverflowStrategy, ScoredItem, ascii_fold

__all__ = [
    "DEFAULT_MAX_VECTOR_BYTES",
    "DEFAULT_SCORE_EPSILON",
    "PLACER_TYPES",
    "SCARCITY_BEHAVIORS",
    "SCORER_TYPES",
    "SLICER_TYPES",
    "STAGES",
    "BudgetSpec",
    "CompositeScorerSpec",
    "CountConstrainedKnapsackSliceSpec",
    "CountEntrySpec",
    "CountQuotaSliceSpec",
    "CurveSpec",
    "DecayScorerSpec",
    "DiagnosticsExpectation",
    "ExcludedExpectation",
    "ExpectedScore",
    "ExponentialCurveSpec",
    "GreedySliceSpec",
    "IncludedExpectation",
    "KindScorerSpec",
    "KnapsackSliceSpec",
    "MetadataKeyScorerSpec",
    "MetadataTrustScorerSpec",
    "PipelineVector",
    "PlacerSpec",
    "PlacingVector",
    "QuotaEntrySpec",
    "QuotaSliceSpec",
    "ScaledScorerSpec",
    "ScorerSpec",
    "ScoringVector",
    "SimpleScorerSpec",
    "SlicerSpec",
    "SlicingExpectation",
    "SlicingVector",
    "StepCurveSpec",
    "TagScorerSpec",
    "Vector",
    "VectorHeader",
    "WeightedScorerSpec",
    "WindowCurveSpec",
    "load_vector",
    "parse_document",
    "parse_vector",
    "read_document",
    "read_header",
]

DEFAULT_MAX_VECTOR_BYTES: Final = 4 * 1024 * 1024
"""Largest vector file read by default (4 MiB); vectors are a few kilobytes."""

DEFAULT_SCORE_EPSILON: Final = 1e-9
STAGES: Final = ("scoring", "slicing", "placing", "pipeline")
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

# The largest duration a timedelta can hold, in seconds (about 2.7 million years).
_MAX_SECONDS: Final = timedelta.max.total_seconds()


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


# =========================================================================== expectations


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectedScore:
    """One ``[[expected]]`` entry of a scoring vector."""

    content: str
    score: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SlicingExpectation:
    """The ``[expected]`` table of a slicing vector (counts None = not asserted)."""

    selected_contents: tuple[str, ...]
    shortfall_count: int | None
    cap_excluded_count: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class IncludedExpectation:
    """One ``[[expected.diagnostics.included]]`` entry."""

    content: str
    score: float
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ExcludedExpectation:
    """One ``[[expected.diagnostics.excluded]]`` entry; ``fields`` are the reason's own data."""

    content: str
    score: float
    reason: str
    fields: tuple[tuple[str, object], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DiagnosticsExpectation:
    """``[expected.diagnostics]``: each part None when the vector does not assert it."""

    summary: tuple[tuple[str, object], ...] | None
    included: tuple[IncludedExpectation, ...] | None
    excluded: tuple[ExcludedExpectation, ...] | None


# =========================================================================== vectors


@dataclass(frozen=True, slots=True, kw_only=True)
class VectorHeader:
    """The ``[test]`` table."""

    name: str
    stage: str
    expect_construction_error: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoringVector:
    """Scores of one scorer over ``items``, matched to ``expected`` by content."""

    path: Path
    header: VectorHeader
    scorer: ScorerSpec
    items: tuple[ContextItem, ...]
    expected: tuple[ExpectedScore, ...]
    epsilon: float
    stage: Literal["scoring"] = "scoring"


@dataclass(frozen=True, slots=True, kw_only=True)
class SlicingVector:
    """One slicer over pre-scored items; the selection is compared as a set."""

    path: Path
    header: VectorHeader
    slicer: SlicerSpec
    budget: BudgetSpec | None
    scored_items: tuple[ScoredItem, ...]
    expected: SlicingExpectation | None
    stage: Literal["slicing"] = "slicing"


@dataclass(frozen=True, slots=True, kw_only=True)
class PlacingVector:
    """One placer over pre-scored items; the order is compared exactly."""

    path: Path
    header: VectorHeader
    placer: PlacerSpec
    scored_items: tuple[ScoredItem, ...]
    expected_order: tuple[str, ...] | None
    stage: Literal["placing"] = "placing"


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineVector:
    """The whole pipeline; output order (and optionally diagnostics) compared exactly."""

    path: Path
    header: VectorHeader
    budget: BudgetSpec
    scorers: tuple[WeightedScorerSpec, ...]
    slicer: SlicerSpec
    placer: PlacerSpec
    deduplicate: bool | None
    overflow_strategy: OverflowStrategy | None
    items: tuple[ContextItem, ...]
    expected_output: tuple[str, ...]
    diagnostics: DiagnosticsExpectation | None
    epsilon: float
    stage: Literal["pipeline"] = "pipeline"


Vector: TypeAlias = ScoringVector | SlicingVector | PlacingVector | PipelineVector


# =========================================================================== entry points


def read_document(path: Path, *, max_bytes: int = DEFAULT_MAX_VECTOR_BYTES) -> dict[str, Any]:
    """Parse ``path`` as TOML 1.1; unreadable, oversized or invalid files raise
    ConformanceVectorError (a vector is a few kilobytes; ``max_bytes`` caps what is read)."""
    source = str(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise ConformanceVectorError(
            source, "", f"cannot read file: {exc.strerror or exc}"
        ) from exc
    return parse_document(data, source=source, max_bytes=max_bytes)


def parse_document(
    data: bytes, *, source: str = "<vector>", max_bytes: int = DEFAULT_MAX_VECTOR_BYTES
) -> dict[str, Any]:
    """Parse the bytes of a vector file as TOML 1.1 (see :func:`read_document`)."""
    if len(data) > max_bytes:
        raise ConformanceVectorError(
            source, "", f"larger than {max_bytes} bytes (the max_bytes limit)"
        )
    try:
        return tomli.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConformanceVectorError(source, "", f"not valid UTF-8: {exc.reason}") from exc
    except tomli.TOMLDecodeError as exc:
        raise ConformanceVectorError(source, "", f"invalid TOML: {exc}") from exc
    except RecursionError:
        # tomli refuses inline arrays/tables nested more than a few hundred levels.
        raise ConformanceVectorError(source, "", "invalid TOML: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer literal longer than Python's digit limit
        raise ConformanceVectorError(source, "", f"invalid TOML: {exc}") from None


def read_header(document: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """Best-effort ``(name, stage)`` of a document, for labelling a vector that fails to load."""
    test = document.get("test")
    if not isinstance(test, Mapping):
        return None, None
    name = test.get("name")
    stage = test.get("stage")
    return (
        name if isinstance(name, str) else None,
        stage if stage in STAGES else None,
    )


def load_vector(path: Path) -> Vector:
    """Read and validate the vector file at ``path``."""
    return parse_vector(read_document(path), path)


def parse_vector(document: Mapping[str, Any], path: Path) -> Vector:
    """Validate an already-parsed TOML document as a vector of its declared stage."""
    root = _Table(document, "", str(path))
    test = root.req_table("test")
    header = VectorHeader(
        name=test.req_str("name"),
        stage=test.req_str("stage"),
        expect_construction_error=test.opt_bool("expect_construction_error") or False,
    )
    if header.stage == "scoring":
        return _scoring_vector(root, test, header, path)
    if header.stage == "slicing":
        return _slicing_vector(root, test, header, path)
    if header.stage == "placing":
        return _placing_vector(root, test, header, path)
    if header.stage == "pipeline":
        return _pipeline_vector(root, header, path)
    raise test.error("stage", f"must be one of {', '.join(STAGES)}, got {header.stage!r}")


# =========================================================================== stages


def _scoring_vector(root: _Table, test: _Table, header: VectorHeader, path: Path) -> ScoringVector:
    config = root.opt_table("config") or root.empty("config")
    scorer = _scorer(test.req_str("scorer"), config, test.loc("scorer"))
    items = _items(root, "items")
    _require_unique_contents(root, "items", items)
    expected = tuple(
        ExpectedScore(content=entry.req_str("content"), score=entry.req_float("score_approx"))
        for entry in root.tables("expected")
    )
    known = {item.content for item in items}
    for index, entry in enumerate(expected):
        if entry.content not in known:
            raise root.error(
                f"expected[{index}].content",
                f"names no item: {entry.content!r} is not in [[items]]",
            )
    return ScoringVector(
        path=path,
        header=header,
        scorer=scorer,
        items=items,
        expected=expected,
        epsilon=_epsilon(root),
    )


def _slicing_vector(root: _Table, test: _Table, header: VectorHeader, path: Path) -> SlicingVector:
    config = root.opt_table("config") or root.empty("config")
    slicer = _slicer(test.req_str("slicer"), config, test.loc("slicer"))
    construction_only = header.expect_construction_error
    budget_table = root.opt_table("budget") if construction_only else root.req_table("budget")
    budget = None
    if budget_table is not None:
        budget = BudgetSpec(
            max_tokens=budget_table.opt_int("max_tokens"),
            target_tokens=budget_table.req_int("target_tokens"),
        )
    scored_items = tuple(_scored_items(root, "scored_items"))
    expected_table = root.opt_table("expected") if construction_only else root.req_table("expected")
    expected = None
    if expected_table is not None:
        expected = SlicingExpectation(
            selected_contents=expected_table.req_str_list("selected_contents"),
            shortfall_count=expected_table.opt_int("shortfall_count"),
            cap_excluded_count=expected_table.opt_int("cap_excluded_count"),
        )
    return SlicingVector(
        path=path,
        header=header,
        slicer=slicer,
        budget=budget,
        scored_items=scored_items,
        expected=expected,
    )


def _placing_vector(root: _Table, test: _Table, header: VectorHeader, path: Path) -> PlacingVector:
    placer = _placer(test, "placer")
    scored_items = tuple(_scored_items(root, "items"))
    construction_only = header.expect_construction_error
    expected_table = root.opt_table("expected") if construction_only else root.req_table("expected")
    expected_order = None
    if expected_table is not None:
        expected_order = expected_table.req_str_list("ordered_contents")
    return PlacingVector(
        path=path,
        header=header,
        placer=placer,
        scored_items=scored_items,
        expected_order=expected_order,
    )


def _pipeline_vector(root: _Table, header: VectorHeader, path: Path) -> PipelineVector:
    budget_table = root.req_table("budget")
    budget = BudgetSpec(
        max_tokens=budget_table.req_int("max_tokens"),
        target_tokens=budget_table.req_int("target_tokens"),
        output_reserve=budget_table.opt_int("output_reserve"),
        reserved_slots=_reserved_slots(budget_table),
        estimation_safety_margin_percent=budget_table.opt_float("estimation_safety_margin_percent"),
    )
    config = root.req_table("config")
    entries = config.tables("scorers")
    if not entries:
        raise config.error("scorers", "needs at least one [[config.scorers]] entry")
    scorers = tuple(_weighted_scorer(entry) for entry in entries)
    slicer = _slicer(config.req_str("slicer"), config, config.loc("slicer"))
    placer = _placer(config, "placer")
    expected_output = _expected_output(root)
    expected = root.opt_table("expected")
    diagnostics = None
    if expected is not None:
        diagnostics_table = expected.opt_table("diagnostics")
        if diagnostics_table is not None:
            diagnostics = _diagnostics(diagnostics_table)
    return PipelineVector(
        path=path,
        header=header,
        budget=budget,
        scorers=scorers,
        slicer=slicer,
        placer=placer,
        deduplicate=config.opt_bool("deduplication"),
        overflow_strategy=_overflow_strategy(config),
        items=_items(root, "items"),
        expected_output=expected_output,
        diagnostics=diagnostics,
        epsilon=_epsilon(root),
    )


def _expected_output(root: _Table) -> tuple[str, ...]:
    """``[[expected_output]]`` tables with a ``content`` each, or a plain array of contents.

    Absent means the pipeline must produce nothing (the empty-input vector has no entries).
    """
    value = root.req_any("expected_output") if root.has("expected_output") else []
    if isinstance(value, list) and all(isinstance(element, str) for element in value):
        return root.opt_str_list("expected_output") or ()
    return tuple(entry.req_str("content") for entry in root.tables("expected_output"))


def _diagnostics(table: _Table) -> DiagnosticsExpectation:
    summary_table = table.opt_table("summary")
    summary = None
    if summary_table is not None:
        summary = tuple((key, summary_table.req_scalar(key)) for key in summary_table.names())
    included = None
    if table.has("included"):
        included = tuple(
            IncludedExpectation(
                content=entry.req_str("content"),
                score=entry.req_float("score_approx"),
                reason=entry.req_str("inclusion_reason"),
            )
            for entry in table.tables("included")
        )
    excluded = None
    if table.has("excluded"):
        excluded_entries: list[ExcludedExpectation] = []
        for entry in table.tables("excluded"):
            fixed = {"content", "score_approx", "exclusion_reason"}
            excluded_entries.append(
                ExcludedExpectation(
                    content=entry.req_str("content"),
                    score=entry.req_float("score_approx"),
                    reason=entry.req_str("exclusion_reason"),
                    fields=tuple(
                        (key, entry.req_scalar(key)) for key in entry.names() if key not in fixed
                    ),
                )
            )
        excluded = tuple(excluded_entries)
    return DiagnosticsExpectation(summary=summary, included=included, excluded=excluded)


def _epsilon(root: _Table) -> float:
    tolerance = root.opt_table("tolerance")
    if tolerance is None:
        return DEFAULT_SCORE_EPSILON
    epsilon = tolerance.opt_float("score_epsilon")
    if epsilon is None:
        return DEFAULT_SCORE_EPSILON
    if not math.isfinite(epsilon) or epsilon <= 0.0:
        raise tolerance.error("score_epsilon", f"must be a finite number > 0, got {epsilon!r}")
    return epsilon


# =========================================================================== items


def _items(root: _Table, key: str) -> tuple[ContextItem, ...]:
    return tuple(_item(entry) for entry in root.tables(key))


def _scored_items(root: _Table, key: str) -> list[ScoredItem]:
    return [ScoredItem(_item(entry), entry.req_float("score")) for entry in root.tables(key)]


def _item(entry: _Table) -> ContextItem:
    fields: dict[str, Any] = {"tokens": entry.req_int("tokens")}
    kind = entry.opt_str("kind")
    if kind is not None:
        fields["kind"] = kind
    source = entry.opt_str("source")
    if source is not None:
        fields["source"] = source
    priority = entry.opt_int("priority")
    if priority is not None:
        fields["priority"] = priority
    tags = entry.opt_str_list("tags")
    if tags is not None:
        fields["tags"] = tags
    metadata = entry.opt_table("metadata")
    if metadata is not None:
        fields["metadata"] = metadata.raw()
    timestamp = entry.opt_datetime("timestamp")
    if timestamp is not None:
        fields["timestamp"] = timestamp
    hint = entry.opt_float_alias("futureRelevanceHint", "future_relevance_hint")
    if hint is not None:
        fields["future_relevance_hint"] = hint
    pinned = entry.opt_bool("pinned")
    if pinned is not None:
        fields["pinned"] = pinned
    original = entry.opt_int_alias("originalTokens", "original_tokens")
    if original is not None:
        fields["original_tokens"] = original
    content = entry.req_str("content")
    try:
        return ContextItem(content, **fields)
    except InvalidValueError as exc:
        raise entry.error(_item_field_name(exc.field), f"invalid item: {exc}") from exc


def _item_field_name(field: str) -> str:
    # The model names its fields in snake case; the vector format spells two of them in camel
    # case. Point at the field only when it is one the vector could have set.
    base = field.split("[", maxsplit=1)[0]
    return {
        "future_relevance_hint": "futureRelevanceHint",
        "original_tokens": "originalTokens",
    }.get(base, base)


def _require_unique_contents(root: _Table, key: str, items: Sequence[ContextItem]) -> None:
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        if item.content in seen:
            raise root.error(
                f"{key}[{index}].content",
                f"duplicates {key}[{seen[item.content]}].content ({item.content!r}); scoring "
                "vectors match expected scores by content, so contents must be unique",
            )
        seen[item.content] = index


def _reserved_slots(budget: _Table) -> tuple[tuple[str, int], ...] | None:
    table = budget.opt_table("reserved_slots")
    if table is None:
        return None
    return tuple((kind, table.req_int(kind)) for kind in table.names())


# =========================================================================== scorers


def _weighted_scorer(entry: _Table) -> WeightedScorerSpec:
    return WeightedScorerSpec(
        scorer=_scorer(entry.req_str("type"), entry, entry.loc("type")),
        weight=entry.req_float("weight"),
    )


def _scorer(type_name: str, config: _Table, where: str) -> ScorerSpec:
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


def _kind_scorer(config: _Table) -> KindScorerSpec:
    use_default = config.opt_bool("use_default_weights")
    weights = _weight_pairs(config, "weights", "kind")
    if use_default and weights is not None:
        raise config.error("use_default_weights", "cannot be true when [[weights]] are also given")
    if weights is None and use_default is False:
        # Explicitly no defaults and no weights: an empty custom map (every kind scores 0.0).
        return KindScorerSpec(weights=())
    return KindScorerSpec(weights=weights)


def _weight_pairs(config: _Table, key: str, name_key: str) -> tuple[tuple[str, float], ...] | None:
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


def _composite_scorer(config: _Table) -> CompositeScorerSpec:
    has_scorers = config.has("scorers")
    has_children = config.has("children")
    if has_scorers and has_children:
        raise config.error("children", "give the children either as 'scorers' or 'children'")
    if not has_scorers and not has_children:
        raise config.error("scorers", "a composite scorer needs [[scorers]] (or [[children]])")
    key = "scorers" if has_scorers else "children"
    # An empty list is passed on: the library rejects it as a construction error.
    return CompositeScorerSpec(
        entries=tuple(_weighted_scorer(entry) for entry in config.tables(key))
    )


def _inner_scorer(config: _Table) -> ScorerSpec:
    value = config.req_any("inner_scorer")
    if isinstance(value, str):
        if value in ("composite", "scaled"):
            raise config.error(
                "inner_scorer",
                f"a {value!r} inner scorer needs its own configuration: give it as a table "
                "with a 'type' key",
            )
        # A named inner scorer reads its configuration from the same table.
        return _scorer(value, config, config.loc("inner_scorer"))
    inner = config.req_table("inner_scorer")
    return _scorer(inner.req_str("type"), inner, inner.loc("type"))


def _curve(table: _Table) -> CurveSpec:
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


def _slicer(type_name: str, config: _Table, where: str) -> SlicerSpec:
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


def _inner_slicer(config: _Table) -> GreedySliceSpec | KnapsackSliceSpec | None:
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


def _count_entries(config: _Table) -> tuple[CountEntrySpec, ...]:
    return tuple(
        CountEntrySpec(
            kind=entry.req_str("kind"),
            require_count=entry.opt_int("require_count"),
            cap_count=entry.opt_int("cap_count"),
        )
        for entry in config.tables("entries")
    )


def _scarcity(config: _Table) -> str | None:
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


def _overflow_strategy(config: _Table) -> OverflowStrategy | None:
    value = config.opt_str("overflow_strategy")
    if value is None:
        return None
    try:
        return OverflowStrategy.parse(value)
    except InvalidValueError as exc:
        raise config.error("overflow_strategy", exc.rule + f", got {value!r}") from exc


def _placer(table: _Table, key: str) -> PlacerSpec:
    type_name = table.req_str(key)
    if type_name not in PLACER_TYPES:
        raise table.error(
            key, f"unknown placer type {type_name!r}; expected one of {', '.join(PLACER_TYPES)}"
        )
    return PlacerSpec(type=type_name)


# =========================================================================== typed TOML access


class _Table:
    """A TOML table with typed accessors whose errors name the file and the dotted key."""

    __slots__ = ("_data", "_where", "source")

    def __init__(self, data: Mapping[str, Any], where: str, source: str) -> None:
        self._data = data
        self._where = where
        self.source = source

    def empty(self, key: str) -> _Table:
        """An empty table standing for the absent sub-table ``key``."""
        return _Table({}, self.loc(key), self.source)

    def loc(self, key: str) -> str:
        """The dotted location of ``key`` in the document."""
        return f"{self._where}.{key}" if self._where else key

    def error(self, key: str, detail: str) -> ConformanceVectorError:
        """The error for a problem with ``key`` of this table."""
        return ConformanceVectorError(self.source, self.loc(key), detail)

    def has(self, key: str) -> bool:
        return key in self._data

    def names(self) -> list[str]:
        """The keys of this table, in document order."""
        return list(self._data)

    def raw(self) -> dict[str, Any]:
        return dict(self._data)

    # --- any value

    def req_any(self, key: str) -> object:
        if key not in self._data:
            raise self.error(key, "is required")
        value: object = self._data[key]
        return value

    def req_scalar(self, key: str) -> object:
        value = self.req_any(key)
        if isinstance(value, Mapping | list):
            raise self.error(key, f"must be a string, number or boolean, got {_show(value)}")
        return value

    # --- strings

    def opt_str(self, key: str) -> str | None:
        value = self._data.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.error(key, f"must be a string, got {_show(value)}")
        return value

    def req_str(self, key: str) -> str:
        value = self.opt_str(key)
        if value is None:
            raise self.error(key, "is required (a string)")
        return value

    def opt_str_list(self, key: str) -> tuple[str, ...] | None:
        value = self._data.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.error(key, f"must be an array of strings, got {_show(value)}")
        for index, element in enumerate(value):
            if not isinstance(element, str):
                raise self.error(f"{key}[{index}]", f"must be a string, got {_show(element)}")
        return tuple(value)

    def req_str_list(self, key: str) -> tuple[str, ...]:
        value = self.opt_str_list(key)
        if value is None:
            raise self.error(key, "is required (an array of strings)")
        return value

    # --- numbers and booleans

    def opt_int(self, key: str) -> int | None:
        value = self._data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"must be an integer, got {_show(value)}")
        return value

    def req_int(self, key: str) -> int:
        value = self.opt_int(key)
        if value is None:
            raise self.error(key, "is required (an integer)")
        return value

    def opt_float(self, key: str) -> float | None:
        value = self._data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, f"must be a number, got {_show(value)}")
        return float(value)

    def req_float(self, key: str) -> float:
        value = self.opt_float(key)
        if value is None:
            raise self.error(key, "is required (a number)")
        return value

    def opt_float_alias(self, key: str, alias: str) -> float | None:
        if key in self._data and alias in self._data:
            raise self.error(alias, f"duplicates {key!r}; give only one of them")
        return self.opt_float(key) if key in self._data else self.opt_float(alias)

    def opt_int_alias(self, key: str, alias: str) -> int | None:
        if key in self._data and alias in self._data:
            raise self.error(alias, f"duplicates {key!r}; give only one of them")
        return self.opt_int(key) if key in self._data else self.opt_int(alias)

    def req_seconds(self, key: str) -> timedelta:
        seconds = self.req_float(key)
        if not math.isfinite(seconds) or abs(seconds) > _MAX_SECONDS:
            raise self.error(key, f"must be a finite number of seconds, got {seconds!r}")
        return timedelta(seconds=seconds)

    def opt_bool(self, key: str) -> bool | None:
        value = self._data.get(key)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise self.error(key, f"must be a boolean, got {_show(value)}")
        return value

    # --- date-times

    def opt_datetime(self, key: str) -> datetime | None:
        value = self._data.get(key)
        if value is None:
            return None
        if not isinstance(value, datetime):
            kind = "a date without a time" if isinstance(value, date | time) else _show(value)
            raise self.error(key, f"must be an offset date-time (RFC 3339), got {kind}")
        if value.tzinfo is None or value.utcoffset() is None:
            raise self.error(
                key,
                f"must carry a UTC offset (e.g. 2024-01-01T00:00:00Z), got local date-time "
                f"{value.isoformat()}",
            )
        return value

    def req_datetime(self, key: str) -> datetime:
        value = self.opt_datetime(key)
        if value is None:
            raise self.error(key, "is required (an offset date-time)")
        return value

    # --- tables

    def opt_table(self, key: str) -> _Table | None:
        value = self._data.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.error(key, f"must be a table, got {_show(value)}")
        return _Table(value, self.loc(key), self.source)

    def req_table(self, key: str) -> _Table:
        table = self.opt_table(key)
        if table is None:
            raise self.error(key, f"is required (a [{self.loc(key)}] table)")
        return table

    def tables(self, key: str) -> list[_Table]:
        """The array of tables ``key`` (absent means empty)."""
        value = self._data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(
                key, f"must be an array of tables ([[{self.loc(key)}]]), got {_show(value)}"
            )
        result: list[_Table] = []
        for index, element in enumerate(value):
            if not isinstance(element, Mapping):
                raise self.error(f"{key}[{index}]", f"must be a table, got {_show(element)}")
            result.append(_Table(element, self.loc(f"{key}[{index}]"), self.source))
        return result


def _show(value: object) -> str:
    """A value with its TOML type, for messages (``'abc' (string)``)."""
    type_names = {
        bool: "boolean",
        int: "integer",
        float: "float",
        str: "string",
        list: "array",
        dict: "table",
    }
    type_name = type_names.get(type(value), type(value).__name__)
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type_name})"
