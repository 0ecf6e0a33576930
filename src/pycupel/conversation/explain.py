"""The report of a chat selection: every unit's entry, with the specification's reason and why.

The selections (:mod:`~pycupel.conversation.structure`, :mod:`~pycupel.conversation.upgrade`)
record, as they decide, what took each unit (:class:`~pycupel.diagnostics.Cause`: the recent
tail, relevance, a relevant unit's neighbour or session header...). Here that record becomes
the report: each unit included (``Pinned``, ``Scored``, ``ZeroToken``; a shortened unit as its
version's item) or excluded (``Deduplicated``, ``BudgetExceeded``), as the specification
names it, and beside it a :class:`~pycupel.diagnostics.Why` (in
:attr:`SelectionReport.why <pycupel.diagnostics.SelectionReport.why>`) that says it in a
person's words. Units with the same facts share one :class:`Why`; nothing is computed
that the selection did not already know, but what the window leaves free.

:func:`pipeline_why` gives the same account of a policy's pipeline selection, whose report
holds only the specification's reasons: a unit the pipeline left out for its tokens
(``BudgetExceeded``, or ``PinnedOverride`` when the pinned units made it larger than the
room) is told as what it is, a unit that needed more than the budget had left.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from pycupel.conversation.units import MessageUnit
from pycupel.conversation.versions import VARIANT_KEY, Variant, variant_name
from pycupel.diagnostics import (
    BudgetExceeded,
    Cause,
    Deduplicated,
    ExcludedItem,
    IncludedItem,
    InclusionReason,
    PinnedOverride,
    SelectionReport,
    Why,
)
from pycupel.model import ContextBudget, ContextItem, ContextKind, compute_effective_budget

__all__ = ["latest_turn", "pipeline_why", "selection_report"]

_PLAIN: Final = MappingProxyType({cause: Why(cause) for cause in Cause})
"""One Why per cause, for the units whose cause is all there is to say."""
_DUPLICATE: Final = _PLAIN[Cause.DUPLICATE]
_OTHER_VERSION: Final = _PLAIN[Cause.OTHER_VERSION]


def latest_turn(units: Sequence[MessageUnit]) -> int:
    """The position of the latest unit holding a user's message (-1 when none does)."""
    for position in range(len(units) - 1, -1, -1):
        if units[position].user_text:
            return position
    return -1


def selection_report(
    units: Sequence[MessageUnit],
    chosen: Mapping[int, Variant[Any] | None],
    *,
    scores: Sequence[float],
    causes: Mapping[int, Cause],
    beside: Mapping[int, int],
    duplicates: Mapping[int, ContextItem],
    room: int,
) -> SelectionReport:
    """The report of a selection of ``units``.

    Args:
        units: the candidate units, in conversation order.
        chosen: the kept positions -> the version kept (None: whole).
        scores: each unit's score as its entry gives it (1.0 for a pinned unit).
        causes: what took each unit the selection took (a kept unit without one had room
            left for it, or is an older tool call kept as a placeholder).
        beside: a neighbour's or session header's position -> the relevant unit's.
        duplicates: positions left out as duplicates -> the item kept in their place.
        room: the tokens the unpinned units may take: what they leave is reported free.
    """
    items = [unit.item for unit in units]
    used = 0
    for position, version in chosen.items():
        if not items[position].pinned:
            used += items[position].tokens if version is None else version.item.tokens
    free = max(room - used, 0)
    latest = latest_turn(units)
    no_room = Why(Cause.NO_ROOM, free_tokens=free)
    came_with: dict[tuple[Cause, int], Why] = {}  # one Why per relevant unit and cause
    why: dict[ContextItem, Why] = {}
    included: list[IncludedItem] = []
    excluded: list[ExcludedItem] = []
    over_budget: dict[int, BudgetExceeded] = {}  # one reason per distinct token count
    for position, item in enumerate(items):
        score = scores[position]
        if position in duplicates:
            excluded.append(ExcludedItem(item, score, Deduplicated(duplicates[position].content)))
            why[item] = _DUPLICATE
        elif position in chosen:
            version = chosen[position]
            if item.pinned:
                cause = _pinned_cause(item, latest_turn=position == latest)
                reason = InclusionReason.PINNED
            else:
                cause = causes.get(position) or _unlisted_cause(version)
                reason = InclusionReason.ZERO_TOKEN if not item.tokens else InclusionReason.SCORED
            related = -1
            if cause is Cause.NEIGHBOUR or cause is Cause.SESSION_HEADER:
                related = beside.get(position, -1)
                if related not in chosen:
                    # The relevant unit it came with did not stay: that is not why it is here.
                    cause, related = _unlisted_cause(version), -1
            shown = item
            if version is not None:
                told = Why(cause, _indices(units, related), version.name, item.tokens)
                shown, reason = version.item, InclusionReason.SCORED
            elif related < 0:
                told = _PLAIN[cause]
            else:
                told = came_with.get((cause, related)) or came_with.setdefault(
                    (cause, related), Why(cause, units[related].message_indices)
                )
            included.append(IncludedItem(shown, score, reason))
            why[shown] = told
        else:
            budget_reason = over_budget.get(item.tokens)
            if budget_reason is None:
                budget_reason = over_budget[item.tokens] = BudgetExceeded(item.tokens, free)
            excluded.append(ExcludedItem(item, score, budget_reason))
            why[item] = no_room
    return SelectionReport.build(events=(), included=included, excluded=excluded, why=why)


