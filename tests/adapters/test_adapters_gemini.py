"""The Gemini adapter: contents in, valid smaller contents out."""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

import pytest
from adapter_histories import WordCounter, assert_subsequence
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.adapters import MessageOverhead, gemini
from pycupel.errors import MessageFormatError, PinnedBudgetError, PipelineConfigError
from pycupel.model import ContextKind

COUNTER = WordCounter()


def user(text: str) -> Any:
    return {"role": "user", "parts": [{"text": text}]}


def model(text: str) -> Any:
    return {"role": "model", "parts": [{"text": text}]}


def calls(*names: str, ids: bool = False) -> Any:
    parts = []
    for number, name in enumerate(names):
        body: dict[str, Any] = {"name": name, "args": {"city": "Paris"}}
        if ids:
            body["id"] = f"{name}-{number}"
        parts.append({"functionCall": body})
    return {"role": "model", "parts": parts}


def responses(*names: str, ids: Sequence[str] | None = None) -> Any:
    parts = []
    for number, name in enumerate(names):
        body: dict[str, Any] = {"name": name, "response": {"result": f"{name} done"}}
        if ids is not None:
            body["id"] = ids[number]
        parts.append({"function_response": body})  # the SDK's snake_case spelling
    return {"role": "user", "parts": parts}


def history() -> list[Any]:
    return [
        user("what is the weather in paris and the time?"),
        {
            "role": "model",
            "parts": [
                {"text": "I should call both tools.", "thought": True},
                {"functionCall": {"name": "weather", "args": {}}, "thoughtSignature": "c2ln"},
                {"functionCall": {"name": "clock", "args": {}}},
            ],
        },
        responses("clock", "weather"),
        model("Rain, and it is noon."),
        user("thanks, and tomorrow?"),
    ]


def test_round_trip_returns_the_original_turns() -> None:
    contents = history()
    units = gemini.from_messages(contents, system_instruction="Be brief.", counter=COUNTER)
    assert gemini.to_messages(units.items, units) == ("Be brief.", contents)
    system = {"parts": [{"text": "Be brief."}]}
    units = gemini.from_messages(contents, system_instruction=system, counter=COUNTER)
    assert gemini.to_messages(units.items, units).system_instruction is system


def test_parallel_calls_and_responses_form_one_unit_matched_by_name() -> None:
    units = gemini.from_messages(history(), counter=COUNTER)
    assert [unit.message_indices for unit in units] == [(0,), (1, 2), (3,), (4,)]
    assert units.units[1].item.kind == ContextKind.TOOL_OUTPUT
    assert units.items[-1].pinned


def test_responses_are_matched_by_id_when_given() -> None:
    contents = [user("go"), calls("f", "f", ids=True), responses("f", "f", ids=["f-1", "f-0"])]
    units = gemini.from_messages(contents, counter=COUNTER)
    assert [unit.message_indices for unit in units] == [(0,), (1, 2)]
    with pytest.raises(MessageFormatError, match=re.escape("contents[2].parts[0]")):
        gemini.from_messages(
            [user("go"), calls("f", ids=True), responses("f", ids=["other"])], counter=COUNTER
        )


def test_thought_signatures_are_not_counted_as_text() -> None:
    signed = [{"role": "user", "parts": [{"text": "hi", "thoughtSignature": "A" * 4000}]}]
    plain = [{"role": "user", "parts": [{"text": "hi"}]}]
    assert gemini.count_tokens(signed) == gemini.count_tokens(plain)


def test_fit_keeps_units_whole_and_starts_with_a_user_turn() -> None:
    contents = [model("hello there"), *history()]
    snapshot = copy.deepcopy(contents)
    units = gemini.from_messages(contents, counter=COUNTER)
    budget = units.total_tokens - units.units[1].item.tokens
    system, fitted, report = gemini.fit_messages(contents, budget=budget, counter=COUNTER)
    assert system is None
    assert contents == snapshot
    assert fitted[0]["role"] == "user"
    assert_gemini_valid(fitted, contents, merged=False)
    assert {entry.reason.describe() for entry in report.excluded}


def test_merge_consecutive_joins_same_role_turns() -> None:
    contents = [user("a"), model("b"), user("c"), model("d"), user("e")]
    units = gemini.from_messages(contents, counter=COUNTER)
    chosen = [units.items[0], units.items[2], units.items[4]]
    merged = gemini.to_messages(chosen, units, merge_consecutive=True).contents
    assert merged == [{"role": "user", "parts": [{"text": "a"}, {"text": "c"}, {"text": "e"}]}]


