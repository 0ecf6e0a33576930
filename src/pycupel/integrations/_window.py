"""The fitting settings every integration shares, checked once when the integration is built.

An integration object (a middleware, a hook, a filter, a session) lives as long as the
application and is shared by every conversation and thread, so it holds only these immutable
settings and fits each model input afresh: nothing is stored per run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pycupel.conversation.arguments import allows_unanswered, resolve_budget, resolve_counter
from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.recall import Recall, checked_recall
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextBudget
from pycupel.pipeline import Pipeline
from pycupel.policy import Policy
from pycupel.tokens import TokenCounter

__all__ = ["WindowSettings"]


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowSettings:
    """How a model input is fitted: the arguments of the adapters' ``fit_messages``.

    Attributes:
        budget: tokens for the whole model input (an int, or a :class:`~pycupel.ContextBudget`
            for an output reserve or a safety margin).
        policy: the selection policy or a ready pipeline; ``None`` is
            :func:`pycupel.presets.chat`.
        counter: the token counter; ``None`` is the dependency-free
            :class:`~pycupel.tokens.HeuristicCounter`.
        overhead: the per-message costs; ``None`` is the adapter's default.
        unanswered_tool_calls: ``"error"`` raises for a tool call nobody answered, ``"drop"``
            leaves its unit out of the window.
        recall: where the text excerpts elide is kept for the recall tool (each
            conversation reads its own scope under it; see
            :class:`~pycupel.conversation.Recall`); ``None``: markers without refs.
    """

    budget: int | ContextBudget
    policy: Policy | Pipeline | None = None
    counter: TokenCounter | None = None
    overhead: MessageOverhead | None = None
    unanswered_tool_calls: Literal["error", "drop"] = "error"
    recall: Recall | None = None

    def __post_init__(self) -> None:
        # Fail when the integration is built, not on the first model call of a live agent.
        overhead = self.overhead.per_request if self.overhead is not None else 0
        resolve_budget(self.budget, overhead)
        if self.policy is not None and not isinstance(self.policy, Policy | Pipeline):
            raise PipelineConfigError(
                "policy", self.policy, "must be a pycupel.policy.Policy, a Pipeline or None"
            )
        resolve_counter(self.counter)
        if self.overhead is not None and not isinstance(self.overhead, MessageOverhead):
            raise PipelineConfigError(
                "overhead", self.overhead, "must be a pycupel.adapters.MessageOverhead or None"
            )
        allows_unanswered(self.unanswered_tool_calls)
        checked_recall(self.recall)
