"""OpenTelemetry spans of a pipeline run: names, hierarchy, attributes and events per tier."""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from pycupel.diagnostics import SelectionRecorder
from pycupel.errors import (
    BudgetOverflowError,
    CollectorStateError,
    CupelError,
    PinnedBudgetError,
    PipelineConfigError,
    TelemetryUnavailableError,
)
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy
from pycupel.otel import (
    TRACER_NAME,
    CupelVerbosity,
    FullCollector,
    StageAndExclusionsCollector,
    StageOnlyCollector,
    create_collector,
    traced_run,
)
from pycupel.pipeline import Pipeline
from pycupel.pipeline.trace import Trace
from pycupel.scorers import PriorityScorer

STAGES = ["classify", "score", "deduplicate", "slice", "place"]
T0 = datetime(2024, 6, 1, tzinfo=UTC)


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


def msg(content: str, tokens: int, priority: int, **extra: Any) -> ContextItem:
    return ContextItem(content, tokens=tokens, priority=priority, **extra)


def scenario() -> tuple[Pipeline, list[ContextItem]]:
    """Every stage excludes something except Score: a negative item (Classify), a duplicate
    (Deduplicate), an item over the budget (Slice), and truncation at Place."""
    items = [
        msg("system", 30, 0, kind="SystemPrompt", pinned=True, timestamp=T0),
        msg("negative", -3, 9, timestamp=T0),
        msg("alpha", 20, 8, kind="Document", timestamp=T0 + timedelta(minutes=1)),
        msg("alpha", 20, 1, timestamp=T0 + timedelta(minutes=2)),
        msg("huge", 500, 7, kind="ToolOutput", timestamp=T0 + timedelta(minutes=3)),
        msg("beta", 25, 6, timestamp=T0 + timedelta(minutes=4)),
        msg("gamma", 10, 5, timestamp=T0 + timedelta(minutes=5)),
    ]
    pipeline = Pipeline(
        budget=ContextBudget(max_tokens=100, target_tokens=70),
        scorer=PriorityScorer(),
        slicer=GreedyOver(),
        overflow_strategy=OverflowStrategy.TRUNCATE,
    )
    return pipeline, items


class GreedyOver:
    """A slicer that overshoots its target by one item, so that Place has to truncate."""

    budget_monotonic = False

    def slice(self, items: Sequence[Any], budget: ContextBudget) -> list[ContextItem]:
        chosen: list[ContextItem] = []
        used = 0
        for entry in items:
            if used + entry.item.tokens <= budget.target_tokens + 15:
                chosen.append(entry.item)
                used += entry.item.tokens
        return chosen


def by_name(spans: Sequence[ReadableSpan]) -> dict[str, ReadableSpan]:
    return {span.name: span for span in spans}


def run_tier(
    provider: TracerProvider, exporter: InMemorySpanExporter, tier: str
) -> dict[str, ReadableSpan]:
    pipeline, items = scenario()
    traced_run(pipeline, items, verbosity=tier, tracer=provider.get_tracer(TRACER_NAME))
    spans = exporter.get_finished_spans()
    assert len(spans) == 6
    return by_name(spans)


