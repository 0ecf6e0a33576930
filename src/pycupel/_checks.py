"""Small validation helpers shared by every constructor.

Each helper either returns the (type-narrowed) value or raises the given
:class:`~pycupel.errors.InvalidValueError` subclass naming the field, the value and the rule.
Booleans are rejected where numbers are expected: ``True`` is an ``int`` in Python, but a
token count of ``True`` is always a mistake.
"""

from __future__ import annotations

import math

from pycupel.errors import InvalidValueError

ErrorType = type[InvalidValueError]


MAX_BUDGET = 2**53
"""The largest token budget or count (every count up to it is exact as a float)."""


def check_int(
    error: ErrorType,
    field: str,
    value: object,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """Return ``value`` if it is an int (not bool) within the inclusive bounds."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(field, value, "must be an integer")
    if minimum is not None and value < minimum:
        raise error(field, value, f"must be >= {minimum}")
    if maximum is not None and value > maximum:
        raise error(field, value, f"must be <= {maximum}")
    return value


def check_float(
    error: ErrorType,
    field: str,
    value: object,
    *,
    finite: bool = True,
    minimum: float | None = None,
    maximum: float | None = None,
    positive: bool = False,
) -> float:
    """Return ``value`` as a float if it is a real number obeying the given rules.

    ``minimum``/``maximum`` are inclusive; ``positive`` demands a value strictly above zero.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise error(field, value, "must be a number")
    try:
        number = float(value)
    except OverflowError:  # an int beyond float64 (about 1.8e308)
        raise error(field, value, "must be within the float64 range (about ±1.8e308)") from None
    if finite and not math.isfinite(number):
        raise error(field, value, "must be finite")
    if positive and not number > 0.0:
        raise error(field, value, "must be > 0")
    if minimum is not None and number < minimum:
        raise error(field, value, f"must be >= {minimum}")
    if maximum is not None and number > maximum:
        raise error(field, value, f"must be <= {maximum}")
    return number


def check_bool(error: ErrorType, field: str, value: object) -> bool:
    """Return ``value`` if it is exactly a bool."""
    if not isinstance(value, bool):
        raise error(field, value, "must be a boolean")
    return value


def check_str(error: ErrorType, field: str, value: object, *, non_blank: bool = False) -> str:
    """Return ``value`` if it is a str (optionally not empty or whitespace-only)."""
    if not isinstance(value, str):
        raise error(field, value, "must be a string")
    if non_blank and not value.strip():
        raise error(field, value, "must not be empty or whitespace-only")
    return value
