"""The LangChain middleware and Runnable inside LangChain's own agent loop and LCEL chains."""

from __future__ import annotations

import asyncio
import importlib
import sys
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from agent_checks import assert_valid_langchain_input
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from lc_fakes import (
    ModelInputRecorder,
    ToolCallingFakeModel,
    station_alert,
    station_log,
    tool_script,
)

from pycupel import ContextBudget
from pycupel.adapters import langchain as lc_adapter
from pycupel.diagnostics import SelectionReport
from pycupel.errors import IntegrationUnavailableError, PinnedBudgetError, PipelineConfigError
from pycupel.integrations.langchain import ContextWindowMiddleware, fit_runnable
from pycupel.session import SessionReport

STATIONS = ("north", "south", "east", "west", "harbour", "airport")
BUDGET = 900
SYSTEM = "You report the weather from the station network."


def run_agent(middleware: ContextWindowMiddleware, *, use_async: bool = False) -> tuple[Any, Any]:
    model = ToolCallingFakeModel(messages=iter(tool_script(STATIONS)))
    agent = create_agent(
        model, [station_log, station_alert], system_prompt=SYSTEM, middleware=[middleware]
    )
    recorder = ModelInputRecorder()
    state = {"messages": [HumanMessage("How is the weather at every station?")]}
    config: Any = {"callbacks": [recorder]}
    if use_async:
        result = asyncio.run(agent.ainvoke(state, config=config))
    else:
        result = agent.invoke(state, config=config)
    return result, recorder


def assert_windows(result: Any, recorder: ModelInputRecorder, budget: int) -> None:
    history = result["messages"]
    assert len(recorder.inputs) == len(STATIONS) + 1
    assert history[-1].content == f"All {len(STATIONS)} stations are dry and calm."
    # The whole history stays in the graph state: 1 question, 6 x (call + 2 results), answer.
    assert len(history) == 1 + 3 * len(STATIONS) + 1
    assert lc_adapter.count_tokens([SystemMessage(SYSTEM), *history]) > 3 * budget
    trimmed = 0
    for call, seen in enumerate(recorder.inputs):
        assert_valid_langchain_input(seen)
        assert lc_adapter.count_tokens(seen) <= budget
        assert seen[0].content == SYSTEM
        assert seen[1].content == history[0].content  # the pinned question
        state_before_call = 1 + 3 * call  # the question, then a call and two results per round
        trimmed += len(seen) - 1 < state_before_call
    # After a tool round the model always sees that round's results.
    for seen in recorder.inputs[1:]:
        assert isinstance(seen[-1], ToolMessage)
    assert trimmed > 0


def test_agent_model_always_sees_a_valid_window_within_budget() -> None:
    result, recorder = run_agent(ContextWindowMiddleware(budget=BUDGET))
    assert_windows(result, recorder, BUDGET)
    # Late calls saw fewer tool rounds than the state held.
    last = recorder.inputs[-1]
    assert sum(isinstance(m, AIMessage) for m in last) < len(STATIONS)


def test_async_agent_run() -> None:
    result, recorder = run_agent(ContextWindowMiddleware(budget=BUDGET), use_async=True)
    assert_windows(result, recorder, BUDGET)


def test_a_session_report_for_every_model_call_and_append_only_windows() -> None:
    reports: list[SessionReport] = []
    budget = ContextBudget(max_tokens=1_200, target_tokens=BUDGET)
    result, recorder = run_agent(ContextWindowMiddleware(budget=budget, on_report=reports.append))
    assert_windows(result, recorder, BUDGET)
    assert len(reports) == len(recorder.inputs)
    assert any(report.dropped_units for report in reports)
    assert any(report.compacted for report in reports)
    for report, seen in zip(reports, recorder.inputs, strict=True):
        assert report.window_messages == len(seen)  # the system message included
    # Between compactions each model input extends the previous one (the cached prefix).
    for before, report, seen in zip(
        recorder.inputs[:-1], reports[1:], recorder.inputs[1:], strict=True
    ):
        if report.cache_break is None:
            assert [id(m) for m in seen[: len(before)]] == [id(m) for m in before]


