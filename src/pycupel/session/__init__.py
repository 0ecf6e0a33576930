"""Sessions: one selector call per turn, a cache-stable prompt prefix, calibrated counts.

Use the ``Session`` of your format (:class:`pycupel.adapters.openai.Session`,
:class:`pycupel.adapters.anthropic.Session`...); this package holds the provider-neutral
engine they share, on top of the conversation engine (:mod:`pycupel.conversation`); it never
imports a format:

* :mod:`~pycupel.session.chat`: :class:`ChatSession`, the body of every format's ``Session``;
* :mod:`~pycupel.session.breakpoints`: where a window marks explicit prompt-cache breakpoints;

* :mod:`~pycupel.session.core`: the window (stable prefix, recall zone, latest turn), the
  watermark compaction with grid-rounded cut points, edit detection;
* :mod:`~pycupel.session.history`: the history parsed, counted and grouped once, and
  :mod:`~pycupel.session.columns` the per-unit facts its window's zones read;
* :mod:`~pycupel.session.shrink` and :mod:`~pycupel.session.summary`: the shorter versions a
  compaction keeps, and the running summary of what compactions dropped;
* :mod:`~pycupel.session.calibration` and :mod:`~pycupel.session.usage`: the provider's
  reported usage, and the correction it gives the token estimate;
* :mod:`~pycupel.session.window`: :class:`SessionWindow` and :class:`SessionReport`;
* :mod:`~pycupel.session.durable`, :mod:`~pycupel.session.saved` and
  :mod:`~pycupel.session.stores`: a session's state kept in a :class:`SessionStore`
  (:class:`SQLiteStore`, :class:`RedisStore`) between turns, so that any worker process
  continues a conversation exactly; :class:`BlobRecallStore` keeps the recall tool's
  originals beside it.
"""

from typing import TYPE_CHECKING

from pycupel._lazy import lazy_attributes
from pycupel.conversation.parsed import ParseState
from pycupel.session.calibration import Calibration
from pycupel.session.chat import ChatSession, ListSession
from pycupel.session.core import (
    DEFAULT_COMPACT_AT,
    DEFAULT_COMPACT_TO,
    DEFAULT_GRID,
    DEFAULT_RECALL_SHARE,
    SessionCore,
)
from pycupel.session.format import MessageFormat
from pycupel.session.options import EngineOptions, SessionOptions
from pycupel.session.stores.base import SessionStore, StoredState
from pycupel.session.stores.recall import BlobRecallStore
from pycupel.session.usage import ProviderUsage, read_usage
from pycupel.session.window import CacheBreak, CoreWindow, SessionReport, SessionWindow

if TYPE_CHECKING:
    from pycupel.session.stores.redis import RedisStore
    from pycupel.session.stores.sqlite import SQLiteStore

__all__ = [
    "DEFAULT_COMPACT_AT",
    "DEFAULT_COMPACT_TO",
    "DEFAULT_GRID",
    "DEFAULT_RECALL_SHARE",
    "BlobRecallStore",
    "CacheBreak",
    "Calibration",
    "ChatSession",
    "CoreWindow",
    "EngineOptions",
    "ListSession",
    "MessageFormat",
    "ParseState",
    "ProviderUsage",
    "RedisStore",
    "SQLiteStore",
    "SessionCore",
    "SessionOptions",
    "SessionReport",
    "SessionStore",
    "SessionWindow",
    "StoredState",
    "read_usage",
]

# The stores load on first use: sqlite3 and redis-py only when a store is made.
__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "SQLiteStore": "pycupel.session.stores.sqlite",
        "RedisStore": "pycupel.session.stores.redis",
    },
    __all__,
)
