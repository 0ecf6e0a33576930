"""ScaledScorer: min-max normalisation, the 0.5 degenerate case, identity, validation."""

from __future__ import annotations

import math
import pickle
import warnings
from collections.abc import Sequence

import numpy as np
import pytest

from pycupel.errors import ScorerConfigError
from pycupel.model import ContextItem
from pycupel.scorers import KindScorer, PriorityScorer, ReflexiveScorer, ScaledScorer
from pycupel.scorers.base import MAX_SCORER_NESTING


def hinted(hint: float | None, content: str = "x") -> ContextItem:
    return ContextItem(content, tokens=1, future_relevance_hint=hint)


class Fixed:
    """A non-built-in scorer returning given scores in order (one per position)."""

    def __init__(self, scores: Sequence[float]) -> None:
        self.scores = list(scores)

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return self.scores[: len(items)]


def test_empty_list_scores_half() -> None:
    scorer = ScaledScorer(ReflexiveScorer())
    assert scorer.score_all([]) == []
    assert scorer.score(hinted(0.3), []) == 0.5


def test_single_item_scores_half() -> None:
    assert ScaledScorer(ReflexiveScorer()).score_all([hinted(0.9)]) == [0.5]


def test_all_equal_inner_scores_give_exactly_half() -> None:
    items = [hinted(0.4), hinted(0.4), hinted(0.4)]
    assert ScaledScorer(ReflexiveScorer()).score_all(items) == [0.5, 0.5, 0.5]


def test_two_distinct_scores_become_zero_and_one() -> None:
    assert ScaledScorer(ReflexiveScorer()).score_all([hinted(0.3), hinted(0.2)]) == [1.0, 0.0]


def test_linear_interpolation() -> None:
    items = [hinted(0.2), hinted(0.6), hinted(0.3), hinted(0.4)]
    scores = ScaledScorer(ReflexiveScorer()).score_all(items)
    assert scores == [0.0, 1.0, (0.3 - 0.2) / (0.6 - 0.2), (0.4 - 0.2) / (0.6 - 0.2)]


def test_inner_scores_outside_unit_range_still_map_to_unit_range() -> None:
    items = [ContextItem("x", tokens=1, kind=k) for k in ["A", "B", "C"]]
    scorer = ScaledScorer(KindScorer({"A": 10.0, "B": 30.0, "C": 20.0}))
    assert scorer.score_all(items) == [0.0, 1.0, 0.5]


def test_nan_inner_scores_are_skipped_by_min_max_and_scale_to_nan() -> None:
    items = [hinted(None), hinted(None), hinted(None)]
    scores = ScaledScorer(Fixed([0.2, math.nan, 0.6])).score_all(items)
    assert scores[0] == 0.0
    assert math.isnan(scores[1])
    assert scores[2] == 1.0
    # All NaN: min stays +inf and max -inf (not equal), so every result is NaN, as in the spec.
    assert all(math.isnan(s) for s in ScaledScorer(Fixed([math.nan] * 2)).score_all(items[:2]))


def test_accepts_a_plain_function() -> None:
    scorer = ScaledScorer(lambda item: float(len(item.content)))
    items = [ContextItem("ab", tokens=1), ContextItem("abcd", tokens=1)]
    assert scorer.score_all(items) == [0.0, 1.0]


def test_nested_scaled_scorers() -> None:
    items = [ContextItem("x", tokens=1, priority=p) for p in [1, 5, 3]]
    once = ScaledScorer(PriorityScorer())
    twice = ScaledScorer(once)
    assert twice.score_all(items) == once.score_all(items) == [0.0, 1.0, 0.5]
    assert twice.children() == (once,)
    assert twice.inner is once


def test_per_item_score_finds_the_item_by_identity() -> None:
    a, b = hinted(0.2, "same"), hinted(0.8, "same")
    scorer = ScaledScorer(ReflexiveScorer())
    assert scorer.score(a, [a, b]) == 0.0
    assert scorer.score(b, [a, b]) == 1.0


def test_per_item_score_for_an_item_outside_the_list_follows_the_spec() -> None:
    items = [hinted(0.2), hinted(0.8)]
    scorer = ScaledScorer(ReflexiveScorer())
    # The raw score stays the spec's NaN sentinel: NaN unless degenerate.
    assert math.isnan(scorer.score(hinted(0.5), items))
    assert scorer.score(hinted(0.5), [hinted(0.3), hinted(0.3)]) == 0.5


