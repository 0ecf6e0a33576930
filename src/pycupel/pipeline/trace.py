"""A run's diagnostic state: the exclusions and events it sends to an enabled collector.

With no collector, or a disabled one, no :class:`Trace` exists and no event, reason or report
object is built. Each stage emits one stage event after it completes (Sort emits none); its
``item_count`` is the number of items the stage *received*. Item events, one per exclusion,
precede their stage's event.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat

from pycupel.diagnostics.collector import TraceCollector, TraceDetailLevel
from pycupel.diagnostics.events import PipelineStage, TraceEvent
from pycupel.diagnostics.reasons import ExclusionReason
from pycupel.diagnostics.report import ExcludedItem
from pycupel.model import ContextItem

__all__ = ["Trace"]

_tuple_new = tuple.__new__


class Trace:
    """Per-run diagnostic state; exists only when the collector is enabled."""

    __slots__ = (
        "collector",
        "decisions",
        "excluded",
        "item_events",
        "pending",
        "recorder",
    )

    def __init__(self, collector: TraceCollector) -> None:
        self.collector = collector
        # Item events are skipped only when the collector says it would discard them.
        level = getattr(collector, "detail_level", TraceDetailLevel.ITEM)
        self.item_events = not (isinstance(level, int) and level < TraceDetailLevel.ITEM)
        recorder = getattr(collector, "record_selection", None)
        self.recorder: Callable[..., object] | None = recorder if callable(recorder) else None
        # Whether any per-item decision is wanted at all (events or report entries).
        self.decisions = self.item_events or self.recorder is not None
        self.excluded: list[ExcludedItem] = []
        self.pending: list[ExclusionReason] = []

    def exclude(self, item: ContextItem, score: float, reason: ExclusionReason) -> None:
        if self.recorder is not None:
            self.excluded.append(ExcludedItem(item, score, reason))
        if self.item_events:
            self.pending.append(reason)

    def exclude_all(
        self, items: list[ContextItem], scores: list[float], reasons: list[ExclusionReason]
    ) -> None:
        """Record many exclusions at once (same effect as :meth:`exclude` for each)."""
        if self.recorder is not None:
            self.excluded.extend(
                map(_tuple_new, repeat(ExcludedItem), zip(items, scores, reasons, strict=True))
            )
        if self.item_events:
            self.pending.extend(reasons)

    def flush_items(self, stage: PipelineStage) -> None:
        """Emit the item events of ``stage`` (before its stage event)."""
        if not self.pending:
            return
        # A shared reason gives equal (immutable) events: build one per reason object.
        pending = self.pending
        distinct = dict(zip(map(id, pending), pending, strict=True))
        event_of = {key: TraceEvent(stage, 0.0, 1, str(reason)) for key, reason in distinct.items()}
        events = list(map(event_of.__getitem__, map(id, pending)))
        self.pending = []
        record_many = getattr(self.collector, "record_item_events", None)
        if record_many is not None:
            record_many(events)
        else:
            for event in events:
                self.collector.record_item_event(event)

    def stage(self, stage: PipelineStage, started: float, ended: float, count: int) -> None:
        self.collector.record_stage_event(TraceEvent(stage, (ended - started) * 1000.0, count))
