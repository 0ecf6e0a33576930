"""What the pipeline records: stage events, item events, reasons, and the report."""

from __future__ import annotations

import math
from typing import Any

import pytest
from diag_helpers import CustomSlice, item, make_pipeline

from pycupel.diagnostics import (
    BudgetExceeded,
    Deduplicated,
    DiagnosticTraceCollector,
    ExcludedItem,
    InclusionReason,
    NegativeTokens,
    PinnedOverride,
    PipelineStage,
    QuotaCapExceeded,
    SelectionReport,
    TraceDetailLevel,
    TraceEvent,
)
from pycupel.errors import (
    BudgetOverflowError,
    CollectorStateError,
    NonFiniteScoreError,
    SlicerConfigError,
)
from pycupel.model import ContextBudget, ContextItem
from pycupel.slicers.base import CapExclusion, SliceResult

STAGES = [
    PipelineStage.CLASSIFY,
    PipelineStage.SCORE,
    PipelineStage.DEDUPLICATE,
    PipelineStage.SLICE,
    PipelineStage.PLACE,
]


def stage_events(events: tuple[TraceEvent, ...]) -> list[TraceEvent]:
    return [e for e in events if not e.message]


def test_one_stage_event_per_stage_even_with_no_items() -> None:
    collector = DiagnosticTraceCollector()
    make_pipeline().run([], collector=collector)
    events = collector.events
    assert [e.stage for e in events] == STAGES
    assert all(e.item_count == 0 and e.duration_ms >= 0.0 and e.message is None for e in events)
    report = collector.build_report()
    assert report.included == ()
    assert report.excluded == ()
    assert report.total_candidates == 0


def test_stage_counts_are_the_items_each_stage_received() -> None:
    items = [
        item("neg", -1),
        item("pin", 50, pinned=True),
        item("dup", 10, 5),
        item("dup", 10, 3),
        item("big", 900, 9),
        item("ok", 20, 1),
    ]
    collector = DiagnosticTraceCollector()
    make_pipeline().run(items, collector=collector)
    counts = {e.stage: e.item_count for e in stage_events(collector.events)}
    assert counts == {
        PipelineStage.CLASSIFY: 6,  # every candidate
        PipelineStage.SCORE: 4,  # scoreable: dup, dup, big, ok
        PipelineStage.DEDUPLICATE: 4,  # the scored items
        PipelineStage.SLICE: 3,  # the deduplicated, sorted items
        PipelineStage.PLACE: 3,  # pinned + sliced (dup, ok)
    }


def test_item_events_precede_their_stage_event() -> None:
    items = [item("neg", -7), item("dup", 10, 2), item("dup", 10, 1), item("big", 900, 9)]
    collector = DiagnosticTraceCollector(TraceDetailLevel.ITEM)
    make_pipeline().run(items, collector=collector)
    shape = [(e.stage, e.item_count, e.message) for e in collector.events]
    assert shape == [
        (PipelineStage.CLASSIFY, 1, "NegativeTokens: -7 tokens"),
        (PipelineStage.CLASSIFY, 4, None),
        (PipelineStage.SCORE, 3, None),
        (PipelineStage.DEDUPLICATE, 1, "Deduplicated: duplicate of 'dup'"),
        (PipelineStage.DEDUPLICATE, 3, None),
        (PipelineStage.SLICE, 1, "BudgetExceeded: 900 tokens requested, 490 available"),
        (PipelineStage.SLICE, 2, None),
        (PipelineStage.PLACE, 1, None),
    ]
    assert all(e.duration_ms == 0.0 for e in collector.events if e.message)


def test_stage_level_still_reports_decisions() -> None:
    collector = DiagnosticTraceCollector(TraceDetailLevel.STAGE)
    make_pipeline().run([item("big", 900, 9), item("ok", 10, 1)], collector=collector)
    assert [e.stage for e in collector.events] == STAGES
    report = collector.build_report()
    assert [(e.item.content, e.reason) for e in report.excluded] == [
        ("big", BudgetExceeded(900, 490))
    ]


