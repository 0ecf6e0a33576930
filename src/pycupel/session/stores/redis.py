"""A session store on a Redis server: the workers of a fleet share it.

``RedisStore("redis://localhost:6379/0")`` keeps each conversation's state in a Redis hash
(its version and its bytes) and its blobs in a second hash, both under
``prefix + "{" + key + "}"`` (the braces make them one cluster hash slot). Every operation is
one round trip:

* ``load`` and ``save`` are Lua scripts, so the version check and the read or write happen
  atomically on the server: a compare-and-set without ``WATCH``, that no other client can
  interleave with;
* ``load(key, known=v)`` returns the version alone when it is still ``v``, so a worker that
  served the previous turn does not read its own state back;
* with ``ttl=`` (seconds), every save (and every blob written) sets the conversation to
  expire that long after its latest turn.

Needs the ``redis`` package (``pip install 'pycupel[redis]'``), imported when the first store
is made. The store pickles as its URL and settings, so it can be handed to worker processes;
each process opens its own connections.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from pycupel.errors import MissingDependencyError, SessionConfigError, SessionStoreError
from pycupel.session.stores.base import StoredState, check_bytes, check_key, first_version

__all__ = ["DEFAULT_PREFIX", "RedisStore"]

T = TypeVar("T")

DEFAULT_PREFIX = "pycupel:session:"
"""What every key the store writes starts with."""

_LOAD = """
local version = redis.call('HGET', KEYS[1], 'v')
if not version then return false end
if version == ARGV[1] then return {version} end
return {version, redis.call('HGET', KEYS[1], 's')}
"""
"""KEYS: the state hash. ARGV: the version the caller holds ('' for none)."""

_SAVE = """
local version = redis.call('HGET', KEYS[1], 'v')
if (version or '') ~= ARGV[1] then return false end
local new = ARGV[3]
if version then new = tostring(tonumber(version) + 1) end
redis.call('HSET', KEYS[1], 'v', new, 's', ARGV[2])
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return new
"""
"""KEYS: the state hash, the blob hash. ARGV: the expected version ('' for none), the state,
the first version of a new key, the time to live in milliseconds (0 for none). Versions stay
far below 2**53, where Lua's numbers are exact and ``tostring`` writes every digit."""