def test_each_thread_has_its_own_session() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    middleware = ContextWindowMiddleware(budget=BUDGET)
    reports: list[SessionReport] = []
    middleware.windows.on_report = reports.append  # type: ignore[union-attr]
    for thread in ("t1", "t2"):
        model = ToolCallingFakeModel(messages=iter(tool_script(STATIONS[:2])))
        agent = create_agent(
            model,
            [station_log, station_alert],
            system_prompt=SYSTEM,
            middleware=[middleware],
            checkpointer=InMemorySaver(),
        )
        agent.invoke(
            {"messages": [HumanMessage(f"Weather for {thread}?")]},
            config={"configurable": {"thread_id": thread}},
        )
    # Each thread's first model call is its session's first window.
    assert [report.turn for report in reports] == [1, 2, 3, 1, 2, 3]
    assert len(middleware.windows._pool) == 2  # type: ignore[union-attr]


def test_drop_mode_fits_statelessly_with_selection_reports() -> None:
    reports: list[SelectionReport] = []
    middleware = ContextWindowMiddleware(
        budget=BUDGET, unanswered_tool_calls="drop", on_report=reports.append
    )
    result, recorder = run_agent(middleware)
    assert_windows(result, recorder, BUDGET)
    assert len(reports) == len(recorder.inputs)
    assert any(report.excluded for report in reports)


def test_without_pressure_the_model_sees_everything() -> None:
    result, recorder = run_agent(ContextWindowMiddleware(budget=100_000))
    history = result["messages"]
    assert [m.content for m in recorder.inputs[-1][1:]] == [m.content for m in history[:-1]]


def test_pinned_messages_over_budget_raise() -> None:
    with pytest.raises(PinnedBudgetError):
        run_agent(ContextWindowMiddleware(budget=20))


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"budget": -1}, "budget"),
        ({"budget": "many"}, "budget"),
        ({"budget": 100, "policy": "chat"}, "policy"),
        ({"budget": 100, "counter": len}, "counter"),
        ({"budget": 100, "unanswered_tool_calls": "keep"}, "unanswered_tool_calls"),
        ({"budget": 100, "on_report": 3}, "on_report"),
    ],
)
def test_bad_settings_fail_at_construction(arguments: dict[str, Any], field: str) -> None:
    with pytest.raises(PipelineConfigError) as caught:
        ContextWindowMiddleware(**arguments)
    assert caught.value.field == field
    with pytest.raises(PipelineConfigError):
        fit_runnable(**arguments)


def test_runnable_in_an_lcel_chain() -> None:
    history: list[Any] = [HumanMessage("Read the north log.")]
    for number, station in enumerate(STATIONS):
        call_id = f"c{number}"
        history.append(
            AIMessage("", tool_calls=[{"name": "station_log", "args": {}, "id": call_id}])
        )
        history.append(ToolMessage(station_log.invoke({"station": station}), tool_call_id=call_id))
    history.append(HumanMessage("Summarise."))
    prompt = ChatPromptTemplate.from_messages([("system", SYSTEM), MessagesPlaceholder("history")])
    recorder = ModelInputRecorder()
    model = ToolCallingFakeModel(messages=iter([AIMessage("ok"), AIMessage("ok again")]))
    chain = prompt | fit_runnable(budget=BUDGET) | model
    assert chain.invoke({"history": history}, config={"callbacks": [recorder]}).content == "ok"
    answer = asyncio.run(chain.ainvoke({"history": history}, config={"callbacks": [recorder]}))
    assert answer.content == "ok again"
    for seen in recorder.inputs:
        assert_valid_langchain_input(seen)
        assert lc_adapter.count_tokens(seen) <= BUDGET < lc_adapter.count_tokens(history)
        assert seen[0].content == SYSTEM
        assert seen[-1].content == "Summarise."


def test_runnable_takes_a_plain_message_list() -> None:
    messages = [SystemMessage("s"), HumanMessage("a " * 400), AIMessage("b"), HumanMessage("c")]
    fitted = fit_runnable(budget=60).invoke(messages)
    assert fitted == [messages[0], messages[2], messages[3]]


def test_missing_framework_raises_integration_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain.agents.middleware", None)
    monkeypatch.delitem(sys.modules, "pycupel.integrations.langchain")
    with pytest.raises(IntegrationUnavailableError, match=r"pycupel\[langgraph\]"):
        importlib.import_module("pycupel.integrations.langchain")
