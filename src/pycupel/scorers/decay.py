"""DecayScorer: score by elapsed time since an item's timestamp, against an injected clock.

The clock is always explicit (there is no default, and no clock is read implicitly): pass a
:class:`FixedClock` for reproducible runs, :class:`SystemClock` for wall time, or any object
with ``now()`` / zero-argument function returning a timezone-aware datetime. The clock is
read at most once per batch, so every item of a pass is aged against the same instant.

Ages are exact integer microseconds (``now - timestamp``, clamped at zero before any curve
sees them); only the exponential curve turns them into floating-point seconds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from pycupel._checks import check_float
from pycupel.errors import ScorerConfigError
from pycupel.model import ContextItem
from pycupel.scorers._immutable import Immutable
from pycupel.scorers.base import FloatArray, ItemScorer

__all__ = [
    "Clock",
    "DecayCurve",
    "DecayScorer",
    "ExponentialDecay",
    "FixedClock",
    "StepDecay",
    "SystemClock",
    "WindowDecay",
]

IntArray = npt.NDArray[np.int64]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_MICROS_PER_SECOND = 1_000_000.0
_AGE_LIMIT_MICROS = (datetime.max - datetime.min) // _MICROSECOND + 1
"""One microsecond above the largest age two datetimes can be apart. Durations beyond it
(up to ``timedelta.max``, which does not fit int64 microseconds) act exactly like it, so they
are clamped to it before they meet the int64 age arrays."""


# --------------------------------------------------------------------------- clocks


@runtime_checkable
class Clock(Protocol):
    """A source of the current instant; ``now()`` must return a timezone-aware datetime."""

    def now(self) -> datetime:
        """The current instant (timezone-aware)."""
        ...


class FixedClock(Immutable):
    """A clock frozen at one instant: deterministic scoring and tests."""

    __slots__ = ("_when",)

    _when: datetime

    def __init__(self, when: datetime) -> None:
        object.__setattr__(self, "_when", _check_aware("when", when))

    def now(self) -> datetime:
        return self._when

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self._when,))

    def __repr__(self) -> str:
        return f"FixedClock({self._when.isoformat()})"


class SystemClock(Immutable):
    """The wall clock, in UTC."""

    __slots__ = ()

    def now(self) -> datetime:
        return datetime.now(UTC)

    def __repr__(self) -> str:
        return "SystemClock()"


def _check_aware(field: str, value: object) -> datetime:
    if not isinstance(value, datetime):
        raise ScorerConfigError(field, value, "must be a datetime")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ScorerConfigError(
            field, value, "must be timezone-aware (naive datetimes are ambiguous)"
        )
    return value


def _micros(duration: timedelta) -> int:
    return duration // _MICROSECOND


def _age_micros(duration: timedelta) -> int:
    """``duration`` in microseconds, clamped to ``[0, _AGE_LIMIT_MICROS]`` (int64-safe)."""
    return min(max(0, _micros(duration)), _AGE_LIMIT_MICROS)


def _check_positive_duration(field: str, value: object) -> timedelta:
    if not isinstance(value, timedelta):
        raise ScorerConfigError(field, value, "must be a datetime.timedelta")
    if value <= timedelta(0):
        raise ScorerConfigError(field, value, "must be > 0")
    return value


# --------------------------------------------------------------------------- curves


class DecayCurve(ABC):
    """A decay curve: maps a non-negative age to a score in [0, 1].

    Subclasses implement :meth:`score_ages` on integer microsecond ages (already clamped to
    >= 0); :meth:`score_age` is the single-age convenience form.
    """

    __slots__ = ()

    @abstractmethod
    def score_ages(self, ages_micros: IntArray) -> FloatArray:
        """Scores for ages given as non-negative int64 microseconds."""

    def score_age(self, age: timedelta) -> float:
        """The score for one age (negative ages count as zero, as in DecayScorer)."""
        micros = _age_micros(age)
        return float(self.score_ages(np.array([micros], dtype=np.int64))[0])


class ExponentialDecay(Immutable, DecayCurve):
    """``2 ** (-age / half_life)``: 1.0 at age zero, 0.5 at one half-life, never negative.

    Args:
        half_life: a positive timedelta.
    """

    __slots__ = ("_half_life", "_half_life_seconds")

    _half_life: timedelta
    _half_life_seconds: float

    def __init__(self, half_life: timedelta) -> None:
        checked = _check_positive_duration("half_life", half_life)
        object.__setattr__(self, "_half_life", checked)
        object.__setattr__(self, "_half_life_seconds", _micros(checked) / _MICROS_PER_SECOND)

    @property
    def half_life(self) -> timedelta:
        """The age at which the score is 0.5."""
        return self._half_life

    def score_ages(self, ages_micros: IntArray) -> FloatArray:
        seconds = ages_micros / _MICROS_PER_SECOND
        result: FloatArray = np.power(2.0, -seconds / self._half_life_seconds)
        return result

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self._half_life,))

    def __repr__(self) -> str:
        return f"ExponentialDecay(half_life={self._half_life!r})"


class StepDecay(Immutable, DecayCurve):
    """Piecewise-constant scores: the first window whose ``max_age`` exceeds the age wins.

    An age equal to a boundary falls into the next (older) window; an age at or beyond the
    last boundary takes the last window's score.

    Args:
        windows: ``(max_age, score)`` pairs, youngest first. Validated at construction:
            at least one window; each ``max_age`` a positive timedelta, strictly greater than
            the previous one (an unsorted or repeated boundary is rejected, never re-sorted,
            because a later window with a boundary not above an earlier one could never be
            reached); each ``score`` finite and within [0, 1] (a curve maps ages to [0, 1]).
    """

    __slots__ = ("_boundaries", "_scores", "_windows")

    _windows: tuple[tuple[timedelta, float], ...]
    _boundaries: IntArray
    _scores: FloatArray

    def __init__(self, windows: Sequence[tuple[timedelta, float]]) -> None:
        given: object = windows
        if isinstance(given, str | bytes) or not isinstance(given, Sequence):
            raise ScorerConfigError(
                "windows", given, "must be a sequence of (max_age, score) pairs"
            )
        if not given:
            raise ScorerConfigError("windows", given, "must contain at least one window")
        checked: list[tuple[timedelta, float]] = []
        for index, window in enumerate(given):
            if not isinstance(window, tuple | list) or len(window) != 2:
                raise ScorerConfigError(
                    f"windows[{index}]", window, "must be a (max_age, score) pair"
                )
            max_age = _check_positive_duration(f"windows[{index}].max_age", window[0])
            score = check_float(
                ScorerConfigError, f"windows[{index}].score", window[1], minimum=0.0, maximum=1.0
            )
            if checked and max_age <= checked[-1][0]:
                raise ScorerConfigError(
                    f"windows[{index}].max_age",
                    max_age,
                    f"must be greater than windows[{index - 1}].max_age ({checked[-1][0]!r}); "
                    "windows are ordered youngest to oldest",
                )
            checked.append((max_age, score))
        boundaries = np.array([_age_micros(age) for age, _ in checked], dtype=np.int64)
        scores = np.array([score for _, score in checked], dtype=np.float64)
        boundaries.flags.writeable = False
        scores.flags.writeable = False
        object.__setattr__(self, "_windows", tuple(checked))
        object.__setattr__(self, "_boundaries", boundaries)
        object.__setattr__(self, "_scores", scores)

    @property
    def windows(self) -> tuple[tuple[timedelta, float], ...]:
        """The validated ``(max_age, score)`` windows, youngest first."""
        return self._windows

    def score_ages(self, ages_micros: IntArray) -> FloatArray:
        # side="right" counts boundaries <= age: the index of the first boundary > age.
        first_above = np.searchsorted(self._boundaries, ages_micros, side="right")
        result: FloatArray = self._scores[np.minimum(first_above, len(self._scores) - 1)]
        return result

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (list(self._windows),))

    def __repr__(self) -> str:
        shown = ", ".join(f"({age!r}, {score!r})" for age, score in self._windows)
        return f"StepDecay([{shown}])"


class WindowDecay(Immutable, DecayCurve):
    """Binary: 1.0 while ``age < max_age``, 0.0 from ``max_age`` on (half-open window).

    Args:
        max_age: a positive timedelta.
    """

    __slots__ = ("_max_age", "_max_age_micros")

    _max_age: timedelta
    _max_age_micros: int

    def __init__(self, max_age: timedelta) -> None:
        checked = _check_positive_duration("max_age", max_age)
        object.__setattr__(self, "_max_age", checked)
        object.__setattr__(self, "_max_age_micros", _age_micros(checked))

    @property
    def max_age(self) -> timedelta:
        """The first age that scores 0.0."""
        return self._max_age

    def score_ages(self, ages_micros: IntArray) -> FloatArray:
        result: FloatArray = np.where(ages_micros < self._max_age_micros, 1.0, 0.0)
        return result

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self._max_age,))

    def __repr__(self) -> str:
        return f"WindowDecay(max_age={self._max_age!r})"


# --------------------------------------------------------------------------- scorer


class DecayScorer(Immutable, ItemScorer):
    """Absolute scorer: ``curve(max(0, now - timestamp))``; no timestamp scores
    ``null_timestamp_score``.

    Args:
        clock: a :class:`Clock` (object with ``now()``) or a zero-argument function; it must
            return a timezone-aware datetime. Required: there is no default clock.
        curve: an :class:`ExponentialDecay`, :class:`StepDecay`, :class:`WindowDecay` or any
            other :class:`DecayCurve`.
        null_timestamp_score: the score of items without a timestamp, in [0, 1] (default 0.5,
            neutral).

    Raises:
        ScorerConfigError: at construction for a bad argument; when scoring if the clock
            returns something other than a timezone-aware datetime.
    """

    __slots__ = ("_clock", "_curve", "_now", "_null_timestamp_score")

    _clock: Clock | Callable[[], datetime]
    _now: Callable[[], datetime]
    _curve: DecayCurve
    _null_timestamp_score: float

    def __init__(
        self,
        clock: Clock | Callable[[], datetime],
        curve: DecayCurve,
        null_timestamp_score: float = 0.5,
    ) -> None:
        now = getattr(clock, "now", None)
        if not callable(now):
            if not callable(clock):
                raise ScorerConfigError(
                    "clock",
                    clock,
                    "must have a now() method or be a function returning an aware datetime",
                )
            now = clock
        if not isinstance(curve, DecayCurve):
            raise ScorerConfigError(
                "curve", curve, "must be a DecayCurve (ExponentialDecay, StepDecay, WindowDecay)"
            )
        score = check_float(
            ScorerConfigError,
            "null_timestamp_score",
            null_timestamp_score,
            minimum=0.0,
            maximum=1.0,
        )
        object.__setattr__(self, "_clock", clock)
        object.__setattr__(self, "_now", now)
        object.__setattr__(self, "_curve", curve)
        object.__setattr__(self, "_null_timestamp_score", score)

    @property
    def clock(self) -> Clock | Callable[[], datetime]:
        """The injected clock."""
        return self._clock

    @property
    def curve(self) -> DecayCurve:
        """The decay curve."""
        return self._curve

    @property
    def null_timestamp_score(self) -> float:
        """The score of items without a timestamp."""
        return self._null_timestamp_score

    def _now_micros(self) -> int:
        now = self._now()
        rule = "must return a timezone-aware datetime"
        if not isinstance(now, datetime) or now.tzinfo is None:
            raise ScorerConfigError("clock.now()", now, rule)
        try:
            offset = now.utcoffset()
        except (TypeError, ValueError) as exc:  # a custom tzinfo returning a bad offset
            raise ScorerConfigError("clock.now()", now, f"{rule} ({exc})") from exc
        if offset is None:
            raise ScorerConfigError("clock.now()", now, rule)
        return (now - _EPOCH) // _MICROSECOND

    def score_item(self, item: ContextItem) -> float:
        stamp = item.timestamp_micros
        if stamp is None:
            return self._null_timestamp_score
        age = max(0, self._now_micros() - stamp)
        return float(self._curve.score_ages(np.array([age], dtype=np.int64))[0])

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        # The batch path reads the clock once for the whole list.
        scores: list[float] = self.score_array(items).tolist()
        return scores

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        count = len(items)
        stamps = [item.timestamp_micros for item in items]
        present = np.fromiter((s is not None for s in stamps), dtype=np.bool_, count=count)
        scores = np.full(count, self._null_timestamp_score, dtype=np.float64)
        keyed = int(np.count_nonzero(present))
        if keyed == 0:
            return scores
        values = np.fromiter((s for s in stamps if s is not None), dtype=np.int64, count=keyed)
        ages = np.maximum(self._now_micros() - values, 0)
        scores[present] = self._curve.score_ages(ages)
        return scores

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self._clock, self._curve, self._null_timestamp_score))

    def __repr__(self) -> str:
        return (
            f"DecayScorer(clock={self._clock!r}, curve={self._curve!r}, "
            f"null_timestamp_score={self._null_timestamp_score!r})"
        )
