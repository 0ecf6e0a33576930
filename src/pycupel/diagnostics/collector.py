"""Trace collectors: where the pipeline sends its diagnostic events.

A collector is passed to each :meth:`~pycupel.pipeline.Pipeline.run` call, never stored on the
pipeline, so concurrent runs can trace differently. The pipeline asks ``is_enabled`` first and,
when it is False, builds no events, reasons or report entries at all: the disabled path costs
one attribute read per run.

* :class:`NullTraceCollector` — disabled.
* :class:`DiagnosticTraceCollector` — buffers events (stage events always, item events at
  :attr:`TraceDetailLevel.ITEM`), optionally calls ``on_event`` for each recorded event, and
  after the run builds the :class:`~pycupel.diagnostics.SelectionReport`.

A custom collector needs only the :class:`TraceCollector` members. It may also expose a
``detail_level`` attribute: when it is :attr:`TraceDetailLevel.STAGE` the pipeline skips
building item events it would discard. Implementing :class:`SelectionRecorder` as well makes the
pipeline hand over its per-item decisions at the end of the run.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pycupel.diagnostics.events import TraceEvent
from pycupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport
from pycupel.errors import CollectorStateError, PipelineConfigError
from pycupel.slicers.base import (
    CountRequirementShortfall,
    PackingStats,
    SolverStats,
    TokenRequirementShortfall,
)

__all__ = [
    "DiagnosticTraceCollector",
    "NullTraceCollector",
    "SelectionRecorder",
    "TraceCollector",
    "TraceDetailLevel",
]


class TraceDetailLevel(enum.IntEnum):
    """How much a :class:`DiagnosticTraceCollector` records; higher includes lower."""

    STAGE = 0
    """Stage events only: one per stage with its duration and item count."""
    ITEM = 1
    """Stage events plus one event per item decision."""


@runtime_checkable
class TraceCollector(Protocol):
    """Observer of a pipeline run."""

    @property
    def is_enabled(self) -> bool:
        """Whether to record at all; when False the pipeline builds no diagnostic objects."""
        ...

    def record_stage_event(self, event: TraceEvent) -> None:
        """Record the event a stage emits once, after it completes."""
        ...

    def record_item_event(self, event: TraceEvent) -> None:
        """Record the event of one item decision (may be filtered by detail level)."""
        ...


@runtime_checkable
class SelectionRecorder(Protocol):
    """A collector that also receives the run's per-item decisions, at the end of the run."""

    def record_selection(
        self,
        *,
        included: Sequence[IncludedItem],
        excluded: Sequence[ExcludedItem],
        count_requirement_shortfalls: Sequence[CountRequirementShortfall],
        token_requirement_shortfalls: Sequence[TokenRequirementShortfall],
        packing: PackingStats | None,
        solver: SolverStats | None,
    ) -> None:
        """Receive the included items (placed order) and excluded items (exclusion order)."""
        ...


class NullTraceCollector:
    """The disabled collector: records nothing and costs nothing. Stateless and shareable."""

    __slots__ = ()

    @property
    def is_enabled(self) -> bool:
        return False

    def record_stage_event(self, event: TraceEvent) -> None:
        """Discard the event."""

    def record_item_event(self, event: TraceEvent) -> None:
        """Discard the event."""

    def __repr__(self) -> str:
        return "NullTraceCollector()"


@dataclass(frozen=True, slots=True)
class _Selection:
    included: tuple[IncludedItem, ...]
    excluded: tuple[ExcludedItem, ...]
    shortfalls: tuple[CountRequirementShortfall, ...]
    token_shortfalls: tuple[TokenRequirementShortfall, ...]
    packing: PackingStats | None
    solver: SolverStats | None


class DiagnosticTraceCollector:
    """Buffers the events of one run and builds its :class:`SelectionReport`.

    Use one collector per run: it accumulates state, so it is not meant to be shared between
    concurrent runs (the pipeline itself is).

    Args:
        detail_level: STAGE (default) records stage events only; ITEM adds item events.
        on_event: optional callback called synchronously with each event as it is recorded
            (discarded item events are not passed on).
    """

    __slots__ = ("_detail_level", "_events", "_on_event", "_selection")

    def __init__(
        self,
        detail_level: TraceDetailLevel = TraceDetailLevel.STAGE,
        on_event: Callable[[TraceEvent], object] | None = None,
    ) -> None:
        if not isinstance(detail_level, TraceDetailLevel):
            raise PipelineConfigError(
                "detail_level", detail_level, "must be a TraceDetailLevel (STAGE or ITEM)"
            )
        if on_event is not None and not callable(on_event):
            raise PipelineConfigError("on_event", on_event, "must be callable or None")
        self._detail_level = detail_level
        self._on_event = on_event
        self._events: list[TraceEvent] = []
        self._selection: _Selection | None = None

    @property
    def is_enabled(self) -> bool:
        return True

    @property
    def detail_level(self) -> TraceDetailLevel:
        """The configured detail level."""
        return self._detail_level

    @property
    def events(self) -> tuple[TraceEvent, ...]:
        """The events recorded so far, in insertion order."""
        return tuple(self._events)

    def record_stage_event(self, event: TraceEvent) -> None:
        self._check_open()
        self._events.append(event)
        if self._on_event is not None:
            self._on_event(event)

    def record_item_event(self, event: TraceEvent) -> None:
        self._check_open()
        if self._detail_level >= TraceDetailLevel.ITEM:
            self._events.append(event)
            if self._on_event is not None:
                self._on_event(event)

    def record_item_events(self, events: Iterable[TraceEvent]) -> None:
        """Record several item events at once (same filtering and callbacks, in order)."""
        self._check_open()
        if self._detail_level < TraceDetailLevel.ITEM:
            return
        if self._on_event is None:
            self._events.extend(events)
            return
        for event in events:
            self._events.append(event)
            self._on_event(event)

    def record_selection(
        self,
        *,
        included: Sequence[IncludedItem],
        excluded: Sequence[ExcludedItem],
        count_requirement_shortfalls: Sequence[CountRequirementShortfall],
        token_requirement_shortfalls: Sequence[TokenRequirementShortfall],
        packing: PackingStats | None,
        solver: SolverStats | None,
    ) -> None:
        """Receive the run's decisions (called by the pipeline at the end of a run)."""
        self._check_open()
        self._selection = _Selection(
            tuple(included),
            tuple(excluded),
            tuple(count_requirement_shortfalls),
            tuple(token_requirement_shortfalls),
            packing,
            solver,
        )

    def _check_open(self) -> None:
        # A second run would mix its events into a finished report: refuse it at once.
        if self._selection is not None:
            raise CollectorStateError(
                "a DiagnosticTraceCollector records one pipeline run, and this one has "
                "finished; use a new collector for each run"
            )

    def build_report(self) -> SelectionReport:
        """The report of the completed run.

        Raises:
            CollectorStateError: no run has completed with this collector (none was started,
                or it raised; the events recorded until then remain in :attr:`events`).
        """
        selection = self._selection
        if selection is None:
            raise CollectorStateError(
                "no completed pipeline run was recorded by this collector; pass it to "
                "Pipeline.run(..., collector=...) first (events so far are in .events)"
            )
        return SelectionReport.build(
            events=self._events,
            included=selection.included,
            excluded=selection.excluded,
            count_requirement_shortfalls=selection.shortfalls,
            token_requirement_shortfalls=selection.token_shortfalls,
            packing=selection.packing,
            solver=selection.solver,
        )

    def __repr__(self) -> str:
        return (
            f"DiagnosticTraceCollector(detail_level={self._detail_level.name}, "
            f"events={len(self._events)})"
        )
