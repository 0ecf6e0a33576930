"""The Agents SDK filter and session inside real ``Runner`` runs with the SDK's scripted model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from pycupel.adapters import responses
from pycupel.diagnostics import SelectionReport
from pycupel.errors import MessageFormatError, PipelineConfigError
from pycupel.integrations._window import WindowSettings
from pycupel.integrations.openai_agents import (
    ContextWindowFilter,
    ContextWindowSession,
    count_tokens,
    fit_items,
)
from pycupel.session import SessionReport

STATIONS = ("north", "south", "east", "west", "harbour", "airport")
INSTRUCTIONS = "You report the weather from the station network."
BUDGET = 900


@function_tool
def station_log(station: str) -> str:
    """Read a weather station's hourly log (long)."""
    return "\n".join(f"{station} hour {hour}: 14 C, wind 12 km/h, dry" for hour in range(24))


@function_tool
def station_alert(station: str) -> str:
    """The current alert of a weather station (short)."""
    return f"{station}: no alert"


def script(stations: tuple[str, ...], answer: str) -> list[Any]:
    steps: list[Any] = []
    for number, station in enumerate(stations):
        steps.append(
            [
                function_call("station_log", {"station": station}, call_id=f"{answer}-l{number}"),
                function_call("station_alert", {"station": station}, call_id=f"{answer}-a{number}"),
            ]
        )
    steps.append([assistant_message(answer)])
    return steps


def agent(model: ScriptedModel) -> Agent[Any]:
    return Agent(
        name="weather", instructions=INSTRUCTIONS, model=model, tools=[station_log, station_alert]
    )


def assert_valid_items(items: list[Any], instructions: str | None = None) -> None:
    """Every call answered, every output called (the Responses adapter re-reads them)."""
    units = responses.from_messages(items, instructions=instructions)
    assert items
    first = items[0]
    assert first.get("type", "message") == "message"  # never an output or a lone call first
    assert len(units.units) >= 1


def assert_valid_call(call: Any, budget: int) -> None:
    assert call.system_instructions == INSTRUCTIONS
    assert isinstance(call.input, list)
    assert_valid_items(call.input, call.system_instructions)
    assert count_tokens(call.input, instructions=call.system_instructions) <= budget


def test_filter_fits_every_model_call_of_a_run() -> None:
    model = ScriptedModel(script(STATIONS, "All dry."))
    reports: list[SelectionReport] = []
    config = RunConfig(
        call_model_input_filter=ContextWindowFilter(budget=BUDGET, on_report=reports.append),
        tracing_disabled=True,
    )
    result = Runner.run_sync(
        agent(model), "How is the weather at every station?", run_config=config
    )
    assert result.final_output == "All dry."
    full = result.to_input_list()
    assert count_tokens(full, instructions=INSTRUCTIONS) > 3 * BUDGET
    assert len(model.calls) == len(reports) == len(STATIONS) + 1
    trimmed = 0
    for number, call in enumerate(model.calls):
        assert_valid_call(call, BUDGET)
        assert call.input[0]["content"] == "How is the weather at every station?"
        if number:
            assert call.input[-1]["type"] == "function_call_output"
        trimmed += len(call.input) < 1 + 4 * number
    assert trimmed > 0


def test_session_keeps_the_history_and_returns_a_window() -> None:
    async def conversation() -> tuple[ContextWindowSession, list[ScriptedModel]]:
        session = ContextWindowSession("trip-1", budget=BUDGET)
        models = []
        for turn, stations in enumerate((STATIONS[:2], STATIONS[2:4], STATIONS[4:])):
            model = ScriptedModel(script(stations, f"answer {turn}"))
            models.append(model)
            config = RunConfig(
                call_model_input_filter=ContextWindowFilter(budget=BUDGET + 600),
                tracing_disabled=True,
            )
            result = await Runner.run(
                agent(model), f"Turn {turn}: check {stations}", session=session, run_config=config
            )
            assert result.final_output == f"answer {turn}"
        return session, models

    session, models = asyncio.run(conversation())
    stored = asyncio.run(session.all_items())
    # Every item of every turn is stored: 3 questions, 6 x (2 calls + 2 outputs), 3 answers.
    assert len(stored) == 3 + 4 * len(STATIONS) + 3
    window = asyncio.run(session.get_items())
    assert len(window) < len(stored)
    assert count_tokens(window) <= BUDGET
    assert_valid_items(window)
    assert window[-1] is stored[-1] or window[-1] == stored[-1]
    assert asyncio.run(session.get_items(limit=2)) == stored[-2:]
    for model in models:
        for call in model.calls:
            assert_valid_call(call, BUDGET + 600)
    # The third run started from a fitted history, not from the whole stored conversation.
    first_input = models[2].calls[0].input
    assert count_tokens(first_input) < count_tokens(stored[: -(3 + 4 * 2)]) + 200


