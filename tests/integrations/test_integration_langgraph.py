"""The pre-model hook inside LangGraph's prebuilt ReAct agent loop."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

pytest.importorskip("langgraph.prebuilt")

from agent_checks import assert_valid_langchain_input
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from lc_fakes import (
    ModelInputRecorder,
    ToolCallingFakeModel,
    station_alert,
    station_log,
    tool_script,
)

from pycupel.adapters import langchain as lc_adapter
from pycupel.diagnostics import SelectionReport
from pycupel.errors import PipelineConfigError
from pycupel.integrations.langgraph import ContextWindowHook

STATIONS = ("north", "south", "east", "west", "harbour")
BUDGET = 800


def react_agent(hook: ContextWindowHook) -> Any:
    from langgraph.prebuilt import create_react_agent

    model = ToolCallingFakeModel(messages=iter(tool_script(STATIONS)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # superseded by create_agent
        return create_react_agent(model, [station_log, station_alert], pre_model_hook=hook)


def question() -> dict[str, Any]:
    return {
        "messages": [
            SystemMessage("You report the weather from the station network."),
            HumanMessage("How is the weather at every station?"),
        ]
    }


@pytest.mark.parametrize("use_async", [False, True])
def test_react_agent_sees_valid_windows_and_keeps_its_state(use_async: bool) -> None:
    reports: list[SelectionReport] = []
    agent = react_agent(ContextWindowHook(budget=BUDGET, on_report=reports.append))
    recorder = ModelInputRecorder()
    config: Any = {"callbacks": [recorder]}
    if use_async:
        result = asyncio.run(agent.ainvoke(question(), config=config))
    else:
        result = agent.invoke(question(), config=config)
    history = result["messages"]
    assert history[-1].content == f"All {len(STATIONS)} stations are dry and calm."
    assert len(history) == 2 + 3 * len(STATIONS) + 1  # the hook never rewrote the state
    assert "llm_input_messages" not in result
    assert len(recorder.inputs) == len(reports) == len(STATIONS) + 1
    trimmed = 0
    for call, seen in enumerate(recorder.inputs):
        assert_valid_langchain_input(seen)
        assert lc_adapter.count_tokens(seen) <= BUDGET
        assert [m.content for m in seen[:2]] == [m.content for m in history[:2]]
        if call:
            assert isinstance(seen[-1], ToolMessage)
        trimmed += len(seen) < 2 + 3 * call
    assert trimmed > 0


def test_hook_reads_attribute_states_and_rejects_others() -> None:
    class State:
        def __init__(self) -> None:
            self.messages = [HumanMessage("hi")]

    hook = ContextWindowHook(budget=100)
    state = State()
    assert hook(state)["llm_input_messages"] == state.messages
    assert hook({"messages": state.messages})["llm_input_messages"] == state.messages
    with pytest.raises(PipelineConfigError, match="messages"):
        hook({"items": []})
    with pytest.raises(PipelineConfigError):
        ContextWindowHook(budget=0.5)  # type: ignore[arg-type]
