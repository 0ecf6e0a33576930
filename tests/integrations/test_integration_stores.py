"""The integrations with ``store=``: the framework's own conversation id is the key, and an
agent served by several workers (here, several integration objects sharing one SQLite file,
a random one taking each model call) sees exactly the windows of one worker without a
store."""

from __future__ import annotations

import asyncio
import random
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from pycupel.errors import PipelineConfigError
from pycupel.session import SQLiteStore

STATIONS = ("north", "south", "east", "west", "harbour", "airport")
BUDGET = 900
SYSTEM = "You report the weather from the station network."


def _contents(inputs: Sequence[Sequence[Any]]) -> list[list[tuple[str, str]]]:
    return [[(type(m).__name__, str(m.content)) for m in seen] for seen in inputs]


# --------------------------------------------------------------------------- LangChain


def test_langchain_middleware_on_several_workers(tmp_path: Path) -> None:
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from lc_fakes import (
        ModelInputRecorder,
        ToolCallingFakeModel,
        station_alert,
        station_log,
        tool_script,
    )

    from pycupel.integrations.langchain import ContextWindowMiddleware

    class AnyWorker(AgentMiddleware):  # type: ignore[misc]
        """Each model call to a random worker's middleware."""

        def __init__(self, workers: list[ContextWindowMiddleware]) -> None:
            super().__init__()
            self.workers = workers
            self.rng = random.Random(3)

        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            return self.rng.choice(self.workers).wrap_model_call(request, handler)

    def run(middleware: AgentMiddleware) -> list[Any]:
        agent = create_agent(
            ToolCallingFakeModel(messages=iter(tool_script(STATIONS))),
            [station_log, station_alert],
            system_prompt=SYSTEM,
            middleware=[middleware],
            checkpointer=InMemorySaver(),
        )
        recorder = ModelInputRecorder()
        agent.invoke(
            {"messages": [HumanMessage("How is the weather at every station?")]},
            config={"configurable": {"thread_id": "thread-7"}, "callbacks": [recorder]},
        )
        return recorder.inputs

    store = SQLiteStore(tmp_path / "sessions.db")
    expected = run(ContextWindowMiddleware(budget=BUDGET))
    got = run(AnyWorker([ContextWindowMiddleware(budget=BUDGET, store=store) for _ in range(3)]))
    assert _contents(got) == _contents(expected)
    assert len(got) == len(STATIONS) + 1
    assert store.load("thread-7") is not None  # the thread id is the key
    with pytest.raises(PipelineConfigError, match="store"):
        ContextWindowMiddleware(budget=BUDGET, store="sessions.db")  # type: ignore[arg-type]
    with pytest.raises(PipelineConfigError, match="store: needs unanswered_tool_calls='error'"):
        ContextWindowMiddleware(budget=BUDGET, store=store, unanswered_tool_calls="drop")


def test_langgraph_hook_on_several_workers(tmp_path: Path) -> None:
    pytest.importorskip("langgraph.prebuilt")
    from langchain_core.messages import HumanMessage, SystemMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import create_react_agent
    from lc_fakes import (
        ModelInputRecorder,
        ToolCallingFakeModel,
        station_alert,
        station_log,
        tool_script,
    )

    from pycupel.integrations.langgraph import ContextWindowHook

    def run(hook: Callable[[Any], Any]) -> list[Any]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # superseded by create_agent
            agent = create_react_agent(
                ToolCallingFakeModel(messages=iter(tool_script(STATIONS))),
                [station_log, station_alert],
                pre_model_hook=hook,
                checkpointer=InMemorySaver(),
            )
        recorder = ModelInputRecorder()
        state = {"messages": [SystemMessage(SYSTEM), HumanMessage("Weather everywhere?")]}
        agent.invoke(
            state, config={"configurable": {"thread_id": "graph-3"}, "callbacks": [recorder]}
        )
        return recorder.inputs

    store = SQLiteStore(tmp_path / "sessions.db")
    hooks = [ContextWindowHook(budget=BUDGET, store=store) for _ in range(3)]
    rng = random.Random(4)
    expected = run(ContextWindowHook(budget=BUDGET))

    def any_worker(state: Any) -> Any:  # each model call to a random worker's hook
        return rng.choice(hooks)(state)

    got = run(any_worker)
    assert _contents(got) == _contents(expected)
    assert store.load("graph-3") is not None


