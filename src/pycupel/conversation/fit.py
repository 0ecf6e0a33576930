"""Running the pipeline over message units: the provider-neutral part of ``fit_messages``.

* The budget is the whole prompt. An ``int`` becomes ``ContextBudget(max=target=budget)``; the
  format's per-request overhead is taken off ``max_tokens`` and ``target_tokens`` before the
  pipeline sees it, so the fitted messages, counted with ``count_tokens``, stay within it.
* ``fit_messages`` with no policy selects structure-aware (:mod:`pycupel.conversation.structure`):
  :func:`pycupel.presets.conversation` scores the units for the query (by default the text
  of the latest user message) and the conversation's shape is kept (a recent tail,
  neighbours, dated headers). A ``structure=`` (or ``keep_recent=``) applies the same
  selection with a given policy's scorer.
* A given :class:`~pycupel.policy.Policy` or :class:`~pycupel.pipeline.Pipeline` without a
  structure runs the ordinary pipeline; the ``deduplicate`` argument of ``fit_messages``
  replaces the policy's own flag (chat turns that read the same are still different turns).
* Units with unanswered tool calls (kept only with ``unanswered_tool_calls="drop"``) never
  reach the pipeline: the report lists them as excluded with reason ``Filtered``.
* Whatever order the policy's placer chooses, the messages come back in conversation order.
* When the pinned units alone do not fit, the pipeline's :class:`PinnedBudgetError` is raised
  again with both numbers restated for the whole prompt (the per-request overhead added), so
  its ``available_tokens`` is the budget the caller gave (minus any output reserve).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from pycupel._checks import check_bool
from pycupel.conversation.arguments import (
    allows_unanswered,
    conversation_scorer,
    default_query,
    policy_pipeline,
    resolve_budget,
    resolve_counter,
)
from pycupel.conversation.excerpts.plan import ExcerptSource
from pycupel.conversation.explain import pipeline_why
from pycupel.conversation.recall import Recall
from pycupel.conversation.structure import Structure, select_structured
from pycupel.conversation.units import MessageUnit, MessageUnits
from pycupel.conversation.upgrade import (
    complete_pipeline_selection,
    pipeline_candidates,
    resolve_versions,
    select_with_variants,
)
from pycupel.conversation.versions import Editor, Shrink, Variant, remembering, unit_versions
from pycupel.diagnostics import ExcludedItem, Filtered, SelectionReport
from pycupel.errors import PinnedBudgetError, PipelineConfigError
from pycupel.model import ContextBudget, ContextItem, compute_effective_budget
from pycupel.pipeline import Pipeline
from pycupel.slicers import OptimalSlice
from pycupel.tokens import TokenCounter

if TYPE_CHECKING:
    from pycupel.policy import Policy

__all__ = [
    "UNANSWERED_FILTER",
    "FitResult",
    "Fitted",
    "LeadingFilter",
    "fit_units",
    "fitted_entries",
    "with_variants",
]

M = TypeVar("M")

UNANSWERED_FILTER = "unanswered-tool-call"
"""``Filtered.filter_name`` of units left out because a tool call in them has no result."""


class FitResult(NamedTuple, Generic[M]):
    """What ``fit_messages`` returns (OpenAI, LangChain); unpacks as ``messages, report``."""

    messages: list[M]
    """The fitted history: a new list holding your original message objects, in order."""
    report: SelectionReport
    """Why every unit was included or excluded; each item's ``metadata["message_indices"]``
    names the messages it stands for."""


@dataclass(frozen=True, slots=True)
class LeadingFilter:
    """Drops unpinned units from the start of the message list while ``applies(unit)`` holds.

    A unit holding only a system prompt passed beside the list is skipped, not examined.
    """

    name: str
    applies: Callable[[MessageUnit], bool]


@dataclass(frozen=True, slots=True)
class Fitted:
    """The selected units in conversation order, and the report explaining the selection.

    ``variants`` maps the units kept in a shorter version (a placeholder, a truncation) to
    that version; :func:`with_variants` puts their messages in place.
    """

    units: tuple[MessageUnit, ...]
    report: SelectionReport
    variants: Mapping[MessageUnit, Variant[Any]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    @property
    def selected(self) -> tuple[ContextItem, ...]:
        """The items of :attr:`units`."""
        return tuple(unit.item for unit in self.units)


def with_variants(units: MessageUnits[M], fitted: Fitted) -> MessageUnits[M]:
    """``units`` whose messages hold the shorter versions chosen by ``fitted`` (new message
    objects in place of the shortened ones; everything else the caller's own objects)."""
    if not fitted.variants:
        return units
    messages = list(units.messages)
    for unit, variant in fitted.variants.items():
        for index, message in zip(unit.message_indices, variant.messages, strict=True):
            messages[index] = message
    return dataclasses.replace(units, messages=tuple(messages))


def fitted_entries(units: MessageUnits[M], fitted: Fitted) -> list[tuple[int | None, M]]:
    """The messages of ``fitted.units`` in conversation order with their positions in the
    history, a shortened unit's as its version gives them."""
    messages = units.messages
    variants = fitted.variants
    result: list[tuple[int | None, M]] = []
    for unit in fitted.units:
        variant = variants.get(unit) if variants else None
        if variant is not None:
            result.extend(zip(unit.message_indices, variant.messages, strict=True))
        else:
            result.extend((index, messages[index]) for index in unit.message_indices)
    return result


def fit_units(
    units: MessageUnits[M],
    *,
    budget: int | ContextBudget,
    policy: Policy | Pipeline | None,
    deduplicate: bool,
    unanswered_tool_calls: str,
    leading_filter: LeadingFilter | None = None,
    query: str | None = None,
    structure: Structure | None = None,
    shrink: Shrink | None = None,
    editor: Editor[M] | None = None,
    counter: TokenCounter | None = None,
    recall: Recall | None = None,
) -> Fitted:
    """Select units within ``budget``; see the module documentation for the rules.

    ``structure`` selects structure-aware (``fit_messages`` passes
    :func:`resolve_structure`'s answer); without it the policy's pipeline runs, and a
    ``None`` policy means :func:`pycupel.presets.chat`.
    With ``shrink`` (and the format's ``editor`` and ``counter``), a structure-aware
    selection may keep units in a shorter version (:mod:`pycupel.conversation.versions`) when
    the history does not fit whole: a placeholder, an excerpt sized to the room (its gaps'
    texts kept in ``recall`` when one is given, their refs in the markers; the recall tool's
    own answers are never shortened, and the newest of the current turn is pinned), a
    truncation.
    Messages repair mode left out before grouping (``units.repairs``) are reported excluded.
    """
    check_bool(PipelineConfigError, "deduplicate", deduplicate)
    allows_unanswered(unanswered_tool_calls)
    if query is not None and not isinstance(query, str):
        raise PipelineConfigError("query", query, "must be a string or None")
    if structure is not None and not isinstance(structure, Structure):
        raise PipelineConfigError(
            "structure", structure, "must be a pycupel.adapters.Structure or None"
        )
    if recall is not None and shrink is not None:
        # The recall tool's answers are already sized by the recall; cut again, the model
        # would lose what it just asked for.
        shrink = dataclasses.replace(
            shrink, exclude_tools=frozenset(shrink.exclude_tools) | {recall.tool_name}
        )
    chosen_structure = structure
    pipeline_budget = resolve_budget(budget, units.overhead.per_request)
    pipeline: Pipeline | None = None
    if chosen_structure is not None and policy is None:
        # The default selection reads only the conversation preset's scorer.
        scorer = conversation_scorer()
    else:
        pipeline = policy_pipeline(
            policy, pipeline_budget, deduplicate, structured=chosen_structure is not None
        )
        scorer = pipeline.scorer

    filtered: list[ExcludedItem] = list(units.repairs)
    candidates: list[MessageUnit] = []
    for unit in units.units:
        if unit.unanswered_call_ids:
            filtered.append(ExcludedItem(unit.item, 0.0, Filtered(UNANSWERED_FILTER)))
        else:
            candidates.append(unit)

    originals: dict[int, MessageUnit] = {}
    if recall is not None:
        candidates, originals = _pin_recalled(candidates, recall.tool_name)
    variants: Mapping[MessageUnit, Variant[Any]] = MappingProxyType({})
    the_query = query if query is not None else default_query(candidates)
    versions, excerpts = _versions(
        units,
        candidates,
        budget=pipeline_budget,
        shrink=shrink,
        editor=editor,
        counter=counter,
        query=the_query,
        recall=recall,
    )
    shrinking = bool(versions) or excerpts is not None
    try:
        if chosen_structure is not None and shrinking:
            shrunk = select_with_variants(
                candidates,
                versions,
                budget=pipeline_budget,
                scorer=scorer,
                query=the_query,
                structure=chosen_structure,
                deduplicate=deduplicate,
                shrink=shrink,  # type: ignore[arg-type]  # versions exist only with shrink
                leads=leading_filter.applies if leading_filter is not None else None,
                excerpts=excerpts,
            )
            chosen, report, variants = shrunk.units, shrunk.report, shrunk.variants
        elif chosen_structure is not None:
            selection = select_structured(
                candidates,
                budget=pipeline_budget,
                scorer=scorer,
                query=the_query,
                structure=chosen_structure,
                deduplicate=deduplicate,
            )
            chosen, report = selection.units, selection.report
        elif shrinking and not isinstance(getattr(pipeline, "slicer", None), OptimalSlice):
            assert pipeline is not None  # built whenever there is no structure
            # The policy selects whole units; placeholders and upgrades are fitted around.
            result = pipeline.dry_run(
                [unit.item for unit in candidates],
                query=the_query,
            )
            shrunk = complete_pipeline_selection(
                candidates,
                versions,
                result.report,
                budget=pipeline_budget,
                shrink=shrink,  # type: ignore[arg-type]  # versions exist only with shrink
                leads=leading_filter.applies if leading_filter is not None else None,
                excerpts=excerpts,
            )
            chosen, report, variants = shrunk.units, shrunk.report, shrunk.variants
        elif versions:
            assert pipeline is not None  # built whenever there is no structure
            # Every version is a candidate; OptimalSlice takes at most one of each unit.
            offered, origin = pipeline_candidates(candidates, versions)
            result = pipeline.dry_run(offered, query=the_query)
            shrunk = resolve_versions(candidates, origin, result.items, result.report)
            chosen, variants = shrunk.units, shrunk.variants
            report = pipeline_why(candidates, shrunk.report, budget=pipeline_budget)
        else:
            assert pipeline is not None
            result = pipeline.dry_run(
                [unit.item for unit in candidates],
                query=the_query,
            )
            chosen = units.select(result.items)
            report = pipeline_why(candidates, result.report, budget=pipeline_budget)
    except PinnedBudgetError as exc:
        # Restate it for the whole prompt, the budget the caller gave (overhead included).
        extra = units.overhead.per_request
        raise PinnedBudgetError(exc.pinned_tokens + extra, exc.available_tokens + extra) from exc

    removed: set[ContextItem] = set()
    if leading_filter is not None:
        leading: set[tuple[int, ...]] = set()
        for unit in chosen:
            if unit.system_parameter:
                continue  # a system prompt beside the list is not a message: it never leads
            if unit.item.pinned or not leading_filter.applies(unit):
                break
            leading.add(unit.message_indices)
        if leading:
            # The report may hold a unit by one of its versions' items: match the messages.
            removed = {
                entry.item
                for entry in report.included
                if entry.item.metadata.get("message_indices") in leading
            }
            chosen = tuple(unit for unit in chosen if unit.message_indices not in leading)
            filtered.extend(
                ExcludedItem(entry.item, entry.score, Filtered(leading_filter.name))
                for entry in report.included
                if entry.item in removed
            )
    if filtered:
        report = _with_exclusions(report, filtered, removed=removed)
    if removed and variants:
        still = set(chosen)
        variants = MappingProxyType({u: v for u, v in variants.items() if u in still})
    if originals:
        chosen = tuple(originals.get(id(unit), unit) for unit in chosen)
    return Fitted(chosen, report, variants)


def _pin_recalled(
    candidates: list[MessageUnit], tool_name: str
) -> tuple[list[MessageUnit], dict[int, MessageUnit]]:
    """``candidates`` with the newest recall answer of the current turn (after the latest
    pinned user turn) pinned, and the pinned copy's original by id. The model asked for it
    to answer this turn: left out, it would only ask again. Older answers of the turn
    compete as any unit does (each is at most the recall's ``max_tokens``; pinned together,
    a few of them could outgrow the budget)."""
    only = f"tool:{tool_name}"
    for n in range(len(candidates) - 1, -1, -1):
        unit = candidates[n]
        if unit.item.pinned:
            break  # the latest user turn (or a system prompt): the turn starts there
        tools = {tag for tag in unit.item.tags if tag.startswith("tool:")}
        if unit.call_ids and tools == {only}:
            pinned = dataclasses.replace(unit, item=unit.item.replace(pinned=True))
            return [*candidates[:n], pinned, *candidates[n + 1 :]], {id(pinned): unit}
    return candidates, {}


def _versions(
    units: MessageUnits[M],
    candidates: Sequence[MessageUnit],
    *,
    budget: ContextBudget,
    shrink: Shrink | None,
    editor: Editor[M] | None,
    counter: TokenCounter | None,
    query: str,
    recall: Recall | None,
) -> tuple[dict[int, Any], ExcerptSource[M] | None]:
    """The shorter versions of the candidates and the source of their excerpts, or none
    when shrinking is off or the whole history fits (nothing needs to shrink)."""
    if shrink is None or editor is None:
        return {}, None
    whole = sum(max(unit.item.tokens, 0) for unit in candidates)
    if whole <= compute_effective_budget(budget, 0).target_tokens:
        return {}, None
    resolved = remembering(resolve_counter(counter))  # the versions count a text once
    versions = unit_versions(
        candidates, units.messages, editor=editor, counter=resolved, shrink=shrink
    )
    if not shrink.excerpts:
        return versions, None
    excerpts = ExcerptSource(
        candidates,
        units.messages,
        editor=editor,
        counter=resolved,
        shrink=shrink,
        query=query,
        recall=recall,
    )
    return versions, excerpts


def _with_exclusions(
    report: SelectionReport, extra: Sequence[ExcludedItem], *, removed: set[ContextItem]
) -> SelectionReport:
    """The report with ``extra`` exclusions added and the ``removed`` items no longer included."""
    return SelectionReport.build(
        events=report.events,
        included=[entry for entry in report.included if entry.item not in removed],
        excluded=[*report.excluded, *extra],
        count_requirement_shortfalls=report.count_requirement_shortfalls,
        token_requirement_shortfalls=report.token_requirement_shortfalls,
        packing=report.packing,
        solver=report.solver,
        why=report.why,
    )
