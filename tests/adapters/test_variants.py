"""Shorter versions of units: tool-result placeholders and head + tail truncations."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from typing import Any

import pytest
from adapter_histories import WordCounter, shortened_copy

from pycupel.adapters import Shrink, anthropic, gemini, langchain, openai, responses, variant_name
from pycupel.conversation.versions import VARIANT_KEY
from pycupel.errors import PipelineConfigError
from pycupel.histories import AgentHistory, agent_history

SHARE = 0.15
"""The budget of the done-when checks: 15% of the history's tokens."""


def tool_call_ids(messages: Sequence[dict[str, Any]]) -> list[str]:
    return [call["id"] for m in messages for call in m.get("tool_calls") or ()]


def holds(messages: Sequence[Any], text: str) -> bool:
    return any(text in str(m.get("content") or "") for m in messages)


def fit_at_share(history: AgentHistory, **options: Any) -> tuple[list[Any], Any, int]:
    budget = int(openai.count_tokens(history.messages) * SHARE)
    fitted, report = openai.fit_messages(history.messages, budget=budget, **options)
    return fitted, report, budget


# --------------------------------------------------------------------------- done when


HISTORIES = [(seed, ask) for seed in range(3) for ask in ("old", "recent")]


@pytest.mark.parametrize(("seed", "ask"), HISTORIES)
def test_at_15_percent_every_tool_call_stays_visible_in_a_valid_window(seed: int, ask: str) -> None:
    history = agent_history(turns=200, seed=seed, ask=ask)  # type: ignore[arg-type]
    fitted, report, budget = fit_at_share(history)
    # Valid: re-parsing pairs every call with its result; within the budget.
    openai.from_messages(fitted)
    assert openai.count_tokens(fitted) <= budget
    # Every call of the history is still there, its result whole or shortened.
    assert tool_call_ids(fitted) == tool_call_ids(history.messages)
    placeholders = [m for m in fitted if str(m.get("content")).startswith("[result cleared:")]
    assert placeholders, "the history does not fit whole: older results are placeholders"
    assert all(m["role"] == "tool" for m in placeholders)
    # The report names the version of every included unit, and only shortened units differ.
    names = [variant_name(entry.item) for entry in report.included]
    assert names.count("placeholder") == len(placeholders)
    assert report.total_candidates == len(openai.from_messages(history.messages))


def test_at_15_percent_fact_recall_is_not_lower_with_placeholders() -> None:
    with_placeholders = without = 0
    for seed, ask in HISTORIES:
        history = agent_history(turns=200, seed=seed, ask=ask)  # type: ignore[arg-type]
        with_placeholders += holds(fit_at_share(history)[0], history.answer)
        without += holds(fit_at_share(history, shrink=False)[0], history.answer)
    assert with_placeholders >= without
    assert with_placeholders == len(HISTORIES)


def test_a_history_that_fits_comes_back_as_given() -> None:
    history = agent_history(turns=20, seed=1)
    budget = openai.count_tokens(history.messages)
    fitted, report = openai.fit_messages(history.messages, budget=budget)
    assert all(a is b for a, b in zip(fitted, history.messages, strict=True))
    assert {variant_name(entry.item) for entry in report.included} == {"full"}


# --------------------------------------------------------------------------- the report


def test_the_report_names_each_version_and_the_unit_it_stands_for() -> None:
    history = agent_history(turns=60, seed=2)
    fitted, report, _ = fit_at_share(history)
    units = openai.from_messages(history.messages)
    shortened = {
        tuple(entry.item.metadata["message_indices"]): entry
        for entry in report.included
        if variant_name(entry.item) != "full"
    }
    assert shortened
    for indices, entry in shortened.items():
        unit = next(u for u in units if u.message_indices == indices)
        assert entry.item.metadata[VARIANT_KEY] == f"message-unit:{indices[0]}"
        assert entry.item.tokens < unit.item.tokens
        assert entry.item.kind == unit.item.kind
        # The version's messages are in the output: the call as given, the result shortened.
        result = history.messages[indices[-1]]
        copy = next(m for m in fitted if m.get("tool_call_id") == result["tool_call_id"])
        assert shortened_copy(copy, result)
        assert history.messages[indices[0]] in fitted
    # Every unit is accounted for once, and the window's tokens are the report's.
    assert report.total_candidates == len(units)
    assert sum(e.item.tokens for e in report.included) + 3 == openai.count_tokens(fitted)


