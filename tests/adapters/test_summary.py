"""summarize=: a summary of what a fit left out, right after the system prompt."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pycupel.adapters import anthropic, langchain, openai
from pycupel.conversation.summary import SUMMARY_MARK
from pycupel.errors import PipelineConfigError, SummarizerError
from pycupel.histories import agent_history

HISTORY = agent_history(turns=40, seed=11)
BUDGET = openai.count_tokens(HISTORY.messages) // 5


class Recorder:
    """A deterministic summarizer: names the tools whose results it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[Any], str | None]] = []

    def __call__(self, dropped: list[Any], previous: str | None) -> str:
        self.calls.append((dropped, previous))
        tools = sorted({m["tool_call_id"] for m in dropped if m.get("role") == "tool"})
        return f"{len(dropped)} messages; tool results {', '.join(tools[:3])}"


def test_the_summary_of_what_was_dropped_sits_right_after_the_system_prompt() -> None:
    summarize = Recorder()
    fitted, report = openai.fit_messages(HISTORY.messages, budget=BUDGET, summarize=summarize)
    assert len(summarize.calls) == 1
    dropped, previous = summarize.calls[0]
    assert previous is None
    # It was given the original messages the fit left out or shortened, in order.
    positions = [next(i for i, m in enumerate(HISTORY.messages) if m is d) for d in dropped]
    assert positions == sorted(positions)
    assert all(not any(m is d for m in fitted) for d in dropped)
    kept = [m for m in HISTORY.messages if any(m is f for f in fitted)]
    assert len(kept) + len(dropped) == len(HISTORY.messages)
    # One marked user message right after the system prompt, within the budget.
    assert fitted[0] is HISTORY.messages[0]
    assert fitted[1] == {"role": "user", "content": f"{SUMMARY_MARK}\n{summarize(dropped, None)}"}
    assert sum(str(m.get("content")).startswith(SUMMARY_MARK) for m in fitted) == 1
    openai.from_messages(fitted)
    assert openai.count_tokens(fitted) <= BUDGET
    assert report.total_candidates == len(openai.from_messages(HISTORY.messages))


def test_nothing_dropped_calls_no_summarizer() -> None:
    summarize = Recorder()
    budget = openai.count_tokens(HISTORY.messages) * 2
    fitted, _ = openai.fit_messages(HISTORY.messages, budget=budget, summarize=summarize)
    assert summarize.calls == []
    assert all(a is b for a, b in zip(fitted, HISTORY.messages, strict=True))


def test_a_coroutine_summarizer_is_awaited() -> None:
    async def summarize(dropped: list[Any], previous: str | None) -> str:
        await asyncio.sleep(0)
        return f"{len(dropped)} earlier messages"

    fitted, _ = openai.fit_messages(HISTORY.messages, budget=BUDGET, summarize=summarize)
    assert fitted[1]["content"].startswith(f"{SUMMARY_MARK}\n")
    assert fitted[1]["content"].endswith("earlier messages")


def test_a_coroutine_summarizer_inside_a_running_loop_fails_clearly() -> None:
    async def summarize(dropped: list[Any], previous: str | None) -> str:
        return "never"

    async def main() -> None:
        with pytest.raises(SummarizerError, match="running event loop") as caught:
            openai.fit_messages(HISTORY.messages, budget=BUDGET, summarize=summarize)
        assert "summarize" in caught.value.summarizer

    asyncio.run(main())


def test_a_failing_summarizer_raises_naming_it_unless_skipped() -> None:
    def flaky_summary(dropped: list[Any], previous: str | None) -> str:
        raise TimeoutError("model did not answer")

    with pytest.raises(SummarizerError, match="flaky_summary") as caught:
        openai.fit_messages(HISTORY.messages, budget=BUDGET, summarize=flaky_summary)
    assert caught.value.summarizer.endswith("flaky_summary")
    assert caught.value.dropped > 0
    assert caught.value.detail == "TimeoutError: model did not answer"
    assert isinstance(caught.value.__cause__, TimeoutError)

    fitted, _ = openai.fit_messages(
        HISTORY.messages, budget=BUDGET, summarize=flaky_summary, on_summary_error="skip"
    )
    assert not any(str(m.get("content")).startswith(SUMMARY_MARK) for m in fitted)
    assert openai.count_tokens(fitted) <= BUDGET


@pytest.mark.parametrize(
    ("result", "detail"),
    [(None, "returned NoneType"), ("word " * 2_000, "more than the")],
)
def test_a_summary_that_is_not_text_or_too_long_fails(result: object, detail: str) -> None:
    def summarize(dropped: list[Any], previous: str | None) -> object:
        return result

    with pytest.raises(SummarizerError, match=detail):
        openai.fit_messages(HISTORY.messages, budget=BUDGET, summarize=summarize)  # type: ignore[arg-type]
    fitted, _ = openai.fit_messages(
        HISTORY.messages,
        budget=BUDGET,
        summarize=summarize,  # type: ignore[arg-type]
        on_summary_error="skip",
    )
    assert openai.count_tokens(fitted) <= BUDGET


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"summarize": "summarise please"}, "summarize"),
        ({"summarize": Recorder(), "on_summary_error": "ignore"}, "on_summary_error"),
    ],
)
def test_invalid_summary_options_raise(options: dict[str, Any], field: str) -> None:
    with pytest.raises(PipelineConfigError, match=field):
        openai.fit_messages(HISTORY.messages, budget=BUDGET, **options)


def test_anthropic_and_langchain_summaries_open_the_history() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    plain = [m for m in HISTORY.messages[1:] if m["role"] in ("user", "assistant") and m["content"]]
    chat = [{"role": m["role"], "content": m["content"]} for m in plain]
    budget = anthropic.count_tokens(chat, system="sys") // 4
    system, messages, _ = anthropic.fit_messages(
        chat, system="sys", budget=budget, summarize=lambda dropped, previous: "earlier turns"
    )
    assert messages[0] == {"role": "user", "content": f"{SUMMARY_MARK}\nearlier turns"}
    assert anthropic.count_tokens(messages, system=system) <= budget

    lc = [SystemMessage("sys")] + [
        HumanMessage(m["content"]) if m["role"] == "user" else AIMessage(m["content"])
        for m in plain
    ]
    budget = langchain.count_tokens(lc) // 4
    fitted, _ = langchain.fit_messages(
        lc, budget=budget, summarize=lambda dropped, previous: f"{len(dropped)} turns"
    )
    assert isinstance(fitted[0], SystemMessage)
    assert isinstance(fitted[1], HumanMessage)
    assert fitted[1].content.startswith(SUMMARY_MARK)
    assert langchain.count_tokens(fitted) <= budget
