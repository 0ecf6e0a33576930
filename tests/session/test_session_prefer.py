"""``prefer="recall"``: a question the window cannot serve as well as a fresh fit is served by
a one-off request, and the session goes back to its cached window on the next turn."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from session_histories import chat_turns

from pycupel.adapters import anthropic, openai
from pycupel.errors import SessionConfigError

FACTS = {
    7: "The spare key for the boathouse is under the blue flowerpot by the shed.",
    19: "Our landlord Mr. Okafor said the boiler service is booked for March 14.",
    33: "My sister's flight to Lisbon lands at 6:40 in the morning on Friday.",
}
QUESTIONS = {
    7: "Where is the spare key for the boathouse?",
    19: "When is the boiler service booked with Mr. Okafor?",
    33: "When does my sister's flight to Lisbon land?",
}


def conversation(turns: int = 70) -> list[dict[str, Any]]:
    """A chat with three facts planted early, OpenAI-shaped, ending on an assistant turn."""
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are a kind assistant."}]
    for turn, (user, assistant) in enumerate(chat_turns(turns, seed=11)):
        if turn in FACTS:
            history.append({"role": "user", "content": f"Note this: {FACTS[turn]}"})
        else:
            history.append(user)
        history.append(assistant)
    return history


def holds(messages: list[Any], text: str) -> bool:
    return text in json.dumps(messages)


def test_prefer_is_validated() -> None:
    with pytest.raises(SessionConfigError) as caught:
        openai.Session(budget=2_000, prefer="speed")  # type: ignore[arg-type]
    assert caught.value.field == "prefer"
    assert caught.value.value == "speed"
    with pytest.raises(SessionConfigError, match="prefer"):
        openai.Session(budget=2_000, prefer=["recall"])  # type: ignore[arg-type]


def test_recall_serves_a_question_as_a_fresh_fit_then_returns_to_the_cached_window() -> None:
    budget = 1_200
    history = conversation()
    pristine = copy.deepcopy(history)
    cost = openai.Session(budget=budget)
    recall = openai.Session(budget=budget, prefer="recall")
    for end in range(2, len(history) + 1):
        if history[end - 1]["role"] == "user":
            cost.fit(history[:end])
            recall.fit(history[:end])
    served = 0
    for turn, question in QUESTIONS.items():
        asked = [*history, {"role": "user", "content": question}]
        fresh = openai.fit_messages(asked, budget=budget).messages
        window = recall.fit(asked)
        cached = cost.fit(asked)
        assert openai.count_tokens(window.messages) <= budget
        openai.from_messages(window.messages)  # valid
        if window.report.cache_break == "fresh-fit":
            served += 1
            # The one-off request holds what the fresh fit holds for the question.
            assert holds(window.messages, FACTS[turn]) == holds(fresh, FACTS[turn])
            assert window.report.recall_messages  # the strong matches the window lacked
        assert holds(window.messages, FACTS[turn]) or not holds(fresh, FACTS[turn])
        # prefer="cost" never sends a one-off request.
        assert cached.report.cache_break != "fresh-fit"
        answered = [*asked, {"role": "assistant", "content": "Let me think."}]
        history = answered
    assert served  # at least one question needed the fresh fit
    assert history[: len(pristine)] == pristine


def test_the_turn_after_a_one_off_extends_the_cached_window() -> None:
    budget = 1_200
    history = conversation()
    session = anthropic.Session(budget=budget, prefer="recall")
    messages = history[1:]  # the system prompt goes beside the messages
    system = history[0]["content"]
    windows = []
    for end in range(1, len(messages) + 1):
        if messages[end - 1]["role"] == "user":
            windows.append(session.fit(messages[:end], system=system))
    before = windows[-1]
    asked = [*messages, {"role": "user", "content": QUESTIONS[7]}]
    one_off = session.fit(asked, system=system)
    assert one_off.report.cache_break == "fresh-fit"
    # Only the system prompt (and the cached prefix it opens with, if any) is marked.
    text = json.dumps(one_off.messages)
    assert text.count('"cache_control"') <= 1
    assert not holds(one_off.messages[-1:], "cache_control")
    after = session.fit(
        [
            *asked,
            {"role": "assistant", "content": "Under the flowerpot."},
            {"role": "user", "content": "Okay."},
        ],
        system=system,
    )
    assert after.report.cache_break != "fresh-fit"
    # The next window goes back to the cached prefix: it opens as the window before did.
    stable = before.report.stable_messages
    plain = [json.dumps(_plain(m)) for m in after.messages[:stable]]
    assert plain == [json.dumps(_plain(m)) for m in before.messages[:stable]]
    assert after.cached_tokens > 0
    assert anthropic.count_tokens(after.messages, system=after.system) <= budget


def _plain(message: Any) -> Any:
    content = message["content"]
    if isinstance(content, list):
        blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in content]
        if len(blocks) == 1 and set(blocks[0]) == {"type", "text"}:
            return {**message, "content": blocks[0]["text"]}
        return {**message, "content": blocks}
    return message


def test_recall_records_usage_of_one_offs_without_breaking_the_budget() -> None:
    budget = 900
    history = conversation(90)
    session = openai.Session(budget=budget, prefer="recall")
    one_offs = 0
    for end in range(2, len(history) + 1):
        if history[end - 1]["role"] != "user":
            continue
        asked = history[:end]
        if end > 40 and end % 5 == 0:
            asked = [*asked[:-1], {"role": "user", "content": QUESTIONS[19]}]
        window = session.fit(asked)
        one_offs += window.report.cache_break == "fresh-fit"
        counted = openai.count_tokens(window.messages)
        assert counted <= budget
        # The provider counts 10 % more than the estimate: the session follows it.
        session.record_usage({"prompt_tokens": counted * 11 // 10})
    assert one_offs


def test_a_history_that_fits_needs_no_one_off() -> None:
    history = conversation(12)
    session = openai.Session(budget=50_000, prefer="recall")
    asked = [*history, {"role": "user", "content": QUESTIONS[7]}]
    window = session.fit(asked)
    assert window.report.cache_break == "first"
    assert window.messages == asked


BOATHOUSE = {
    2: "The boathouse roof was repaired in May by the Larsen brothers.",
    4: "We painted the boathouse door green last summer, the boathouse looks new.",
    29: "The spare key for the boathouse is under the blue flowerpot by the shed.",
    32: "The boathouse canoe has a crack near the bow, keep the boathouse locked.",
    38: "My neighbour keeps his kayak in our boathouse in winter.",
    44: "The boathouse light switch is behind the life jackets.",
}


def test_a_window_lacking_strong_matches_the_fresh_fit_holds_is_not_sent() -> None:
    # Six notes match the question; the window holds the best of them (its recall zone),
    # and a fresh fit of the budget holds most of the others. Weighed by what the fresh
    # fit holds that the window lacks (not by the window's share of the two totals), the
    # question gets the one-off request.
    budget = 900
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are a kind assistant."}]
    for turn, (user, assistant) in enumerate(chat_turns(70, seed=10)):
        if turn in BOATHOUSE:
            history.append({"role": "user", "content": f"Note this: {BOATHOUSE[turn]}"})
        elif turn == 64:
            history.append({"role": "user", "content": "Turn 64: the boathouse dock again?"})
        else:
            history.append(user)
        history.append(assistant)
    cost = openai.Session(budget=budget)
    recall = openai.Session(budget=budget, prefer="recall")
    for end in range(2, len(history) + 1):
        if history[end - 1]["role"] == "user":
            for session in (cost, recall):
                window = session.fit(history[:end])
                session.record_usage({"prompt_tokens": openai.count_tokens(window.messages)})
    asked = [*history, {"role": "user", "content": "Where is the spare key for the boathouse?"}]
    fresh = openai.fit_messages(asked, budget=budget).messages
    cached = cost.fit(asked)
    window = recall.fit(asked)
    notes = list(BOATHOUSE.values())
    in_fresh = [note for note in notes if holds(fresh, note)]
    in_cached = [note for note in notes if holds(cached.messages, note)]
    assert len(in_cached) < len(in_fresh)  # what the window alone would send
    assert window.report.cache_break == "fresh-fit"
    assert all(holds(window.messages, note) for note in in_fresh)
    assert openai.count_tokens(window.messages) <= budget
