"""LangGraph: a hook that fits a graph's messages into the model's budget.

For the prebuilt agent, use ``langchain.agents.create_agent`` with
:class:`pycupel.integrations.langchain.ContextWindowMiddleware`: it replaces
``langgraph.prebuilt.create_react_agent``, deprecated since LangGraph 1.0. In a graph of your
own, call the hook in the node that calls the model::

    hook = ContextWindowHook(budget=8_000)

    def call_model(state: MessagesState) -> dict[str, list[AIMessage]]:
        window = hook(state)["llm_input_messages"]
        return {"messages": [model.invoke(window)]}

The hook fits the graph's ``messages`` into the budget with a
:class:`pycupel.adapters.langchain.Session` per conversation (the graph's thread id, see
:func:`pycupel.integrations.langchain.conversation_key`) and returns the window as
``llm_input_messages``: the model sees a cache-stable window, the graph state keeps the whole
history. With ``store=`` (a :class:`~pycupel.session.SessionStore`) the sessions keep their
state there under the thread id of the run's config, so a graph served by several worker
processes (each thread's state in a checkpointer) continues each thread's window exactly.

It is also the ``pre_model_hook`` of the deprecated ``create_react_agent(model, tools,
pre_model_hook=ContextWindowHook(budget=8_000))``, whose ``prompt=`` is added after the hook
runs, so it is not part of what the hook counts; leave room for it (and for the tool schemas)
in the budget, or put the system prompt in the messages, where it is counted and pinned.

Needs ``langchain-core`` (``pip install 'pycupel[langgraph]'``); importing this module
without it raises :class:`~pycupel.errors.IntegrationUnavailableError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pycupel.errors import IntegrationUnavailableError, PipelineConfigError

try:
    from langchain_core.messages import BaseMessage
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise IntegrationUnavailableError(
        "LangGraph pre-model hook", "langchain-core", "langgraph"
    ) from exc

from pycupel.conversation.overhead import MessageOverhead
from pycupel.integrations._sessions import DEFAULT_MAX_SESSIONS
from pycupel.integrations._window import WindowSettings
from pycupel.integrations.langchain import fit_window, session_windows
from pycupel.model import ContextBudget
from pycupel.pipeline import Pipeline
from pycupel.policy import Policy
from pycupel.session import SessionStore
from pycupel.tokens import TokenCounter

__all__ = ["ContextWindowHook"]


class ContextWindowHook:
    """A LangGraph ``pre_model_hook``: the state's messages in, ``llm_input_messages`` out.

    Arguments are those of :class:`pycupel.integrations.langchain.ContextWindowMiddleware`.
    The hook is a plain callable keeping a session per conversation, safe to share across
    graphs and threads.
    """

    __slots__ = ("on_report", "settings", "windows")

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
        store: SessionStore | None = None,
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
        self.windows = session_windows(
            self.settings, on_report=on_report, max_sessions=max_sessions, store=store
        )

    def __call__(self, state: Mapping[str, Any] | Any) -> dict[str, list[BaseMessage]]:
        messages = _state_messages(state)
        if self.windows is not None:
            return {"llm_input_messages": self.windows.fit(messages)[1]}
        fitted, report = fit_window(messages, self.settings)
        if self.on_report is not None:
            self.on_report(report)
        return {"llm_input_messages": fitted}


def _state_messages(state: object) -> Sequence[BaseMessage]:
    """The ``messages`` of a dict state or of a Pydantic/dataclass state."""
    messages = state.get("messages") if isinstance(state, Mapping) else None
    if messages is None and not isinstance(state, Mapping):
        messages = getattr(state, "messages", None)
    if messages is None:
        raise PipelineConfigError(
            "state.messages",
            None,
            f"the agent state ({type(state).__name__}) must hold a messages list",
        )
    return messages  # type: ignore[no-any-return]
