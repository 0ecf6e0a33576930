"""A session store in one SQLite file: the processes of a machine share it.

``SQLiteStore("sessions.db")`` keeps every conversation's state in a table of the file
(created on first use), its blobs in another. Several processes and threads may use one file
at once:

* the file is put in write-ahead-log mode (``journal_mode=WAL``), so reads never wait for a
  write and a write never waits for reads;
* a save is one ``BEGIN IMMEDIATE`` transaction (the version compared and the state written
  under the write lock), so two writers are serialised by SQLite itself, and the loser of a
  compare-and-set sees the winner's version;
* a writer waiting for the lock waits up to ``timeout`` seconds (SQLite's busy timeout)
  before :class:`~pycupel.errors.SessionStoreError` is raised;
* ``synchronous=NORMAL``: a committed save survives the death of its process (what a killed
  worker needs); only a power cut can take back the last saves, never corrupt the file.

Each thread of each process opens its own connection (SQLite connections must not cross
threads or forks); ``":memory:"`` is one database shared by the threads of one process (for
tests and examples). The store pickles as its path and settings, so it can be handed to
worker processes.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from pycupel._checks import check_float
from pycupel.errors import SessionConfigError, SessionStoreError
from pycupel.session.stores.base import StoredState, check_bytes, check_key, first_version

__all__ = ["SQLiteStore"]

T = TypeVar("T")

MEMORY = ":memory:"
"""The path of a database held in memory (one per process)."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS pycupel_session_state ("
    " key TEXT PRIMARY KEY, version INTEGER NOT NULL, state BLOB NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS pycupel_session_blob ("
    " key TEXT NOT NULL, name TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (key, name))"
    " WITHOUT ROWID",
)


