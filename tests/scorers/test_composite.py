"""CompositeScorer: weighted average, normalisation, entry validation, cycle detection."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from pycupel.errors import ScorerConfigError
from pycupel.model import ContextItem
from pycupel.scorers import (
    BaseScorer,
    CompositeScorer,
    FunctionScorer,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    RelevanceScorer,
    ScaledScorer,
    find_cycle,
)
from pycupel.scorers.base import SMALL_BATCH, FloatArray, Scorer


def make(content: str, month: int, priority: int, hint: float | None = None) -> ContextItem:
    return ContextItem(
        content,
        tokens=1,
        timestamp=datetime(2024, month, 1, tzinfo=UTC),
        priority=priority,
        future_relevance_hint=hint,
    )


def constant(value: float) -> FunctionScorer:
    return FunctionScorer(lambda item: value, name=f"const{value}")


ITEMS = [make("old-low", 1, 1), make("new-high", 12, 10), make("old-high", 1, 10)]


def test_weighted_average_of_children() -> None:
    scorer = CompositeScorer([(RecencyScorer(), 3.0), (PriorityScorer(), 1.0)])
    assert scorer.weights == (0.75, 0.25)
    assert scorer.score_all(ITEMS) == [0.0, 0.875, 0.125]


def test_weights_are_relative() -> None:
    a = CompositeScorer([(RecencyScorer(), 3.0), (PriorityScorer(), 1.0)])
    b = CompositeScorer([(RecencyScorer(), 0.75), (PriorityScorer(), 0.25)])
    assert a.weights == b.weights == (0.75, 0.25)
    assert a.score_all(ITEMS) == b.score_all(ITEMS)
    assert a.raw_weights == (3.0, 1.0)


def test_single_entry_delegates_with_weight_one() -> None:
    scorer = CompositeScorer([(PriorityScorer(), 7.0)])
    assert scorer.weights == (1.0,)
    assert scorer.score_all(ITEMS) == PriorityScorer().score_all(ITEMS)


def test_all_children_zero_gives_zero_and_all_one_gives_one() -> None:
    zeros = CompositeScorer([(constant(0.0), 1.0), (constant(0.0), 2.0)])
    ones = CompositeScorer([(constant(1.0), 1.0), (constant(1.0), 2.0), (constant(1.0), 4.0)])
    assert zeros.score_all(ITEMS) == [0.0, 0.0, 0.0]
    assert ones.score_all(ITEMS) == [1.0, 1.0, 1.0]


def test_nested_composite() -> None:
    items = [make("a", 1, 1, 0.8), make("b", 12, 5, 0.2)]
    inner = CompositeScorer([(RecencyScorer(), 1.0), (PriorityScorer(), 1.0)])
    outer = CompositeScorer([(inner, 1.0), (ReflexiveScorer(), 1.0)])
    assert outer.score_all(items) == [0.4, 0.6]
    assert outer.children() == (inner, outer.scorers[1])


def test_accumulates_in_entry_order() -> None:
    values = [0.1, 0.7, 0.3, 0.9]
    weights = [0.3, 1.7, 2.9, 0.01]
    scorer = CompositeScorer([(constant(v), w) for v, w in zip(values, weights, strict=True)])
    total = 0.0
    for w in weights:
        total += w
    expected = 0.0
    for v, w in zip(values, weights, strict=True):
        expected += v * (w / total)
    assert scorer.score_all(ITEMS[:1]) == [expected]
    assert scorer.score(ITEMS[0], ITEMS) == expected


def test_children_are_invoked_in_order() -> None:
    calls: list[str] = []

    class Recording(BaseScorer):
        def __init__(self, name: str) -> None:
            self.name = name

        def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
            calls.append(self.name)
            return ReflexiveScorer().score_array(items)

    CompositeScorer([(Recording("first"), 1.0), (Recording("second"), 1.0)]).score_all(ITEMS)
    assert calls == ["first", "second"]


def test_accepts_plain_functions_and_protocol_scorers() -> None:
    class ByLength:
        def score_all(self, items: Sequence[ContextItem]) -> list[float]:
            return [len(i.content) / 10 for i in items]

    def half(item: ContextItem) -> float:
        return 0.5

    scorer = CompositeScorer([(half, 1.0), (ByLength(), 1.0)])
    assert scorer.score_all(ITEMS) == [
        0.5 * 0.5 + 0.7 * 0.5,
        0.5 * 0.5 + 0.8 * 0.5,
        0.5 * 0.5 + 0.8 * 0.5,
    ]
    assert isinstance(scorer.scorers[0], FunctionScorer)
    # The per-item form works with protocol-only children, inside or outside the list.
    assert scorer.score(ITEMS[0], ITEMS) == 0.5 * 0.5 + 0.7 * 0.5
    assert scorer.score(make("abc", 1, 1), ITEMS) == 0.5 * 0.5 + 0.3 * 0.5


def test_per_item_score_uses_each_childs_spec_form() -> None:
    scorer = CompositeScorer([(RecencyScorer(), 1.0), (PriorityScorer(), 1.0)])
    outsider = make("mid", 6, 5)
    # recency of June among Jan, Dec, Jan: rank 2 of 3 -> 1.0; priority 5: rank 1 -> 0.5
    assert scorer.score(outsider, ITEMS) == 0.5 * 1.0 + 0.5 * 0.5
    for index, item in enumerate(ITEMS):
        assert scorer.score(item, ITEMS) == scorer.score_all(ITEMS)[index]


def test_empty_entries_are_rejected() -> None:
    with pytest.raises(ScorerConfigError, match="at least one scorer entry") as info:
        CompositeScorer([])
    assert info.value.field == "entries"


def test_entries_from_a_generator() -> None:
    scorer = CompositeScorer((s, 1.0) for s in [RecencyScorer(), PriorityScorer()])
    assert len(scorer.scorers) == 2


@pytest.mark.parametrize(
    ("weight", "rule"),
    [
        (0.0, "must be > 0"),
        (-1.0, "must be > 0"),
        (-0.0, "must be > 0"),
        (math.nan, "must be finite"),
        (math.inf, "must be finite"),
        (-math.inf, "must be finite"),
        (True, "must be a number"),
        ("1", "must be a number"),
        (None, "must be a number"),
    ],
)
def test_invalid_weight_is_rejected_naming_the_entry(weight: object, rule: str) -> None:
    with pytest.raises(ScorerConfigError) as info:
        CompositeScorer([(RecencyScorer(), 1.0), (PriorityScorer(), weight)])  # type: ignore[list-item]
    assert info.value.field == "entries[1].weight"
    assert rule in str(info.value)
    assert str(info.value).startswith("entries[1].weight: ")


def test_weight_sum_must_be_finite() -> None:
    with pytest.raises(ScorerConfigError, match="sum of weights must be finite"):
        CompositeScorer([(RecencyScorer(), 1e308), (PriorityScorer(), 1e308)])


@pytest.mark.parametrize("scorer", [None, 3, "recency"])
def test_invalid_child_is_rejected(scorer: object) -> None:
    with pytest.raises(ScorerConfigError) as info:
        CompositeScorer([(RecencyScorer(), 1.0), (scorer, 1.0)])  # type: ignore[list-item]
    assert info.value.field == "entries[1].scorer"


@pytest.mark.parametrize("entry", [RecencyScorer(), (RecencyScorer(),), (RecencyScorer(), 1, 2)])
def test_malformed_entry_is_rejected(entry: object) -> None:
    with pytest.raises(ScorerConfigError, match=r"must be a \(scorer, weight\) pair") as info:
        CompositeScorer([entry])  # type: ignore[list-item]
    assert info.value.field == "entries[0]"


def test_entries_must_be_iterable() -> None:
    with pytest.raises(ScorerConfigError, match="iterable"):
        CompositeScorer(RecencyScorer())  # type: ignore[arg-type]


# --------------------------------------------------------------------------- cycles


class Holder(BaseScorer):
    """A user scorer whose children can be wired after construction (to build cycles)."""

    def __init__(self) -> None:
        self.links: list[Scorer] = []

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        return ReflexiveScorer().score_array(items)

    def children(self) -> tuple[Scorer, ...]:
        return tuple(self.links)


def test_self_referential_child_is_a_cycle() -> None:
    loop = Holder()
    loop.links.append(loop)
    with pytest.raises(ScorerConfigError, match="must not form a cycle") as info:
        CompositeScorer([(loop, 1.0)])
    assert info.value.field == "entries"
    assert "Holder" in str(info.value)


def test_indirect_cycle_through_a_scaled_scorer() -> None:
    a, b = Holder(), Holder()
    a.links.append(ScaledScorer(b))
    b.links.append(a)
    with pytest.raises(ScorerConfigError, match="cycle"):
        CompositeScorer([(ReflexiveScorer(), 1.0), (a, 1.0)])


def test_cycle_back_to_an_existing_composite() -> None:
    holder = Holder()
    inner = CompositeScorer([(holder, 1.0)])
    holder.links.append(inner)  # now inner -> holder -> inner
    with pytest.raises(ScorerConfigError, match="cycle"):
        CompositeScorer([(inner, 1.0)])


def test_composite_listing_itself_is_a_cycle() -> None:
    class SelfListing(CompositeScorer):
        def __init__(self) -> None:
            super().__init__([(ReflexiveScorer(), 1.0), (self, 1.0)])

    with pytest.raises(ScorerConfigError, match="cycle"):
        SelfListing()


def test_shared_children_are_not_cycles() -> None:
    shared = RecencyScorer()
    left = CompositeScorer([(shared, 1.0)])
    right = ScaledScorer(CompositeScorer([(shared, 1.0), (left, 1.0)]))
    scorer = CompositeScorer([(left, 1.0), (right, 1.0), (shared, 1.0), (left, 2.0)])
    assert len(scorer.scorers) == 4


def test_identical_configurations_are_not_cycles() -> None:
    a = CompositeScorer([(RecencyScorer(), 1.0)])
    b = CompositeScorer([(RecencyScorer(), 1.0)])
    CompositeScorer([(a, 1.0), (b, 1.0)])


def test_find_cycle() -> None:
    assert find_cycle(RecencyScorer()) is None
    loop = Holder()
    loop.links.append(loop)
    assert find_cycle(loop) is loop
    chain = [Holder() for _ in range(5000)]  # deep graphs do not hit the recursion limit
    for parent, child in itertools.pairwise(chain):
        parent.links.append(child)
    assert find_cycle(chain[0]) is None
    chain[-1].links.append(chain[2000])
    assert find_cycle(chain[0]) is chain[2000]


def test_repr() -> None:
    scorer = CompositeScorer([(RecencyScorer(), 3.0), (ScaledScorer(PriorityScorer()), 1)])
    assert repr(scorer) == (
        "CompositeScorer([(RecencyScorer(), 3.0), (ScaledScorer(PriorityScorer()), 1.0)])"
    )


def test_find_cycle_names_the_node_that_closes_it() -> None:
    a, b = Holder(), Holder()
    a.links.append(b)
    b.links.append(a)
    assert find_cycle(a) is a
    assert find_cycle(b) is b
    # a child shared by two entries is passed over, and the search goes on to the cycle
    shared, loop = Holder(), Holder()
    loop.links.append(loop)
    root = Holder()
    root.links.extend([shared, shared, loop])
    assert find_cycle(root) is loop


# --------------------------------------------------------------------------- both forms, query


def by_tokens(item: ContextItem) -> float:
    return item.tokens / 100


ABSOLUTE = [(PriorityScorer(), 3.0), (ReflexiveScorer(), 1.0), (by_tokens, 4.0)]


def expected_average(items: list[ContextItem]) -> list[float]:
    """0.0 + s0*w0 + s1*w1 + s2*w2 with the normalised weights, item by item."""
    weights = [3.0 / 8, 1.0 / 8, 4.0 / 8]
    children = [
        PriorityScorer().score_all(items),
        ReflexiveScorer().score_all(items),
        [by_tokens(item) for item in items],
    ]
    result = [0.0] * len(items)
    for child, weight in zip(children, weights, strict=True):
        result = [total + score * weight for total, score in zip(result, child, strict=True)]
    return result


def test_the_array_and_list_forms_give_the_weighted_average() -> None:
    items = [
        ContextItem(f"i{n}", tokens=n, priority=n % 4, future_relevance_hint=(n % 5) / 4)
        for n in range(12)
    ]
    scorer = CompositeScorer(ABSOLUTE)
    expected = expected_average(items)
    assert scorer.score_all(items) == expected
    assert scorer.score_array(items).tolist() == expected
    assert scorer.score_array_for(items, "ignored").tolist() == expected


def test_a_large_batch_gives_the_same_weighted_average() -> None:
    items = [
        ContextItem(f"i{n}", tokens=n % 50, priority=n % 7, future_relevance_hint=(n % 3) / 2)
        for n in range(SMALL_BATCH + 5)
    ]
    assert CompositeScorer(ABSOLUTE).score_all(items) == expected_average(items)


class QueryLength:
    """A query-aware scorer outside pycupel: the query's length over 10."""

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return self.score_all_for(items, None)

    def score_all_for(self, items: Sequence[ContextItem], query: str | None) -> list[float]:
        return [len(query or "") / 10] * len(items)


