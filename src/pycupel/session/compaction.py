"""Compaction: the window selected once from the whole history, down to the low watermark.

The selection is the structure-aware one of ``fit_messages``
(:func:`~pycupel.conversation.structure.select_structured`), in the provider's count: system
prompt and latest user turn pinned, an unbroken run of the newest units that starts on a
grid boundary, the rest by relevance to the latest user message; with ``shrink`` a unit may
be kept in a shorter version (:mod:`pycupel.session.shrink`), and with a summarizer what
it leaves out is summarised (:mod:`pycupel.session.summary`).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pycupel.conversation.fit import LeadingFilter, fit_units
from pycupel.conversation.structure import Structure
from pycupel.conversation.units import MessageUnits
from pycupel.diagnostics import SelectionReport
from pycupel.errors import PinnedBudgetError
from pycupel.session.learned import Learning
from pycupel.session.shrink import (
    ScaledCounter,
    scaled_editor,
)

if TYPE_CHECKING:
    pass

__all__ = ["Compaction"]

M = TypeVar("M")

TAIL_SHARE = 0.6
"""Share of the low watermark a compaction keeps as the unbroken run of newest units."""


class Compaction(Learning[M]):
    """Compaction of the window down to the low watermark.

    A part of :class:`~pycupel.session.core.SessionCore`.
    """

    def _compaction(
        self, messages: Sequence[M], low: float, high: float
    ) -> Generator[list[M], str | None, SelectionReport]:
        """Compact (see :meth:`_compact`); with a running summary, yields the messages the
        summary must take in and installs the marked text sent back."""
        upper = self._calibration.upper_ratio
        overhead = self._fixed() * upper
        # A compaction keeps the summary's reserve instead of the summary it replaces.
        reserve = self._summary.reserve if self._summary is not None else 0
        shift = (self.format.overhead.per_request + reserve) * upper - overhead
        selection = self._compact(low - shift, high - shift, messages, reserve * upper)
        if self._summary is not None:
            kept = [*self._stable, *self._tail]
            pending = self._summary.pending(messages, self._shown_as_given(kept, messages))
            # What the provider no longer reads is not summarised again.
            first = self._history.start_unit
            if first:
                opens = self._history.units[first].message_indices[0]
                pending = [index for index in pending if index >= opens]
            if pending:
                marked = yield [messages[index] for index in pending]
                self._summary.install(marked, pending)
        return selection

    def _compact(
        self, low: float, high: float, messages: Sequence[M], reserve: float = 0.0
    ) -> SelectionReport:
        """Cut the window down to ``low`` tokens (``reserve`` kept beside the overhead for
        the summary); sets the zones.

        The selection is the adapters' structure-aware one
        (:func:`~pycupel.conversation.structure.select_structured`), run over the whole history
        in the provider's count: system prompt and latest user turn pinned, an unbroken run
        of the newest units that starts on a grid boundary (within :data:`TAIL_SHARE` of
        ``low``) as its recent tail, and the rest by relevance to the latest user message.
        Nothing else is forced in, so the window never exceeds the budget: a latest turn too
        large to keep whole loses its older units first, as ``fit_messages`` does. With
        ``shrink`` a unit may be kept in a shorter version (:mod:`pycupel.session.shrink`).
        """
        history = self._history
        latest = history.latest_user_unit
        start = history.start_unit
        units = self._guarded_units(latest)
        cut = self._tail_cut(low * TAIL_SHARE)
        keep_recent = sum(
            units[u].item.tokens for u in range(cut, len(units)) if not units[u].item.pinned
        )
        position_of = {id(unit): position for position, unit in enumerate(units)}
        # Only what the provider reads (after a compaction of its own, from its start on).
        read = [unit for u, unit in enumerate(units) if u >= start or unit.system_parameter]
        candidates: MessageUnits[M] = MessageUnits(
            self.format.provider,
            tuple(messages) if self._shown is not None else (),
            tuple(read),
            self.format.overhead,
        )
        structure = Structure(keep_recent=keep_recent)
        per_request = self.format.overhead.per_request
        # The newest unit is what the next answer builds on: when it does not fit under the
        # low watermark beside the pinned units, the compaction goes as high as it needs.
        pinned = sum(unit.item.tokens for unit in read if unit.item.pinned)
        newest = read[-1].item.tokens if read and not read[-1].item.pinned else 0
        target = min(max(low, pinned + newest), high)
        limits = (
            target,
            high,
            self.budget - per_request * self._calibration.upper_ratio - reserve,
        )
        for attempt, limit in enumerate(limits):
            try:
                fitted = fit_units(
                    candidates,
                    budget=max(int(limit), 0) + per_request,
                    policy=self.policy,
                    deduplicate=False,
                    unanswered_tool_calls="error",
                    query=history.latest_user_text(),
                    structure=structure,
                    **self._shrink_options(),
                )
                break
            except PinnedBudgetError as exc:
                if attempt == len(limits) - 1:
                    # Restated for the whole prompt in the provider's count.
                    raise PinnedBudgetError(
                        exc.pinned_tokens - per_request + int(self.budget - limit),
                        self.budget,
                    ) from exc
        kept = self._drop_leading([position_of[id(unit)] for unit in fitted.units])
        if self._shown is not None:
            still = set(kept)
            chosen = {position_of[id(unit)]: v for unit, v in fitted.variants.items()}
            changed = self._shown.replace(
                {u: v for u, v in chosen.items() if u in still},
                history.units,
                self.counter,
                ratio=self._calibration.upper_ratio,
            )
            for u in changed:  # what usage taught about a unit was for its other version
                self._learned.pop(u, None)
        self._stable = [u for u in kept if u < latest]
        self._tail = [u for u in kept if u >= latest]
        self._recall = []
        self._cached_prefixes = []
        return fitted.report

    def _shrink_options(self) -> dict[str, Any]:
        """``fit_units``' options for a compaction that may keep shorter versions: the
        versions counted in the provider's count, as the whole units are (see
        :mod:`pycupel.session.shrink`)."""
        if self._shown is None or self.shrink is None or self.format.editor is None:
            return {}
        upper = self._calibration.upper_ratio
        drops = self.format.drops_leading
        return {
            "shrink": self.shrink,
            "editor": scaled_editor(self.format.editor, upper),
            "counter": ScaledCounter(self.counter, upper),
            "leading_filter": LeadingFilter("leading", drops) if drops is not None else None,
            "recall": self.recall,
        }

    def _drop_leading(self, kept: list[int]) -> list[int]:
        """Leave out leading units the format does not accept first (never pinned ones)."""
        drops = self.format.drops_leading
        if drops is None:
            return kept
        units = self._history.units
        latest = self._history.latest_user_unit
        result: list[int] = []
        leading = True
        for u in kept:
            unit = units[u]
            if leading and not unit.system_parameter:
                if u != latest and not unit.item.pinned and drops(unit):
                    continue
                leading = False
            result.append(u)
        return result

    def _tail_cut(self, tokens: float) -> int:
        """The first unit of the unbroken recent run: as far back as ``tokens`` allow (the
        newest unit always), then forward to the first unit starting on a grid boundary."""
        units = self._history.units
        first = self._history.start_unit
        start = len(units)
        used = 0.0
        while start > first and not units[start - 1].system_parameter:
            cost = self._guard_whole(start - 1)
            if used + cost > tokens and start < len(units):
                break
            used += cost
            start -= 1
        while start < len(units) - 1:
            indices = units[start].message_indices
            if indices and indices[0] % self.grid == 0:
                break
            start += 1
        return start

    def _shown_as_given(self, kept: Sequence[int], messages: Sequence[M]) -> set[int]:
        """Message positions the window of ``kept`` units shows as the caller gave them."""
        units = self._history.units
        if self._shown is not None:
            return self._shown.originals_shown(units, kept, messages)
        return {index for u in kept for index in units[u].message_indices}
