"""Excerpt plans of a fit's units, and their excerpts rendered as versions of the units.

:class:`ExcerptSource` builds the plans lazily (only for the units the selection did not keep
whole), cutting their texts (:mod:`~pycupel.conversation.excerpts.segments`) and scoring all
their segments in one pass (:mod:`~pycupel.conversation.excerpts.relevance`); the room is
shared among them by :mod:`~pycupel.conversation.excerpts.allocation`. It then renders the
chosen excerpts as versions of their units (:class:`~pycupel.conversation.versions.Variant`,
named ``"excerpt"``), and rebuilds a saved excerpt for a restored session.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

import numpy as np

from pycupel.conversation.excerpts import segments as cutting
from pycupel.conversation.excerpts.allocation import ExcerptPlan, UnitOffer, allocate
from pycupel.conversation.excerpts.excerpt import (
    Excerpt,
    chosen_mask,
    equal_runs,
    render,
    typical_marker,
)
from pycupel.conversation.excerpts.relevance import segment_values
from pycupel.conversation.excerpts.segments import Segments
from pycupel.conversation.recall import Recall
from pycupel.conversation.units import MessageUnit
from pycupel.conversation.versions import Editor, Variant, make_variant
from pycupel.shrink import Shrink
from pycupel.tokens import TokenCounter
from pycupel.tokens.base import checked_counts

# ExcerptPlan, UnitOffer and allocate are re-exported: callers of the plans use them.
__all__ = ["ExcerptPlan", "ExcerptSource", "UnitOffer", "allocate", "kept_segments"]

M = TypeVar("M")

EXCERPT_KEY = "excerpt"
"""Item metadata describing an excerpt version: its kept runs and its gaps (with refs)."""


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
            {**excerpt.describe(), "segments": _ranges(len(segments), chosen)}
            for excerpt, segments, chosen in zip(excerpts, plan.texts, plan.chosen, strict=True)
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
    bounds = segments.bounds()
    lengths = bounds[:, 1] - bounds[:, 0]
    per_char = tokens / max(int(lengths.sum()), 1)
    # np.rint rounds halves to even, as round() does.
    shares: list[int] = np.maximum(np.rint(lengths * per_char), 1).astype(np.intp).tolist()
    return shares


def kept_segments(variant: Variant[Any]) -> list[list[list[int]]] | None:
    """The segments an excerpt keeps, per text (what :meth:`ExcerptSource.rebuild` takes),
    read from its metadata; None for another version."""
    described = variant.item.metadata.get(EXCERPT_KEY) if variant.name == "excerpt" else None
    if described is None:
        return None
    texts = described if isinstance(described, list) else [described]
    return [[list(r) for r in text["segments"]] for text in texts]


def _ranges(count: int, numbers: set[int]) -> list[list[int]]:
    """``numbers`` (of ``count`` segments) as ``[start, stop)`` ranges of consecutive ones,
    in order."""
    kept = chosen_mask(count, numbers)
    return [[start, stop] for start, stop in equal_runs(kept) if kept[start]]