def pipeline_why(
    units: Sequence[MessageUnit], report: SelectionReport, *, budget: ContextBudget
) -> SelectionReport:
    """``report`` (a policy pipeline's selection of ``units``' items, or of their versions,
    run at ``budget``) with a :class:`Why` for its included units and for those left out for
    their tokens (``BudgetExceeded``, ``PinnedOverride``) or as duplicates."""
    units_by_messages = {unit.message_indices: unit for unit in units}
    latest = latest_turn(units)
    latest_item = units[latest].item if latest >= 0 else None
    pinned = sum(max(entry.item.tokens, 0) for entry in report.included if entry.item.pinned)
    used = sum(entry.item.tokens for entry in report.included if not entry.item.pinned)
    room = compute_effective_budget(budget, pinned).target_tokens
    no_room = Why(Cause.NO_ROOM, free_tokens=max(room - used, 0))
    scored = Why(Cause.SCORED)
    why: dict[ContextItem, Why] = {}
    kept: set[tuple[int, ...]] = set()
    for entry in report.included:
        item = entry.item
        messages = tuple(item.metadata.get("message_indices", ()))
        kept.add(messages)
        version = variant_name(item)
        if item.pinned:
            why[item] = Why(_pinned_cause(item, latest_turn=item is latest_item))
        elif version == "full":
            why[item] = scored
        else:
            unit = units_by_messages.get(messages)
            whole_tokens = unit.item.tokens if unit is not None else None
            why[item] = Why(Cause.SCORED, version=version, whole_tokens=whole_tokens)
    # A filter's or a quota's exclusion: the specification's reason says it all.
    for excluded in report.excluded:
        item, reason = excluded.item, excluded.reason
        if isinstance(reason, BudgetExceeded | PinnedOverride | Deduplicated) and (
            item.metadata.get(VARIANT_KEY) is not None
            and tuple(item.metadata.get("message_indices", ())) in kept
        ):
            why[item] = _OTHER_VERSION
        elif isinstance(reason, BudgetExceeded | PinnedOverride):
            why[item] = no_room
        elif isinstance(reason, Deduplicated):
            why[item] = _DUPLICATE
    return SelectionReport.build(
        events=report.events,
        included=report.included,
        excluded=report.excluded,
        count_requirement_shortfalls=report.count_requirement_shortfalls,
        token_requirement_shortfalls=report.token_requirement_shortfalls,
        packing=report.packing,
        solver=report.solver,
        why=why,
    )


def _pinned_cause(item: ContextItem, *, latest_turn: bool) -> Cause:
    """A pinned unit's cause: a system prompt, the latest user turn, or the caller's pin."""
    if item.kind == ContextKind.SYSTEM_PROMPT:
        return Cause.SYSTEM_PROMPT
    return Cause.LATEST_TURN if latest_turn else Cause.PINNED


def _unlisted_cause(version: Variant[Any] | None) -> Cause:
    """What kept a unit no pass of the selection took: the placeholder every older tool
    result keeps, or the room left once the passes were done."""
    if version is not None and version.name == "placeholder":
        return Cause.TOOL_CALL
    return Cause.ROOM_LEFT


def _indices(units: Sequence[MessageUnit], position: int) -> tuple[int, ...]:
    return units[position].message_indices if position >= 0 else ()
