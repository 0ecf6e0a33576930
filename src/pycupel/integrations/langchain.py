"""LangChain: an agent middleware and an LCEL Runnable that fit the model input.

* :class:`ContextWindowMiddleware` plugs into ``langchain.agents.create_agent(...,
  middleware=[...])``. Its ``wrap_model_call`` hook fits the request's messages (with the
  system message, which is counted and always kept) with a
  :class:`pycupel.adapters.langchain.Session` per conversation and hands the smaller request
  to the model. Consecutive model calls of a conversation share their leading messages
  (the window is append-only between compactions), so the provider's prompt cache serves
  them; the usage the model reports (``usage_metadata``) calibrates the session. The graph's
  ``messages`` state is never rewritten: every turn the model sees a window of the whole
  history. With ``store=`` (a :class:`~pycupel.session.SessionStore`) the sessions keep
  their state there, under the graph's thread id, so an agent served by several worker
  processes (or restarted) continues each conversation's window exactly, whichever worker
  takes the call.
* :func:`fit_runnable` is a stateless fit as a Runnable for LCEL chains
  (``prompt | fit_runnable(budget=...) | model``): a chain has no conversation to follow.

Fitting follows :mod:`pycupel.adapters.langchain`: a tool call and its results stay
together, system messages and the latest human message are pinned, the messages keep their
order, and the window counted with :func:`pycupel.adapters.langchain.count_tokens` is within
the budget. Tool schemas bound to the model are not part of the messages: leave room for them
in the budget.

Needs ``pip install 'pycupel[langgraph]'`` (LangChain 1.x, LangGraph); importing this module
without it raises :class:`~pycupel.errors.IntegrationUnavailableError`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Any, Literal, cast

from pycupel.errors import IntegrationUnavailableError, PipelineConfigError

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
    from langchain_core.prompt_values import PromptValue
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import BaseTool
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise IntegrationUnavailableError(
        "LangChain agent middleware", "langchain", "langgraph"
    ) from exc

from pycupel.adapters import langchain as adapter
from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.recall import Recall
from pycupel.conversation.recall_tool import answer_arguments, recall_spec
from pycupel.diagnostics import SelectionReport
from pycupel.integrations._sessions import (
    DEFAULT_MAX_SESSIONS,
    SessionPool,
    check_store,
    session_budget,
)
from pycupel.integrations._window import WindowSettings
from pycupel.model import ContextBudget
from pycupel.pipeline import Pipeline
from pycupel.policy import Policy
from pycupel.session import SessionReport, SessionStore
from pycupel.tokens import TokenCounter

__all__ = [
    "ContextWindowMiddleware",
    "SessionWindows",
    "conversation_key",
    "fit_runnable",
    "fit_window",
    "recall_tool",
    "store_key",
    "thread_recall",
]

ReportHook = Callable[[SelectionReport], None]
"""Called with the report of every stateless fit (to log or assert what was kept and why)."""
SessionReportHook = Callable[[SessionReport], None]
"""Called with the session report of every model call (the window, its cache break...)."""


def fit_window(
    messages: Sequence[BaseMessage], settings: WindowSettings
) -> adapter.FitResult[BaseMessage]:
    """Fit a LangChain message list with ``settings``; the messages and the report. Inside
    a LangGraph run, the recall's scope is the run's thread (:func:`thread_recall`)."""
    return adapter.fit_messages(
        messages,
        budget=settings.budget,
        policy=settings.policy,
        counter=settings.counter,
        overhead=settings.overhead,
        unanswered_tool_calls=settings.unanswered_tool_calls,
        recall=thread_recall(settings.recall) if settings.recall is not None else None,
    )


def recall_tool(recall: Recall) -> BaseTool:
    """The recall tool for an agent (``create_agent(model, [*tools, recall_tool(recall)],
    middleware=[ContextWindowMiddleware(..., recall=recall)])``). Within a LangGraph run it
    reads only the running thread's originals (:func:`thread_recall`), so one agent serves
    many threads and none reads another's; a ref of another thread is refused as unknown."""
    spec = dataclasses.replace(
        recall_spec(recall),
        run=lambda arguments: answer_arguments(thread_recall(recall), arguments),
    )
    return adapter.LangChainCodec().tool_definition(spec)


def thread_recall(recall: Recall) -> Recall:
    """``recall`` scoped to the running LangGraph thread (``recall.scoped("thread:<id>")``),
    or ``recall`` itself outside a run with a thread id."""
    thread = _thread_id()
    return recall.scoped(f"thread:{thread}") if thread is not None else recall


def _thread_id() -> str | None:
    """The thread id of the running LangGraph graph, or ``None`` outside one."""
    try:
        from langgraph.config import get_config  # noqa: PLC0415  (only inside a graph run)

        thread = get_config().get("configurable", {}).get("thread_id")
    except (ImportError, RuntimeError):  # not inside a runnable context
        thread = None
    return None if thread is None else str(thread)


