"""Diagnostics: why each item was included or excluded, and what each stage did.

Pass a :class:`DiagnosticTraceCollector` to :meth:`~pycupel.pipeline.Pipeline.run` (or call
:meth:`~pycupel.pipeline.Pipeline.dry_run`) and read the :class:`SelectionReport`. Without a
collector, or with :class:`NullTraceCollector`, the pipeline builds no diagnostic objects.

A chat fit adds its own account beside the specification's reasons: :attr:`SelectionReport.why`
holds a :class:`Why` per unit (kept as part of the recent tail, as relevant to the query, as a
neighbour, shortened to an excerpt, dropped for lack of room...), and
:meth:`SelectionReport.explain` says it in words.
"""

from pycupel.diagnostics.collector import (
    DiagnosticTraceCollector,
    NullTraceCollector,
    SelectionRecorder,
    TraceCollector,
    TraceDetailLevel,
)
from pycupel.diagnostics.events import OverflowEvent, PipelineStage, TraceEvent
from pycupel.diagnostics.reasons import (
    BudgetExceeded,
    Deduplicated,
    ExclusionReason,
    Filtered,
    InclusionReason,
    NegativeTokens,
    PinnedOverride,
    QuotaCapExceeded,
    QuotaRequireDisplaced,
    ScoredTooLow,
    UnknownExclusionReason,
)
from pycupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport
from pycupel.diagnostics.why import Cause, ExcerptPart, Why

__all__ = [
    "BudgetExceeded",
    "Cause",
    "Deduplicated",
    "DiagnosticTraceCollector",
    "ExcerptPart",
    "ExcludedItem",
    "ExclusionReason",
    "Filtered",
    "IncludedItem",
    "InclusionReason",
    "NegativeTokens",
    "NullTraceCollector",
    "OverflowEvent",
    "PinnedOverride",
    "PipelineStage",
    "QuotaCapExceeded",
    "QuotaRequireDisplaced",
    "ScoredTooLow",
    "SelectionRecorder",
    "SelectionReport",
    "TraceCollector",
    "TraceDetailLevel",
    "TraceEvent",
    "UnknownExclusionReason",
    "Why",
]
