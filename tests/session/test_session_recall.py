"""The recall zone selects as ``fit_messages`` does (an answer comes back with the question
that matches), and a best match that does not fit it brings the compaction forward."""

from __future__ import annotations

from typing import Any

import pytest
from session_histories import chat_turns

from pycupel.adapters import openai
from pycupel.session import zones
from pycupel.session.recall import Recall

SYSTEM = {"role": "system", "content": "You are a patient assistant who keeps notes."}
QUESTION = {"role": "user", "content": "What name did we pick for the new puppy?"}
# The answer shares no word with the later question: only its neighbour (the question it
# answers) matches, so only structure-aware recall brings it back.
ANSWER = {"role": "assistant", "content": "You settled on Biscuit, after the colour of her ears."}


def grown(filler: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [SYSTEM, QUESTION, ANSWER]
    for user, assistant in chat_turns(filler, seed=11):
        history += [user, assistant]
    return history


def replay(session: openai.Session, history: list[dict[str, Any]]) -> None:
    for end in range(2, len(history) + 1):
        if history[end - 1]["role"] == "user":
            session.fit(history[:end])


def test_the_answer_comes_back_with_the_question_it_answers() -> None:
    session = openai.Session(budget=1_500)
    history = grown(40)
    replay(session, history)
    before = session.fit(history[:-1])
    assert ANSWER not in before.messages  # compacted away long ago
    history.append({"role": "user", "content": "Remind me: which name did the new puppy get?"})
    window = session.fit(history)
    assert ANSWER in window.messages
    assert history.index(ANSWER) in window.report.recall_messages
    assert window.messages.index(ANSWER) >= window.report.stable_messages
    assert window.messages[-1] is history[-1]
    assert openai.count_tokens(window.messages) <= 1_500


def big_fact() -> dict[str, Any]:
    notes = " ".join(f"line {i}: the harbour ferry runs late on Sundays." for i in range(22))
    return {
        "role": "assistant",
        "content": f"Noted. The vault combination for the north archive is 7-31-44. {notes}",
    }


def test_a_best_match_too_large_for_the_recall_zone_compacts_for_the_question() -> None:
    fact = big_fact()
    assert 200 < openai.count_tokens([fact]) < 300
    history: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": "Store this."}, fact]
    for user, assistant in chat_turns(60, seed=5):
        history += [user, assistant]
    question = {"role": "user", "content": "What is the vault combination for the north archive?"}
    windows = {}
    for pressure in (False, True):
        session = openai.Session(budget=2_000, recall_share=0.1, compact_for_recall=pressure)
        replay(session, history)
        before = session.fit(history)
        assert fact not in before.messages
        assert openai.count_tokens(before.messages) > 0.4 * 2_000  # above the low watermark
        windows[pressure] = session.fit([*history, question])
    assert not windows[False].compacted
    assert fact not in windows[False].messages  # its 200+ tokens exceed the 200-token zone
    assert windows[True].compacted
    assert windows[True].report.cache_break == "compaction"
    assert fact in windows[True].messages
    assert openai.count_tokens(windows[True].messages) <= 2_000


def test_recall_share_zero_disables_recall_and_its_pressure() -> None:
    fact = big_fact()
    history: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": "Store this."}, fact]
    for user, assistant in chat_turns(60, seed=5):
        history += [user, assistant]
    session = openai.Session(budget=2_000, recall_share=0.0)
    replay(session, history)
    session.fit(history)
    question = {"role": "user", "content": "What is the vault combination for the north archive?"}
    window = session.fit([*history, question])
    assert not window.compacted
    assert window.report.recall_messages == ()
    assert fact not in window.messages


def test_a_follow_up_whose_best_match_is_recalled_keeps_the_zone_in_place() -> None:
    session = openai.Session(budget=1_500)
    history: list[dict[str, Any]] = [
        SYSTEM,
        QUESTION,
        ANSWER,
        {"role": "user", "content": "The vet visit is booked for Friday at noon."},
        {"role": "assistant", "content": "Noted: the vet on Friday."},
    ]
    for user, assistant in chat_turns(40, seed=11):
        history += [user, assistant]
    replay(session, history)
    history.append({"role": "user", "content": "Which name did the new puppy get?"})
    first = session.fit(history)
    assert ANSWER in first.messages
    history.append({"role": "assistant", "content": "Biscuit."})
    history.append(
        {"role": "user", "content": "The new puppy's name again, and when is the vet visit?"}
    )
    second = session.fit(history)
    # The best match (the puppy exchange) is already recalled: the zone stays where it is
    # and the request extends the previous one, though the vet visit would match too.
    assert second.report.cache_break is None
    assert second.messages[: len(first.messages)] == first.messages
    assert second.cached_tokens >= first.tokens - 10
    assert ANSWER in second.messages


FERRY = {"role": "assistant", "content": "The harbour ferry leaves at nine from pier four."}


def ferry_history() -> list[dict[str, Any]]:
    """An old ferry answer long dropped, a recent ferry exchange, and a puppy question that
    leaves the puppy exchange in the recall zone."""
    history: list[dict[str, Any]] = [
        SYSTEM,
        QUESTION,
        ANSWER,
        {"role": "user", "content": "When does the ferry leave?"},
        FERRY,
    ]
    for user, assistant in chat_turns(40, seed=11):
        history += [user, assistant]
    history += [
        {"role": "user", "content": "Is the harbour ferry running today?"},
        {"role": "assistant", "content": "Yes, the harbour ferry runs today, a little late."},
        {"role": "user", "content": "Which name did the new puppy get?"},
    ]
    return history


def test_a_remark_on_what_the_window_shows_leaves_the_zone_in_place() -> None:
    remark = {"role": "user", "content": "Good, a late harbour ferry is fine by me."}
    windows = {}
    for every_turn in (False, True):
        session = openai.Session(budget=1_500, recall_every_turn=every_turn)
        history = ferry_history()
        replay(session, history)
        first = session.fit(history)
        assert ANSWER in first.messages
        assert FERRY not in first.messages
        history += [{"role": "assistant", "content": "Biscuit."}, remark]
        windows[every_turn] = (first, session.fit(history))
    # The remark asks nothing, and its best match (the recent ferry exchange) is in the
    # window: the zone stays, and the request extends the previous one.
    first, kept = windows[False]
    assert kept.report.cache_break is None
    assert kept.messages[: len(first.messages)] == first.messages
    assert FERRY not in kept.messages
    # Re-deciding on every message brings the old ferry answer back and moves the zone.
    _, moved = windows[True]
    assert moved.report.cache_break == "recall"
    assert FERRY in moved.messages


def test_a_zone_left_in_place_is_not_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    # Recall on need reads the scores alone: when the zone stays, no zone is chosen (the
    # relevance pass over the dropped units would be thrown away).
    chosen: list[int] = []
    original = zones.choose_recall

    def counting(*args: Any, **kwargs: Any) -> Recall:
        chosen.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(zones, "choose_recall", counting)
    session = openai.Session(budget=1_500)
    history = ferry_history()
    replay(session, history)
    first = session.fit(history)
    assert chosen  # the question re-decided the zone
    chosen.clear()
    history += [
        {"role": "assistant", "content": "Biscuit."},
        {"role": "user", "content": "Good, a late harbour ferry is fine by me."},
    ]
    kept = session.fit(history)
    assert kept.report.cache_break is None
    assert kept.messages[: len(first.messages)] == first.messages
    assert not chosen


VAULT = {
    "role": "assistant",
    "content": "Noted: the vault combination for the north archive is 7-31-44.",
}


def test_an_instruction_that_needs_a_dropped_fact_recalls_it() -> None:
    session = openai.Session(budget=1_500)
    history: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": "Keep this safe."}, VAULT]
    for user, assistant in chat_turns(60, seed=5):
        history += [user, assistant]
    replay(session, history)
    assert VAULT not in session.fit(history).messages
    # No question mark, but its best match lies outside the window, far above anything in it.
    history.append(
        {
            "role": "user",
            "content": "Open the north archive vault with the combination from earlier.",
        }
    )
    window = session.fit(history)
    assert VAULT in window.messages
    assert history.index(VAULT) in window.report.recall_messages
    assert openai.count_tokens(window.messages) <= 1_500
