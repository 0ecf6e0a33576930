"""The allocation of the room to segments against its plain formulation.

:func:`~pycupel.conversation.excerpts.allocation.allocate` skips the offers that cannot fit
and brings the plans back when the room grows; the plain formulation below offers every
segment of every started plan in turn and turns down those that do not fit. They must choose
the same segments, charge the same tokens and take the same units whole.
"""

from __future__ import annotations

import copy
import heapq
from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.conversation.excerpts.allocation import (
    ExcerptPlan,
    UnitOffer,
    _entry_worth,
    _Ranking,
    allocate,
    segment_cost,
    take_segment,
)
from pycupel.conversation.excerpts.allocation import _best as best_segment
from pycupel.conversation.excerpts.segments import segment


def allocate_plain(
    plans: Sequence[ExcerptPlan],
    *,
    room: int,
    current: Mapping[int, int],
    density: float,
    units: Sequence[UnitOffer] = (),
) -> tuple[int, list[int]]:
    """Every offer popped best first and taken when it fits: one offer of each plan on the
    heap at a time, nothing skipped."""
    heap: list[tuple[float, int, int, int, int]] = [
        (-offer.value / float(max(offer.cost, 1)) ** density, offer.position, 0, offer.cost, 0)
        for offer in units
    ]
    planned = {plan.position: number for number, plan in enumerate(plans)}
    rankings: list[_Ranking | None] = [None] * len(plans)

    def offer(number: int, ranking: _Ranking, cursor: int | None) -> None:
        if cursor is not None:
            key = (-ranking.worth[cursor], plans[number].position, 2, number, cursor)
            heapq.heappush(heap, key)

    for number, plan in enumerate(plans):
        if plan.started:
            rankings[number] = ranking = _Ranking(plan, density)
            offer(number, ranking, ranking.next_open(0, plan))
        else:
            entry = _entry_worth(plan, current, density)
            if entry is not None:
                heap.append((-entry, plan.position, 1, number, 0))
    heapq.heapify(heap)
    taken: list[int] = []
    while heap and room > 0:
        _, position, kind, first, cursor = heapq.heappop(heap)
        if kind == 0:
            if position not in planned:
                if first <= room:
                    room -= first
                    taken.append(position)
                continue
            whole = plans[planned[position]]
            if not whole.complete() and first - whole.spent <= room:
                room -= first - whole.spent
                whole.spent = first
                whole.started = True
                for text, segments in enumerate(whole.texts):
                    whole.chosen[text].update(range(len(segments)))
                whole.version += 1
            continue
        plan = plans[first]
        if kind == 1:
            text, chosen_segment = best_segment(plan)
            cost = segment_cost(plan, text, chosen_segment, current)
            if cost > room:
                continue
            room -= cost
            plan.spent += cost
            take_segment(plan, text, chosen_segment)
            plan.started = True
            rankings[first] = ranking = _Ranking(plan, density)
            cursor = -1
        else:
            started = rankings[first]
            assert started is not None
            ranking = started
            text, chosen_segment = ranking.texts[cursor], ranking.segments[cursor]
            if chosen_segment not in plan.chosen[text]:
                cost = segment_cost(plan, text, chosen_segment, current)
                if cost <= room:
                    room -= cost
                    plan.spent += cost
                    take_segment(plan, text, chosen_segment)
        offer(first, ranking, ranking.next_open(cursor + 1, plan))
    return room, taken


_LINES = st.lists(
    st.sampled_from(["INFO ok", "WARN slow", "  detail", "ERROR failed", ""]),
    min_size=1,
    max_size=12,
)


@st.composite
def plans_and_offers(draw: st.DrawFn) -> tuple[list[ExcerptPlan], list[UnitOffer], dict[int, int]]:
    plans: list[ExcerptPlan] = []
    offers: list[UnitOffer] = []
    current: dict[int, int] = {}
    for position in range(draw(st.integers(min_value=1, max_value=4))):
        texts = [
            segment("\n".join(["START", *draw(_LINES)])) for _ in range(draw(st.integers(1, 2)))
        ]
        plan = ExcerptPlan(
            position,
            texts,
            [[draw(st.integers(1, 60)) for _ in range(len(text))] for text in texts],
            [[draw(st.floats(0.0, 2.0)) for _ in range(len(text))] for text in texts],
            fixed=draw(st.integers(0, 80)),
            markers=[draw(st.integers(0, 8)) for _ in texts],
        )
        if draw(st.booleans()):  # started before, with a segment or two (and a charge)
            plan.started = True
            plan.spent = draw(st.integers(0, 200))
            for _ in range(draw(st.integers(0, 2))):
                text = draw(st.integers(0, len(texts) - 1))
                take_segment(plan, text, draw(st.integers(0, len(texts[text]) - 1)))
        plans.append(plan)
        current[position] = draw(st.integers(0, 40))
        if draw(st.booleans()):  # the unit offered whole, maybe for less than it was charged
            offers.append(UnitOffer(position, draw(st.floats(0.0, 3.0)), draw(st.integers(1, 300))))
    offers.extend(
        UnitOffer(10 + n, 0.5, draw(st.integers(1, 100))) for n in range(draw(st.integers(0, 2)))
    )
    return plans, offers, current


@settings(max_examples=300, deadline=None)
@given(plans_and_offers(), st.integers(min_value=0, max_value=600))
def test_allocate_chooses_as_the_plain_formulation(
    case: tuple[list[ExcerptPlan], list[UnitOffer], dict[int, int]], room: int
) -> None:
    plans, offers, current = case
    plain = copy.deepcopy(plans)
    expected = allocate_plain(plain, room=room, current=current, density=0.25, units=offers)
    assert allocate(plans, room=room, current=current, density=0.25, units=offers) == expected
    for fast, reference in zip(plans, plain, strict=True):
        assert fast.chosen == reference.chosen
        assert (fast.spent, fast.started) == (reference.spent, reference.started)
