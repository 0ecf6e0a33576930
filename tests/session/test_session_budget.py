"""Every adapter's Session: no window over the budget, every window a valid history.

The histories are random scripts of user messages, assistant replies and tool rounds
(parallel calls included) of random sizes, grown turn by turn. A window must fit the budget
in the adapter's own count, re-parse as a complete history (no orphaned result, no unanswered
call) and keep the latest user message; when the session refuses a turn with
PinnedBudgetError, ``fit_messages`` must refuse the same history too (only the pinned system
prompt and latest user turn may be too large; a large turn after the user message never is).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pycupel.adapters import Shrink, anthropic, gemini, openai, responses
from pycupel.errors import PinnedBudgetError

VOCABULARY = (
    "garden", "lentil", "soup", "bicycle", "chain", "budget", "review", "train", "Lyon",
    "timetable", "volcano", "podcast", "seating", "plan", "invoice", "harbour", "lighthouse",
    "ferry", "museum", "ticket", "orchard", "cider", "tractor", "glacier", "summit", "ridge",
    "compass", "lantern",
)  # fmt: skip

# One event of a script: ("user", words), ("assistant", words) or
# ("tools", text words, ((argument words, result words), ...)).
Event = tuple[Any, ...]

events = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 60)),
    st.tuples(st.just("assistant"), st.integers(1, 120)),
    st.tuples(
        st.just("tools"),
        st.integers(0, 30),
        st.lists(st.tuples(st.integers(0, 20), st.integers(1, 160)), min_size=1, max_size=3),
    ),
)
scripts = st.tuples(
    st.lists(events, min_size=1, max_size=14),
    st.sampled_from((150, 300, 500, 900)),
    st.sampled_from((1, 4, 8)),
    st.booleans(),
    st.integers(0, 2**16),
)


def words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(count))


@dataclass(frozen=True)
class Turn:
    """A history that ends a step of the script (every tool call answered)."""

    messages: list[Any]
    latest_user: Any


@dataclass(frozen=True)
class Adapter:
    name: str
    build: Callable[[Sequence[Event], random.Random, bool], tuple[object, list[Turn]]]
    session: Callable[..., Any]
    fit: Callable[[Any, list[Any], object], Any]
    fit_messages: Callable[..., object]
    count: Callable[[Any], int]
    check: Callable[[Any], None]


ToolRound = Callable[[int, str, list[tuple[str, str]]], list[Any]]
"""``(event number, text, [(argument, result), ...]) -> the round's messages`` of a format."""


def grow(
    script: Sequence[Event],
    rng: random.Random,
    history: list[Any],
    *,
    user: Callable[[str], Any],
    assistant: Callable[[str], Any],
    tool_round: ToolRound,
) -> list[Turn]:
    """The turns of ``script`` in one format, each history grown from the previous one."""
    latest = history[-1]
    turns = [Turn(list(history), latest)]
    for number, event in enumerate(script):
        if event[0] == "user":
            latest = user(words(rng, event[1]))
            history.append(latest)
        elif event[0] == "assistant":
            history.append(assistant(words(rng, event[1])))
        else:
            _, text, calls = event
            text_words = words(rng, text)
            arguments = [words(rng, argument) for argument, _ in calls]
            results = [words(rng, result) for _, result in calls]
            history += tool_round(number, text_words, list(zip(arguments, results, strict=True)))
        turns.append(Turn(list(history), latest))
    return turns


def grow_chat(
    script: Sequence[Event], rng: random.Random, tool_round: ToolRound, *, system: bool = False
) -> list[Turn]:
    """:func:`grow` for the formats whose plain messages are ``{"role", "content"}`` mappings
    (Chat Completions, Anthropic, Responses), opening with a user message (after a system
    message when ``system``)."""
    history: list[Any] = [{"role": "system", "content": "You keep notes."}] if system else []
    history.append({"role": "user", "content": "Start: " + words(rng, 5)})
    return grow(
        script,
        rng,
        history,
        user=lambda text: {"role": "user", "content": text},
        assistant=lambda text: {"role": "assistant", "content": text},
        tool_round=tool_round,
    )


