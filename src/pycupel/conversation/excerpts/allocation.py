"""The room of one budget shared out by value, segment by segment, across excerptable units.

The unit-level selection decides what is kept whole and which tool results fall back to a
placeholder. The room it leaves is then shared out **by value, segment by segment, across
every unit that could be kept as an excerpt**: each segment is an offer worth its value
(:mod:`~pycupel.conversation.excerpts.relevance`) per token (``tokens ** density``, as units
are ranked), and offers are taken best first while they fit, units kept whole by the
selection untouched. A unit's first segment also pays for what its excerpt keeps around the
segments (its call, its framing) less the placeholder it replaces; a segment with no kept
neighbour pays for a gap marker. Nothing useful is cut while room is left: offers worth
nothing come last, and a unit all of whose segments are taken is kept whole.

A plan (:class:`ExcerptPlan`) is one unit's segments with their values and token estimates;
:func:`allocate` fills the plans' ``chosen`` sets. Kept apart from building the plans
(:mod:`~pycupel.conversation.excerpts.plan`) because it only reads numbers: no text, no
format.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from pycupel.conversation.excerpts.segments import Segments

__all__ = ["ExcerptPlan", "UnitOffer", "allocate", "segment_cost", "take_segment"]


@dataclass(slots=True, eq=False)
class ExcerptPlan:
    """One unit's excerptable texts (its long tool results, or a long message).

    Attributes:
        position: the unit's position among the candidates.
        texts: each text's segments, in the order the format's rewriter meets them.
        tokens: each segment's tokens, per text.
        values: each segment's value, per text.
        fixed: the unit's tokens outside those texts (its call, the framing).
        markers: what a gap's marker costs, per text (a JSON marker is quoted, framed).
        chosen: the kept segments, per text (filled by :func:`allocate`).
        started: whether :func:`allocate` charged the unit's switch to an excerpt.
        spent: the tokens :func:`allocate` charged the plan so far, as estimated.
        version: changes whenever ``chosen`` does (a rendered excerpt is reused until then).
        ranked: the plan's segments ranked for a density (:func:`allocate` ranks a plan
            once, however many times it shares out room).
    """

    position: int
    texts: list[Segments]
    tokens: list[list[int]]
    values: list[list[float]]
    fixed: int
    markers: list[int] = field(default_factory=list)
    chosen: list[set[int]] = field(default_factory=list)
    started: bool = False
    spent: int = 0
    version: int = 0
    ranked: tuple[float, _Ranking] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.chosen:
            self.chosen = [set() for _ in self.texts]
        if not self.markers:
            self.markers = [0] * len(self.texts)

    @property
    def segments(self) -> int:
        """The number of segments of all its texts."""
        return sum(len(text) for text in self.texts)

    def complete(self) -> bool:
        """Whether every segment is chosen (the unit is then kept whole)."""
        pairs = zip(self.chosen, self.texts, strict=True)
        return all(len(chosen) == len(text) for chosen, text in pairs)


@dataclass(frozen=True, slots=True)
class UnitOffer:
    """A unit the room may keep whole beside the excerpts: its value and what keeping it
    costs beyond what it takes now (its placeholder)."""

    position: int
    value: float
    cost: int


# Offers on the heap: (-worth, position, kind, plan or cost, cursor in the plan's ranking,
# the plan's generation when offered: an offer of an earlier one is stale).
_Offer = tuple[float, int, int, int, int, int]
_UNIT, _ENTRY, _SEGMENT = 0, 1, 2


def allocate(
    plans: Sequence[ExcerptPlan],
    *,
    room: int,
    current: Mapping[int, int],
    density: float,
    units: Sequence[UnitOffer] = (),
) -> tuple[int, list[int]]:
    """Share ``room`` tokens among the segments of ``plans`` and the ``units`` offered whole
    (see the module documentation), best value per token first. ``current`` gives the
    tokens each plan's unit takes now (its placeholder, 0 when dropped). A plan not yet
    started is offered by its best segment, valued with what starting its excerpt costs;
    its other segments are offered once it has started, each plan's in its own order (one
    offer of each plan on the heap at a time). Returns the room left, as estimated, and the
    positions of the units taken whole."""
    heap: list[_Offer] = []
    for offer in units:
        worth = offer.value / float(max(offer.cost, 1)) ** density
        heap.append((-worth, offer.position, _UNIT, offer.cost, 0, 0))
    # A plan's unit may be taken whole too (in one step, when room is plenty).
    planned = {plan.position: number for number, plan in enumerate(plans)}
    rankings: list[_Ranking | None] = [None] * len(plans)
    # A segment costs at least its tokens, and the room only shrinks until it grows (below):
    # a segment of more tokens than the room would only be turned down when popped, so a
    # plan offers its next segment that may fit, and a plan none of whose segments left can
    # fit offers nothing. The room grows only when a unit is taken whole for less than its
    # excerpt was charged; every plan that may still offer then comes back where it would
    # stand (from its first segment not popped yet, past the offers popped meanwhile), its
    # earlier offer made stale.
    frontier = [0] * len(plans)  # each started plan's first cursor not popped yet
    generation = [0] * len(plans)
    offering: set[int] = set()  # started plans not yet through their ranking

    def propose(number: int, ranking: _Ranking, cursor: int | None) -> None:
        offering.discard(number)
        if cursor is None:
            return
        offering.add(number)
        if ranking.least[cursor] > room:
            return
        at = ranking.next_fitting(cursor, plans[number], room)
        if at is not None:
            key = (-ranking.worth[at], plans[number].position, _SEGMENT, number, at)
            heapq.heappush(heap, (*key, generation[number]))

    def resume(after: _Offer) -> None:
        for number in sorted(offering):
            generation[number] += 1
            ranking = rankings[number]
            assert ranking is not None  # a plan offers once started
            plan = plans[number]
            at = ranking.next_open(frontier[number], plan)
            while at is not None and (
                (-ranking.worth[at], plan.position, _SEGMENT, number, at) < after[:5]
            ):
                at = ranking.next_open(at + 1, plan)
            propose(number, ranking, at)

    entries: list[_Offer] = []
    for number, plan in enumerate(plans):
        if plan.started:
            rankings[number] = ranking = _ranking(plan, density)
            propose(number, ranking, ranking.next_open(0, plan))
        else:
            entry = _entry_worth(plan, current, density)
            if entry is not None:
                entries.append((-entry, plan.position, _ENTRY, number, 0, 0))
    heap.extend(entries)
    heapq.heapify(heap)
    taken: list[int] = []
    while heap and room > 0:
        popped = heapq.heappop(heap)
        _, position, kind, first, cursor, offered = popped
        if kind == _UNIT:
            plan_number = planned.get(position)
            if plan_number is None:
                if first <= room:
                    room -= first
                    taken.append(position)
                continue
            whole = plans[plan_number]
            if not whole.complete() and first - whole.spent <= room:
                room -= first - whole.spent
                grew = first < whole.spent
                whole.spent = first
                whole.started = True
                for text, segments in enumerate(whole.texts):
                    whole.chosen[text].update(range(len(segments)))
                whole.version += 1
                if grew and offering:
                    resume(popped)
            continue
        plan = plans[first]
        if kind == _ENTRY:
            text, segment = _best(plan)
            cost = segment_cost(plan, text, segment, current)
            if cost > room:
                continue
            room -= cost
            plan.spent += cost
            take_segment(plan, text, segment)
            plan.started = True
            rankings[first] = ranking = _ranking(plan, density)
            cursor = -1
        else:
            if offered != generation[first]:
                continue  # stale: the plan offers again since the room grew
            started = rankings[first]
            assert started is not None  # set when the plan started
            ranking = started
            frontier[first] = cursor + 1
            text, segment = ranking.texts[cursor], ranking.segments[cursor]
            if segment not in plan.chosen[text]:
                cost = segment_cost(plan, text, segment, current)
                if cost <= room:
                    room -= cost
                    plan.spent += cost
                    take_segment(plan, text, segment)
        propose(first, ranking, ranking.next_open(cursor + 1, plan))
    return room, taken


def _ranking(plan: ExcerptPlan, density: float) -> _Ranking:
    """The plan's ranking for ``density``, made once (its values and tokens never change)."""
    if plan.ranked is None or plan.ranked[0] != density:
        plan.ranked = (density, _Ranking(plan, density))
    return plan.ranked[1]


