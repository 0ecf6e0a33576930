"""DecayScorer, its clocks and curves: chapter outlines, edge cases, exact integer ages,
and construction-time validation."""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone, tzinfo

import pytest

from pycupel.errors import ScorerConfigError
from pycupel.model import ContextItem
from pycupel.scorers import (
    Clock,
    DecayCurve,
    DecayScorer,
    ExponentialDecay,
    FixedClock,
    StepDecay,
    SystemClock,
    WindowDecay,
)

NOW = datetime(2025, 1, 1, 12, tzinfo=UTC)
CLOCK = FixedClock(NOW)
H = timedelta(hours=1)
STEPS = StepDecay([(1 * H, 0.9), (24 * H, 0.5), (72 * H, 0.1)])


def aged(age: timedelta | None) -> ContextItem:
    return ContextItem("x", tokens=1, timestamp=None if age is None else NOW - age)


def score(curve: DecayCurve, age: timedelta | None, null_score: float = 0.5) -> float:
    (result,) = DecayScorer(CLOCK, curve, null_score).score_all([aged(age)])
    return result


# --------------------------------------------------------------------------- outlines


def test_exponential_one_half_life_scores_half() -> None:
    assert score(ExponentialDecay(24 * H), 24 * H) == 0.5


def test_future_dated_item_clamps_to_age_zero() -> None:
    assert score(ExponentialDecay(24 * H), -12 * H) == 1.0
    assert score(STEPS, -12 * H) == 0.9
    assert score(WindowDecay(H), -12 * H) == 1.0


def test_null_timestamp_returns_null_timestamp_score() -> None:
    assert score(ExponentialDecay(24 * H), None) == 0.5
    assert score(STEPS, None, 0.25) == 0.25
    assert score(WindowDecay(H), None, 0.0) == 0.0


def test_step_second_window() -> None:
    assert score(STEPS, 6 * H) == 0.5


def test_window_age_exactly_at_max_age_scores_zero() -> None:
    assert score(WindowDecay(6 * H), 6 * H) == 0.0


# --------------------------------------------------------------------------- curves


@pytest.mark.parametrize(
    ("age", "expected"),
    [(0 * H, 0.9), (1 * H, 0.5), (24 * H, 0.1), (72 * H, 0.1), (1000 * H, 0.1)],
)
def test_step_boundaries_fall_into_the_older_window(age: timedelta, expected: float) -> None:
    assert score(STEPS, age) == expected
    assert STEPS.score_age(age) == expected


def test_step_boundary_is_exact_to_the_microsecond() -> None:
    just_under = H - timedelta(microseconds=1)
    assert score(STEPS, just_under) == 0.9
    assert score(STEPS, H) == 0.5


def test_single_step_window() -> None:
    curve = StepDecay([(H, 0.7)])
    assert score(curve, timedelta(0)) == 0.7
    assert score(curve, 5 * H) == 0.7


def test_window_curve() -> None:
    curve = WindowDecay(6 * H)
    assert score(curve, timedelta(0)) == 1.0
    assert score(curve, 6 * H - timedelta(microseconds=1)) == 1.0
    assert score(curve, 6 * H) == 0.0
    assert score(curve, 600 * H) == 0.0


def test_exponential_curve_values() -> None:
    curve = ExponentialDecay(24 * H)
    assert score(curve, timedelta(0)) == 1.0
    assert score(curve, 48 * H) == 0.25
    assert score(curve, 12 * H) == 2.0**-0.5
    assert score(curve, timedelta(seconds=1)) == 2.0 ** (-1 / 86400)
    very_old = score(curve, timedelta(days=700_000))
    assert very_old == 0.0
    assert math.copysign(1.0, very_old) == 1.0


def test_exponential_with_microsecond_half_life() -> None:
    curve = ExponentialDecay(timedelta(microseconds=1))
    assert score(curve, timedelta(microseconds=3)) == 0.125


def test_curve_score_age_clamps_negative_ages() -> None:
    assert ExponentialDecay(H).score_age(-H) == 1.0
    assert WindowDecay(H).score_age(timedelta(minutes=59)) == 1.0


