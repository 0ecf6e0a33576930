"""OpenAI Agents SDK: a model-input filter and a session that returns a fitted window.

* :class:`ContextWindowFilter` is a ``RunConfig(call_model_input_filter=...)``. Before every
  model call of a run (the first one and every one after a tool round) it fits the input
  items, with the agent's instructions counted and kept, into the budget.
* :class:`ContextWindowSession` implements the SDK's ``Session`` protocol. It stores the whole
  history (in memory, or in any other session you pass as ``store``, such as
  ``SQLiteSession``) and ``get_items()`` returns the history fitted into the budget, so a long
  conversation never sends more than the budget of history. ``get_items(limit=n)`` keeps the
  protocol's meaning, the latest ``n`` stored items, which the runner uses to check its own
  writes. Use both for long agent runs: the session bounds the history a run starts from, the
  filter bounds every model call inside the run. With ``state_store=`` (a
  :class:`~pycupel.session.SessionStore`) the window's state is kept there under the session
  id, so every worker process serving the conversation (with the history in a shared
  ``store`` such as ``SQLiteSession`` or ``RedisSession``) continues its window exactly.

The SDK speaks Responses input items; they are fitted as such by
:mod:`pycupel.adapters.responses` (a call and its output kept or dropped together, parallel
calls sharing one unit, a ``reasoning`` item travelling with the item after it, the
instructions and the latest user message pinned). The window holds your original item
objects, in order. The session fits with a :class:`pycupel.adapters.responses.Session`, so
the windows of consecutive runs extend each other between compactions (a cached prefix).

Needs ``pip install 'pycupel[agents]'``; importing this module without it raises
:class:`~pycupel.errors.IntegrationUnavailableError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from pycupel.errors import IntegrationUnavailableError, MessageFormatError, PipelineConfigError

try:
    from agents import Session, SessionSettings
    from agents.items import TResponseInputItem
    from agents.run_config import CallModelData, ModelInputData
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise IntegrationUnavailableError("OpenAI Agents SDK", "openai-agents", "agents") from exc

from pycupel._checks import check_str
from pycupel.adapters import responses
from pycupel.conversation.overhead import MessageOverhead
from pycupel.diagnostics import SelectionReport
from pycupel.integrations._sessions import check_store, session_budget
from pycupel.integrations._window import WindowSettings
from pycupel.model import ContextBudget
from pycupel.pipeline import Pipeline
from pycupel.policy import Policy
from pycupel.session import SessionStore
from pycupel.tokens import TokenCounter

__all__ = [
    "ContextWindowFilter",
    "ContextWindowSession",
    "FittedItems",
    "count_tokens",
    "fit_items",
]


@dataclass(frozen=True, slots=True)
class FittedItems:
    """The fitted window: your original items in order, and why each was kept or dropped."""

    items: list[TResponseInputItem]
    report: SelectionReport


def fit_items(
    items: Sequence[TResponseInputItem],
    settings: WindowSettings,
    *,
    instructions: str | None = None,
) -> FittedItems:
    """Fit Responses input items (and the instructions, counted and pinned) into the budget."""
    fitted = responses.fit_messages(
        cast("Sequence[Mapping[str, Any]]", items),
        instructions=instructions,
        budget=settings.budget,
        policy=settings.policy,
        counter=settings.counter,
        overhead=settings.overhead,
        unanswered_tool_calls=settings.unanswered_tool_calls,
        shrink=False,  # the window holds the caller's own item objects, none rewritten
    )
    # The fitted input holds the caller's own item objects (a list: items came as a list).
    return FittedItems(cast("list[TResponseInputItem]", fitted.input), fitted.report)


def count_tokens(
    items: Sequence[TResponseInputItem],
    *,
    instructions: str | None = None,
    counter: TokenCounter | None = None,
    overhead: MessageOverhead | None = None,
) -> int:
    """Tokens of a model input (items and instructions), counted as :func:`fit_items` does."""
    return responses.count_tokens(
        items, instructions=instructions, counter=counter, overhead=overhead
    )


class ContextWindowFilter:
    """A ``call_model_input_filter``: fits every model call's input into a token budget.

    ``Runner.run(agent, text, run_config=RunConfig(call_model_input_filter=
    ContextWindowFilter(budget=8_000)))``. Holds only its settings: share it freely.

    Args:
        budget: tokens for the instructions and the input items (an int, or a
            :class:`~pycupel.ContextBudget`). Tool schemas are not counted: leave room.
        policy: the selection policy or a pipeline; default :func:`pycupel.presets.chat`.
        counter: the token counter; default :class:`~pycupel.tokens.HeuristicCounter`.
        overhead: per-message costs; default :data:`pycupel.adapters.openai.DEFAULT_OVERHEAD`.
        unanswered_tool_calls: ``"error"`` or ``"drop"`` (see ``fit_messages``).
        on_report: called with the :class:`~pycupel.diagnostics.SelectionReport` of every fit.
    """

    __slots__ = ("on_report", "settings")

    def __init__(
        self,
        *,
        budget: int | ContextBudget,
        policy: Policy | Pipeline | None = None,
        counter: TokenCounter | None = None,
        overhead: MessageOverhead | None = None,
        unanswered_tool_calls: Literal["error", "drop"] = "error",
        on_report: Callable[[SelectionReport], None] | None = None,
    ) -> None:
        self.settings = WindowSettings(
            budget=budget,
            policy=policy,
            counter=counter,
            overhead=overhead,
            unanswered_tool_calls=unanswered_tool_calls,
        )
        if on_report is not None and not callable(on_report):
            raise PipelineConfigError("on_report", on_report, "must be callable or None")
        self.on_report = on_report

    def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        fitted = fit_items(model_data.input, self.settings, instructions=model_data.instructions)
        if self.on_report is not None:
            self.on_report(fitted.report)
        return ModelInputData(input=fitted.items, instructions=model_data.instructions)


class ContextWindowSession:
    """A session (the SDK's ``Session`` protocol) that keeps everything and returns a window.

    Args:
        session_id: the conversation's id.
        budget: tokens for the history that ``get_items()`` returns (the run adds the new
            input and the instructions on top: leave room for them).
        store: where the full history lives: any ``Session`` (``SQLiteSession(...)``...);
            default an in-memory list.
        policy, counter, overhead, unanswered_tool_calls: as for
            :class:`ContextWindowFilter`. ``unanswered_tool_calls`` defaults to ``"drop"``
            here: a run stopped between a call and its output leaves an unanswered call in the
            stored history, and that window is then fitted statelessly without it.
        on_report: called with the :class:`~pycupel.session.SessionReport` of every
            ``get_items()`` (the :class:`~pycupel.diagnostics.SelectionReport` of a stateless
            fit).
        session_settings: the SDK's session settings (its ``limit`` is applied as the SDK's
            raw tail, not fitted: leave it unset to get the fitted window).
        state_store: where the window's state is kept between calls (a
            :class:`~pycupel.session.SessionStore`: :class:`~pycupel.session.SQLiteStore`,
            :class:`~pycupel.session.RedisStore`), under ``session_id``; ``None`` keeps it
            in this object. (``store`` is the SDK session holding the history itself.)
    """

    def __init__(
        self,
        session_id: str,
        *,
        budget: int | ContextBudget,
        store: Session | None = None,
        policy: Policy | Pipeline | None = None,
        counter: TokenCounter | None = None,
        overhead: MessageOverhead | None = None,
        unanswered_tool_calls: Literal["error", "drop"] = "drop",
        on_report: Callable[[Any], None] | None = None,
        session_settings: SessionSettings | None = None,
        state_store: SessionStore | None = None,
    ) -> None:
        self.session_id = check_str(PipelineConfigError, "session_id", session_id)
        self.settings = WindowSettings(
            budget=budget,
            policy=policy,
            counter=counter,
            overhead=overhead,
            unanswered_tool_calls=unanswered_tool_calls,
        )
        if store is not None and not isinstance(store, Session):
            raise PipelineConfigError(
                "store", store, "must implement the Agents SDK Session protocol or be None"
            )
        if on_report is not None and not callable(on_report):
            raise PipelineConfigError("on_report", on_report, "must be callable or None")
        self.store = store
        self.on_report = on_report
        self.session_settings = session_settings
        self.state_store = check_store(state_store)
        self._window = responses.Session(
            budget=session_budget(budget),
            policy=policy,
            counter=counter,
            overhead=overhead,
            store=self.state_store,
            key=self.session_id if self.state_store is not None else None,
        )
        self._items: list[TResponseInputItem] = []
        self._lock = asyncio.Lock()

    async def all_items(self) -> list[TResponseInputItem]:
        """The whole stored history, unfitted."""
        if self.store is not None:
            return await self.store.get_items()
        async with self._lock:
            return list(self._items)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history fitted into the budget; with ``limit``, the latest ``limit`` stored items."""
        if limit is not None:
            if self.store is not None:
                return await self.store.get_items(limit=limit)
            async with self._lock:
                return list(self._items[-limit:]) if limit > 0 else []
        history = await self.all_items()
        report: object
        try:
            window = self._window.fit(cast("list[Mapping[str, Any]]", history))
            items: list[TResponseInputItem] = cast("list[TResponseInputItem]", window.messages)
            report = window.report
        except MessageFormatError:
            if self.settings.unanswered_tool_calls == "error":
                raise
            # A run stopped between a call and its output: a stateless fit leaves it out.
            fitted = fit_items(history, self.settings)
            items, report = fitted.items, fitted.report
        if self.on_report is not None:
            self.on_report(report)
        return items

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if self.store is not None:
            await self.store.add_items(items)
            return
        async with self._lock:
            self._items.extend(items)

    async def pop_item(self) -> TResponseInputItem | None:
        if self.store is not None:
            return await self.store.pop_item()
        async with self._lock:
            return self._items.pop() if self._items else None

    async def clear_session(self) -> None:
        if self.store is not None:
            await self.store.clear_session()
            return
        async with self._lock:
            self._items.clear()
