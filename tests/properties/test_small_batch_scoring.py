"""The fused run's small-batch scoring gives bit for bit what the scorers' own score_all gives."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from pipeline_strategies import items

from pycupel.model import ContextItem
from pycupel.scorers import (
    CompositeScorer,
    FrequencyScorer,
    KindScorer,
    PriorityScorer,
    RecencyScorer,
    TagScorer,
)
from pycupel.scorers.base import Scorer
from pycupel.scorers.small_batch import small_batch_scoring

covered: st.SearchStrategy[Scorer] = st.one_of(
    st.just(RecencyScorer()),
    st.just(PriorityScorer()),
    st.just(KindScorer()),
    st.builds(
        KindScorer,
        st.dictionaries(
            st.sampled_from(["message", "Document", "ToolOutput", "SystemPrompt"]),
            st.floats(0.0, 1e6),
        ),
    ),
    st.just(FrequencyScorer()),
)
composites = st.builds(
    CompositeScorer, st.lists(st.tuples(covered, st.floats(0.01, 50.0)), min_size=1, max_size=5)
)


def bits(scores: list[float]) -> list[str]:
    return [float(score).hex() for score in scores]


@settings(max_examples=300, deadline=None)
@given(
    scorer=st.one_of(covered, composites),
    pool=st.lists(items(), max_size=40),
    repeats=st.lists(st.integers(0, 39), max_size=3),
)
def test_small_batch_scores_are_score_all_bit_for_bit(
    scorer: Scorer, pool: list[ContextItem], repeats: list[int]
) -> None:
    scoring = small_batch_scoring(scorer)
    assert scoring is not None
    expected = scorer.score_all(pool)
    assert bits(scoring(pool, False)) == bits(expected)
    assert bits(scoring(pool, True)) == bits(expected)  # distinct objects, as the run knows
    assert all(map(math.isfinite, expected))
    again = pool + [pool[index] for index in repeats if index < len(pool)]
    assert bits(scoring(again, False)) == bits(scorer.score_all(again))


def test_other_scorers_and_unbounded_kind_weights_are_not_covered() -> None:
    assert small_batch_scoring(TagScorer({"a": 1.0})) is None
    mixed = CompositeScorer([(RecencyScorer(), 1.0), (TagScorer({"a": 1.0}), 1.0)])
    assert small_batch_scoring(mixed) is None
    assert small_batch_scoring(KindScorer({"Message": 1e308})) is None