def test_on_event_sees_each_recorded_event() -> None:
    seen: list[TraceEvent] = []
    collector = DiagnosticTraceCollector(TraceDetailLevel.ITEM, on_event=seen.append)
    make_pipeline().run([item("n", -1), item("a")], collector=collector)
    assert tuple(seen) == collector.events
    assert len(seen) == 6


def test_reasons_scores_and_report_order() -> None:
    pin = item("pin", 100, pinned=True)
    neg = item("neg", -5, 9)
    dup_low = item("dup", 40, 2)
    dup_high = item("dup", 40, 6)
    big = item("big", 600, 7)
    mid = item("mid", 300, 5)
    small = item("small", 100, 4)
    wide = item("wide", 450, 3)
    zero = item("zero", 0, 1)
    report = (
        make_pipeline(target=500)
        .dry_run([pin, neg, dup_low, dup_high, big, mid, small, wide, zero])
        .report
    )
    # Effective target 400: in score order big (600) no, dup (40) yes, mid (300) yes,
    # small (100) no (60 left), wide (450) no, zero yes. Available after slicing: 400 - 340 = 60.
    assert [(e.item, e.score, e.reason) for e in report.included] == [
        (pin, 1.0, InclusionReason.PINNED),
        (dup_high, 0.6, InclusionReason.SCORED),
        (mid, 0.5, InclusionReason.SCORED),
        (zero, 0.1, InclusionReason.ZERO_TOKEN),
    ]
    assert [(e.item, e.score, e.reason) for e in report.excluded] == [
        (big, 0.7, BudgetExceeded(600, 60)),
        (small, 0.4, BudgetExceeded(100, 60)),  # fits 400: lost to better-scored items
        (wide, 0.3, PinnedOverride("pin")),  # 400 < 450 <= 500, the target without pinned
        (dup_low, 0.2, Deduplicated("dup")),
        (neg, 0.0, NegativeTokens(-5)),
    ]
    assert report.total_candidates == 9
    assert report.total_tokens_considered == 100 - 5 + 40 + 40 + 600 + 300 + 100 + 450 + 0


def test_excluded_ties_keep_exclusion_order() -> None:
    # Same score 0.0 everywhere: classify, then dedup, then slice exclusions.
    items = [item("s", 900), item("d", 10), item("d", 10), item("n", -1)]
    report = make_pipeline(target=100).dry_run(items).report
    assert [e.reason.name for e in report.excluded] == [
        "NegativeTokens",
        "Deduplicated",
        "BudgetExceeded",
    ]


def test_nan_scores_are_reported_last() -> None:
    # The pipeline refuses NaN scores (NonFiniteScoreError); a report assembled elsewhere
    # still lists them last.
    scores = {"a": 0.2, "b": math.nan, "c": 0.9}
    excluded = [ExcludedItem(item(c, 10), s, BudgetExceeded(10, 0)) for c, s in scores.items()]
    report = SelectionReport.build(events=(), included=(), excluded=excluded)
    assert [e.item.content for e in report.excluded] == ["c", "a", "b"]
    with pytest.raises(NonFiniteScoreError):
        make_pipeline(target=0, scorer=lambda i: scores[i.content]).dry_run(
            [item(c, 10) for c in scores]
        )


def test_pinned_override_names_the_largest_pinned_item_earliest_on_ties() -> None:
    items = [
        item("p-small", 50, pinned=True),
        item("p-large-1", 100, pinned=True),
        item("p-large-2", 100, pinned=True),
        item("x", 100, 5),
    ]
    report = make_pipeline(target=300).dry_run(items).report
    assert report.excluded[0].reason == PinnedOverride("p-large-1")


def test_pinned_override_only_when_it_would_have_fit_without_pinned() -> None:
    items = [item("p", 50, pinned=True), item("huge", 500, 5)]
    report = make_pipeline(target=300).dry_run(items).report
    assert report.excluded[0].reason == BudgetExceeded(500, 250)