def test_the_query_reaches_every_child_on_both_forms() -> None:
    items = [ContextItem(text, tokens=1) for text in ("apple pie", "pear tart", "apple")]
    relevance = RelevanceScorer()
    scorer = CompositeScorer([(relevance, 1.0), (QueryLength(), 1.0)])
    for query in ("apple", "pear tart"):
        direct = relevance.score_all_for(items, query)
        expected = [0.5 * score + 0.5 * len(query) / 10 for score in direct]
        assert scorer.score_all_for(items, query) == pytest.approx(expected, abs=1e-15)
        assert scorer.score_array_for(items, query).tolist() == pytest.approx(expected, abs=1e-15)
    assert scorer.score_all_for(items, "apple") != scorer.score_all_for(items, "pear tart")
    many = [ContextItem(f"x{n}", tokens=1) for n in range(SMALL_BATCH + 1)]
    assert CompositeScorer([(QueryLength(), 2.0)]).score_all_for(many, "four") == [0.4] * len(many)


# --------------------------------------------------------------------------- what errors carry


LONE = (PriorityScorer(),)  # an entry without its weight


def test_construction_errors_carry_field_value_and_rule() -> None:
    def two(item: ContextItem, other: ContextItem) -> float:
        return 0.0

    cases: list[tuple[object, str, object, str]] = [
        (42, "entries", 42, "must be an iterable of (scorer, weight)"),
        ("ab", "entries", "ab", "must be an iterable of (scorer, weight)"),
        ([LONE], "entries[0]", LONE, "must be a (scorer, weight) pair"),
        ([], "entries", [], "must contain at least one scorer entry"),
        (
            [(PriorityScorer(), 1e308), (ReflexiveScorer(), 1e308)],
            "entries",
            [1e308, 1e308],
            "the sum of weights must be finite",
        ),
        ([(None, 1.0)], "entries[0].scorer", None, "must be a scorer, not None"),
        (
            [(42, 1.0)],
            "entries[0].scorer",
            42,
            "must have a score_all(items) method or be a function item -> float",
        ),
    ]
    for entries, field, value, rule in cases:
        with pytest.raises(ScorerConfigError) as info:
            CompositeScorer(entries)  # type: ignore[arg-type]
        assert (info.value.field, info.value.value, info.value.rule) == (field, value, rule)
    with pytest.raises(ScorerConfigError) as info:
        CompositeScorer([(two, 1.0)])
    assert (info.value.field, info.value.value) == ("entries[0].scorer", two)
    assert info.value.rule.startswith("must be a function taking one positional argument")


def test_a_cycle_is_named_by_its_node_without_its_repr() -> None:
    loop = Holder()
    loop.links.append(loop)
    with pytest.raises(ScorerConfigError) as info:
        CompositeScorer([(loop, 1.0)])
    assert (info.value.field, info.value.value, info.value.rule) == (
        "entries",
        f"<Holder object at {id(loop):#x}>",
        "must not form a cycle: a scorer appears in its own dependency graph",
    )
