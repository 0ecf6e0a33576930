"""``afit_messages``: the adapters' ``fit_messages`` with an asynchronous token counter.

The fit is traced once with a counter that records the texts it is asked about (counting them
as zero), the distinct texts are counted with one awaited call, and the fit runs again on those
counts. Parsing errors surface from the trace, before anything is awaited.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pycupel.tokens.asynchronous import AsyncTokenCounter, RecordingCounter, precount

__all__ = ["afit"]

R = TypeVar("R")


async def afit(
    fit: Callable[..., R], messages: object, counter: AsyncTokenCounter, options: dict[str, Any]
) -> R:
    """``fit(messages, counter=..., **options)`` with the counts awaited from ``counter``."""
    recorder = RecordingCounter()
    fit(messages, counter=recorder, **options)
    counts = await precount(list(recorder.texts), counter)
    return fit(messages, counter=counts, **options)