# --------------------------------------------------------------------------- options


def test_shrink_false_keeps_or_drops_units_whole() -> None:
    history = agent_history(turns=60, seed=4)
    fitted, report, _ = fit_at_share(history, shrink=False)
    assert all(any(m is original for original in history.messages) for m in fitted)
    assert {variant_name(entry.item) for entry in report.included} == {"full"}


def test_exclude_tools_are_never_shortened() -> None:
    history = agent_history(turns=60, seed=5)
    tools = {
        call["id"]: call["function"]["name"]
        for m in history.messages
        for call in m.get("tool_calls") or ()
    }
    fitted, _, _ = fit_at_share(history, shrink=Shrink(exclude_tools={"read_file", "run_query"}))
    kept = {m["tool_call_id"]: m for m in fitted if m["role"] == "tool"}
    originals = {m["tool_call_id"]: m for m in history.messages if m["role"] == "tool"}
    assert any(tools[call] not in ("read_file", "run_query") for call in kept)
    for call, message in kept.items():
        if tools[call] in ("read_file", "run_query"):
            assert message is originals[call]


def test_keep_whole_never_shortens_the_newest_results() -> None:
    history = agent_history(turns=60, seed=6)
    newest = [m for m in history.messages if m["role"] == "tool"][-4:]
    fitted, _, _ = fit_at_share(history, shrink=Shrink(keep_whole=4))
    for message in newest:
        assert not any(shortened_copy(m, message) for m in fitted)


def test_placeholders_off_keeps_a_long_result_as_head_and_tail() -> None:
    log = "\n".join(f"{n:04d} INFO step {n} finished with status ok" for n in range(300))
    call = {"id": "c1", "type": "function", "function": {"name": "read_log", "arguments": "{}"}}
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "read the log"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": log},
        {"role": "user", "content": "did step 299 finish?"},
    ]
    # Head + tail truncation, asked for (excerpts are the default way to cut a result).
    shrink = Shrink(placeholders=False, excerpts=False, truncate=True)
    fitted, report = openai.fit_messages(messages, budget=600, shrink=shrink)
    openai.from_messages(fitted)
    assert openai.count_tokens(fitted) <= 600
    result = fitted[-2]
    assert result["tool_call_id"] == "c1"
    head, _, rest = result["content"].partition("\n[... ")
    elided, _, tail = rest.partition(" tokens elided ...]\n")
    assert log.startswith(head)
    assert log.endswith(tail)
    assert "0299 INFO step 299" in tail
    assert int(elided.replace(",", "")) > 0
    assert [variant_name(e.item) for e in report.included].count("truncated") == 1


def test_long_plain_messages_get_an_excerpt_keeping_what_the_question_asks() -> None:
    long_text = "\n".join(f"line {n} of a long pasted log with some words" for n in range(400))
    long_text += "\nline 400: the deploy token is TOK-7781, keep it safe"
    long_text += "\n" + "\n".join(f"line {n} of a long pasted log" for n in range(401, 600))
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": long_text},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "what was the deploy token in that paste?"},
    ]
    fitted, report = openai.fit_messages(messages, budget=700)
    assert [m["role"] for m in fitted] == ["system", "user", "assistant", "user"]
    excerpt = fitted[1]["content"]
    assert "TOK-7781" in excerpt  # the line the question needs, from the middle
    assert excerpt.startswith("line 0 of")  # the opening lines, for orientation
    assert re.search(r"\[\.\.\. [\d,]+ lines \([\d,]+ tokens\) elided \.\.\.\]", excerpt)
    assert variant_name(report.included[1].item) == "excerpt"
    assert openai.count_tokens(fitted) <= 700
    # Sized to the room: the window uses the budget, it does not stop at a fixed size.
    assert openai.count_tokens(fitted) >= 0.9 * 700


def test_shrink_must_be_a_shrink_a_bool_or_none() -> None:
    with pytest.raises(PipelineConfigError, match="shrink"):
        openai.fit_messages([{"role": "user", "content": "hi"}], budget=100, shrink="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"keep_whole": -1}, "shrink.keep_whole"),
        ({"truncate_to": 0}, "shrink.truncate_to"),
        ({"placeholder_share": 1.5}, "shrink.placeholder_share"),
        ({"exclude_tools": "read_file"}, "shrink.exclude_tools"),
        ({"exclude_tools": ["read_file", ""]}, "shrink.exclude_tools"),
        ({"placeholders": 1}, "shrink.placeholders"),
    ],
)
def test_invalid_shrink_options_raise(options: dict[str, Any], field: str) -> None:
    with pytest.raises(PipelineConfigError, match=field.replace(".", r"\.")):
        Shrink(**options)


