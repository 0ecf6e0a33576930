"""Excerpts sized to the room: which segments of which shortened units the budget keeps.

The unit-level selection decides what is kept whole and which tool results fall back to a
placeholder. The room it leaves is then shared out **by value, segment by segment, across
every unit that could be kept as an excerpt**: each segment is an offer worth its value
(:mod:`~pycupel.conversation.excerpts.relevance`) per token (``tokens ** density``, as units
are ranked), and offers are taken best first while they fit, units kept whole by the
selection untouched. A unit's first segment also pays for what its excerpt keeps around the
segments (its call, its framing) less the placeholder it replaces; a segment with no kept
neighbour pays for a gap marker. Nothing useful is cut while room is left: offers worth
nothing come last, and a unit all of whose segments are taken is kept whole.

:class:`ExcerptSource` builds the plans lazily (only for the units the selection did not keep
whole), scoring all their segments in one pass, and renders the chosen excerpts as versions
of their units (:class:`~pycupel.conversation.versions.Variant`, named ``"excerpt"``).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from pycupel.conversation.excerpts import segments as cutting
from pycupel.conversation.excerpts.excerpt import Excerpt, render, typical_marker
from pycupel.conversation.excerpts.relevance import segment_values
from pycupel.conversation.excerpts.segments import Segments
from pycupel.conversation.recall import Recall
from pycupel.conversation.units import MessageUnit
from pycupel.conversation.versions import Editor, Variant, make_variant
from pycupel.shrink import Shrink
from pycupel.tokens import TokenCounter
from pycupel.tokens.base import checked_counts

__all__ = ["ExcerptPlan", "ExcerptSource", "UnitOffer", "allocate", "kept_segments"]

M = TypeVar("M")

EXCERPT_KEY = "excerpt"
"""Item metadata describing an excerpt version: its kept runs and its gaps (with refs)."""


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


# Offers on the heap: (-worth, position, kind, plan or cost, cursor in the plan's ranking).
_Offer = tuple[float, int, int, int, int]
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
        heap.append((-worth, offer.position, _UNIT, offer.cost, 0))
    # A plan's unit may be taken whole too (in one step, when room is plenty).
    planned = {plan.position: number for number, plan in enumerate(plans)}
    rankings: list[_Ranking | None] = [None] * len(plans)
    for number, plan in enumerate(plans):
        if plan.started:
            rankings[number] = ranking = _Ranking(plan, density)
            first = ranking.next_open(0, plan)
            if first is not None:
                heap.append((-ranking.worth[first], plan.position, _SEGMENT, number, first))
        else:
            entry = _entry_worth(plan, current, density)
            if entry is not None:
                heap.append((-entry, plan.position, _ENTRY, number, 0))
    heapq.heapify(heap)
    taken: list[int] = []
    while heap and room > 0:
        _, position, kind, first, cursor = heapq.heappop(heap)
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
                whole.spent = first
                whole.started = True
                for text, segments in enumerate(whole.texts):
                    whole.chosen[text].update(range(len(segments)))
                whole.version += 1
            continue
        plan = plans[first]
        if kind == _ENTRY:
            text, segment = _best(plan)
            cost = _cost(plan, text, segment, current)
            if cost > room:
                continue
            room -= cost
            plan.spent += cost
            _take(plan, text, segment)
            plan.started = True
            rankings[first] = ranking = _Ranking(plan, density)
            cursor = -1
        else:
            started = rankings[first]
            assert started is not None  # set when the plan started
            ranking = started
            text, segment = ranking.texts[cursor], ranking.segments[cursor]
            if segment not in plan.chosen[text]:
                cost = _cost(plan, text, segment, current)
                if cost <= room:
                    room -= cost
                    plan.spent += cost
                    _take(plan, text, segment)
        following = ranking.next_open(cursor + 1, plan)
        if following is not None:
            heapq.heappush(
                heap, (-ranking.worth[following], plan.position, _SEGMENT, first, following)
            )
    return room, taken


class _Ranking:
    """A plan's segments, best value per token first (ties in text order)."""

    __slots__ = ("segments", "texts", "worth")

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

    def next_open(self, cursor: int, plan: ExcerptPlan) -> int | None:
        """The first position from ``cursor`` on whose segment is not chosen yet."""
        chosen, texts, segments = plan.chosen, self.texts, self.segments
        while cursor < len(segments):
            if segments[cursor] not in chosen[texts[cursor]]:
                return cursor
            cursor += 1
        return None


def _best(plan: ExcerptPlan) -> tuple[int, int]:
    """The (text, segment) of a plan's most valuable segment (the first of equals)."""
    best: tuple[float, int, int] = (-1.0, 0, 0)
    for text, values in enumerate(plan.values):
        for segment, value in enumerate(values):
            if value > best[0]:
                best = (value, text, segment)
    return best[1], best[2]


