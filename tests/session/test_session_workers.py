"""Conversations served by four worker processes sharing one store (a SQLite file, a Redis
server): every turn goes to a random worker, and every window is byte for byte the window of
one uninterrupted session in this process. Workers are killed in the middle of turns, and
two workers fit the same turn at once."""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from session_histories import sample_sentences
from store_workers import (
    Gate,
    GatedStore,
    InTransactionStore,
    Worker,
    conversation_recall,
    session_options,
    usage_for,
    wait_for,
    window_json,
)

from pycupel.adapters import openai
from pycupel.errors import SessionConflictError
from pycupel.histories import agent_history
from pycupel.session import RedisStore, SessionStore, SQLiteStore
from pycupel.session.loaded import read_state

RECALL_REF = re.compile(r"elided: ref ([0-9a-f]{16}) \.\.\.\]")


@pytest.fixture(scope="module")
def workers() -> Iterator[list[Worker]]:
    pool = [Worker() for _ in range(4)]
    try:
        assert len({worker.call(kind="ping") for worker in pool}) == 4
        yield pool
    finally:
        for worker in pool:
            worker.stop()


@pytest.fixture(params=["sqlite", "redis"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> SessionStore:
    if request.param == "sqlite":
        return SQLiteStore(tmp_path / "sessions.db")
    url = request.getfixturevalue("redis_url")
    return RedisStore(url, prefix=f"pycupel-test:{uuid.uuid4().hex}:")


# --------------------------------------------------------------------------- conversations


def agent_turns() -> list[list[dict[str, Any]]]:
    """An agent at work (tool calls with long outputs); a turn after each tool result and
    user message."""
    history = agent_history(turns=30, seed=8, output_lines=(20, 60)).messages
    return [
        history[:end]
        for end in range(2, len(history) + 1)
        if not history[end - 1].get("tool_calls")
    ]


def locomo_like_turns(sessions: int = 6, per_session: int = 16) -> list[list[dict[str, Any]]]:
    """Two people chatting over dated sessions, as LoCoMo's conversations are laid out (the
    first message of a session opens with its date); a turn at each of the first
    speaker's messages."""
    rng = random.Random(4)
    sentences = sample_sentences()
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You remember our chats."}]
    for session in range(sessions):
        for index in range(per_session):
            speaker = ("Caroline", "Melanie")[index % 2]
            text = f"{speaker}: " + " ".join(
                rng.choice(sentences) for _ in range(rng.randint(1, 3))
            )
            if index == 0:
                text = f"[1:{10 + session}7 pm on {session + 3} May, 2023] {text}"
            messages.append({"role": "user" if index % 2 == 0 else "assistant", "content": text})
    return [
        messages[:end] for end in range(2, len(messages) + 1) if messages[end - 1]["role"] == "user"
    ]


CONVERSATIONS = {
    "agent": (agent_turns, "shrink-summary"),
    "locomo-like": (locomo_like_turns, "chat"),
}


def serve(
    workers: list[Worker],
    store: SessionStore,
    turns: list[list[dict[str, Any]]],
    *,
    key: str,
    options: str,
    reference: Any,
    rng: random.Random,
) -> set[Any]:
    """Each turn on a random worker; its window checked against the reference session's.
    Returns the cache breaks the turns saw."""
    breaks = set()
    for history in turns:
        expected = reference.fit(history)
        reference.record_usage(usage_for(expected.report))
        worker = rng.choice(workers)
        got = worker.call(kind="fit", store=store, key=key, options=options, history=history)
        assert got == window_json(expected), f"turn {expected.report.turn}"
        breaks.add(expected.report.cache_break)
    return breaks


@pytest.mark.parametrize("conversation", sorted(CONVERSATIONS))
def test_turns_on_random_workers_give_one_sessions_windows(
    workers: list[Worker], shared: SessionStore, conversation: str
) -> None:
    make_turns, options = CONVERSATIONS[conversation]
    turns = make_turns()
    reference = openai.Session(**session_options(options))
    key = f"{conversation}-{uuid.uuid4().hex}"
    serve(
        workers,
        shared,
        turns,
        key=key,
        options=options,
        reference=reference,
        rng=random.Random(conversation),
    )
    breaks = reference.fit(turns[-1]).report  # the reference saw what the workers saw
    assert breaks.turn == len(turns) + 1


def test_an_excerpt_made_on_one_worker_is_recalled_on_another(
    workers: list[Worker], shared: SessionStore
) -> None:
    key = f"recall-{uuid.uuid4().hex}"
    turns = agent_turns()
    # The reference keeps its texts in memory, with the fleet's secret: the same refs.
    recall = conversation_recall(None, key)
    reference = openai.Session(**session_options("recall"), recall=recall)
    serve(
        workers,
        shared,
        turns,
        key=key,
        options="recall",
        reference=reference,
        rng=random.Random(11),
    )
    refs = sorted(set(RECALL_REF.findall(str(reference.fit(turns[-1]).messages))))
    assert refs  # the window's long results are excerpts whose gaps have refs
    for ref in refs:
        elided = recall.lookup(ref)
        assert elided.strip()
        for worker in workers:  # any worker reads the text, whichever one elided it
            assert worker.call(kind="lookup", store=shared, key=key, ref=ref) == elided


# --------------------------------------------------------------------------- killed workers


def _killed_in_a_turn(
    workers: list[Worker], shared: SessionStore, tmp_path: Path, in_transaction: bool
) -> None:
    turns = agent_turns()[:36]
    options = "shrink-summary"
    key = f"killed-{uuid.uuid4().hex}"
    reference = openai.Session(**session_options(options))
    rng = random.Random(5)
    serve(workers, shared, turns[:20], key=key, options=options, reference=reference, rng=rng)
    before = shared.load(key)
    assert before is not None
    gate = Gate(reached=str(tmp_path / "reached"))
    store: SessionStore
    if in_transaction:
        assert isinstance(shared, SQLiteStore)
        store = InTransactionStore(shared.path, gate)
    else:
        store = GatedStore(shared, gate)
    victim = Worker()
    try:
        victim.send(kind="fit", store=store, key=key, options=options, history=turns[20])
        wait_for(Path(gate.reached), alive=victim.process.is_alive)
    finally:
        victim.kill()  # SIGKILL, holding the turn's state (in its transaction, or before)
    after = shared.load(key)
    assert after is not None
    assert after.state is not None
    assert (after.version, after.state) == (before.version, before.state)
    read_state(after.state, source="test")  # intact
    # The next worker takes the same turn, and the conversation goes on exactly.
    serve(workers, shared, turns[20:], key=key, options=options, reference=reference, rng=rng)


def test_a_worker_killed_between_load_and_save_loses_nothing(
    workers: list[Worker], shared: SessionStore, tmp_path: Path
) -> None:
    _killed_in_a_turn(workers, shared, tmp_path, in_transaction=False)


def test_a_worker_killed_inside_its_sqlite_transaction_loses_nothing(
    workers: list[Worker], tmp_path: Path
) -> None:
    _killed_in_a_turn(workers, SQLiteStore(tmp_path / "sessions.db"), tmp_path, in_transaction=True)


# --------------------------------------------------------------------------- conflicts


@pytest.mark.parametrize("on_conflict", ["retry", "raise"])
def test_two_workers_fitting_the_same_turn(
    workers: list[Worker], shared: SessionStore, tmp_path: Path, on_conflict: str
) -> None:
    turns = locomo_like_turns()[:30]
    options = "chat"
    key = f"conflict-{uuid.uuid4().hex}"
    reference = openai.Session(**session_options(options))
    serve(
        workers,
        shared,
        turns[:25],
        key=key,
        options=options,
        reference=reference,
        rng=random.Random(6),
    )
    slow, fast = workers[0], workers[1]
    gate = Gate(reached=str(tmp_path / "reached"), release=str(tmp_path / "release"))
    slow.send(
        kind="fit",
        store=GatedStore(shared, gate),
        key=key,
        options=options,
        history=turns[25],
        fresh=True,
        on_conflict=on_conflict,
    )
    wait_for(Path(gate.reached), alive=slow.process.is_alive)
    # The slow worker holds turn 25 between its load and its save; another one takes it.
    won = fast.call(
        kind="fit", store=shared, key=key, options=options, history=turns[25], fresh=True
    )
    winner = reference.fit(turns[25])
    reference.record_usage(usage_for(winner.report))
    assert won == window_json(winner)
    Path(gate.release).touch()
    if on_conflict == "raise":
        with pytest.raises(SessionConflictError) as caught:
            slow.receive()
        assert caught.value.key == key
        current = shared.load(key)
        assert current is not None
        # The winner saved its turn, then its usage, over the version the loser loaded.
        assert (caught.value.loaded, caught.value.found) == (current.version - 2, current.version)
    else:
        # The loser fitted the turn again on the winner's state: the same window, a turn
        # that extends the winner's request.
        retried = slow.receive()
        again = reference.fit(turns[25])
        assert retried == window_json(again)
        assert again.messages == winner.messages
        assert again.report.cache_break is None