def test_async_fit_shrinks_like_the_sync_fit() -> None:
    class AsyncWords:
        async def count_batch(self, texts: Sequence[str]) -> list[int]:
            return WordCounter().count_batch(texts)

    history = agent_history(turns=40, seed=8)
    budget = int(openai.count_tokens(history.messages, counter=WordCounter()) * SHARE)
    expected = openai.fit_messages(history.messages, budget=budget, counter=WordCounter())
    fitted = asyncio.run(
        openai.afit_messages(history.messages, budget=budget, counter=AsyncWords())
    )
    assert fitted.messages == expected.messages
    assert any("[result cleared:" in str(m.get("content")) for m in fitted.messages)


# --------------------------------------------------------------------------- every format


def as_anthropic(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages[1:]:
        if m.get("tool_calls"):
            call = m["tool_calls"][0]
            block = {
                "type": "tool_use",
                "id": call["id"],
                "name": call["function"]["name"],
                "input": json.loads(call["function"]["arguments"]),
            }
            out.append({"role": "assistant", "content": [block]})
        elif m["role"] == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": m["tool_call_id"],
                "content": m["content"],
            }
            out.append({"role": "user", "content": [block]})
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


def as_responses(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages[1:]:
        if m.get("tool_calls"):
            call = m["tool_calls"][0]
            out.append(
                {
                    "type": "function_call",
                    "call_id": call["id"],
                    "name": call["function"]["name"],
                    "arguments": call["function"]["arguments"],
                }
            )
        elif m["role"] == "tool":
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": m["tool_call_id"],
                    "output": m["content"],
                }
            )
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