class _Ranking:
    """A plan's segments, best value per token first (ties in text order), and the fewest
    tokens of a segment from each position of the ranking on."""

    __slots__ = ("least", "segments", "texts", "tokens", "worth")

    def __init__(self, plan: ExcerptPlan, density: float) -> None:
        values = np.concatenate([np.asarray(v, dtype=np.float64) for v in plan.values])
        tokens = np.concatenate([np.asarray(t, dtype=np.float64) for t in plan.tokens])
        worth = values / np.maximum(tokens, 1.0) ** density
        order = np.argsort(-worth, kind="stable")
        texts = np.concatenate(
            [np.full(len(v), number, dtype=np.intp) for number, v in enumerate(plan.values)]
        )
        segments = np.concatenate([np.arange(len(v), dtype=np.intp) for v in plan.values])
        self.worth: list[float] = worth[order].tolist()
        self.texts: list[int] = texts[order].tolist()
        self.segments: list[int] = segments[order].tolist()
        self.tokens: list[int] = tokens[order].astype(np.intp).tolist()
        self.least: list[int] = (
            np.minimum.accumulate(tokens[order][::-1])[::-1].astype(np.intp).tolist()
        )

    def next_open(self, cursor: int, plan: ExcerptPlan) -> int | None:
        """The first position from ``cursor`` on whose segment is not chosen yet."""
        chosen, texts, segments = plan.chosen, self.texts, self.segments
        while cursor < len(segments):
            if segments[cursor] not in chosen[texts[cursor]]:
                return cursor
            cursor += 1
        return None

    def next_fitting(self, cursor: int, plan: ExcerptPlan, room: int) -> int | None:
        """The first position from ``cursor`` on whose segment is not chosen yet and has at
        most ``room`` tokens."""
        chosen, texts, segments, tokens = plan.chosen, self.texts, self.segments, self.tokens
        while cursor < len(segments):
            if tokens[cursor] <= room and segments[cursor] not in chosen[texts[cursor]]:
                return cursor
            cursor += 1
        return None


