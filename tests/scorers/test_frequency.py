"""FrequencyScorer: edge-case rows, identity-based self-exclusion, ASCII case folding,
and the large-tag-set paths."""

from __future__ import annotations

from pycupel.model import ContextItem
from pycupel.scorers import FrequencyScorer


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
