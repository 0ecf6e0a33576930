"""KindScorer: default table, case-insensitive lookup, edge cases and validation."""

from __future__ import annotations

import math

import pytest

from pycupel.errors import ScorerConfigError
from pycupel.model import ContextItem, ContextKind
from pycupel.scorers import KindScorer


def of_kind(kind: str) -> ContextItem:
    return ContextItem("x", tokens=1, kind=kind)


def test_default_weights_are_the_spec_table() -> None:
    assert dict(KindScorer.DEFAULT_WEIGHTS) == {
        ContextKind("SystemPrompt"): 1.0,
        ContextKind("Memory"): 0.8,
        ContextKind("ToolOutput"): 0.6,
        ContextKind("Document"): 0.4,
        ContextKind("Message"): 0.2,
    }
    assert len(KindScorer.DEFAULT_WEIGHTS) == 5
    scorer = KindScorer()
    kinds = ["SystemPrompt", "Memory", "ToolOutput", "Document", "Message"]
    assert scorer.score_all([of_kind(k) for k in kinds]) == [1.0, 0.8, 0.6, 0.4, 0.2]


def test_default_weights_are_read_only() -> None:
    with pytest.raises(TypeError):
        KindScorer.DEFAULT_WEIGHTS[ContextKind.MESSAGE] = 5.0  # type: ignore[index]


def test_unknown_kind_scores_zero() -> None:
    assert KindScorer().score_all([of_kind("Custom")]) == [0.0]


def test_lookup_is_case_insensitive() -> None:
    items = [of_kind("message"), of_kind("MESSAGE"), of_kind("mEsSaGe"), of_kind("systemprompt")]
    assert KindScorer().score_all(items) == [0.2, 0.2, 0.2, 1.0]
    custom = KindScorer({"TOOLOUTPUT": 0.9, ContextKind("memory"): 0.1})
    assert custom.score_all([of_kind("ToolOutput"), of_kind("Memory")]) == [0.9, 0.1]


def test_empty_custom_map_scores_everything_zero() -> None:
    assert KindScorer({}).score_all([of_kind("Message"), of_kind("SystemPrompt")]) == [0.0, 0.0]


def test_custom_weight_above_one_is_returned_unclamped() -> None:
    assert KindScorer({"Message": 3.5}).score_all([of_kind("Message")]) == [3.5]


def test_custom_map_replaces_the_defaults() -> None:
    scorer = KindScorer({"Document": 0.7})
    assert scorer.score_all([of_kind("Document"), of_kind("Message")]) == [0.7, 0.0]


def test_zero_weight_is_allowed() -> None:
    assert KindScorer({"Message": 0.0}).score_all([of_kind("Message")]) == [0.0]


def test_integer_weights_are_accepted_as_floats() -> None:
    scorer = KindScorer({"Message": 2})
    (score,) = scorer.score_all([of_kind("Message")])
    assert score == 2.0
    assert isinstance(score, float)


def test_score_item_and_per_item_score_agree_with_batch() -> None:
    scorer = KindScorer()
    item = of_kind("Memory")
    assert scorer.score_item(item) == scorer.score(item, []) == 0.8


@pytest.mark.parametrize(
    ("weight", "rule"),
    [
        (-0.1, "must be >= 0.0"),
        (math.nan, "must be finite"),
        (math.inf, "must be finite"),
        (-math.inf, "must be finite"),
        (True, "must be a number"),
        ("1.0", "must be a number"),
        (None, "must be a number"),
    ],
)
def test_invalid_weight_is_rejected_naming_the_kind(weight: object, rule: str) -> None:
    with pytest.raises(ScorerConfigError) as info:
        KindScorer({"urgent": weight})  # type: ignore[dict-item]
    assert info.value.field == "weights['urgent']"
    assert rule in str(info.value)
    assert "weights['urgent']" in str(info.value)


def test_duplicate_kinds_after_case_folding_are_rejected() -> None:
    with pytest.raises(ScorerConfigError, match="same kind twice") as info:
        KindScorer({"Message": 0.1, "MESSAGE": 0.2})
    assert info.value.field == "weights"
    assert info.value.value == "MESSAGE"
    # A ContextKind key and a str key that fold alike are two dict keys (a kind never equals
    # a str) but one kind: refused the same way.
    with pytest.raises(ScorerConfigError, match="same kind twice"):
        KindScorer({ContextKind("Memory"): 0.1, "memory": 0.2})


@pytest.mark.parametrize("key", ["", "   ", 3, None])
def test_invalid_kind_keys_are_rejected(key: object) -> None:
    with pytest.raises(ScorerConfigError) as info:
        KindScorer({key: 1.0})  # type: ignore[dict-item]
    assert info.value.field == "weights"


def test_weights_must_be_a_mapping() -> None:
    with pytest.raises(ScorerConfigError, match="must be a mapping"):
        KindScorer([("Message", 1.0)])  # type: ignore[arg-type]


def test_weights_property_is_a_read_only_copy() -> None:
    given = {"Message": 1.0}
    scorer = KindScorer(given)
    given["Message"] = 9.0
    assert scorer.score_all([of_kind("Message")]) == [1.0]
    assert dict(scorer.weights) == {ContextKind.MESSAGE: 1.0}
    with pytest.raises(TypeError):
        scorer.weights[ContextKind.MESSAGE] = 2.0  # type: ignore[index]


def test_repr() -> None:
    assert repr(KindScorer()) == "KindScorer()"
    assert repr(KindScorer({"Message": 2.0})) == "KindScorer({'Message': 2.0})"
