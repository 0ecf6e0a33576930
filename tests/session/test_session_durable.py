"""Sessions with ``store=``: a conversation continued by session objects that never saw it.

Every test compares with one uninterrupted in-memory session taking the same turns: with a
store, whichever object takes a turn (the one that took the previous turn, or a new one
restoring the state) gives the same window, cache break and report.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from session_histories import chat_turns
from store_workers import session_options, summarize, usage_for, window_json

from pycupel.adapters import anthropic, gemini, langchain, openai, responses
from pycupel.errors import (
    SessionConfigError,
    SessionConflictError,
    SessionStateError,
)
from pycupel.histories import agent_history
from pycupel.session import SessionStore, SQLiteStore, StoredState
from pycupel.session.loaded import read_state
from pycupel.session.saved import FORMAT_VERSION, MAGIC

Fit = Callable[[Any, list[Any]], Any]


# --------------------------------------------------------------------------- histories


def _agent_openai(
    turns: int = 40, seed: int = 3, output_lines: tuple[int, int] = (8, 30)
) -> list[list[dict[str, Any]]]:
    """An agent history's prefixes a turn is fitted on (never right after a tool call)."""
    history = agent_history(turns=turns, seed=seed, output_lines=output_lines).messages
    return [
        history[:end]
        for end in range(2, len(history) + 1)
        if not history[end - 1].get("tool_calls")
    ]


def _to_anthropic(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "system":
            continue
        if message["role"] == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": message["content"],
            }
            out.append({"role": "user", "content": [block]})
        elif message.get("tool_calls"):
            blocks = [
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "input": json.loads(call["function"]["arguments"]),
                }
                for call in message["tool_calls"]
            ]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": message["role"], "content": message["content"]})
    return out


def _to_responses(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "system":
            continue
        if message["role"] == "tool":
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": message["tool_call_id"],
                    "output": message["content"],
                }
            )
        elif message.get("tool_calls"):
            out.extend(
                {
                    "type": "function_call",
                    "call_id": call["id"],
                    "name": call["function"]["name"],
                    "arguments": call["function"]["arguments"],
                }
                for call in message["tool_calls"]
            )
        else:
            out.append({"role": message["role"], "content": message["content"]})
    return out


def _chat(count: int = 50) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for user, assistant in chat_turns(count, seed=5):
        messages += [user, assistant]
    return messages


def _to_gemini(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"role": "user" if m["role"] == "user" else "model", "parts": [{"text": m["content"]}]}
        for m in messages
    ]


