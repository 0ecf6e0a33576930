"""pycupel: decide what goes into a language model's context window.

Candidate items and a token budget go in; the best subset that fits comes out, ordered for the
model's attention, with a reason for every inclusion and exclusion. Implements the Cupel
specification (classify, score, deduplicate, sort, slice, place).

The parts live in subpackages named after the pipeline: :mod:`pycupel.scorers`,
:mod:`pycupel.slicers`, :mod:`pycupel.placers`, :mod:`pycupel.diagnostics`, plus
:mod:`pycupel.policy` / :mod:`pycupel.presets`, :mod:`pycupel.analytics`,
:mod:`pycupel.tokens`, :mod:`pycupel.adapters` and :mod:`pycupel.testing`.
"""

from pycupel import presets
from pycupel.diagnostics import (
    DiagnosticTraceCollector,
    NullTraceCollector,
    SelectionReport,
    TraceDetailLevel,
)
from pycupel.errors import CupelError
from pycupel.model import (
    ContextBudget,
    ContextItem,
    ContextKind,
    ContextSource,
    OverflowStrategy,
    ScoredItem,
    compute_effective_budget,
)
from pycupel.pipeline import DryRunResult, Pipeline, PipelineResult
from pycupel.policy import Policy, load_policy, save_policy

__version__ = "0.1.0"

__all__ = [
    "ContextBudget",
    "ContextItem",
    "ContextKind",
    "ContextSource",
    "CupelError",
    "DiagnosticTraceCollector",
    "DryRunResult",
    "NullTraceCollector",
    "OverflowStrategy",
    "Pipeline",
    "PipelineResult",
    "Policy",
    "ScoredItem",
    "SelectionReport",
    "TraceDetailLevel",
    "__version__",
    "compute_effective_budget",
    "load_policy",
    "presets",
    "save_policy",
]
