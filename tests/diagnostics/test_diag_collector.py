"""The trace collectors on their own."""

from __future__ import annotations

import pytest

from pycupel.diagnostics import (
    DiagnosticTraceCollector,
    NullTraceCollector,
    PipelineStage,
    SelectionRecorder,
    TraceCollector,
    TraceDetailLevel,
    TraceEvent,
)
from pycupel.errors import CollectorStateError, PipelineConfigError

STAGE_EVENT = TraceEvent(PipelineStage.SCORE, 1.5, 3)
ITEM_EVENT = TraceEvent(
    PipelineStage.SLICE, 0.0, 1, "BudgetExceeded: 5 tokens requested, 1 available"
)


def test_null_collector_is_disabled_and_stateless() -> None:
    collector = NullTraceCollector()
    assert collector.is_enabled is False
    collector.record_stage_event(STAGE_EVENT)
    collector.record_item_event(ITEM_EVENT)
    assert not hasattr(collector, "__dict__")
    assert isinstance(collector, TraceCollector)
    assert not isinstance(collector, SelectionRecorder)


def test_stage_level_discards_item_events() -> None:
    seen: list[TraceEvent] = []
    collector = DiagnosticTraceCollector(on_event=seen.append)
    assert collector.detail_level is TraceDetailLevel.STAGE
    collector.record_item_event(ITEM_EVENT)
    collector.record_item_events([ITEM_EVENT, ITEM_EVENT])
    collector.record_stage_event(STAGE_EVENT)
    assert collector.events == (STAGE_EVENT,)
    assert seen == [STAGE_EVENT]


def test_item_level_records_everything_in_order_and_calls_back_synchronously() -> None:
    seen: list[tuple[TraceEvent, int]] = []
    collector = DiagnosticTraceCollector(TraceDetailLevel.ITEM)

    def observe(event: TraceEvent) -> None:
        # Synchronous: the event is already recorded when the callback runs.
        seen.append((event, len(collector.events)))

    collector = DiagnosticTraceCollector(TraceDetailLevel.ITEM, on_event=observe)
    collector.record_item_event(ITEM_EVENT)
    collector.record_item_events([ITEM_EVENT])
    collector.record_stage_event(STAGE_EVENT)
    assert collector.events == (ITEM_EVENT, ITEM_EVENT, STAGE_EVENT)
    assert seen == [(ITEM_EVENT, 1), (ITEM_EVENT, 2), (STAGE_EVENT, 3)]


def test_detail_levels_are_ordered() -> None:
    assert TraceDetailLevel.STAGE < TraceDetailLevel.ITEM
    assert int(TraceDetailLevel.ITEM) == 1


@pytest.mark.parametrize(
    ("kwargs", "field"), [({"detail_level": 1}, "detail_level"), ({"on_event": 3}, "on_event")]
)
def test_invalid_collector_arguments(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(PipelineConfigError) as caught:
        DiagnosticTraceCollector(**kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field


def test_report_before_a_run_is_an_error() -> None:
    collector = DiagnosticTraceCollector()
    collector.record_stage_event(STAGE_EVENT)
    with pytest.raises(CollectorStateError, match="no completed pipeline run"):
        collector.build_report()


def test_a_collector_records_one_run() -> None:
    collector = DiagnosticTraceCollector()
    kwargs: dict[str, object] = {
        "included": [],
        "excluded": [],
        "count_requirement_shortfalls": [],
        "token_requirement_shortfalls": [],
        "packing": None,
        "solver": None,
    }
    collector.record_selection(**kwargs)  # type: ignore[arg-type]
    report = collector.build_report()
    assert report.total_candidates == 0
    assert report.events == ()
    with pytest.raises(CollectorStateError, match="one pipeline run"):
        collector.record_selection(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(CollectorStateError, match="use a new collector"):
        collector.record_stage_event(STAGE_EVENT)
    assert "events=0" in repr(collector)
