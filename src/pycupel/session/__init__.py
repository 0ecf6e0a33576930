"""Sessions: one selector call per turn, a cache-stable prompt prefix, calibrated counts.

Use the ``Session`` of your format (:class:`pycupel.adapters.openai.Session`,
:class:`pycupel.adapters.anthropic.Session`...); this package holds the provider-neutral
engine they share, on top of the conversation engine (:mod:`pycupel.conversation`); it never
imports a format:

* :mod:`~pycupel.session.chat`: :class:`ChatSession`, the body of every format's ``Session``;
* :mod:`~pycupel.session.breakpoints`: where a window marks explicit prompt-cache breakpoints;

* :mod:`~pycupel.session.core`: the window (stable prefix, recall zone, latest turn), the
  watermark compaction with grid-rounded cut points, edit detection;
* :mod:`~pycupel.session.history`: the history parsed, counted and grouped once;
* :mod:`~pycupel.session.shrink` and :mod:`~pycupel.session.summary`: the shorter versions a
  compaction keeps, and the running summary of what compactions dropped;
* :mod:`~pycupel.session.calibration` and :mod:`~pycupel.session.usage`: the provider's
  reported usage, and the correction it gives the token estimate;
* :mod:`~pycupel.session.window`: :class:`SessionWindow` and :class:`SessionReport`.
"""

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
from pycupel.session.options import SessionOptions
from pycupel.session.usage import ProviderUsage, read_usage
from pycupel.session.window import CacheBreak, CoreWindow, SessionReport, SessionWindow

__all__ = [
    "DEFAULT_COMPACT_AT",
    "DEFAULT_COMPACT_TO",
    "DEFAULT_GRID",
    "DEFAULT_RECALL_SHARE",
    "CacheBreak",
    "Calibration",
    "ChatSession",
    "CoreWindow",
    "ListSession",
    "MessageFormat",
    "ParseState",
    "ProviderUsage",
    "SessionCore",
    "SessionOptions",
    "SessionReport",
    "SessionWindow",
    "read_usage",
]
