"""``afit_messages``: the adapters' ``fit_messages`` with an asynchronous token counter.

The fit is traced once with a counter that records the texts it is asked about (counting them
as zero), the distinct texts are counted with one awaited call, and the fit runs again on those
counts. Parsing errors surface from the trace, before anything is awaited.

Shorter versions of tool results (placeholders, truncations) are texts made from the first
counts; the next run records the ones not counted yet (counting them as zero) and another
awaited call counts them, until a run meets no new text. A history that fits whole needs no
versions and so no second call.

With ``summarize=``, the callback (a coroutine function is awaited) is called once, with the
messages the fit drops: the fit is first run with a stand-in that records them, the callback
is awaited on those, and the fit runs again with its text (counted by the same awaited
counter), which ``fit_messages`` places, checks and marks as it does for a synchronous one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pycupel.conversation.summary import SUMMARY_MARK, Summary
from pycupel.tokens import TokenCounter
from pycupel.tokens.asynchronous import (
    AsyncTokenCounter,
    PrecountedCounter,
    RecordingCounter,
    precount,
)

__all__ = ["afit"]

R = TypeVar("R")

_MAX_ROUNDS = 4
"""Rounds of counting after the first: the versions' texts depend on at most three rounds."""


class _CountedOrRecorded:
    """Answers from known counts; records (and counts as zero) the texts it does not know."""

    __slots__ = ("_counts", "missing")

    def __init__(self, counts: Mapping[str, int]) -> None:
        self._counts = counts
        self.missing: dict[str, None] = {}  # an insertion-ordered set

    def count(self, text: str) -> int:
        known = self._counts.get(text)
        if known is None:
            self.missing[text] = None
            return 0
        return known

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(text) for text in texts]


Fit = Callable[[TokenCounter, Mapping[str, Any]], R]
"""``fit(counter, options)``: the synchronous fit with that counter and those options."""


async def afit(fit: Fit[R], counter: AsyncTokenCounter, options: Mapping[str, Any]) -> R:
    """``fit(counter, options)`` with the counts awaited from ``counter`` and a ``summarize``
    option's callback awaited once (see the module docs). ``options`` are checked and
    complete (the caller read them with :func:`~pycupel.conversation.options.read_options`)."""
    summary = Summary.start(
        options.get("summarize"), options.get("on_summary_error", "raise"), options["budget"]
    )
    if summary is None:
        return await _counted(fit, counter, options)
    recorded: list[list[Any]] = []

    def record(dropped: list[Any], previous: str | None) -> str:
        recorded.append(dropped)
        return ""

    first = await _counted(
        fit, counter, {**options, "summarize": record, "on_summary_error": "raise"}
    )
    if not recorded:
        return first  # nothing dropped: no summary
    marked = await summary.atext(recorded[-1], None)
    text = None if marked is None else marked[len(SUMMARY_MARK) + 1 :]
    return await _counted(fit, counter, {**options, "summarize": _given(summary.name, text)})


def _given(name: str, text: str | None) -> Callable[[list[Any], str | None], str | None]:
    """A summarizer returning a text obtained beforehand (``None``: it failed, skipped),
    named as the callback it stands for, so that errors name that one."""

    def given(dropped: list[Any], previous: str | None) -> str | None:
        return text

    given.__qualname__ = name
    return given


async def _counted(fit: Fit[R], counter: AsyncTokenCounter, options: Mapping[str, Any]) -> R:
    """``fit(counter, options)`` with the counts awaited from ``counter``."""
    recorder = RecordingCounter()
    fit(recorder, options)
    texts = list(recorder.texts)
    first = await precount(texts, counter)
    counts = dict(zip(texts, first.count_batch(texts), strict=True))
    # A version's text can quote a count (a placeholder names the tokens it clears): each
    # round counts the texts made from the previous round's counts, until none is new.
    for _ in range(_MAX_ROUNDS):
        probe = _CountedOrRecorded(counts)
        fit(probe, options)
        if not probe.missing:
            break
        more = list(probe.missing)
        counted = await precount(more, counter)
        counts.update(zip(more, counted.count_batch(more), strict=True))
    return fit(PrecountedCounter(counts), options)