def _entry_worth(plan: ExcerptPlan, current: Mapping[int, int], density: float) -> float | None:
    """A plan's best segment's value per token, its cost counting the start of the excerpt
    (``None`` when the plan has no segment)."""
    if not plan.segments:
        return None
    text, segment = _best(plan)
    cost = _cost(plan, text, segment, current)
    worth: float = plan.values[text][segment] / float(max(cost, 1)) ** density
    return worth


def _cost(plan: ExcerptPlan, text: int, segment: int, current: Mapping[int, int]) -> int:
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


def _take(plan: ExcerptPlan, text: int, segment: int) -> None:
    """Choose ``segment`` and its anchors."""
    plan.version += 1
    chosen = plan.chosen[text]
    anchors = plan.texts[text].anchors
    chosen.add(segment)
    anchor = anchors[segment]
    while anchor >= 0:
        chosen.add(anchor)
        anchor = anchors[anchor]


class ExcerptSource(Generic[M]):
    """Builds the excerpt plans of a fit's units, and their versions once chosen.

    Not shared between fits: it remembers the counts of the texts it met.
    """

    def __init__(
        self,
        units: Sequence[MessageUnit],
        messages: Sequence[M],
        *,
        editor: Editor[M],
        counter: TokenCounter,
        shrink: Shrink,
        query: str,
        recall: Recall | None,
    ) -> None:
        self._units = units
        self._messages = messages
        self._editor = editor
        self._counter = counter
        self._shrink = shrink
        self._query = query
        self._recall = recall
        self._rendered: dict[int, tuple[int, Variant[M] | None]] = {}
        # The newest tool results that are never shortened (``keep_whole``).
        tools = [
            position
            for position, unit in enumerate(units)
            if unit.call_ids and not unit.item.pinned and not unit.unanswered_call_ids
        ]
        keep = shrink.keep_whole
        self._whole = frozenset(tools[len(tools) - keep :] if keep else ())
        self._markers: dict[str, int] = {}
        self.marker = self._marker(cutting.segment("a\nb\n"))
        """What a gap's marker costs in a text of lines."""

    def excerptable(self, position: int) -> bool:
        """Whether the unit could be kept as an excerpt (a long enough text to cut)."""
        unit = self._units[position]
        item = unit.item
        if item.pinned or unit.system_parameter or unit.unanswered_call_ids:
            return False
        if position in self._whole:
            return False
        least = self._shrink.excerpt_above
        if unit.call_ids:
            return item.tokens > least
        limit = self._shrink.long_message
        return limit > 0 and item.tokens > max(limit, least)

    def plans(self, positions: Sequence[int]) -> list[ExcerptPlan]:
        """The plans of the units at ``positions`` that have texts to cut, scored together."""
        found: list[tuple[int, list[tuple[str, int]]]] = []
        for position in positions:
            texts = self._texts(position)
            if texts:
                found.append((position, texts))
        if not found:
            return []
        cut = [[cutting.segment(text) for text, _ in texts] for _, texts in found]
        every = [segments for per_unit in cut for segments in per_unit]
        labels = [
            label
            for position, texts in found
            for label in [self._label(position, [text for text, _ in texts])] * len(texts)
        ]
        values = iter(segment_values(every, self._query, labels))
        plans: list[ExcerptPlan] = []
        for (position, texts), per_unit in zip(found, cut, strict=True):
            # A segment's tokens, estimated from its share of its text's characters (the
            # chosen excerpt is counted exactly when it is rendered).
            tokens = [
                _shares(segments, count)
                for segments, (_, count) in zip(per_unit, texts, strict=True)
            ]
            unit_values = [next(values) for _ in per_unit]
            # What the unit holds beside its texts (its call, the framing); the texts' own
            # separators and frames are counted in their segments' share.
            outside = self._units[position].item.tokens - sum(count for _, count in texts)
            fixed = max(outside, 0)
            markers = [self._marker(segments) for segments in per_unit]
            plans.append(ExcerptPlan(position, per_unit, tokens, unit_values, fixed, markers))
        return plans

    def variant(self, plan: ExcerptPlan) -> Variant[M] | None:
        """The unit of ``plan`` kept as the excerpt of its chosen segments (rendered again
        only when they changed)."""
        cached = self._rendered.get(plan.position)
        if cached is not None and cached[0] == plan.version:
            return cached[1]
        variant = self._variant(plan)
        self._rendered[plan.position] = (plan.version, variant)
        return variant

    def _variant(self, plan: ExcerptPlan) -> Variant[M] | None:
        unit = self._units[plan.position]
        excerpts: list[Excerpt] = []
        remember = self._recall.remember if self._recall is not None else None
        texts = zip(plan.texts, plan.chosen, plan.tokens, plan.markers, strict=True)
        for segments, chosen, tokens, marker in texts:
            excerpts.append(render(segments, chosen, tokens, remember, marker=marker))
        pairs = zip(plan.texts, excerpts, strict=True)
        pending = [(segments.text, excerpt.text) for segments, excerpt in pairs]
        pending.reverse()

        def replace(tool: str | None, text: str) -> str | None:
            # The rewriter meets the texts in the order _texts met them.
            if pending and pending[-1][0] == text and self._cuts(unit, tool):
                return pending.pop()[1]
            return None

        described = [
            {**excerpt.describe(), "segments": _ranges(chosen)}
            for excerpt, chosen in zip(excerpts, plan.chosen, strict=True)
        ]
        return make_variant(
            unit,
            original=[self._messages[index] for index in unit.message_indices],
            name="excerpt",
            replace=replace,
            editor=self._editor,
            counter=self._counter,
            metadata={EXCERPT_KEY: described[0] if len(described) == 1 else described},
        )

    def rebuild(self, position: int, kept: Sequence[Sequence[Sequence[int]]]) -> Variant[M] | None:
        """The excerpt of the unit at ``position`` keeping the segments ``kept`` (per text,
        ``[start, stop)`` ranges of segment numbers, as its version's metadata records them
        under ``"segments"``): the same excerpt again, for a session restored from its
        saved state. ``None`` when the unit's texts no longer cut into those segments."""
        texts = self._texts(position)
        if len(texts) != len(kept):
            return None
        cut = [cutting.segment(text) for text, _ in texts]
        chosen: list[set[int]] = []
        for segments, ranges in zip(cut, kept, strict=True):
            numbers = {n for start, stop in ranges for n in range(start, stop)}
            if not numbers or max(numbers) >= len(segments) or min(numbers) < 0:
                return None
            chosen.append(numbers)
        plan = ExcerptPlan(
            position,
            cut,
            [_shares(segments, count) for segments, (_, count) in zip(cut, texts, strict=True)],
            [[0.0] * len(segments) for segments in cut],
            0,
            [self._marker(segments) for segments in cut],
            chosen,
            started=True,
        )
        return self._variant(plan)

    def _texts(self, position: int) -> list[tuple[str, int]]:
        """The texts of a unit its excerpt cuts, with their tokens: its tool results (but
        those of tools never shortened; a short one too, beside a long one), or the message
        itself for a long plain message."""
        unit = self._units[position]
        original = [self._messages[index] for index in unit.message_indices]
        texts: list[str] = []

        def record(tool: str | None, text: str) -> str | None:
            if self._cuts(unit, tool):
                texts.append(text)
            return None

        self._editor.rewrite(original, record)
        counts = self._count(texts)
        return [(text, count) for text, count in zip(texts, counts, strict=True) if text.strip()]

    def _label(self, position: int, texts: Sequence[str]) -> str:
        """What the unit holds beside its texts (its call: the tool's name, its arguments,
        the words before it): what a question names an output by ("the CI log", "the
        services listing", a file's path)."""
        content = self._units[position].item.content
        for text in texts:
            found = content.find(text)
            if found >= 0:
                content = content[:found] + content[found + len(text) :]
        return content

    def _cuts(self, unit: MessageUnit, tool: str | None) -> bool:
        """Whether a text the rewriter meets (a tool's result, ``tool`` its name; or a plain
        message, ``tool`` None) may be cut: a tool unit's results but those of tools never
        shortened; a plain message's text."""
        if unit.call_ids:
            return tool is not None and tool not in self._shrink.exclude_tools
        return tool is None

    def _marker(self, segments: Segments) -> int:
        """What a gap's marker costs in ``segments`` (counted once per kind of marker)."""
        sample = typical_marker(segments, ref=self._recall is not None)
        cost = self._markers.get(sample)
        if cost is None:
            cost = self._markers[sample] = self._count([sample])[0]
        return cost

    def _count(self, texts: Sequence[str]) -> list[int]:
        return checked_counts(self._counter, self._counter.count_batch(list(texts)), len(texts))


def _shares(segments: Segments, tokens: int) -> list[int]:
    """Each segment's share of its text's ``tokens``, by its characters (at least 1; the
    text between JSON elements, their indentation, is shared among them)."""
    per_char = tokens / max(sum(end - start for start, end in segments.spans), 1)
    return [max(1, round((end - start) * per_char)) for start, end in segments.spans]


def kept_segments(variant: Variant[Any]) -> list[list[list[int]]] | None:
    """The segments an excerpt keeps, per text (what :meth:`ExcerptSource.rebuild` takes),
    read from its metadata; None for another version."""
    described = variant.item.metadata.get(EXCERPT_KEY) if variant.name == "excerpt" else None
    if described is None:
        return None
    texts = described if isinstance(described, list) else [described]
    return [[list(r) for r in text["segments"]] for text in texts]


def _ranges(numbers: set[int]) -> list[list[int]]:
    """Sorted ``numbers`` as ``[start, stop)`` ranges of consecutive ones."""
    ranges: list[list[int]] = []
    for number in sorted(numbers):
        if ranges and ranges[-1][1] == number:
            ranges[-1][1] = number + 1
        else:
            ranges.append([number, number + 1])
    return ranges
