"""The helpers every slicer shares (``pycupel.slicers._common``): the input checks and the
errors they raise, the token and score columns, and the immutable configuration mixin.

Each check is exercised on the route a direct ``slice`` call takes, so the error a caller sees
(field, value and rule) is what is pinned, and each column helper on the edge its docstring
names (an empty input, a count beyond int64, a total at the ``2**62`` limit)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import UserList
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest

from pycupel.errors import SliceInputError, SlicerConfigError
from pycupel.model import ContextItem, ScoredItem
from pycupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    GreedySlice,
    KnapsackSlice,
    OptimalSlice,
    PackerSlice,
    QuotaEntry,
    QuotaSlice,
    Slicer,
    StreamSlice,
)
from pycupel.slicers._common import (
    TOKEN_TOTAL_LIMIT,
    check_budget,
    check_scored_items,
    check_token_counts,
    scored_columns,
    scores_of,
    token_array,
    token_column,
)

from .helpers import budget, scored, selected

ITEM = ContextItem("a", tokens=10)
SCORE_RULE = "must be a real number (int or float; text and Decimal are not converted)"
SUM_RULE = "must sum to less than 2**62 so that int64 token arithmetic is exact"
NEGATIVE_RULE = "must be >= 0 (the pipeline excludes negative-token items before slicing)"


def slicers() -> dict[str, Slicer]:
    """One of each slicer whose ``slice`` starts with the shared checks."""
    return {
        "greedy": GreedySlice(),
        "knapsack": KnapsackSlice(bucket_size=1),
        "quota": QuotaSlice([QuotaEntry("Message", 0, 100)]),
        "count-quota": CountQuotaSlice([CountQuotaEntry("Message", 0, 5)]),
        "count-knapsack": CountConstrainedKnapsackSlice([CountQuotaEntry("Message", 0, 5)]),
        "packer": PackerSlice(None),
        "optimal": OptimalSlice(),
        "stream": StreamSlice(),
    }


def any_score(item: ContextItem, score: object) -> ScoredItem:
    """A scored item whose score is any object: a direct ``slice`` call may be given one."""
    return ScoredItem(item, score)  # type: ignore[arg-type]


NAMES = sorted(slicers())
COLUMN_SLICERS: dict[str, Slicer] = {"greedy": GreedySlice(), "knapsack": KnapsackSlice(1)}


# --------------------------------------------------------------------------- the budget


@pytest.mark.parametrize("name", NAMES)
def test_a_budget_that_is_not_a_context_budget_is_named_with_its_value(name: str) -> None:
    bad = {"target_tokens": 100}
    with pytest.raises(SliceInputError) as caught:
        slicers()[name].slice([scored("a", 5, 0.5)], bad)  # type: ignore[arg-type]
    assert (caught.value.field, caught.value.value, caught.value.rule) == (
        "budget",
        bad,
        "must be a ContextBudget",
    )


def test_check_budget_returns_the_budget_itself() -> None:
    given = budget(50)
    assert check_budget(given) is given


# --------------------------------------------------------------------------- the items


@pytest.mark.parametrize("name", NAMES)
def test_a_non_sequence_is_refused_with_its_value_and_rule(name: str) -> None:
    items = {ScoredItem(ITEM, 0.5)}
    with pytest.raises(SliceInputError) as caught:
        slicers()[name].slice(items, budget(100))  # type: ignore[arg-type]
    assert caught.value.field == "items"
    assert caught.value.value is items
    assert caught.value.rule == "must be a sequence of ScoredItem"


@pytest.mark.parametrize("name", NAMES)
def test_an_element_that_is_not_a_scored_item_is_named_by_position(name: str) -> None:
    element = (ITEM, 0.5)  # a plain tuple, not a ScoredItem
    items = [ScoredItem(ITEM, 0.5), ScoredItem(ContextItem("b", tokens=3), 0.2), element]
    with pytest.raises(SliceInputError) as caught:
        slicers()[name].slice(items, budget(100))  # type: ignore[arg-type]
    assert caught.value.field == "items[2]"
    assert caught.value.value is element
    assert caught.value.rule == "must be a ScoredItem(item, score)"


@pytest.mark.parametrize("name", NAMES)
def test_an_item_that_is_not_a_context_item_is_named_with_its_value(name: str) -> None:
    items = [ScoredItem(ITEM, 0.5), ScoredItem("text", 0.4)]  # type: ignore[arg-type]
    with pytest.raises(SliceInputError) as caught:
        slicers()[name].slice(items, budget(100))
    assert caught.value.field == "items[1].item"
    assert caught.value.value == "text"
    assert caught.value.rule == "must be a ContextItem"


@pytest.mark.parametrize("name", NAMES)
def test_a_score_that_is_not_a_real_number_has_the_full_rule(name: str) -> None:
    items = [ScoredItem(ITEM, 0.5), ScoredItem(ContextItem("b", tokens=3), "0.2")]  # type: ignore[arg-type]
    with pytest.raises(SliceInputError) as caught:
        slicers()[name].slice(items, budget(100))
    assert (caught.value.field, caught.value.value, caught.value.rule) == (
        "items[1].score",
        "0.2",
        SCORE_RULE,
    )


HUGE = 10**400
"""An int that float() cannot represent (float64 tops out near 1.8e308)."""


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "score", [HUGE, -HUGE, Fraction(HUGE, 3)], ids=["huge", "minus-huge", "huge-fraction"]
)
def test_a_score_beyond_the_float64_range_is_refused_by_name(name: str, score: object) -> None:
    for first in (ScoredItem(ITEM, 0.5), ScoredItem(ITEM, 1), any_score(ITEM, Fraction(1, 2))):
        items = [first, any_score(ContextItem("b", tokens=3), score)]
        with pytest.raises(SliceInputError) as caught:
            slicers()[name].slice(items, budget(100))
        assert caught.value.field == "items[1].score"
        assert caught.value.value is score
        assert caught.value.rule == "must be within the float64 range (about ±1.8e308)"


def test_an_integer_score_within_the_float64_range_is_accepted() -> None:
    # 2**1023 is the largest power of two a float64 holds; its item outranks the other.
    items = [scored("top", 3, 2**1023), scored("low", 3, 1)]
    assert check_scored_items(items) is items
    # The knapsacks refuse it by their own rule (its scaled value passes 2**62).
    for name in sorted(set(NAMES) - {"knapsack", "count-knapsack"}):
        assert selected(slicers()[name].slice(items, budget(3))) == ["top"], name


def test_the_first_bad_element_is_the_one_named() -> None:
    items = [ScoredItem(ITEM, 0.5), any_score(ITEM, None), ScoredItem("text", 0.4)]  # type: ignore[arg-type]
    with pytest.raises(SliceInputError) as caught:
        check_scored_items(items)
    assert caught.value.field == "items[1].score"


@pytest.mark.parametrize(
    "items",
    [
        [],
        [ScoredItem(ITEM, 0.5)],
        [ScoredItem(ITEM, 1), ScoredItem(ITEM, 0.5), ScoredItem(ITEM, np.float64(0.25))],
        (any_score(ITEM, Fraction(1, 3)), any_score(ITEM, np.float32(0.5))),
    ],
    ids=["empty", "float", "int-float-float64", "fraction-float32"],
)
def test_check_scored_items_returns_valid_input_itself(items: list[ScoredItem]) -> None:
    assert check_scored_items(items) is items


# --------------------------------------------------------------------------- the two columns


def test_scored_columns_split_any_valid_sequence_into_items_and_scores() -> None:
    a, b, c = ContextItem("a", tokens=4), ContextItem("b", tokens=2), ContextItem("c", tokens=5)
    plain = [ScoredItem(a, 0.5), ScoredItem(b, 0.25), ScoredItem(c, 0.1)]
    for form in (plain, tuple(plain), UserList(plain)):
        items, scores = scored_columns(form)
        assert list(items) == [a, b, c]
        assert list(scores) == [0.5, 0.25, 0.1]
    # Scores of other real types (and a sequence that is no list) take the checked route.
    mixed = UserList([any_score(a, Fraction(1, 2)), any_score(b, np.float32(0.25))])
    items, scores = scored_columns(mixed)
    assert list(items) == [a, b]
    assert list(scores) == [Fraction(1, 2), np.float32(0.25)]


@pytest.mark.parametrize("name", sorted(COLUMN_SLICERS))
def test_column_slicers_select_the_same_from_any_valid_sequence(name: str) -> None:
    # Densities: b 0.25, a 0.125, c 0.02; the best value within 6 tokens is also {a, b}.
    plain = [scored("a", 4, 0.5), scored("b", 2, 0.5), scored("c", 5, 0.1)]
    fraction_scores = [
        any_score(plain[0].item, Fraction(1, 2)),
        any_score(plain[1].item, np.float32(0.5)),
        ScoredItem(plain[2].item, 0.1),
    ]
    slicer = COLUMN_SLICERS[name]
    expected = {"greedy": ["b", "a"], "knapsack": ["b", "a"]}[name]
    for form in (plain, UserList(plain), fraction_scores, UserList(fraction_scores)):
        assert selected(slicer.slice(form, budget(6))) == expected


def test_scores_of_is_a_float64_column_even_for_integer_scores() -> None:
    column = scores_of([ScoredItem(ITEM, 1), ScoredItem(ITEM, 0.5), ScoredItem(ITEM, 3)])
    assert column.dtype == np.float64
    assert column.tolist() == [1.0, 0.5, 3.0]


def test_integer_scores_are_scaled_as_floats_by_the_knapsack() -> None:
    # floor(10**15 * 10000) = 10**19 is past the 2**62 limit on scaled values; int64
    # arithmetic on the integer would wrap around instead of being refused.
    slicer = KnapsackSlice(bucket_size=1)
    for score in (10**15, 1e15):
        with pytest.raises(SliceInputError) as caught:
            slicer.slice([ScoredItem(ContextItem("a", tokens=1), score)], budget(10))
        assert caught.value.field == "items[*].score"
        with pytest.raises(SliceInputError) as caught:
            slicer.select_positions_of_lists([1], [score], budget(10))
        assert caught.value.field == "items[*].score"


def test_integer_scores_select_as_their_float_values() -> None:
    ints = [scored("a", 3, 2), scored("b", 3, 1), scored("c", 3, 0)]
    floats = [scored("a", 3, 2.0), scored("b", 3, 1.0), scored("c", 3, 0.0)]
    for slicer in (GreedySlice(), KnapsackSlice(1)):
        assert selected(slicer.slice(ints, budget(6))) == selected(slicer.slice(floats, budget(6)))
    assert KnapsackSlice(1).select_positions_of_lists([3, 3, 3], [2, 1, 0], budget(6)) == [1, 0]


_NO_NUMPY_PROBE = """
import json, sys
from pycupel.model import ContextItem, ScoredItem
from pycupel.slicers._common import check_scored_items, scored_columns
items = [ScoredItem(ContextItem("a", tokens=3), 1), ScoredItem(ContextItem("b", tokens=2), 0.5)]
accepted = check_scored_items(items) is items
columns = scored_columns(items)
print(json.dumps([accepted, [i.content for i in columns[0]], list(columns[1]),
                  "numpy" in sys.modules]))