def conversation_key(messages: Sequence[BaseMessage]) -> Hashable:
    """Which conversation ``messages`` belong to: the LangGraph thread id of the running
    graph when there is one, else the id of the first non-system message (LangGraph gives
    every message of the state an id), else one shared anonymous key."""
    thread = _thread_id()
    if thread is not None:
        return ("thread", thread)
    for message in messages:
        if not isinstance(message, SystemMessage) and message.id:
            return ("first", message.id)
    return ("anonymous",)


def store_key(key: Hashable) -> str | None:
    """The key a :func:`conversation_key` is stored under: the thread id itself,
    ``"message:<id>"`` for a first message's id; None for the anonymous key (a
    conversation without an id is never stored: every conversation would share it)."""
    if isinstance(key, tuple) and len(key) == 2:
        kind, value = key
        return str(value) if kind == "thread" else f"message:{value}"
    return None


def conversation_recall(recall: Recall | None, conversation: Hashable) -> Recall | None:
    """The recall of a :func:`conversation_key`'s session: scoped to its thread, as
    :func:`thread_recall` scopes the recall tool's lookups inside that thread's run."""
    if recall is None:
        return None
    if isinstance(conversation, tuple) and len(conversation) == 2 and conversation[0] == "thread":
        return recall.scoped(f"thread:{conversation[1]}")
    return recall


class SessionWindows:
    """A :class:`pycupel.adapters.langchain.Session` per conversation (see
    :mod:`pycupel.integrations._sessions`), shared by the middleware and the LangGraph hook;
    with a ``store``, each keeps its state there under :func:`store_key`."""

    __slots__ = ("_pool", "on_report", "settings", "store")

    def __init__(
        self,
        settings: WindowSettings,
        *,
        on_report: SessionReportHook | None,
        max_sessions: int,
        store: SessionStore | None = None,
    ) -> None:
        if on_report is not None and not callable(on_report):
            raise PipelineConfigError("on_report", on_report, "must be callable or None")
        self.settings = settings
        self.on_report = on_report
        self.store = check_store(store)
        budget = session_budget(settings.budget)

        def new_session(conversation: Hashable = ("anonymous",)) -> adapter.Session:
            key = store_key(conversation) if store is not None else None
            return adapter.Session(
                budget=budget,
                policy=settings.policy,
                counter=settings.counter,
                overhead=settings.overhead,
                store=store if key is not None else None,
                key=key,
                recall=conversation_recall(settings.recall, conversation),
            )

        new_session()  # a bad setting fails here, at construction
        self._pool: SessionPool[adapter.Session] = SessionPool(
            new_session, max_sessions=max_sessions
        )

    def session(self, messages: Sequence[BaseMessage]) -> adapter.Session:
        """The session of the conversation ``messages`` belong to."""
        return self._pool.get(conversation_key(messages))

    def fit(self, messages: Sequence[BaseMessage]) -> tuple[adapter.Session, list[BaseMessage]]:
        """This model call's window (and the session that fitted it)."""
        session = self.session(messages)
        window = session.fit(messages)
        if self.on_report is not None:
            self.on_report(window.report)
        return session, window.messages


def session_windows(
    settings: WindowSettings,
    *,
    on_report: SessionReportHook | None,
    max_sessions: int,
    store: SessionStore | None,
) -> SessionWindows | None:
    """The sessions of a middleware or hook: none with ``unanswered_tool_calls="drop"``
    (each call is fitted on its own; a store is refused)."""
    if settings.unanswered_tool_calls == "drop":
        if store is not None:
            raise PipelineConfigError(
                "store",
                store,
                "needs unanswered_tool_calls='error' (with 'drop' every call is fitted on its "
                "own: there is no session state to keep)",
            )
        return None
    return SessionWindows(settings, on_report=on_report, max_sessions=max_sessions, store=store)


def record_model_usage(session: adapter.Session, response: object) -> None:
    """Calibrate ``session`` with the usage of the model's reply, when it reports one."""
    messages = [response] if isinstance(response, AIMessage) else getattr(response, "result", [])
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            if message.usage_metadata:
                session.record_usage(message.usage_metadata)
            return