def _to_langchain(messages: Sequence[dict[str, Any]]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[Any] = []
    for m in messages:
        if m["role"] == "system":
            out.append(SystemMessage(m["content"]))
        elif m["role"] == "user":
            out.append(HumanMessage(m["content"]))
        elif m["role"] == "tool":
            out.append(ToolMessage(m["content"], tool_call_id=m["tool_call_id"]))
        elif m.get("tool_calls"):
            calls = [
                {
                    "name": c["function"]["name"],
                    "args": json.loads(c["function"]["arguments"]),
                    "id": c["id"],
                }
                for c in m["tool_calls"]
            ]
            out.append(AIMessage("", tool_calls=calls))
        else:
            out.append(AIMessage(m["content"]))
    return out


def _prefixes(messages: list[Any], complete: Callable[[Any], bool]) -> list[list[Any]]:
    return [messages[:end] for end in range(1, len(messages) + 1) if complete(messages[end - 1])]


# --------------------------------------------------------------------------- replaying


def replay(
    build: Callable[..., Any],
    turns: Sequence[list[Any]],
    *,
    fit: Fit = lambda session, history: session.fit(history),
    store: SessionStore | None = None,
    usage: Callable[[Any], Any] = usage_for,
    fresh_share: float = 0.5,
    seed: int = 1,
) -> list[Any]:
    """Every turn taken by one in-memory session and by store-backed objects (the one of
    the previous turn, or a new one), the windows compared; returns the reference's."""
    store = store if store is not None else SQLiteStore(":memory:")
    reference = build()
    stored = build(store=store, key="conversation")
    rng = random.Random(seed)
    windows = []
    for history in turns:
        expected = fit(reference, history)
        if rng.random() < fresh_share:
            stored = build(store=store, key="conversation")
        window = fit(stored, history)
        assert window_json(window) == window_json(expected), f"turn {expected.report.turn}"
        reference.record_usage(usage(expected.report))
        stored.record_usage(usage(window.report))
        assert stored.calibration_ratio == reference.calibration_ratio
        windows.append(expected)
    return windows


def _breaks(windows: Sequence[Any]) -> set[Any]:
    return {window.report.cache_break for window in windows}


def test_openai_agent_continues_exactly_on_new_objects() -> None:
    windows = replay(lambda **kw: openai.Session(budget=2_500, **kw), _agent_openai())
    assert {"first", "compaction", "recall"} <= _breaks(windows)
    assert sum(window.report.cache_break is None for window in windows) > len(windows) // 2


def test_shorter_versions_and_the_running_summary_continue_exactly() -> None:
    windows = replay(
        lambda **kw: openai.Session(**session_options("shrink-summary"), **kw),
        _agent_openai(output_lines=(20, 60))[:80],
        fresh_share=0.3,
    )
    shown = [str(window.messages) for window in windows]
    assert any("[result cleared" in text for text in shown)
    # Excerpts of the long results, made again on the workers that restore the state.
    assert any(
        re.search(r"\[\.\.\. \d+ lines? \([\d,]+ tokens\) elided \.\.\.\]", t) for t in shown
    )
    assert any("[Summary of the earlier conversation]" in text for text in shown)


def test_placeholders_without_their_words_continue_exactly() -> None:
    # Each call said something first: on this budget the oldest placeholders shed those
    # words (their calls stay), and a restored state makes the same bare version again.
    turns = [
        [
            {
                **m,
                "content": f"Checking {m['tool_calls'][0]['function']['name']} next, "
                "to compare it with what the previous tool reported.",
            }
            if m.get("tool_calls")
            else m
            for m in history
        ]
        for history in _agent_openai(output_lines=(20, 60))[:80]
    ]
    windows = replay(
        lambda **kw: openai.Session(**session_options("shrink-summary"), **kw),
        turns,
        fresh_share=0.3,
    )
    bare = [
        m
        for window in windows
        for m in window.messages
        if m.get("tool_calls") and m.get("content") is None
    ]
    assert bare, "no placeholder shed its words"


def test_anthropic_with_a_system_prompt_continues_exactly() -> None:
    messages = _to_anthropic(agent_history(turns=30, seed=5).messages)
    turns = _prefixes(
        messages, lambda m: not (m["role"] == "assistant" and isinstance(m["content"], list))
    )
    windows = replay(
        lambda **kw: anthropic.Session(budget=2_500, shrink=True, **kw),
        turns,
        fit=lambda session, history: session.fit(history, system="You are a careful agent."),
        usage=lambda report: {
            "input_tokens": report.estimated_tokens,
            "cache_read_input_tokens": 0,
        },
    )
    assert windows[-1].system[0]["cache_control"] == {"type": "ephemeral"}
    assert "compaction" in _breaks(windows)


def test_responses_with_instructions_continues_exactly() -> None:
    items = _to_responses(agent_history(turns=30, seed=6).messages)
    turns = _prefixes(items, lambda item: item.get("type") != "function_call")
    replay(
        lambda **kw: responses.Session(budget=2_000, **kw),
        turns,
        fit=lambda session, history: session.fit(history, instructions="Be brief."),
    )


def test_gemini_and_langchain_chats_continue_exactly() -> None:
    chat = _chat()
    contents = _to_gemini(chat)
    replay(
        lambda **kw: gemini.Session(budget=1_200, **kw),
        _prefixes(contents, lambda c: c["role"] == "user"),
        fit=lambda session, history: session.fit(history, system_instruction="Be kind."),
        usage=lambda report: {"prompt_token_count": report.estimated_tokens + 3},
    )
    pytest.importorskip("langchain_core")
    history = _to_langchain([{"role": "system", "content": "Be kind."}, *chat[:80]])
    replay(
        lambda **kw: langchain.Session(budget=1_200, **kw),
        _prefixes(history, lambda m: m.type == "human"),
        usage=lambda report: {"input_tokens": report.estimated_tokens + 3},
    )


def test_afit_with_an_async_counter_continues_exactly() -> None:
    class Endpoint:  # the provider's count-tokens endpoint, played locally
        async def count_batch(self, texts: Sequence[str]) -> list[int]:
            return [len(text) // 3 + 1 for text in texts]

    async def run() -> None:
        store = SQLiteStore(":memory:")
        reference = openai.Session(budget=2_000)
        for number, history in enumerate(_agent_openai(turns=30)[:60]):
            expected = await reference.afit(history, counter=Endpoint())
            stored = openai.Session(budget=2_000, store=store, key="c")
            window = await stored.afit(history, counter=Endpoint())
            assert window_json(window) == window_json(expected), number

    asyncio.run(run())


# --------------------------------------------------------------------------- a history that differs


def _saved_then(
    first: Sequence[list[Any]], then: list[Any], build: Callable[..., Any] | None = None
) -> tuple[Any, Any]:
    """``first`` turns saved by one object, then the ``then`` history: the window of an
    in-memory session that took the same turns, and that of a new object restoring."""
    build = build or (lambda **kw: openai.Session(budget=2_500, **kw))
    store = SQLiteStore(":memory:")
    reference, saver = build(), build(store=store, key="c")
    for history in first:
        expected = reference.fit(history)
        saver.fit(history)
        reference.record_usage(usage_for(expected.report))
        saver.record_usage(usage_for(expected.report))
    expected = reference.fit(then)
    window = build(store=store, key="c").fit(then)
    assert window_json(window) == window_json(expected)
    return expected, window


def test_an_edited_message_is_an_edit_from_that_message() -> None:
    turns = _agent_openai()
    edited = [dict(message) for message in turns[60]]
    edited[7] = {**edited[7], "content": str(edited[7]["content"]) + " (edited)"}
    expected, _ = _saved_then(turns[:60], edited)
    assert (expected.report.edited_at, expected.report.cache_break) == (7, "edit")


def test_a_truncated_history_is_an_edit_where_it_ends() -> None:
    turns = _agent_openai()
    expected, _ = _saved_then(turns[:60], turns[30])
    assert expected.report.edited_at == len(turns[30])
    assert expected.report.cache_break == "edit"


def test_another_conversation_under_the_same_key_is_never_trusted() -> None:
    other = _agent_openai(seed=11)[20]
    expected, window = _saved_then(_agent_openai()[:40], other)
    assert expected.report.edited_at == 1  # both open with the same system prompt
    assert window.messages == openai.Session(budget=2_500).fit(other).messages


def test_a_changed_system_prompt_is_an_edit_at_zero() -> None:
    messages = _to_anthropic(agent_history(turns=30, seed=5).messages)
    turns = _prefixes(
        messages, lambda m: not (m["role"] == "assistant" and isinstance(m["content"], list))
    )
    store = SQLiteStore(":memory:")
    reference = anthropic.Session(budget=2_000)
    for history in turns[:30]:
        reference.fit(history, system="v1")
        anthropic.Session(budget=2_000, store=store, key="c").fit(history, system="v1")
    expected = reference.fit(turns[30], system="v2")
    window = anthropic.Session(budget=2_000, store=store, key="c").fit(turns[30], system="v2")
    assert window_json(window) == window_json(expected)
    assert (window.report.edited_at, window.report.cache_break) == (0, "edit")


def test_a_chain_that_disagrees_trusts_nothing() -> None:
    """A change the 4-byte digests miss (forged here) is caught by the chain digest."""
    store = SQLiteStore(":memory:")
    turns = _agent_openai()
    for history in turns[:20]:
        openai.Session(budget=2_500, store=store, key="c").fit(history)
    found = store.load("c")
    assert found is not None
    assert found.state is not None
    saved = read_state(found.state, source="test")
    data = bytearray(found.state)
    at = bytes(data).rindex(saved.chain)
    data[at] ^= 0xFF
    store.save("c", bytes(data), expected=found.version)
    window = openai.Session(budget=2_500, store=store, key="c").fit(turns[20])
    assert (window.report.edited_at, window.report.cache_break) == (0, "edit")


# --------------------------------------------------------------------------- what is stored


def test_the_state_holds_no_message_text_but_the_summary() -> None:
    store = SQLiteStore(":memory:")
    session = openai.Session(budget=3_000, shrink=True, summarize=summarize, store=store, key="c")
    for history in _agent_openai()[:90]:
        window = session.fit(history)
        session.record_usage(usage_for(window.report))
    found = store.load("c")
    assert found is not None
    assert found.state is not None
    data = found.state
    assert data.startswith(MAGIC + bytes([FORMAT_VERSION]))
    length = int.from_bytes(data[4:8], "little")
    header = json.loads(zlib.decompress(data[8 : 8 + length]))
    assert header["summary"]["text"].startswith("[Summary of the earlier conversation]")
    # No message's text: none of their opening 24 characters is in the state.
    openings = {
        str(m["content"])[:24].encode()
        for m in _agent_openai()[89]
        if isinstance(m.get("content"), str) and len(m["content"]) >= 24
    }
    assert len(openings) > 50
    written = data + json.dumps(header, ensure_ascii=False).encode()
    assert not [opening for opening in openings if opening in written]
    assert header["shown"]["units"]  # the versions shown are named, not stored


def test_the_state_is_compact() -> None:
    history = agent_history(turns=330, seed=2).messages[:1_000]
    store = SQLiteStore(":memory:")
    session = openai.Session(budget=8_000, store=store, key="c")
    sizes = []
    for end in range(960, 1_000):
        if history[end - 1].get("tool_calls"):
            continue
        window = session.fit(history[:end])
        session.record_usage(usage_for(window.report))
        found = store.load("c")
        assert found is not None
        assert found.state is not None
        sizes.append(len(found.state))
    # About 7 bytes a message and 12 a learned unit: under 16 bytes a message.
    assert max(sizes) < 16 * 1_000


# --------------------------------------------------------------------------- refusals


def _one_turn(store: SessionStore) -> None:
    openai.Session(budget=2_000, store=store, key="c").fit(_agent_openai()[3])


def test_an_unknown_format_version_is_refused() -> None:
    store = SQLiteStore(":memory:")
    _one_turn(store)
    found = store.load("c")
    assert found is not None
    assert found.state is not None
    newer = MAGIC + bytes([FORMAT_VERSION + 1]) + found.state[4:]
    store.save("c", newer, expected=found.version)
    with pytest.raises(
        SessionStateError, match="format version: is 2; this pycupel reads"
    ) as caught:
        _one_turn(store)
    assert caught.value.location == "format version"
    assert "key 'c'" in caught.value.source


@pytest.mark.parametrize(
    ("damage", "location"),
    [
        (lambda data: b"not a state", "header"),
        (lambda data: data[:4] + b"\x00\x00\x00\x00", "header"),
        (lambda data: data[:-3], "tokens"),
        (lambda data: data + b"xx", "body"),
    ],
)
def test_a_damaged_state_is_refused(damage: Callable[[bytes], bytes], location: str) -> None:
    store = SQLiteStore(":memory:")
    _one_turn(store)
    found = store.load("c")
    assert found is not None
    assert found.state is not None
    store.save("c", damage(found.state), expected=found.version)
    with pytest.raises(SessionStateError) as caught:
        _one_turn(store)
    assert caught.value.location == location


def test_a_state_of_other_settings_is_refused() -> None:
    store = SQLiteStore(":memory:")
    session = openai.Session(budget=2_000, shrink=True, store=store, key="c")
    for history in _agent_openai()[:60]:
        session.fit(history)
    with pytest.raises(SessionStateError, match="shown: holds shorter versions"):
        openai.Session(budget=2_000, store=store, key="c").fit(_agent_openai()[60])
    with pytest.raises(SessionStateError, match="format: was saved by a 'openai' session"):
        responses.Session(budget=2_000, store=store, key="c").fit(
            _to_responses(_agent_openai()[60])
        )


def test_store_options_are_checked() -> None:
    store = SQLiteStore(":memory:")
    with pytest.raises(SessionConfigError, match="key: must be given with store="):
        openai.Session(budget=2_000, store=store)
    with pytest.raises(SessionConfigError, match="store: must be given with key='c'"):
        openai.Session(budget=2_000, key="c")
    with pytest.raises(SessionConfigError, match=r"store: must be a pycupel\.session\.Session"):
        openai.Session(budget=2_000, store={"c": b""}, key="c")  # type: ignore[arg-type]
    with pytest.raises(SessionConfigError, match="key: must not be empty"):
        openai.Session(budget=2_000, store=store, key="")
    with pytest.raises(SessionConfigError, match="on_conflict: must be 'retry' or 'raise'"):
        openai.Session(budget=2_000, store=store, key="c", on_conflict="wait")  # type: ignore[arg-type]
    with pytest.raises(SessionConfigError, match="must follow a fit"):
        openai.Session(budget=2_000, store=store, key="c").record_usage({"prompt_tokens": 5})


# --------------------------------------------------------------------------- one worker, conflicts


class Spy:
    """A store that counts the states it hands out and can run a callback before a save."""

    def __init__(self, inner: SessionStore) -> None:
        self.inner = inner
        self.bytes_loaded = 0
        self.before_save: Callable[[], None] | None = None
        self.refuse = False

    def load(self, key: str, *, known: int | None = None) -> StoredState | None:
        found = self.inner.load(key, known=known)
        if found is not None and found.state is not None:
            self.bytes_loaded += 1
        return found

    def save(self, key: str, state: bytes, *, expected: int | None) -> int | None:
        callback, self.before_save = self.before_save, None
        if callback is not None:
            callback()
        if self.refuse:
            return None
        return self.inner.save(key, state, expected=expected)

    def delete(self, key: str) -> None:
        self.inner.delete(key)

    def put_blob(self, key: str, name: str, data: bytes) -> None:
        self.inner.put_blob(key, name, data)

    def get_blob(self, key: str, name: str) -> bytes | None:
        return self.inner.get_blob(key, name)


def test_a_worker_serving_every_turn_never_reads_its_state_back() -> None:
    spy = Spy(SQLiteStore(":memory:"))
    session = openai.Session(budget=2_500, store=spy, key="c")
    for history in _agent_openai()[:50]:
        window = session.fit(history)
        session.record_usage(usage_for(window.report))
    assert spy.bytes_loaded == 0
    openai.Session(budget=2_500, store=spy, key="c").fit(_agent_openai()[50])
    assert spy.bytes_loaded == 1


def test_a_deleted_key_starts_the_conversation_again() -> None:
    store = SQLiteStore(":memory:")
    session = openai.Session(budget=2_500, store=store, key="c")
    turns = _agent_openai()
    for history in turns[:10]:
        session.fit(history)
    store.delete("c")
    window = session.fit(turns[10])
    assert (window.report.turn, window.report.cache_break) == (1, "first")


@pytest.mark.parametrize("on_conflict", ["retry", "raise"])
def test_two_objects_fitting_the_same_turn(on_conflict: str) -> None:
    spy = Spy(SQLiteStore(":memory:"))
    turns = _agent_openai()
    first = openai.Session(budget=2_500, store=spy, key="c", on_conflict=on_conflict)  # type: ignore[arg-type]
    for history in turns[:30]:
        first.fit(history)
    second = openai.Session(budget=2_500, store=spy, key="c")
    other: list[Any] = []
    # The second object takes turn 30 while the first holds it between its load and save.
    spy.before_save = lambda: other.append(second.fit(turns[30]))
    if on_conflict == "raise":
        with pytest.raises(
            SessionConflictError, match="key 'c': the stored state changed"
        ) as caught:
            first.fit(turns[30])
        found = spy.load("c")
        assert found is not None
        assert caught.value.found == found.version
        assert caught.value.loaded == found.version - 1
        assert caught.value.attempts == 1
        # Nothing of the failed turn was kept: the next turn continues from the other's.
        window = first.fit(turns[31])
        assert window.report.turn == other[0].report.turn + 1
        return
    window = first.fit(turns[30])
    assert window.messages == other[0].messages  # fitted again on the winner's state
    assert window.report.turn == other[0].report.turn + 1
    assert window.report.cache_break is None  # the request extends the winner's


def test_conflicts_are_retried_a_bounded_number_of_times() -> None:
    spy = Spy(SQLiteStore(":memory:"))
    spy.refuse = True
    with pytest.raises(SessionConflictError, match="4 attempts") as caught:
        openai.Session(budget=2_500, store=spy, key="c").fit(_agent_openai()[3])
    assert caught.value.attempts == 4


@pytest.mark.parametrize("on_conflict", ["retry", "raise"])
def test_usage_of_a_window_that_is_no_longer_the_latest(on_conflict: str) -> None:
    store = SQLiteStore(":memory:")
    turns = _agent_openai()
    first = openai.Session(budget=2_500, store=store, key="c", on_conflict=on_conflict)  # type: ignore[arg-type]
    window = first.fit(turns[0])
    openai.Session(budget=2_500, store=store, key="c").fit(turns[1])  # another worker's turn
    before = store.load("c")
    if on_conflict == "raise":
        with pytest.raises(SessionConflictError):
            first.record_usage(usage_for(window.report))
    else:
        first.record_usage(usage_for(window.report))  # dropped: it reports an older window
    after = store.load("c")
    assert before is not None
    assert after is not None
    assert (after.version, after.state) == (before.version, before.state)


def test_every_attribute_of_a_session_is_saved_rebuilt_or_a_setting() -> None:
    """A new attribute of the session's state must say how a restored session gets it
    (``pycupel.session.saved.STATE_ATTRIBUTES``) and, when saved, be saved."""
    from pycupel.session.saved import STATE_ATTRIBUTES
    from pycupel.session.state import SessionState

    assert set(STATE_ATTRIBUTES) == set(SessionState.__annotations__)
    assert set(STATE_ATTRIBUTES.values()) == {"setting", "saved", "rebuilt"}


def test_a_trailing_reasoning_item_is_read_again_as_in_one_process() -> None:
    """A Responses input ending with a reasoning item closes it as a unit of its own, read
    again when the input grows (an edit there): a restored session does the same."""
    items: list[dict[str, Any]] = []
    turns = []
    for turn in range(25):
        items.append({"role": "user", "content": f"question {turn} " + "word " * 20})
        turns.append(list(items))
        summary = [{"type": "summary_text", "text": f"thinking {turn}"}]
        items.append({"type": "reasoning", "id": f"rs_{turn}", "summary": summary})
        turns.append(list(items))
        text = f"answer {turn} " + "fine " * 20
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }
        )
        turns.append(list(items))
    windows = replay(
        lambda **kw: responses.Session(budget=600, **kw),
        turns,
        fit=lambda session, history: session.fit(history, instructions="Be brief."),
        fresh_share=1.0,
    )
    assert any(w.report.cache_break == "edit" and w.report.edited_at for w in windows)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("stable", [0, 10**9], "names positions beyond 100,000"),
        ("tail", [5], "must be a list of \\[start, length\\] runs"),
        ("turn", 0, "must be an integer >= 1"),
        ("tokens", "u3", "must be one of"),
        ("stable", [10**4, 1], "names unit 10000, but the saved history has"),
    ],
)
def test_a_state_with_impossible_fields_is_refused(field: str, value: Any, message: str) -> None:
    store = SQLiteStore(":memory:")
    _one_turn(store)
    found = store.load("c")
    assert found is not None
    assert found.state is not None
    data = found.state
    length = int.from_bytes(data[4:8], "little")
    header = json.loads(zlib.decompress(data[8 : 8 + length]))
    header[field] = value
    packed = zlib.compress(json.dumps(header).encode())
    forged = data[:4] + len(packed).to_bytes(4, "little") + packed + data[8 + length :]
    store.save("c", forged, expected=found.version)
    with pytest.raises(SessionStateError, match=message) as caught:
        _one_turn(store)
    assert caught.value.location == field


def test_counts_beyond_two_bytes_are_saved_wider() -> None:
    class Counter:  # one message far longer than the rest
        def count(self, text: str) -> int:
            return 70_000 if "enormous" in text else len(text.split()) + 1

        def count_batch(self, texts: Sequence[str]) -> list[int]:
            return [self.count(text) for text in texts]

    history: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    turns = []
    for turn in range(12):
        history.append({"role": "user", "content": f"question {turn} about the report"})
        turns.append(list(history))
        content = "an enormous answer" if turn == 3 else f"answer {turn} " + "fine " * 10
        history.append({"role": "assistant", "content": content})
    store = SQLiteStore(":memory:")
    replay(lambda **kw: openai.Session(budget=500, counter=Counter(), **kw), turns, store=store)
    found = store.load("conversation")
    assert found is not None
    assert found.state is not None
    length = int.from_bytes(found.state[4:8], "little")
    assert json.loads(zlib.decompress(found.state[8 : 8 + length]))["tokens"] == "u4"