def test_session_over_another_store() -> None:
    async def scenario() -> tuple[list[Any], list[Any]]:
        store = SQLiteSession("trip-2")
        session = ContextWindowSession("trip-2", budget=300, store=store)
        model = ScriptedModel(script(STATIONS[:3], "done"))
        config = RunConfig(tracing_disabled=True)
        await Runner.run(agent(model), "Check three stations", session=session, run_config=config)
        stored = await store.get_items()
        window = await session.get_items()
        popped = await session.pop_item()
        assert popped == stored[-1]
        await session.clear_session()
        assert await session.all_items() == []
        return stored, window

    stored, window = asyncio.run(scenario())
    assert len(stored) == 1 + 4 * 3 + 1
    assert count_tokens(window) <= 300 < count_tokens(stored)


def test_parallel_calls_and_reasoning_stay_one_unit() -> None:
    items: list[Any] = [
        {"role": "user", "content": "hi"},
        {"type": "reasoning", "id": "rs1", "summary": []},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "b", "output": "B " * 200},
        {
            "type": "function_call_output",
            "call_id": "a",
            "output": [{"type": "input_text", "text": "A"}],
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ok"}],
        },
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "and?"},
                {"type": "input_image", "image_url": "x"},
            ],
        },
    ]
    units = responses.from_messages(items, instructions="be brief")
    spans = [unit.message_indices for unit in units.units]
    assert spans == [(), (0,), (1, 2, 3, 4, 5), (6,), (7,)]
    whole = count_tokens(items, instructions="be brief")
    fitted = fit_items(items, WindowSettings(budget=whole), instructions="be brief")
    assert fitted.items == items
    # One token short: something leaves, but the reasoning, both calls and both outputs
    # are one unit (kept or dropped together), and the latest user turn always stays.
    fitted = fit_items(items, WindowSettings(budget=whole - 1), instructions="be brief")
    assert len(fitted.items) < len(items)
    assert fitted.items[-1] is items[7]
    unit = [id(item) for item in items[1:6]]
    kept = [id(item) for item in fitted.items if id(item) in unit]
    assert kept in ([], unit)
    positions = [next(i for i, x in enumerate(items) if x is item) for item in fitted.items]
    assert positions == sorted(positions)


@pytest.mark.parametrize(
    "items",
    [
        [{"type": "function_call_output", "call_id": "zz", "output": "x"}],
        [{"role": "robot", "content": "x"}],
        ["not an item"],
        [{"type": "function_call", "call_id": "", "name": "f", "arguments": "{}"}],
    ],
)
def test_malformed_items_raise(items: list[Any]) -> None:
    with pytest.raises(MessageFormatError):
        fit_items(items, WindowSettings(budget=100))


def test_bad_settings_fail_at_construction() -> None:
    with pytest.raises(PipelineConfigError):
        ContextWindowFilter(budget=-5)
    with pytest.raises(PipelineConfigError):
        ContextWindowSession("s", budget=100, store=object())  # type: ignore[arg-type]
    with pytest.raises(PipelineConfigError):
        ContextWindowSession(3, budget=100)  # type: ignore[arg-type]


def test_session_windows_extend_each_other_and_unanswered_calls_are_left_out() -> None:
    reports: list[Any] = []

    async def scenario() -> list[list[Any]]:
        session = ContextWindowSession("trip-3", budget=BUDGET, on_report=reports.append)
        windows = []
        for turn, stations in enumerate((STATIONS[:1], STATIONS[1:2], STATIONS[2:3])):
            model = ScriptedModel(script(stations, f"answer {turn}"))
            config = RunConfig(tracing_disabled=True)
            await Runner.run(agent(model), f"Turn {turn}", session=session, run_config=config)
            windows.append(await session.get_items())
        # A run stopped between a call and its output.
        await session.add_items(
            [{"type": "function_call", "call_id": "cut", "name": "station_log", "arguments": "{}"}]
        )
        windows.append(await session.get_items())
        return windows

    windows = asyncio.run(scenario())
    appended = [r for r in reports if isinstance(r, SessionReport) and r.cache_break is None]
    assert appended
    assert all(item.get("call_id") != "cut" for item in windows[-1])
    assert isinstance(reports[-1], SelectionReport)
    assert reports[-1].exclusion_counts().get("Filtered") == 1
