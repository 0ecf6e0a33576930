"""item_from_text / items_from_texts: counting, field pass-through, validation."""

from __future__ import annotations

import doctest
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

import pycupel.tokens
from pycupel import ContextItem, ContextKind, ContextSource
from pycupel.errors import ItemValidationError, TokenizerError
from pycupel.tokens import (
    BaseTokenCounter,
    CachedCounter,
    HeuristicCounter,
    HuggingFaceCounter,
    TiktokenCounter,
    base,
    cache,
    heuristic,
    hf_counter,
    item_from_text,
    items,
    items_from_texts,
    tiktoken_counter,
)


class WordCounter(BaseTokenCounter):
    """One token per whitespace-separated word; records batch calls."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def count(self, text: str) -> int:
        return len(text.split())

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        self.batches.append(list(texts))
        return super().count_batch(texts)


class FixedCounter(BaseTokenCounter):
    """Returns whatever it was given, valid or not."""

    def __init__(self, single: object, batch: object = None) -> None:
        self.single = single
        self.batch = batch

    def count(self, text: str) -> int:
        return self.single  # type: ignore[return-value]

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return self.batch  # type: ignore[return-value]

    def __repr__(self) -> str:
        return "FixedCounter()"


def test_item_from_text_counts_and_passes_fields() -> None:
    when = datetime(2024, 3, 17, 9, 0, tzinfo=UTC)
    item = item_from_text(
        "three short words",
        counter=WordCounter(),
        kind="Document",
        source="Rag",
        priority=4,
        tags=["a", "b"],
        metadata={"id": 7},
        timestamp=when,
        future_relevance_hint=0.5,
        pinned=True,
        original_tokens=10,
    )
    assert isinstance(item, ContextItem)
    assert item.content == "three short words"
    assert item.tokens == 3
    assert item.kind == ContextKind.DOCUMENT
    assert item.source == ContextSource("rag")
    assert (item.priority, item.tags, dict(item.metadata)) == (4, ("a", "b"), {"id": 7})
    assert (item.timestamp, item.future_relevance_hint, item.pinned) == (when, 0.5, True)
    assert item.original_tokens == 10


def test_default_counter_is_the_heuristic() -> None:
    text = "The default counter is the dependency-free estimate."
    assert item_from_text(text).tokens == HeuristicCounter().count(text)
    assert [i.tokens for i in items_from_texts([text, "ok"])] == HeuristicCounter().count_batch(
        [text, "ok"]
    )


def test_items_from_texts_counts_in_one_batch_and_keeps_order() -> None:
    counter = WordCounter()
    texts = ["one", "one two", "one two three", "one"]
    made = items_from_texts(texts, counter=counter, kind="Memory", tags=("t",))
    assert counter.batches == [texts]
    assert [i.content for i in made] == texts
    assert [i.tokens for i in made] == [1, 2, 3, 1]
    assert all(i.kind == ContextKind.MEMORY and i.tags == ("t",) for i in made)
    # Items are distinct objects even for equal texts.
    assert made[0] is not made[3]
    assert items_from_texts([], counter=counter) == []
    assert items_from_texts(iter(["a b"]), counter=counter)[0].tokens == 2


def test_batch_equals_per_item_with_every_counter(bpe_file: Path, tokenizer_json: Path) -> None:
    pytest.importorskip("tiktoken")
    pytest.importorskip("tokenizers")
    texts = ["hello world", "hello", '{"a": [1, 2]}', "héllo 🎉", "x" * 50]
    counters = [
        HeuristicCounter(),
        TiktokenCounter(bpe_file=bpe_file),
        HuggingFaceCounter(tokenizer_json),
        CachedCounter(HeuristicCounter()),
    ]
    for counter in counters:
        batch = [i.tokens for i in items_from_texts(texts, counter=counter)]
        single = [item_from_text(t, counter=counter).tokens for t in texts]
        assert batch == single == [counter.count(t) for t in texts], repr(counter)


def test_integer_like_counts_are_accepted() -> None:
    item = item_from_text("x", counter=FixedCounter(np.int64(5)))
    assert item.tokens == 5
    assert type(item.tokens) is int


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (-1, "returned -1"),
        (2.0, r"returned 2\.0 \(float\)"),
        (True, r"returned True \(bool\)"),
        ("3", r"returned '3' \(str\)"),
        (None, r"returned None \(NoneType\)"),
    ],
)
def test_bad_counts_name_the_counter_and_the_value(value: object, shown: str) -> None:
    with pytest.raises(TokenizerError, match=rf"^FixedCounter\(\): {shown}") as info:
        item_from_text("text", counter=FixedCounter(value))
    assert info.value.counter == "FixedCounter()"
    with pytest.raises(TokenizerError, match=rf"^FixedCounter\(\): {shown} for texts\[1\]"):
        items_from_texts(["a", "b"], counter=FixedCounter(1, batch=[1, value]))


def test_wrong_batch_length_or_type() -> None:
    with pytest.raises(TokenizerError, match="count_batch returned 1 counts for 2 texts"):
        items_from_texts(["a", "b"], counter=FixedCounter(1, batch=[1]))
    with pytest.raises(TokenizerError, match="count_batch returned 7; it must return a list"):
        items_from_texts(["a", "b"], counter=FixedCounter(1, batch=7))


def test_counter_must_be_a_counter() -> None:
    with pytest.raises(TokenizerError, match="item_from_text: counter: must be a token counter"):
        item_from_text("x", counter=len)  # type: ignore[arg-type]
    with pytest.raises(TokenizerError, match="items_from_texts: counter: must be a token"):
        items_from_texts(["x"], counter="tiktoken")  # type: ignore[arg-type]


def test_text_validation() -> None:
    with pytest.raises(ItemValidationError, match="text: must be a non-empty string, got ''"):
        item_from_text("")
    with pytest.raises(ItemValidationError, match="text: must be a non-empty string, got 5"):
        item_from_text(5)  # type: ignore[arg-type]
    with pytest.raises(ItemValidationError, match=r"texts\[1\]: must be a non-empty string"):
        items_from_texts(["ok", ""])
    with pytest.raises(ItemValidationError, match="texts: must be an iterable of strings"):
        items_from_texts("one text")


def test_field_validation() -> None:
    with pytest.raises(ItemValidationError, match="tokens: is set from the text and the counter"):
        item_from_text("x", tokens=3)  # type: ignore[call-arg]
    with pytest.raises(ItemValidationError, match="content: is set from the text"):
        items_from_texts(["x"], content="y")  # type: ignore[call-arg]
    with pytest.raises(ItemValidationError, match="colour: is not a ContextItem field"):
        item_from_text("x", colour="red")  # type: ignore[call-arg]
    # Values are validated by ContextItem itself.
    with pytest.raises(ItemValidationError, match="priority: must be an integer"):
        item_from_text("x", priority="high")  # type: ignore[arg-type]


def test_counter_is_not_called_when_fields_are_invalid() -> None:
    counter = WordCounter()
    with pytest.raises(ItemValidationError):
        items_from_texts(["a"], counter=counter, colour="red")  # type: ignore[call-arg]
    with pytest.raises(ItemValidationError):
        items_from_texts(["a", ""], counter=counter)
    assert counter.batches == []


@pytest.mark.parametrize(
    "module", [pycupel.tokens, base, cache, heuristic, hf_counter, items, tiktoken_counter]
)
def test_docstring_examples(module: object) -> None:
    if module is hf_counter:
        pytest.importorskip("tokenizers")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)  # type: ignore[arg-type]
    assert result.failed == 0
