"""Rendered excerpts fitted to the room: the estimates made exact.

:func:`~pycupel.conversation.excerpts.allocation.allocate` chooses segments on estimated
token counts (a segment's share of its text's tokens, a typical marker). Once chosen, the
excerpts are rendered and counted exactly; where the window then exceeds the room (markers
and frames cost more than estimated), the least valuable segments of all the excerpts are
taken out until it fits, and where the estimates erred high, the unused room is measured for
another round of allocation. Kept apart from the unit-level selection
(:mod:`~pycupel.conversation.upgrade`), which calls it once the segments are chosen.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence, Set
from typing import Final, TypeVar

from pycupel.conversation.excerpts.allocation import ExcerptPlan
from pycupel.conversation.excerpts.plan import ExcerptSource
from pycupel.conversation.versions import Variant
from pycupel.model import ContextItem

__all__ = ["SETTLE_ROUNDS", "settle_excerpts", "shortfall", "tokens_of"]

M = TypeVar("M")

SETTLE_ROUNDS: Final = 24
"""The most times the rendered excerpts are trimmed toward the room before giving up."""


def tokens_of(item: ContextItem, variant: Variant[M] | None) -> int:
    """The tokens of ``item`` kept as ``variant`` (``None``: whole)."""
    return item.tokens if variant is None else variant.item.tokens


def settle_excerpts(
    plans: Sequence[ExcerptPlan],
    excerpts: ExcerptSource[M],
    items: Sequence[ContextItem],
    chosen: dict[int, Variant[M] | None],
    room: int,
    *,
    shed: Callable[[int, Set[int]], int] | None = None,
) -> int:
    """Render the chosen excerpts into ``chosen`` (a unit all of whose segments were chosen
    whole), counted exactly; while the window exceeds ``room`` (an excerpt's markers and
    frames can cost more than estimated), ``shed(excess, rendered)`` frees what it can in
    ``chosen`` outside the rendered excerpts (the placeholders' words, which gave way to
    the segments already) and returns the tokens freed; then the least valuable segments
    of all the excerpts are taken out, the excess scaled by how far the estimates fell
    short. Returns the room left."""
    planned = {plan.position: plan for plan in plans}
    fallback = {p: chosen.get(p) for p in planned}
    dropped = {p for p in planned if p not in chosen}
    rendered: dict[int, Variant[M] | None] = {}

    def settle(plan: ExcerptPlan) -> None:
        """The plan's version in ``rendered`` (``None``: whole), or none when it has none."""
        rendered.pop(plan.position, None)
        if plan.complete():
            rendered[plan.position] = None
        elif any(plan.chosen):
            variant = excerpts.variant(plan)
            if variant is not None:
                rendered[plan.position] = variant

    for plan in plans:
        settle(plan)
    # What the window holds beside the pinned units (the room excludes them).
    base = sum(
        tokens_of(items[p], v)
        for p, v in chosen.items()
        if p not in rendered and not items[p].pinned
    )
    base += sum(tokens_of(items[p], fallback[p]) for p in rendered if p not in dropped)
    for _ in range(SETTLE_ROUNDS):
        total = base + sum(
            tokens_of(items[p], v) - (0 if p in dropped else tokens_of(items[p], fallback[p]))
            for p, v in rendered.items()
        )
        if total <= room or not rendered:
            break
        freed = shed(total - room, rendered.keys()) if shed is not None else 0
        if freed:
            base -= freed
            for position in planned.keys() - rendered.keys() - dropped:
                fallback[position] = chosen[position]  # a floor may have shed its words
            continue
        # The least valuable kept segments of all the excerpts go first, about the excess
        # (scaled by how far the estimates fell short): trimming one excerpt at a time
        # could drop the one line a small excerpt was kept for while others keep lines
        # worth less.
        shortfall = sum(tokens_of(items[p], v) for p, v in rendered.items()) / max(
            sum(_estimate(planned[p]) for p in rendered), 1
        )
        trimmed = _trim(
            [planned[p] for p in rendered], math.ceil((total - room) / max(shortfall, 1.0))
        )
        for plan in trimmed:
            settle(plan)
    else:
        rendered = {}  # not settled within the budget: every unit as it was before
    for position, variant in rendered.items():
        chosen[position] = variant
    for position in planned:
        if position not in rendered:
            if position in dropped:
                chosen.pop(position, None)
            else:
                chosen[position] = fallback[position]
    return room - sum(tokens_of(items[p], v) for p, v in chosen.items() if not items[p].pinned)


def _estimate(plan: ExcerptPlan) -> int:
    """A plan's excerpt as estimated: its chosen segments and what its unit holds besides."""
    pairs = zip(plan.tokens, plan.chosen, strict=True)
    return plan.fixed + sum(tokens[s] for tokens, chosen in pairs for s in chosen)


def shortfall(
    plans: Sequence[ExcerptPlan],
    items: Sequence[ContextItem],
    chosen: Mapping[int, Variant[M] | None],
) -> float:
    """How far the rendered excerpts exceed their estimates (at least 1): the refills below
    scale their room by it."""
    estimated = exact = 0
    for plan in plans:
        variant = chosen.get(plan.position)
        if variant is not None and any(plan.chosen):
            estimated += _estimate(plan)
            exact += tokens_of(items[plan.position], variant)
    return max(exact / estimated, 1.0) if estimated else 1.0


def _kept(plan: ExcerptPlan) -> list[tuple[float, int, int]]:
    """The chosen segments of ``plan`` as ``(value, -segment, text)``: a blank between two
    kept segments counts as the lesser of them, an anchor as its most valuable dependant (it
    goes after them)."""
    kept: list[tuple[float, int, int]] = []
    for text, chosen in enumerate(plan.chosen):
        values, anchors = plan.values[text], plan.texts[text].anchors
        worth = {segment: values[segment] for segment in chosen}
        for segment, value in worth.items():
            # A segment worth nothing (a blank line) kept between two kept neighbours joins
            # them: it costs less than the marker its removal would add, so it goes with
            # the lesser of them.
            if value == 0.0 and segment - 1 in chosen and segment + 1 in chosen:
                worth[segment] = min(values[segment - 1], values[segment + 1])
        for segment in sorted(chosen, reverse=True):  # an anchor comes before its dependants
            anchor = anchors[segment]
            if anchor in worth:
                worth[anchor] = max(worth[anchor], worth[segment])
        kept.extend((value, -segment, text) for segment, value in worth.items())
    return kept


def _trim(plans: Sequence[ExcerptPlan], excess: int) -> list[ExcerptPlan]:
    """Take the least valuable chosen segments out of ``plans``, about ``excess`` tokens'
    worth (a little more), a segment with those anchored to it; returns the plans changed
    (none when nothing is left to take)."""
    kept = sorted(
        (value, negative, text, number)
        for number, plan in enumerate(plans)
        for value, negative, text in _kept(plan)
    )
    freed = 0
    changed: dict[int, ExcerptPlan] = {}
    for _, negative, text, number in kept:
        if freed > excess * 1.1:
            break
        plan = plans[number]
        plan.chosen[text].discard(-negative)
        freed += plan.tokens[text][-negative]
        changed[number] = plan
    for plan in changed.values():
        plan.version += 1
    return list(changed.values())
