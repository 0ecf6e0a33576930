"""HeuristicCounter: the documented rules, its invariants, and its accuracy against BPE.

The accuracy test compares with exact counts of tiktoken's cl100k_base and o200k_base on the
sample texts, recorded in data/reference_counts.json by ``benchmarks/bench_tokens.py --record``
(the encodings themselves are not available offline).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pycupel.errors import TokenizerError
from pycupel.tokens import HeuristicCounter, TokenCounter
from pycupel.tokens.heuristic import _PIECE, _ascii_pieces

DATA = Path(__file__).parent / "data"
SAMPLES = DATA / "samples"
ENGLISH_LIKE = ("prose", "chat", "code", "json", "markdown")

counter = HeuristicCounter()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("hello", 1),
        (" hello", 1),  # the leading space belongs to the word
        ("hello world", 2),
        ("internationalization", 2),  # 20 letters: one token per 11
        ("a" * 23, 3),
        (".get", 1),  # punctuation and underscores attach to the word that follows
        ("_id", 1),
        ("2024", 2),  # digits in groups of up to three
        ("123", 1),
        ("1234567", 3),
        ("...", 1),
        ("!!!!!", 2),  # punctuation runs of up to four
        (" {", 1),
        ("\n", 1),
        ("a\n\nb", 3),  # a run of line breaks is one token
        ("    return", 2),  # the indentation, then " return"
        ("Deploy at 6pm", 5),  # a space before a digit stands alone, as in BPE
        ("Привет", 3),  # 2-byte scripts: one token per two characters
        ("你好世界", 4),  # CJK: one token per character
        ("—", 1),  # general punctuation and symbols: one each
        ("नमस्ते", 3),  # other 3-byte characters: one per two
        ("🎉", 2),  # astral characters (emoji): two each
        ("\x00\x01", 2),  # anything else: one per character
        ("\ud800", 1),  # even a lone surrogate
    ],
)
def test_documented_rules(text: str, expected: int) -> None:
    assert counter.count(text) == expected


@given(st.text(max_size=300))
def test_never_negative_and_zero_only_for_empty(text: str) -> None:
    n = counter.count(text)
    assert n >= 0
    assert (n == 0) == (text == "")
    # No character costs more than two tokens.
    assert n <= 2 * len(text)


@given(st.text(max_size=100), st.text(max_size=100))
def test_deterministic_and_batch_equals_per_item(a: str, b: str) -> None:
    assert counter.count_batch([a, b, a]) == [counter.count(a), counter.count(b), counter.count(a)]
    assert HeuristicCounter().count(a) == counter.count(a)


@given(st.text(max_size=200), st.sampled_from([0.0, 0.05, 0.1, 0.25, 1.0]))
def test_safety_margin_rounds_up(text: str, margin: float) -> None:
    base = counter.count(text)
    padded = HeuristicCounter(safety_margin=margin).count(text)
    assert base <= padded <= 2 * base
    assert padded >= base * (1 + margin) - 1e-9
    assert padded < base * (1 + margin) + 1


def test_safety_margin_uses_exact_arithmetic() -> None:
    # 40 * 0.1 is 4.000000000000001 in floating point; the padded count must still be 44.
    text = " word" * 40
    assert counter.count(text) == 40
    assert HeuristicCounter(safety_margin=0.1).count(text) == 44
    assert HeuristicCounter(safety_margin=0.1).count("") == 0
    assert HeuristicCounter(safety_margin=0.1).count("a") == 2


@pytest.mark.parametrize(
    ("margin", "message"),
    [
        (-0.1, "must be between 0 and 1.0"),
        (1.5, "must be between 0 and 1.0"),
        (float("nan"), "must be between 0 and 1.0"),
        (float("inf"), "must be between 0 and 1.0"),
        ("0.1", "must be a number"),
        (True, "must be a number"),
    ],
)
def test_safety_margin_validation(margin: object, message: str) -> None:
    with pytest.raises(TokenizerError, match=f"HeuristicCounter: safety_margin: {message}"):
        HeuristicCounter(safety_margin=margin)  # type: ignore[arg-type]


def test_protocol_repr_and_equality() -> None:
    assert isinstance(counter, TokenCounter)
    assert repr(HeuristicCounter()) == "HeuristicCounter()"
    assert repr(HeuristicCounter(safety_margin=0.1)) == "HeuristicCounter(safety_margin=0.1)"
    assert HeuristicCounter(safety_margin=0.1) == HeuristicCounter(safety_margin=0.1)
    assert hash(HeuristicCounter()) == hash(HeuristicCounter(safety_margin=0))
    assert HeuristicCounter() != HeuristicCounter(safety_margin=0.2)
    assert HeuristicCounter(safety_margin=0.2).safety_margin == 0.2


def test_invalid_texts() -> None:
    with pytest.raises(TokenizerError, match=r"HeuristicCounter\(\): text: must be a string"):
        counter.count(12)  # type: ignore[arg-type]
    with pytest.raises(TokenizerError, match="texts: must be a sequence of strings"):
        counter.count_batch("not a list")
    with pytest.raises(TokenizerError, match=r"texts\[2\]: must be a string, got 3 \(int\)"):
        counter.count_batch(["a", "b", 3])  # type: ignore[list-item]


# --------------------------------------------------------------------------- accuracy


def _samples() -> dict[str, tuple[str, str]]:
    return {
        path.relative_to(SAMPLES).as_posix(): (path.parent.name, path.read_text("utf-8"))
        for path in sorted(SAMPLES.rglob("*"))
        if path.is_file()
    }


def _reference() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DATA / "reference_counts.json").read_text("utf-8"))
    return document


def _load() -> tuple[dict[str, tuple[str, str]], dict[str, dict[str, int]]]:
    return _samples(), _reference()["encodings"]


def test_reference_counts_match_the_current_samples() -> None:
    samples = _samples()
    reference = _reference()
    assert set(reference["encodings"]) == {"cl100k_base", "o200k_base"}
    for counts in reference["encodings"].values():
        assert set(counts) == set(samples), "re-run benchmarks/bench_tokens.py --record"
    # A sample edited after the counts were recorded would make the comparison meaningless.
    digests = {
        key: hashlib.sha256(text.encode("utf-8")).hexdigest() for key, (_, text) in samples.items()
    }
    assert digests == reference["sha256"], "re-run benchmarks/bench_tokens.py --record"


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_accuracy_on_english_prose_code_and_json(encoding: str) -> None:
    samples, reference = _load()
    exact = reference[encoding]
    for category in ENGLISH_LIKE:
        keys = [key for key, (cat, _) in samples.items() if cat == category]
        assert keys, category
        estimates = {key: counter.count(samples[key][1]) for key in keys}
        total_error = sum(estimates.values()) / sum(exact[key] for key in keys) - 1
        assert abs(total_error) <= 0.06, (category, total_error)
        per_text = [estimates[key] / exact[key] - 1 for key in keys]
        assert statistics.mean(abs(e) for e in per_text) <= 0.08, (category, per_text)
        assert max(abs(e) for e in per_text) <= 0.16, (category, per_text)


def test_non_latin_estimate_sits_between_the_encodings() -> None:
    # o200k_base needs about half the tokens of cl100k_base for these scripts; the estimate
    # is meant to land between the two rather than match either.
    samples, reference = _load()
    for category in ("non_latin", "emoji", "mixed"):
        keys = [key for key, (cat, _) in samples.items() if cat == category]
        estimate = sum(counter.count(samples[key][1]) for key in keys)
        o200k = sum(reference["o200k_base"][key] for key in keys)
        cl100k = sum(reference["cl100k_base"][key] for key in keys)
        assert o200k * 0.95 <= estimate <= cl100k * 1.05, (category, estimate, o200k, cl100k)


@given(st.text(max_size=300) | st.text(alphabet=st.characters(max_codepoint=127), max_size=300))
def test_count_is_the_number_of_pieces_plus_astral_characters(text: str) -> None:
    # The rule as the module documentation states it: one token per piece of the split,
    # one more per character beyond U+FFFF.
    pieces = _PIECE.findall(text)
    assert "".join(pieces) == text
    astral = sum(1 for character in text if ord(character) > 0xFFFF)
    assert HeuristicCounter().count(text) == len(pieces) + astral


# The batch form counts large batches of ASCII texts by run arithmetic instead of the regular
# expression: it must give exactly the per-text counts. One character of every class the
# arithmetic tells apart (letters, digits, underscore, punctuation, space, line breaks, other
# whitespace, a control character, DEL, non-ASCII).
_CLASS_ALPHABET = "aZ5_.,' \n\r\t\x0b\x1c\x7f-"
# Padding that makes a batch large enough for the array arithmetic.
_LARGE = "word " * 1_000


def test_batch_equals_per_text_on_every_short_string() -> None:
    texts = [
        "".join(chars)
        for size in range(1, 5)
        for chars in itertools.product(_CLASS_ALPHABET, repeat=size)
    ]
    texts.append(_LARGE)
    expected = [counter.count(text) for text in texts]
    assert counter.count_batch(texts) == expected
    # The run arithmetic itself (count_batch takes it only once numpy is loaded): every text
    # it does not leave to the regular expression gets the regular expression's count.
    pieces, unsure = _ascii_pieces("\x00".join(texts))
    assert len(unsure) < len(texts) // 2
    assert all(
        pieces[position] == expected[position]
        for position in range(len(texts))
        if position not in unsure
    )


_RUNS = st.lists(
    st.tuples(
        st.sampled_from([*_CLASS_ALPHABET, "\x00", "é", "\U0001f600", "0"]),
        st.sampled_from([1, 2, 3, 4, 5, 11, 12, 13, 62, 63, 64, 65, 130]),
    ),
    max_size=12,
).map(lambda runs: "".join(char * size for char, size in runs))


@given(
    st.lists(_RUNS | st.text(max_size=80), max_size=40),
    st.sampled_from([0.0, 0.1, 1.0]),
)
def test_batch_equals_per_text_on_long_runs(texts: list[str], margin: float) -> None:
    estimate = HeuristicCounter(safety_margin=margin)
    batch = [_LARGE, *texts, _LARGE]
    assert estimate.count_batch(batch) == [estimate.count(text) for text in batch]
    eligible = [text for text in texts if text and text.isascii() and "\x00" not in text]
    pieces, unsure = _ascii_pieces("\x00".join([_LARGE, *eligible]))
    assert [p for i, p in enumerate(pieces) if i not in unsure] == [
        HeuristicCounter().count(text)
        for i, text in enumerate([_LARGE, *eligible])
        if i not in unsure
    ]


def test_batch_checks_its_texts_as_count_does() -> None:
    with pytest.raises(TokenizerError, match=r"texts\[1\]: must be a string"):
        counter.count_batch([_LARGE, 3])  # type: ignore[list-item]
