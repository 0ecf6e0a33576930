"""One pycupel session per conversation, for integrations shared by many conversations.

A framework hook (an agent middleware, a pre-model hook) is built once and serves every
thread of an agent. A :class:`~pycupel.session.SessionCore` holds one conversation, so the
hook keeps a session per conversation key (the framework's thread id, or failing that the id
of the conversation's first message), the least recently used dropped beyond a bound so a
long-lived agent does not grow without end. Without a store, a dropped or new session starts
with a full cache break, never a wrong window; with a store (``store=``), a session made for
a conversation another worker (or this one, before dropping it) served continues it exactly
from the stored state.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from pycupel._checks import check_int
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextBudget
from pycupel.session import SessionStore

__all__ = ["DEFAULT_MAX_SESSIONS", "SessionPool", "check_store", "session_budget"]

S = TypeVar("S")

DEFAULT_MAX_SESSIONS = 1_024
"""Conversations whose sessions a shared integration keeps at once."""


class SessionPool(Generic[S]):
    """Sessions by conversation key, created on first use, least recently used dropped first.

    Thread-safe: the pool's lock guards the mapping; each session guards itself.
    """

    __slots__ = ("_factory", "_lock", "_sessions", "max_sessions")

    def __init__(self, factory: Callable[[Hashable], S], *, max_sessions: int) -> None:
        self.max_sessions = check_int(PipelineConfigError, "max_sessions", max_sessions, minimum=1)
        self._factory = factory
        self._lock = threading.Lock()
        self._sessions: OrderedDict[Hashable, S] = OrderedDict()

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def get(self, key: Hashable) -> S:
        """The session of conversation ``key`` (a new one the first time)."""
        with self._lock:
            session = self._sessions.get(key)
            if session is None:
                session = self._factory(key)
                self._sessions[key] = session
                while len(self._sessions) > self.max_sessions:
                    self._sessions.popitem(last=False)
            else:
                self._sessions.move_to_end(key)
            return session


def session_budget(budget: int | ContextBudget) -> int:
    """A session's whole-prompt budget: an int as given; for a ContextBudget its target,
    within ``max_tokens - output_reserve``."""
    if isinstance(budget, ContextBudget):
        return min(budget.target_tokens, budget.max_tokens - budget.output_reserve)
    return budget


def check_store(store: object) -> SessionStore | None:
    """An integration's ``store=``: a :class:`~pycupel.session.SessionStore` or None.

    Raises:
        PipelineConfigError: anything else.
    """
    if store is not None and not isinstance(store, SessionStore):
        raise PipelineConfigError(
            "store",
            store,
            "must be a pycupel.session.SessionStore (SQLiteStore, RedisStore...) or None",
        )
    return store
