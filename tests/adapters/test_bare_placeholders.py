"""Bare placeholders: on a tight budget an old round sheds the assistant's words before its
call, so that every call stays visible, in every format."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from pycupel.adapters import anthropic, gemini, langchain, openai, responses

ROUNDS = 30
QUESTION = "Which host restarted the ledger service last night?"
RESTART = "02:14 ledger service restarted by the watchdog on node-7"


@dataclass(frozen=True)
class Round:
    narration: str
    call_id: str
    host: str
    output: str


def rounds() -> list[Round]:
    """Thirty narrated rounds of an ops agent, each returning a mid-size log; the log of
    node-7 holds the line the question asks about."""
    return [
        Round(
            narration=(
                f"Nothing conclusive on node-{n - 1} so far; next I will read the recent log "
                f"of node-{n} and compare its error rate with the hour before."
            ),
            call_id=f"call_{n}",
            host=f"node-{n}",
            output="\n".join(f"node-{n} heartbeat {k} ok, queue depth {k % 7}" for k in range(40))
            + (f"\n{RESTART}" if n == 7 else ""),
        )
        for n in range(ROUNDS)
    ]


SYSTEM = "You are an operations agent."


def as_openai(history: Sequence[Round]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for r in history:
        function = {"name": "tail_log", "arguments": json.dumps({"host": r.host})}
        messages.append(
            {
                "role": "assistant",
                "content": r.narration,
                "tool_calls": [{"id": r.call_id, "type": "function", "function": function}],
            }
        )
        messages.append({"role": "tool", "tool_call_id": r.call_id, "content": r.output})
    messages.append({"role": "user", "content": QUESTION})
    return messages


def as_anthropic(history: Sequence[Round]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Check the ledger hosts."}]
    for r in history:
        use = {"type": "tool_use", "id": r.call_id, "name": "tail_log", "input": {"host": r.host}}
        text = {"type": "text", "text": r.narration}
        messages.append({"role": "assistant", "content": [text, use]})
        result = {"type": "tool_result", "tool_use_id": r.call_id, "content": r.output}
        messages.append({"role": "user", "content": [result]})
    messages.append({"role": "user", "content": QUESTION})  # merged with the results on send
    return messages


def as_gemini(history: Sequence[Round]) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "Check the hosts."}]}]
    for r in history:
        call = {"name": "tail_log", "id": r.call_id, "args": {"host": r.host}}
        contents.append({"role": "model", "parts": [{"text": r.narration}, {"functionCall": call}]})
        response = {"name": "tail_log", "id": r.call_id, "response": {"output": r.output}}
        contents.append({"role": "user", "parts": [{"functionResponse": response}]})
    contents.append({"role": "user", "parts": [{"text": QUESTION}]})
    return contents


def as_langchain(history: Sequence[Round]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    messages: list[Any] = [SystemMessage(SYSTEM)]
    for r in history:
        call = {"name": "tail_log", "args": {"host": r.host}, "id": r.call_id}
        messages.append(AIMessage(r.narration, tool_calls=[call]))
        messages.append(ToolMessage(r.output, tool_call_id=r.call_id))
    messages.append(HumanMessage(QUESTION))
    return messages


def as_responses(history: Sequence[Round]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for r in history:
        items.append({"type": "message", "role": "assistant", "content": r.narration})
        arguments = json.dumps({"host": r.host})
        items.append(
            {
                "type": "function_call",
                "call_id": r.call_id,
                "name": "tail_log",
                "arguments": arguments,
            }
        )
        items.append({"type": "function_call_output", "call_id": r.call_id, "output": r.output})
    items.append({"role": "user", "content": QUESTION})
    return items


def _openai(messages: Any, budget: int | None) -> tuple[list[Any], int]:
    if budget is None:
        return messages, openai.count_tokens(messages)
    fitted, _ = openai.fit_messages(messages, budget=budget)
    openai.from_messages(fitted)  # valid: every call paired with its result
    return fitted, openai.count_tokens(fitted)


def _anthropic(messages: Any, budget: int | None) -> tuple[list[Any], int]:
    if budget is None:
        return messages, anthropic.count_tokens(messages, system=SYSTEM)
    fitted = anthropic.fit_messages(messages, system=SYSTEM, budget=budget)
    anthropic.from_messages(fitted.messages, system=fitted.system)
    return fitted.messages, anthropic.count_tokens(fitted.messages, system=fitted.system)


def _gemini(contents: Any, budget: int | None) -> tuple[list[Any], int]:
    if budget is None:
        return contents, gemini.count_tokens(contents, system_instruction=SYSTEM)
    fitted = gemini.fit_messages(contents, system_instruction=SYSTEM, budget=budget)
    gemini.from_messages(fitted.contents, system_instruction=fitted.system_instruction)
    tokens = gemini.count_tokens(fitted.contents, system_instruction=fitted.system_instruction)
    return fitted.contents, tokens


def _langchain(messages: Any, budget: int | None) -> tuple[list[Any], int]:
    if budget is None:
        return messages, langchain.count_tokens(messages)
    fitted, _ = langchain.fit_messages(messages, budget=budget)
    langchain.from_messages(fitted)
    return fitted, langchain.count_tokens(fitted)


def _responses(items: Any, budget: int | None) -> tuple[list[Any], int]:
    if budget is None:
        return items, responses.count_tokens(items, instructions=SYSTEM)
    fitted = responses.fit_messages(items, instructions=SYSTEM, budget=budget)
    responses.from_messages(fitted.input, instructions=fitted.instructions)
    return fitted.input, responses.count_tokens(fitted.input, instructions=fitted.instructions)


Fit = Callable[[Any, "int | None"], tuple[list[Any], int]]
FORMATS: dict[str, tuple[Callable[[Sequence[Round]], list[Any]], Fit]] = {
    "openai": (as_openai, _openai),
    "anthropic": (as_anthropic, _anthropic),
    "gemini": (as_gemini, _gemini),
    "langchain": (as_langchain, _langchain),
    "responses": (as_responses, _responses),
}


def text(message: Any) -> str:
    """Everything a message says, ids and arguments included."""
    if hasattr(message, "model_dump_json"):
        return str(message.model_dump_json())
    return json.dumps(message)


def call_ids(messages: Sequence[Any]) -> set[str]:
    return {r.call_id for r in rounds() if any(f'"{r.call_id}"' in text(m) for m in messages)}


@pytest.mark.parametrize("share", [10, 5, 3])
@pytest.mark.parametrize("provider", sorted(FORMATS))
def test_every_call_stays_visible_in_every_format(provider: str, share: int) -> None:
    # Thirty rounds of narrated calls and mid-size logs at a tenth, a fifth and a third of
    # the history: the placeholders, the excerpts and the whole units compete for the room,
    # and every call stays in a valid window within the budget.
    build, fit = FORMATS[provider]
    history = build(rounds())
    _, total = fit(history, None)
    fitted, tokens = fit(history, total // share)
    assert tokens <= total // share
    assert call_ids(fitted) == {r.call_id for r in rounds()}
    assert RESTART in "".join(map(text, fitted))


@pytest.mark.parametrize("provider", sorted(set(FORMATS) - {"responses"}))
def test_at_a_tenth_old_rounds_shed_the_words_before_their_calls(provider: str) -> None:
    # (In the Responses API the words are messages of their own, selected on their own.)
    build, fit = FORMATS[provider]
    history = build(rounds())
    _, total = fit(history, None)
    fitted, _ = fit(history, total // 10)
    joined = "".join(map(text, fitted))
    shed = [r for r in rounds() if r.narration not in joined]
    assert shed, "a tenth of the history holds no room for every round's words"
    assert all(f'"{r.call_id}"' in joined for r in shed)


def test_anthropic_sheds_only_the_text_beside_a_call() -> None:
    thinking = {"type": "thinking", "thinking": "The log first.", "signature": "sig"}
    use = {"type": "tool_use", "id": "t1", "name": "tail_log", "input": {}}
    words = {"type": "text", "text": "Reading the log."}
    codec = anthropic.CODEC
    assert codec.unnarrated([{"role": "assistant", "content": [thinking, words, use]}]) == [
        {"role": "assistant", "content": [thinking, use]}
    ]
    # No call, or no words beside it: nothing to shed.
    assert codec.unnarrated([{"role": "assistant", "content": [words]}]) is None
    assert codec.unnarrated([{"role": "assistant", "content": [thinking, use]}]) is None


def test_gemini_keeps_thoughts_and_signed_parts() -> None:
    call = {"functionCall": {"name": "tail_log", "args": {}}, "thoughtSignature": "c2ln"}
    thought = {"text": "Plan the check.", "thought": True}
    signed = {"text": "Reading the log.", "thoughtSignature": "c2ln"}
    words = {"text": "Reading the log now."}
    turn = {"role": "model", "parts": [thought, signed, words, call]}
    assert gemini.CODEC.unnarrated([turn]) == [{"role": "model", "parts": [thought, signed, call]}]
    assert gemini.CODEC.unnarrated([{"role": "model", "parts": [words]}]) is None


def test_langchain_and_openai_keep_the_calls_and_ids() -> None:
    from langchain_core.messages import AIMessage

    call = {"name": "tail_log", "args": {"host": "a"}, "id": "c1"}
    codec = langchain.LangChainCodec()
    shed = codec.unnarrated([AIMessage("Reading the log.", tool_calls=[call], id="m1")])
    assert shed is not None
    assert shed[0].content == ""
    assert (shed[0].tool_calls[0]["id"], shed[0].id) == ("c1", "m1")
    blocks = [{"type": "text", "text": "Reading."}, {"type": "tool_use", "id": "c1"}]
    shed = codec.unnarrated([AIMessage(blocks, tool_calls=[call])])
    assert shed is not None
    assert shed[0].content == [{"type": "tool_use", "id": "c1"}]
    function = {"name": "tail_log", "arguments": "{}"}
    message = {
        "role": "assistant",
        "content": "Reading the log.",
        "tool_calls": [{"id": "c1", "type": "function", "function": function}],
    }
    assert openai.CODEC.unnarrated([message]) == [{**message, "content": None}]
    assert message["content"] == "Reading the log."  # the caller's object is untouched


@pytest.mark.parametrize("slicer", ["optimal", "greedy"])
def test_a_policy_is_offered_the_bare_placeholders_too(slicer: str) -> None:
    from pycupel import ContextBudget, Pipeline
    from pycupel.placers import ChronologicalPlacer
    from pycupel.scorers import CompositeScorer, KindScorer, RecencyScorer
    from pycupel.slicers import GreedySlice, OptimalSlice

    history = as_openai(rounds())
    budget = openai.count_tokens(history) // 12  # the placeholders with their words overflow it
    pipeline = Pipeline(
        budget=ContextBudget(max_tokens=budget, target_tokens=budget),
        scorer=CompositeScorer([(RecencyScorer(), 3), (KindScorer(), 1)]),
        slicer=OptimalSlice() if slicer == "optimal" else GreedySlice(),
        placer=ChronologicalPlacer(),
    )
    fitted, report = openai.fit_messages(history, budget=budget, policy=pipeline, shrink=True)
    openai.from_messages(fitted)
    assert openai.count_tokens(fitted) <= budget
    units = [tuple(e.item.metadata["message_indices"]) for e in report.included]
    assert len(units) == len(set(units)), "at most one version of a unit is included"
    assert any(m.get("tool_calls") and m["content"] is None for m in fitted)
    assert call_ids(fitted) == {r.call_id for r in rounds()}