class SQLiteStore:
    """Session state in one SQLite file (see the module documentation).

    Args:
        path: the database file (created with its tables when missing), or ``":memory:"``.
        timeout: seconds a write waits for another process's write before giving up.

    Raises:
        SessionConfigError: a path that is not a string or path, a timeout that is not a
            positive number.
    """

    __slots__ = ("_local", "_lock", "_memory", "path", "timeout")

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        if not isinstance(path, str | os.PathLike) or isinstance(path, bytes):
            raise SessionConfigError("path", path, "must be a file path or ':memory:'")
        self.path = os.fspath(path)
        if not isinstance(self.path, str) or not self.path:
            raise SessionConfigError("path", path, "must be a non-empty file path or ':memory:'")
        if "\x00" in self.path:
            raise SessionConfigError("path", path, "must not contain NUL characters")
        self.timeout = check_float(SessionConfigError, "timeout", timeout, positive=True)
        self._lock = threading.Lock()
        self._local = threading.local()
        self._memory: sqlite3.Connection | None = None

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    def __reduce__(self) -> tuple[object, ...]:
        # Its settings only: each process opens its own connections.
        return (_rebuild, (self.path, self.timeout))

    # ------------------------------------------------------------------ the protocol

    def load(self, key: str, *, known: int | None = None) -> StoredState | None:
        """The key's state (see :class:`~pycupel.session.SessionStore`)."""
        check_key("key", key)

        def load(connection: sqlite3.Connection) -> StoredState | None:
            row = connection.execute(
                "SELECT version, CASE WHEN version IS ? THEN NULL ELSE state END"
                " FROM pycupel_session_state WHERE key = ?",
                (known, key),
            ).fetchone()
            return None if row is None else StoredState(row[0], row[1])

        return self._run("load", key, load)

    def save(self, key: str, state: bytes, *, expected: int | None) -> int | None:
        """Write ``state`` over version ``expected`` (see
        :class:`~pycupel.session.SessionStore`)."""
        check_key("key", key)
        data = check_bytes("state", state)

        def save(connection: sqlite3.Connection) -> int | None:
            connection.execute("BEGIN IMMEDIATE")
            try:
                row = connection.execute(
                    "SELECT version FROM pycupel_session_state WHERE key = ?", (key,)
                ).fetchone()
                current = None if row is None else row[0]
                if current != expected:
                    connection.execute("ROLLBACK")
                    return None
                version = first_version() if current is None else current + 1
                self._write(connection, key, version, data)
                connection.execute("COMMIT")
                return version
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise

        return self._run("save", key, save)

    def _write(self, connection: sqlite3.Connection, key: str, version: int, data: bytes) -> None:
        """Write a state inside the save's transaction."""
        connection.execute(
            "INSERT INTO pycupel_session_state (key, version, state) VALUES (?, ?, ?)"
            " ON CONFLICT (key) DO UPDATE SET version = excluded.version, state = excluded.state",
            (key, version, data),
        )

    def delete(self, key: str) -> None:
        """Remove the key's state and blobs."""
        check_key("key", key)

        def delete(connection: sqlite3.Connection) -> None:
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.execute("DELETE FROM pycupel_session_state WHERE key = ?", (key,))
                connection.execute("DELETE FROM pycupel_session_blob WHERE key = ?", (key,))
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise

        self._run("delete", key, delete)

    def put_blob(self, key: str, name: str, data: bytes) -> None:
        """Write the key's blob ``name``."""
        check_key("key", key)
        check_key("name", name)
        blob = check_bytes("data", data)

        def put(connection: sqlite3.Connection) -> None:
            connection.execute(
                "INSERT INTO pycupel_session_blob (key, name, data) VALUES (?, ?, ?)"
                " ON CONFLICT (key, name) DO UPDATE SET data = excluded.data",
                (key, name, blob),
            )

        self._run("put_blob", key, put)

    def get_blob(self, key: str, name: str) -> bytes | None:
        """The key's blob ``name``, or ``None``."""
        check_key("key", key)
        check_key("name", name)

        def get(connection: sqlite3.Connection) -> bytes | None:
            row = connection.execute(
                "SELECT data FROM pycupel_session_blob WHERE key = ? AND name = ?", (key, name)
            ).fetchone()
            return None if row is None else bytes(row[0])

        return self._run("get_blob", key, get)

    def close(self) -> None:
        """Close the calling thread's connection (the others close with their threads); a
        ``":memory:"`` database is dropped. The store opens a new connection when used
        again."""
        with self._lock:
            if self._memory is not None:
                self._memory.close()
                self._memory = None
        local = self._local
        if getattr(local, "pid", None) == os.getpid():
            local.db.close()
            local.pid = None

    # ------------------------------------------------------------------ connections

    def _run(self, operation: str, key: str, call: Callable[[sqlite3.Connection], T]) -> T:
        try:
            if self.path == MEMORY:
                with self._lock:
                    return call(self._shared())
            return call(self._connection())
        except sqlite3.Error as exc:
            raise SessionStoreError(
                repr(self), operation, key, f"{type(exc).__name__}: {exc}"
            ) from exc

    def _shared(self) -> sqlite3.Connection:
        if self._memory is None:
            self._memory = self._connect(check_same_thread=False)
        return self._memory

    def _connection(self) -> sqlite3.Connection:
        local = self._local
        pid = os.getpid()
        if getattr(local, "pid", None) != pid:  # a new thread, or a forked child
            local.db = self._connect(check_same_thread=True)
            local.pid = pid
        connection: sqlite3.Connection = local.db
        return connection

    def _connect(self, *, check_same_thread: bool) -> sqlite3.Connection:
        connection = sqlite3.connect(
            self.path,
            timeout=self.timeout,
            isolation_level=None,  # autocommit: transactions are begun explicitly
            check_same_thread=check_same_thread,
        )
        # Switching a new file to WAL takes an exclusive lock that SQLite does not wait for
        # (SQLITE_BUSY at once when another connection opens it at the same moment): the
        # set-up is retried, briefly, until the store's timeout.
        deadline = time.monotonic() + self.timeout
        pause = 0.005
        while True:
            try:
                if self.path != MEMORY:
                    connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
                for statement in _SCHEMA:
                    connection.execute(statement)
                return connection
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() + pause > deadline:
                    connection.close()
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.1)
            except BaseException:
                connection.close()
                raise


def _rebuild(path: str, timeout: float) -> SQLiteStore:
    """A store unpickled in another process: the same file, its own connections."""
    return SQLiteStore(path, timeout=timeout)