def test_media_parts_cost_their_overheads() -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    contents = [{"role": "user", "parts": [{"text": "look"}, image]}]
    assert gemini.count_tokens(contents, counter=COUNTER) == (
        len(["look", "[image]"])
        + gemini.DEFAULT_OVERHEAD.per_message
        + 258
        + gemini.DEFAULT_OVERHEAD.per_request
    )
    pdf = {"file_data": {"mime_type": "application/pdf", "file_uri": "gs://b/doc.pdf"}}
    with pytest.raises(PipelineConfigError, match=r"overhead\.document"):
        gemini.count_tokens([{"role": "user", "parts": [pdf]}])
    overhead = MessageOverhead(per_message=0, document=500)
    total = gemini.count_tokens(
        [{"role": "user", "parts": [pdf]}], overhead=overhead, counter=COUNTER
    )
    assert total == 500 + len(["[document]"])


@pytest.mark.parametrize(
    ("contents", "location"),
    [
        ([{"role": "assistant", "parts": []}], "contents[0].role"),
        ([{"role": "user"}], "contents[0].parts"),
        ([{"role": "user", "parts": [{"functionCall": {"name": "f"}}]}], "contents[0].parts[0]"),
        ([responses("f")], "contents[0].parts[0].function_response"),
        ([user("x"), calls("f")], "contents[1].parts[0].functionCall"),
        ([{"role": "user", "parts": [{}]}], "contents[0].parts[0]"),
        ([{"role": "user", "parts": [{"inlineData": {"data": "x"}}]}], "inlineData.mimeType"),
        ([{"role": "user", "parts": [{"text": 3}]}], "contents[0].parts[0].text"),
    ],
)
def test_malformed_contents_name_the_location(contents: Any, location: str) -> None:
    with pytest.raises(MessageFormatError, match=re.escape(location)):
        gemini.from_messages(contents)


# --------------------------------------------------------------------------- properties


def assert_gemini_valid(output: Sequence[Any], original: Sequence[Any], *, merged: bool) -> None:
    """Responses follow their calls in the next turn; calls are answered; the first turn is a
    user turn; with ``merged``, roles alternate."""
    if not merged:
        assert_subsequence(output, original)
    previous_calls: list[str] = []
    for position, content in enumerate(output):
        names = [
            (part.get("functionResponse") or part.get("function_response"))["name"]
            for part in content["parts"]
            if "functionResponse" in part or "function_response" in part
        ]
        if names:
            assert sorted(names) == sorted(previous_calls), f"output[{position}] pairing"
        else:
            assert not previous_calls, f"calls before output[{position}] left unanswered"
        previous_calls = [
            part["functionCall"]["name"] for part in content["parts"] if "functionCall" in part
        ]
        if merged and position:
            assert content["role"] != output[position - 1]["role"], "roles must alternate"
    assert not previous_calls, "the last turn's calls are unanswered"


words = st.lists(st.sampled_from(["alpha", "beta", "gamma", "ok"]), min_size=1, max_size=10).map(
    " ".join
)
turn = st.one_of(
    st.tuples(st.just("user"), words),
    st.tuples(st.just("model"), words),
    st.tuples(st.just("tools"), st.lists(st.sampled_from(["f", "g", "h"]), min_size=1, max_size=3)),
)


def build(turns: list[Any]) -> list[Any]:
    contents: list[Any] = []
    for entry in turns:
        if entry[0] == "user":
            contents.append(user(entry[1]))
        elif entry[0] == "model":
            contents.append(model(entry[1]))
        else:
            contents.append(calls(*entry[1]))
            contents.append(responses(*reversed(entry[1])))
    return contents


@settings(max_examples=120, deadline=None)
@given(
    system=st.one_of(st.none(), words),
    turns=st.lists(turn, max_size=20),
    budget=st.integers(min_value=3, max_value=300),
    merge=st.booleans(),
)
def test_random_contents_fit_into_valid_contents(
    system: str | None, turns: list[Any], budget: int, merge: bool
) -> None:
    contents = build(turns)
    units = gemini.from_messages(contents, system_instruction=system, counter=COUNTER)
    assert gemini.to_messages(units.items, units) == (system, contents)
    try:
        fitted_system, fitted, _ = gemini.fit_messages(
            contents,
            system_instruction=system,
            budget=budget,
            counter=COUNTER,
            merge_consecutive=merge,
        )
    except PinnedBudgetError:
        pinned = sum(unit.item.tokens for unit in units if unit.item.pinned)
        assert pinned > budget - gemini.DEFAULT_OVERHEAD.per_request
        return
    assert fitted_system == system
    assert_gemini_valid(fitted, contents, merged=merge)
    if fitted and not any(item.pinned and "role:model" in item.tags for item in units.items):
        assert fitted[0]["role"] == "user"
    assert gemini.count_tokens(fitted, system_instruction=system, counter=COUNTER) <= budget
