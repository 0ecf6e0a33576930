"""Sessions whose state lives in a store: a conversation's turns taken by any worker.

``Session(budget=..., store=SQLiteStore("sessions.db"), key="conversation-42")`` wraps the
session engine (:class:`~pycupel.session.core.SessionCore`) in a :class:`StoredCore`. Each
turn:

1. **Load.** The store is asked for the key's state, passing the version this object saved
   last. When the store still holds that version, nothing happened elsewhere: the engine in
   memory takes the turn as it would without a store (no state read, no history parsed
   again). Otherwise the state (another worker's turn, or a restart) is read into a new
   engine, the history checked against its fingerprint (:mod:`pycupel.session.saved`,
   :mod:`pycupel.session.loaded`, :mod:`pycupel.session.restore`), and
   the conversation continues exactly: the same window, cache break and report as if one
   process had taken every turn. A key without a state starts the conversation.
2. **Fit**, as always.
3. **Save**, a compare-and-set on the version loaded. When another worker saved a turn of
   the same conversation in between (two turns of one conversation at once), the save is
   refused and nothing of this turn is kept: with ``on_conflict="retry"`` (the default) the
   turn loads the other worker's state and is fitted again on it, at most
   :data:`CONFLICT_RETRIES` times; with ``"raise"``, or when the retries run out,
   :class:`~pycupel.errors.SessionConflictError` is raised.

``record_usage`` saves the calibration it brings the same way, over the version the turn
saved; when another worker's turn came in between, the usage belongs to a window that is no
longer the conversation's latest: it is dropped (``"retry"``) or raises
:class:`~pycupel.errors.SessionConflictError` (``"raise"``).

A failure inside a turn (a malformed history, a store error) keeps nothing of it: the next
turn starts from the stored state. A worker killed in the middle of a turn has saved nothing
of it either, so the next turn, on any worker, continues from the turn before.

Thread rules are the session's: the methods hold the object's lock; ``afit`` does not hold
it while awaiting (two coroutines fitting one conversation at once meet at the save, as two
workers do). The store is called synchronously, from ``afit`` too: a call is a write to a
local file or one round trip to a server.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, Literal, TypeVar

from pycupel.errors import SessionConfigError, SessionConflictError
from pycupel.session.core import SessionCore
from pycupel.session.loaded import read_state
from pycupel.session.restore import restore_state
from pycupel.session.saved import StateWriter
from pycupel.session.stores.base import SessionStore, check_key
from pycupel.session.usage import ProviderUsage, read_usage
from pycupel.session.window import CoreWindow
from pycupel.tokens.asynchronous import AsyncTokenCounter

__all__ = ["CONFLICT_RETRIES", "OnConflict", "StoredCore", "check_store_options"]

M = TypeVar("M")

OnConflict = Literal["retry", "raise"]
"""What a turn does when another worker saved a turn of its conversation first."""
CONFLICT_RETRIES = 3
"""How many times a turn is fitted again after a conflict before it raises."""


def check_store_options(
    store: object, key: object, on_conflict: object
) -> tuple[SessionStore | None, str | None, OnConflict]:
    """A session's ``store=``, ``key=`` and ``on_conflict=`` options, checked.

    Raises:
        SessionConfigError: a store that is not a :class:`~pycupel.session.SessionStore`, a
            store without a key (or a key without a store), a bad key, an ``on_conflict``
            other than ``"retry"`` or ``"raise"``.
    """
    if on_conflict not in ("retry", "raise"):
        raise SessionConfigError("on_conflict", on_conflict, "must be 'retry' or 'raise'")
    if store is None:
        if key is not None:
            raise SessionConfigError("store", None, f"must be given with key={key!r}")
        return None, None, on_conflict
    if not isinstance(store, SessionStore):
        raise SessionConfigError(
            "store",
            store,
            "must be a pycupel.session.SessionStore (load, save, delete, put_blob, get_blob), "
            "such as SQLiteStore or RedisStore",
        )
    if key is None:
        raise SessionConfigError("key", None, "must be given with store= (the conversation's id)")
    return store, check_key("key", key), on_conflict


class StoredCore(Generic[M]):
    """A session engine whose state is loaded from a store before each turn and saved after
    it (see the module documentation). Used by every format's ``Session`` built with
    ``store=`` and ``key=``."""

    __slots__ = (
        "_build",
        "_core",
        "_fresh",
        "_lock",
        "_version",
        "_writer",
        "key",
        "on_conflict",
        "store",
    )

    def __init__(
        self,
        build: Callable[[], SessionCore[M]],
        *,
        store: SessionStore,
        key: str,
        on_conflict: OnConflict = "retry",
        core: SessionCore[M] | None = None,
    ) -> None:
        self._build = build
        self.store = store
        self.key = key
        self.on_conflict: OnConflict = on_conflict
        self._lock = threading.Lock()
        self._core: SessionCore[M] = core if core is not None else build()
        self._fresh = True
        """Whether the engine never took a turn (a state may be restored into it)."""
        self._version: int | None = None
        """The stored version the engine in memory holds (None: none, or not to be trusted)."""
        self._writer = StateWriter()

    @property
    def calibration_ratio(self) -> float:
        """The engine's calibration ratio, as of the latest turn this object took."""
        return self._core.calibration_ratio

    # ------------------------------------------------------------------ turns

    def fit(self, messages: Sequence[M], system: object) -> CoreWindow:
        """This turn's window (see the module documentation)."""
        with self._lock:
            attempts = 0
            while True:
                attempts += 1
                core, loaded = self._load(messages, system)
                try:
                    window = core.fit(messages, system)
                except BaseException:
                    self._discard()
                    raise
                if self._save(core, window, system, loaded):
                    return window
                self._conflict(loaded, attempts)

    async def afit(
        self, messages: Sequence[M], counter: AsyncTokenCounter, system: object
    ) -> CoreWindow:
        """:meth:`fit` with the new messages counted by an asynchronous counter."""
        attempts = 0
        while True:
            attempts += 1
            with self._lock:
                core, loaded = self._load(messages, system)
            try:
                window = await core.afit(messages, counter, system)
            except BaseException:
                with self._lock:
                    self._discard()
                raise
            with self._lock:
                # Another coroutine may have replaced the engine while this one awaited.
                if self._core is core and self._save(core, window, system, loaded):
                    return window
                self._discard()
                self._conflict(loaded, attempts)

    def record_usage(self, usage: object) -> ProviderUsage:
        """Calibrate with the provider's usage of the latest window and save it (see the
        module documentation)."""
        read = read_usage(usage)
        with self._lock:
            loaded = self._version
            if loaded is None and not self._fresh:
                # The latest turn of this object was not saved (a conflict or a failure).
                return self._stale_usage(read, loaded)
            recorded = self._core.record_usage(read)
            try:
                data = self._writer.write(self._core)
                saved = self.store.save(self.key, data, expected=loaded)
            except BaseException:
                self._discard()  # the engine in memory holds usage the store may not
                raise
            if saved is None:
                self._discard()
                return self._stale_usage(read, loaded)
            self._version = saved
            return recorded

    # ------------------------------------------------------------------ the store

    def _source(self) -> str:
        return f"{self.store!r} key {self.key!r}"

    def _load(self, messages: Sequence[M], system: object) -> tuple[SessionCore[M], int | None]:
        """The engine to take the turn with, and the stored version it holds."""
        found = self.store.load(self.key, known=self._version)
        if found is None:
            if not self._fresh:  # the key was deleted: the conversation starts again
                self._core = self._build()
                self._fresh = True
                self._writer = StateWriter()
            self._version = None
            return self._core, None
        if found.version == self._version:
            return self._core, found.version  # nothing happened elsewhere
        if found.state is None:  # a store that left the bytes out for another version
            found = self.store.load(self.key)
            if found is None:  # deleted in between
                return self._load(messages, system)
        saved = read_state(found.state or b"", source=self._source())
        core = self._core if self._fresh else self._build()
        self._core, self._fresh, self._version = core, False, None
        self._writer = StateWriter(
            restore_state(core, saved, messages, system, source=self._source())
        )
        self._version = found.version
        return core, found.version

    def _save(
        self, core: SessionCore[M], window: CoreWindow, system: object, loaded: int | None
    ) -> bool:
        """Save the turn over version ``loaded``; False when another worker was first."""
        try:
            self._writer.follow(core, system, edited_at=window.report.edited_at)
            data = self._writer.write(core)
            saved = self.store.save(self.key, data, expected=loaded)
        except BaseException:
            self._discard()
            raise
        if saved is None:
            self._discard()
            return False
        self._version = saved
        self._fresh = False
        return True

    def _discard(self) -> None:
        """Trust nothing in memory: the next turn loads the stored state into a new engine."""
        self._version = None
        self._fresh = False

    def _conflict(self, loaded: int | None, attempts: int) -> None:
        """After a refused save: return to fit again, or raise."""
        if self.on_conflict == "retry" and attempts <= CONFLICT_RETRIES:
            return
        found = self.store.load(self.key, known=loaded)
        raise SessionConflictError(
            self.key, loaded, found.version if found is not None else None, attempts
        )

    def _stale_usage(self, read: ProviderUsage, loaded: int | None) -> ProviderUsage:
        """The usage of a window that is no longer the conversation's latest."""
        if self.on_conflict == "raise":
            found = self.store.load(self.key, known=loaded)
            raise SessionConflictError(
                self.key, loaded, found.version if found is not None else None, 1
            )
        return read
