"""Choosing which version of each unit to keep under the budget: whole, shorter, or none.

See :mod:`pycupel.conversation.versions` for the versions themselves and the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Generic, TypeVar

from pycupel.conversation.excerpts.allocation import (
    ExcerptPlan,
    UnitOffer,
    allocate,
    segment_cost,
    take_segment,
)
from pycupel.conversation.excerpts.plan import ExcerptSource
from pycupel.conversation.excerpts.settle import settle_excerpts, shortfall, tokens_of
from pycupel.conversation.explain import selection_report
from pycupel.conversation.structure import Structure, StructuredChoice, choose_structured
from pycupel.conversation.units import MessageUnit
from pycupel.conversation.versions import (
    VARIANT_KEY,
    VARIANT_NAME_KEY,
    Variant,
    Versions,
    unit_key,
)
from pycupel.diagnostics import Cause, ExcludedItem, SelectionReport
from pycupel.diagnostics.reasons import Deduplicated
from pycupel.model import ContextBudget, ContextItem, compute_effective_budget
from pycupel.scorers.base import Scorer
from pycupel.shrink import Shrink

__all__ = [
    "CUT_SHARE",
    "READ_SHARE",
    "STRONG_MATCH",
    "STRONG_SEGMENT",
    "STRONG_SEGMENT_ROOM",
    "WHOLE_SHARE",
    "VariantSelection",
    "best_first",
    "best_value_first",
    "complete_pipeline_selection",
    "pipeline_candidates",
    "resolve_versions",
    "select_with_variants",
]

M = TypeVar("M")

CUT_SHARE: Final = 0.02
"""Units of at most this share of the room are not cut into excerpts: they are offered
whole (cutting them gains little, and reading their segments costs time)."""
WHOLE_SHARE: Final = 0.25
"""A strong match that could be cut is kept whole before the placeholders only when it takes
at most this share of the room."""
STRONG_MATCH: Final = 0.8
"""Units the selection took that score at least this share of the best score are kept whole
before the placeholders (the oldest placeholders shed the assistant's words before their
calls, then, if that is not enough, give way): on tight budgets the placeholders of a long
history would otherwise crowd out the very turns the question needs. A tool result among
them none of whose lines is worth :data:`STRONG_SEGMENT` of the best line of the outputs is
not (see ``_diffuse``)."""
READ_SHARE: Final = 0.1
"""Strong tool results that together take at most this share of the room are kept whole
without reading their lines (they leave the room to the lines of the long outputs, and
reading them costs time): only above it is each one checked for a line among the
strongest. 0.25 lost most of the gain at 2 and 5 % of the agent histories; 0.05 measured
the same as 0.1."""
STRONG_SEGMENT: Final = 0.6
"""The segments of the units that may be cut worth at least this share of the best
segment's value are kept before the placeholders too (best first, within
:data:`STRONG_SEGMENT_ROOM`; the oldest placeholders shed their words): at 2 % of a long agent
history the calls and placeholders alone fill nine tenths of the room, and the line the
question is about would find none."""
STRONG_SEGMENT_ROOM: Final = 0.5
"""The share of the room the segments kept before the placeholders may take."""

# --------------------------------------------------------------------------- selection


@dataclass(frozen=True, slots=True, eq=False)
class VariantSelection(Generic[M]):
    """The selected units in conversation order, the versions they are kept in, and the report.

    Attributes:
        units: the selected units, in conversation order.
        variants: the units kept in a shorter version -> that version (the others are whole).
        report: every unit included (a shorter one as its version's item) or excluded.
    """

    units: tuple[MessageUnit, ...]
    variants: Mapping[MessageUnit, Variant[M]] = field(default_factory=lambda: MappingProxyType({}))
    report: SelectionReport = field(
        default_factory=lambda: SelectionReport.build(events=(), included=(), excluded=())
    )


def select_with_variants(
    units: Sequence[MessageUnit],
    versions: Mapping[int, Versions[M]],
    *,
    budget: ContextBudget,
    scorer: Scorer,
    query: str | None,
    structure: Structure,
    deduplicate: bool,
    shrink: Shrink,
    leads: Callable[[MessageUnit], bool] | None = None,
    excerpts: ExcerptSource[M] | None = None,
) -> VariantSelection[M]:
    """Structure-aware selection where a unit may be kept in a shorter version.

    ``versions`` comes from :func:`unit_versions` for the same ``units``. The passes:

    1. the ordinary structure-aware selection runs on the whole budget (its scores and its
       choice are the starting point);
    2. the floors are reserved: a placeholder for every tool result that has one, within
       ``placeholder_share`` of the room: bare (without the assistant's words before its
       calls) newest first, so that as many calls as fit stay visible, then with the words
       again, newest first, while they fit;
    3. of what step 1 took, the recent tail is kept first (unbroken, the structure's share
       of the room left by the floors), then the strongest matches (at least
       :data:`STRONG_MATCH` of the best score, but a tool result none of whose lines is
       among the strongest lines of the outputs: its words are spread over lines that do not
       answer; the oldest floors shed their words for them, then give way if that is not
       enough), then the rest by score, best first, each while
       it fits beside the floors still reserved (a unit kept whole gives its floor back);
    4. every unit step 3 did not keep falls back to its floor (or is left out);
    5. the room left goes to excerpts and upgrades (with ``excerpts``, the source of the
       units' excerpts): first the strongest segments of the units that may be cut (at
       least :data:`STRONG_SEGMENT` of the best segment's value, within
       :data:`STRONG_SEGMENT_ROOM` of the room; the oldest floors shed their words for them,
       but stay: a unit that may be cut needs no call's place), then the other valuable
       segments, by value per token (:mod:`pycupel.conversation.excerpts.plan`), beside
       the units offered whole (the diffuse results of step 3 valued by their best
       line); then the other units, best value per token first, each to the largest
       version that fits;
       then what is left of the segments, so that no room is left while something could
       fill it.

    ``leads(unit)`` tells a unit the format will not let lead the history (Anthropic's and
    Gemini's histories start with a user turn; see ``LeadingFilter``): the nearest unit
    before the oldest placeholder that may lead is then kept too, or every placeholder
    before the first such unit would be filtered out.

    Raises:
        PinnedBudgetError: the pinned units alone exceed the budget.
    """
    choice = choose_structured(
        units,
        budget=budget,
        scorer=scorer,
        query=query,
        structure=structure,
        deduplicate=deduplicate,
    )
    room = _room(units, budget)
    floors, reserved = _floors(versions, room, shrink)
    anchor = _anchor(units, floors, leads)
    tail_room = (
        structure.keep_recent
        if structure.keep_recent is not None
        else int((room - reserved) * structure.recent_share)
    )
    return _complete(
        units,
        versions,
        floors,
        choice,
        room=room,
        tail_room=tail_room,
        density=structure.density,
        anchor=anchor,
        excerpts=excerpts,
    )


def complete_pipeline_selection(
    units: Sequence[MessageUnit],
    versions: Mapping[int, Versions[M]],
    report: SelectionReport,
    *,
    budget: ContextBudget,
    shrink: Shrink,
    leads: Callable[[MessageUnit], bool] | None = None,
    excerpts: ExcerptSource[M] | None = None,
) -> VariantSelection[M]:
    """Shorter versions for a policy's ordinary selection (its ``report`` of the whole
    ``units``), for a slicer that does not choose between versions itself: the floors are
    reserved as in :func:`select_with_variants`, the units the policy took are kept whole by
    score while they fit beside them, every other tool result falls back to its placeholder,
    and the room left upgrades units by value per token (there is no recent tail: the policy
    decides what is recent)."""
    room = _room(units, budget)
    floors, _ = _floors(versions, room, shrink)
    return _complete(
        units,
        versions,
        floors,
        _choice_of(units, report),
        room=room,
        tail_room=0,
        density=Structure().density,
        anchor=_anchor(units, floors, leads),
        excerpts=excerpts,
    )


def _choice_of(units: Sequence[MessageUnit], report: SelectionReport) -> StructuredChoice:
    """A pipeline's report of ``units``' items as the choice :func:`_complete` starts from."""
    position_of = {unit.item: position for position, unit in enumerate(units)}
    chosen = [False] * len(units)
    scores = [0.0] * len(units)
    for entry in report.included:
        position = position_of[entry.item]
        chosen[position] = True
        scores[position] = entry.score
    kept_by_content = {entry.item.content: entry.item for entry in report.included}
    duplicates: dict[int, ContextItem] = {}
    for excluded in report.excluded:
        position = position_of[excluded.item]
        scores[position] = excluded.score
        if isinstance(excluded.reason, Deduplicated):
            duplicates[position] = kept_by_content.get(excluded.item.content, excluded.item)
    # What the policy took, it took on its score.
    causes = {p: Cause.SCORED for p, kept in enumerate(chosen) if kept}
    return StructuredChoice(
        chosen=chosen, scores=scores, duplicates=duplicates, left=0, causes=causes
    )


def _room(units: Sequence[MessageUnit], budget: ContextBudget) -> int:
    """The budget's room for the unpinned units."""
    pinned_tokens = sum(max(unit.item.tokens, 0) for unit in units if unit.item.pinned)
    return compute_effective_budget(budget, pinned_tokens).target_tokens


def _floors(
    versions: Mapping[int, Versions[M]], room: int, shrink: Shrink
) -> tuple[dict[int, Variant[M]], int]:
    """A placeholder reserved for every tool result that has one, newest first, within
    ``placeholder_share`` of ``room``; and the tokens reserved. As many calls as fit stay
    visible: each is first reserved bare (without the assistant's words before it, when
    its unit has a bare version), newest first, then the words come back, newest first,
    while they fit."""
    floors: dict[int, Variant[M]] = {}
    limit = int(room * shrink.placeholder_share)
    reserved = 0
    for position in sorted(versions, reverse=True):
        floor = versions[position].bare or versions[position].placeholder
        if floor is not None and reserved + floor.item.tokens <= limit:
            floors[position] = floor
            reserved += floor.item.tokens
    for position in sorted(floors, reverse=True):
        whole = versions[position].placeholder
        assert whole is not None  # a unit with a floor has a placeholder
        extra = whole.item.tokens - floors[position].item.tokens
        if extra and reserved + extra <= limit:
            floors[position] = whole
            reserved += extra
    return floors, reserved


def _shed_words(
    held: dict[int, Variant[M]] | dict[int, Variant[M] | None],
    versions: Mapping[int, Versions[M]],
    *,
    need: int,
    keep: Container[int],
) -> int:
    """Free about ``need`` tokens from the placeholders in ``held`` (floors, or the chosen
    versions), oldest first: each sheds the assistant's words before its calls (its bare
    version), except those at positions in ``keep``; none leaves (its call stays visible).
    Returns the tokens freed (``need`` or more, unless nothing more can be shed)."""
    freed = 0
    for older in sorted(held):
        if freed >= need:
            break
        shorter = versions.get(older)
        if shorter is None or shorter.bare is None or older in keep:
            continue
        floor = held[older]
        if floor is shorter.placeholder and floor is not None:
            freed += floor.item.tokens - shorter.bare.item.tokens
            held[older] = shorter.bare
    return freed


def _anchor(
    units: Sequence[MessageUnit],
    floors: Mapping[int, object],
    leads: Callable[[MessageUnit], bool] | None,
) -> int | None:
    """The nearest unit before the oldest floor that may lead the history, when the format
    filters leading units (``None`` when there is no need or no such unit)."""
    if leads is None or not floors:
        return None
    for position in range(min(floors) - 1, -1, -1):
        unit = units[position]
        if unit.system_parameter or unit.item.pinned:
            continue
        if not leads(unit):
            return position
    return None


def _strongest_segments(
    plans: Sequence[ExcerptPlan],
    floors: dict[int, Variant[M]],
    versions: Mapping[int, Versions[M]],
    chosen: Mapping[int, object],
    *,
    used: int,
    room: int,
) -> int:
    """Keep the strongest segments of ``plans`` (at least :data:`STRONG_SEGMENT` of the best
    segment's value, best first, within :data:`STRONG_SEGMENT_ROOM` of ``room``) before the
    placeholders: one that does not fit sheds the words of the oldest ``floors`` (see
    :func:`_shed_words`), never their calls. Returns the tokens used, these segments
    counted."""
    best = max(map(_best_segment, plans), default=0.0)
    if best <= 0.0:
        return used
    bar = STRONG_SEGMENT * best
    strong = sorted(
        (
            (-value, plan.position, number, text, segment)
            for number, plan in enumerate(plans)
            for text, values in enumerate(plan.values)
            for segment, value in enumerate(values)
            if value >= bar
        )
    )
    limit = int(room * STRONG_SEGMENT_ROOM)
    spent = 0
    for _, position, number, text, segment in strong:
        plan = plans[number]
        if segment in plan.chosen[text]:
            continue
        current = {position: floors[position].item.tokens} if position in floors else {}
        cost = segment_cost(plan, text, segment, current)
        if spent + cost > limit:
            continue
        if used + cost > room:
            keep = {position, *chosen}
            used -= _shed_words(floors, versions, need=used + cost - room, keep=keep)
        if used + cost > room:
            continue
        used += cost
        spent += cost
        plan.spent += cost
        plan.started = True
        take_segment(plan, text, segment)
    return used


def _best_segment(plan: ExcerptPlan) -> float:
    """The value of the best segment of ``plan`` (0 without segments)."""
    return max((max(values, default=0.0) for values in plan.values), default=0.0)


def _diffuse(plans: Sequence[ExcerptPlan]) -> dict[int, float]:
    """The units of ``plans`` none of whose segments is worth :data:`STRONG_SEGMENT` of the
    best segment of them all, each with its best segment's share of that bar (under 1).
    Such a tool result matches the question by words spread over its lines (the service in
    one, the exception in another, a class name in a third): a short result so scores high
    as a whole, yet holds no line that answers the question. It is not kept whole before
    the placeholders, and beside the segments of the long ones it is offered whole at its
    score times that share: valued by what its best line is worth, not by its words."""
    best = {plan.position: _best_segment(plan) for plan in plans}
    top = max(best.values(), default=0.0)
    return {
        position: value / (STRONG_SEGMENT * top)
        for position, value in best.items()
        if value < STRONG_SEGMENT * top
    }


def best_first(positions: Sequence[int], scores: Sequence[float]) -> list[int]:
    """``positions`` (ascending) by score, best first, ties newest first: the order of
    ``sorted(positions, key=lambda p: (-scores[p], -p))``, from a stable sort of the
    newest-first positions on the scores alone (no tuples compared)."""
    ranked = list(reversed(positions))
    ranked.sort(key=scores.__getitem__, reverse=True)
    return ranked


def best_value_first(
    positions: Sequence[int], scores: Sequence[float], tokens: Sequence[int], density: float
) -> list[int]:
    """``positions`` (ascending) by score per token (``tokens ** density``), best first,
    ties newest first: the order of ``sorted(positions, key=lambda p: (-scores[p] /
    max(tokens[p], 1) ** density, -p))``, from a stable sort on the float keys alone."""
    value = {p: -scores[p] / max(tokens[p], 1) ** density for p in positions}
    ranked = list(reversed(positions))
    ranked.sort(key=value.__getitem__)
    return ranked


def _complete(
    units: Sequence[MessageUnit],
    versions: Mapping[int, Versions[M]],
    floors: Mapping[int, Variant[M]],
    choice: StructuredChoice,
    *,
    room: int,
    tail_room: int,
    density: float,
    anchor: int | None,
    excerpts: ExcerptSource[M] | None = None,
) -> VariantSelection[M]:
    # Plain lists by position: the passes below read one element at a time.
    items = [unit.item for unit in units]
    tokens = [item.tokens for item in items]
    pinned = [item.pinned for item in items]
    scores = choice.scores
    left_out = choice.duplicates
    # A duplicate brought in as a neighbour is reported excluded: it is not taken.
    taken = [p for p, kept in enumerate(choice.chosen) if kept and p not in left_out]
    chosen: dict[int, Variant[M] | None] = {p: None for p in taken if pinned[p]}
    floors = {p: floor for p, floor in floors.items() if p not in left_out}
    used = sum(floor.item.tokens for floor in floors.values())

    def keep_whole(position: int) -> bool:
        nonlocal used
        extra = tokens[position]
        if position in floors:
            extra -= floors[position].item.tokens
        if used + extra > room:
            return False
        chosen[position] = None
        used += extra
        return True

    if anchor is not None and anchor not in left_out:
        keep_whole(anchor)
    free = [p for p in taken if not pinned[p]]
    tail_used = 0
    after = len(items)
    for position in reversed(free):
        # The tail is an unbroken run of the newest units (pinned ones may sit inside it).
        if not all(pinned[position + 1 : after]):
            break
        if tail_used + tokens[position] > tail_room or not keep_whole(position):
            break
        tail_used += tokens[position]
        after = position
    # Units that may be cut into excerpts (beyond the recent tail) are not kept whole here:
    # their segments compete for the room by value with the other units (see below).
    cut: set[int] = set()
    if excerpts is not None:
        # A unit small beside the room is offered whole: cutting it would gain little.
        least = int(room * CUT_SHARE)
        cut = {
            p
            for p in range(len(items))
            if not pinned[p]
            and p not in chosen
            and p not in left_out
            and tokens[p] > least
            and excerpts.excerptable(p)
        }
    bar = STRONG_MATCH * max((scores[p] for p in free), default=0.0)
    strongest = [
        p
        for p in best_first(free, scores)
        if p not in chosen
        and bar > 0.0
        and scores[p] >= bar
        and (p not in cut or tokens[p] <= room * WHOLE_SHARE)
    ]
    plans: list[ExcerptPlan] = []
    diffuse: dict[int, float] = {}
    if excerpts is not None:
        # A strong tool result is kept whole here only when one of its lines is among the
        # strongest of all the outputs read (:func:`_diffuse`): the plans of the units that
        # may be cut are read now, with those of the strong results beside them (unless
        # they take little of the room together: see READ_SHARE).
        checked = {p for p in strongest if p in cut or (tokens[p] > least and units[p].call_ids)}
        if sum(tokens[p] for p in checked) > room * READ_SHARE:
            read = excerpts.plans(sorted(cut | checked))
            diffuse = _diffuse(read)
            strongest = [p for p in strongest if p not in diffuse]
            plans = [plan for plan in read if plan.position in cut]
    # The strongest matches come before the placeholders: one that does not fit beside them
    # takes the room of the oldest ones, so shrinking never costs what matters most (a unit
    # that may be cut is kept whole here when it fits; else its segments compete below).
    for position in strongest:
        floor = floors.get(position)
        extra = tokens[position] - (floor.item.tokens if floor is not None else 0)
        if used + extra > room:
            keep = {position, *chosen}
            used -= _shed_words(floors, versions, need=used + extra - room, keep=keep)
        # A strongest match that still does not fit takes the place of the oldest floors,
        # call and all: the turn the question needs counts for more than an old call.
        for older in sorted(floors):
            if used + extra <= room:
                break
            if older != position and older not in chosen:
                used -= floors.pop(older).item.tokens
        keep_whole(position)
    cut -= chosen.keys()
    ranked = best_first([p for p in free if p not in cut], scores)
    if plans:
        plans = [plan for plan in plans if plan.position in cut]
    elif excerpts is not None and cut:
        plans = excerpts.plans(sorted(cut))
    if plans:
        assert excerpts is not None  # plans come from it
        used = _strongest_segments(plans, floors, versions, chosen, used=used, room=room)
        # The units the selection took and the segments of the units that may be cut share
        # the room by value per token; a unit all of whose segments are taken is kept whole.
        # A diffuse result's score is its words spread over lines that do not answer: it
        # is offered whole for what its best line is worth (one that may be cut offers its
        # lines too).
        offers = [
            UnitOffer(
                p,
                scores[p] * diffuse.get(p, 1.0),
                tokens[p] - (floors[p].item.tokens if p in floors else 0),
            )
            for p in [*ranked, *(plan.position for plan in plans)]
            if p not in chosen
        ]
        current = {
            p.position: floors[p.position].item.tokens for p in plans if p.position in floors
        }
        slack, whole = allocate(
            plans,
            room=room - used,
            current=current,
            density=density,
            units=offers,
        )
        for position in whole:
            keep_whole(position)
    else:
        for position in ranked:
            if position not in chosen:
                keep_whole(position)
    for position, floor in floors.items():
        if position not in chosen:
            chosen[position] = floor

    # The room left upgrades the other units, best value per token first, to the largest
    # version that fits (a dropped unit may come back whole, truncated or as a placeholder).
    if not plans:
        slack = room - used
    planned = {plan.position for plan in plans}
    open_positions = best_value_first(
        [
            p
            for p in range(len(items))
            if not pinned[p]
            and p not in left_out
            and p not in planned
            and (p not in chosen or chosen[p] is not None)
        ],
        scores,
        tokens,
        density,
    )
    for position in open_positions:
        current_tokens = tokens_of(items[position], chosen[position]) if position in chosen else 0
        options: list[Variant[M] | None] = [None]
        if position in versions:
            shorter = versions[position]
            options.extend(v for v in (shorter.truncated, shorter.placeholder, shorter.bare) if v)
        for option in options:
            option_tokens = tokens_of(items[position], option)
            if option_tokens <= current_tokens:
                break
            if option_tokens - current_tokens <= slack:
                chosen[position] = option
                slack -= option_tokens - current_tokens
                break
    if plans:
        assert excerpts is not None  # plans come from it

        def shed(need: int, keep: Container[int]) -> int:
            return _shed_words(chosen, versions, need=need, keep=keep)

        left = settle_excerpts(plans, excerpts, items, chosen, room, shed=shed)
        # The estimates err high (a marker per run, anchors): what they left unused goes to
        # the offers not taken yet, counted exactly again.
        for _ in range(2):
            if left <= max(room // 50, excerpts.marker):
                break
            current = {p: tokens_of(items[p], chosen[p]) for p in chosen if p in planned}
            scaled = int(left / shortfall(plans, items, chosen))
            extra, _ = allocate(plans, room=scaled, current=current, density=density)
            if extra == scaled:
                break
            left = settle_excerpts(plans, excerpts, items, chosen, room, shed=shed)

    causes: dict[int, Cause] = dict(choice.causes)
    if anchor is not None:
        causes.setdefault(anchor, Cause.OPENING)
    return VariantSelection(
        units=tuple(units[p] for p in sorted(chosen)),
        variants=MappingProxyType({units[p]: v for p, v in chosen.items() if v is not None}),
        report=selection_report(
            units,
            chosen,
            scores=scores,
            causes=causes,
            beside=choice.beside,
            duplicates=left_out,
            room=room,
        ),
    )


# --------------------------------------------------------------------------- the pipeline path


def pipeline_candidates(
    units: Sequence[MessageUnit], versions: Mapping[int, Versions[M]]
) -> tuple[list[ContextItem], dict[ContextItem, tuple[int, Variant[M] | None]]]:
    """The pipeline's candidates: every unit's item, and for a unit with shorter versions its
    whole item and each version, all sharing a ``cupel:variant-of`` value (so OptimalSlice
    takes at most one of them). Also each candidate -> (unit position, version or None)."""
    items: list[ContextItem] = []
    origin: dict[ContextItem, tuple[int, Variant[M] | None]] = {}
    for position, unit in enumerate(units):
        if position not in versions:
            items.append(unit.item)
            origin[unit.item] = (position, None)
            continue
        metadata = {**unit.item.metadata, VARIANT_KEY: unit_key(unit), VARIANT_NAME_KEY: "full"}
        whole = unit.item.replace(metadata=metadata)
        items.append(whole)
        origin[whole] = (position, None)
        shorter = versions[position]
        for variant in (shorter.truncated, shorter.placeholder, shorter.bare):
            if variant is not None:
                items.append(variant.item)
                origin[variant.item] = (position, variant)
    return items, origin


def resolve_versions(
    units: Sequence[MessageUnit],
    origin: Mapping[ContextItem, tuple[int, Variant[M] | None]],
    selected: Sequence[ContextItem],
    report: SelectionReport,
) -> VariantSelection[M]:
    """The units of a pipeline's selection, at most one version each: a slicer that does not
    read ``cupel:variant-of`` may take several versions of a unit; the largest is kept and the
    others are reported ``Deduplicated`` against it."""
    best: dict[int, ContextItem] = {}
    for item in selected:
        position = origin[item][0]
        if position not in best or item.tokens > best[position].tokens:
            best[position] = item
    extra = {item for item in selected if best[origin[item][0]] is not item}
    included = [entry for entry in report.included if entry.item not in extra]
    excluded = list(report.excluded)
    excluded.extend(
        ExcludedItem(entry.item, entry.score, Deduplicated(best[origin[entry.item][0]].content))
        for entry in report.included
        if entry.item in extra
    )
    variants: dict[MessageUnit, Variant[M]] = {}
    for position, item in best.items():
        version = origin[item][1]
        if version is not None:
            variants[units[position]] = version
    return VariantSelection(
        units=tuple(units[position] for position in sorted(best)),
        variants=MappingProxyType(variants),
        report=SelectionReport.build(
            events=report.events,
            included=included,
            excluded=excluded,
            count_requirement_shortfalls=report.count_requirement_shortfalls,
            token_requirement_shortfalls=report.token_requirement_shortfalls,
            packing=report.packing,
            solver=report.solver,
        ),
    )
