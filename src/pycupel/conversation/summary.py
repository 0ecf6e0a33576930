"""A summary of what a fit dropped, as one message right after the system prompt.

``fit_messages(..., summarize=callback)`` reserves :data:`SUMMARY_SHARE` of the budget for
the summary, fits the history in the rest, and calls ``callback(dropped, previous)`` with the
messages the fit left out or shortened (in their original form, in conversation order) and
the previous summary (``None`` for a single fit; a session passes its running summary back so
repeated compactions fold into one message). The text it returns becomes one user message
opening with :data:`SUMMARY_MARK`, placed after the leading system messages.

We ship no model call: the callback is yours (any client), synchronous or a coroutine
function. A callback that raises, returns something other than a string, or returns more
tokens than the reserve raises :class:`~pycupel.errors.SummarizerError` naming it; with
``on_summary_error="skip"`` the window is returned without the summary instead.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar

from pycupel.conversation.fit import Fitted
from pycupel.conversation.units import MessageUnits
from pycupel.errors import PipelineConfigError, SummarizerError
from pycupel.model import ContextBudget

__all__ = [
    "SUMMARY_MARK",
    "SUMMARY_SHARE",
    "OnSummaryError",
    "Summarize",
    "Summary",
    "dropped_messages",
    "insert_after_system",
]

M = TypeVar("M")

Summarize = Callable[[list[Any], str | None], str | Awaitable[str]]
"""``summarize(dropped_messages, previous_summary) -> text`` (or a coroutine returning it)."""

OnSummaryError = Literal["raise", "skip"]

SUMMARY_SHARE: Final = 0.1
"""Share of the budget reserved for the summary message when ``summarize=`` is given."""

SUMMARY_MARK: Final = "[Summary of the earlier conversation]"
"""The first line of the summary message, marking it as a summary."""


@dataclass(frozen=True, slots=True)
class Summary:
    """One summarising fit: the callback, what to do when it fails, and its reserve.

    Attributes:
        summarize: the callback.
        on_error: ``"raise"`` or ``"skip"``.
        reserve: tokens kept for the summary message.
        budget: the budget the history is fitted in (the given one minus ``reserve``).
    """

    summarize: Summarize
    on_error: OnSummaryError
    reserve: int
    budget: int | ContextBudget

    @staticmethod
    def start(
        summarize: object, on_summary_error: object, budget: int | ContextBudget
    ) -> Summary | None:
        """Check the options; ``None`` when no summary is asked for."""
        if on_summary_error not in ("raise", "skip"):
            raise PipelineConfigError(
                "on_summary_error", on_summary_error, "must be 'raise' or 'skip'"
            )
        if summarize is None:
            return None
        if not callable(summarize):
            raise PipelineConfigError(
                "summarize", summarize, "must be a callable (messages, previous) -> str or None"
            )
        if isinstance(budget, ContextBudget):
            reserve = int(budget.target_tokens * SUMMARY_SHARE)
            fitted_in: int | ContextBudget = budget.replace(
                max_tokens=budget.max_tokens - reserve,
                target_tokens=budget.target_tokens - reserve,
            )
        elif isinstance(budget, int) and not isinstance(budget, bool):
            reserve = int(budget * SUMMARY_SHARE)
            fitted_in = budget - reserve
        else:
            return None  # the fit itself reports the invalid budget
        return Summary(summarize, on_summary_error, reserve, fitted_in)

    @property
    def name(self) -> str:
        """The callback's qualified name, for errors."""
        return str(getattr(self.summarize, "__qualname__", type(self.summarize).__name__))

    def text(self, dropped: Sequence[Any], previous: str | None) -> str | None:
        """The summary message's text for ``dropped``, or ``None`` (nothing dropped, or the
        callback failed and failures are skipped)."""
        if not dropped:
            return None
        try:
            result = self.summarize(list(dropped), previous)
            if inspect.isawaitable(result):
                if _loop_running():
                    if inspect.iscoroutine(result):
                        result.close()  # never awaited: leave no warning behind
                    return self._failed(
                        len(dropped),
                        "returned a coroutine inside a running event loop, where a "
                        "synchronous fit cannot await it (use a synchronous summarizer)",
                        None,
                    )
                result = asyncio.run(_wrap(result))
        except Exception as exc:
            return self._failed(len(dropped), f"{type(exc).__name__}: {exc}", exc)
        return self._checked(result, len(dropped))

    async def atext(self, dropped: Sequence[Any], previous: str | None) -> str | None:
        """:meth:`text` awaiting a coroutine callback in the running event loop."""
        if not dropped:
            return None
        try:
            result = self.summarize(list(dropped), previous)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            return self._failed(len(dropped), f"{type(exc).__name__}: {exc}", exc)
        return self._checked(result, len(dropped))

    def fits(self, tokens: int, dropped: int) -> bool:
        """Whether a summary message of ``tokens`` fits the reserve (else it fails)."""
        if tokens <= self.reserve:
            return True
        self._failed(
            dropped,
            f"its message takes {tokens} tokens, more than the {self.reserve} reserved "
            f"for it ({SUMMARY_SHARE:.0%} of the budget)",
            None,
        )
        return False

    def _checked(self, result: object, dropped: int) -> str | None:
        if not isinstance(result, str):
            return self._failed(
                dropped, f"returned {type(result).__name__}, not the summary's text (str)", None
            )
        return f"{SUMMARY_MARK}\n{result}"

    def _failed(self, dropped: int, detail: str, cause: BaseException | None) -> str | None:
        """Raise the failure, or ``None`` (no summary) when failures are skipped."""
        if self.on_error == "skip":
            return None
        raise SummarizerError(self.name, dropped, detail) from cause


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _wrap(pending: Awaitable[str]) -> str:
    return await pending


def dropped_messages(units: MessageUnits[M], fitted: Fitted) -> list[M]:
    """The original messages the fit left out or shortened, in conversation order (the
    messages of a shortened unit that are kept as given, its calls, are not among them)."""
    kept = set(fitted.units)
    dropped: list[M] = []
    for unit in units.units:
        if unit.system_parameter or (unit in kept and unit not in fitted.variants):
            continue
        shown = fitted.variants[unit].messages if unit in fitted.variants else None
        for offset, index in enumerate(unit.message_indices):
            original = units.messages[index]
            if shown is None or shown[offset] is not original:
                dropped.append(original)
    return dropped


def insert_after_system(
    messages: Sequence[M], summary: M, *, is_system: Callable[[M], bool]
) -> list[M]:
    """``messages`` with ``summary`` right after the leading system messages."""
    position = 0
    while position < len(messages) and is_system(messages[position]):
        position += 1
    return [*messages[:position], summary, *messages[position:]]
