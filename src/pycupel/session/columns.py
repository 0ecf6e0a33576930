"""The per-unit columns of a session's history, as the window's zones read them.

The recall zone, the learned-token sums and the fresh-fit check read a few facts of every
unit many times a turn: its tokens by the session's counter, whether it is a tool round
(the recall zone takes those alone), whether it is in the recall corpus, and whether it
shares context with the next unit. :class:`UnitColumns` keeps them as units arrive, as
plain lists (the few units of a window's zones sum faster in Python) and as arrays grown by
doubling (the passes over a long history), so that no turn rebuilds them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from pycupel.scorers._lexical import FloatArray

__all__ = ["BoolArray", "UnitColumns"]

_Scalar = TypeVar("_Scalar", bound=np.generic)
BoolArray = npt.NDArray[np.bool_]

_FEW = 512
"""Up to this many units are summed in plain Python (an array round trip costs more)."""


class UnitColumns:
    """Each unit's tokens, tool-round flag, recall-corpus flag and link to the next, by unit
    position (see the module documentation); the base of
    :class:`~pycupel.session.history.History`, which adds a row per unit it closes."""

    unit_alone: list[bool]
    """Whether each unit is a tool round (the recall zone takes those alone)."""

    def _clear_columns(self) -> None:
        # Each unit's tokens by the session's counter (the whole unit), as an array and as
        # a list (plain sums of a zone cost less than an array round trip).
        self._unit_tokens = np.zeros(64, dtype=np.int64)
        self._token_list: list[int] = []
        self.unit_alone = []
        # The same flags, the recall corpus and whether each unit and the next share context
        # (neither is a tool round) as boolean arrays, grown with _unit_tokens.
        self._alone_flags = np.zeros(64, dtype=np.bool_)
        self._in_corpus = np.zeros(64, dtype=np.bool_)
        self._linked = np.zeros(64, dtype=np.bool_)

    def _row_count(self) -> int:
        return len(self._token_list)

    def _add_row(self, tokens: int, *, alone: bool) -> None:
        """The columns of the next unit (not in the recall corpus until marked)."""
        number = len(self._token_list)
        if number >= len(self._unit_tokens):
            self._unit_tokens = _grown(self._unit_tokens, number)
            self._alone_flags = _grown(self._alone_flags, number)
            self._in_corpus = _grown(self._in_corpus, number)
            self._linked = _grown(self._linked, number)
        self.unit_alone.append(alone)
        self._alone_flags[number] = alone
        if number:
            self._linked[number - 1] = not (alone or self.unit_alone[number - 1])
        self._unit_tokens[number] = tokens
        self._token_list.append(tokens)

    def _mark_corpus(self, unit: int, in_corpus: bool) -> None:
        self._in_corpus[unit] = in_corpus

    def alone_flags(self) -> BoolArray:
        """:attr:`unit_alone` as a boolean array (a read-only view: valid until the next
        unit arrives)."""
        return _read_only(self._alone_flags[: self._row_count()])

    def linked_flags(self) -> BoolArray:
        """Whether each unit and the next share context: ``~(flags[:-1] | flags[1:])`` of
        :meth:`alone_flags` (a read-only view: valid until the next unit arrives)."""
        return _read_only(self._linked[: max(self._row_count() - 1, 0)])

    def recall_corpus(self) -> BoolArray:
        """Whether each unit is in the recall corpus (:attr:`recall_units` as a boolean
        array; a read-only view valid until the next unit arrives)."""
        return _read_only(self._in_corpus[: self._row_count()])

    def tokens_of(self, units: Sequence[int]) -> int:
        """The units' tokens by the session's counter, summed."""
        if len(units) <= _FEW:  # a window's zones: plain integers cost less than arrays
            return sum(map(self._token_list.__getitem__, units))
        return int(self._unit_tokens[np.asarray(units, dtype=np.intp)].sum())

    def guarded_sum(
        self, zones: Sequence[Sequence[int]], ratio: float, learned: Mapping[int, float]
    ) -> float:
        """The zones' ``learned`` tokens, or tokens by the session's counter times ``ratio``
        where none was learned, summed: the same float as adding them one by one, zone
        after zone (without anything learned: each zone's count times ``ratio``)."""
        total = 0.0
        if not learned:
            for zone in zones:
                total += self.tokens_of(zone) * ratio
            return total
        if sum(map(len, zones)) <= _FEW:  # a window's zones: the loop itself, in plain floats
            get = learned.get
            counts = self._token_list
            for zone in zones:
                for unit in zone:
                    value = get(unit)
                    total += counts[unit] * ratio if value is None else value
            return total
        parts = [np.zeros(1, dtype=np.float64)]
        for zone in zones:
            size = len(zone)
            known = np.fromiter(map(learned.__contains__, zone), dtype=np.bool_, count=size)
            values = np.fromiter(map(learned.get, zone, repeat(0.0)), dtype=np.float64, count=size)
            estimates = self._unit_tokens[np.asarray(zone, dtype=np.intp)] * ratio
            parts.append(np.where(known, values, estimates))
        # A running sum adds left to right, as the loop it replaces did.
        return float(np.cumsum(np.concatenate(parts))[-1])

    def guarded_tokens(self, ratio: float, learned: Mapping[int, float]) -> list[float]:
        """Every unit's ``learned`` tokens, or its tokens by the session's counter times
        ``ratio`` when none was learned (the same floats as ``learned.get(u, tokens * ratio)``
        unit by unit, computed in array passes)."""
        values: list[float] = self.guarded_token_array(ratio, learned).tolist()
        return values

    def guarded_token_array(self, ratio: float, learned: Mapping[int, float]) -> FloatArray:
        """:meth:`guarded_tokens` as an array (a new one)."""
        guards = self._unit_tokens[: self._row_count()].astype(np.float64) * ratio
        if learned:
            known = np.fromiter(learned, dtype=np.intp, count=len(learned))
            guards[known] = np.fromiter(learned.values(), dtype=np.float64, count=len(learned))
        return guards


def _grown(values: npt.NDArray[_Scalar], needed: int) -> npt.NDArray[_Scalar]:
    """``values`` copied into an array twice as long (zeros after), for position ``needed``."""
    grown = np.zeros(max(2 * len(values), needed + 1), dtype=values.dtype)
    grown[: len(values)] = values
    return grown


def _read_only(values: BoolArray) -> BoolArray:
    view = values.view()
    view.flags.writeable = False
    return view
