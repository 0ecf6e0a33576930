"""Sessions: one selector call per turn, a cache-stable prompt prefix, calibrated counts.

Use the ``Session`` of your adapter (:class:`pycupel.adapters.openai.Session`,
:class:`pycupel.adapters.anthropic.Session`, :class:`pycupel.adapters.langchain.Session`);
this package holds the provider-neutral engine they share:

* :mod:`~pycupel.session.core`: the window (stable prefix, recall zone, latest turn), the
  watermark compaction with grid-rounded cut points, edit detection;
* :mod:`~pycupel.session.history`: the history parsed, counted and grouped once;
* :mod:`~pycupel.session.shrink` and :mod:`~pycupel.session.summary`: the shorter versions a
  compaction keeps, and the running summary of what compactions dropped;
* :mod:`~pycupel.session.calibration` and :mod:`~pycupel.session.usage`: the provider's
  reported usage, and the correction it gives the token estimate;
* :mod:`~pycupel.session.window`: :class:`SessionWindow` and :class:`SessionReport`.
"""

from pycupel.session.calibration import Calibration
from pycupel.session.core import (
    DEFAULT_COMPACT_AT,
    DEFAULT_COMPACT_TO,
    DEFAULT_GRID,
    DEFAULT_RECALL_SHARE,
    CoreWindow,
    SessionCore,
)
from pycupel.session.history import MessageFormat, ParseState
from pycupel.session.options import SessionOptions
from pycupel.session.usage import ProviderUsage, read_usage
from pycupel.session.window import CacheBreak, SessionReport, SessionWindow

__all__ = [
    "DEFAULT_COMPACT_AT",
    "DEFAULT_COMPACT_TO",
    "DEFAULT_GRID",
    "DEFAULT_RECALL_SHARE",
    "CacheBreak",
    "Calibration",
    "CoreWindow",
    "MessageFormat",
    "ParseState",
    "ProviderUsage",
    "SessionCore",
    "SessionOptions",
    "SessionReport",
    "SessionWindow",
    "read_usage",
]
