"""The ASCII fast path of the lexical analysis finds exactly the words of the general one."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pycupel.scorers._lexical import words_of

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