def openai_turns(
    script: Sequence[Event], rng: random.Random, with_system: bool
) -> tuple[object, list[Turn]]:
    def tool_round(number: int, text: str, calls: list[tuple[str, str]]) -> list[Any]:
        ids = [f"call_{number}_{k}" for k in range(len(calls))]
        call = {
            "role": "assistant",
            "content": text or None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "search", "arguments": f'{{"q": "{argument}"}}'},
                }
                for call_id, (argument, _) in zip(ids, calls, strict=True)
            ],
        }
        results = [
            {"role": "tool", "tool_call_id": call_id, "content": result}
            for call_id, (_, result) in zip(ids, calls, strict=True)
        ]
        return [call, *results]

    return None, grow_chat(script, rng, tool_round, system=with_system)


def anthropic_turns(
    script: Sequence[Event], rng: random.Random, with_system: bool
) -> tuple[object, list[Turn]]:
    def tool_round(number: int, text: str, calls: list[tuple[str, str]]) -> list[Any]:
        ids = [f"toolu_{number}_{k}" for k in range(len(calls))]
        blocks: list[Any] = [{"type": "text", "text": text}] if text else []
        blocks += [
            {"type": "tool_use", "id": call_id, "name": "search", "input": {"q": argument}}
            for call_id, (argument, _) in zip(ids, calls, strict=True)
        ]
        answers = [
            {"type": "tool_result", "tool_use_id": call_id, "content": result}
            for call_id, (_, result) in zip(ids, calls, strict=True)
        ]
        return [{"role": "assistant", "content": blocks}, {"role": "user", "content": answers}]

    return ("You keep notes." if with_system else None), grow_chat(script, rng, tool_round)


def langchain_turns(
    script: Sequence[Event], rng: random.Random, with_system: bool
) -> tuple[object, list[Turn]]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    system, dict_turns = openai_turns(script, rng, with_system)
    converted: dict[int, Any] = {}

    def convert(message: dict[str, Any]) -> Any:
        if id(message) not in converted:
            role = message["role"]
            if role == "system":
                converted[id(message)] = SystemMessage(message["content"])
            elif role == "user":
                converted[id(message)] = HumanMessage(message["content"])
            elif role == "tool":
                converted[id(message)] = ToolMessage(
                    message["content"], tool_call_id=message["tool_call_id"]
                )
            else:
                calls = [
                    {"name": c["function"]["name"], "args": {"q": c["id"]}, "id": c["id"]}
                    for c in message.get("tool_calls") or ()
                ]
                converted[id(message)] = AIMessage(message["content"] or "", tool_calls=calls)
        return converted[id(message)]

    turns = [Turn([convert(m) for m in t.messages], convert(t.latest_user)) for t in dict_turns]
    return system, turns


def responses_turns(
    script: Sequence[Event], rng: random.Random, with_system: bool
) -> tuple[object, list[Turn]]:
    def tool_round(number: int, text: str, calls: list[tuple[str, str]]) -> list[Any]:
        ids = [f"fc_{number}_{k}" for k in range(len(calls))]
        items: list[Any] = []
        if text:  # a reasoning item travels with the call after it
            items.append({"type": "reasoning", "summary": [{"type": "summary_text", "text": text}]})
        items += [
            {
                "type": "function_call",
                "call_id": call_id,
                "name": "search",
                "arguments": f'{{"q": "{argument}"}}',
            }
            for call_id, (argument, _) in zip(ids, calls, strict=True)
        ]
        items += [
            {"type": "function_call_output", "call_id": call_id, "output": result}
            for call_id, (_, result) in zip(ids, calls, strict=True)
        ]
        return items

    return ("You keep notes." if with_system else None), grow_chat(script, rng, tool_round)


def gemini_turns(
    script: Sequence[Event], rng: random.Random, with_system: bool
) -> tuple[object, list[Turn]]:
    def tool_round(number: int, text: str, calls: list[tuple[str, str]]) -> list[Any]:
        ids = [f"fn_{number}_{k}" for k in range(len(calls))]
        parts: list[Any] = [{"text": text}] if text else []
        parts += [
            {"functionCall": {"name": "search", "args": {"q": argument}, "id": call_id}}
            for call_id, (argument, _) in zip(ids, calls, strict=True)
        ]
        answers = [
            {"functionResponse": {"name": "search", "response": {"result": result}, "id": call_id}}
            for call_id, (_, result) in zip(ids, calls, strict=True)
        ]
        return [{"role": "model", "parts": parts}, {"role": "user", "parts": answers}]

    history: list[Any] = [{"role": "user", "parts": [{"text": "Start: " + words(rng, 5)}]}]
    turns = grow(
        script,
        rng,
        history,
        user=lambda text: {"role": "user", "parts": [{"text": text}]},
        assistant=lambda text: {"role": "model", "parts": [{"text": text}]},
        tool_round=tool_round,
    )
    return ("You keep notes." if with_system else None), turns


