"""The ASCII fast path of the lexical analysis finds exactly the words of the general one."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pycupel.scorers._lexical import Bm25Corpus, _stems, words_of

# The general rule, written out: casefolded runs of Unicode letters and digits.
WORD = re.compile(r"[^\W_]+")


def general(text: str) -> list[str]:
    return WORD.findall(text.casefold())


def test_every_ascii_character_splits_or_joins_as_the_general_rule_says() -> None:
    every = "".join(map(chr, range(128)))
    assert words_of(every) == general(every)
    for code in range(128):
        text = f"ab{chr(code)}CD"
        assert words_of(text) == general(text), repr(chr(code))


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_texts(text: str) -> None:
    assert text.isascii()
    assert words_of(text) == general(text)


@given(st.text())
def test_any_text(text: str) -> None:
    assert words_of(text) == general(text)


def test_non_ascii_words() -> None:
    assert words_of("Straße İstanbul Ǆemal naïve_café 東京 x²") == general(
        "Straße İstanbul Ǆemal naïve_café 東京 x²"
    )


# --------------------------------------------------------------------------- the corpus

_VOCABULARY = ["apple", "Apples", "the", "a", "x", "build", "BUILT", "naïve", "Straße", "東京"]


def _per_text_statistics(texts: list[str]) -> tuple[list[int], list[int], list[float], list[str]]:
    """The corpus statistics as the one-split-per-text analysis gives them: each kept word's
    term id and document, each document's length and the terms in id order."""
    per_text = [words_of(text) for text in texts]
    stems = _stems(per_text)
    term_ids: dict[str, int] = {}
    for stem in stems.values():
        term_ids.setdefault(stem, len(term_ids))
    ids: list[int] = []
    docs: list[int] = []
    for doc, words in enumerate(per_text):
        for word in words:
            if word in stems:
                ids.append(term_ids[stems[word]])
                docs.append(doc)
    lengths = [float(docs.count(doc)) for doc in range(len(texts))]
    return ids, docs, lengths, list(term_ids)


_TEXTS = st.lists(
    st.lists(
        st.sampled_from(_VOCABULARY) | st.text(max_size=6),
        max_size=8,
    ).map(" ".join),
    max_size=12,
)


def _assert_as_per_text(texts: list[str]) -> Bm25Corpus:
    """The corpus of ``texts``, checked against the statistics of one split per text."""
    corpus = Bm25Corpus(texts, k1=1.2, b=0.75)
    ids, docs, lengths, terms = _per_text_statistics(texts)
    assert corpus._ids.tolist() == ids
    assert corpus._doc_of.tolist() == docs
    assert corpus._lengths.tolist() == lengths
    assert list(corpus._term_ids) == terms
    return corpus


@given(_TEXTS, st.booleans())
def test_one_split_corpus_equals_one_split_per_text(texts: list[str], separator: bool) -> None:
    if separator and texts:
        texts = [*texts[:-1], texts[-1] + " \x01 apple"]  # the separator character in a text
    corpus = _assert_as_per_text(texts)
    assert corpus.size == len(texts)


_LONG_VOCABULARY = [
    "internationalization",
    "internationalizations",
    "internationalizational",
    "internationalizatio",
    "abcdefghijklmnop",
    "abcdefghijklmnopq",
    "abcdefghijklmno",
    "request42",
    "requests",
    "ourselves",
    "themselves",
    "yourselvesx",
    "éléphantsééééééé",
    "v2",
    "a1",
]


@given(
    st.lists(
        st.lists(st.sampled_from(_LONG_VOCABULARY) | st.text(max_size=20), max_size=8).map(
            " ".join
        ),
        max_size=12,
    )
)
def test_term_ids_of_long_and_numbered_words(texts: list[str]) -> None:
    _assert_as_per_text(texts)


# --------------------------------------------------------------------------- stems and cases


@given(
    st.lists(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz'", max_size=12).map(lambda w: w.strip("'")),
        max_size=20,
    ),
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=20),
)
def test_a_word_ending_in_a_digit_is_its_own_stem(words: list[str], numbers: list[int]) -> None:
    from pycupel.scorers._lexical import _stemmer

    mixed = [f"{word}{number}" for word, number in zip(words, numbers, strict=False)]
    mixed += [f"{word}ing{number}" for word, number in zip(words, numbers, strict=False)]
    stems = _stems([mixed])
    assert all(stems[word] == _stemmer().stemWord(word) for word in stems)


@given(st.text(alphabet="aBzZéÉǅßİıΩω1 \n_x\ud800", max_size=300))
def test_split_case_of_a_long_text_is_the_patterns(text: str) -> None:
    from pycupel.scorers._lexical import _CAMEL, split_case

    long = text + "aBc " * 1024 + text  # past the length where arrays take over
    assert split_case(long) == _CAMEL.sub(" ", long)


# --------------------------------------------------------------------------- word numbers


@given(
    st.lists(
        st.sampled_from([b"a", b"ab", b"abcdefgh", b"abcdefghi", b"\x01", b"\xc3\xa9t\xc3\xa9"])
        | st.binary(min_size=1, max_size=20).map(
            # the bytes a translation by _CORPUS_BYTES leaves: no whitespace, no 0
            lambda word: bytes(byte for byte in word if byte not in b"\0 \t\n\r\x0b\x0c") or b"z"
        ),
        max_size=200,
    ),
    st.lists(st.integers(min_value=1, max_value=3), max_size=200),
)
def test_word_numbers_are_the_split_words(words: list[bytes], gaps: list[int]) -> None:
    from pycupel.scorers._lexical import _word_numbers

    data = b"".join(
        b" " * gap + word for word, gap in zip(words, gaps + [1] * len(words), strict=False)
    )
    numbers, found = _word_numbers(data)
    assert len(set(found)) == len(found)
    assert [found[number] for number in numbers.tolist()] == data.split()


def test_word_numbers_with_keys_sharing_slots() -> None:
    from pycupel.scorers._lexical import _word_numbers

    # Thousands of distinct short words in a table of about one slot per word: many lose
    # their slot and are numbered apart.
    for width in (4, 12):  # keys of one integer, of two
        words = [f"w{number:0{width}}".encode() for number in range(5000)] * 2
        data = b" ".join(words)
        numbers, found = _word_numbers(data)
        assert len(found) == 5000
        assert [found[number] for number in numbers.tolist()] == words
