"""MetadataTrustScorer and MetadataKeyScorer: chapter tables, value types, the decimal
float grammar, and validation."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from pycupel.errors import ScorerConfigError
from pycupel.model import ContextItem
from pycupel.scorers import (
    TRUST_KEY,
    MetadataKeyScorer,
    MetadataTrustScorer,
    parse_decimal_float,
)


def with_meta(**metadata: Any) -> ContextItem:
    return ContextItem("x", tokens=1, metadata=metadata)


def trust(value: object) -> ContextItem:
    return ContextItem("x", tokens=1, metadata={TRUST_KEY: value})


# --------------------------------------------------------------------------- trust


def test_trust_key() -> None:
    assert TRUST_KEY == "cupel:trust"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("0.0", 0.0),
        ("0.75", 0.75),
        ("1.0", 1.0),
        ("0.85", 0.85),
        ("-0.1", 0.0),
        ("1.5", 1.0),
        ("high", 0.5),
        ("", 0.5),
        ("NaN", 0.5),
        ("+Infinity", 0.5),
        ("-Infinity", 0.5),
        ("Infinity", 0.5),
        ("inf", 0.5),
        ("1e400", 0.5),  # overflows to infinity when parsed -> non-finite -> default
        ("1e-3", 0.001),
        ("5E-1", 0.5),
        (".25", 0.25),
        ("1.", 1.0),
        ("+0.5", 0.5),
        ("-0", 0.0),
        (" 0.5", 0.5),
        ("0.5 ", 0.5),
        ("0.5\n", 0.5),
        ("0_5", 0.5),
        ("0x1p-1", 0.5),
        ("٠.٥", 0.5),  # Arabic-Indic digits: float() accepts them, the decimal grammar does not
    ],
)
def test_trust_string_values(raw: str, expected: float) -> None:
    (score,) = MetadataTrustScorer().score_all([trust(raw)])
    assert score == expected


def test_trust_key_absent_returns_default() -> None:
    scorer = MetadataTrustScorer(default_score=0.3)
    assert scorer.score_all([with_meta(), with_meta(other="0.9")]) == [0.3, 0.3]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (0.85, 0.85),
        (1, 1.0),
        (0, 0.0),
        (-2, 0.0),
        (7.5, 1.0),
        (math.nan, 0.2),
        (math.inf, 0.2),
        (-math.inf, 0.2),
        (10**400, 0.2),  # beyond float64: not a finite value
        (Fraction(1, 4), 0.25),
        (np.float64(0.6), 0.6),
        (np.int64(1), 1.0),
        (np.float32(0.5), 0.5),
    ],
)
def test_trust_numeric_values_are_used_directly(raw: object, expected: float) -> None:
    (score,) = MetadataTrustScorer(default_score=0.2).score_all([trust(raw)])
    assert score == expected


@pytest.mark.parametrize("raw", [True, False, None, b"0.5", [0.5], {"v": 0.5}, Decimal("0.5")])
def test_trust_other_types_return_default(raw: object) -> None:
    assert MetadataTrustScorer(default_score=0.2).score_all([trust(raw)]) == [0.2]


def test_trust_per_item_forms_agree() -> None:
    scorer = MetadataTrustScorer()
    item = trust("0.4")
    assert scorer.score_item(item) == scorer.score(item, []) == 0.4


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        (-0.01, "must be >= 0.0"),
        (1.01, "must be <= 1.0"),
        (math.nan, "must be finite"),
        ("0.5", "must be a number"),
        (True, "must be a number"),
    ],
)
def test_trust_default_score_is_validated(value: object, rule: str) -> None:
    with pytest.raises(ScorerConfigError, match=rule) as info:
        MetadataTrustScorer(default_score=value)  # type: ignore[arg-type]
    assert info.value.field == "default_score"


def test_trust_default_score_bounds_are_inclusive() -> None:
    assert MetadataTrustScorer(0.0).default_score == 0.0
    assert MetadataTrustScorer(1).default_score == 1.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0.0),
        ("12", 12.0),
        ("1.5", 1.5),
        ("1.", 1.0),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("1E+3", 1000.0),
        ("1.5e-3", 0.0015),
        ("1.e2", 100.0),
        ("-7", -7.0),
        ("+7", 7.0),
        ("inf", math.inf),
        ("INF", math.inf),
        ("-infinity", -math.inf),
        ("+Infinity", math.inf),
        ("00012.5000", 12.5),
        ("1" * 400, float("1" * 400)),
    ],
)
def test_decimal_float_grammar_accepts(text: str, expected: float) -> None:
    assert parse_decimal_float(text) == expected


@pytest.mark.parametrize("text", ["nan", "NaN", "-NAN", "+nan"])
def test_decimal_float_grammar_accepts_nan(text: str) -> None:
    value = parse_decimal_float(text)
    assert value is not None
    assert math.isnan(value)


@pytest.mark.parametrize(
    "text",
    [
        "",
        ".",
        "e5",
        ".e5",
        "1e",
        "1e+",
        "+",
        "-",
        "+-1",
        "1.2.3",
        " 1",
        "1 ",
        "\t1",
        "1\n",
        "1_000",
        "0x10",
        "0x1p3",
        "infinit",
        "infinityy",
        "nana",
        "in f",
        "1,5",
        "١",
        "１",
        "high",
        "1e5.0",
    ],
)
def test_decimal_float_grammar_rejects(text: str) -> None:
    assert parse_decimal_float(text) is None


# --------------------------------------------------------------------------- key


def test_key_match_returns_boost() -> None:
    scorer = MetadataKeyScorer("cupel:priority", "high", 1.5)
    assert scorer.score_all([with_meta(**{"cupel:priority": "high"})]) == [1.5]


def test_key_value_mismatch_returns_neutral() -> None:
    scorer = MetadataKeyScorer("cupel:priority", "high", 1.5)
    assert scorer.score_all([with_meta(**{"cupel:priority": "normal"})]) == [1.0]


def test_key_absent_returns_neutral() -> None:
    scorer = MetadataKeyScorer("cupel:priority", "high", 3.0)
    assert scorer.score_all([with_meta(), with_meta(other="high")]) == [1.0, 1.0]


def test_key_match_is_exact_string_equality() -> None:
    scorer = MetadataKeyScorer("tier", "high", 2.0)
    items = [with_meta(tier=v) for v in ["high", "High", "HIGH", " high", "high ", "hig"]]
    assert scorer.score_all(items) == [2.0, 1.0, 1.0, 1.0, 1.0, 1.0]


@pytest.mark.parametrize("stored", [1, 1.0, True, None, ["1"], b"1", np.str_("x")])
def test_key_non_string_values_never_match(stored: object) -> None:
    """Only a str stored under the key can match; nothing is converted to text.

    (``np.str_`` is a str subclass, so it is compared as a string and can match.)
    """
    matching_text = "x" if isinstance(stored, str) else str(stored)
    scorer = MetadataKeyScorer("k", matching_text, 2.0)
    expected = 2.0 if isinstance(stored, str) else 1.0
    assert scorer.score_all([with_meta(k=stored)]) == [expected]


def test_key_boost_below_one_and_above_one_are_returned_unclamped() -> None:
    assert MetadataKeyScorer("k", "v", 0.25).score_all([with_meta(k="v")]) == [0.25]
    assert MetadataKeyScorer("k", "v", 40.0).score_all([with_meta(k="v")]) == [40.0]


def test_key_empty_key_and_value_are_allowed() -> None:
    assert MetadataKeyScorer("", "", 2.0).score_all([with_meta(**{"": ""})]) == [2.0]


def test_key_batch_and_per_item_agree() -> None:
    scorer = MetadataKeyScorer("k", "v", 1.5)
    items = [with_meta(k="v"), with_meta(k="w"), with_meta()]
    assert scorer.score_all(items) == [scorer.score(i, items) for i in items] == [1.5, 1.0, 1.0]
    assert scorer.score_array(items).tolist() == [1.5, 1.0, 1.0]


@pytest.mark.parametrize(
    ("boost", "rule"),
    [
        (0.0, "must be > 0"),
        (-0.0, "must be > 0"),
        (-1.0, "must be > 0"),
        (math.nan, "must be finite"),
        (math.inf, "must be finite"),
        (-math.inf, "must be finite"),
        (True, "must be a number"),
        ("1.5", "must be a number"),
    ],
)
def test_key_boost_is_validated(boost: object, rule: str) -> None:
    with pytest.raises(ScorerConfigError, match=rule) as info:
        MetadataKeyScorer("cupel:priority", "high", boost)  # type: ignore[arg-type]
    assert info.value.field == "boost"
    assert str(info.value).startswith("boost: ")


@pytest.mark.parametrize(("key", "value"), [(1, "v"), ("k", 1), (None, "v"), ("k", None)])
def test_key_and_value_must_be_strings(key: object, value: object) -> None:
    with pytest.raises(ScorerConfigError, match="must be a string"):
        MetadataKeyScorer(key, value, 1.5)  # type: ignore[arg-type]


def test_key_properties_and_repr() -> None:
    scorer = MetadataKeyScorer("cupel:priority", "high", 1.5)
    assert (scorer.key, scorer.value, scorer.boost) == ("cupel:priority", "high", 1.5)
    assert repr(scorer) == "MetadataKeyScorer('cupel:priority', 'high', boost=1.5)"
    assert repr(MetadataTrustScorer()) == "MetadataTrustScorer(default_score=0.5)"