def check_responses(window: Any) -> None:
    responses.from_messages(window.messages, instructions=window.system)
    first = window.messages[0]
    assert first.get("type") in (None, "message")  # never a call output or a lone reasoning


def check_gemini(window: Any) -> None:
    gemini.from_messages(window.messages, system_instruction=window.system)
    assert window.messages[0]["role"] == "user"


def check_openai(window: Any) -> None:
    openai.from_messages(window.messages)  # raises on an orphaned result or unanswered call
    roles = [m["role"] for m in window.messages]
    assert "tool" not in roles[:1]


def check_anthropic(window: Any) -> None:
    anthropic.from_messages(window.messages, system=window.system)
    assert window.messages[0]["role"] == "user"


def check_langchain(window: Any) -> None:
    _langchain().from_messages(window.messages)
    assert window.messages[0].type != "tool"


def _langchain() -> Any:
    from pycupel.adapters import langchain

    return langchain


ADAPTERS = {
    "openai": Adapter(
        "openai",
        openai_turns,
        lambda budget, grid, **options: openai.Session(budget=budget, grid=grid, **options),
        lambda session, messages, system: session.fit(messages),
        lambda messages, system, budget, **options: openai.fit_messages(
            messages, budget=budget, **options
        ),
        lambda window: openai.count_tokens(window.messages),
        check_openai,
    ),
    "anthropic": Adapter(
        "anthropic",
        anthropic_turns,
        lambda budget, grid, **options: anthropic.Session(budget=budget, grid=grid, **options),
        lambda session, messages, system: session.fit(messages, system=system),
        lambda messages, system, budget, **options: anthropic.fit_messages(
            messages, system=system, budget=budget, **options
        ),
        lambda window: anthropic.count_tokens(window.messages, system=window.system),
        check_anthropic,
    ),
    "langchain": Adapter(
        "langchain",
        langchain_turns,
        lambda budget, grid, **options: _langchain().Session(budget=budget, grid=grid, **options),
        lambda session, messages, system: session.fit(messages),
        lambda messages, system, budget, **options: _langchain().fit_messages(
            messages, budget=budget, **options
        ),
        lambda window: _langchain().count_tokens(window.messages),
        check_langchain,
    ),
    "responses": Adapter(
        "responses",
        responses_turns,
        lambda budget, grid, **options: responses.Session(budget=budget, grid=grid, **options),
        lambda session, messages, system: session.fit(messages, instructions=system),
        lambda messages, system, budget, **options: responses.fit_messages(
            messages, instructions=system, budget=budget, **options
        ),
        lambda window: responses.count_tokens(window.messages, instructions=window.system),
        check_responses,
    ),
    "gemini": Adapter(
        "gemini",
        gemini_turns,
        lambda budget, grid, **options: gemini.Session(budget=budget, grid=grid, **options),
        lambda session, messages, system: session.fit(messages, system_instruction=system),
        lambda messages, system, budget, **options: gemini.fit_messages(
            messages, system_instruction=system, budget=budget, **options
        ),
        lambda window: gemini.count_tokens(window.messages, system_instruction=window.system),
        check_gemini,
    ),
}


