"""Every counter honours the TokenCounter contract the same way."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from pycupel.errors import CupelError, TokenizerError
from pycupel.tokens import (
    BaseTokenCounter,
    CachedCounter,
    HeuristicCounter,
    HuggingFaceCounter,
    TiktokenCounter,
    TokenCounter,
)

TEXTS = [
    "",
    "hello world",
    "The quick brown fox jumps over the lazy dog.",
    '{"id": 17, "tags": ["a", "b"]}',
    "def f(x):\n    return x * 2\n",
    "Привет, мир! 你好 🎉",
    "hello world",
]

Factory = Callable[[pytest.FixtureRequest], TokenCounter]


def _tiktoken(request: pytest.FixtureRequest) -> TokenCounter:
    pytest.importorskip("tiktoken")
    bpe_file: Path = request.getfixturevalue("bpe_file")
    return TiktokenCounter(bpe_file=bpe_file)


def _huggingface(request: pytest.FixtureRequest) -> TokenCounter:
    tokenizer_json: Path = request.getfixturevalue("tokenizer_json")
    return HuggingFaceCounter(tokenizer_json)


FACTORIES: dict[str, Factory] = {
    "heuristic": lambda request: HeuristicCounter(),
    "heuristic+margin": lambda request: HeuristicCounter(safety_margin=0.2),
    "tiktoken": _tiktoken,
    "huggingface": _huggingface,
    "cached": lambda request: CachedCounter(HeuristicCounter(), max_entries=3),
}


@pytest.fixture(params=sorted(FACTORIES))
def any_counter(request: pytest.FixtureRequest) -> TokenCounter:
    return FACTORIES[request.param](request)


def test_is_a_token_counter(any_counter: TokenCounter) -> None:
    assert isinstance(any_counter, TokenCounter)
    assert isinstance(any_counter, BaseTokenCounter)
    assert repr(any_counter).startswith(type(any_counter).__name__ + "(")


def test_counts_are_non_negative_ints(any_counter: TokenCounter) -> None:
    for text in TEXTS:
        n = any_counter.count(text)
        assert type(n) is int
        assert n >= 0
        assert (n == 0) == (text == "")


def test_batch_equals_per_item(any_counter: TokenCounter) -> None:
    expected = [any_counter.count(t) for t in TEXTS]
    assert any_counter.count_batch(TEXTS) == expected
    assert any_counter.count_batch(tuple(TEXTS)) == expected
    assert any_counter.count_batch(list(reversed(TEXTS))) == expected[::-1]
    assert any_counter.count_batch([]) == []


def test_deterministic(any_counter: TokenCounter) -> None:
    first = any_counter.count_batch(TEXTS)
    assert any_counter.count_batch(TEXTS) == first


def test_invalid_input_raises_tokenizer_error(any_counter: TokenCounter) -> None:
    bad_inputs: list[Callable[[], object]] = [
        lambda: any_counter.count(None),  # type: ignore[arg-type]
        lambda: any_counter.count(b"bytes"),  # type: ignore[arg-type]
        lambda: any_counter.count_batch("a string is not a batch"),
        lambda: any_counter.count_batch(["ok", 3]),  # type: ignore[list-item]
        lambda: any_counter.count_batch({"a", "b"}),  # type: ignore[arg-type]
    ]
    for call in bad_inputs:
        with pytest.raises(TokenizerError) as info:
            call()
        assert isinstance(info.value, CupelError)
        assert type(any_counter).__name__ in info.value.counter


def test_a_custom_counter_gets_count_batch_from_count() -> None:
    class Chars(BaseTokenCounter):
        def count(self, text: str) -> int:
            return len(text)

    counter = Chars()
    assert isinstance(counter, TokenCounter)
    assert counter.count_batch(["ab", "", "cde"]) == [2, 0, 3]
    with pytest.raises(TokenizerError, match="texts: must be a sequence of strings"):
        counter.count_batch("abc")


def test_structural_counters_need_both_methods() -> None:
    class OnlyCount:
        def count(self, text: str) -> int:
            return 1

    class Both(OnlyCount):
        def count_batch(self, texts: Sequence[str]) -> list[int]:
            return [1] * len(texts)

    assert not isinstance(OnlyCount(), TokenCounter)
    assert isinstance(Both(), TokenCounter)
