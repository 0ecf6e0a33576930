"""Property tests: every relative scorer's batch result equals a literal transcription of the
specification's pseudocode (the oracle below, O(N^2) on purpose), on random lists with ties,
missing values, repeated objects and case-varied tags.

The oracles use ``datetime`` comparisons and their own ASCII folding, independent of the
integer/numpy machinery under test. Results must match exactly (bit for bit), not
approximately: the fast paths claim identical values.
"""

from __future__ import annotations

import math
import random
import string
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta, timezone
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.model import ContextItem
from pycupel.scorers import (
    CompositeScorer,
    FrequencyScorer,
    KindScorer,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    ScaledScorer,
    TagScorer,
    frequency,
)
from pycupel.scorers.base import SMALL_BATCH

Oracle = Callable[[ContextItem, Sequence[ContextItem]], float]

_UPPER_TO_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


# --------------------------------------------------------------------------- spec oracles


def recency_oracle(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
    if item.timestamp is None:
        return 0.0
    count_with_timestamp = 0
    rank = 0
    for other in all_items:
        if other.timestamp is None:
            continue
        count_with_timestamp += 1
        if other.timestamp < item.timestamp:
            rank += 1
    if count_with_timestamp <= 1:
        return 1.0
    return rank / (count_with_timestamp - 1)


def priority_oracle(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
    if item.priority is None:
        return 0.0
    count_with_priority = 0
    rank = 0
    for other in all_items:
        if other.priority is None:
            continue
        count_with_priority += 1
        if other.priority < item.priority:
            rank += 1
    if count_with_priority <= 1:
        return 1.0
    return rank / (count_with_priority - 1)


def _case_insensitive_equal(a: str, b: str) -> bool:
    return a.translate(_UPPER_TO_LOWER) == b.translate(_UPPER_TO_LOWER)


def _shares_any_tag(tags_a: Sequence[str], tags_b: Sequence[str]) -> bool:
    return any(_case_insensitive_equal(a, b) for a in tags_a for b in tags_b)


def frequency_oracle(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
    if len(item.tags) == 0 or len(all_items) <= 1:
        return 0.0
    matching = 0
    for other in all_items:
        if other is item:
            continue
        if len(other.tags) == 0:
            continue
        if _shares_any_tag(item.tags, other.tags):
            matching += 1
    return matching / (len(all_items) - 1)


def tag_oracle(weights: dict[str, float], *, fold: bool = False) -> Oracle:
    def key(tag: str) -> str:
        return tag.translate(_UPPER_TO_LOWER) if fold else tag

    table = {key(tag): weight for tag, weight in weights.items()}
    total = 0.0
    for weight in weights.values():
        total += weight

    def score(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        if total == 0.0 or len(item.tags) == 0:
            return 0.0
        matched = 0.0
        for tag in item.tags:
            if key(tag) in table:
                matched += table[key(tag)]
        return min(matched / total, 1.0)

    return score


def reflexive_oracle(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
    value = item.future_relevance_hint
    if value is None or not math.isfinite(value):
        return 0.0
    return 0.0 if value < 0.0 else 1.0 if value > 1.0 else value


def scaled_oracle(inner: Oracle) -> Oracle:
    def score(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        if len(all_items) == 0:
            return 0.5
        raw = math.nan
        low = math.inf
        high = -math.inf
        for other in all_items:
            s = inner(other, all_items)
            # Literal transcription (NaN never compares), hence no min()/max().
            if s < low:  # noqa: PLR1730
                low = s
            if s > high:  # noqa: PLR1730
                high = s
            if other is item:
                raw = s
        if high == low:
            return 0.5
        return (raw - low) / (high - low)

    return score


def composite_oracle(children: Sequence[tuple[Oracle, float]]) -> Oracle:
    total = 0.0
    for _, weight in children:
        total += weight
    normalized = [(oracle, weight / total) for oracle, weight in children]

    def score(item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        result = 0.0
        for oracle, weight in normalized:
            result += oracle(item, all_items) * weight
        return result

    return score


# --------------------------------------------------------------------------- strategies

_BASE = datetime(2024, 1, 1, tzinfo=UTC)
_TAGS = ["a", "A", "b", "B", "c", "Db", "dB", "é", "É", "ss", "x y", "", "tag-1", "TAG-1"]

timestamps = st.one_of(
    st.none(),
    # A few distinct instants so ties are common; some are written in another time zone.
    st.builds(
        lambda minutes, offset: (_BASE + timedelta(minutes=minutes)).astimezone(
            timezone(timedelta(hours=offset))
        ),
        st.integers(0, 6),
        st.integers(-5, 5),
    ),
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
)
priorities = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.integers(-(2**70), 2**70),
)
hints = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 0.25, 0.5, 1.0]),
)
tag_lists = st.lists(st.sampled_from(_TAGS), max_size=4) | st.lists(
    st.sampled_from(_TAGS), min_size=9, max_size=14
)


@st.composite
def items_strategy(draw: st.DrawFn) -> ContextItem:
    return ContextItem(
        "x",
        tokens=1,
        timestamp=draw(timestamps),
        priority=draw(priorities),
        tags=draw(tag_lists),
        future_relevance_hint=draw(hints),
        kind=draw(st.sampled_from(["Message", "document", "MEMORY", "Custom"])),
    )


@st.composite
def item_lists(draw: st.DrawFn) -> tuple[list[ContextItem], ContextItem]:
    """A list drawn from a pool (so one object may appear several times) and an outsider."""
    pool = draw(st.lists(items_strategy(), min_size=1, max_size=12))
    picks = draw(st.lists(st.integers(0, len(pool) - 1), max_size=20))
    outsider = draw(items_strategy())
    return [pool[i] for i in picks], outsider


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _assert_matches(scorer: object, oracle: Oracle, items: list[ContextItem]) -> None:
    from pycupel.scorers import score_array

    batch = score_array(scorer, items)  # type: ignore[arg-type]
    assert batch.dtype.name == "float64"
    assert len(batch) == len(items)
    for index, item in enumerate(items):
        expected = oracle(item, items)
        assert _same(float(batch[index]), expected), (index, float(batch[index]), expected)


def _assert_per_item(scorer: object, oracle: Oracle, items: list[ContextItem], other: ContextItem):
    score = scorer.score  # type: ignore[attr-defined]
    for item in [*items[:3], other]:
        assert _same(score(item, items), oracle(item, items))


# --------------------------------------------------------------------------- properties

_SETTINGS = settings(max_examples=200, deadline=None)


@_SETTINGS
@given(item_lists())
def test_recency_matches_spec(case: tuple[list[ContextItem], ContextItem]) -> None:
    items, outsider = case
    _assert_matches(RecencyScorer(), recency_oracle, items)
    _assert_per_item(RecencyScorer(), recency_oracle, items, outsider)


@_SETTINGS
@given(item_lists())
def test_priority_matches_spec(case: tuple[list[ContextItem], ContextItem]) -> None:
    items, outsider = case
    _assert_matches(PriorityScorer(), priority_oracle, items)
    _assert_per_item(PriorityScorer(), priority_oracle, items, outsider)


@_SETTINGS
@given(item_lists())
def test_frequency_matches_spec(case: tuple[list[ContextItem], ContextItem]) -> None:
    items, outsider = case
    _assert_matches(FrequencyScorer(), frequency_oracle, items)
    _assert_per_item(FrequencyScorer(), frequency_oracle, items, outsider)


@_SETTINGS
@given(
    item_lists(),
    st.integers(0, 3),
    st.sampled_from([0, 3, 10_000_000]),
    st.booleans(),
)
def test_frequency_every_counting_path_matches_spec(
    case: tuple[list[ContextItem], ContextItem], subset_limit: int, pair_limit: int, lexsort: bool
) -> None:
    """Force the large-set paths (pairs and bitsets) and the lexsort de-duplication."""
    items, _ = case
    with (
        mock.patch.object(frequency, "SUBSET_TAG_LIMIT", subset_limit),
        mock.patch.object(frequency, "PAIR_LIMIT", pair_limit),
        mock.patch.object(frequency, "PACKED_KEY_LIMIT", 0 if lexsort else 2**62),
    ):
        _assert_matches(FrequencyScorer(), frequency_oracle, items)


@_SETTINGS
@given(
    item_lists(),
    st.dictionaries(
        st.sampled_from(["a", "b", "Db", "é", "", "tag-1", "zzz"]),
        st.floats(min_value=0.0, max_value=1e6) | st.sampled_from([0.0, 0.1, 0.7]),
    ),
    st.booleans(),
)
def test_tag_matches_spec(
    case: tuple[list[ContextItem], ContextItem], weights: dict[str, float], fold: bool
) -> None:
    items, outsider = case
    scorer = TagScorer(weights, case_sensitive=not fold)
    oracle = tag_oracle(weights, fold=fold)
    _assert_matches(scorer, oracle, items)
    _assert_per_item(scorer, oracle, items, outsider)


@_SETTINGS
@given(item_lists())
def test_reflexive_matches_spec(case: tuple[list[ContextItem], ContextItem]) -> None:
    items, outsider = case
    _assert_matches(ReflexiveScorer(), reflexive_oracle, items)
    _assert_per_item(ReflexiveScorer(), reflexive_oracle, items, outsider)


@_SETTINGS
@given(item_lists())
def test_scaled_matches_spec(case: tuple[list[ContextItem], ContextItem]) -> None:
    items, outsider = case
    for scorer, oracle in [
        (ScaledScorer(RecencyScorer()), scaled_oracle(recency_oracle)),
        (ScaledScorer(FrequencyScorer()), scaled_oracle(frequency_oracle)),
        (ScaledScorer(ReflexiveScorer()), scaled_oracle(reflexive_oracle)),
        (
            ScaledScorer(ScaledScorer(PriorityScorer())),
            scaled_oracle(scaled_oracle(priority_oracle)),
        ),
    ]:
        _assert_matches(scorer, oracle, items)
        _assert_per_item(scorer, oracle, items, outsider)


@_SETTINGS
@given(
    item_lists(),
    st.lists(st.floats(min_value=1e-3, max_value=1e3), min_size=5, max_size=5),
)
def test_composite_matches_spec(
    case: tuple[list[ContextItem], ContextItem], weights: list[float]
) -> None:
    items, outsider = case
    inner = CompositeScorer([(PriorityScorer(), weights[3]), (ReflexiveScorer(), weights[4])])
    scorer = CompositeScorer(
        [
            (RecencyScorer(), weights[0]),
            (FrequencyScorer(), weights[1]),
            (ScaledScorer(inner), weights[2]),
        ]
    )
    oracle = composite_oracle(
        [
            (recency_oracle, weights[0]),
            (frequency_oracle, weights[1]),
            (
                scaled_oracle(
                    composite_oracle(
                        [(priority_oracle, weights[3]), (reflexive_oracle, weights[4])]
                    )
                ),
                weights[2],
            ),
        ]
    )
    _assert_matches(scorer, oracle, items)
    _assert_per_item(scorer, oracle, items, outsider)


@_SETTINGS
@given(item_lists())
def test_score_all_equals_score_array(case: tuple[list[ContextItem], ContextItem]) -> None:
    items, _ = case
    for scorer in [
        RecencyScorer(),
        PriorityScorer(),
        FrequencyScorer(),
        ReflexiveScorer(),
        KindScorer(),
        TagScorer({"a": 1.0, "Db": 2.0}),
        CompositeScorer(
            [(RecencyScorer(), 3), (PriorityScorer(), 2), (KindScorer(), 1), (FrequencyScorer(), 1)]
        ),
        CompositeScorer([(FrequencyScorer(), 0.3), (lambda item: len(item.tags), 0.7)]),
    ]:
        listed = scorer.score_all(items)
        assert all(isinstance(s, float) for s in listed)
        assert listed == scorer.score_array(items).tolist()


def _seeded_items(size: int, seed: int) -> list[ContextItem]:
    """Items with tied and missing timestamps and priorities, case-varied tags, and repeated
    objects (the same kinds of input the drawn lists above hold, at any size)."""
    rng = random.Random(seed)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    pool: list[ContextItem] = []
    for index in range(size):
        if pool and rng.random() < 0.1:
            pool.append(rng.choice(pool))  # the same object again
            continue
        pool.append(
            ContextItem(
                f"item {index}",
                tokens=rng.randint(0, 50),
                timestamp=None
                if rng.random() < 0.2
                else base + timedelta(hours=rng.randint(0, 30)),
                priority=None if rng.random() < 0.3 else rng.randint(-3, 5),
                tags=rng.sample(_TAGS, rng.randint(0, 4)),
                kind=rng.choice(["Message", "document", "MEMORY", "Custom"]),
            )
        )
    return pool


@pytest.mark.parametrize("size", [SMALL_BATCH - 1, SMALL_BATCH, SMALL_BATCH + 1])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_small_batch_lists_equal_the_vectorised_scores_around_the_threshold(
    size: int, seed: int
) -> None:
    # Up to SMALL_BATCH items score_all takes the pure-Python path, above it the numpy one.
    items = _seeded_items(size, seed)
    composite = CompositeScorer(
        [(RecencyScorer(), 3), (PriorityScorer(), 2), (KindScorer(), 1), (FrequencyScorer(), 1)]
    )
    for scorer in [RecencyScorer(), PriorityScorer(), FrequencyScorer(), composite]:
        assert scorer.score_all(items) == scorer.score_array(items).tolist()