def replay_and_check(
    adapter: Adapter,
    case: tuple[Sequence[Event], int, int, bool, int],
    *,
    options: dict[str, Any] | None = None,
    after: Callable[[Any, Turn], None] | None = None,
) -> None:
    script, budget, grid, with_system, seed = case
    system, turns = adapter.build(script, random.Random(seed), with_system)
    options = options or {}
    session = adapter.session(budget, grid, **options)
    # fit_messages keeps the same reserve for a summary as the session.
    summary_options = {"summarize": options["summarize"]} if "summarize" in options else {}
    for turn in turns:
        try:
            window = adapter.fit(session, turn.messages, system)
        except PinnedBudgetError:
            with pytest.raises(PinnedBudgetError):
                adapter.fit_messages(turn.messages, system, budget, **summary_options)
            continue
        if after is not None:
            after(window, turn)
        assert adapter.count(window) <= budget
        assert window.tokens <= budget
        adapter.check(window)
        assert any(message is turn.latest_user for message in window.messages) or (
            adapter.name == "anthropic"  # Anthropic windows hold copies carrying breakpoints
            and window.messages[-1]["role"] == "user"
        )


@pytest.mark.parametrize("name", sorted(ADAPTERS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=scripts)
def test_no_window_exceeds_the_budget_and_every_window_is_valid(
    name: str, case: tuple[list[Event], int, int, bool, int]
) -> None:
    if name == "langchain":
        pytest.importorskip("langchain_core")
    replay_and_check(ADAPTERS[name], case)


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_a_large_turn_after_the_user_message_never_exceeds_the_budget(name: str) -> None:
    """One user message, then six tool rounds of about 100 words each (about 700 tokens)."""
    if name == "langchain":
        pytest.importorskip("langchain_core")
    script: list[Event] = [("tools", 0, ((3, 100),)) for _ in range(6)]
    adapter = ADAPTERS[name]
    system, turns = adapter.build(script, random.Random(1), True)
    session = adapter.session(300, 8)
    for turn in turns:
        window = adapter.fit(session, turn.messages, system)
        assert adapter.count(window) <= 300
        adapter.check(window)
    # The whole turn does not fit: the newest rounds are kept, the older ones left out.
    assert window.report.dropped_units >= 4
    # The same six rounds issued as parallel calls form one unit too large to keep: it is
    # left out whole (never split), and the user message is still sent.
    parallel: list[Event] = [("tools", 0, tuple((3, 100) for _ in range(6)))]
    system, turns = adapter.build(parallel, random.Random(1), True)
    window = adapter.fit(adapter.session(300, 8), turns[-1].messages, system)
    assert adapter.count(window) <= 300
    adapter.check(window)
    assert window.report.dropped_units == 1


class SummaryLog:
    """A deterministic summarizer that records what each call was handed."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[Any], str | None, str]] = []

    def __call__(self, dropped: list[Any], previous: str | None) -> str:
        text = f"{len(dropped)} left ({len(self.calls) + 1})"
        self.calls.append((dropped, previous, text))
        return text


@pytest.mark.parametrize("name", sorted(ADAPTERS))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=scripts, variant=st.sampled_from(("placeholders", "summary", "both")))
def test_shrinking_and_summarising_sessions_stay_valid_and_within_budget(
    name: str, case: tuple[list[Event], int, int, bool, int], variant: str
) -> None:
    """Placeholders and truncations kept at compaction, a running summary after the system
    prompt: every window still fits, re-parses as a valid history and keeps the latest user
    message; the summarizer is called only on compacting turns, with messages of the
    history, each summarised once, and the summary it last produced passed back in."""
    if name == "langchain":
        pytest.importorskip("langchain_core")
    log = SummaryLog()
    options: dict[str, Any] = {}
    if variant in ("placeholders", "both"):
        options["shrink"] = Shrink(truncate_to=20, long_message=60)
    if variant in ("summary", "both"):
        # Small budgets leave a summary no room: it is then skipped, and tried again later.
        options.update(summarize=log, on_summary_error="skip")
    summarised: set[int] = set()
    installed: list[str | None] = [None]
    seen = 0

    def after(window: Any, turn: Turn) -> None:
        nonlocal seen
        new_calls = log.calls[seen:]
        seen = len(log.calls)
        assert len(new_calls) <= 1
        if not new_calls:
            return
        assert window.compacted
        dropped, previous, text = new_calls[0]
        assert previous == installed[-1]
        if text not in str(window.messages):
            return  # skipped: no room for it
        installed.append(text)
        own = {id(message) for message in turn.messages}
        for message in dropped:
            assert id(message) in own
            assert id(message) not in summarised
            summarised.add(id(message))

    replay_and_check(ADAPTERS[name], case, options=options, after=after)