class ContextWindowMiddleware(AgentMiddleware):
    """Fits every model call of a LangChain agent into a token budget, cache-stably.

    ``create_agent(model, tools, middleware=[ContextWindowMiddleware(budget=8_000)])``.
    One instance serves every thread of an agent: it keeps a
    :class:`pycupel.adapters.langchain.Session` per conversation (keyed by
    :func:`conversation_key`), at most ``max_sessions`` of them.

    Args:
        budget: tokens for the model's messages, system message included (an int, or a
            :class:`~pycupel.ContextBudget`, whose target is used).
        policy: what a compaction keeps (a Policy or a Pipeline); default structure-aware
            relevance to the latest human message.
        counter: the token counter; default :class:`~pycupel.tokens.HeuristicCounter`.
        overhead: per-message costs; default the OpenAI-like
            :data:`pycupel.adapters.langchain.DEFAULT_OVERHEAD`.
        unanswered_tool_calls: ``"error"`` (sessions; every model call follows answered
            tool calls) or ``"drop"`` (a stateless ``fit_messages`` per call that leaves
            unanswered calls out).
        on_report: called with the :class:`~pycupel.session.SessionReport` of every model
            call (with ``"drop"``: the :class:`~pycupel.diagnostics.SelectionReport`).
        max_sessions: conversations kept at once (the least recently used is dropped).
        recall: keep the text excerpts elide for the recall tool (:func:`recall_tool`),
            each thread in its own scope (the sessions then keep long tool results as
            excerpts whose gaps the model can fetch back).
        store: where the sessions keep their state between model calls (a
            :class:`~pycupel.session.SessionStore`), under the graph's thread id (see
            :func:`store_key`): every worker process of the agent continues each
            conversation exactly. Needs ``unanswered_tool_calls="error"``.

    Raises:
        PipelineConfigError: a bad setting, at construction.
        PinnedBudgetError: at a model call, when the system message and the latest human
            message alone exceed the budget.
        SessionConflictError: never with the sessions' default ``on_conflict="retry"``,
            unless four workers in a row fit the same conversation at once.
        SessionStoreError: the store failed.
    """

    def __init__(
        self,
        *,
        budget: int | ContextBudget,
        policy: Policy | Pipeline | None = None,
        counter: TokenCounter | None = None,
        overhead: MessageOverhead | None = None,
        unanswered_tool_calls: Literal["error", "drop"] = "error",
        on_report: Callable[[Any], None] | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        recall: Recall | None = None,
        store: SessionStore | None = None,
    ) -> None:
        super().__init__()
        self.settings = WindowSettings(
            budget=budget,
            policy=policy,
            counter=counter,
            overhead=overhead,
            unanswered_tool_calls=unanswered_tool_calls,
            recall=recall,
        )
        if on_report is not None and not callable(on_report):
            raise PipelineConfigError("on_report", on_report, "must be callable or None")
        self.on_report = on_report
        self.windows = session_windows(
            self.settings, on_report=on_report, max_sessions=max_sessions, store=store
        )

    def _fit(self, request: ModelRequest[Any]) -> tuple[ModelRequest[Any], adapter.Session | None]:
        system = request.system_message
        history: list[BaseMessage] = [system] if system is not None else []
        history.extend(request.messages)
        session: adapter.Session | None = None
        if self.windows is not None:
            session, fitted = self.windows.fit(history)
        else:
            fitted, report = fit_window(history, self.settings)
            if self.on_report is not None:
                self.on_report(report)
        if system is not None:
            fitted = [message for message in fitted if message is not system]
        # The fitted list holds the request's own message objects, so their types are kept.
        return request.override(messages=cast("list[AnyMessage]", fitted)), session

    def fit_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request with its messages fitted; the system message is counted and kept."""
        return self._fit(request)[0]

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        fitted, session = self._fit(request)
        response = handler(fitted)
        if session is not None:
            record_model_usage(session, response)
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        fitted, session = self._fit(request)
        response = await handler(fitted)
        if session is not None:
            record_model_usage(session, response)
        return response


def fit_runnable(
    *,
    budget: int | ContextBudget,
    policy: Policy | Pipeline | None = None,
    counter: TokenCounter | None = None,
    overhead: MessageOverhead | None = None,
    unanswered_tool_calls: Literal["error", "drop"] = "error",
    on_report: ReportHook | None = None,
) -> RunnableLambda[Sequence[BaseMessage] | PromptValue, list[BaseMessage]]:
    """An LCEL Runnable: a message list (or a chat prompt value) in, the fitted list out.

    ``chain = prompt | fit_runnable(budget=4_000) | model``. Arguments are those of
    :class:`ContextWindowMiddleware`.
    """
    settings = WindowSettings(
        budget=budget,
        policy=policy,
        counter=counter,
        overhead=overhead,
        unanswered_tool_calls=unanswered_tool_calls,
    )
    if on_report is not None and not callable(on_report):
        raise PipelineConfigError("on_report", on_report, "must be callable or None")

    def fit_context_window(value: Sequence[BaseMessage] | PromptValue) -> list[BaseMessage]:
        messages = value.to_messages() if isinstance(value, PromptValue) else value
        fitted, report = fit_window(messages, settings)
        if on_report is not None:
            on_report(report)
        return fitted

    return RunnableLambda(fit_context_window, name="pycupel_fit")