def test_span_tree_is_a_root_and_five_stages(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    spans = run_tier(provider, exporter, "StageOnly")
    root = spans["cupel.pipeline"]
    assert root.parent is None
    for stage in STAGES:
        child = spans[f"cupel.stage.{stage}"]
        assert child.parent is not None
        assert child.parent.span_id == root.context.span_id
        assert child.context.trace_id == root.context.trace_id
        assert root.start_time <= child.start_time <= child.end_time <= root.end_time
    starts = [spans[f"cupel.stage.{stage}"].start_time for stage in STAGES]
    assert starts == sorted(starts)


def test_stage_only_attributes(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    spans = run_tier(provider, exporter, "StageOnly")
    assert dict(spans["cupel.pipeline"].attributes or {}) == {
        "cupel.budget.max_tokens": 100,
        "cupel.verbosity": "StageOnly",
    }
    counts = {stage: dict(spans[f"cupel.stage.{stage}"].attributes or {}) for stage in STAGES}
    # 7 candidates: 1 negative, 1 pinned, 5 scoreable; 1 duplicate; huge is too big for the
    # slicer, which takes alpha, beta and gamma (55 tokens, 15 over its target of 40); with
    # the pinned 30 that is 85 > 70, so Place truncates beta.
    assert counts["classify"] == {
        "cupel.stage.name": "classify",
        "cupel.stage.item_count_in": 7,
        "cupel.stage.item_count_out": 6,
    }
    assert counts["score"]["cupel.stage.item_count_in"] == 5
    assert counts["score"]["cupel.stage.item_count_out"] == 5
    assert counts["deduplicate"]["cupel.stage.item_count_in"] == 5
    assert counts["deduplicate"]["cupel.stage.item_count_out"] == 4
    assert counts["slice"]["cupel.stage.item_count_in"] == 4
    assert counts["slice"]["cupel.stage.item_count_out"] == 3
    assert counts["place"]["cupel.stage.item_count_in"] == 4
    assert counts["place"]["cupel.stage.item_count_out"] == 3
    for stage in STAGES:
        assert counts[stage]["cupel.stage.name"] == stage
        assert "cupel.exclusion.count" not in counts[stage]
        assert "duration_ms" not in " ".join(counts[stage])
        assert spans[f"cupel.stage.{stage}"].events == ()
    assert spans["cupel.pipeline"].events == ()


def test_exclusion_tier_adds_counts_and_one_event_per_exclusion(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    spans = run_tier(provider, exporter, "StageAndExclusions")
    assert spans["cupel.pipeline"].attributes["cupel.verbosity"] == "StageAndExclusions"  # type: ignore[index]
    expected = {
        "classify": [("NegativeTokens", "Message", -3)],
        "score": [],
        "deduplicate": [("Deduplicated", "Message", 20)],
        "slice": [("BudgetExceeded", "ToolOutput", 500)],
        "place": [("PinnedOverride", "Message", 25)],
    }
    for stage, exclusions in expected.items():
        span = spans[f"cupel.stage.{stage}"]
        attributes = dict(span.attributes or {})
        assert attributes["cupel.exclusion.count"] == len(exclusions)
        assert attributes["cupel.stage.item_count_in"] - attributes[
            "cupel.stage.item_count_out"
        ] == len(exclusions)
        events = [
            (
                event.attributes["cupel.exclusion.reason"],  # type: ignore[index]
                event.attributes["cupel.exclusion.item_kind"],  # type: ignore[index]
                event.attributes["cupel.exclusion.item_tokens"],  # type: ignore[index]
            )
            for event in span.events
        ]
        assert events == exclusions
        assert all(event.name == "cupel.exclusion" for event in span.events)
        assert all(
            set(event.attributes or {})
            == {
                "cupel.exclusion.reason",
                "cupel.exclusion.item_kind",
                "cupel.exclusion.item_tokens",
            }
            for event in span.events
        )
    assert spans["cupel.pipeline"].events == ()


def test_full_tier_adds_included_items_on_the_root(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    spans = run_tier(provider, exporter, "Full")
    root = spans["cupel.pipeline"]
    pipeline, items = scenario()
    report = pipeline.dry_run(items).report
    events = [(e.name, dict(e.attributes or {})) for e in root.events]
    assert events == [
        (
            "cupel.item.included",
            {
                "cupel.item.kind": entry.item.kind.value,
                "cupel.item.tokens": entry.item.tokens,
                "cupel.item.score": entry.score,
            },
        )
        for entry in report.included
    ]
    assert len(events) == 3
    assert spans["cupel.stage.slice"].attributes["cupel.exclusion.count"] == 1  # type: ignore[index]


def test_counts_agree_across_tiers(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    per_tier = []
    for tier in CupelVerbosity:
        exporter.clear()
        spans = run_tier(provider, exporter, tier.value)
        per_tier.append(
            {
                stage: (
                    spans[f"cupel.stage.{stage}"].attributes["cupel.stage.item_count_in"],  # type: ignore[index]
                    spans[f"cupel.stage.{stage}"].attributes["cupel.stage.item_count_out"],  # type: ignore[index]
                )
                for stage in STAGES
            }
        )
    assert per_tier[0] == per_tier[1] == per_tier[2]


def test_stage_only_costs_nothing_per_item() -> None:
    collector = create_collector(ContextBudget(max_tokens=10, target_tokens=10), "StageOnly")
    assert isinstance(collector, StageOnlyCollector)
    assert not isinstance(collector, SelectionRecorder)
    # The pipeline's own view: no item events, no per-item decisions to build.
    trace = Trace(collector)
    assert trace.item_events is False
    assert trace.decisions is False


def test_exclusion_tiers_take_decisions_but_no_item_events() -> None:
    budget = ContextBudget(max_tokens=10, target_tokens=10)
    for tier, kind in (
        ("StageAndExclusions", StageAndExclusionsCollector),
        ("Full", FullCollector),
    ):
        collector = create_collector(budget, tier)
        assert type(collector) is kind
        trace = Trace(collector)
        assert trace.item_events is False
        assert trace.decisions is True


def test_stage_times_come_from_the_clock_and_the_measured_durations(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    pipeline, items = scenario()
    ticks = iter(range(1_000_000_000, 10_000_000_000, 1_000_000_000))
    collector = create_collector(
        pipeline.budget, "StageOnly", tracer=provider.get_tracer("t"), clock_ns=lambda: next(ticks)
    )
    result = pipeline.run(items, collector=collector)
    collector.finish(result)
    spans = by_name(exporter.get_finished_spans())
    ends = [spans[f"cupel.stage.{stage}"].end_time for stage in STAGES]
    assert ends == [1_000_000_000 * n for n in range(1, 6)]
    for stage in STAGES:
        span = spans[f"cupel.stage.{stage}"]
        assert 0 <= span.end_time - span.start_time < 1_000_000_000  # type: ignore[operator]
    root = spans["cupel.pipeline"]
    assert root.start_time == spans["cupel.stage.classify"].start_time
    assert root.end_time == spans["cupel.stage.place"].end_time


def test_root_is_a_child_of_the_current_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    tracer = provider.get_tracer("app")
    pipeline, items = scenario()
    with tracer.start_as_current_span("handle request") as request:
        traced_run(pipeline, items, tracer=provider.get_tracer(TRACER_NAME))
    root = by_name(exporter.get_finished_spans())["cupel.pipeline"]
    assert root.parent is not None
    assert root.parent.span_id == request.get_span_context().span_id


def test_default_tracer_is_named_after_the_specification(
    monkeypatch: pytest.MonkeyPatch, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    import opentelemetry.trace as trace_api

    names: list[str] = []

    def get_tracer(name: str, version: str | None = None, *args: Any, **kwargs: Any) -> Any:
        names.append(name)
        return provider.get_tracer(name, version)

    monkeypatch.setattr(trace_api, "get_tracer", get_tracer)
    pipeline, items = scenario()
    traced_run(pipeline, items)
    assert names == ["Wollax.Cupel"]
    scopes = {span.instrumentation_scope.name for span in exporter.get_finished_spans()}  # type: ignore[union-attr]
    assert scopes == {"Wollax.Cupel"}


def test_failed_run_before_any_stage_is_an_error_root(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    pipeline = Pipeline(
        budget=ContextBudget(max_tokens=10, target_tokens=10), scorer=PriorityScorer()
    )
    items = [msg("too big", 50, 1, pinned=True)]
    with pytest.raises(PinnedBudgetError):
        traced_run(pipeline, items, verbosity="Full", tracer=provider.get_tracer("t"))
    spans = exporter.get_finished_spans()
    assert [span.name for span in spans] == ["cupel.pipeline"]
    root = spans[0]
    assert root.status.status_code is StatusCode.ERROR
    assert "PinnedBudgetError" in (root.status.description or "")
    assert [event.name for event in root.events] == ["exception"]


def test_failed_run_keeps_the_completed_stages(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    pipeline, items = scenario()
    throwing = Pipeline(
        budget=pipeline.budget,
        scorer=PriorityScorer(),
        slicer=GreedyOver(),
        overflow_strategy=OverflowStrategy.THROW,
    )
    with pytest.raises(BudgetOverflowError):
        traced_run(throwing, items, verbosity="StageAndExclusions", tracer=provider.get_tracer("t"))
    spans = by_name(exporter.get_finished_spans())
    assert set(spans) == {"cupel.pipeline", *(f"cupel.stage.{s}" for s in STAGES[:4])}
    assert spans["cupel.pipeline"].status.status_code is StatusCode.ERROR
    # What the input counts alone tell is kept; what needed the outcome is left out.
    assert spans["cupel.stage.score"].attributes["cupel.stage.item_count_out"] == 5  # type: ignore[index]
    assert spans["cupel.stage.deduplicate"].attributes["cupel.stage.item_count_out"] == 4  # type: ignore[index]
    assert "cupel.stage.item_count_out" not in (spans["cupel.stage.slice"].attributes or {})


def test_collector_traces_one_run_only(provider: TracerProvider) -> None:
    pipeline, items = scenario()
    collector = create_collector(pipeline.budget, "Full", tracer=provider.get_tracer("t"))
    with pytest.raises(CollectorStateError, match="0 of 5 stages"):
        collector.finish(pipeline.run(items))
    result = pipeline.run(items, collector=collector)
    collector.finish(result)
    with pytest.raises(CollectorStateError, match="one pipeline run"):
        collector.finish(result)
    with pytest.raises(CollectorStateError, match="one pipeline run"):
        pipeline.run(items, collector=collector)


def test_invalid_arguments() -> None:
    budget = ContextBudget(max_tokens=10, target_tokens=10)
    with pytest.raises(PipelineConfigError, match="verbosity: must be one of StageOnly"):
        create_collector(budget, "Verbose")
    with pytest.raises(PipelineConfigError, match="budget: must be a ContextBudget"):
        create_collector(10, "Full")  # type: ignore[arg-type]
    with pytest.raises(PipelineConfigError, match="pipeline: must be a Pipeline"):
        traced_run("pipeline", [])  # type: ignore[arg-type]
    assert create_collector(budget, CupelVerbosity.FULL).verbosity is CupelVerbosity.FULL


def test_missing_opentelemetry_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_otel(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_otel)
    with pytest.raises(TelemetryUnavailableError) as info:
        create_collector(ContextBudget(max_tokens=1, target_tokens=1))
    error = info.value
    assert isinstance(error, CupelError)
    assert isinstance(error, ImportError)
    assert str(error) == (
        "OpenTelemetry tracing needs the 'opentelemetry-api' package; install it with "
        "pip install 'pycupel[otel]'"
    )


def test_result_is_the_untraced_result(provider: TracerProvider) -> None:
    pipeline, items = scenario()
    traced = traced_run(pipeline, items, verbosity="Full", tracer=provider.get_tracer("t"))
    plain = pipeline.run(items)
    assert traced.items == plain.items
    assert traced.total_tokens == plain.total_tokens


def test_exclusion_events_account_for_every_excluded_item(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    from collections import Counter
    from pathlib import Path

    from pycupel.cli._common import build_pipeline
    from pycupel.itemio import read_items

    items = read_items(Path(__file__).resolve().parents[2] / "examples" / "support-chat.json")
    pipeline = build_pipeline(ContextBudget(max_tokens=700, target_tokens=600, output_reserve=50))
    traced_run(pipeline, items, verbosity="StageAndExclusions", tracer=provider.get_tracer("t"))
    events = [
        (
            event.attributes["cupel.exclusion.reason"],  # type: ignore[index]
            event.attributes["cupel.exclusion.item_kind"],  # type: ignore[index]
            event.attributes["cupel.exclusion.item_tokens"],  # type: ignore[index]
        )
        for span in exporter.get_finished_spans()
        for event in span.events
    ]
    report = pipeline.dry_run(items).report
    expected = Counter(
        (entry.reason.name, entry.item.kind.value, entry.item.tokens) for entry in report.excluded
    )
    assert Counter(events) == expected
    assert len(events) > 5
