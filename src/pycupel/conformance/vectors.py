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
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

import tomli

from pycupel.conformance._components import (
    overflow_strategy_of,
    placer_spec,
    scorer_spec,
    slicer_spec,
    weighted_scorer_spec,
)
from pycupel.conformance._toml import TomlTable
from pycupel.conformance.specs import (
    PLACER_TYPES,
    SCARCITY_BEHAVIORS,
    SCORER_TYPES,
    SLICER_TYPES,
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
from pycupel.model import ContextItem, OverflowStrategy, ScoredItem

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
    root = TomlTable(document, "", str(path))
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


def _scoring_vector(
    root: TomlTable, test: TomlTable, header: VectorHeader, path: Path
) -> ScoringVector:
    config = root.opt_table("config") or root.empty("config")
    scorer = scorer_spec(test.req_str("scorer"), config, test.loc("scorer"))
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


def _slicing_vector(
    root: TomlTable, test: TomlTable, header: VectorHeader, path: Path
) -> SlicingVector:
    config = root.opt_table("config") or root.empty("config")
    slicer = slicer_spec(test.req_str("slicer"), config, test.loc("slicer"))
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


def _placing_vector(
    root: TomlTable, test: TomlTable, header: VectorHeader, path: Path
) -> PlacingVector:
    placer = placer_spec(test, "placer")
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


def _pipeline_vector(root: TomlTable, header: VectorHeader, path: Path) -> PipelineVector:
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
    scorers = tuple(weighted_scorer_spec(entry) for entry in entries)
    slicer = slicer_spec(config.req_str("slicer"), config, config.loc("slicer"))
    placer = placer_spec(config, "placer")
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
        overflow_strategy=overflow_strategy_of(config),
        items=_items(root, "items"),
        expected_output=expected_output,
        diagnostics=diagnostics,
        epsilon=_epsilon(root),
    )


def _expected_output(root: TomlTable) -> tuple[str, ...]:
    """``[[expected_output]]`` tables with a ``content`` each, or a plain array of contents.

    Absent means the pipeline must produce nothing (the empty-input vector has no entries).
    """
    value = root.req_any("expected_output") if root.has("expected_output") else []
    if isinstance(value, list) and all(isinstance(element, str) for element in value):
        return root.opt_str_list("expected_output") or ()
    return tuple(entry.req_str("content") for entry in root.tables("expected_output"))


def _diagnostics(table: TomlTable) -> DiagnosticsExpectation:
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


def _epsilon(root: TomlTable) -> float:
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


def _items(root: TomlTable, key: str) -> tuple[ContextItem, ...]:
    return tuple(_item(entry) for entry in root.tables(key))


def _scored_items(root: TomlTable, key: str) -> list[ScoredItem]:
    return [ScoredItem(_item(entry), entry.req_float("score")) for entry in root.tables(key)]


def _item(entry: TomlTable) -> ContextItem:
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


def _require_unique_contents(root: TomlTable, key: str, items: Sequence[ContextItem]) -> None:
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        if item.content in seen:
            raise root.error(
                f"{key}[{index}].content",
                f"duplicates {key}[{seen[item.content]}].content ({item.content!r}); scoring "
                "vectors match expected scores by content, so contents must be unique",
            )
        seen[item.content] = index


def _reserved_slots(budget: TomlTable) -> tuple[tuple[str, int], ...] | None:
    table = budget.opt_table("reserved_slots")
    if table is None:
        return None
    return tuple((kind, table.req_int(kind)) for kind in table.names())
