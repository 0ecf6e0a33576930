"""The message path's fast constructions build exactly what the validating paths build."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from types import MappingProxyType
from typing import Any

import pytest
from adapter_histories import WordCounter, openai_history
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.adapters import Shrink, Structure, openai
from pycupel.conversation.fit import fit_units, fitted_entries, with_variants
from pycupel.conversation.grouping import _message_timestamps, _UnitMaker
from pycupel.conversation.parsed import ParsedMessage, ParseState
from pycupel.conversation.structure import take_relevant
from pycupel.conversation.upgrade import best_first, best_value_first
from pycupel.conversation.versions import unit_versions
from pycupel.errors import PinnedBudgetError
from pycupel.model import ContextItem

_FIELDS = ContextItem.__slots__  # every field of an item

PLAIN: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "developer", "content": "Use metric units."},
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "hello"},
    {"role": "assistant", "content": ""},
    {"role": "assistant", "content": "ok", "tool_calls": None, "refusal": None, "extra": 1},
    {"role": "user", "content": "again", "name": None},
]


@pytest.mark.parametrize("message", PLAIN)
def test_plain_messages_parse_as_the_full_path_does(message: dict[str, Any]) -> None:
    overhead = openai.DEFAULT_OVERHEAD
    quick = openai._plain_message(3, message, overhead)
    assert quick is not None
    # A mapping that is not a dict takes the full path.
    full = openai.CODEC.parse(3, MappingProxyType(message), overhead, ParseState())
    assert quick == full


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": "hi", "name": "ann"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": None},
        {"role": "assistant", "content": "x", "refusal": "no"},
        {"role": "tool", "content": "x", "tool_call_id": "c1"},
        {"role": ["user"], "content": "x"},
        {"role": "robot", "content": "x"},
    ],
)
def test_other_messages_take_the_full_path(message: dict[str, Any]) -> None:
    assert openai._plain_message(0, message, openai.DEFAULT_OVERHEAD) is None


def test_of_text_equals_the_constructor() -> None:
    built = ParsedMessage(
        index=2, role="user", category="user", text="t", fixed_tokens=4, user_turn=True
    )
    assert ParsedMessage.of_text(2, "user", "user", "t", 4, user_turn=True) == built


@pytest.mark.parametrize(
    "timestamps",
    [
        None,
        [
            datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=5))) + timedelta(minutes=i)
            for i in range(3)
        ],
        [datetime(2026, 1, 1, tzinfo=UTC) - timedelta(days=i) for i in range(3)],
    ],
)
def test_unit_items_equal_validated_items(timestamps: list[datetime] | None) -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    units = openai.from_messages(messages, timestamps=timestamps)
    for unit in units:
        item = unit.item
        rebuilt = ContextItem(item.content, **item._kwargs())
        assert [getattr(item, name) for name in _FIELDS] == [
            getattr(rebuilt, name) for name in _FIELDS
        ]
    # The single-message and the general unit builders agree on a single message.
    stamps = _message_timestamps(timestamps, 3)
    maker = _UnitMaker(stamps, pin_system=True)
    parsed = [
        openai.CODEC.parse(i, m, openai.DEFAULT_OVERHEAD, ParseState())
        for i, m in enumerate(messages)
    ]
    for message in parsed:
        single = maker.single(message, 7, False)
        general = maker.unit([message], 7, False, ())
        assert [getattr(single.item, name) for name in _FIELDS] == [
            getattr(general.item, name) for name in _FIELDS
        ]
        assert (single.message_indices, single.roles, single.system_parameter) == (
            general.message_indices,
            general.roles,
            general.system_parameter,
        )
        assert (single.call_ids, single.unanswered_call_ids) == ((), ())


@settings(max_examples=40, deadline=None)
@given(
    length=st.integers(min_value=2, max_value=120),
    seed=st.integers(min_value=0, max_value=10_000),
    share=st.floats(min_value=0.05, max_value=1.2),
    long_results=st.booleans(),
)
def test_fitted_entries_equal_the_validating_route(
    length: int, seed: int, share: float, long_results: bool
) -> None:
    # fit_messages lists the kept messages straight from the fit; to_messages over
    # with_variants re-checks the selection and rebuilds the units: the same list.
    history = openai_history(length, seed)
    if long_results:
        for message in history:
            if message["role"] == "tool":
                message["content"] = " ".join([message["content"]] * 30)
    counter = WordCounter()
    units = openai.from_messages(history, counter=counter)
    budget = max(int(units.total_tokens * share), units.overhead.per_request + 64)
    try:
        fitted = fit_units(
            units,
            budget=budget,
            policy=None,
            deduplicate=False,
            unanswered_tool_calls="error",
            structure=Structure(),
            shrink=Shrink(),
            editor=openai.CODEC.editor(units.overhead),
            counter=counter,
        )
    except PinnedBudgetError:
        return
    expected = openai.to_messages(fitted.selected, with_variants(units, fitted))
    assert [message for _, message in fitted_entries(units, fitted)] == expected
    assert openai.fit_messages(history, budget=budget, counter=counter).messages == expected


@settings(max_examples=30, deadline=None)
@given(
    length=st.integers(min_value=4, max_value=80),
    seed=st.integers(min_value=0, max_value=10_000),
    long_results=st.booleans(),
)
def test_version_items_equal_validated_replacements(
    length: int, seed: int, long_results: bool
) -> None:
    # A shorter version's item is built without checking its fields again: the same fields
    # as the validating unit.item.replace(...).
    history = openai_history(length, seed)
    if long_results:
        for message in history:
            if message["role"] in ("tool", "assistant") and isinstance(message["content"], str):
                message["content"] = " ".join([message["content"]] * 40)
    counter = WordCounter()
    units = openai.from_messages(history, counter=counter)
    candidates = list(units.units)
    versions = unit_versions(
        candidates,
        units.messages,
        editor=openai.CODEC.editor(units.overhead),
        counter=counter,
        shrink=Shrink(long_message=50),
    )
    checked = 0
    for position, found in versions.items():
        whole = candidates[position].item
        for variant in (found.truncated, found.placeholder):
            if variant is None:
                continue
            item = variant.item
            rebuilt = whole.replace(
                content=item.content,
                tokens=item.tokens,
                metadata=dict(item.metadata),
                pinned=False,
            )
            assert [getattr(item, name) for name in _FIELDS] == [
                getattr(rebuilt, name) for name in _FIELDS
            ]
            assert type(item.metadata) is type(rebuilt.metadata)
            checked += 1
    assert checked or not versions


# Few distinct values, so that keys tie often.
_SCORES = st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0])
_TOKENS = st.sampled_from([0, 1, 2, 3, 7, 40])


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.tuples(_SCORES, _TOKENS, st.booleans()), max_size=40),
    density=st.sampled_from([0.0, 0.5, 0.7, 1.0]),
)
def test_rankings_order_as_the_tuple_keys_do(
    rows: list[tuple[float, int, bool]], density: float
) -> None:
    scores = [score for score, _, _ in rows]
    tokens = [size for _, size, _ in rows]
    positions = [p for p, (_, _, kept) in enumerate(rows) if kept]
    assert best_first(positions, scores) == sorted(positions, key=lambda p: (-scores[p], -p))
    assert best_value_first(positions, scores, tokens, density) == sorted(
        positions, key=lambda p: (-scores[p] / max(tokens[p], 1) ** density, -p)
    )


def take_relevant_by_pairs(
    tokens: list[float],
    chosen: list[bool],
    scores: list[float],
    candidates: list[int],
    *,
    room: float,
    structure: Structure,
    headers: list[int] | None,
    alone: list[bool] | None,
) -> float:
    """The relevance pass ranking (key, position) pairs, as it was written first."""
    ranked = sorted(
        (-scores[p] / max(tokens[p], 1) ** structure.density, p)
        for p in candidates
        if scores[p] > 0.0
    )
    used = 0.0
    count = len(chosen)
    for _, position in ranked:
        if used >= room:
            break
        if chosen[position] or used + tokens[position] > room:
            continue
        chosen[position] = True
        used += tokens[position]
        extras: list[int] = []
        if structure.neighbours and (alone is None or not alone[position]):
            extras.extend(
                p
                for p in (position - 1, position + 1)
                if 0 <= p < count and (alone is None or not alone[p])
            )
        if headers is not None and headers[position] >= 0:
            extras.append(headers[position])
        for extra in extras:
            fits = tokens[extra] >= 0 and used + tokens[extra] <= room
            if 0 <= extra < count and not chosen[extra] and fits:
                chosen[extra] = True
                used += tokens[extra]
    return used


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.tuples(_SCORES, _TOKENS, st.booleans(), st.booleans()), max_size=40),
    data=st.data(),
    room=st.sampled_from([0.0, 5.0, 20.0, 60.0, 500.0]),
    density=st.sampled_from([0.5, 1.0]),
    neighbours=st.booleans(),
)
def test_take_relevant_takes_what_ranking_pairs_takes(
    rows: list[tuple[float, int, bool, bool]],
    data: st.DataObject,
    room: float,
    density: float,
    neighbours: bool,
) -> None:
    tokens = [float(size) for _, size, _, _ in rows]
    scores = [score for score, _, _, _ in rows]
    alone = [flag for _, _, flag, _ in rows]
    fixed = [flag for _, _, _, flag in rows]
    count = len(rows)
    headers = data.draw(
        st.lists(st.integers(-1, max(count - 1, -1)), min_size=count, max_size=count)
    )
    candidates = data.draw(st.lists(st.integers(0, max(count - 1, 0)), max_size=count))
    candidates = sorted(p for p in candidates if p < count)
    structure = Structure(density=density, neighbours=neighbours)
    expected_chosen = list(fixed)
    expected = take_relevant_by_pairs(
        tokens,
        expected_chosen,
        scores,
        candidates,
        room=room,
        structure=structure,
        headers=headers,
        alone=alone,
    )
    got_chosen = list(fixed)
    got = take_relevant(
        tokens,
        got_chosen,
        scores,
        candidates,
        used=0.0,
        room=room,
        structure=structure,
        headers=headers,
        alone=alone,
    )
    assert (got, got_chosen) == (expected, expected_chosen)


def test_take_relevant_breaks_ties_by_position_whatever_the_candidates_order() -> None:
    # Equal keys, room for one: the earlier position is taken, as ranking pairs does.
    structure = Structure(neighbours=False, session_headers=False)
    for candidates in ([0, 2, 4], [4, 2, 0], [2, 4, 0, 2]):
        chosen = [False] * 5
        used = take_relevant(
            [3.0] * 5,
            chosen,
            [0.5] * 5,
            candidates,
            used=0.0,
            room=4.0,
            structure=structure,
            headers=None,
        )
        assert (used, chosen) == (3.0, [True, False, False, False, False])
