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
    # One awaited call for the history's distinct texts, one for its shorter versions'.
    assert len(counter.calls) == 2
    assert all(len(call) == len(set(call)) for call in counter.calls)
    assert not set(counter.calls[0]) & set(counter.calls[1])


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


def _plain_turns(count: int) -> list[tuple[str, str]]:
    words = ("ferry", "harbour", "lantern", "orchard", "glacier")
    words += ("summit", "compass", "ridge", "museum", "ticket")
    roles = ("user", "assistant")
    return [
        (roles[turn % 2], " ".join(words[(turn + k) % 10] for k in range(12)))
        for turn in range(count)
    ]


def _summary_cases() -> dict[str, tuple[Any, Any, list[Any], dict[str, Any]]]:
    from pycupel.adapters import gemini, responses

    return {
        "openai": (openai.afit_messages, openai.fit_messages, openai_history(120), {}),
        "anthropic": (
            anthropic.afit_messages,
            anthropic.fit_messages,
            anthropic_history(60),
            {"system": "Be brief."},
        ),
        "responses": (
            responses.afit_messages,
            responses.fit_messages,
            [{"role": role, "content": text} for role, text in _plain_turns(60)],
            {"instructions": "Be brief."},
        ),
        "gemini": (
            gemini.afit_messages,
            gemini.fit_messages,
            [
                {"role": "user" if role == "user" else "model", "parts": [{"text": text}]}
                for role, text in _plain_turns(60)
            ],
            {"system_instruction": "Be brief."},
        ),
    }


@pytest.mark.parametrize("name", ["openai", "anthropic", "responses", "gemini"])
def test_async_fit_awaits_a_coroutine_summarizer_once(name: str) -> None:
    afit, fit, history, options = _summary_cases()[name]
    calls: list[list[Any]] = []

    async def summarize(dropped: list[Any], previous: str | None) -> str:
        await asyncio.sleep(0)
        calls.append(dropped)
        return f"{len(dropped)} earlier messages"

    fitted = asyncio.run(
        afit(history, budget=500, counter=AsyncWordCounter(), summarize=summarize, **options)
    )
    assert len(calls) == 1
    expected = fit(
        history,
        budget=500,
        counter=WordCounter(),
        summarize=lambda dropped, previous: f"{len(dropped)} earlier messages",
        **options,
    )
    assert tuple(fitted)[:-1] == tuple(expected)[:-1]  # the same window (reports aside)
    assert f"{len(calls[0])} earlier messages" in str(fitted)
    # Every dropped message is one of the history's own, not in the window.
    assert all(any(m is d for m in history) for d in calls[0])


def test_async_fit_reports_a_failing_summarizer_by_its_name_or_skips_it() -> None:
    from pycupel.errors import SummarizerError

    history = openai_history(120)

    async def broken_summary(dropped: list[Any], previous: str | None) -> str:
        raise RuntimeError("offline")

    with pytest.raises(SummarizerError, match="broken_summary"):
        asyncio.run(
            openai.afit_messages(
                history, budget=500, counter=AsyncWordCounter(), summarize=broken_summary
            )
        )
    fitted, _ = asyncio.run(
        openai.afit_messages(
            history,
            budget=500,
            counter=AsyncWordCounter(),
            summarize=broken_summary,
            on_summary_error="skip",
        )
    )
    expected, _ = openai.fit_messages(
        history,
        budget=500,
        counter=WordCounter(),
        summarize=broken_summary,
        on_summary_error="skip",
    )
    assert fitted == expected
    assert not any(str(m.get("content")).startswith("[Summary") for m in fitted)


@pytest.mark.parametrize("name", ["openai", "anthropic", "responses", "gemini", "langchain"])
def test_async_fit_options_are_exactly_the_fit_options(name: str) -> None:
    """``afit_messages`` takes its options through the adapter's ``FitOptions``: a keyword
    added to ``fit_messages`` and not to ``FitOptions`` (or the reverse) fails here."""
    import importlib
    import inspect

    adapter = importlib.import_module(f"pycupel.adapters.{name}")
    fit_keywords = {
        parameter.name
        for parameter in inspect.signature(adapter.fit_messages).parameters.values()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    } - {"counter"}
    options = adapter.FitOptions
    assert set(options.__required_keys__) | set(options.__optional_keys__) == fit_keywords
    assert set(options.__required_keys__) == {
        parameter.name
        for parameter in inspect.signature(adapter.fit_messages).parameters.values()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
        and parameter.default is inspect.Parameter.empty
    }


def test_async_fit_rejects_a_missing_or_unknown_keyword_before_counting() -> None:
    counter = AsyncWordCounter()
    history = [{"role": "user", "content": "hello"}]
    with pytest.raises(TypeError, match="budget"):
        asyncio.run(openai.afit_messages(history, counter=counter))  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="bugdet"):
        asyncio.run(openai.afit_messages(history, budget=100, bugdet=5, counter=counter))  # type: ignore[call-arg]
    assert counter.calls == []