# --------------------------------------------------------------------------- scorer


def test_batch_scores_mixed_items() -> None:
    items = [aged(24 * H), aged(None), aged(-H), aged(48 * H)]
    scorer = DecayScorer(CLOCK, ExponentialDecay(24 * H), null_timestamp_score=0.3)
    assert scorer.score_all(items) == [0.5, 0.3, 1.0, 0.25]
    assert [scorer.score(i, []) for i in items] == [0.5, 0.3, 1.0, 0.25]


def test_items_in_other_time_zones_are_aged_by_instant() -> None:
    tz = timezone(timedelta(hours=-7))
    item = ContextItem("x", tokens=1, timestamp=(NOW - 24 * H).astimezone(tz))
    assert DecayScorer(CLOCK, ExponentialDecay(24 * H)).score_all([item]) == [0.5]
    clock_elsewhere = FixedClock(NOW.astimezone(timezone(timedelta(hours=9))))
    assert DecayScorer(clock_elsewhere, ExponentialDecay(24 * H)).score_all([item]) == [0.5]


def test_clock_is_read_once_per_batch() -> None:
    calls: list[int] = []

    def ticking() -> datetime:
        calls.append(1)
        return NOW + timedelta(hours=len(calls))  # a different instant every call

    scorer = DecayScorer(ticking, WindowDecay(2 * H))
    items = [aged(timedelta(0)), aged(timedelta(minutes=30)), aged(timedelta(minutes=59))]
    assert scorer.score_all(items) == [1.0, 1.0, 1.0]  # all aged against NOW + 1h
    assert len(calls) == 1


def test_clock_not_read_when_no_item_has_a_timestamp() -> None:
    def broken() -> datetime:
        raise AssertionError("clock must not be read")

    assert DecayScorer(broken, WindowDecay(H)).score_all([aged(None), aged(None)]) == [0.5, 0.5]
    assert DecayScorer(broken, WindowDecay(H)).score_all([]) == []


def test_clock_objects_and_callables() -> None:
    class Manual:
        def now(self) -> datetime:
            return NOW

    assert isinstance(Manual(), Clock)
    assert isinstance(CLOCK, Clock)
    assert isinstance(SystemClock(), Clock)
    for clock in (Manual(), lambda: NOW, CLOCK):
        assert DecayScorer(clock, WindowDecay(H)).score_all([aged(timedelta(0))]) == [1.0]


def test_system_clock_returns_aware_utc_now() -> None:
    before = datetime.now(UTC)
    now = SystemClock().now()
    assert now.tzinfo is not None
    assert before <= now <= datetime.now(UTC)
    item = ContextItem("x", tokens=1, timestamp=now - timedelta(days=1))
    (result,) = DecayScorer(SystemClock(), WindowDecay(timedelta(days=2))).score_all([item])
    assert result == 1.0


@pytest.mark.parametrize("returned", [datetime(2025, 1, 1), "2025-01-01", None, 1.0])
def test_clock_must_return_an_aware_datetime(returned: object) -> None:
    scorer = DecayScorer(lambda: returned, WindowDecay(H))  # type: ignore[arg-type,return-value]
    with pytest.raises(ScorerConfigError, match="timezone-aware datetime") as info:
        scorer.score_all([aged(H)])
    assert info.value.field == "clock.now()"
    with pytest.raises(ScorerConfigError, match="timezone-aware"):
        scorer.score(aged(H), [])


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize("bad", [None, 42, "clock"])
def test_clock_is_required_and_must_be_usable(bad: object) -> None:
    with pytest.raises(ScorerConfigError, match="now\\(\\)") as info:
        DecayScorer(bad, WindowDecay(H))  # type: ignore[arg-type]
    assert info.value.field == "clock"


