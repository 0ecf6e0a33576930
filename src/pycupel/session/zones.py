"""The recall zone: dropped units relevant to the latest user message, before the latest turn.

The zone sits after the stable prefix, chronological inside, within ``recall_share`` x budget
and what the budget leaves beside the window; scoring and choosing are
:mod:`pycupel.session.recall`'s. This module moves the zone and keeps the zones in order
around the latest user turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

import numpy as np

from pycupel.conversation.structure import session_headers
from pycupel.session.compaction import Compaction
from pycupel.session.recall import Recall, RecallScores, choose_recall, score_recall

if TYPE_CHECKING:
    pass

__all__ = ["Zones"]

M = TypeVar("M")

RECALL_HEADROOM = 0.01
"""Share of the budget the recall zone leaves free: the provider's count of a regrouped
window can exceed the calibrated prediction by a few percent."""


class Zones(Compaction[M]):
    """The recall zone, kept in place around the latest turn.

    A part of :class:`~pycupel.session.core.SessionCore`.
    """

    def _recall_limit(self, overhead: float) -> float:
        """The window's tokens the recall zone may fill up to (the budget, less headroom)."""
        return (1.0 - RECALL_HEADROOM) * self.budget - overhead

    def _restore_latest_turn(self) -> None:
        """After an edit: the latest user turn whole in the tail (a shortened history may
        end on a turn an earlier compaction dropped) and the zones in order around it; the
        recall zone is decided again."""
        latest = self._history.latest_user_unit
        window = {*self._stable, *self._tail, *range(max(latest, 0), len(self._history.units))}
        ordered = sorted(window)
        self._stable = [u for u in ordered if u < latest]
        self._tail = [u for u in ordered if u >= latest]
        self._recall = [u for u in self._recall if u not in window]
        self._recall_query = -1

    def _shift_start(self) -> None:
        """The provider now reads the history from a later unit (it compacted the
        conversation itself): the zones keep only what it reads, and the recall zone is
        decided again. What usage taught about the units still read stays true; a running
        summary of what the session dropped before is forgotten (the provider's own summary
        replaces it)."""
        history = self._history
        start = history.start_unit
        units = history.units

        def read(u: int) -> bool:
            return u >= start or units[u].system_parameter

        self._stable = [u for u in self._stable if read(u)]
        self._recall = [u for u in self._recall if read(u)]
        self._tail = [u for u in self._tail if read(u)]
        self._learned = {u: t for u, t in self._learned.items() if read(u)}
        self._reported_units = frozenset(u for u in self._reported_units if read(u))
        self._recall_query = -1
        self._cached_prefixes = []
        if self._summary is not None:
            self._summary.forget_from(0)

    def _move_recall(self, recalled: list[int]) -> None:
        """Put ``recalled`` between the stable prefix and the latest turn."""
        latest = self._history.latest_user_unit
        window = [*self._stable, *self._tail]  # both ascending, the tail after the prefix
        self._stable = [u for u in window if u < latest]
        self._tail = [u for u in window if u >= latest]
        units = self._history.units
        if all(units[u].system_parameter for u in self._stable):
            recalled = self._drop_leading(recalled)  # the recall zone leads the messages
        self._recall = recalled

    def _select_recall(self, room: float) -> Recall:
        """Dropped units the latest user message needs, ascending, within ``room``
        (:func:`~pycupel.session.recall.select_recall`)."""
        return self._choose_recall(self._score_recall(), room)

    def _score_recall(self, query: str | None = None) -> RecallScores | None:
        """The recall corpus scored for the latest user message (its text ``query`` when
        the caller has it; :func:`~pycupel.session.recall.score_recall`); None when nothing
        open matches."""
        history = self._history
        if query is None:
            query = history.latest_user_text()
        if not query:
            return None
        units = history.units
        # Every unit but the system prompt, pinned units and the latest user turn (kept by
        # the history as units arrive).
        corpus = history.recall_corpus()
        # The stable prefix as an index array, converted again only when the zone was
        # replaced (positions are kept by an edit, and it is never changed in place).
        converted, positions = self._stable_positions
        if converted is not self._stable:
            positions = np.asarray(self._stable, dtype=np.intp)
            self._stable_positions = (self._stable, positions)
        # What the zone may recall: the corpus less the stable prefix and the tail.
        open_units = corpus.copy()
        open_units[positions] = False
        open_units[self._tail] = False
        if not open_units.any():  # the whole corpus is in the window
            return None
        return score_recall(
            units,
            scored=history.recall_units,
            query=query,
            index=history.recall_index,
            vocabulary=history.vocabulary,
            scorer=self._scorer,
            corpus=corpus,
            open_units=open_units,
            linked=history.linked_flags(),
        )

    def _choose_recall(self, scores: RecallScores | None, room: float) -> Recall:
        """The units to recall within ``room`` from :meth:`_score_recall`'s ``scores``
        (:func:`~pycupel.session.recall.choose_recall`)."""
        if scores is None:
            return Recall([], crowded=False)
        history = self._history
        units = history.units
        headers = self._headers
        if len(headers) < len(units):
            start = len(headers)
            items = [unit.item for unit in units[start:]]
            headers.extend(session_headers(items, headers[-1] if headers else -1, start))
        return choose_recall(
            units,
            scores,
            tokens=self._guarded_tokens(),
            room=room,
            headers=headers,
            alone=history.unit_alone,
        )