class RedisStore:
    """Session state on a Redis server (see the module documentation).

    Args:
        url: the server, as redis-py reads it (``redis://[user:password@]host:port/db``,
            ``rediss://`` for TLS, ``unix:///path/redis.sock``).
        prefix: what every key the store writes starts with (no braces).
        ttl: seconds a conversation is kept after its latest save (``None``: kept until
            deleted).
        timeout: seconds a call waits for the server before giving up.

    Raises:
        MissingDependencyError: the ``redis`` package is not installed.
        SessionConfigError: a URL redis-py does not read, a prefix with braces, a ttl or
            timeout that is not a positive number.
    """

    __slots__ = ("_client", "_load", "_lock", "_pid", "_save", "prefix", "timeout", "ttl", "url")

    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        ttl: float | None = None,
        timeout: float = 10.0,
    ) -> None:
        if not isinstance(url, str) or not url:
            raise SessionConfigError(
                "url", url, "must be a Redis URL such as 'redis://host:6379/0'"
            )
        if not isinstance(prefix, str) or "{" in prefix or "}" in prefix:
            raise SessionConfigError("prefix", prefix, "must be a string without braces")
        self.url = url
        self.prefix = prefix
        self.ttl = _positive("ttl", ttl) if ttl is not None else None
        self.timeout = _positive("timeout", timeout)
        self._lock = threading.Lock()
        self._pid = -1
        self._client: Any = None
        self._load: Any = None
        self._save: Any = None
        self._connect()  # a bad URL fails here, before any turn

    def __repr__(self) -> str:
        return f"RedisStore({_safe_url(self.url)!r})"

    def __reduce__(self) -> tuple[object, ...]:
        # Its settings only: each process opens its own connections.
        return (_rebuild, (self.url, self.prefix, self.ttl, self.timeout))

    # ------------------------------------------------------------------ the protocol

    def load(self, key: str, *, known: int | None = None) -> StoredState | None:
        """The key's state (see :class:`~pycupel.session.SessionStore`)."""
        check_key("key", key)

        def load(client: Any) -> StoredState | None:
            found = self._load(keys=[self._state_key(key)], args=[_text(known)], client=client)
            if found is None:
                return None
            state = bytes(found[1]) if len(found) > 1 else None
            return StoredState(int(found[0]), state)

        return self._run("load", key, load)

    def save(self, key: str, state: bytes, *, expected: int | None) -> int | None:
        """Write ``state`` over version ``expected`` (see
        :class:`~pycupel.session.SessionStore`)."""
        check_key("key", key)
        data = check_bytes("state", state)
        ttl = 0 if self.ttl is None else max(1, math.ceil(self.ttl * 1000))

        def save(client: Any) -> int | None:
            new = self._save(
                keys=[self._state_key(key), self._blob_key(key)],
                args=[_text(expected), data, str(first_version()), str(ttl)],
                client=client,
            )
            return None if new is None else int(new)

        return self._run("save", key, save)

    def delete(self, key: str) -> None:
        """Remove the key's state and blobs."""
        check_key("key", key)
        self._run("delete", key, lambda c: c.delete(self._state_key(key), self._blob_key(key)))

    def put_blob(self, key: str, name: str, data: bytes) -> None:
        """Write the key's blob ``name``."""
        check_key("key", key)
        check_key("name", name)
        blob = check_bytes("data", data)

        def put(client: Any) -> None:
            target = self._blob_key(key)
            with client.pipeline(transaction=True) as pipe:
                pipe.hset(target, name, blob)
                if self.ttl is not None:
                    pipe.pexpire(target, max(1, math.ceil(self.ttl * 1000)))
                pipe.execute()

        self._run("put_blob", key, put)

    def get_blob(self, key: str, name: str) -> bytes | None:
        """The key's blob ``name``, or ``None``."""
        check_key("key", key)
        check_key("name", name)

        def get(client: Any) -> bytes | None:
            data = client.hget(self._blob_key(key), name)
            return None if data is None else bytes(data)

        return self._run("get_blob", key, get)

    def close(self) -> None:
        """Close the store's connections (it opens new ones when used again)."""
        with self._lock:
            if self._client is not None and self._pid == os.getpid():
                self._client.close()
            self._client = None
            self._pid = -1

    # ------------------------------------------------------------------ the server

    def _state_key(self, key: str) -> str:
        return f"{self.prefix}{{{key}}}"

    def _blob_key(self, key: str) -> str:
        return f"{self.prefix}{{{key}}}:blobs"

    def _run(self, operation: str, key: str, call: Callable[[Any], T]) -> T:
        redis = _redis()
        try:
            return call(self._connect())
        except redis.RedisError as exc:
            raise SessionStoreError(
                repr(self), operation, key, f"{type(exc).__name__}: {exc}"
            ) from exc

    def _connect(self) -> Any:
        """This process's client (redis-py's clients are thread-safe; not fork-safe)."""
        pid = os.getpid()
        client = self._client
        if client is not None and self._pid == pid:
            return client
        with self._lock:
            if self._client is None or self._pid != pid:
                redis = _redis()
                try:
                    client = redis.Redis.from_url(
                        self.url, socket_timeout=self.timeout, socket_connect_timeout=self.timeout
                    )
                except ValueError as exc:
                    raise SessionConfigError(
                        "url", _safe_url(self.url), f"must be a URL redis-py reads ({exc})"
                    ) from exc
                self._load = client.register_script(_LOAD)
                self._save = client.register_script(_SAVE)
                self._client = client
                self._pid = pid
            return self._client


def _redis() -> Any:
    try:
        import redis  # noqa: PLC0415  (an optional extra, imported on first use)
    except ImportError as exc:
        raise MissingDependencyError("RedisStore", "redis", "redis") from exc
    return redis


def _positive(field: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SessionConfigError(field, value, "must be a number of seconds")
    if not math.isfinite(value) or value <= 0:
        raise SessionConfigError(field, value, "must be a finite number of seconds > 0")
    return float(value)


def _text(version: int | None) -> str:
    return "" if version is None else str(version)


def _safe_url(url: str) -> str:
    """The URL without its password (for messages and reprs)."""
    scheme, separator, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not separator or not at:
        return url
    user = credentials.partition(":")[0]
    return f"{scheme}://{user}:***@{host}" if ":" in credentials else url


def _rebuild(url: str, prefix: str, ttl: float | None, timeout: float) -> RedisStore:
    """A store unpickled in another process: the same server, its own connections."""
    return RedisStore(url, prefix=prefix, ttl=ttl, timeout=timeout)
