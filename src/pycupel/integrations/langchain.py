"""LangChain: an agent middleware and an LCEL Runnable that fit the model input.

* :class:`ContextWindowMiddleware` plugs into ``langchain.agents.create_agent(...,
  middleware=[...])``. Its ``wrap_model_call`` hook fits the request's messages (with the
  system message, which is counted and always kept) into the budget and hands the smaller
  request to the model. The graph's ``messages`` state is never rewritten: every turn the
  model sees a window cut from the whole history, and the next turn starts from the whole
  history again.
* :func:`fit_runnable` is the same fitting as a Runnable for LCEL chains
  (``prompt | fit_runnable(budget=...) | model``).

Fitting is :func:`pycupel.adapters.langchain.fit_messages`: a tool call and its results stay
together, system messages and the latest human message are pinned, the messages keep their
order, and the window counted with :func:`pycupel.adapters.langchain.count_tokens` is within
the budget. Tool schemas bound to the model are not part of the messages: leave room for them
in the budget.

Needs ``pip install 'pycupel[langgraph]'`` (LangChain 1.x, LangGraph); importing this module
without it raises :class:`~pycupel.errors.IntegrationUnavailableError`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, cast

from pycupel.errors import IntegrationUnavailableError, PipelineConfigError

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage, AnyMessage, BaseMessage
    from langchain_core.prompt_values import PromptValue
    from langchain_core.runnables import RunnableLambda
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise IntegrationUnavailableError(
        "LangChain agent middleware", "langchain", "langgraph"
    ) from exc

from pycupel.adapters import langchain as adapter
from pycupel.adapters._units import MessageOverhead
from pycupel.diagnostics import SelectionReport
from pycupel.integrations._window import WindowSettings
from pycupel.model import ContextBudget
from pycupel.pipeline import Pipeline
from pycupel.policy import Policy
from pycupel.tokens import TokenCounter

__all__ = ["ContextWindowMiddleware", "fit_runnable", "fit_window"]

ReportHook = Callable[[SelectionReport], None]
"""Called with the report of every fit (to log or assert what the model saw and why)."""


def fit_window(
    messages: Sequence[BaseMessage], settings: WindowSettings
) -> adapter.FitResult[BaseMessage]:
    """Fit a LangChain message list with ``settings``; the messages and the report."""
    return adapter.fit_messages(
        messages,
        budget=settings.budget,
        policy=settings.policy,
        counter=settings.counter,
        overhead=settings.overhead,
        unanswered_tool_calls=settings.unanswered_tool_calls,
    )


class ContextWindowMiddleware(AgentMiddleware):
    """Fits every model call of a LangChain agent into a token budget.

    ``create_agent(model, tools, middleware=[ContextWindowMiddleware(budget=8_000)])``.
    One instance can serve every thread of an agent: it holds only its settings.

    Args:
        budget: tokens for the model's messages, system message included (an int, or a
            :class:`~pycupel.ContextBudget`).
        policy: the selection policy or a pipeline; default :func:`pycupel.presets.chat`.
        counter: the token counter; default :class:`~pycupel.tokens.HeuristicCounter`.
        overhead: per-message costs; default the OpenAI-like
            :data:`pycupel.adapters.langchain.DEFAULT_OVERHEAD`.
        unanswered_tool_calls: ``"error"`` or ``"drop"`` (see ``fit_messages``).
        on_report: called with the :class:`~pycupel.diagnostics.SelectionReport` of every fit.

    Raises:
        PipelineConfigError: a bad setting, at construction.
        PinnedBudgetError: at a model call, when the system message and the latest human
            message alone exceed the budget.
    """

    def __init__(
        self,
        *,
        budget: int | ContextBudget,
        policy: Policy | Pipeline | None = None,
        counter: TokenCounter | None = None,
        overhead: MessageOverhead | None = None,
        unanswered_tool_calls: Literal["error", "drop"] = "error",
        on_report: ReportHook | None = None,
    ) -> None:
        super().__init__()
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

    def fit_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request with its messages fitted; the system message is counted and kept."""
        system = request.system_message
        history: list[BaseMessage] = [system] if system is not None else []
        history.extend(request.messages)
        fitted, report = fit_window(history, self.settings)
        if self.on_report is not None:
            self.on_report(report)
        if system is not None:
            fitted = [message for message in fitted if message is not system]
        # The fitted list holds the request's own message objects, so their types are kept.
        return request.override(messages=cast("list[AnyMessage]", fitted))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage:
        return handler(self.fit_request(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        return await handler(self.fit_request(request))


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
