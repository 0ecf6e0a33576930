"""What usage taught a session: each unit's tokens in the provider's count.

Each recorded usage teaches the session the provider's tokens of the units it had not seen
reported before (the reported count minus what the already known units account for, shared
out in proportion to their estimates), so a stable prefix is predicted from what the provider
itself counted; units never reported are predicted with the calibration ratio
(:mod:`pycupel.session.calibration`), and checked against the watermarks with its upper ratio.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import numpy.typing as npt

from pycupel.conversation.units import MessageUnit
from pycupel.session.state import SessionState

if TYPE_CHECKING:
    pass

__all__ = ["Learning"]

M = TypeVar("M")


class Learning(SessionState[M]):
    """The provider's tokens of each unit, as usage taught them.

    A part of :class:`~pycupel.session.core.SessionCore`.
    """

    @property
    def calibration_ratio(self) -> float:
        """The current factor from estimated to predicted tokens."""
        with self._lock:
            return self._calibration.ratio

    def _learn(self, reported: int) -> None:
        """Attribute the reported tokens of the latest request to its units.

        When the request extends the previously reported one, the known units add up to the
        previous report, so the new units are given exactly the rest (shared out by their
        estimates). Otherwise (after a compaction, a recall or an edit) the known units'
        values are only shares of earlier reports: the new units are predicted with the
        calibration ratio and every unit of the request is rescaled to add up to the report,
        so no unit absorbs the others' error.
        """
        learned = self._learned
        request = self._previous
        overhead = self._fixed() * self._calibration.ratio
        unknown = [u for u in request if u not in learned]
        known_total = sum(learned[u] for u in request if u in learned)
        residual = reported - overhead - known_total
        estimate = self._estimate
        estimated = sum(estimate(u) for u in unknown)
        extends = self._reported_units.issubset(request) and all(
            u in self._reported_units for u in request if u in learned
        )
        if unknown and extends and estimated > 0 and residual > 0:
            for u in unknown:
                learned[u] = residual * estimate(u) / estimated
        else:
            ratio = self._calibration.ratio
            for u in unknown:
                learned[u] = estimate(u) * ratio
            total = sum(learned[u] for u in request)
            if total > 0 and reported > overhead:
                factor = (reported - overhead) / total
                for u in request:
                    learned[u] *= factor
        self._reported_units = frozenset(request)

    def _guard(self, unit: int) -> float:
        """The unit's tokens in the provider's count, erring high for units never reported."""
        known = self._learned.get(unit)
        if known is not None:
            return known
        return self._estimate(unit) * self._calibration.upper_ratio

    def _guard_whole(self, unit: int) -> float:
        """:meth:`_guard` of the unit whole, also when the window shows a shorter version."""
        if self._shown is not None and unit in self._shown.variants:
            return self._history.units[unit].item.tokens * self._calibration.upper_ratio
        return self._guard(unit)

    def _estimate(self, unit: int) -> int:
        """The unit's tokens by the session's counter, as the window shows it."""
        whole = self._history.units[unit].item.tokens
        return whole if self._shown is None else self._shown.estimate(unit, whole)

    def _fixed(self) -> int:
        """Tokens every request holds beside its units: the per-request overhead and the
        running summary's message (by the session's counter)."""
        summary = self._summary.tokens if self._summary is not None else 0
        return self.format.overhead.per_request + summary

    def _tokens(self, *zones: Sequence[int]) -> float:
        """Provider tokens of the zones, erring high (see :meth:`_guard`)."""
        return self._sum(zones, self._calibration.upper_ratio)

    def _sum(self, zones: Sequence[Sequence[int]], ratio: float) -> float:
        """Provider tokens of the zones: learned where known, ``ratio`` x estimate elsewhere."""
        learned = self._learned
        shown = self._shown.estimates if self._shown is not None else None
        if not shown:
            return self._history.guarded_sum(zones, ratio, learned)
        total = 0.0
        get = learned.get
        estimate = self._estimate
        for zone in zones:
            for u in zone:
                known = get(u)
                total += estimate(u) * ratio if known is None else known
        return total

    def _guarded_tokens(self) -> list[float] | npt.NDArray[np.float64]:
        """:meth:`_guard` of every unit, in one pass (an array when the history computes
        them in one)."""
        history = self._history
        if self._shown is not None:
            return [self._guard(u) for u in range(len(history.units))]
        return history.guarded_token_array(self._calibration.upper_ratio, self._learned)

    def _guarded_units(self, latest: int) -> list[MessageUnit]:
        """The history's units with their tokens in the provider's count (rounded up, as
        :meth:`_guard` errs high) and the latest user turn pinned."""
        result: list[MessageUnit] = []
        for position, unit in enumerate(self._history.units):
            item = unit.item
            tokens = math.ceil(self._guard_whole(position) - 1e-9)
            pinned = item.pinned or position == latest
            if tokens != item.tokens or pinned != item.pinned:
                result.append(replace(unit, item=item.replace(tokens=tokens, pinned=pinned)))
            else:
                result.append(unit)
        return result
