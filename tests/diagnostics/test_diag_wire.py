"""The JSON wire format of reports, reasons, events and overflow events."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from diag_helpers import CustomSlice, item, make_pipeline

from pycupel.diagnostics import (
    BudgetExceeded,
    Deduplicated,
    ExcludedItem,
    Filtered,
    IncludedItem,
    InclusionReason,
    NegativeTokens,
    OverflowEvent,
    PinnedOverride,
    PipelineStage,
    QuotaCapExceeded,
    QuotaRequireDisplaced,
    ScoredTooLow,
    SelectionReport,
    TraceEvent,
    UnknownExclusionReason,
    wire,
)
from pycupel.errors import InputFormatError
from pycupel.model import ContextBudget, ContextItem, ContextKind
from pycupel.slicers.base import (
    CountRequirementShortfall,
    PackingStats,
    SliceResult,
    SolverStats,
    TokenRequirementShortfall,
)

ALL_REASONS = [
    BudgetExceeded(2048, 512),
    ScoredTooLow(0.12, 0.25),
    Deduplicated("tool_output_abc123"),
    QuotaCapExceeded("ToolOutput", 3, 4),
    QuotaRequireDisplaced("SystemPrompt"),
    NegativeTokens(-1),
    PinnedOverride("system"),
    Filtered("max_age_filter"),
    UnknownExclusionReason("TooOld", {"age_days": 40, "limit": {"days": 30}}),
]


def _no_nulls(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, dict):
        return all(_no_nulls(v) for v in value.values())
    if isinstance(value, list):
        return all(_no_nulls(v) for v in value)
    return True


def full_report() -> SelectionReport:
    stamp = datetime(2024, 6, 1, 9, 30, tzinfo=timezone(timedelta(hours=2)))
    rich = ContextItem(
        "rich item",
        tokens=64,
        kind="Document",
        source="Rag",
        priority=3,
        tags=("billing", "faq"),
        metadata={"url": "https://example.test/a", "nested": {"n": [1, 2]}},
        timestamp=stamp,
        future_relevance_hint=0.75,
        original_tokens=400,
    )
    pinned = ContextItem("system", tokens=20, kind="SystemPrompt", pinned=True)
    odd = ContextItem("odd", tokens=5, future_relevance_hint=math.inf)
    excluded = [
        ExcludedItem(ContextItem(f"x{n}", tokens=n + 1), 0.1 * n, r)
        for n, r in enumerate(ALL_REASONS)
    ]
    excluded.append(ExcludedItem(odd, math.nan, BudgetExceeded(5, 0)))
    return SelectionReport(
        events=(
            TraceEvent(PipelineStage.CLASSIFY, 0.25, 12),
            TraceEvent(
                PipelineStage.SLICE, 0.0, 1, "BudgetExceeded: 2048 tokens requested, 512 available"
            ),
            TraceEvent("Rerank", 3.5, 7),
        ),
        included=(
            IncludedItem(pinned, 1.0, InclusionReason.PINNED),
            IncludedItem(rich, 0.92, InclusionReason.SCORED),
            IncludedItem(ContextItem("free", tokens=0), 0.1, InclusionReason.ZERO_TOKEN),
        ),
        excluded=tuple(excluded),
        total_candidates=13,
        total_tokens_considered=999,
        count_requirement_shortfalls=(CountRequirementShortfall(ContextKind("ToolOutput"), 2, 1),),
        token_requirement_shortfalls=(
            TokenRequirementShortfall(ContextKind("Document"), 800, 512),
            TokenRequirementShortfall(ContextKind("Memory"), 100, 0),
        ),
        packing=PackingStats(3, 84, 2.02, 4, True, False),
        solver=SolverStats("time_limit", 2.02, 2.5, 0.19, 0.5, "stopped at the time limit"),
    )


def test_round_trip_gives_equal_data() -> None:
    report = full_report()
    text = report.to_json(indent=2)
    back = SelectionReport.from_json(text)
    assert back.to_dict() == report.to_dict()
    assert back.events == report.events
    assert [e.reason for e in back.included] == [e.reason for e in report.included]
    assert [e.reason for e in back.excluded] == [e.reason for e in report.excluded]
    assert math.isnan(back.excluded[-1].score)
    assert back.included[1].item.timestamp == report.included[1].item.timestamp
    assert back.included[1].item.metadata == report.included[1].item.metadata
    assert back.count_requirement_shortfalls == report.count_requirement_shortfalls
    assert back.token_requirement_shortfalls == report.token_requirement_shortfalls
    assert (back.packing, back.solver) == (report.packing, report.solver)


def test_round_trip_of_a_real_run() -> None:
    take_all = CustomSlice(lambda items, b: SliceResult(tuple(e.item for e in items)))
    pipeline = make_pipeline(target=120, slicer=take_all, overflow_strategy="truncate")
    items = [
        item("p", 50, pinned=True),
        item("a", 60, 9),
        item("b", 60, 8),
        item("n", -1),
        item("a", 60, 1),
    ]
    report = pipeline.dry_run(items).report
    again = SelectionReport.from_dict(json.loads(report.to_json()))
    assert again.to_dict() == report.to_dict()


def test_spec_shapes() -> None:
    data = full_report().to_dict()
    assert _no_nulls(data)
    assert data["events"][0] == {"stage": "Classify", "duration_ms": 0.25, "item_count": 12}
    assert data["events"][2]["stage"] == "Rerank"
    assert data["included"][0] == {
        "item": {"content": "system", "tokens": 20, "kind": "SystemPrompt", "pinned": True},
        "score": 1.0,
        "reason": {"reason": "Pinned"},
    }
    rich = data["included"][1]["item"]
    assert rich["timestamp"] == "2024-06-01T07:30:00Z"
    assert rich["futureRelevanceHint"] == 0.75
    assert rich["originalTokens"] == 400
    assert rich["source"] == "Rag"
    assert rich["tags"] == ["billing", "faq"]
    assert data["excluded"][0]["reason"] == {
        "reason": "BudgetExceeded",
        "item_tokens": 2048,
        "available_tokens": 512,
    }
    assert data["excluded"][8]["reason"] == {
        "reason": "TooOld",
        "age_days": 40,
        "limit": {"days": 30},
    }
    assert data["excluded"][9]["score"] == "NaN"
    assert data["excluded"][9]["item"]["futureRelevanceHint"] == "Infinity"
    assert data["count_requirement_shortfalls"] == [
        {"kind": "ToolOutput", "required_count": 2, "satisfied_count": 1}
    ]
    assert data["token_requirement_shortfalls"] == [
        {"kind": "Document", "required_tokens": 800, "satisfied_tokens": 512},
        {"kind": "Memory", "required_tokens": 100, "satisfied_tokens": 0},
    ]
    assert data["solver"]["gap"] == 0.19
    json.loads(json.dumps(data, allow_nan=False))  # strict JSON


def test_reports_without_optional_parts_read_as_empty() -> None:
    data = full_report().to_dict()
    for key in ("count_requirement_shortfalls", "token_requirement_shortfalls"):
        del data[key]
    back = SelectionReport.from_dict(data)
    assert back.count_requirement_shortfalls == ()
    assert back.token_requirement_shortfalls == ()


def test_optional_report_parts_are_omitted() -> None:
    data = make_pipeline().dry_run([item("a")]).report.to_dict()
    assert set(data) == {
        "events",
        "included",
        "excluded",
        "total_candidates",
        "total_tokens_considered",
    }
    assert data["included"][0]["item"] == {"content": "a", "tokens": 10, "kind": "Message"}


@pytest.mark.parametrize("reason", ALL_REASONS)
def test_each_reason_round_trips(reason: Any) -> None:
    data = wire.exclusion_reason_to_dict(reason)
    assert data["reason"] == reason.name
    assert wire.exclusion_reason_from_dict(data) == reason


def test_unknown_reason_and_stage_are_kept() -> None:
    reason = wire.exclusion_reason_from_dict({"reason": "Embargoed", "until": "2030"})
    assert isinstance(reason, UnknownExclusionReason)
    assert reason.name == "Embargoed"
    assert dict(reason.fields) == {"until": "2030"}
    assert str(reason) == "Embargoed: until='2030'"
    event = wire.event_from_dict({"stage": "Compress", "duration_ms": 1, "item_count": 2})
    assert event == TraceEvent("Compress", 1.0, 2)
    known = wire.event_from_dict({"stage": "Place", "duration_ms": 0.5, "item_count": 2})
    assert known.stage is PipelineStage.PLACE


def test_overflow_event_shape_and_round_trip() -> None:
    budget = ContextBudget(max_tokens=4096, target_tokens=3072)
    event = OverflowEvent(
        384,
        (ContextItem("...", tokens=512), ContextItem("....", tokens=1024, kind="ToolOutput")),
        budget,
    )
    data = wire.overflow_to_dict(event)
    assert data == {
        "tokens_over_budget": 384,
        "overflowing_items": [
            {"content": "...", "tokens": 512, "kind": "Message"},
            {"content": "....", "tokens": 1024, "kind": "ToolOutput"},
        ],
        "budget": {"maxTokens": 4096, "targetTokens": 3072},
    }
    back = wire.overflow_from_dict(data)
    assert back.budget == budget
    assert back.tokens_over_budget == 384
    assert [i.content for i in back.overflowing_items] == ["...", "...."]


def test_budget_other_fields_when_set() -> None:
    budget = ContextBudget(
        max_tokens=100,
        target_tokens=80,
        output_reserve=10,
        reserved_slots={"Memory": 5},
        estimation_safety_margin_percent=2.5,
    )
    data = wire.budget_to_dict(budget)
    assert data == {
        "maxTokens": 100,
        "targetTokens": 80,
        "outputReserve": 10,
        "reservedSlots": {"Memory": 5},
        "estimationSafetyMarginPercent": 2.5,
    }
    assert wire.budget_from_dict(data) == budget


@pytest.mark.parametrize(
    ("mutate", "location", "detail"),
    [
        (lambda d: d.pop("events"), "events", "is required"),
        (lambda d: d.update(extra=1), "extra", "unknown field"),
        (lambda d: d.update(total_candidates="5"), "total_candidates", "must be an integer"),
        (lambda d: d["events"][0].update(stage=5), "events[0].stage", "must be a string"),
        (
            lambda d: d["included"][0]["reason"].update(reason="Lucky"),
            "included[0].reason.reason",
            "unknown inclusion reason",
        ),
        (
            lambda d: d["excluded"][0]["reason"].pop("item_tokens"),
            "excluded[0].reason.item_tokens",
            "is required",
        ),
        (
            lambda d: d["excluded"][0]["reason"].update(item_tokens=1.5),
            "excluded[0].reason.item_tokens",
            "must be an integer",
        ),
        (
            lambda d: d["excluded"][0]["reason"].update(color="red"),
            "excluded[0].reason.color",
            "unknown field",
        ),
        (lambda d: d["excluded"][0].update(score="high"), "excluded[0].score", "must be a number"),
        (
            lambda d: d["excluded"][0]["item"].update(tokens="3"),
            "excluded[0].item.tokens",
            "must be an integer",
        ),
        (
            lambda d: d["packing"].update(budget_reached="yes"),
            "packing.budget_reached",
            "must be true or false",
        ),
        (lambda d: d["solver"].pop("status"), "solver.status", "is required"),
        (
            lambda d: d["token_requirement_shortfalls"][1].pop("satisfied_tokens"),
            "token_requirement_shortfalls[1].satisfied_tokens",
            "is required",
        ),
        (
            lambda d: d["token_requirement_shortfalls"][0].update(kind=" "),
            "token_requirement_shortfalls[0].kind",
            "must be a non-blank string",
        ),
        (
            lambda d: d.update(token_requirement_shortfalls={}),
            "token_requirement_shortfalls",
            "must be an array",
        ),
    ],
)
def test_malformed_reports_name_the_place(mutate: Any, location: str, detail: str) -> None:
    data = full_report().to_dict()
    mutate(data)
    with pytest.raises(InputFormatError) as caught:
        SelectionReport.from_dict(data, source="r.json")
    assert caught.value.location == location
    assert detail in caught.value.detail
    assert str(caught.value).startswith(f"r.json: {location}: ")


def test_invalid_json_text() -> None:
    with pytest.raises(InputFormatError, match=r"line 1, column \d+: invalid JSON"):
        SelectionReport.from_json("{not json")
    with pytest.raises(InputFormatError, match="duplicate key 'events'"):
        SelectionReport.from_json('{"events": [], "events": []}')
    with pytest.raises(InputFormatError, match="NaN is not valid JSON"):
        SelectionReport.from_json('{"x": NaN}')


def test_report_with_unjsonable_metadata_fails_clearly() -> None:
    odd = ContextItem("a", tokens=1, metadata={"when": datetime(2024, 1, 1, tzinfo=UTC)})
    report = SelectionReport.build(
        events=(), included=(IncludedItem(odd, 0.5, InclusionReason.SCORED),), excluded=()
    )
    from pycupel.errors import ItemValidationError

    with pytest.raises(ItemValidationError, match="metadata: must hold only JSON values"):
        report.to_json()
