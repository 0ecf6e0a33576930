"""Where sessions keep their state between turns: the :class:`SessionStore` protocol.

A conversation's turns can land on different worker processes and machines (several
workers behind a load balancer, restarts, serverless functions). A session built with
``store=`` and ``key=`` loads the conversation's state from the store before a turn and
saves it after, so whichever worker takes the next turn continues the conversation exactly
(:mod:`pycupel.session.durable`).

A store is a small object of five methods, in the manner of an HTTP transport: any object
with them is a store. Two ship with pycupel, :class:`~pycupel.session.SQLiteStore` (one file,
shared by the processes of a machine) and :class:`~pycupel.session.RedisStore` (a fleet).

The contract
------------

* **State, versioned.** A key holds at most one state: opaque bytes (the session's encoding,
  :mod:`pycupel.session.saved`) and a version, an integer the store assigns on every save.
  A version is never handed out twice for a key, also across a delete (stores start a new
  key at a random version), so a worker holding version ``v`` in memory can trust that the
  store still holding ``v`` means nothing happened since.
* ``load(key, known=None)``: the key's :class:`StoredState`, or ``None`` when it has none.
  When ``known`` equals the stored version, the state's bytes are left out
  (``StoredState.state is None``): the caller holds them already, and the round trip stays
  small.
* ``save(key, state, expected=...)``: compare-and-set. The state is written only when the
  key's version is still ``expected`` (``None``: the key must have no state), atomically
  with the comparison; returns the new version, or ``None`` when the comparison failed
  (another writer was first), in which case nothing was written.
* ``delete(key)``: removes the state and every blob of the key (a missing key is fine).
* **Blobs.** A key also has a blob area: ``put_blob(key, name, data)`` writes the bytes
  under ``name`` (overwriting), ``get_blob(key, name)`` reads them back (``None`` when
  absent). Blobs are not versioned: they hold content a state refers to by name (the
  originals of shortened tool outputs, say), written before the state that names them, and
  deleted with the key.
* **Safety.** Every method may be called from several threads and processes at once; a
  method that fails raises :class:`~pycupel.errors.SessionStoreError` and leaves the
  stored data as it was (a process killed in the middle of a call leaves it as it was, or
  with the call done, never half done).

Keys and blob names are non-empty strings (:func:`check_key`); a session uses the
conversation's id from your application or framework (a LangGraph thread id, an Agents SDK
session id).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pycupel.errors import SessionConfigError

__all__ = [
    "MAX_KEY_LENGTH",
    "SessionStore",
    "StoredState",
    "check_bytes",
    "check_key",
    "first_version",
]

MAX_KEY_LENGTH = 1_024
"""The longest key or blob name a store takes, in characters."""


@dataclass(frozen=True, slots=True)
class StoredState:
    """A key's state as :meth:`SessionStore.load` returns it.

    Attributes:
        version: the version the store assigned at the state's save.
        state: the saved bytes; ``None`` when the caller passed ``known=version`` (it holds
            them already).
    """

    version: int
    state: bytes | None


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions keep their state between turns (see the module documentation for the
    contract each method keeps)."""

    def load(self, key: str, *, known: int | None = None) -> StoredState | None:
        """The key's state, or ``None``; without its bytes when ``known`` is its version."""
        ...

    def save(self, key: str, state: bytes, *, expected: int | None) -> int | None:
        """Write ``state`` if the key's version is still ``expected`` (``None``: no state);
        the new version, or ``None`` when another writer was first (nothing written)."""
        ...

    def delete(self, key: str) -> None:
        """Remove the key's state and blobs."""
        ...

    def put_blob(self, key: str, name: str, data: bytes) -> None:
        """Write ``data`` as the key's blob ``name`` (overwriting)."""
        ...

    def get_blob(self, key: str, name: str) -> bytes | None:
        """The key's blob ``name``, or ``None``."""
        ...


def check_key(field: str, value: object) -> str:
    """A store key or blob name: a non-empty string of at most :data:`MAX_KEY_LENGTH`
    characters, without NUL characters.

    Raises:
        SessionConfigError: anything else.
    """
    if not isinstance(value, str):
        raise SessionConfigError(field, value, "must be a string (the conversation's id)")
    if not value:
        raise SessionConfigError(field, value, "must not be empty")
    if len(value) > MAX_KEY_LENGTH:
        raise SessionConfigError(
            field, value, f"must be at most {MAX_KEY_LENGTH} characters, not {len(value)}"
        )
    if "\x00" in value:
        raise SessionConfigError(field, value, "must not contain NUL characters")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise SessionConfigError(
                field, value, "must be valid Unicode text (it holds a lone surrogate)"
            ) from None
    return value


def check_bytes(field: str, value: object) -> bytes:
    """Bytes to store (``bytes``, or a ``bytearray``/``memoryview`` copied to bytes).

    Raises:
        SessionConfigError: anything else.
    """
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    raise SessionConfigError(field, value, "must be bytes")


def first_version() -> int:
    """A new key's first version: random, so that a deleted key's versions are not handed
    out again (below 2**31, so that every store adds to it exactly)."""
    return secrets.randbelow(2**31 - 1) + 1