def test_losing_to_scored_items_is_not_blamed_on_the_pinned_items() -> None:
    # Target 300 less 50 pinned: the slicer has 250. "a" takes 200, leaving 50 for "b" (100),
    # which 50 + 50 pinned tokens would hold, yet "b" fits the 250 on its own: "a" beat it.
    items = [item("p", 50, pinned=True), item("a", 200, 9), item("b", 100, 5)]
    report = make_pipeline(target=300).dry_run(items).report
    assert [(e.item.content, e.reason) for e in report.excluded] == [
        ("b", BudgetExceeded(100, 50)),
    ]


def test_pinned_override_when_only_the_pinned_items_make_an_item_impossible() -> None:
    # Target 300 less 200 pinned: the slicer has 100. "x" (150) can never fit that, but would
    # fit the 300 of the same budget without pinned items; "y" loses to "w" as usual.
    items = [
        item("p", 200, pinned=True),
        item("x", 150, 9),
        item("w", 60, 8),
        item("y", 60, 7),
    ]
    report = make_pipeline(target=300).dry_run(items).report
    assert [(e.item.content, e.reason) for e in report.excluded] == [
        ("x", PinnedOverride("p")),
        ("y", BudgetExceeded(60, 40)),
    ]


def test_the_unpinned_target_is_the_same_budget_with_no_pinned_tokens() -> None:
    # max 300, reserve 100: without pinned items the slicer would get min(300, 200) = 200, with
    # 50 pinned it gets min(250, 150) = 150. 180 fits only the former; 250 fits neither.
    budget = ContextBudget(max_tokens=300, target_tokens=300, output_reserve=100)
    items = [item("p", 50, pinned=True), item("mid", 180, 9), item("huge", 250, 8)]
    report = make_pipeline(budget=budget).dry_run(items).report
    assert [(e.item.content, e.reason) for e in report.excluded] == [
        ("mid", PinnedOverride("p")),
        ("huge", BudgetExceeded(250, 150)),
    ]


def test_truncation_reasons() -> None:
    take_all = CustomSlice(lambda items, b: SliceResult(tuple(e.item for e in items)))
    items = [item("p", 150, pinned=True), item("a", 100, 9), item("b", 200, 8), item("c", 400, 7)]
    pipeline = make_pipeline(target=300, slicer=take_all, overflow_strategy="truncate")
    result = pipeline.dry_run(items)
    assert [i.content for i in result.items] == ["p", "a"]
    # b: kept 250, available 50; 200 <= 50 + 150 -> PinnedOverride. c: 400 > 200 -> BudgetExceeded.
    assert [(e.item.content, e.score, e.reason) for e in result.report.excluded] == [
        ("b", 0.8, PinnedOverride("p")),
        ("c", 0.7, BudgetExceeded(400, 50)),
    ]
    place_events = [e for e in result.report.events if e.stage is PipelineStage.PLACE]
    assert [e.item_count for e in place_events] == [1, 1, 4]


def test_throw_records_events_up_to_the_failure_only() -> None:
    take_all = CustomSlice(lambda items, b: SliceResult(tuple(e.item for e in items)))
    collector = DiagnosticTraceCollector()
    with pytest.raises(BudgetOverflowError):
        make_pipeline(target=100, slicer=take_all).run([item("a", 200, 1)], collector=collector)
    assert [e.stage for e in collector.events] == STAGES[:4]


def test_quota_cap_exclusions_carry_the_slicers_numbers() -> None:
    tools = [item(f"t{n}", 10, 9 - n, kind="ToolOutput") for n in range(5)]
    msg = item("m", 10, 1)
    kind = tools[0].kind

    def capped(entries: object, budget: object) -> SliceResult:
        chosen = (tools[0], tools[1], msg)
        # The numbers are the slicer's: nothing in the selection could tell cap 3 or actual 6.
        records = (CapExclusion(tools[2], kind, 3, 6), CapExclusion(tools[3], kind, 3, 6))
        return SliceResult(chosen, cap_exclusions=records)

    report = make_pipeline(slicer=CustomSlice(capped)).dry_run([*tools, msg]).report  # type: ignore[arg-type]
    reasons = {e.item.content: e.reason for e in report.excluded}
    assert reasons["t2"] == QuotaCapExceeded("ToolOutput", 3, 6)
    assert reasons["t3"] == QuotaCapExceeded("ToolOutput", 3, 6)
    assert isinstance(reasons["t4"], BudgetExceeded)  # not capped: the slicer just left it