def test_per_item_score_uses_the_last_occurrence() -> None:
    a, b = hinted(None), hinted(None)
    scorer = ScaledScorer(Fixed([0.0, 1.0, 0.5]))
    assert scorer.score(a, [a, b, a]) == 0.5


@pytest.mark.parametrize("inner", [None, 42, "reflexive"])
def test_invalid_inner_is_rejected(inner: object) -> None:
    with pytest.raises(ScorerConfigError) as info:
        ScaledScorer(inner)  # type: ignore[arg-type]
    assert info.value.field == "inner"


def test_inner_returning_the_wrong_number_of_scores_is_reported() -> None:
    with pytest.raises(ScorerConfigError, match="exactly one score per item"):
        ScaledScorer(Fixed([0.1])).score_all([hinted(None), hinted(None)])


def test_repr() -> None:
    assert repr(ScaledScorer(ReflexiveScorer())) == "ScaledScorer(ReflexiveScorer())"


@pytest.mark.parametrize("inner", [None, 42, "reflexive"])
def test_invalid_inner_error_names_the_value_and_the_rule(inner: object) -> None:
    with pytest.raises(ScorerConfigError) as info:
        ScaledScorer(inner)  # type: ignore[arg-type]
    assert info.value.value is inner
    assert info.value.rule.startswith("must ")
    assert info.value.rule in str(info.value)
    assert ("not None" in info.value.rule) == (inner is None)


def test_too_deep_nesting_is_refused_naming_the_inner_field() -> None:
    scorer: ScaledScorer | ReflexiveScorer = ReflexiveScorer()
    for _ in range(MAX_SCORER_NESTING):
        scorer = ScaledScorer(scorer)
    with pytest.raises(ScorerConfigError) as info:
        ScaledScorer(scorer)
    assert info.value.field == "inner"
    assert f"at most {MAX_SCORER_NESTING} combinator levels" in str(info.value)
    assert scorer.children()  # the deepest accepted one is still a working scorer


class ByQuery:
    """A query-aware scorer: the item's position, reversed when the query is "reverse"."""

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return self.score_all_for(items, None)

    def score_all_for(self, items: Sequence[ContextItem], query: str | None) -> list[float]:
        scores = [float(i) for i in range(len(items))]
        return scores[::-1] if query == "reverse" else scores


def test_the_query_reaches_the_inner_scorer() -> None:
    items = [hinted(None, c) for c in "abc"]
    scorer = ScaledScorer(ByQuery())
    assert scorer.score_array_for(items, None).tolist() == [0.0, 0.5, 1.0]
    assert scorer.score_array_for(items, "reverse").tolist() == [1.0, 0.5, 0.0]


def test_degenerate_array_is_float64() -> None:
    result = ScaledScorer(ReflexiveScorer()).score_array([hinted(0.3), hinted(0.3)])
    assert result.dtype == np.float64
    assert result.tolist() == [0.5, 0.5]


def test_infinite_and_huge_inner_scores_scale_without_numpy_warnings() -> None:
    items = [hinted(None, c) for c in "abc"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        infinite = ScaledScorer(Fixed([0.0, math.inf, 1.0])).score_array(items)
        huge = ScaledScorer(Fixed([-1e308, 1e308, 0.0])).score_array(items)
    assert math.isnan(infinite[1])
    assert [infinite[0], infinite[2]] == [0.0, 0.0]
    # the range overflows to inf: the IEEE quotients are 0, inf/inf = NaN, 0
    assert math.isnan(huge[1])
    assert [huge[0], huge[2]] == [0.0, 0.0]


def test_pickle_round_trip_keeps_the_inner_scorer() -> None:
    scorer = ScaledScorer(PriorityScorer())
    copy = pickle.loads(pickle.dumps(scorer))
    assert type(copy) is ScaledScorer
    assert repr(copy) == "ScaledScorer(PriorityScorer())"
    items = [ContextItem("x", tokens=1, priority=p) for p in (1, 5, 3)]
    assert copy.score_all(items) == scorer.score_all(items) == [0.0, 1.0, 0.5]
