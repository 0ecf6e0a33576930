"""FrequencyScorer: edge-case rows, identity-based self-exclusion, ASCII case folding,
and the large-tag-set paths."""

from __future__ import annotations

import random
import string

import numpy as np
import pytest

from pycupel.model import ContextItem
from pycupel.scorers import FrequencyScorer, frequency
from pycupel.scorers.base import SMALL_BATCH


def tagged(*tags: str, content: str = "x") -> ContextItem:
    return ContextItem(content, tokens=1, tags=tags)


def test_proportion_of_tag_sharing_peers() -> None:
    a, b, c, d = tagged("web", "api"), tagged("web"), tagged("api", "db"), tagged("cli")
    assert FrequencyScorer().score_all([a, b, c, d]) == [2 / 3, 1 / 3, 1 / 3, 0.0]


def test_item_without_tags_scores_zero() -> None:
    assert FrequencyScorer().score_all([tagged(), tagged("a"), tagged("a")]) == [0.0, 0.5, 0.5]


def test_single_item_scores_zero() -> None:
    assert FrequencyScorer().score_all([tagged("a")]) == [0.0]


def test_empty_list() -> None:
    assert FrequencyScorer().score_all([]) == []


def test_no_peer_shares_a_tag() -> None:
    assert FrequencyScorer().score_all([tagged("a"), tagged("b"), tagged("c")]) == [0.0] * 3


def test_all_peers_share_a_tag() -> None:
    items = [tagged("a", "b"), tagged("b"), tagged("a", "c"), tagged("c", "a")]
    assert FrequencyScorer().score_all(items)[0] == 1.0


def test_tagless_peer_does_not_match_but_stays_in_the_denominator() -> None:
    # The denominator is len(all_items) - 1 (2, then 3), tagless peers included.
    assert FrequencyScorer().score_all([tagged("a"), tagged("a"), tagged()])[0] == 0.5
    assert FrequencyScorer().score_all([tagged("a"), tagged("a"), tagged(), tagged()]) == [
        1 / 3,
        1 / 3,
        0.0,
        0.0,
    ]


def test_tags_compare_with_ascii_case_folding() -> None:
    items = [tagged("Important"), tagged("important"), tagged("IMPORTANT")]
    assert FrequencyScorer().score_all(items) == [1.0, 1.0, 1.0]


def test_non_ascii_letters_are_not_folded() -> None:
    # ASCII folding only: "É" and "é" are different tags; "Straße" matches "STRAßE".
    items = [tagged("É"), tagged("é"), tagged("Straße"), tagged("STRAßE")]
    assert FrequencyScorer().score_all(items) == [0.0, 0.0, 1 / 3, 1 / 3]


def test_duplicate_and_case_variant_tags_on_one_item_count_once() -> None:
    items = [tagged("a", "A", "a"), tagged("a"), tagged("b")]
    assert FrequencyScorer().score_all(items) == [0.5, 0.5, 0.0]


def test_empty_string_is_a_tag() -> None:
    assert FrequencyScorer().score_all([tagged(""), tagged(""), tagged("a")]) == [0.5, 0.5, 0.0]


def test_equal_but_distinct_items_are_peers() -> None:
    first = tagged("a", content="same")
    second = tagged("a", content="same")
    assert FrequencyScorer().score_all([first, second]) == [1.0, 1.0]


def test_every_occurrence_of_the_same_object_is_self() -> None:
    a = tagged("a", content="a")
    b = tagged("a", content="b")
    # a appears twice: scoring a skips both occurrences -> only b matches, over 3.
    # b is matched by both occurrences of a.
    assert FrequencyScorer().score_all([a, b, a, tagged("z")]) == [1 / 3, 2 / 3, 1 / 3, 0.0]
    # A list made only of one object: nobody else matches.
    assert FrequencyScorer().score_all([a, a, a]) == [0.0, 0.0, 0.0]


def test_per_item_score_for_an_item_outside_the_list() -> None:
    items = [tagged("a"), tagged("B"), tagged("c")]
    scorer = FrequencyScorer()
    assert scorer.score(tagged("b", "A"), items) == 1.0
    assert scorer.score(tagged("q"), items) == 0.0
    assert scorer.score(tagged(), items) == 0.0
    assert scorer.score(tagged("a"), [items[0]]) == 0.0
    assert scorer.score(items[0], items) == 0.0


def test_items_with_many_tags() -> None:
    wide = tagged(*(f"t{i}" for i in range(20)))
    wider = tagged(*(f"T{i}" for i in range(15, 40)))
    narrow = tagged("t3")
    other = tagged("u", "v")
    none = tagged()
    items = [wide, wider, narrow, other, none]
    assert FrequencyScorer().score_all(items) == [0.5, 0.25, 0.25, 0.0, 0.0]