@pytest.mark.parametrize(
    ("records", "rule"),
    [
        (lambda a, b: (CapExclusion(a, a.kind, 1, 2),), "that it did not select"),
        (
            lambda a, b: (CapExclusion(item("alien", 10, 1), a.kind, 1, 2),),
            "of the slicer's input",
        ),
        (
            lambda a, b: (CapExclusion(b, b.kind, 1, 2), CapExclusion(b, b.kind, 1, 2)),
            "a second time",
        ),
        (lambda a, b: (b,), "must be a CapExclusion"),
    ],
)
def test_cap_exclusions_must_be_unselected_input_items(records: Any, rule: str) -> None:
    a = item("a", 10, 5)
    b = item("b", 10, 4)

    def bad(entries: object, budget: object) -> SliceResult:
        return SliceResult((a,), cap_exclusions=records(a, b))

    with pytest.raises(SlicerConfigError, match="cap_exclusions") as info:
        make_pipeline(slicer=CustomSlice(bad)).dry_run([a, b])  # type: ignore[arg-type]
    assert rule in str(info.value)


def test_dry_run_result_matches_run() -> None:
    items = [item(f"i{n}", 37 * n % 200, n % 7) for n in range(40)]
    items.append(item("p", 30, pinned=True))
    items.append(item("wide", 590, 3))  # over the 570 the pinned item leaves, within 600
    pipeline = make_pipeline(target=600)
    run = pipeline.run(items)
    dry = pipeline.dry_run(items)
    assert dry.items == run.items
    assert dry.total_tokens == run.total_tokens
    assert [e.item for e in dry.report.included] == list(run.items)
    assert dry.report.total_candidates == len(items)
    counts = dry.report.exclusion_counts()
    assert set(counts) == {"BudgetExceeded", "PinnedOverride"}
    assert sum(counts.values()) == len(items) - len(run.items)


def test_same_reason_objects_are_shared_not_rebuilt() -> None:
    items = [item(f"i{n}", 100, 1) for n in range(10)]
    report = make_pipeline(target=100).dry_run(items).report
    reasons = {id(e.reason) for e in report.excluded}
    assert len(reasons) == 1
    assert all(e.reason == BudgetExceeded(100, 0) for e in report.excluded)


def test_custom_collector_without_extras_gets_events() -> None:
    class Minimal:
        def __init__(self) -> None:
            self.stage: list[TraceEvent] = []
            self.item: list[TraceEvent] = []

        @property
        def is_enabled(self) -> bool:
            return True

        def record_stage_event(self, event: TraceEvent) -> None:
            self.stage.append(event)

        def record_item_event(self, event: TraceEvent) -> None:
            self.item.append(event)

    collector = Minimal()
    make_pipeline(target=10).run([item("a", 50, 1), item("n", -2)], collector=collector)
    assert [e.stage for e in collector.stage] == STAGES
    assert [e.message for e in collector.item] == [
        "NegativeTokens: -2 tokens",
        "BudgetExceeded: 50 tokens requested, 10 available",
    ]


def test_disabled_custom_collector_receives_nothing() -> None:
    class Off:
        calls = 0

        @property
        def is_enabled(self) -> bool:
            return False

        def record_stage_event(self, event: TraceEvent) -> None:
            Off.calls += 1

        def record_item_event(self, event: TraceEvent) -> None:
            Off.calls += 1

    make_pipeline().run([item("a"), item("n", -1)], collector=Off())
    assert Off.calls == 0


def test_items_compare_by_identity_in_the_report() -> None:
    a1 = ContextItem("same", tokens=10, priority=1)
    a2 = ContextItem("same", tokens=10, priority=1)
    report = make_pipeline().dry_run([a1, a2]).report
    assert report.included[0].item is a1
    assert report.excluded[0].item is a2