def test_curve_must_be_a_decay_curve() -> None:
    with pytest.raises(ScorerConfigError, match="DecayCurve") as info:
        DecayScorer(CLOCK, lambda age: 1.0)  # type: ignore[arg-type]
    assert info.value.field == "curve"


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        (-0.1, "must be >= 0.0"),
        (1.1, "must be <= 1.0"),
        (math.nan, "must be finite"),
        (True, "must be a number"),
    ],
)
def test_null_timestamp_score_range(value: object, rule: str) -> None:
    with pytest.raises(ScorerConfigError, match=rule) as info:
        DecayScorer(CLOCK, WindowDecay(H), null_timestamp_score=value)  # type: ignore[arg-type]
    assert info.value.field == "null_timestamp_score"


@pytest.mark.parametrize("bad", [timedelta(0), -H, timedelta(microseconds=-1)])
def test_half_life_must_be_positive(bad: timedelta) -> None:
    with pytest.raises(ScorerConfigError, match="must be > 0") as info:
        ExponentialDecay(bad)
    assert info.value.field == "half_life"


@pytest.mark.parametrize("bad", [3600, 3600.0, "1h", None])
def test_durations_must_be_timedeltas(bad: object) -> None:
    with pytest.raises(ScorerConfigError, match="timedelta") as info:
        ExponentialDecay(bad)  # type: ignore[arg-type]
    assert info.value.field == "half_life"
    with pytest.raises(ScorerConfigError, match="timedelta") as info:
        WindowDecay(bad)  # type: ignore[arg-type]
    assert info.value.field == "max_age"
    with pytest.raises(ScorerConfigError, match="timedelta") as info:
        StepDecay([(bad, 0.5)])  # type: ignore[list-item]
    assert info.value.field == "windows[0].max_age"


@pytest.mark.parametrize("bad", [timedelta(0), -H])
def test_window_max_age_must_be_positive(bad: timedelta) -> None:
    with pytest.raises(ScorerConfigError, match="must be > 0") as info:
        WindowDecay(bad)
    assert info.value.field == "max_age"


def test_step_windows_must_not_be_empty() -> None:
    with pytest.raises(ScorerConfigError, match="at least one window") as info:
        StepDecay([])
    assert info.value.field == "windows"


def test_step_window_max_age_must_not_be_zero() -> None:
    with pytest.raises(ScorerConfigError, match="must be > 0") as info:
        StepDecay([(timedelta(0), 0.9), (H, 0.5)])
    assert info.value.field == "windows[0].max_age"


def test_step_windows_must_be_sorted_youngest_first() -> None:
    with pytest.raises(ScorerConfigError, match="youngest to oldest") as info:
        StepDecay([(24 * H, 0.5), (H, 0.9)])
    assert info.value.field == "windows[1].max_age"
    assert "windows[0].max_age" in info.value.rule


def test_step_windows_must_not_repeat_a_boundary() -> None:
    with pytest.raises(ScorerConfigError, match="must be greater than") as info:
        StepDecay([(H, 0.9), (2 * H, 0.5), (2 * H, 0.4)])
    assert info.value.field == "windows[2].max_age"


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        (1.5, "must be <= 1.0"),
        (-0.5, "must be >= 0.0"),
        (math.nan, "must be finite"),
        (math.inf, "must be finite"),
        ("0.5", "must be a number"),
    ],
)
def test_step_scores_must_be_in_unit_range(value: object, rule: str) -> None:
    with pytest.raises(ScorerConfigError, match=rule) as info:
        StepDecay([(H, 0.9), (2 * H, value)])  # type: ignore[list-item]
    assert info.value.field == "windows[1].score"


@pytest.mark.parametrize("window", [(H,), (H, 0.5, 1), H, "1h"])
def test_step_window_must_be_a_pair(window: object) -> None:
    with pytest.raises(ScorerConfigError, match="pair") as info:
        StepDecay([window])  # type: ignore[list-item]
    assert info.value.field == "windows[0]"


def test_step_windows_must_be_a_sequence() -> None:
    with pytest.raises(ScorerConfigError, match="sequence"):
        StepDecay(iter([(H, 0.5)]))  # type: ignore[arg-type]