def _best(plan: ExcerptPlan) -> tuple[int, int]:
    """The (text, segment) of a plan's most valuable segment (the first of equals)."""
    best: tuple[float, int, int] = (-1.0, 0, 0)
    for text, values in enumerate(plan.values):
        # Each text's best found in C: the first of its equals, kept only when better.
        value = max(values, default=-1.0)
        if value > best[0]:
            best = (value, text, values.index(value))
    return best[1], best[2]


def _entry_worth(plan: ExcerptPlan, current: Mapping[int, int], density: float) -> float | None:
    """A plan's best segment's value per token, its cost counting the start of the excerpt
    (``None`` when the plan has no segment)."""
    if not plan.segments:
        return None
    text, segment = _best(plan)
    cost = segment_cost(plan, text, segment, current)
    worth: float = plan.values[text][segment] / float(max(cost, 1)) ** density
    return worth


def segment_cost(plan: ExcerptPlan, text: int, segment: int, current: Mapping[int, int]) -> int:
    """What keeping ``segment`` adds to the window: its tokens, its anchors not kept yet, a
    marker when no neighbour is kept, and, for a plan not started, its excerpt's frame less
    what the unit takes now (never less than nothing: a settled excerpt may fall back)."""
    chosen = plan.chosen[text]
    tokens = plan.tokens[text]
    anchors = plan.texts[text].anchors
    marker = plan.markers[text]
    cost = tokens[segment]
    anchor = anchors[segment]
    while anchor >= 0 and anchor not in chosen:
        cost += tokens[anchor]
        anchor = anchors[anchor]
    if segment - 1 not in chosen and segment + 1 not in chosen:
        cost += marker
    cut = plan.texts[text]
    if cut.groups and cut.group_frames[cut.groups[segment]] is not None:
        # A JSON element cut for the first time (its members anchor to its first): a gap
        # on either side of what it keeps, and its frame.
        first = anchors[segment] if anchors[segment] >= 0 else segment
        if first not in chosen:
            cost += marker
    if not plan.started:
        cost += max(plan.fixed - current.get(plan.position, 0), 0)
    return cost


def take_segment(plan: ExcerptPlan, text: int, segment: int) -> None:
    """Choose ``segment`` and its anchors."""
    plan.version += 1
    chosen = plan.chosen[text]
    anchors = plan.texts[text].anchors
    chosen.add(segment)
    anchor = anchors[segment]
    while anchor >= 0:
        chosen.add(anchor)
        anchor = anchors[anchor]
