"""OpenTelemetry tracing of pipeline runs (the optional ``otel`` extra: ``opentelemetry-api``).

A run becomes one ``cupel.pipeline`` span with five child spans, ``cupel.stage.classify``,
``cupel.stage.score``, ``cupel.stage.deduplicate``, ``cupel.stage.slice`` and
``cupel.stage.place`` (Sort is an internal step and has none), carrying the attributes and
events of the specification's OpenTelemetry chapter at one of three verbosity tiers:

* :attr:`CupelVerbosity.STAGE_ONLY` (production) — root: ``cupel.budget.max_tokens``,
  ``cupel.verbosity``; each stage: ``cupel.stage.name`` (lowercase),
  ``cupel.stage.item_count_in``, ``cupel.stage.item_count_out``. No per-item data: the
  pipeline builds no item events, reasons or report entries for it, exactly as without a
  collector.
* :attr:`CupelVerbosity.STAGE_AND_EXCLUSIONS` (staging) — adds on each stage span
  ``cupel.exclusion.count`` and one ``cupel.exclusion`` event per item the stage excluded
  (``cupel.exclusion.reason``, the variant name; ``cupel.exclusion.item_kind``;
  ``cupel.exclusion.item_tokens``).
* :attr:`CupelVerbosity.FULL` (development) — adds one ``cupel.item.included`` event per
  included item, in placed order (``cupel.item.kind``, ``cupel.item.tokens``,
  ``cupel.item.score``). They are recorded on the root span, the span still open once the
  Place stage has completed.

Item counts: ``item_count_in`` is what the stage received (as in the stage's
:class:`~pycupel.diagnostics.TraceEvent`), ``item_count_out`` what it passed on, so
``in - out`` is the number of items the stage excluded (Score excludes none; Classify passes
pinned and scoreable items on). Stage spans get their start and end time from the stage's
measured duration; no ``duration_ms`` attribute (the span's own times carry it).

Usage::

    from pycupel.otel import CupelVerbosity, traced_run

    result = traced_run(pipeline, items, verbosity=CupelVerbosity.STAGE_ONLY)

or, with the collector itself (spans are emitted by :meth:`~OpenTelemetryTraceCollector.finish`,
which needs the run's result)::

    collector = create_collector(pipeline.budget, CupelVerbosity.FULL)
    result = pipeline.run(items, collector=collector)
    collector.finish(result)

The tracer is ``trace.get_tracer("Wollax.Cupel")`` from the globally configured provider
unless you pass one. The root span is a child of the span current when the run started.
A run that raises is still traced by :func:`traced_run`: the spans of the stages that
completed, and the root span with status ERROR and the exception recorded.

All ``cupel.*`` names are pre-stable in the specification: fit for debugging, not for alerts.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from pycupel import __version__
from pycupel.diagnostics import (
    ExcludedItem,
    IncludedItem,
    InclusionReason,
    PipelineStage,
    TraceDetailLevel,
    TraceEvent,
)
from pycupel.errors import CollectorStateError, PipelineConfigError, TelemetryUnavailableError
from pycupel.model import ContextBudget, ContextItem
from pycupel.pipeline import Pipeline, PipelineResult
from pycupel.slicers.base import (
    CountRequirementShortfall,
    PackingStats,
    SolverStats,
    TokenRequirementShortfall,
)

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

__all__ = [
    "TRACER_NAME",
    "CupelVerbosity",
    "FullCollector",
    "OpenTelemetryTraceCollector",
    "StageAndExclusionsCollector",
    "StageOnlyCollector",
    "create_collector",
    "traced_run",
]

TRACER_NAME = "Wollax.Cupel"
"""The instrumentation scope name of the spans (the specification's source name)."""

_STAGES = (
    PipelineStage.CLASSIFY,
    PipelineStage.SCORE,
    PipelineStage.DEDUPLICATE,
    PipelineStage.SLICE,
    PipelineStage.PLACE,
)


class CupelVerbosity(enum.StrEnum):
    """How much a run's trace carries (the value is the ``cupel.verbosity`` attribute)."""

    STAGE_ONLY = "StageOnly"
    """Stage spans with item counts only. Production-safe."""
    STAGE_AND_EXCLUSIONS = "StageAndExclusions"
    """Plus one event per excluded item on its stage's span. For staging."""
    FULL = "Full"
    """Plus one event per included item. For development: one event per item."""


def _trace_api() -> Any:
    try:
        from opentelemetry import trace  # noqa: PLC0415  (optional dependency)
    except ImportError as exc:
        raise TelemetryUnavailableError(
            "OpenTelemetry tracing", "opentelemetry-api", "otel"
        ) from exc
    return trace


def _current_context() -> Context:
    from opentelemetry import context  # noqa: PLC0415  (optional dependency, checked first)

    return context.get_current()


@dataclass(frozen=True, slots=True)
class _StageTiming:
    stage: PipelineStage
    start_ns: int
    end_ns: int
    item_count_in: int


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What the run decided, as far as the collector knows it."""

    pinned: int
    placed: int
    included: Sequence[IncludedItem] = ()
    excluded: Sequence[ExcludedItem] | None = None


class OpenTelemetryTraceCollector:
    """Base of the OpenTelemetry collectors: records stage timings, emits the spans at
    :meth:`finish` (or :meth:`fail`). Build one with :func:`create_collector`.

    One collector traces one run (it holds that run's timings); the pipeline stays shareable.

    Args:
        budget: the run's budget (its ``max_tokens`` is the root span's attribute).
        tracer: an OpenTelemetry tracer; default ``trace.get_tracer("Wollax.Cupel")``.
        clock_ns: wall clock in nanoseconds since the epoch, for the span times; default
            :func:`time.time_ns` (injectable for tests).

    Raises:
        TelemetryUnavailableError: ``opentelemetry-api`` is not installed.
        PipelineConfigError: ``budget`` is not a ContextBudget, or ``clock_ns`` not callable.
    """

    verbosity: ClassVar[CupelVerbosity] = CupelVerbosity.STAGE_ONLY

    def __init__(
        self,
        budget: ContextBudget,
        *,
        tracer: Tracer | None = None,
        clock_ns: Callable[[], int] | None = None,
    ) -> None:
        api = _trace_api()
        if not isinstance(budget, ContextBudget):
            raise PipelineConfigError("budget", budget, "must be a ContextBudget")
        if clock_ns is not None and not callable(clock_ns):
            raise PipelineConfigError("clock_ns", clock_ns, "must be callable or None")
        self._budget = budget
        self._tracer: Tracer = (
            tracer if tracer is not None else api.get_tracer(TRACER_NAME, __version__)
        )
        self._clock: Callable[[], int] = clock_ns if clock_ns is not None else time.time_ns
        self._timings: list[_StageTiming] = []
        self._parent: Context | None = None
        self._finished = False

    # ---------------------------------------------------------------- TraceCollector

    @property
    def is_enabled(self) -> bool:
        return True

    @property
    def detail_level(self) -> TraceDetailLevel:
        """STAGE: the pipeline never builds item events for these collectors (the exclusion
        tiers receive the decisions through ``record_selection`` instead)."""
        return TraceDetailLevel.STAGE

    def record_stage_event(self, event: TraceEvent) -> None:
        """Note the stage's start and end (from its duration) and its input count."""
        self._check_open()
        end = self._clock()
        if not self._timings:
            # The caller's current span, at the moment the run started, is the parent.
            self._parent = _current_context()
        if isinstance(event.stage, PipelineStage):
            start = end - round(event.duration_ms * 1_000_000)
            self._timings.append(_StageTiming(event.stage, start, end, event.item_count))

    def record_item_event(self, event: TraceEvent) -> None:
        """Item events are not used (the pipeline sends none at detail level STAGE)."""

    # ---------------------------------------------------------------- emitting

    def finish(self, result: PipelineResult) -> None:
        """Emit the run's spans; call once, with the result of the run traced.

        Raises:
            CollectorStateError: called twice, or before a complete run.
        """
        self._check_open()
        if len(self._timings) != len(_STAGES):
            raise CollectorStateError(
                "finish() needs a completed pipeline run traced by this collector; "
                f"{len(self._timings)} of {len(_STAGES)} stages were recorded"
            )
        self._finished = True
        self._emit(self._outcome(result), error=None)

    def fail(self, error: BaseException) -> None:
        """Emit the spans of a run that raised: the completed stages, and the root span with
        status ERROR and the exception recorded."""
        self._check_open()
        self._finished = True
        self._emit(None, error=error)

    def _outcome(self, result: PipelineResult) -> _Outcome:
        # Pinned items are never dropped once classified: every one is in the result.
        pinned = sum(1 for item in result.items if item.pinned)
        return _Outcome(pinned=pinned, placed=len(result.items))

    def _check_open(self) -> None:
        if self._finished:
            raise CollectorStateError(
                "an OpenTelemetry collector traces one pipeline run, and this one has "
                "finished; use a new collector for each run"
            )

    def _emit(self, outcome: _Outcome | None, *, error: BaseException | None) -> None:
        api = _trace_api()
        timings = self._timings
        now = self._clock()
        start = timings[0].start_ns if timings else now
        end = timings[-1].end_ns if timings and error is None else now
        root = self._tracer.start_span(
            "cupel.pipeline",
            context=self._parent if self._parent is not None else _current_context(),
            start_time=start,
            attributes={
                "cupel.budget.max_tokens": self._budget.max_tokens,
                "cupel.verbosity": self.verbosity.value,
            },
        )
        parent = api.set_span_in_context(root)
        outs = _item_counts_out(timings, outcome)
        excluded = self._excluded_by_stage(timings, outs, outcome)
        for timing in timings:
            name = timing.stage.value.lower()
            attributes: dict[str, str | int] = {
                "cupel.stage.name": name,
                "cupel.stage.item_count_in": timing.item_count_in,
            }
            out = outs.get(timing.stage)
            if out is not None:
                attributes["cupel.stage.item_count_out"] = out
            stage_excluded = excluded.get(timing.stage)
            if stage_excluded is not None:
                attributes["cupel.exclusion.count"] = len(stage_excluded)
            span = self._tracer.start_span(
                f"cupel.stage.{name}",
                context=parent,
                start_time=timing.start_ns,
                attributes=attributes,
            )
            for entry in stage_excluded or ():
                span.add_event(
                    "cupel.exclusion",
                    {
                        "cupel.exclusion.reason": entry.reason.name,
                        "cupel.exclusion.item_kind": entry.item.kind.value,
                        "cupel.exclusion.item_tokens": entry.item.tokens,
                    },
                    timestamp=timing.end_ns,
                )
            span.end(end_time=timing.end_ns)
        if outcome is not None:
            self._add_included_events(root, outcome.included, end)
        if error is not None:
            root.record_exception(error, timestamp=end)
            root.set_status(api.Status(api.StatusCode.ERROR, f"{type(error).__name__}: {error}"))
        root.end(end_time=end)

    def _excluded_by_stage(
        self,
        timings: Sequence[_StageTiming],
        outs: dict[PipelineStage, int],
        outcome: _Outcome | None,
    ) -> dict[PipelineStage, Sequence[ExcludedItem]]:
        """The exclusions of each stage (exclusion tiers only)."""
        return {}

    def _add_included_events(self, root: Span, included: Sequence[IncludedItem], at: int) -> None:
        """Per-item inclusion events (FULL only)."""

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(max_tokens={self._budget.max_tokens}, "
            f"stages={len(self._timings)}, finished={self._finished})"
        )


def _item_counts_out(
    timings: Sequence[_StageTiming], outcome: _Outcome | None
) -> dict[PipelineStage, int]:
    """Items each stage passed on, from the stage input counts and the run's outcome.

    Classify passes the pinned and scoreable items; Score passes all it scored; Deduplicate
    passes what Slice received; Slice passes the selected items (Place's input less the
    pinned ones); Place passes the placed items. Without an outcome (a failed run) only what
    the input counts alone determine is known.
    """
    counts_in = {timing.stage: timing.item_count_in for timing in timings}
    outs: dict[PipelineStage, int] = {}
    scored = counts_in.get(PipelineStage.SCORE)
    if scored is not None:
        outs[PipelineStage.SCORE] = scored
    sliced_in = counts_in.get(PipelineStage.SLICE)
    if sliced_in is not None and PipelineStage.DEDUPLICATE in counts_in:
        outs[PipelineStage.DEDUPLICATE] = sliced_in
    if outcome is None:
        return outs
    if scored is not None:
        outs[PipelineStage.CLASSIFY] = scored + outcome.pinned
    merged = counts_in.get(PipelineStage.PLACE)
    if merged is not None:
        outs[PipelineStage.SLICE] = merged - outcome.pinned
        outs[PipelineStage.PLACE] = outcome.placed
    return outs


class StageOnlyCollector(OpenTelemetryTraceCollector):
    """:attr:`CupelVerbosity.STAGE_ONLY`: stage spans with item counts; no per-item cost."""

    verbosity = CupelVerbosity.STAGE_ONLY


class StageAndExclusionsCollector(OpenTelemetryTraceCollector):
    """:attr:`CupelVerbosity.STAGE_AND_EXCLUSIONS`: adds exclusion events and counts.

    It receives the run's decisions through ``record_selection`` (so the pipeline builds
    them: this tier costs per-item work, like a diagnostic report).
    """

    verbosity = CupelVerbosity.STAGE_AND_EXCLUSIONS

    def __init__(
        self,
        budget: ContextBudget,
        *,
        tracer: Tracer | None = None,
        clock_ns: Callable[[], int] | None = None,
    ) -> None:
        super().__init__(budget, tracer=tracer, clock_ns=clock_ns)
        self._included: tuple[IncludedItem, ...] | None = None
        self._excluded: tuple[ExcludedItem, ...] = ()

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
        """Keep the decisions (called by the pipeline at the end of the run). ``excluded``
        comes in exclusion order: Classify's, then Deduplicate's, Slice's and Place's."""
        self._check_open()
        self._included = tuple(included)
        self._excluded = tuple(excluded)

    def _outcome(self, result: PipelineResult) -> _Outcome:
        included = self._included
        if included is None:
            raise CollectorStateError(
                "the pipeline did not report its decisions to this collector; pass the "
                "collector to Pipeline.run(..., collector=...) of the run being finished"
            )
        pinned = sum(1 for entry in included if entry.reason is InclusionReason.PINNED)
        return _Outcome(pinned, len(included), included, self._excluded)

    def _excluded_by_stage(
        self,
        timings: Sequence[_StageTiming],
        outs: dict[PipelineStage, int],
        outcome: _Outcome | None,
    ) -> dict[PipelineStage, Sequence[ExcludedItem]]:
        if outcome is None or outcome.excluded is None:
            return {}
        excluded = outcome.excluded
        split: dict[PipelineStage, Sequence[ExcludedItem]] = {}
        offset = 0
        for index, timing in enumerate(timings):
            if index == len(timings) - 1:
                count = len(excluded) - offset  # the last stage takes the rest: none is lost
            else:
                count = timing.item_count_in - outs.get(timing.stage, timing.item_count_in)
            split[timing.stage] = excluded[offset : offset + count]
            offset += count
        return split


class FullCollector(StageAndExclusionsCollector):
    """:attr:`CupelVerbosity.FULL`: adds one event per included item on the root span."""

    verbosity = CupelVerbosity.FULL

    def _add_included_events(self, root: Span, included: Sequence[IncludedItem], at: int) -> None:
        for entry in included:
            root.add_event(
                "cupel.item.included",
                {
                    "cupel.item.kind": entry.item.kind.value,
                    "cupel.item.tokens": entry.item.tokens,
                    "cupel.item.score": float(entry.score),
                },
                timestamp=at,
            )


_COLLECTORS: Mapping[CupelVerbosity, type[OpenTelemetryTraceCollector]] = MappingProxyType(
    {
        CupelVerbosity.STAGE_ONLY: StageOnlyCollector,
        CupelVerbosity.STAGE_AND_EXCLUSIONS: StageAndExclusionsCollector,
        CupelVerbosity.FULL: FullCollector,
    }
)


def create_collector(
    budget: ContextBudget,
    verbosity: CupelVerbosity | str = CupelVerbosity.STAGE_ONLY,
    *,
    tracer: Tracer | None = None,
    clock_ns: Callable[[], int] | None = None,
) -> OpenTelemetryTraceCollector:
    """A collector for one run at ``budget`` and ``verbosity`` (a member or its name,
    ``"StageOnly"``/``"StageAndExclusions"``/``"Full"``).

    Raises:
        TelemetryUnavailableError: ``opentelemetry-api`` is not installed.
        PipelineConfigError: an unknown verbosity, or an invalid budget or clock.
    """
    try:
        tier = CupelVerbosity(verbosity)
    except ValueError:
        names = ", ".join(member.value for member in CupelVerbosity)
        raise PipelineConfigError("verbosity", verbosity, f"must be one of {names}") from None
    return _COLLECTORS[tier](budget, tracer=tracer, clock_ns=clock_ns)


def traced_run(
    pipeline: Pipeline,
    items: Sequence[ContextItem],
    *,
    verbosity: CupelVerbosity | str = CupelVerbosity.STAGE_ONLY,
    budget: ContextBudget | None = None,
    tracer: Tracer | None = None,
) -> PipelineResult:
    """Run ``pipeline`` on ``items`` (with ``budget``, or the pipeline's) and trace it.

    Returns the run's result; a run that raises is traced as failed and the error re-raised.
    """
    if not isinstance(pipeline, Pipeline):
        raise PipelineConfigError("pipeline", pipeline, "must be a Pipeline")
    collector = create_collector(
        pipeline.budget if budget is None else budget, verbosity, tracer=tracer
    )
    try:
        result = pipeline.run(items, budget=budget, collector=collector)
    except Exception as exc:
        collector.fail(exc)
        raise
    collector.finish(result)
    return result