def test_fixed_clock_requires_an_aware_datetime() -> None:
    with pytest.raises(ScorerConfigError, match="timezone-aware") as info:
        FixedClock(datetime(2025, 1, 1))
    assert info.value.field == "when"
    with pytest.raises(ScorerConfigError, match="must be a datetime"):
        FixedClock("2025-01-01")  # type: ignore[arg-type]


def test_configuration_is_exposed_and_immutable() -> None:
    windows = [(H, 0.9), (2 * H, 0.5)]
    curve = StepDecay(windows)
    windows.append((3 * H, 0.1))
    assert curve.windows == ((H, 0.9), (2 * H, 0.5))
    scorer = DecayScorer(CLOCK, curve, 0.2)
    assert scorer.clock is CLOCK
    assert scorer.curve is curve
    assert scorer.null_timestamp_score == 0.2
    assert ExponentialDecay(H).half_life == H
    assert WindowDecay(H).max_age == H
    with pytest.raises(AttributeError):
        scorer._curve = WindowDecay(H)  # type: ignore[misc]


def test_reprs() -> None:
    assert repr(FixedClock(NOW)) == "FixedClock(2025-01-01T12:00:00+00:00)"
    assert repr(SystemClock()) == "SystemClock()"
    assert (
        repr(ExponentialDecay(H)) == "ExponentialDecay(half_life=datetime.timedelta(seconds=3600))"
    )
    assert repr(WindowDecay(H)) == "WindowDecay(max_age=datetime.timedelta(seconds=3600))"
    assert repr(StepDecay([(H, 0.5)])) == "StepDecay([(datetime.timedelta(seconds=3600), 0.5)])"
    assert repr(DecayScorer(CLOCK, WindowDecay(H))) == (
        "DecayScorer(clock=FixedClock(2025-01-01T12:00:00+00:00), "
        "curve=WindowDecay(max_age=datetime.timedelta(seconds=3600)), null_timestamp_score=0.5)"
    )


# --------------------------------------------------------------------------- what errors carry


class _NoOffset(tzinfo):
    """A tzinfo that knows no offset: the datetime is effectively naive."""

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None


class _BadOffset(tzinfo):
    def utcoffset(self, dt: datetime | None) -> timedelta:
        return "+01:00"  # type: ignore[return-value]


NAIVE = datetime(2025, 1, 1)
NO_OFFSET = datetime(2025, 1, 1, tzinfo=_NoOffset())
NOT_A_CLOCK = 42
NOT_A_CURVE = "exponential"
BAD_WINDOWS = iter([(H, 0.5)])

CONSTRUCTION_ERRORS: list[tuple[Callable[[], object], str, object, str]] = [
    (lambda: FixedClock("2025"), "when", "2025", "must be a datetime"),  # type: ignore[arg-type]
    (
        lambda: FixedClock(NAIVE),
        "when",
        NAIVE,
        "must be timezone-aware (naive datetimes are ambiguous)",
    ),
    (
        lambda: FixedClock(NO_OFFSET),
        "when",
        NO_OFFSET,
        "must be timezone-aware (naive datetimes are ambiguous)",
    ),
    (
        lambda: ExponentialDecay(3600),  # type: ignore[arg-type]
        "half_life",
        3600,
        "must be a datetime.timedelta",
    ),
    (lambda: WindowDecay(-H), "max_age", -H, "must be > 0"),
    (
        lambda: StepDecay(BAD_WINDOWS),  # type: ignore[arg-type]
        "windows",
        BAD_WINDOWS,
        "must be a sequence of (max_age, score) pairs",
    ),
    (lambda: StepDecay([]), "windows", [], "must contain at least one window"),
    (
        lambda: StepDecay([(H, 0.5), (H,)]),  # type: ignore[list-item]
        "windows[1]",
        (H,),
        "must be a (max_age, score) pair",
    ),
    (
        lambda: StepDecay([(2 * H, 0.5), (H, 0.2)]),
        "windows[1].max_age",
        H,
        "must be greater than windows[0].max_age (datetime.timedelta(seconds=7200)); "
        "windows are ordered youngest to oldest",
    ),
    (
        lambda: DecayScorer(NOT_A_CLOCK, WindowDecay(H)),  # type: ignore[arg-type]
        "clock",
        NOT_A_CLOCK,
        "must have a now() method or be a function returning an aware datetime",
    ),
    (
        lambda: DecayScorer(CLOCK, NOT_A_CURVE),  # type: ignore[arg-type]
        "curve",
        NOT_A_CURVE,
        "must be a DecayCurve (ExponentialDecay, StepDecay, WindowDecay)",
    ),
]