def test_many_items_share_one_tag() -> None:
    items = [tagged("common", f"own{i}") for i in range(200)] + [tagged("alone")]
    scores = FrequencyScorer().score_all(items)
    assert scores[:200] == [199 / 200] * 200
    assert scores[200] == 0.0


def test_repr() -> None:
    assert repr(FrequencyScorer()) == "FrequencyScorer()"


# --------------------------------------------------------------------------- every path alike


def literal(items: list[ContextItem]) -> list[float]:
    """The specification's loop: peers (not the same object) sharing a folded tag."""
    if len(items) <= 1:
        return [0.0] * len(items)
    scores = []
    for item in items:
        mine = {tag.translate(FOLD) for tag in item.tags}
        peers = sum(
            1
            for other in items
            if other is not item and mine & {tag.translate(FOLD) for tag in other.tags}
        )
        scores.append(peers / (len(items) - 1))
    return scores


FOLD = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
VOCABULARY = ["a", "A", "b", "B", "c", "é", "É", "", "long-tag", *(f"t{n}" for n in range(12))]


def random_lists() -> list[list[ContextItem]]:
    rng = random.Random(19)
    lists = []
    for size in [*range(2, 12), 25, 40]:
        items = [
            tagged(*rng.choices(VOCABULARY, k=rng.choice([0, 1, 2, 3, 5, 9, 12])))
            for _ in range(size)
        ]
        if size % 3 == 0:
            items.append(items[0])  # the same object twice: both occurrences are "self"
        lists.append(items)
    return lists


@pytest.mark.parametrize(
    ("subset_limit", "pair_limit", "packed_limit"),
    [
        (frequency.SUBSET_TAG_LIMIT, frequency.PAIR_LIMIT, frequency.PACKED_KEY_LIMIT),
        (0, frequency.PAIR_LIMIT, frequency.PACKED_KEY_LIMIT),  # every set "large": pairs
        (2, 0, frequency.PACKED_KEY_LIMIT),  # sets over two tags: bitsets
        (3, 3, 0),  # a few pairs, then bitsets; pairs sorted lexicographically
    ],
)
def test_the_array_and_list_forms_match_the_literal_loop(
    monkeypatch: pytest.MonkeyPatch, subset_limit: int, pair_limit: int, packed_limit: int
) -> None:
    monkeypatch.setattr(frequency, "SUBSET_TAG_LIMIT", subset_limit)
    monkeypatch.setattr(frequency, "PAIR_LIMIT", pair_limit)
    monkeypatch.setattr(frequency, "PACKED_KEY_LIMIT", packed_limit)
    scorer = FrequencyScorer()
    for items in random_lists():
        expected = literal(items)
        assert scorer.score_array(items).tolist() == expected
        assert scorer.score_all(items) == expected
        assert [scorer.score(item, items) for item in items] == expected


def test_a_large_batch_scores_like_the_literal_loop() -> None:
    rng = random.Random(7)
    items = [tagged(*rng.sample(VOCABULARY, rng.randint(0, 3))) for _ in range(SMALL_BATCH + 3)]
    items.append(items[5])
    assert FrequencyScorer().score_all(items) == literal(items)


def test_the_array_form_of_tiny_and_tagless_lists() -> None:
    scorer = FrequencyScorer()
    assert scorer.score_array([]).tolist() == []
    assert scorer.score_array([tagged("a")]).tolist() == [0.0]
    assert scorer.score_array([tagged(), tagged()]).tolist() == [0.0, 0.0]
    assert scorer.score_array([tagged("a"), tagged("A"), tagged()]).dtype == np.float64


def test_bitset_unions_of_long_and_short_posting_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every set counted by bitsets; "common" and "half" hold 64 positions or more (packed
    # bit masks), the rare tags fewer (shifted bits), and many sets mix both kinds.
    monkeypatch.setattr(frequency, "SUBSET_TAG_LIMIT", 0)
    monkeypatch.setattr(frequency, "PAIR_LIMIT", 0)
    rng = random.Random(64)
    items = [
        tagged(
            *(["common"] if n % 3 else []),
            *(["half"] if n % 2 else []),
            *rng.sample([f"rare{k}" for k in range(30)], rng.randint(0, 2)),
        )
        for n in range(150)
    ]
    assert FrequencyScorer().score_array(items).tolist() == literal(items)


def test_a_small_batch_without_any_tag_scores_zero() -> None:
    assert FrequencyScorer().score_all([tagged(), tagged(), tagged()]) == [0.0, 0.0, 0.0]