# --------------------------------------------------------------------------- OpenAI Agents SDK


def test_agents_sdk_session_on_several_workers(tmp_path: Path) -> None:
    pytest.importorskip("agents")
    from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool
    from agents.testing import ScriptedModel, assistant_message, function_call

    from pycupel.integrations.openai_agents import ContextWindowSession

    @function_tool
    def station_log(station: str) -> str:
        """Read a weather station's hourly log (long)."""
        return "\n".join(f"{station} hour {hour}: 14 C, wind 12 km/h, dry" for hour in range(24))

    def script(stations: Sequence[str], answer: str) -> list[Any]:
        steps: list[Any] = [
            [function_call("station_log", {"station": s}, call_id=f"{answer}-{n}")]
            for n, s in enumerate(stations)
        ]
        return [*steps, [assistant_message(answer)]]

    async def conversation(session: Callable[[], ContextWindowSession]) -> list[Any]:
        inputs = []
        for turn in range(4):
            model = ScriptedModel(script(STATIONS[turn : turn + 2], f"answer {turn}"))
            agent = Agent(name="weather", instructions=SYSTEM, model=model, tools=[station_log])
            await Runner.run(
                agent,
                f"Turn {turn}: how is it there?",
                session=session(),
                run_config=RunConfig(tracing_disabled=True),
            )
            inputs.extend(call.input for call in model.calls)
        return inputs

    reference = ContextWindowSession(
        "trip-9", budget=400, store=SQLiteSession("trip-9", str(tmp_path / "reference.db"))
    )
    expected = asyncio.run(conversation(lambda: reference))
    # Every run on a new object (a worker that never saw the conversation): the history in
    # a shared SDK session, the window's state in a pycupel store.
    history = SQLiteSession("trip-9", str(tmp_path / "history.db"))
    store = SQLiteStore(tmp_path / "state.db")
    got = asyncio.run(
        conversation(
            lambda: ContextWindowSession("trip-9", budget=400, store=history, state_store=store)
        )
    )
    assert got == expected
    assert any(len(call_input) < len(got[-1]) for call_input in got[1:])  # windows were fitted
    assert store.load("trip-9") is not None  # the SDK's session id is the key
    with pytest.raises(PipelineConfigError, match="store"):
        ContextWindowSession("trip-9", budget=400, state_store=object())  # type: ignore[arg-type]


# --------------------------------------------------------------------------- LlamaIndex


def test_llamaindex_memory_on_several_workers(tmp_path: Path) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.storage.chat_store import SimpleChatStore

    from pycupel.integrations.llamaindex import ContextWindowMemory

    store = SQLiteStore(tmp_path / "sessions.db")
    shared = SimpleChatStore()
    workers = [
        ContextWindowMemory.from_defaults(
            budget=400, chat_store=shared, chat_store_key="user-5", store=store
        )
        for _ in range(3)
    ]
    reference = ContextWindowMemory.from_defaults(
        budget=400, chat_store=SimpleChatStore(), chat_store_key="user-5"
    )
    rng = random.Random(2)
    compacted = 0
    for turn in range(14):
        question = ChatMessage(role="user", content=f"Question {turn}: " + "why " * 20)
        answer = ChatMessage(role="assistant", content="Because. " * 10)
        worker = rng.choice(workers)
        worker.put(question)
        reference.put(question)
        window = worker.get()
        expected = reference.get()
        assert [(m.role, m.content) for m in window] == [(m.role, m.content) for m in expected]
        compacted += len(window) < 2 * turn + 1
        worker.put(answer)
        reference.put(answer)
    assert compacted
    assert store.load("user-5") is not None  # the memory's chat_store_key is the key