@pytest.mark.parametrize(("build", "field", "value", "rule"), CONSTRUCTION_ERRORS)
def test_construction_errors_carry_field_value_and_rule(
    build: Callable[[], object], field: str, value: object, rule: str
) -> None:
    with pytest.raises(ScorerConfigError) as info:
        build()
    assert (info.value.field, info.value.value, info.value.rule) == (field, value, rule)


@pytest.mark.parametrize("returned", [NAIVE, NO_OFFSET, "2025-01-01"])
def test_a_clock_returning_no_aware_datetime_is_named_with_what_it_returned(
    returned: object,
) -> None:
    scorer = DecayScorer(lambda: returned, WindowDecay(H))  # type: ignore[arg-type,return-value]
    with pytest.raises(ScorerConfigError) as info:
        scorer.score_all([aged(H)])
    assert (info.value.field, info.value.value, info.value.rule) == (
        "clock.now()",
        returned,
        "must return a timezone-aware datetime",
    )


def test_a_clock_with_a_broken_tzinfo_is_named_with_the_cause() -> None:
    returned = datetime(2025, 1, 1, tzinfo=_BadOffset())
    scorer = DecayScorer(lambda: returned, WindowDecay(H))
    with pytest.raises(ScorerConfigError) as info:
        scorer.score_all([aged(H)])
    assert (info.value.field, info.value.value) == ("clock.now()", returned)
    assert info.value.rule.startswith("must return a timezone-aware datetime (")


# --------------------------------------------------------------------------- far ages, pickling


def test_ages_beyond_float_precision_stay_exact_to_the_microsecond() -> None:
    # 2**54 + 1 microseconds (about 570 years) is not a float: boundaries and ages must stay
    # integers or the window edge moves.
    boundary = timedelta(microseconds=2**54 + 1)
    curve = StepDecay([(boundary, 1.0), (2 * boundary, 0.0)])
    assert curve.score_age(boundary - timedelta(microseconds=1)) == 1.0
    assert curve.score_age(boundary) == 0.0
    window = WindowDecay(boundary)
    assert window.score_age(boundary - timedelta(microseconds=1)) == 1.0


def test_a_far_future_clock_ages_items_to_the_microsecond() -> None:
    # Microseconds since 1970 at year 9999 exceed 2**53: the clock must not go through a float.
    now = datetime(9999, 1, 1, 0, 0, 0, 1, tzinfo=UTC)
    item = ContextItem("x", tokens=1, timestamp=now - timedelta(microseconds=1))
    scorer = DecayScorer(FixedClock(now), WindowDecay(timedelta(microseconds=1)))
    assert scorer.score_all([item]) == [0.0]
    assert scorer.score(item, [item]) == 0.0


def test_step_repr_lists_every_window() -> None:
    assert repr(StepDecay([(H, 0.5), (2 * H, 0.25)])) == (
        "StepDecay([(datetime.timedelta(seconds=3600), 0.5), "
        "(datetime.timedelta(seconds=7200), 0.25)])"
    )


@pytest.mark.parametrize(
    "curve",
    [ExponentialDecay(H), WindowDecay(2 * H), StepDecay([(H, 0.9), (3 * H, 0.4)])],
)
def test_scorers_and_curves_survive_pickling(curve: DecayCurve) -> None:
    scorer = DecayScorer(FixedClock(NOW), curve, null_timestamp_score=0.25)
    clone = pickle.loads(pickle.dumps(scorer))
    assert repr(clone) == repr(scorer)
    items = [aged(age) for age in (None, timedelta(0), H, 2 * H, 5 * H)]
    assert clone.score_all(items) == scorer.score_all(items)