"""


def test_mixed_int_and_float_scores_are_checked_before_numpy_is_loaded() -> None:
    # The list path never needs numpy; its score check must work while numpy is not loaded.
    items = [scored("a", 3, 1), scored("b", 2, 0.5)]
    assert check_scored_items(items) is items
    completed = subprocess.run(
        [sys.executable, "-c", _NO_NUMPY_PROBE],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report == [True, ["a", "b"], [1, 0.5], False]


# --------------------------------------------------------------------------- token counts


@pytest.mark.parametrize("name", sorted(COLUMN_SLICERS))
def test_a_zero_target_selects_nothing_before_any_token_check(name: str) -> None:
    # As every slicer does: target 0 returns the empty selection, whatever the items hold.
    items = [scored("neg", -5, 0.9), scored("zero", 0, 0.5)]
    assert COLUMN_SLICERS[name].slice(items, budget(0)).selected == ()
    assert COLUMN_SLICERS[name].slice([], budget(10)).selected == ()


@pytest.mark.parametrize("name", NAMES)
def test_the_first_negative_count_is_named_not_an_earlier_zero(name: str) -> None:
    items = [scored("zero", 0, 0.9), scored("one", 1, 0.8), scored("neg", -3, 0.7)]
    with pytest.raises(SliceInputError) as caught:
        slicers()[name].slice(items, budget(100))
    assert (caught.value.field, caught.value.value) == ("items[2].item.tokens", -3)
    if name not in {"packer", "stream"}:  # these state their own rule for token counts
        assert caught.value.rule == NEGATIVE_RULE


def test_check_token_counts_names_the_first_negative_count() -> None:
    with pytest.raises(SliceInputError) as caught:
        check_token_counts([0, 1, 0, -3, -4])
    assert (caught.value.field, caught.value.value, caught.value.rule) == (
        "items[3].item.tokens",
        -3,
        NEGATIVE_RULE,
    )
    check_token_counts([])
    check_token_counts([0, 0, 5])


@pytest.mark.parametrize("name", sorted(COLUMN_SLICERS))
def test_counts_summing_to_the_limit_are_refused_with_the_total(name: str) -> None:
    half = TOKEN_TOTAL_LIMIT // 2  # each count fits int64; the two reach 2**62 exactly
    items = [scored("a", half, 0.5), scored("b", half, 0.4)]
    with pytest.raises(SliceInputError) as caught:
        COLUMN_SLICERS[name].slice(items, budget(100))
    assert (caught.value.field, caught.value.value, caught.value.rule) == (
        "items[].item.tokens",
        2**62,
        SUM_RULE,
    )


def test_counts_summing_just_below_the_limit_are_accepted() -> None:
    half = TOKEN_TOTAL_LIMIT // 2
    items = [scored("a", half, 0.5), scored("b", half - 1, 0.4)]
    assert selected(GreedySlice().slice(items, budget(2**62 - 1))) == ["a", "b"]
    assert selected(GreedySlice().slice(items, budget(half))) == ["a"]
    assert token_array([item.item for item in items]).tolist() == [half, half - 1]


def test_check_token_counts_refuses_the_limit_exactly() -> None:
    with pytest.raises(SliceInputError) as caught:
        check_token_counts([TOKEN_TOTAL_LIMIT - 7, 7])
    assert (caught.value.field, caught.value.value, caught.value.rule) == (
        "items[].item.tokens",
        TOKEN_TOTAL_LIMIT,
        SUM_RULE,
    )
    check_token_counts([TOKEN_TOTAL_LIMIT - 8, 7])


@pytest.mark.parametrize("name", sorted(COLUMN_SLICERS))
def test_a_count_beyond_int64_is_refused_by_the_exact_check(name: str) -> None:
    slicer = COLUMN_SLICERS[name]
    with pytest.raises(SliceInputError) as caught:
        slicer.slice([scored("a", 5, 0.5), scored("huge", 2**63, 0.4)], budget(100))
    assert (caught.value.field, caught.value.value, caught.value.rule) == (
        "items[].item.tokens",
        2**63 + 5,
        SUM_RULE,
    )
    with pytest.raises(SliceInputError) as caught:
        slicer.slice([scored("a", 5, 0.5), scored("deep", -(2**64), 0.4)], budget(100))
    assert (caught.value.field, caught.value.value, caught.value.rule) == (
        "items[1].item.tokens",
        -(2**64),
        NEGATIVE_RULE,
    )


def test_token_array_of_no_items_is_an_empty_int64_column() -> None:
    column = token_array([])
    assert column.dtype == np.int64
    assert column.shape == (0,)


def test_token_column_is_int64_even_when_empty() -> None:
    empty = token_column([])
    assert empty.dtype == np.int64
    assert empty.shape == (0,)
    column = token_column([0, 3, 2**40])
    assert column.dtype == np.int64
    assert column.tolist() == [0, 3, 2**40]


# --------------------------------------------------------------------------- configuration


@pytest.mark.parametrize("build", [QuotaSlice, CountQuotaSlice])
def test_an_inner_slicer_class_is_refused_under_the_field_inner(
    build: Callable[..., object],
) -> None:
    entries = (
        [QuotaEntry("Message", 10, 60)]
        if build is QuotaSlice
        else [CountQuotaEntry("Message", 0, 5)]
    )
    with pytest.raises(SlicerConfigError) as caught:
        build(entries, GreedySlice)
    assert (caught.value.field, caught.value.value, caught.value.rule) == (
        "inner",
        GreedySlice,
        "must be a slicer instance, not a class: write GreedySlice(...)",
    )
    not_a_slicer = object()
    with pytest.raises(SlicerConfigError) as caught:
        build(entries, not_a_slicer)
    assert (caught.value.field, caught.value.value, caught.value.rule) == (
        "inner",
        not_a_slicer,
        "must be a slicer (a budget_monotonic property and a slice method)",
    )


@pytest.mark.parametrize("kind", ["", "   ", 5, None], ids=repr)
@pytest.mark.parametrize("entry", [QuotaEntry, CountQuotaEntry])
def test_a_bad_kind_name_is_a_slicer_config_error_with_its_value(
    entry: Callable[..., object], kind: object
) -> None:
    with pytest.raises(SlicerConfigError) as caught:
        entry(kind)
    assert caught.value.field == "kind"
    assert caught.value.value is kind
    # The kind's own rule, as ContextKind states it.
    if isinstance(kind, str):
        assert caught.value.rule == "must not be empty or whitespace-only"
    else:
        assert caught.value.rule == "must be a string"


@pytest.mark.parametrize(
    ("slicer", "attribute"),
    [
        (KnapsackSlice(), "bucket_size"),
        (PackerSlice(), "max_consecutive_skips"),
        (QuotaEntry("Message", 0, 50), "cap"),
    ],
    ids=["knapsack", "packer", "quota-entry"],
)
def test_frozen_configuration_names_the_class_and_the_attribute(
    slicer: object, attribute: str
) -> None:
    cls = type(slicer).__name__
    with pytest.raises(AttributeError) as caught:
        setattr(slicer, attribute, 1)
    assert str(caught.value) == f"{cls} is immutable; cannot set {attribute!r}"
    with pytest.raises(AttributeError) as caught:
        delattr(slicer, attribute)
    assert str(caught.value) == f"{cls} is immutable; cannot delete {attribute!r}"
