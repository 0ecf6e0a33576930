"""Worker processes for the session-store tests: real processes (``spawn``) sharing a store.

A :class:`Worker` is a process that serves requests over a pipe, as a web worker serves
requests: it keeps one ``Session`` object per conversation key (the fast path of a worker
that served the previous turn) and builds one when it has none (a worker that never saw the
conversation). The requests and the session options are plain data, so they cross the pipe.

The stores below wrap a real store to stop a worker at a chosen point of a turn, so that the
parent can kill it there (``SIGKILL``) or let another worker go first; they signal the point
with a marker file and wait for a release file.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import sqlite3
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pycupel.session import SessionStore, SQLiteStore, StoredState

# --------------------------------------------------------------------------- session options


def summarize(dropped: Sequence[Any], previous: str | None) -> str:
    """A deterministic summarizer (importable by worker processes)."""
    tools = sum(
        1 for message in dropped if isinstance(message, dict) and message.get("role") == "tool"
    )
    return f"{previous or ''}\n{len(dropped)} messages dropped, {tools} tool results.".strip()


def session_options(name: str) -> dict[str, Any]:
    """The options of a named session setting (the same in every process)."""
    from pycupel.adapters import Shrink

    if name == "plain":
        return {"budget": 2_500}
    if name == "shrink-summary":
        shrink = Shrink(keep_whole=1, truncate_to=60, placeholder_share=0.5)
        return {"budget": 5_000, "shrink": shrink, "summarize": summarize}
    if name == "chat":
        return {"budget": 1_500, "recall_share": 0.2}
    if name == "recall":  # shorter versions on with the recall (see conversation_recall)
        return {"budget": 3_000}
    raise ValueError(name)


RECALL_SECRET = b"the fleet's shared recall secret"
"""The recall secret every worker shares (from a secret manager, in production)."""


def conversation_recall(store: SessionStore | None, key: str) -> Any:
    """The recall of the conversation ``key``: its texts in the store's blob area when there
    is a store (every worker reads them), else in this process's memory."""
    from pycupel.conversation import MemoryRecallStore, Recall
    from pycupel.session import BlobRecallStore

    kept = BlobRecallStore(store) if store is not None else MemoryRecallStore()
    return Recall(key, store=kept, secret=RECALL_SECRET, max_tokens=400)


def usage_for(report: Any) -> dict[str, int]:
    """A provider's usage for a window: deterministic, about 12 % above the estimate."""
    return {"prompt_tokens": report.estimated_tokens * 112 // 100 + 7}


def window_json(window: Any) -> str:
    """Everything a window says: its messages, tokens and report (the selection by repr)."""
    report = window.report
    fields = {name: getattr(report, name) for name in type(report).__slots__}
    fields["selection"] = repr(fields["selection"])
    return json.dumps(
        {
            "messages": window.messages,
            "system": window.system,
            "tokens": window.tokens,
            "cached_tokens": window.cached_tokens,
            "compacted": window.compacted,
            "report": fields,
        },
        sort_keys=True,
        default=repr,
    )


# --------------------------------------------------------------------------- stores that stop


@dataclass(frozen=True, slots=True)
class Gate:
    """A point where a worker stops: it creates ``reached``, then waits for ``release``
    (forever when there is none: the parent kills it)."""

    reached: str
    release: str | None = None

    def stop(self) -> None:
        Path(self.reached).touch()
        while self.release is None or not Path(self.release).exists():
            time.sleep(0.01)


class GatedStore:
    """A store whose first ``save`` stops at a gate before it writes anything (a worker
    holding a turn's state between its load and its save)."""

    def __init__(self, inner: SessionStore, gate: Gate) -> None:
        self.inner = inner
        self.gate = gate
        self.stopped = False

    def load(self, key: str, *, known: int | None = None) -> StoredState | None:
        return self.inner.load(key, known=known)

    def save(self, key: str, state: bytes, *, expected: int | None) -> int | None:
        if not self.stopped:
            self.stopped = True
            self.gate.stop()
        return self.inner.save(key, state, expected=expected)

    def delete(self, key: str) -> None:
        self.inner.delete(key)

    def put_blob(self, key: str, name: str, data: bytes) -> None:
        self.inner.put_blob(key, name, data)

    def get_blob(self, key: str, name: str) -> bytes | None:
        return self.inner.get_blob(key, name)


class InTransactionStore(SQLiteStore):
    """A SQLite store whose first save stops after writing the new state, inside its
    transaction, before the commit (killed there, the write must vanish)."""

    __slots__ = ("gate", "stopped")

    def __init__(self, path: str, gate: Gate) -> None:
        super().__init__(path)
        self.gate = gate
        self.stopped = False

    def __reduce__(self) -> tuple[object, ...]:
        return (InTransactionStore, (self.path, self.gate))

    def _write(self, connection: sqlite3.Connection, key: str, version: int, data: bytes) -> None:
        super()._write(connection, key, version, data)
        if not self.stopped:
            self.stopped = True
            self.gate.stop()


# --------------------------------------------------------------------------- workers


def _serve(connection: Any) -> None:
    """A worker's loop: one request in, one answer out, until ``None``."""
    from pycupel.adapters import openai

    sessions: dict[tuple[str, str], Any] = {}
    while True:
        request = connection.recv()
        if request is None:
            return
        try:
            connection.send(("ok", _answer(request, sessions, openai)))
        except Exception as exc:  # sent back to the test, which checks it
            connection.send(("error", (exc, traceback.format_exc())))


def _answer(request: dict[str, Any], sessions: dict[tuple[str, str], Any], openai: Any) -> Any:
    kind = request["kind"]
    if kind == "ping":
        return os.getpid()
    if kind == "drop":  # forget the session objects (a restarted worker)
        sessions.clear()
        return None
    if kind == "lookup":  # a recall tool call answered on this worker
        return conversation_recall(request["store"], request["key"]).lookup(request["ref"])
    name = (request["key"], request["options"])
    session = sessions.get(name)
    if session is None or request.get("fresh"):
        options = session_options(request["options"])
        if request["options"] == "recall":
            options["recall"] = conversation_recall(request["store"], request["key"])
        session = openai.Session(
            **options,
            store=request["store"],
            key=request["key"],
            on_conflict=request.get("on_conflict", "retry"),
        )
        sessions[name] = session
    window = session.fit(request["history"])
    if request.get("usage", True):
        session.record_usage(usage_for(window.report))
    return window_json(window)


class Worker:
    """A worker process (``spawn``) and the pipe to it."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child,), daemon=True)
        self.process.start()
        child.close()

    def send(self, **request: Any) -> None:
        self.connection.send(request)

    def receive(self, timeout: float = 60) -> Any:
        if not self.connection.poll(timeout):
            raise TimeoutError("the worker did not answer")
        status, value = self.connection.recv()
        if status == "error":
            error, trace = value
            error.add_note(trace)
            raise error
        return value

    def call(self, **request: Any) -> Any:
        self.send(**request)
        return self.receive()

    def kill(self) -> None:
        self.process.kill()
        self.process.join(10)

    def stop(self) -> None:
        if self.process.is_alive():
            with contextlib.suppress(BrokenPipeError, OSError):
                self.connection.send(None)
            self.process.join(10)
        if self.process.is_alive():
            self.kill()


def wait_for(path: Path, timeout: float = 60, *, alive: Callable[[], bool] | None = None) -> None:
    """Wait until ``path`` exists (a worker reached its gate)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if alive is not None and not alive():
            raise RuntimeError("the worker died before reaching its gate")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear")
        time.sleep(0.01)
