"""GreedySlice: the specification's edge cases, tie-breaks, and an oracle check.

The pipeline calls a built-in slicer's column forms directly (``select_positions`` on arrays,
``select_positions_of_lists`` for a small batch), so the edge cases are checked on all three
entry points, which must agree.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.errors import SliceInputError
from pycupel.model import ScoredItem
from pycupel.slicers import GreedySlice, Slicer
from pycupel.slicers._common import scores_of, tokens_of

from .helpers import budget, names, scored, selected
from .strategies import literal_greedy, scored_lists

GREEDY = GreedySlice()


def every_form(items: list[ScoredItem], target: int, *, lists: bool = True) -> list[str]:
    """The selection through ``slice`` and the column forms, checked equal (the list form
    only for NaN-free scores: the pipeline refuses NaN before slicing)."""
    through_slice = selected(GREEDY.slice(items, budget(target)))
    arrays = GREEDY.select_positions(tokens_of(items), scores_of(items), budget(target))
    assert [items[p].item.content for p in arrays] == through_slice
    if lists:
        positions = GREEDY.select_positions_of_lists(
            [s.item.tokens for s in items], [s.score for s in items], budget(target)
        )
        assert [items[p].item.content for p in positions] == through_slice
    return through_slice


def test_is_a_budget_monotonic_slicer() -> None:
    assert isinstance(GREEDY, Slicer)
    assert GREEDY.budget_monotonic is True
    assert repr(GREEDY) == "GreedySlice()"
    assert not hasattr(GREEDY, "__dict__")


# --------------------------------------------------------------------------- edge-case table


def test_empty_input() -> None:
    assert GREEDY.slice([], budget(500)).selected == ()
    assert every_form([], 500) == []


def test_non_positive_target_selects_nothing_even_zero_token_items() -> None:
    items = [scored("z", 0, 0.5), scored("a", 10, 0.4)]
    assert every_form(items, 0) == []


def test_all_zero_token_items_are_selected() -> None:
    items = [scored("a", 0, 0.1), scored("b", 0, 0.9), scored("c", 0, 0.0)]
    assert every_form(items, 1) == ["a", "b", "c"]


def test_single_item_fits() -> None:
    assert every_form([scored("a", 100, 0.5)], 100) == ["a"]


def test_single_item_exceeds() -> None:
    assert every_form([scored("a", 101, 0.5)], 100) == []


def test_all_items_exceed_only_zero_token_items() -> None:
    items = [scored("big", 200, 0.9), scored("zero", 0, 0.1), scored("bigger", 300, 0.8)]
    assert every_form(items, 100) == ["zero"]


def test_all_items_fit() -> None:
    items = [scored("a", 100, 0.9), scored("b", 200, 0.5), scored("c", 300, 0.1)]
    assert sorted(every_form(items, 600)) == ["a", "b", "c"]


# --------------------------------------------------------------------------- ordering rules


def test_output_is_in_density_order_not_input_order() -> None:
    items = [scored("dense-last", 400, 0.9), scored("dense-first", 100, 0.7)]
    assert every_form(items, 1000) == ["dense-first", "dense-last"]


def test_equal_density_prefers_the_lower_index() -> None:
    items = [scored("wide", 200, 1.0), scored("narrow", 100, 0.5)]
    assert every_form(items, 200) == ["wide"]


def test_zero_token_items_ordered_by_index_only() -> None:
    items = [scored("z-low", 0, 0.1), scored("x", 10, 0.9), scored("z-high", 0, 0.8)]
    assert every_form(items, 100) == ["z-low", "z-high", "x"]


def test_skipped_item_does_not_stop_the_walk() -> None:
    items = [scored("big", 300, 0.9), scored("mid", 200, 0.8), scored("small", 50, 0.1)]
    assert every_form(items, 250) == ["mid", "small"]


def test_every_item_taken_after_a_skip_uses_up_budget() -> None:
    # lead (fits wholesale), then a skip, then two that each fit only on their own
    items = [
        scored("lead", 200, 0.9),
        scored("skip", 300, 0.6),
        scored("c", 40, 0.05),
        scored("d", 40, 0.04),
    ]
    assert every_form(items, 250) == ["lead", "c"]
    assert every_form(items, 280) == ["lead", "c", "d"]


def test_the_walk_ends_only_when_nothing_ahead_can_fit() -> None:
    # after "big" no longer fits, a zero-token item and a small one further on still do
    items = [
        scored("a", 60, 0.9),
        scored("big", 50, 0.3),
        scored("mid", 30, 0.1),
        scored("tiny", 5, 0.001),
        scored("zero", 0, 0.0),
    ]
    assert every_form(items, 70) == ["zero", "a", "tiny"]


def test_nan_score_is_visited_last() -> None:
    items = [scored("nan", 10, math.nan), scored("a", 100, 0.5)]
    assert selected(GREEDY.slice(items, budget(100))) == ["a"]
    assert selected(GREEDY.slice(items, budget(110))) == ["a", "nan"]


def test_infinite_score_is_visited_first() -> None:
    items = [scored("a", 10, 0.9), scored("inf", 100, math.inf)]
    assert every_form(items, 100) == ["inf"]


def test_negative_scores_still_fill_remaining_room() -> None:
    items = [scored("pos", 50, 0.5), scored("neg", 50, -0.5)]
    assert every_form(items, 100) == ["pos", "neg"]


# --------------------------------------------------------------------------- input contract


def test_negative_tokens_are_rejected_with_the_position() -> None:
    items = [scored("a", 10, 0.5), scored("bad", -3, 0.4)]
    with pytest.raises(SliceInputError, match=r"items\[1\]\.item\.tokens: must be >= 0") as info:
        GREEDY.slice(items, budget(100))
    assert info.value.value == -3
    # the list form (a small batch in the pipeline) checks the counts the same way
    with pytest.raises(SliceInputError, match=r"items\[1\]\.item\.tokens: must be >= 0"):
        GREEDY.select_positions_of_lists([10, -3], [0.5, 0.4], budget(100))


def test_budget_must_be_a_context_budget() -> None:
    with pytest.raises(SliceInputError, match="budget: must be a ContextBudget"):
        GREEDY.slice([], 100)  # type: ignore[arg-type]


def test_input_list_is_not_mutated() -> None:
    items = [scored("a", 300, 0.9), scored("b", 100, 0.7), scored("c", 0, 0.1)]
    before = list(items)
    GREEDY.slice(items, budget(200))
    assert items == before
    assert all(x is y for x, y in zip(items, before, strict=True))


def test_accepts_a_tuple() -> None:
    items = (scored("a", 10, 0.5),)
    assert selected(GREEDY.slice(items, budget(10))) == ["a"]


# --------------------------------------------------------------------------- oracle


@settings(max_examples=300, deadline=None)
@given(items=scored_lists(max_size=20, nan=True), target=st.integers(min_value=0, max_value=1500))
def test_matches_the_literal_pseudocode(items: list[ScoredItem], target: int) -> None:
    result = GREEDY.slice(items, budget(target))
    expected = literal_greedy(items, target)
    assert names(result.selected) == names(expected)
    assert all(a is b for a, b in zip(result.selected, expected, strict=True))
    assert sum(item.tokens for item in result.selected) <= max(target, 0)


@settings(max_examples=300, deadline=None)
@given(items=scored_lists(max_size=20), target=st.integers(min_value=0, max_value=1500))
def test_column_forms_match_the_literal_pseudocode(items: list[ScoredItem], target: int) -> None:
    assert every_form(items, target) == names(literal_greedy(items, target))


@settings(max_examples=100, deadline=None)
@given(items=scored_lists(max_size=15), target=st.integers(min_value=0, max_value=1000))
def test_deterministic(items: list[ScoredItem], target: int) -> None:
    first = GREEDY.slice(items, budget(target))
    assert GREEDY.slice(list(items), budget(target)) == first
