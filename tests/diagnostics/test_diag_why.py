"""A chat fit's why beside the specification's reasons: its words, and its JSON in metadata."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pycupel.diagnostics import (
    BudgetExceeded,
    Cause,
    ExcerptPart,
    ExcludedItem,
    Filtered,
    IncludedItem,
    InclusionReason,
    SelectionReport,
    Why,
    wire,
)
from pycupel.diagnostics.why import excerpt_parts, messages_label
from pycupel.model import ContextItem

EXCERPT = {
    "kept": [[1, 12, 300], [40, 52, 200]],
    "elided": [[13, 39, 2100, "3f9a2c5d0e1b7a44"], [53, 60, 90, None]],
}


def excerpt_item(described: object = EXCERPT, tokens: int = 560) -> ContextItem:
    return ContextItem(
        "tool: [... excerpt ...]",
        tokens=tokens,
        kind="ToolOutput",
        metadata={"message_indices": (4, 5), "variant": "excerpt", "excerpt": described},
    )


@pytest.mark.parametrize(
    ("why", "tokens", "score", "words"),
    [
        (Why(Cause.SYSTEM_PROMPT), 40, 1.0, "pinned: the system prompt"),
        (Why(Cause.LATEST_TURN), 9, 1.0, "pinned: the latest user turn"),
        (Why(Cause.RECENT), 30, 0.2, "part of the recent tail"),
        (Why(Cause.RELEVANT), 30, 1.5723, "relevant to the query (score 1.572)"),
        (Why(Cause.NEIGHBOUR, (6, 7)), 30, 0.4, "next to a relevant turn (msgs 6-7)"),
        (Why(Cause.SESSION_HEADER, (9,)), 30, 0.4, "the dated header of the session of msg 9"),
        (Why(Cause.SCORED), 30, 0.25, "taken by the policy on its score (0.250)"),
        (Why(Cause.DUPLICATE), 30, 0.25, "the same text is kept elsewhere"),
        (
            Why(Cause.NO_ROOM, free_tokens=199),
            3_933,
            0.9,
            "the budget ran out: it needs 3,933 tokens, 199 were free",
        ),
        (
            Why(Cause.NO_ROOM, free_tokens=248),
            22,
            0.9,
            "left out when the room was shared out: it needs 22 tokens (248 were left over "
            "at the end)",
        ),
        (
            Why(Cause.TOOL_CALL, version="placeholder", whole_tokens=3_933),
            40,
            0.1,
            "an older tool call; shortened to a placeholder (40 of 3,933 tokens)",
        ),
        (
            Why(Cause.ROOM_LEFT, version="truncated", whole_tokens=900),
            300,
            0.1,
            "room was left for it; shortened to its head and tail (300 of 900 tokens)",
        ),
    ],
)
def test_a_why_reads_as_words(why: Why, tokens: int, score: float, words: str) -> None:
    item = ContextItem("user: something", tokens=tokens)
    assert why.describe(item, score) == words


def test_an_excerpts_why_counts_its_gaps_and_lists_its_runs_with_their_refs() -> None:
    item = excerpt_item()
    why = Why(Cause.RELEVANT, version="excerpt", whole_tokens=2_690)
    assert why.describe(item, 1.2) == (
        "relevant to the query (score 1.200); shortened to an excerpt (560 of 2,690 tokens; "
        "2 gaps of 2,190 tokens elided, 1 with refs)"
    )
    assert [part.describe() for part in why.parts(item)] == [
        "kept lines 1-12 (300 tokens)",
        "elided lines 13-39 (2,100 tokens), ref 3f9a2c5d0e1b7a44",
        "kept lines 40-52 (200 tokens)",
        "elided lines 53-60 (90 tokens)",
    ]
    # The parts of a unit with several texts are numbered by text.
    several = excerpt_parts(excerpt_item([EXCERPT, {"kept": [[1, 3, 30]], "elided": []}]))
    assert several[-1] == ExcerptPart(True, 1, 3, 30, None, text=1)
    assert several[-1].describe() == "text 2: kept lines 1-3 (30 tokens)"
    # Anything else under the key is no excerpt.
    assert excerpt_parts(excerpt_item("not one")) == ()
    assert Why(Cause.RECENT).parts(item) == ()


def test_messages_are_labelled_as_the_report_tables_label_them() -> None:
    assert messages_label((3,)) == "msg 3"
    assert messages_label((4, 5, 6)) == "msgs 4-6"
    assert messages_label((2, 5)) == "msgs 2,5"
    assert messages_label(()) == ""


def chat_report() -> tuple[SelectionReport, dict[str, ContextItem]]:
    items = {
        "system": ContextItem("system: be brief", tokens=5, kind="SystemPrompt", pinned=True),
        "excerpt": excerpt_item(),
        "dropped": ContextItem(
            "tool: a huge log", tokens=3_933, kind="ToolOutput", metadata={"note": "mine"}
        ),
        "filtered": ContextItem("assistant: orphan", tokens=7),
    }
    why = {
        items["system"]: Why(Cause.SYSTEM_PROMPT),
        items["excerpt"]: Why(Cause.RELEVANT, version="excerpt", whole_tokens=2_690),
        items["dropped"]: Why(Cause.NO_ROOM, free_tokens=199),
    }
    report = SelectionReport.build(
        events=(),
        included=[
            IncludedItem(items["system"], 1.0, InclusionReason.PINNED),
            IncludedItem(items["excerpt"], 1.2, InclusionReason.SCORED),
        ],
        excluded=[
            ExcludedItem(items["dropped"], 0.9, BudgetExceeded(3_933, 199)),
            ExcludedItem(items["filtered"], 0.0, Filtered("start-with-user")),
        ],
        why=why,
    )
    return report, items


def test_explain_says_the_why_and_falls_back_to_the_specification_reason() -> None:
    report, _ = chat_report()
    system, excerpt = report.included
    dropped, filtered = report.excluded
    assert report.explain(system) == "pinned: the system prompt"
    assert report.explain(excerpt).startswith("relevant to the query (score 1.200); shortened")
    assert report.explain(dropped) == "the budget ran out: it needs 3,933 tokens, 199 were free"
    assert report.explain(filtered) == "Filtered: removed by filter 'start-with-user'"
    # A pipeline's report records no why: its reasons speak for themselves.
    plain = SelectionReport.build(events=(), included=[], excluded=[report.excluded[0]])
    assert plain.why == {}
    assert plain.explain(plain.excluded[0]) == (
        "BudgetExceeded: 3933 tokens requested, 199 available"
    )


def test_the_json_keeps_the_specification_shape_and_carries_the_why_in_metadata() -> None:
    report, _ = chat_report()
    data = report.to_dict()
    for entry in data["included"] + data["excluded"]:
        assert set(entry) == {"item", "score", "reason"}  # the specification's three fields
    assert data["excluded"][0]["reason"] == {
        "reason": "BudgetExceeded",
        "item_tokens": 3933,
        "available_tokens": 199,
    }
    dropped = data["excluded"][0]["item"]["metadata"]
    assert dropped["note"] == "mine"
    assert dropped["why"] == {
        "cause": "no-room",
        "free_tokens": 199,
        "text": "the budget ran out: it needs 3,933 tokens, 199 were free",
    }
    excerpt = data["included"][1]["item"]["metadata"]["why"]
    assert excerpt["cause"] == "relevant"
    assert excerpt["version"] == "excerpt"
    assert excerpt["whole_tokens"] == 2690
    assert "why" not in data["excluded"][1]["item"].get("metadata", {})
    # Read back: the why returns to report.why, the metadata as it was.
    again = SelectionReport.from_json(report.to_json())
    assert again.to_json() == report.to_json()
    back = {entry.item.content: entry for entry in (*again.included, *again.excluded)}
    assert again.why[back["tool: a huge log"].item] == Why(Cause.NO_ROOM, free_tokens=199)
    assert dict(back["tool: a huge log"].item.metadata) == {"note": "mine"}
    assert again.explain(back["tool: [... excerpt ...]"]) == report.explain(report.included[1])


def test_metadata_under_the_key_that_is_not_a_why_stays_the_items() -> None:
    item = ContextItem("note", tokens=3, metadata={"why": {"cause": "because I said so"}})
    report = SelectionReport.build(
        events=(), included=[IncludedItem(item, 0.5, InclusionReason.SCORED)], excluded=[]
    )
    again = SelectionReport.from_json(report.to_json())
    assert again.why == {}
    assert dict(again.included[0].item.metadata) == {"why": {"cause": "because I said so"}}


@pytest.mark.parametrize(
    "data",
    [
        {"cause": "relevant", "beside": "6-7"},
        {"cause": "no-room", "free_tokens": "199"},
        {"cause": "relevant", "version": 3},
        {"cause": "nope"},
        ["relevant"],
    ],
)
def test_a_malformed_why_is_read_as_plain_metadata(data: Any) -> None:
    assert Why.from_dict(data) is None
    entry: dict[str, Any] = {
        "item": {"content": "x", "tokens": 1, "kind": "Message", "metadata": {"why": data}},
        "score": 0.5,
        "reason": {"reason": "Scored"},
    }
    document = {
        "events": [],
        "included": [entry],
        "excluded": [],
        "total_candidates": 1,
        "total_tokens_considered": 1,
    }
    report = wire.report_from_dict(json.loads(json.dumps(document)))
    assert report.why == {}
    assert report.included[0].item.metadata["why"] == data


def test_every_cause_round_trips_through_its_json() -> None:
    for cause in Cause:
        why = Why(cause, (1, 2), "placeholder", 90, 7)
        assert Why.from_dict(json.loads(json.dumps(why.to_dict()))) == why
