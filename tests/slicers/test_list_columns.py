"""The list form of the column slicers selects exactly what the array form selects."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.model import ContextBudget
from pycupel.slicers import GreedySlice, KnapsackSlice
from pycupel.slicers._common import token_column

counts = st.lists(st.integers(0, 60), min_size=0, max_size=40)
scores_for = st.floats(-2.0, 2.0, allow_nan=False) | st.sampled_from([0.0, -0.0, 1.0, 0.5])


@st.composite
def columns(draw: st.DrawFn) -> tuple[list[int], list[float], int]:
    tokens = draw(counts)
    scores = draw(st.lists(scores_for, min_size=len(tokens), max_size=len(tokens)))
    target = draw(st.integers(0, sum(tokens) + 5))
    return tokens, scores, target


@settings(max_examples=300, deadline=None)
@given(columns())
def test_greedy_lists_select_the_array_positions(case: tuple[list[int], list[float], int]) -> None:
    tokens, scores, target = case
    budget = ContextBudget(max_tokens=target, target_tokens=target)
    slicer = GreedySlice()
    expected = (
        slicer.select_positions(token_column(tokens), np.asarray(scores), budget) if tokens else []
    )
    assert slicer.select_positions_of_lists(tokens, scores, budget) == expected


@settings(max_examples=50, deadline=None)
@given(columns())
def test_the_base_list_form_converts_to_arrays(case: tuple[list[int], list[float], int]) -> None:
    tokens, scores, target = case
    if not tokens or target <= 0:
        return
    budget = ContextBudget(max_tokens=target, target_tokens=target)
    slicer = KnapsackSlice(bucket_size=1)
    expected = slicer.select_positions(token_column(tokens), np.asarray(scores), budget)
    assert slicer.select_positions_of_lists(tokens, scores, budget) == expected
