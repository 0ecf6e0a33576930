"""Session.afit in every adapter: the same windows as fit, only new texts counted, awaited."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

import pytest
from test_session_budget import ADAPTERS, Event

from pycupel.errors import MessageFormatError, PipelineConfigError
from pycupel.session import read_usage
from pycupel.tokens import HeuristicCounter

SCRIPT: list[Event] = [
    ("user", 30),
    ("tools", 12, ((4, 80), (2, 40))),
    ("assistant", 60),
    ("user", 25),
    ("tools", 0, ((3, 120),)),
    ("assistant", 90),
    ("user", 40),
    ("assistant", 70),
    ("user", 20),
] * 3


class AsyncCounter:
    """An asynchronous counter (a count-tokens endpoint, say) over a local heuristic."""

    def __init__(self) -> None:
        self.inner = HeuristicCounter()
        self.batches: list[list[str]] = []

    async def count_batch(self, texts: Sequence[str]) -> list[int]:
        await asyncio.sleep(0)  # a real suspension point, as a network call has
        self.batches.append(list(texts))
        return self.inner.count_batch(texts)


def afit(name: str, session: Any, messages: list[Any], system: object, counter: Any) -> Any:
    if name in {"openai", "langchain"}:
        return session.afit(messages, counter=counter)
    if name == "anthropic":
        return session.afit(messages, system=system, counter=counter)
    if name == "responses":
        return session.afit(messages, instructions=system, counter=counter)
    return session.afit(messages, system_instruction=system, counter=counter)


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_afit_gives_the_windows_of_fit_and_counts_each_text_once(name: str) -> None:
    if name == "langchain":
        pytest.importorskip("langchain_core")
    adapter = ADAPTERS[name]
    system, turns = adapter.build(SCRIPT, random.Random(5), True)
    synchronous = adapter.session(700, 4)
    asynchronous = adapter.session(700, 4)
    counter = AsyncCounter()

    async def run() -> None:
        compacted = 0
        for turn in turns:
            expected = adapter.fit(synchronous, turn.messages, system)
            got = await afit(name, asynchronous, turn.messages, system, counter)
            assert got.messages == expected.messages
            assert (got.tokens, got.cached_tokens) == (expected.tokens, expected.cached_tokens)
            assert got.report.cache_break == expected.report.cache_break
            compacted += got.compacted
        assert compacted >= 1

    asyncio.run(run())
    # One awaited call per turn, and only for what the turn added: never a text twice.
    assert len(counter.batches) <= len(turns)
    every = [text for batch in counter.batches for text in batch]
    assert len(every) <= len(turns[-1].messages) * 2 + 1  # texts and names, plus the system


@pytest.mark.parametrize("name", ["openai", "gemini"])
def test_afit_after_an_edit_counts_only_the_edited_part(name: str) -> None:
    adapter = ADAPTERS[name]
    system, turns = adapter.build(SCRIPT, random.Random(9), False)
    history = list(turns[-1].messages)
    session = adapter.session(2_000, 4)
    counter = AsyncCounter()
    asyncio.run(afit(name, session, history, system, counter))
    edited = list(history)
    position = len(history) - 3
    edited[position] = history[-1]  # a different message in an earlier place
    counter.batches.clear()
    window = asyncio.run(afit(name, session, edited, system, counter))
    assert window.report.edited_at == position
    assert sum(len(batch) for batch in counter.batches) <= 6  # the re-read tail only


def test_afit_refuses_a_sync_counter_and_reports_parse_errors_before_awaiting() -> None:
    adapter = ADAPTERS["openai"]
    session = adapter.session(500, 4)
    with pytest.raises(PipelineConfigError, match="count_batch must be a coroutine"):
        asyncio.run(session.afit([{"role": "user", "content": "hi"}], counter=HeuristicCounter()))
    counter = AsyncCounter()
    with pytest.raises(MessageFormatError):
        asyncio.run(session.afit([{"role": "nobody", "content": "hi"}], counter=counter))
    assert counter.batches == []


def test_gemini_usage_metadata_is_read() -> None:
    snake = read_usage({"prompt_token_count": 120, "cached_content_token_count": 100})
    camel = read_usage({"promptTokenCount": 120, "cachedContentTokenCount": 100})
    assert snake == camel
    assert (snake.prompt_tokens, snake.cache_read_tokens) == (120, 100)
