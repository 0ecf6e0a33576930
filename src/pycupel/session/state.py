"""A session's state: its settings, the engine it reads the history with, and what it keeps
from one turn to the next.

:class:`SessionState` declares every attribute the parts of
:class:`~pycupel.session.core.SessionCore` share (:mod:`~pycupel.session.learned`,
:mod:`~pycupel.session.compaction`, :mod:`~pycupel.session.zones`,
:mod:`~pycupel.session.request`), so each part reads as what it does to that state.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from pycupel.conversation.units import MessageUnit
from pycupel.pipeline import Pipeline
from pycupel.scorers.base import Scorer
from pycupel.session.calibration import Calibration
from pycupel.session.format import MessageFormat
from pycupel.session.history import History
from pycupel.session.shrink import ShownVersions
from pycupel.session.summary import RunningSummary
from pycupel.session.window import CacheBreak
from pycupel.tokens import TokenCounter

if TYPE_CHECKING:
    from pycupel.conversation.recall import Recall
    from pycupel.conversation.versions import Shrink
    from pycupel.policy import Policy

__all__ = ["SessionState"]

M = TypeVar("M")


class SessionState(Generic[M]):
    """The attributes of a session (set by :class:`~pycupel.session.core.SessionCore`).

    Settings: ``budget``, ``compact_at``, ``compact_to``, ``grid``, ``recall_share``,
    ``compact_for_recall``, ``recall_every_turn``, ``prefer``, ``policy``, ``shrink``,
    ``recall`` (the recall tool's store of elided text),
    ``format``, ``counter``.

    Across turns: the zones (``_stable``, ``_recall``, ``_tail``: unit positions in
    order), the previous request (``_previous``...) and its counts, what usage taught
    (``_calibration``, ``_learned``, ``_reported_units``), the shorter versions shown
    (``_shown``) and the running summary (``_summary``), the turn counters; after a one-off
    request (``prefer="recall"``) its units (``_one_off_units``, what its usage is learned
    for) and the cache break the next window reports (``_pending_break``).
    """

    budget: int
    compact_at: float
    compact_to: float
    grid: int
    recall_share: float
    compact_for_recall: bool
    recall_every_turn: bool
    prefer: str
    policy: Policy | Pipeline | None
    shrink: Shrink | None
    recall: Recall | None
    format: MessageFormat[M]
    counter: TokenCounter
    _scorer: Scorer | None
    _lock: threading.Lock
    _history: History[M]
    _calibration: Calibration
    _stable: list[int]
    _recall: list[int]
    _tail: list[int]
    _previous: list[int]
    _previous_max: int
    _previous_tokens: int
    _previous_units: tuple[MessageUnit, ...]
    _previous_indices: tuple[int, ...]
    _stable_messages: tuple[list[int], int]
    _recall_messages: tuple[list[int], tuple[int, ...]]
    _stable_positions: tuple[list[int], npt.NDArray[np.intp]]
    _reported_units: frozenset[int]
    _recall_query: int
    _turn: int
    _recorded_turn: int
    _last_estimate: int | None
    _learned: dict[int, float]
    _headers: list[int]
    _previous_summary: object
    _shown: ShownVersions[M] | None
    _summary: RunningSummary[M] | None
    _one_off_units: list[int] | None
    _pending_break: CacheBreak | None
    _cached_prefixes: list[int]
