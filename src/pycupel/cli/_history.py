"""A message history fitted by the commands exactly as its format's ``fit_messages`` fits it.

``pycupel select`` and ``pycupel explain`` hand a history to the adapter of its format
(:func:`pycupel.adapters.openai.fit_messages` and its siblings) with the budget, the query
and the policy the command line gives, and every other argument at its default. Without
``--preset`` or ``--policy`` that is the structure-aware selection (the system prompt and
the latest user turn pinned, a recent tail, the turns relevant to the query with their
neighbours, long tool results kept as excerpts sized to the room and older ones as
placeholders); with one, the
policy's ordinary pipeline. What the command prints is that fit: the history ready to send,
the report, and the request's tokens as the adapter counts them (the per-request overhead
included), so ``total_tokens <= --budget`` always holds.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import click

from pycupel.diagnostics import SelectionReport
from pycupel.model import ContextBudget, ContextItem

if TYPE_CHECKING:
    from pycupel.adapters import MessageOverhead
    from pycupel.cli._input import Candidates
    from pycupel.policy import Policy

__all__ = [
    "HistoryFit",
    "HistoryPoint",
    "check_history_policy",
    "describe_fit",
    "fit_history",
    "per_request_overhead",
    "sweep_history",
    "window_report",
]

_FORMAT_NAMES = MappingProxyType(
    {
        "openai": "OpenAI chat",
        "anthropic": "Anthropic",
        "responses": "OpenAI Responses",
        "gemini": "Gemini",
        "langchain": "LangChain",
    }
)


@dataclass(frozen=True, slots=True)
class HistoryFit:
    """What ``fit_messages`` returned for a history, in the command line's terms.

    Attributes:
        history: the fitted request as the provider's JSON, ready to send:
            ``{"messages": [...]}`` (OpenAI; LangChain in ``messages_to_dict`` form),
            ``{"system": ..., "messages": [...]}`` (Anthropic), ``{"instructions": ...,
            "input": ...}`` (Responses), ``{"system_instruction": ..., "contents": [...]}``
            (Gemini); the system prompt's key only when there is one.
        report: the fit's report, as ``fit_messages`` returned it.
        total_tokens: the fitted request's tokens as the adapter counts them (the format's
            per-request overhead included): what ``--budget`` bounds.
    """

    history: dict[str, Any]
    report: SelectionReport
    total_tokens: int


def fit_history(
    candidates: Candidates,
    budget: ContextBudget,
    *,
    policy: Policy | None,
    query: str | None,
    policy_flag: str = "--policy",
) -> HistoryFit:
    """Fit ``candidates`` (a message history) as its format's ``fit_messages`` does by default,
    with ``policy`` (``--preset``/``--policy``, named by ``policy_flag`` in errors) and
    ``query`` (``--query``) when given.

    Raises:
        click.BadParameter: ``--budget`` cannot hold ``--output-reserve`` plus the format's
            per-request overhead, or the policy cannot score a message history.
        CupelError: what ``fit_messages`` raises (pinned messages over the budget...).
    """
    name = candidates.format
    check_history_policy(policy, policy_flag)
    _check_budget(budget, per_request_overhead(name), name)
    # The adapters load only for a history (an items file never needs them).
    if name == "openai":
        from pycupel.adapters import openai  # noqa: PLC0415

        messages, report = openai.fit_messages(
            candidates.history, budget=budget, policy=policy, query=query
        )
        return HistoryFit({"messages": messages}, report, openai.count_tokens(messages))
    if name == "anthropic":
        from pycupel.adapters import anthropic  # noqa: PLC0415

        system, messages, report = anthropic.fit_messages(
            candidates.history,
            system=candidates.system,
            budget=budget,
            policy=policy,
            query=query,
        )
        request = _with_system("system", system, {"messages": messages})
        return HistoryFit(request, report, anthropic.count_tokens(messages, system=system))
    if name == "responses":
        from pycupel.adapters import responses  # noqa: PLC0415

        instructions, fitted, report = responses.fit_messages(
            candidates.history,
            instructions=candidates.system,
            budget=budget,
            policy=policy,
            query=query,
        )
        request = _with_system("instructions", instructions, {"input": fitted})
        tokens = responses.count_tokens(fitted, instructions=instructions)
        return HistoryFit(request, report, tokens)
    if name == "gemini":
        from pycupel.adapters import gemini  # noqa: PLC0415

        system_instruction, contents, report = gemini.fit_messages(
            candidates.history,
            system_instruction=candidates.system,
            budget=budget,
            policy=policy,
            query=query,
        )
        request = _with_system("system_instruction", system_instruction, {"contents": contents})
        tokens = gemini.count_tokens(contents, system_instruction=system_instruction)
        return HistoryFit(request, report, tokens)
    if name == "langchain":
        from langchain_core.messages import messages_to_dict  # noqa: PLC0415  (optional)

        from pycupel.adapters import langchain  # noqa: PLC0415

        kept, report = langchain.fit_messages(
            candidates.history, budget=budget, policy=policy, query=query
        )
        request = {"messages": messages_to_dict(kept)}
        return HistoryFit(request, report, langchain.count_tokens(kept))
    raise AssertionError(f"not a history format: {name!r}")  # pragma: no cover


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """One budget of a sweep over a history (the attributes a sweep row reads).

    ``selected`` holds the history's own unit items (as read), one per unit kept, whether
    whole or shortened, so that rows compare their selections by identity.
    """

    budget: ContextBudget
    selected: tuple[ContextItem, ...]
    tokens_used: int
    total_score: float
    feasible: bool


def sweep_history(
    candidates: Candidates, budgets: list[ContextBudget], *, policy: Policy | None
) -> list[HistoryPoint]:
    """Fit the history at each budget as :func:`fit_history` does (``tokens_used``: the
    request's tokens). A budget the pinned messages (or the format's per-request overhead and
    the output reserve) do not fit selects nothing and is marked infeasible."""
    from pycupel.errors import PinnedBudgetError  # noqa: PLC0415

    units = candidates.units
    assert units is not None  # a history
    by_messages = {unit.message_indices: unit.item for unit in units.units}
    overhead = per_request_overhead(candidates.format)
    points: list[HistoryPoint] = []
    for budget in budgets:
        if budget.max_tokens - overhead < budget.output_reserve:
            points.append(HistoryPoint(budget, (), 0, 0.0, feasible=False))
            continue
        try:
            fit = fit_history(candidates, budget, policy=policy, query=None)
        except PinnedBudgetError:
            points.append(HistoryPoint(budget, (), 0, 0.0, feasible=False))
            continue
        selected = tuple(
            by_messages.get(tuple(entry.item.metadata.get("message_indices", ())), entry.item)
            for entry in fit.report.included
        )
        total = sum(entry.score for entry in fit.report.included)
        points.append(HistoryPoint(budget, selected, fit.total_tokens, total, feasible=True))
    return points


def per_request_overhead(name: str) -> int:
    """The tokens every request of format ``name`` costs before its first message, as the
    format's ``fit_messages`` counts them by default."""
    # LangChain messages are counted with the OpenAI adapter's overhead.
    adapter = "openai" if name == "langchain" else name
    module = importlib.import_module(f"pycupel.adapters.{adapter}")
    overhead: MessageOverhead = module.DEFAULT_OVERHEAD
    return overhead.per_request


