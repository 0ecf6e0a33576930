"""TagScorer: weighted tag matching, edge cases, lookup rules and validation."""

from __future__ import annotations

import math

import pytest

from pycupel.errors import ScorerConfigError
from pycupel.model import ContextItem
from pycupel.scorers import TagScorer


def tagged(*tags: str) -> ContextItem:
    return ContextItem("x", tokens=1, tags=tags)


WEIGHTS = {"important": 3.0, "recent": 2.0, "archived": 1.0}


def test_matched_weight_over_total_weight() -> None:
    scorer = TagScorer(WEIGHTS)
    items = [tagged("important", "recent", "archived"), tagged("important"), tagged("archived")]
    assert scorer.score_all(items) == [1.0, 0.5, 1 / 6]


def test_item_without_tags_scores_zero() -> None:
    assert TagScorer(WEIGHTS).score_all([tagged()]) == [0.0]


def test_all_weights_zero_scores_zero() -> None:
    scorer = TagScorer({"a": 0.0, "b": 0.0})
    assert scorer.total_weight == 0.0
    assert scorer.score_all([tagged("a", "b")]) == [0.0]


def test_empty_weight_map_scores_zero() -> None:
    assert TagScorer({}).score_all([tagged("a")]) == [0.0]


def test_tags_that_match_nothing_score_zero() -> None:
    assert TagScorer(WEIGHTS).score_all([tagged("other", "unrelated")]) == [0.0]


def test_duplicate_tags_each_add_and_the_result_is_clamped() -> None:
    scorer = TagScorer(WEIGHTS)
    # 3 + 3 = 6 of 6 -> exactly 1.0; 3 * 3 = 9 of 6 -> clamped to 1.0; 1 + 1 = 2 of 6
    assert scorer.score_all(
        [
            tagged("important", "important"),
            tagged("important", "important", "important"),
            tagged("archived", "archived"),
        ]
    ) == [1.0, 1.0, 2 / 6]


def test_lookup_is_case_sensitive_by_default() -> None:
    scorer = TagScorer(WEIGHTS)
    assert scorer.case_sensitive is True
    assert scorer.score_all([tagged("Important"), tagged("IMPORTANT")]) == [0.0, 0.0]


def test_case_insensitive_lookup_on_request() -> None:
    scorer = TagScorer({"Important": 3.0, "recent": 1.0}, case_sensitive=False)
    assert scorer.score_all([tagged("important"), tagged("RECENT"), tagged("Ïmportant")]) == [
        0.75,
        0.25,
        0.0,
    ]


def test_case_insensitive_mode_rejects_keys_that_fold_together() -> None:
    with pytest.raises(ScorerConfigError, match="same tag twice") as info:
        TagScorer({"Urgent": 1.0, "URGENT": 2.0}, case_sensitive=False)
    assert info.value.field == "weights"
    # ...while the default exact lookup keeps them apart.
    scorer = TagScorer({"Urgent": 1.0, "URGENT": 3.0})
    assert scorer.score_all([tagged("URGENT")]) == [0.75]


def test_denominator_is_the_sum_of_all_weights() -> None:
    scorer = TagScorer({"a": 1.0, "b": 1.0, "c": 2.0})
    assert scorer.total_weight == 4.0
    assert scorer.score_all([tagged("a")]) == [0.25]


@pytest.mark.parametrize(
    ("weight", "rule"),
    [
        (-1.0, "must be >= 0.0"),
        (math.nan, "must be finite"),
        (math.inf, "must be finite"),
        (False, "must be a number"),
        ("2", "must be a number"),
    ],
)
def test_invalid_weight_is_rejected_naming_the_tag(weight: object, rule: str) -> None:
    with pytest.raises(ScorerConfigError) as info:
        TagScorer({"ok": 1.0, "urgent": weight})  # type: ignore[dict-item]
    assert info.value.field == "weights['urgent']"
    assert rule in str(info.value)


def test_weight_sum_must_be_finite() -> None:
    with pytest.raises(ScorerConfigError, match="sum of weights must be finite"):
        TagScorer({"a": 1e308, "b": 1e308})


def test_non_string_tag_key_is_rejected() -> None:
    with pytest.raises(ScorerConfigError, match="keys must be strings"):
        TagScorer({1: 1.0})  # type: ignore[dict-item]


def test_weights_must_be_a_mapping() -> None:
    with pytest.raises(ScorerConfigError, match="must be a mapping"):
        TagScorer(["a"])  # type: ignore[arg-type]


def test_case_sensitive_must_be_a_bool() -> None:
    with pytest.raises(ScorerConfigError, match="case_sensitive"):
        TagScorer({}, case_sensitive=1)  # type: ignore[arg-type]


def test_configuration_is_copied() -> None:
    given = {"a": 1.0}
    scorer = TagScorer(given)
    given["a"] = 0.0
    assert scorer.score_all([tagged("a")]) == [1.0]
    assert dict(scorer.weights) == {"a": 1.0}


def test_repr() -> None:
    assert repr(TagScorer({"a": 1.0})) == "TagScorer({'a': 1.0})"
    assert repr(TagScorer({"a": 1.0}, case_sensitive=False)) == (
        "TagScorer({'a': 1.0}, case_sensitive=False)"
    )


@pytest.mark.parametrize(
    ("weights", "case_sensitive", "field", "value", "rule"),
    [
        (["a"], True, "weights", ["a"], "must be a mapping of tag to weight"),
        ({1: 1.0}, True, "weights", 1, "keys must be strings"),
        (
            {"Urgent": 1.0, "URGENT": 2.0},
            False,
            "weights",
            "URGENT",
            "must not name the same tag twice (ASCII case-insensitive)",
        ),
        (
            {"a": 1e308, "b": 1e308},
            True,
            "weights",
            {"a": 1e308, "b": 1e308},
            "the sum of weights must be finite",
        ),
        ({}, 1, "case_sensitive", 1, "must be a bool"),
    ],
)
def test_configuration_errors_name_the_field_the_value_and_the_rule(
    weights: object, case_sensitive: object, field: str, value: object, rule: str
) -> None:
    with pytest.raises(ScorerConfigError) as info:
        TagScorer(weights, case_sensitive=case_sensitive)  # type: ignore[arg-type]
    assert info.value.field == field
    assert info.value.value == value
    assert info.value.rule.startswith(rule)
    assert field in str(info.value)
    assert info.value.rule in str(info.value)
