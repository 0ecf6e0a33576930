"""The :class:`Pipeline` class: configuration checked once, then ``run`` and ``dry_run``.

A :class:`Pipeline` holds configuration only (budget, scorer, slicer, placer, deduplication,
overflow strategy), validated once at construction. Every call to :meth:`Pipeline.run` works on
its own local data (the run loop, :func:`~pycupel.pipeline.run.execute`), so one instance can
serve many threads at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable, Sequence

from pycupel._checks import check_bool
from pycupel.diagnostics.collector import (
    DiagnosticTraceCollector,
    TraceCollector,
    TraceDetailLevel,
)
from pycupel.errors import PipelineConfigError, ScorerConfigError
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy
from pycupel.pipeline.fused import budget_limits, run_fused
from pycupel.pipeline.place import column_placer
from pycupel.pipeline.result import DryRunResult, PipelineResult
from pycupel.pipeline.run import execute
from pycupel.pipeline.run_async import read_all, stream_run
from pycupel.pipeline.slice import column_slicer
from pycupel.pipeline.trace import Trace
from pycupel.placers import ColumnPlacer, Placer
from pycupel.scorers.base import SMALL_BATCH, BaseScorer, Scorer, as_scorer, is_builtin
from pycupel.scorers.small_batch import SmallBatchScoring, small_batch_scoring
from pycupel.slicers import GreedySlice
from pycupel.slicers._common import ColumnSlicer
from pycupel.slicers.base import Slicer
from pycupel.slicers.stream import StreamSlice

__all__ = ["Pipeline"]


class Pipeline:
    """A configured, reusable, thread-safe Cupel pipeline.

    Args:
        budget: the default budget of every run (a run may pass its own).
        scorer: any :class:`~pycupel.scorers.Scorer`, or a plain function ``item -> float``.
        slicer: the slicer (default :class:`~pycupel.slicers.GreedySlice`); any object with
            ``slice(items, budget)`` returning a :class:`~pycupel.slicers.SliceResult` (or a
            sequence of the selected items, the specification's interface).
        placer: the placer (default :class:`~pycupel.placers.ChronologicalPlacer`).
        deduplicate: remove byte-exact duplicate contents (default True).
        overflow_strategy: THROW (default), TRUNCATE or PROCEED; a name string is accepted.

    Raises:
        PipelineConfigError: a component is not what it must be, or a flag has the wrong type.
    """

    __slots__ = (
        "_budget",
        "_column_placer",
        "_column_slicer",
        "_deduplicate",
        "_fused",
        "_limits",
        "_overflow_strategy",
        "_placer",
        "_scorer",
        "_slicer",
    )

    _budget: ContextBudget
    _scorer: Scorer
    _slicer: Slicer
    _placer: Placer
    _deduplicate: bool
    _overflow_strategy: OverflowStrategy
    # The slicer and placer again when they are built-in columnar ones, else None (the run
    # then hands them plain columns instead of (item, score) pairs).
    _column_slicer: ColumnSlicer | None
    _column_placer: ColumnPlacer | None
    # (scorer, slicer, placer) when all three are built-in ones the fused run handles (a
    # small untraced run then takes it), else None.
    _fused: tuple[BaseScorer, SmallBatchScoring | None, ColumnSlicer, ColumnPlacer] | None
    # budget_limits(_budget), for the fused run of a call without its own budget.
    _limits: tuple[int, int]

    def __init__(
        self,
        *,
        budget: ContextBudget,
        scorer: Scorer | Callable[[ContextItem], float],
        slicer: Slicer | None = None,
        placer: Placer | None = None,
        deduplicate: bool = True,
        overflow_strategy: OverflowStrategy | str = OverflowStrategy.THROW,
    ) -> None:
        _check_budget(budget, "budget")
        try:
            checked_scorer = as_scorer(scorer)
        except ScorerConfigError as exc:
            raise PipelineConfigError("scorer", scorer, exc.rule) from exc
        if slicer is None:
            slicer = GreedySlice()
        elif isinstance(slicer, type) or not callable(getattr(slicer, "slice", None)):
            raise PipelineConfigError(
                "slicer", slicer, "must be a slicer instance with a slice(items, budget) method"
            )
        if placer is None:
            from pycupel.placers import ChronologicalPlacer  # noqa: PLC0415

            placer = ChronologicalPlacer()
        elif isinstance(placer, type) or not callable(getattr(placer, "place", None)):
            raise PipelineConfigError(
                "placer", placer, "must be a placer instance with a place(items) method"
            )
        check_bool(PipelineConfigError, "deduplicate", deduplicate)
        strategy = OverflowStrategy.parse(overflow_strategy)

        setter = object.__setattr__
        setter(self, "_budget", budget)
        setter(self, "_scorer", checked_scorer)
        setter(self, "_slicer", slicer)
        setter(self, "_placer", placer)
        setter(self, "_deduplicate", deduplicate)
        setter(self, "_overflow_strategy", strategy)
        columnar_slicer = column_slicer(slicer)
        columnar_placer = column_placer(placer)
        setter(self, "_column_slicer", columnar_slicer)
        setter(self, "_column_placer", columnar_placer)
        fused = None
        if (
            is_builtin(checked_scorer)
            and columnar_slicer is not None
            and columnar_placer is not None
            and _builtin(columnar_slicer)
            and _builtin(columnar_placer)
        ):
            fused = (
                checked_scorer,
                small_batch_scoring(checked_scorer),
                columnar_slicer,
                columnar_placer,
            )
        setter(self, "_fused", fused)
        setter(self, "_limits", budget_limits(budget))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Pipeline is immutable; cannot set {name!r}")

    # ------------------------------------------------------------------ configuration

    @property
    def budget(self) -> ContextBudget:
        """The default budget of a run."""
        return self._budget

    @property
    def scorer(self) -> Scorer:
        return self._scorer

    @property
    def slicer(self) -> Slicer:
        return self._slicer

    @property
    def placer(self) -> Placer:
        return self._placer

    @property
    def deduplicate(self) -> bool:
        return self._deduplicate

    @property
    def overflow_strategy(self) -> OverflowStrategy:
        return self._overflow_strategy

    def __repr__(self) -> str:
        return (
            f"Pipeline(budget={self._budget!r}, scorer={self._scorer!r}, "
            f"slicer={self._slicer!r}, placer={self._placer!r}, "
            f"deduplicate={self._deduplicate}, "
            f"overflow_strategy={self._overflow_strategy.name})"
        )

    # ------------------------------------------------------------------ running

    def run(
        self,
        items: Sequence[ContextItem],
        *,
        budget: ContextBudget | None = None,
        collector: TraceCollector | None = None,
        query: str | None = None,
    ) -> PipelineResult:
        """Select and order ``items`` for the context window.

        Args:
            items: the candidates, a sequence of :class:`~pycupel.ContextItem` (never mutated).
            budget: this run's budget; the pipeline's own when None.
            collector: where to send diagnostics; None or a disabled collector costs nothing.
            query: what the context is for (a question, the latest user message); handed to
                query-aware scorers such as :class:`~pycupel.scorers.RelevanceScorer`, which
                raise :class:`~pycupel.errors.MissingQueryError` without one.

        Raises:
            PipelineConfigError: ``items``, ``budget`` or ``collector`` is invalid.
            PinnedBudgetError: pinned items need more than ``max_tokens - output_reserve``.
            BudgetOverflowError: the selection exceeds ``target_tokens`` under THROW.
            ScorerConfigError, SlicerConfigError, PlacerConfigError: a component returned
                something invalid (wrong number of scores, items not from its input...).
        """
        run_budget = self._budget if budget is None else _check_budget(budget, "budget")
        candidates = _check_sequence(items)
        if query is not None and not isinstance(query, str):
            raise PipelineConfigError("query", query, "must be a string or None")
        trace: Trace | None = None
        if collector is not None and _collector_enabled(collector):
            trace = Trace(collector)
        elif self._fused is not None and len(candidates) <= SMALL_BATCH:
            scorer, small_scoring, slicer, placer = self._fused
            result = run_fused(
                candidates,
                run_budget,
                scorer,
                small_scoring,
                slicer,
                placer,
                self._deduplicate,
                self._overflow_strategy,
                query,
                self._limits if budget is None else None,
            )
            if result is not None:
                return result
        return execute(
            candidates,
            run_budget,
            trace,
            self._scorer,
            self._slicer,
            self._column_slicer,
            self._placer,
            self._column_placer,
            self._deduplicate,
            self._overflow_strategy,
            query,
        )

    def dry_run(
        self,
        items: Sequence[ContextItem],
        *,
        budget: ContextBudget | None = None,
        query: str | None = None,
    ) -> DryRunResult:
        """Run with item-level diagnostics and return the result with its report.

        Same arguments and errors as :meth:`run`.
        """
        collector = DiagnosticTraceCollector(TraceDetailLevel.ITEM)
        result = self.run(items, budget=budget, collector=collector, query=query)
        return _with_report(result, collector)

    async def arun(
        self,
        items: Sequence[ContextItem] | AsyncIterable[ContextItem],
        *,
        budget: ContextBudget | None = None,
        collector: TraceCollector | None = None,
        query: str | None = None,
    ) -> PipelineResult:
        """:meth:`run`, awaitable, for a list or an asynchronous source of items.

        With a :class:`~pycupel.slicers.StreamSlice` and an async source the run streams:
        items are scored in micro-batches and the source is read only until the budget is
        full (see :mod:`pycupel.pipeline.run_async`). Other async sources are read to the end
        and run as a list.

        Raises:
            StreamSourceError: the source raised (the stage that was reading it is named).
            PipelineConfigError: as :meth:`run`; also a pinned item in a streamed run.
        """
        run_budget = self._budget if budget is None else _check_budget(budget, "budget")
        if query is not None and not isinstance(query, str):
            raise PipelineConfigError("query", query, "must be a string or None")
        if isinstance(items, AsyncIterable) and not isinstance(items, Sequence):
            if not isinstance(self._slicer, StreamSlice):
                items = await read_all(items)
            else:
                trace: Trace | None = None
                if collector is not None and _collector_enabled(collector):
                    trace = Trace(collector)
                return await stream_run(
                    items,
                    run_budget,
                    trace,
                    self._scorer,
                    self._slicer,
                    self._placer,
                    self._overflow_strategy,
                    query,
                )
        return self.run(items, budget=run_budget, collector=collector, query=query)

    async def dry_arun(
        self,
        items: Sequence[ContextItem] | AsyncIterable[ContextItem],
        *,
        budget: ContextBudget | None = None,
        query: str | None = None,
    ) -> DryRunResult:
        """:meth:`dry_run`, awaitable; same arguments and errors as :meth:`arun`."""
        collector = DiagnosticTraceCollector(TraceDetailLevel.ITEM)
        result = await self.arun(items, budget=budget, collector=collector, query=query)
        return _with_report(result, collector)


def _with_report(result: PipelineResult, collector: DiagnosticTraceCollector) -> DryRunResult:
    return DryRunResult(
        items=result.items,
        total_tokens=result.total_tokens,
        overflow=result.overflow,
        shortfalls=result.shortfalls,
        token_shortfalls=result.token_shortfalls,
        packing=result.packing,
        solver=result.solver,
        report=collector.build_report(),
    )


def _builtin(part: object) -> bool:
    """Whether ``part`` is an instance of one of pycupel's own slicer or placer classes (a
    subclass defined elsewhere may change what its columnar methods compute)."""
    return type(part).__module__.startswith(("pycupel.slicers.", "pycupel.placers"))


def _collector_enabled(collector: object) -> bool:
    # Duck-typed on purpose: a runtime Protocol isinstance check costs more than a small run.
    enabled = getattr(collector, "is_enabled", None)
    if not isinstance(enabled, bool) or not (
        callable(getattr(collector, "record_stage_event", None))
        and callable(getattr(collector, "record_item_event", None))
    ):
        raise PipelineConfigError(
            "collector",
            collector,
            "must be a TraceCollector (is_enabled, record_stage_event, record_item_event)",
        )
    return enabled


def _check_budget(budget: object, field: str) -> ContextBudget:
    if not isinstance(budget, ContextBudget):
        raise PipelineConfigError(field, budget, "must be a ContextBudget")
    return budget


def _check_sequence(items: object) -> tuple[ContextItem, ...]:
    """A snapshot of ``items``: the run reads the caller's sequence exactly once.

    Every later stage works on this tuple, so a list that another thread changes during the
    run, or a sequence subclass whose answers change between reads, cannot make the stages
    disagree (an item appended mid-run is simply not part of this run). The elements are
    checked by Classify, in its single pass over the snapshot.
    """
    if type(items) is list:
        return tuple(items)
    if type(items) is tuple:
        return items
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise PipelineConfigError(
            "items", items, "must be a sequence (list or tuple) of ContextItem"
        )
    return items if type(items) is tuple else tuple(items)
