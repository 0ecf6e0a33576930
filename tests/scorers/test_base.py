"""The scorer contract (``pycupel.scorers.base``): the per-item and batch forms, custom
scorers' output checks, function scorers, the query hand-off and the nesting measure."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
import pytest

from pycupel.errors import NonFiniteScoreError, ScorerConfigError
from pycupel.model import ContextItem
from pycupel.scorers import BaseScorer, FunctionScorer, ItemScorer, KindScorer, as_scorer
from pycupel.scorers.base import (
    MAX_SCORER_NESTING,
    FloatArray,
    check_finite_scores,
    check_nesting,
    is_builtin,
    nesting_depth,
    score_array,
    score_array_for,
)

ITEMS = [ContextItem(f"c{n}", tokens=n + 1) for n in range(3)]


class TokenShare(BaseScorer):
    """A relative scorer: an item's share of the list's tokens."""

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        tokens = np.array([item.tokens for item in items], dtype=np.float64)
        result: FloatArray = tokens / tokens.sum()
        return result


class QueryLength(BaseScorer):
    """A query-aware BaseScorer subclass: the query's length, or -1 without one."""

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        return self.score_array_for(items, None)

    def score_array_for(self, items: Sequence[ContextItem], query: str | None) -> FloatArray:
        return np.full(len(items), -1.0 if query is None else float(len(query)))


class Returns:
    """A custom scorer (no pycupel base class) returning whatever it was given."""

    def __init__(self, value: object) -> None:
        self.value = value

    def score_all(self, items: Sequence[ContextItem]) -> object:
        return self.value


# --------------------------------------------------------------------------- the two forms


def test_the_per_item_form_scores_an_item_among_the_list() -> None:
    scorer = TokenShare()
    # a list member is scored within the list as given (found by identity)
    assert scorer.score(ITEMS[1], ITEMS) == 2 / 6
    twin = ContextItem("c1", tokens=2)
    # an item not in the list is scored as if appended to it
    assert scorer.score(twin, ITEMS) == 2 / 8
    assert scorer.score(ITEMS[0], []) == 1.0


def test_an_item_scorer_gives_float64_arrays_and_lists_alike() -> None:
    class Tokens(ItemScorer):
        def score_item(self, item: ContextItem) -> float:
            return item.tokens / 10

    array = Tokens().score_array(ITEMS)
    assert array.dtype == np.float64
    assert array.tolist() == Tokens().score_all(ITEMS) == [0.1, 0.2, 0.3]
    assert Tokens().score(ITEMS[2], []) == 0.3


def test_the_query_reaches_a_base_scorer_subclass_on_both_forms() -> None:
    scorer = QueryLength()
    assert scorer.score_all_for(ITEMS, "four") == [4.0, 4.0, 4.0]
    assert scorer.score_all_for(ITEMS, None) == [-1.0, -1.0, -1.0]
    assert score_array_for(scorer, ITEMS, "ab").tolist() == [2.0, 2.0, 2.0]


def test_the_query_reaches_a_custom_query_aware_scorer() -> None:
    class Echo:
        def score_all(self, items: Sequence[ContextItem]) -> list[float]:
            return [0.0] * len(items)

        def score_all_for(self, items: Sequence[ContextItem], query: str | None) -> list[float]:
            return [float(len(query or "")) + item.tokens for item in items]

    class OneShort(Echo):
        def score_all_for(self, items: Sequence[ContextItem], query: str | None) -> list[float]:
            return super().score_all_for(items, query)[1:]

    assert score_array_for(Echo(), ITEMS, "xyz").tolist() == [4.0, 5.0, 6.0]
    with pytest.raises(ScorerConfigError) as info:
        score_array_for(OneShort(), ITEMS, "xyz")
    assert (info.value.field, info.value.value) == ("OneShort.score_all", "2 scores")
    assert score_array_for(Returns([1, 2, 3]), ITEMS, "xyz").tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ScorerConfigError) as info:
        score_array_for(Returns([1.0]), ITEMS, "xyz")
    assert info.value.rule == "must return exactly one score per item (3)"


# --------------------------------------------------------------------------- custom output


def test_custom_scores_become_float64_arrays() -> None:
    class Tokens:
        def score_all(self, items: Sequence[ContextItem]) -> list[int]:
            return [item.tokens for item in items]

    assert score_array(Tokens(), ITEMS).tolist() == [1.0, 2.0, 3.0]
    assert score_array(Returns([1, 2.5, 3]), ITEMS).tolist() == [1.0, 2.5, 3.0]
    ints = score_array(Returns(np.array([1, 2, 3])), ITEMS)
    assert ints.dtype == np.float64
    assert ints.tolist() == [1.0, 2.0, 3.0]
    assert score_array(Returns((0.5, 0.25, 0.0)), ITEMS).tolist() == [0.5, 0.25, 0.0]


@pytest.mark.parametrize("raw", [None, "0.5", b"1", 0.5, {0.1, 0.2, 0.3}])
def test_a_custom_scorer_must_return_a_sequence(raw: object) -> None:
    with pytest.raises(ScorerConfigError) as info:
        score_array(Returns(raw), ITEMS)
    assert (info.value.field, info.value.value, info.value.rule) == (
        "Returns.score_all",
        raw,
        "must return a sequence of numbers",
    )


def test_a_custom_scorer_returning_booleans_is_refused() -> None:
    for raw in (np.array([True, False, True]), [True, False, True]):
        with pytest.raises(ScorerConfigError) as info:
            score_array(Returns(raw), ITEMS)
        assert info.value.field == "Returns.score_all(items)[0]"