def as_gemini(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for m in messages[1:]:
        if m.get("tool_calls"):
            call = m["tool_calls"][0]
            names[call["id"]] = call["function"]["name"]
            body = {
                "name": call["function"]["name"],
                "id": call["id"],
                "args": json.loads(call["function"]["arguments"]),
            }
            out.append({"role": "model", "parts": [{"functionCall": body}]})
        elif m["role"] == "tool":
            body = {
                "name": names[m["tool_call_id"]],
                "id": m["tool_call_id"],
                "response": {"output": m["content"]},
            }
            out.append({"role": "user", "parts": [{"functionResponse": body}]})
        else:
            role = "model" if m["role"] == "assistant" else "user"
            out.append({"role": role, "parts": [{"text": m["content"]}]})
    return out


def as_langchain(messages: Sequence[dict[str, Any]]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[Any] = []
    for m in messages:
        if m["role"] == "system":
            out.append(SystemMessage(m["content"]))
        elif m.get("tool_calls"):
            call = m["tool_calls"][0]
            out.append(
                AIMessage(
                    "",
                    tool_calls=[
                        {
                            "name": call["function"]["name"],
                            "args": json.loads(call["function"]["arguments"]),
                            "id": call["id"],
                        }
                    ],
                )
            )
        elif m["role"] == "tool":
            out.append(ToolMessage(m["content"], tool_call_id=m["tool_call_id"]))
        elif m["role"] == "user":
            out.append(HumanMessage(m["content"]))
        else:
            out.append(AIMessage(m["content"]))
    return out


def result_ids(fitted: Sequence[Any], provider: str) -> tuple[list[str], list[str]]:
    """(ids of the calls, ids of the placeholder results) in a fitted history."""
    calls: list[str] = []
    cleared: list[str] = []
    for m in fitted:
        if provider == "anthropic":
            for block in m["content"] if isinstance(m["content"], list) else ():
                if block["type"] == "tool_use":
                    calls.append(block["id"])
                elif str(block.get("content")).startswith("[result cleared:"):
                    cleared.append(block["tool_use_id"])
        elif provider == "responses":
            if m.get("type") == "function_call":
                calls.append(m["call_id"])
            elif str(m.get("output")).startswith("[result cleared:"):
                cleared.append(m["call_id"])
        elif provider == "gemini":
            for part in m["parts"]:
                if "functionCall" in part:
                    calls.append(part["functionCall"]["id"])
                response = part.get("functionResponse")
                if response and str(response["response"].get("result")).startswith(
                    "[result cleared:"
                ):
                    cleared.append(response["id"])
        else:
            calls.extend(call["id"] for call in getattr(m, "tool_calls", None) or ())
            if str(m.content).startswith("[result cleared:"):
                cleared.append(m.tool_call_id)
    return calls, cleared


def test_placeholders_keep_the_result_ids_in_every_format() -> None:
    history = agent_history(turns=200, seed=9)
    system = history.messages[0]["content"]
    every_call = tool_call_ids(history.messages)
    cases: list[tuple[str, Any]] = []

    converted = as_anthropic(history.messages)
    budget = int(anthropic.count_tokens(converted, system=system) * SHARE)
    fitted = anthropic.fit_messages(converted, system=system, budget=budget)
    anthropic.from_messages(fitted.messages, system=fitted.system)
    assert anthropic.count_tokens(fitted.messages, system=fitted.system) <= budget
    cases.append(("anthropic", fitted.messages))

    items = as_responses(history.messages)
    budget = int(responses.count_tokens(items, instructions=system) * SHARE)
    fitted_r = responses.fit_messages(items, instructions=system, budget=budget)
    responses.from_messages(fitted_r.input, instructions=fitted_r.instructions)
    assert responses.count_tokens(fitted_r.input, instructions=fitted_r.instructions) <= budget
    cases.append(("responses", fitted_r.input))

    contents = as_gemini(history.messages)
    budget = int(gemini.count_tokens(contents, system_instruction=system) * SHARE)
    fitted_g = gemini.fit_messages(contents, system_instruction=system, budget=budget)
    gemini.from_messages(fitted_g.contents, system_instruction=fitted_g.system_instruction)
    assert (
        gemini.count_tokens(fitted_g.contents, system_instruction=fitted_g.system_instruction)
        <= budget
    )
    cases.append(("gemini", fitted_g.contents))

    lc = as_langchain(history.messages)
    budget = int(langchain.count_tokens(lc) * SHARE)
    fitted_lc, _ = langchain.fit_messages(lc, budget=budget)
    langchain.from_messages(fitted_lc)
    assert langchain.count_tokens(fitted_lc) <= budget
    cases.append(("langchain", fitted_lc))

    for provider, fitted_messages in cases:
        calls, cleared = result_ids(fitted_messages, provider)
        assert cleared, provider
        assert set(cleared) <= set(calls), provider
        # Placeholders cost more in some formats (per-block overheads): nearly every call
        # stays visible all the same.
        assert len(calls) >= 0.9 * len(every_call), provider


# --------------------------------------------------------------------------- a given policy


@pytest.mark.parametrize("slicer", ["optimal", "greedy"])
def test_a_policy_chooses_among_the_versions_at_most_one_per_unit(slicer: str) -> None:
    from pycupel import ContextBudget, Pipeline
    from pycupel.placers import ChronologicalPlacer
    from pycupel.scorers import CompositeScorer, KindScorer, RecencyScorer
    from pycupel.slicers import GreedySlice, OptimalSlice

    history = agent_history(turns=30, seed=12)
    budget = int(openai.count_tokens(history.messages) * SHARE)
    pipeline = Pipeline(
        budget=ContextBudget(max_tokens=budget, target_tokens=budget),
        scorer=CompositeScorer([(RecencyScorer(), 3), (KindScorer(), 1)]),
        slicer=OptimalSlice() if slicer == "optimal" else GreedySlice(),
        placer=ChronologicalPlacer(),
    )
    fitted, report = openai.fit_messages(
        history.messages, budget=budget, policy=pipeline, shrink=True
    )
    openai.from_messages(fitted)
    assert openai.count_tokens(fitted) <= budget
    units = [tuple(e.item.metadata["message_indices"]) for e in report.included]
    assert len(units) == len(set(units)), "at most one version of a unit is included"
    names = [variant_name(e.item) for e in report.included]
    assert "placeholder" in names
    # Off by default with a policy: units are kept whole or dropped.
    plain, _ = openai.fit_messages(history.messages, budget=budget, policy=pipeline)
    assert all(any(m is original for original in history.messages) for m in plain)
