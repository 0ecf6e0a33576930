"""Calibrating a token estimate against the prompt tokens the provider reports.

A session counts its windows with a local counter (by default the dependency-free heuristic)
plus the adapter's per-message overheads. The provider's real count differs: another
tokenizer, a chat template we can only approximate, tool schemas the session never sees. After
each request the caller hands the provider's usage to the session, which pairs it with the
estimate of the window that was sent.

The correction is one multiplicative ratio, ``reported / estimated`` summed over the latest
:data:`WINDOW` recorded turns. Consecutive windows of a session share most of their content
(that is the point of a stable prefix), so the ratio of the last few turns predicts the next
turn closely; summing over a few turns damps the effect of one unusual message. Budget checks
use :attr:`Calibration.upper_ratio`, the largest single-turn ratio of the same turns, so that a
window predicted to fit also fits in the provider's count.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from pycupel.errors import ProviderUsageError

__all__ = ["WINDOW", "Calibration", "CalibrationPoint"]

WINDOW = 3
"""How many recorded turns the ratio is computed from."""


@dataclass(frozen=True, slots=True)
class CalibrationPoint:
    """One recorded turn: the session's estimate of a window and the provider's count."""

    estimated_tokens: int
    reported_tokens: int

    @property
    def ratio(self) -> float:
        """``reported / estimated`` (1.0 for an empty estimate)."""
        return self.reported_tokens / self.estimated_tokens if self.estimated_tokens else 1.0


class Calibration:
    """The running correction from estimated to reported prompt tokens.

    Not thread-safe on its own: a session guards it with its lock.
    """

    __slots__ = ("_points", "_ratio", "_upper")

    def __init__(self) -> None:
        self._points: deque[CalibrationPoint] = deque(maxlen=WINDOW)
        self._ratio = 1.0
        self._upper = 1.0

    @property
    def recorded(self) -> int:
        """How many of the latest turns the ratio rests on (at most :data:`WINDOW`)."""
        return len(self._points)

    @property
    def ratio(self) -> float:
        """Reported over estimated tokens of the latest turns; 1.0 before any record."""
        return self._ratio

    @property
    def upper_ratio(self) -> float:
        """The largest single-turn ratio of the latest turns (at least :attr:`ratio`)."""
        return self._upper

    def _update(self) -> None:
        estimated = sum(point.estimated_tokens for point in self._points)
        reported = sum(point.reported_tokens for point in self._points)
        self._ratio = reported / estimated if estimated and reported else 1.0
        self._upper = max(
            [self._ratio, *(point.ratio for point in self._points if point.reported_tokens)]
        )

    def record(self, *, estimated_tokens: int, reported_tokens: int) -> None:
        """Add one turn; a report of zero prompt tokens for a non-empty window is refused."""
        if reported_tokens == 0 and estimated_tokens > 0:
            raise ProviderUsageError(
                "usage.prompt_tokens",
                reported_tokens,
                f"must be > 0 for a window estimated at {estimated_tokens} tokens",
            )
        self._points.append(CalibrationPoint(estimated_tokens, reported_tokens))
        self._update()

    @property
    def points(self) -> tuple[CalibrationPoint, ...]:
        """The recorded turns the ratio rests on, oldest first."""
        return tuple(self._points)

    def restore(self, points: Sequence[CalibrationPoint]) -> None:
        """Start again from recorded ``points`` (a saved session's :attr:`points`)."""
        self._points.clear()
        self._points.extend(points)
        self._update()

    def predict(self, estimated_tokens: int) -> int:
        """The calibrated prediction for an estimate (rounded to the nearest token)."""
        return round(estimated_tokens * self.ratio)

    def estimate_limit(self, provider_tokens: int) -> int:
        """The largest estimate whose provider count stays within ``provider_tokens``."""
        return int(provider_tokens / self.upper_ratio)

    def reset(self) -> None:
        """Forget every recorded turn."""
        self._points.clear()
        self._update()