def describe_fit(policy: Policy | None) -> dict[str, str]:
    """How a history was fitted, for the HTML page's "Run" list."""
    if policy is None:
        return {
            "selection": "structure-aware, as fit_messages by default: system prompt and "
            "latest user turn pinned, recent tail, turns relevant to the query with their "
            "neighbours; long tool results kept as excerpts, older ones as placeholders",
            "scorer": "Conversation: relevance ×10, recency ×0.1",
        }
    parts = ", ".join(f"{spec.type} ×{spec.weight:g}" for spec in policy.scorers)
    return {
        "selection": f"the policy's pipeline, as fit_messages(policy=...): {policy.name}",
        "scorer": parts,
        "slicer": policy.slicer.type,
        "shrink": "excerpts and placeholders" if policy.shrink is not None else "off",
    }


def window_report(report: SelectionReport) -> SelectionReport:
    """``report`` with its included items in conversation order (by their first message), the
    order of the fitted history, for the tables that number the window's rows. A placer
    other than the chronological one orders the report's items otherwise; the messages
    always come back in conversation order."""
    included = sorted(report.included, key=lambda entry: _first_message(entry.item))
    if [entry.item for entry in included] == [entry.item for entry in report.included]:
        return report
    return SelectionReport.build(
        events=report.events,
        included=included,
        excluded=report.excluded,
        count_requirement_shortfalls=report.count_requirement_shortfalls,
        token_requirement_shortfalls=report.token_requirement_shortfalls,
        packing=report.packing,
        solver=report.solver,
        why=report.why,
    )


def _first_message(item: ContextItem) -> int:
    indices = item.metadata.get("message_indices")
    if isinstance(indices, tuple | list) and indices and isinstance(indices[0], int):
        return indices[0]
    return -1  # a system prompt passed beside the history opens the window


def _with_system(key: str, system: object, request: dict[str, Any]) -> dict[str, Any]:
    return request if system is None else {key: system, **request}


def _check_budget(budget: ContextBudget, per_request: int, name: str) -> None:
    """The budget must hold the output reserve plus the per-request overhead (what every
    request costs before its first message), as ``fit_messages`` requires."""
    if budget.max_tokens - per_request < budget.output_reserve:
        reserve = ""
        if budget.output_reserve:
            reserve = f"--output-reserve ({budget.output_reserve}) plus "
        raise click.BadParameter(
            f"must cover {reserve}the per-request overhead of {_FORMAT_NAMES[name]} requests "
            f"({per_request} tokens), got {budget.max_tokens}",
            param_hint="--budget",
        )


def check_history_policy(policy: Policy | None, flag: str) -> None:
    """Refuse a policy that scores by the retriever's score: messages have none.

    Raises:
        click.BadParameter: naming ``flag`` (``--preset`` or ``--policy``).
    """
    if policy is None:
        return
    if any(spec.type == "retrieval_score" for spec in policy.scorers):
        raise click.BadParameter(
            f"the {policy.name} policy scores retrieved chunks by their metadata "
            "retrieval_score, which messages do not have; use it on an items file, or "
            "choose another policy for a message history",
            param_hint=flag,
        )
