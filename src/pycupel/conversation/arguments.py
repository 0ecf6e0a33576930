"""A fit's arguments, checked and resolved: what the fit runs with.

The public functions of every format (and the session, the integrations, the replay) take
the same arguments in the same loose forms: a budget as an ``int`` or a
:class:`~pycupel.ContextBudget`, an optional counter, a policy or a ready pipeline or
nothing, a structure or ``keep_recent`` shorthand. Each is checked here (an invalid value is a
:class:`~pycupel.errors.PipelineConfigError` naming it) and turned into what
:func:`~pycupel.conversation.fit.fit_units` runs with, once for all of them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from pycupel._checks import MAX_BUDGET, check_int
from pycupel.conversation.structure import Structure
from pycupel.conversation.units import MessageUnit
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextBudget
from pycupel.pipeline import Pipeline
from pycupel.scorers.base import Scorer
from pycupel.tokens import HeuristicCounter, TokenCounter

__all__ = [
    "allows_unanswered",
    "conversation_scorer",
    "default_query",
    "policy_pipeline",
    "resolve_budget",
    "resolve_counter",
    "resolve_structure",
]


def allows_unanswered(unanswered_tool_calls: object) -> bool:
    """Check the ``unanswered_tool_calls`` option; True when unanswered calls are dropped."""
    if unanswered_tool_calls not in ("error", "drop"):
        raise PipelineConfigError(
            "unanswered_tool_calls", unanswered_tool_calls, "must be 'error' or 'drop'"
        )
    return unanswered_tool_calls == "drop"


def resolve_counter(counter: TokenCounter | None) -> TokenCounter:
    """The given counter, or the dependency-free default estimate."""
    if counter is not None:
        if not callable(getattr(counter, "count_batch", None)):
            raise PipelineConfigError(
                "counter", counter, "must be a token counter with count(text)/count_batch(texts)"
            )
        return counter
    return HeuristicCounter()


def resolve_budget(budget: object, per_request: int) -> ContextBudget:
    """The pipeline budget for a whole-prompt ``budget`` minus the per-request overhead."""
    if isinstance(budget, ContextBudget):
        check_int(PipelineConfigError, "budget.max_tokens", budget.max_tokens, maximum=MAX_BUDGET)
        if budget.max_tokens - per_request < budget.output_reserve:
            raise PipelineConfigError(
                "budget.max_tokens",
                budget.max_tokens,
                f"must cover output_reserve ({budget.output_reserve}) plus the per-request "
                f"overhead ({per_request})",
            )
        return budget.replace(
            max_tokens=budget.max_tokens - per_request,
            target_tokens=max(0, budget.target_tokens - per_request),
        )
    tokens = check_int(PipelineConfigError, "budget", budget, maximum=MAX_BUDGET)
    if tokens < per_request:
        raise PipelineConfigError(
            "budget",
            budget,
            f"must be >= {per_request}, the format's per-request overhead (the tokens every "
            "request costs before its first message)",
        )
    whole = tokens - per_request
    return ContextBudget(max_tokens=whole, target_tokens=whole)


def default_query(units: Sequence[MessageUnit]) -> str:
    """The text of the latest user-authored message ("" when the history has none)."""
    for unit in reversed(units):
        if unit.user_text:
            return unit.user_text
    return ""


def resolve_structure(policy: object, structure: object, keep_recent: object) -> Structure | None:
    """The structure to select with: the default one without a policy, else the given one.

    ``keep_recent`` (tokens) is shorthand for ``Structure(keep_recent=...)``.
    """
    if structure is not None and not isinstance(structure, Structure):
        raise PipelineConfigError(
            "structure", structure, "must be a pycupel.adapters.Structure or None"
        )
    if keep_recent is not None:
        check_int(PipelineConfigError, "keep_recent", keep_recent, minimum=0)
        if structure is not None:
            raise PipelineConfigError(
                "keep_recent", keep_recent, "must not be given with structure= (set it there)"
            )
        return Structure(keep_recent=keep_recent)  # type: ignore[arg-type]  # checked above
    if structure is None and policy is None:
        return Structure()
    return structure


def policy_pipeline(
    policy: object, budget: ContextBudget, deduplicate: bool, *, structured: bool
) -> Pipeline:
    """The pipeline a policy (or a ready pipeline) runs with over ``budget``, its
    deduplication set by the fit; without a policy, the conversation preset when the
    selection is structure-aware, else the chat preset."""
    if policy is None:
        from pycupel import presets  # noqa: PLC0415  (presets pull in every component)

        # Structure-aware selection scores for the query; the plain pipeline keeps the
        # reference chat preset (recency), which callers of fit_units without a structure
        # (the session's compaction) rely on.
        policy = presets.conversation() if structured else presets.chat()
    # The policy package is imported only when it is needed (it loads every component).
    from pycupel.policy import Policy  # noqa: PLC0415

    if isinstance(policy, Pipeline):
        built = policy
    elif isinstance(policy, Policy):
        built = policy.build(budget)
    else:
        raise PipelineConfigError(
            "policy", policy, "must be a pycupel.policy.Policy, a Pipeline or None"
        )
    return Pipeline(
        budget=budget,
        scorer=built.scorer,
        slicer=built.slicer,
        placer=built.placer,
        deduplicate=deduplicate,
        overflow_strategy=built.overflow_strategy,
    )


@functools.cache
def conversation_scorer() -> Scorer:
    """The scorer of :func:`pycupel.presets.conversation`, built once: scorers are
    immutable and stateless, and every default fit scores with this one."""
    from pycupel import presets  # noqa: PLC0415  (presets pull in every component)

    budget = ContextBudget(max_tokens=1, target_tokens=1)  # the scorer does not read it
    return presets.conversation().build(budget).scorer
