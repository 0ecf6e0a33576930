"""Stage 2 (score) on its own: the list and array forms, and the errors that name the scorer."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from pycupel.errors import NonFiniteScoreError, ScorerConfigError
from pycupel.model import ContextItem
from pycupel.pipeline.score import score
from pycupel.scorers import BaseScorer, FunctionScorer, KindScorer
from pycupel.scorers.base import SMALL_BATCH, FloatArray


def items(count: int) -> tuple[ContextItem, ...]:
    return tuple(ContextItem(f"c{n}", tokens=1, kind="Memory") for n in range(count))


def test_a_built_in_scorer_keeps_lists_up_to_the_small_batch_size_inclusive() -> None:
    at_limit = score(KindScorer(), items(SMALL_BATCH))
    above = score(KindScorer(), items(SMALL_BATCH + 1))
    assert isinstance(at_limit, list)
    assert len(at_limit) == SMALL_BATCH
    assert isinstance(above, np.ndarray)
    assert above.dtype == np.float64
    assert above.tolist() == [at_limit[0]] * (SMALL_BATCH + 1)


class IntegerScores(BaseScorer):
    """A user's BaseScorer subclass whose score_array hands back integers."""

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        return np.arange(len(items))  # type: ignore[return-value]


def test_a_subclass_returning_integers_still_gives_float64_scores() -> None:
    scores = score(IntegerScores(), items(3))
    assert isinstance(scores, np.ndarray)
    assert scores.dtype == np.float64
    assert scores.tolist() == [0.0, 1.0, 2.0]


class OneScoreShort(BaseScorer):
    """A user's BaseScorer subclass with a bug: one score fewer than items."""

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        return np.zeros(len(items) - 1)


def test_a_wrong_number_of_array_scores_names_the_scorer_the_shape_and_the_rule() -> None:
    with pytest.raises(ScorerConfigError) as caught:
        score(OneScoreShort(), items(4))
    error = caught.value
    assert error.field == "OneScoreShort.score_array"
    assert error.value == "array of shape (3,)"
    assert error.rule == "must return exactly one score per item (4)"


def test_a_non_finite_score_on_the_list_path_names_the_scorer_item_and_value() -> None:
    values = {"c0": 0.5, "c1": 0.25, "c2": -math.inf}
    with pytest.raises(NonFiniteScoreError) as caught:
        score(FunctionScorer(lambda item: values[item.content]), items(3))
    error = caught.value
    assert (error.scorer, error.index, error.score, error.content) == (
        "FunctionScorer",
        2,
        -math.inf,
        "c2",
    )
    assert str(error).startswith("FunctionScorer.score_all(items)[2]: must be a finite number")


class NanForSecond:
    """A scorer pycupel does not know (so scored through the array path at any size)."""

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return [math.nan if n == 1 else 0.5 for n in range(len(items))]


def test_a_non_finite_score_on_the_array_path_names_the_scorer_item_and_value() -> None:
    with pytest.raises(NonFiniteScoreError) as caught:
        score(NanForSecond(), items(3))
    error = caught.value
    assert (error.scorer, error.index, error.content) == ("NanForSecond", 1, "c1")
    assert math.isnan(error.score)


def test_no_items_give_an_empty_float_array_without_calling_the_scorer() -> None:
    def never(item: ContextItem) -> float:
        raise AssertionError("the scorer must not be called")

    scores = score(FunctionScorer(never), ())
    assert isinstance(scores, np.ndarray)
    assert scores.shape == (0,)