def test_reusing_a_collector_fails_before_the_second_run_does_any_work() -> None:
    collector = DiagnosticTraceCollector()
    pipeline = make_pipeline()
    pipeline.run([item("a")], collector=collector)
    first = collector.build_report()
    with pytest.raises(CollectorStateError, match="use a new collector"):
        pipeline.run([item("b")], collector=collector)
    assert collector.build_report() == first


def test_count_quota_cap_exclusions_from_the_real_slicer() -> None:
    from pycupel.slicers import CountQuotaEntry, CountQuotaSlice, GreedySlice

    tools = [item(f"tool-{n}", 10, 9 - n, kind="ToolOutput") for n in range(5)]
    notes = [item(f"note-{n}", 10, 2, kind="Memory") for n in range(2)]
    slicer = CountQuotaSlice(
        [CountQuotaEntry("ToolOutput", require_count=1, cap_count=3)], inner=GreedySlice()
    )
    result = make_pipeline(target=1000, slicer=slicer).dry_run([*tools, *notes])
    assert [i.content for i in result.items] == [
        "tool-0",
        "tool-1",
        "tool-2",
        "note-0",
        "note-1",
    ]
    # The cap held ToolOutput at 3 of the 5 the inner slicer wanted.
    assert [(e.item.content, e.reason) for e in result.report.excluded] == [
        ("tool-3", QuotaCapExceeded("ToolOutput", 3, 5)),
        ("tool-4", QuotaCapExceeded("ToolOutput", 3, 5)),
    ]


def test_nested_caps_on_one_kind_keep_each_slicers_numbers() -> None:
    from pycupel.slicers import CountQuotaEntry, CountQuotaSlice

    tools = [item(f"tool-{n}", 10, 9 - n, kind="ToolOutput") for n in range(4)]
    inner = CountQuotaSlice([CountQuotaEntry("ToolOutput", cap_count=2)])
    outer = CountQuotaSlice([CountQuotaEntry("ToolOutput", cap_count=1)], inner=inner)
    result = make_pipeline(target=1000, slicer=outer).dry_run(tools)
    assert [i.content for i in result.items] == ["tool-0"]
    # The inner cap removed two of four; the outer one removed one of the two it was handed.
    # Counting the final selection would have given every item cap 1 and actual 4.
    assert [(e.item.content, e.reason) for e in result.report.excluded] == [
        ("tool-1", QuotaCapExceeded("ToolOutput", 1, 2)),
        ("tool-2", QuotaCapExceeded("ToolOutput", 2, 4)),
        ("tool-3", QuotaCapExceeded("ToolOutput", 2, 4)),
    ]


def test_optimal_slice_token_shortfalls_reach_the_result_report_and_json() -> None:
    from pycupel.slicers import OptimalSlice, QuotaEntry, TokenRequirementShortfall

    # Half of the 200-token target must be Document, but there are only 30 Document tokens.
    items = [
        item("doc", 30, 5, kind="Document"),
        item("m1", 60, 9),
        item("m2", 60, 8),
        item("m3", 60, 7),
    ]
    slicer = OptimalSlice(quotas=[QuotaEntry("Document", require=50)], scarcity="degrade")
    pipeline = make_pipeline(target=200, slicer=slicer)
    expected = (TokenRequirementShortfall(items[0].kind, 100, 30),)

    assert pipeline.run(items).token_shortfalls == expected
    result = pipeline.dry_run(items)
    # The missing Document tokens are kept as few as possible (doc is taken), then the score.
    assert [i.content for i in result.items] == ["m1", "m2", "doc"]
    assert result.token_shortfalls == expected
    assert result.shortfalls == ()
    assert result.report.token_requirement_shortfalls == expected
    data = result.report.to_dict()
    assert data["token_requirement_shortfalls"] == [
        {"kind": "Document", "required_tokens": 100, "satisfied_tokens": 30}
    ]
    assert "count_requirement_shortfalls" not in data
    back = SelectionReport.from_json(result.report.to_json())
    assert back.token_requirement_shortfalls == expected
