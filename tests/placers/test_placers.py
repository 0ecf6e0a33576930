"""ChronologicalPlacer and UShapedPlacer: every edge-case row of the spec, plus properties."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pycupel.errors import PlacerConfigError, PlacerInputError
from pycupel.model import ContextItem, ScoredItem
from pycupel.placers import ChronologicalPlacer, Placer, SystemFirstPlacer, UShapedPlacer

BASE = datetime(2024, 1, 1, tzinfo=UTC)


def item(content: str, *, at: datetime | None = None, tokens: int = 10) -> ContextItem:
    return ContextItem(content, tokens=tokens, timestamp=at)


def scored(content: str, score: float = 0.5, *, at: datetime | None = None) -> ScoredItem:
    return ScoredItem(item(content, at=at), score)


def contents(items: list[ContextItem]) -> list[str]:
    return [i.content for i in items]


# --------------------------------------------------------------------------- protocol


@pytest.mark.parametrize("placer", [ChronologicalPlacer(), UShapedPlacer()], ids=repr)
def test_placers_satisfy_the_protocol(placer: Placer) -> None:
    assert isinstance(placer, Placer)


def test_placers_are_stateless_value_objects() -> None:
    assert ChronologicalPlacer() == ChronologicalPlacer()
    assert UShapedPlacer() == UShapedPlacer()
    assert ChronologicalPlacer() != UShapedPlacer()
    assert hash(ChronologicalPlacer()) == hash(ChronologicalPlacer())
    assert repr(UShapedPlacer()) == "UShapedPlacer()"
    with pytest.raises(AttributeError):
        ChronologicalPlacer().state = 1  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- chronological


class TestChronologicalEdgeCases:
    placer = ChronologicalPlacer()

    def test_empty_input(self) -> None:
        assert self.placer.place([]) == []

    def test_single_item_returned_as_is(self) -> None:
        only = scored("only", at=BASE)
        assert self.placer.place([only]) == [only.item]
        undated = scored("undated")
        assert self.placer.place([undated]) == [undated.item]

    def test_all_timestamped_sorted_ascending(self) -> None:
        items = [scored(n, at=BASE + timedelta(days=d)) for n, d in [("c", 3), ("a", 1), ("b", 2)]]
        assert contents(self.placer.place(items)) == ["a", "b", "c"]

    def test_no_timestamps_keeps_input_order(self) -> None:
        items = [scored(n) for n in "dbca"]
        assert contents(self.placer.place(items)) == list("dbca")

    def test_mixed_timestamped_first_then_undated_in_input_order(self) -> None:
        items = [
            scored("u1"),
            scored("late", at=BASE + timedelta(hours=2)),
            scored("u2"),
            scored("early", at=BASE),
            scored("u3"),
        ]
        assert contents(self.placer.place(items)) == ["early", "late", "u1", "u2", "u3"]

    def test_same_timestamp_keeps_input_order(self) -> None:
        items = [scored(n, at=BASE) for n in "zyx"]
        assert contents(self.placer.place(items)) == list("zyx")

    def test_compares_instants_not_local_clock_times(self) -> None:
        plus_five = timezone(timedelta(hours=5))
        # 10:00+05:00 is 05:00Z, earlier than 06:00Z although its wall-clock reads later.
        items = [
            scored("six-utc", at=datetime(2024, 1, 1, 6, tzinfo=UTC)),
            scored("ten-plus-five", at=datetime(2024, 1, 1, 10, tzinfo=plus_five)),
        ]
        assert contents(self.placer.place(items)) == ["ten-plus-five", "six-utc"]

    def test_equal_instants_in_different_zones_tie_by_index(self) -> None:
        plus_two = timezone(timedelta(hours=2))
        items = [
            scored("second-zone", at=datetime(2024, 1, 1, 2, tzinfo=plus_two)),
            scored("utc", at=datetime(2024, 1, 1, 0, tzinfo=UTC)),
        ]
        assert contents(self.placer.place(items)) == ["second-zone", "utc"]

    def test_scores_do_not_influence_order(self) -> None:
        items = [
            scored("new-best", 1.0, at=BASE + timedelta(days=1)),
            scored("old-worst", 0.0, at=BASE),
        ]
        assert contents(self.placer.place(items)) == ["old-worst", "new-best"]

    def test_microsecond_resolution(self) -> None:
        items = [
            scored("later", at=BASE + timedelta(microseconds=1)),
            scored("earlier", at=BASE),
        ]
        assert contents(self.placer.place(items)) == ["earlier", "later"]


# --------------------------------------------------------------------------- U-shaped


class TestUShapedEdgeCases:
    placer = UShapedPlacer()

    def test_empty_input(self) -> None:
        assert self.placer.place([]) == []

    def test_single_item_returned_as_is(self) -> None:
        only = scored("only", 0.1)
        assert self.placer.place([only]) == [only.item]

    def test_two_items_higher_first(self) -> None:
        items = [scored("low", 0.2), scored("high", 0.9)]
        assert contents(self.placer.place(items)) == ["high", "low"]

    def test_equal_scores_alternate_in_input_order(self) -> None:
        items = [scored(n, 0.5) for n in "XYZW"]
        # Ranks follow input order: X->0 (left), Y->1 (right), Z->2 (left), W->3 (right).
        assert contents(self.placer.place(items)) == ["X", "Z", "W", "Y"]

    def test_spec_seven_item_example(self) -> None:
        scores = {"A": 0.9, "B": 0.8, "C": 0.7, "D": 0.6, "E": 0.5, "F": 0.4, "G": 0.3}
        shuffled = ["D", "G", "A", "F", "B", "E", "C"]
        items = [scored(n, scores[n]) for n in shuffled]
        assert contents(self.placer.place(items)) == ["A", "C", "E", "G", "F", "D", "B"]

    def test_pinned_score_one_lands_on_the_edges(self) -> None:
        # Pinned items arrive first with score 1.0; a sliced item tying at 1.0 ranks after them.
        items = [
            scored("pinned-a", 1.0),
            scored("pinned-b", 1.0),
            scored("sliced-top", 1.0),
            scored("sliced-mid", 0.5),
            scored("sliced-low", 0.0),
        ]
        assert contents(self.placer.place(items)) == [
            "pinned-a",
            "sliced-top",
            "sliced-low",
            "sliced-mid",
            "pinned-b",
        ]

    def test_scores_outside_unit_range(self) -> None:
        items = [scored("neg", -2.0), scored("big", 7.5), scored("mid", 0.5)]
        assert contents(self.placer.place(items)) == ["big", "neg", "mid"]

    def test_timestamps_do_not_influence_order(self) -> None:
        items = [scored("old-high", 0.9, at=BASE), scored("new-low", 0.1, at=BASE + timedelta(1))]
        assert contents(self.placer.place(items)) == ["old-high", "new-low"]


# --------------------------------------------------------------------------- immutability


@pytest.mark.parametrize("placer", [ChronologicalPlacer(), UShapedPlacer()], ids=repr)
def test_input_sequence_is_not_mutated(placer: Placer) -> None:
    items = [scored("b", 0.1, at=BASE + timedelta(1)), scored("a", 0.9, at=BASE)]
    snapshot = list(items)
    result = placer.place(items)
    assert items == snapshot
    assert result is not items
    result.clear()
    assert items == snapshot


@pytest.mark.parametrize("placer", [ChronologicalPlacer(), UShapedPlacer()], ids=repr)
def test_accepts_tuples_and_returns_a_list(placer: Placer) -> None:
    items = (scored("a"), scored("b"))
    assert isinstance(placer.place(items), list)


# --------------------------------------------------------------------------- properties

timestamps = st.one_of(
    st.none(),
    st.datetimes(
        min_value=datetime(1990, 1, 1),
        max_value=datetime(2040, 1, 1),
        timezones=st.sampled_from(
            [UTC, timezone(timedelta(hours=-7)), timezone(timedelta(hours=9))]
        ),
    ),
)
# Few distinct values, so ties are common.
scores_strategy = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.floats(-10, 10, allow_nan=False)
)
entries = st.lists(st.tuples(timestamps, scores_strategy), max_size=40)


def build(entries_: list[tuple[datetime | None, float]]) -> list[ScoredItem]:
    return [
        ScoredItem(ContextItem(f"item-{i}", tokens=1, timestamp=at), score)
        for i, (at, score) in enumerate(entries_)
    ]


def same_identities(a: list[ContextItem], b: list[ContextItem]) -> bool:
    return sorted(map(id, a)) == sorted(map(id, b))


@given(entries)
def test_chronological_is_an_identity_permutation(
    data: list[tuple[datetime | None, float]],
) -> None:
    items = build(data)
    placed = ChronologicalPlacer().place(items)
    assert len(placed) == len(items)
    assert same_identities(placed, [s.item for s in items])


@given(entries)
def test_chronological_is_deterministic(data: list[tuple[datetime | None, float]]) -> None:
    items = build(data)
    first = ChronologicalPlacer().place(items)
    second = ChronologicalPlacer().place(list(items))
    assert [id(i) for i in first] == [id(i) for i in second]


@given(entries)
def test_chronological_order_property(data: list[tuple[datetime | None, float]]) -> None:
    items = build(data)
    index = {id(s.item): i for i, s in enumerate(items)}
    placed = ChronologicalPlacer().place(items)
    dated = [i for i in placed if i.timestamp is not None]
    undated = [i for i in placed if i.timestamp is None]
    # Every dated item precedes every undated one.
    assert placed == dated + undated
    # Dated: ascending instant, ascending input index among equal instants.
    keys = [(i.timestamp, index[id(i)]) for i in dated]
    assert keys == sorted(keys)
    # Undated: input order.
    assert [index[id(i)] for i in undated] == sorted(index[id(i)] for i in undated)


@given(entries)
def test_u_shaped_is_an_identity_permutation(data: list[tuple[datetime | None, float]]) -> None:
    items = build(data)
    placed = UShapedPlacer().place(items)
    assert len(placed) == len(items)
    assert same_identities(placed, [s.item for s in items])


@given(entries)
def test_u_shaped_is_deterministic(data: list[tuple[datetime | None, float]]) -> None:
    items = build(data)
    first = UShapedPlacer().place(items)
    second = UShapedPlacer().place(list(items))
    assert [id(i) for i in first] == [id(i) for i in second]


@given(entries)
def test_u_shape_property(data: list[tuple[datetime | None, float]]) -> None:
    items = build(data)
    score = {id(s.item): s.score for s in items}
    index = {id(s.item): i for i, s in enumerate(items)}
    placed = UShapedPlacer().place(items)
    n = len(placed)
    if n == 0:
        return
    # Ranking key: score descending, input index ascending (smaller key = better rank).
    rank_key = [(-score[id(i)], index[id(i)]) for i in placed]
    split = (n + 1) // 2
    left, right = rank_key[:split], rank_key[split:]
    # Ranks get worse walking from either edge towards the middle...
    assert left == sorted(left)
    assert right == sorted(right, reverse=True)
    # ...the left edge holds rank 0, the right edge rank 1, and the left half the even ranks.
    ranked = sorted(rank_key)
    assert rank_key[0] == ranked[0]
    if n > 1:
        assert rank_key[-1] == ranked[1]
    assert left == ranked[0::2]
    # As a score profile it is a "U": non-increasing down to the minimum, non-decreasing after.
    profile = [-k[0] for k in rank_key]
    valley = profile.index(min(profile))
    assert all(a >= b for a, b in pairwise(profile[: valley + 1]))
    assert all(a <= b for a, b in pairwise(profile[valley:]))


def test_large_input_is_ordered_correctly() -> None:
    # 100k items with many timestamp and score ties: the key-based sorts must stay exact.
    items = [
        ScoredItem(
            ContextItem(f"i{i}", tokens=1, timestamp=BASE + timedelta(seconds=(i * 7919) % 50_000)),
            (i * 31 % 97) / 97,
        )
        for i in range(100_000)
    ]
    index = {id(s.item): i for i, s in enumerate(items)}
    chrono = ChronologicalPlacer().place(items)
    keys = [(i.timestamp, index[id(i)]) for i in chrono]
    assert keys == sorted(keys)
    ushaped = UShapedPlacer().place(items)
    score = {id(s.item): s.score for s in items}
    assert score[id(ushaped[0])] == score[id(ushaped[-1])] == 96 / 97
    assert same_identities(ushaped, [s.item for s in items])


def test_reprs_name_the_placers_exactly() -> None:
    assert repr(ChronologicalPlacer()) == "ChronologicalPlacer()"
    assert repr(UShapedPlacer()) == "UShapedPlacer()"


def test_placers_of_one_class_hash_alike_and_differ_from_the_other() -> None:
    assert hash(ChronologicalPlacer()) == hash(ChronologicalPlacer())
    assert hash(UShapedPlacer()) == hash(UShapedPlacer())
    assert hash(ChronologicalPlacer()) != hash(None)
    assert hash(UShapedPlacer()) != hash(None)
    assert len({ChronologicalPlacer(), UShapedPlacer(), ChronologicalPlacer()}) == 2


def test_u_shaped_ranks_nan_below_every_number_but_keeps_the_others() -> None:
    # Scores 0.9, NaN, 0.1, 0.5: ranked a, d, c, then b (NaN last, tied with -inf).
    entries = [scored("a", 0.9), scored("b", float("nan")), scored("c", 0.1), scored("d", 0.5)]
    # rank 0 a -> left, rank 1 d -> right, rank 2 c -> left, rank 3 b -> right (inner).
    assert contents(UShapedPlacer().place(entries)) == ["a", "c", "b", "d"]
    with_inf = [scored("x", float("-inf")), scored("y", float("nan")), scored("z", 0.2)]
    # -inf and NaN tie; the earlier index (x) ranks first among them.
    assert contents(UShapedPlacer().place(with_inf)) == ["z", "y", "x"]


# --------------------------------------------------------------------------- bad input


ALL_PLACERS = [ChronologicalPlacer(), UShapedPlacer(), SystemFirstPlacer(UShapedPlacer())]


@pytest.mark.parametrize("placer", ALL_PLACERS, ids=repr)
@pytest.mark.parametrize(
    ("given", "field", "rule"),
    [
        (None, "items", "must be a sequence of ScoredItem"),
        ("ab", "items", "must be a sequence of ScoredItem"),
        (5, "items", "must be a sequence of ScoredItem"),
        ([scored("a"), item("b")], "items[1]", "must be a ScoredItem(item, score)"),
        ([ScoredItem("text", 0.5)], "items[0].item", "must be a ContextItem"),  # type: ignore[arg-type]
        (
            [scored("a"), scored("b"), scored("c"), ScoredItem(item("d"), "0.9")],  # type: ignore[arg-type]
            "items[3].score",
            "must be a real number",
        ),
        ([ScoredItem(item("a"), True)], "items[0].score", "must be a real number"),
        ([ScoredItem(item("a"), None)], "items[0].score", "must be a real number"),  # type: ignore[arg-type]
        ([ScoredItem(item("a"), 10**400)], "items[0].score", "within the float64 range"),
    ],
)
def test_place_names_bad_input(placer: Placer, given: object, field: str, rule: str) -> None:
    with pytest.raises(PlacerInputError) as info:
        placer.place(given)  # type: ignore[arg-type]
    assert info.value.field == field
    assert rule in info.value.rule
    if field == "items":
        assert info.value.value is given


@pytest.mark.parametrize("placer", ALL_PLACERS, ids=repr)
def test_place_takes_every_real_score_and_any_sequence(placer: Placer) -> None:
    entries = (ScoredItem(item("a"), 1), ScoredItem(item("b"), 0.5), ScoredItem(item("c"), -2.5))
    assert sorted(contents(placer.place(entries))) == ["a", "b", "c"]
    assert contents(placer.place(list(entries))) == contents(placer.place(entries))
    assert placer.place([]) == []


def test_a_placer_class_is_refused_where_an_instance_is_needed() -> None:
    with pytest.raises(PlacerConfigError, match=r"not a class: write UShapedPlacer\(\)"):
        SystemFirstPlacer(UShapedPlacer)  # type: ignore[arg-type]
