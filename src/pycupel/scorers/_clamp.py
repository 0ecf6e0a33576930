"""The specification's ``clamp(x, 0.0, 1.0)``, shared by the pass-through scorers."""

from __future__ import annotations


def clamp_unit(value: float) -> float:
    """``0.0`` if ``value < 0``, ``1.0`` if ``value > 1``, else ``value`` itself.

    Callers check finiteness first: NaN must never reach the clamp.
    """
    if value < 0.0:
        return 0.0
    if value > 1.0:
        return 1.0
    return value
