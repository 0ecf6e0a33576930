"""afit_messages: the adapters' fit with an asynchronous token counter."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from adapter_histories import WordCounter, anthropic_history, openai_history

from pycupel.adapters import anthropic, openai
from pycupel.errors import MessageFormatError, PipelineConfigError, TokenizerError
from pycupel.tokens.asynchronous import AsyncTokenCounter, PrecountedCounter, precount


class AsyncWordCounter:
    """Stands for a provider's count-tokens endpoint: awaited, records every call."""

    def __init__(self, *, wrong_length: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.wrong_length = wrong_length

    async def count_batch(self, texts: Sequence[str]) -> list[int]:
        await asyncio.sleep(0)
        self.calls.append(list(texts))
        counts = WordCounter().count_batch(texts)
        return counts[:-1] if self.wrong_length else counts


def test_openai_async_fit_equals_the_sync_fit() -> None:
    history = openai_history(120)
    counter = AsyncWordCounter()
    assert isinstance(counter, AsyncTokenCounter)
    fitted, report = asyncio.run(openai.afit_messages(history, budget=700, counter=counter))
    expected, expected_report = openai.fit_messages(history, budget=700, counter=WordCounter())
    assert fitted == expected
    assert [(e.item.content, e.item.tokens) for e in report.included] == [
        (e.item.content, e.item.tokens) for e in expected_report.included
    ]
    assert report.exclusion_counts() == expected_report.exclusion_counts()
    assert len(counter.calls) == 1  # one awaited call for every distinct text
    assert len(counter.calls[0]) == len(set(counter.calls[0]))


def test_anthropic_async_fit_keeps_its_options() -> None:
    history = anthropic_history(40)
    options: dict[str, Any] = {"system": "Be brief.", "budget": 400, "merge_consecutive": True}
    system, fitted, _ = asyncio.run(
        anthropic.afit_messages(history, counter=AsyncWordCounter(), **options)
    )
    expected_system, expected, _ = anthropic.fit_messages(history, counter=WordCounter(), **options)
    assert (system, fitted) == (expected_system, expected)


def test_langchain_async_fit() -> None:
    messages_module = pytest.importorskip("langchain_core.messages")
    from pycupel.adapters import langchain

    history = [
        messages_module.SystemMessage("Be brief."),
        *(messages_module.HumanMessage(f"turn {n} " + "word " * 30) for n in range(10)),
    ]
    fitted, _ = asyncio.run(
        langchain.afit_messages(history, budget=120, counter=AsyncWordCounter())
    )
    assert fitted == langchain.fit_messages(history, budget=120, counter=WordCounter()).messages


def test_a_bad_history_fails_before_the_counter_is_awaited() -> None:
    counter = AsyncWordCounter()
    with pytest.raises(MessageFormatError):
        asyncio.run(openai.afit_messages([{"role": "tool"}], budget=100, counter=counter))
    assert counter.calls == []


def test_counter_errors() -> None:
    history = openai_history(10)
    with pytest.raises(TokenizerError):
        asyncio.run(
            openai.afit_messages(history, budget=100, counter=AsyncWordCounter(wrong_length=True))
        )
    with pytest.raises(PipelineConfigError, match="coroutine"):
        asyncio.run(openai.afit_messages(history, budget=100, counter=WordCounter()))  # type: ignore[arg-type]
    with pytest.raises(PipelineConfigError):
        asyncio.run(precount(["a"], object()))  # type: ignore[arg-type]


def test_precounted_counter_refuses_unknown_texts() -> None:
    counter = asyncio.run(precount(["a b", "c", "a b"], AsyncWordCounter()))
    assert counter.count_batch(["c", "a b"]) == [1, 2]
    with pytest.raises(TokenizerError, match="no count"):
        counter.count("never counted")
    assert PrecountedCounter({}).count_batch([]) == []
