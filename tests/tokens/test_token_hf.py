"""HuggingFaceCounter: a tiny local tokenizer.json, special tokens, truncation, errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from token_fixtures import word_level_tokenizer

from pycupel.errors import TokenizerError
from pycupel.tokens import HuggingFaceCounter, TokenCounter

pytest.importorskip("tokenizers")


@pytest.mark.usefixtures("no_network")
def test_counts_from_a_local_tokenizer_json(tokenizer_json: Path) -> None:
    counter = HuggingFaceCounter(tokenizer_json)
    assert isinstance(counter, TokenCounter)
    assert counter.count("hello world") == 2
    # Unknown words still count (as [UNK]); the pre-tokenizer splits off punctuation.
    assert counter.count("hello, brave new world!") == 6
    assert counter.count("") == 0
    assert counter.add_special_tokens is False
    assert repr(counter) == f"HuggingFaceCounter({str(tokenizer_json)!r})"


def test_from_file_and_str_path(tokenizer_json: Path) -> None:
    assert HuggingFaceCounter.from_file(tokenizer_json).count("hello again") == 2
    assert HuggingFaceCounter(str(tokenizer_json)).count("hello again") == 2
    with pytest.raises(TokenizerError, match="path: must be a file path"):
        HuggingFaceCounter.from_file(3)  # type: ignore[arg-type]


def test_special_tokens_are_opt_in(tokenizer_json: Path) -> None:
    plain = HuggingFaceCounter(tokenizer_json)
    wrapped = HuggingFaceCounter(tokenizer_json, add_special_tokens=True)
    texts = ["hello world", "again", ""]
    # The post-processor adds [CLS] and [SEP] around every text.
    assert wrapped.count_batch(texts) == [n + 2 for n in plain.count_batch(texts)]
    assert wrapped.count("hello") == 3
    assert "add_special_tokens=True" in repr(wrapped)


def test_wraps_an_existing_tokenizer_object() -> None:
    tokenizer = word_level_tokenizer()
    counter = HuggingFaceCounter(tokenizer)
    assert counter.tokenizer is tokenizer  # no copy needed: no truncation or padding
    assert counter.count("hello hello hello") == 3
    assert repr(counter) == "HuggingFaceCounter(<Tokenizer>)"


def test_truncation_and_padding_do_not_change_counts_or_the_callers_object() -> None:
    tokenizer = word_level_tokenizer()
    tokenizer.enable_truncation(max_length=2)
    tokenizer.enable_padding(length=10, pad_id=0, pad_token="[UNK]")
    counter = HuggingFaceCounter(tokenizer)
    text = "hello world hello world hello"
    assert counter.count(text) == 5
    assert counter.count_batch([text, "hello"]) == [5, 1]
    # The caller's tokenizer keeps its settings; the counter uses a private copy.
    assert counter.tokenizer is not tokenizer
    assert tokenizer.truncation is not None
    assert tokenizer.padding is not None
    assert len(tokenizer.encode(text)) == 10


def test_batch_equals_per_item(tokenizer_json: Path) -> None:
    counter = HuggingFaceCounter(tokenizer_json)
    texts = ["hello", "", "hello world again and again", "x y z", "héllo wörld 🎉"] * 20
    assert counter.count_batch(texts) == [counter.count(t) for t in texts]
    assert counter.count_batch([]) == []


def test_lone_surrogates_are_counted(tokenizer_json: Path) -> None:
    counter = HuggingFaceCounter(tokenizer_json)
    assert counter.count("hello \ud800 world") == 3
    assert counter.count_batch(["hello \ud800 world", "hello"]) == [3, 1]


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match=r"tokenizer: no such file .*absent\.json"):
        HuggingFaceCounter(tmp_path / "absent.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"not": "a tokenizer"}')
    with pytest.raises(TokenizerError, match=r"cannot load .*broken\.json.* as a tokenizer\.json"):
        HuggingFaceCounter(broken)


def test_invalid_arguments(tokenizer_json: Path) -> None:
    with pytest.raises(TokenizerError, match=r"tokenizer: must be a tokenizer\.json path or"):
        HuggingFaceCounter(42)  # type: ignore[arg-type]
    with pytest.raises(TokenizerError, match="add_special_tokens: must be a boolean, got 1"):
        HuggingFaceCounter(tokenizer_json, add_special_tokens=1)  # type: ignore[arg-type]
    counter = HuggingFaceCounter(tokenizer_json)
    with pytest.raises(TokenizerError, match="text: must be a string"):
        counter.count(None)  # type: ignore[arg-type]
    with pytest.raises(TokenizerError, match="texts: must be a sequence of strings"):
        counter.count_batch("hello world")


def test_missing_package_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tokenizer_json: Path
) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(TokenizerError) as info:
        HuggingFaceCounter(tokenizer_json)
    assert "pip install 'pycupel[hf]'" in str(info.value)
    assert info.value.counter == "HuggingFaceCounter"