def test_a_wrong_number_of_custom_scores_names_the_scorer_and_counts() -> None:
    with pytest.raises(ScorerConfigError) as info:
        score_array(Returns([0.5, 0.5]), ITEMS)
    assert (info.value.field, info.value.value, info.value.rule) == (
        "Returns.score_all",
        "2 scores",
        "must return exactly one score per item (3)",
    )


def test_non_finite_scores_name_the_first_offender() -> None:
    scores = np.array([0.5, math.inf, math.nan])
    with pytest.raises(NonFiniteScoreError) as info:
        check_finite_scores(KindScorer(), ITEMS, scores)
    error = info.value
    assert (error.scorer, error.index, error.score, error.content) == (
        "KindScorer",
        1,
        math.inf,
        "c1",
    )
    check_finite_scores(KindScorer(), ITEMS, np.array([0.0, -1e308, 1e308]))


# --------------------------------------------------------------------------- function scorers


def by_tokens(item: ContextItem) -> float:
    return float(item.tokens)


def test_a_function_scorer_scores_each_item_and_is_named_after_the_function() -> None:
    scorer = FunctionScorer(by_tokens)
    assert scorer.score_all(ITEMS) == [1.0, 2.0, 3.0]
    assert scorer.name == "by_tokens"
    assert repr(scorer) == "FunctionScorer(by_tokens)"
    assert FunctionScorer(by_tokens, name="size").name == "size"
    # a callable without __name__
    unnamed = FunctionScorer(functools.partial(lambda item, scale: item.tokens * scale, scale=2))
    assert unnamed.name == "function"
    assert unnamed.score_all(ITEMS) == [2.0, 4.0, 6.0]


def test_a_function_score_out_of_float_range_names_the_function() -> None:
    scorer = FunctionScorer(lambda item: 10**400, name="huge")
    with pytest.raises(ScorerConfigError) as info:
        scorer.score_all(ITEMS)
    assert (info.value.field, info.value.value, info.value.rule) == (
        "FunctionScorer(huge)(item)",
        10**400,
        "must be a real number within the float64 range (about ±1.8e308)",
    )


def two_arguments(item: ContextItem, other: ContextItem) -> float:
    return 0.0


@pytest.mark.parametrize(
    ("function", "rule"),
    [
        (
            KindScorer,
            "must be a scorer or a function, not a class: pass an instance such as KindScorer(...)",
        ),
        (42, "must be callable"),
        (
            two_arguments,
            "must be a function taking one positional argument (the item); its signature is "
            "(item: 'ContextItem', other: 'ContextItem') -> 'float'",
        ),
    ],
)
def test_function_scorer_errors_name_the_function_and_the_rule(function: object, rule: str) -> None:
    with pytest.raises(ScorerConfigError) as info:
        FunctionScorer(function)  # type: ignore[arg-type]
    assert (info.value.field, info.value.value, info.value.rule) == ("function", function, rule)


def test_as_scorer_names_the_scorer_argument() -> None:
    assert as_scorer(by_tokens).score_all(ITEMS) == [1.0, 2.0, 3.0]
    with pytest.raises(ScorerConfigError) as info:
        as_scorer(42)  # type: ignore[arg-type]
    assert (info.value.field, info.value.value, info.value.rule) == (
        "scorer",
        42,
        "must have a score_all(items) method or be a function item -> float",
    )
    with pytest.raises(ScorerConfigError) as info:
        as_scorer(two_arguments)  # type: ignore[arg-type]
    assert (info.value.field, info.value.value) == ("scorer", two_arguments)
    assert info.value.rule.startswith("must be a function taking one positional argument")


def test_only_pycupels_own_scorer_classes_are_built_in() -> None:
    assert is_builtin(KindScorer())
    assert is_builtin(FunctionScorer(by_tokens))
    assert not is_builtin(TokenShare())
    assert not is_builtin(Returns([0.0]))
    assert not is_builtin(KindScorer)


# --------------------------------------------------------------------------- nesting depth


class Node:
    """A custom combinator: any object with ``children()``."""

    def __init__(self, *children: object) -> None:
        self.kids = list(children)

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return [0.0] * len(items)

    def children(self) -> list[object]:
        return self.kids


def test_nesting_depth_of_custom_graphs() -> None:
    leaf = Returns([0.0])
    assert nesting_depth(leaf) == 0
    assert nesting_depth(Node(leaf, Node(leaf))) == 2
    shared = Node(leaf)
    assert nesting_depth(Node(shared, Node(shared))) == 3


def test_a_node_met_again_on_its_own_path_counts_zero() -> None:
    loop = Node()
    loop.kids.append(loop)
    assert nesting_depth(loop) == 1
    outer = Node(loop)
    assert nesting_depth(outer) == 2


def test_children_that_are_not_a_method_returning_a_list_count_as_none() -> None:
    class DataChildren:
        children = ("not", "a", "method")

    class OddChildren(Node):
        def children(self) -> None:  # type: ignore[override]
            return None

    assert nesting_depth(DataChildren()) == 0
    assert nesting_depth(OddChildren()) == 0
    assert nesting_depth(Node) == 0


def test_nesting_past_the_bound_names_the_depth_found() -> None:
    chain: object = Returns([0.0])
    for _ in range(MAX_SCORER_NESTING - 1):
        chain = Node(chain)
    check_nesting("inner", chain)  # one more level makes exactly the bound
    deeper = Node(chain)
    with pytest.raises(ScorerConfigError) as info:
        check_nesting("inner", deeper)
    assert (info.value.field, info.value.value, info.value.rule) == (
        "inner",
        f"<Node nesting {MAX_SCORER_NESTING} levels>",
        f"must leave the scorer at most {MAX_SCORER_NESTING} combinator levels deep "
        f"(this would make {MAX_SCORER_NESTING + 1})",
    )
