"""pycupel: decide what goes into a language model's context window.

Candidate items and a token budget go in; the best subset that fits comes out, ordered for the
model's attention, with a reason for every inclusion and exclusion. Implements the Cupel
specification (classify, score, deduplicate, sort, slice, place).

The parts live in subpackages named after the pipeline: :mod:`pycupel.scorers`,
:mod:`pycupel.slicers`, :mod:`pycupel.placers`, :mod:`pycupel.diagnostics`, plus
:mod:`pycupel.policy` / :mod:`pycupel.presets`, :mod:`pycupel.analytics`,
:mod:`pycupel.tokens`, :mod:`pycupel.adapters` and :mod:`pycupel.testing`.

``import pycupel`` loads only the data model and the errors; every other name here is imported
from its module on first use, so a program (or the command line) pays only for what it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pycupel._lazy import lazy_attributes
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

if TYPE_CHECKING:
    from pycupel import presets
    from pycupel.diagnostics import (
        DiagnosticTraceCollector,
        NullTraceCollector,
        SelectionReport,
        TraceDetailLevel,
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

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "DiagnosticTraceCollector": "pycupel.diagnostics",
        "NullTraceCollector": "pycupel.diagnostics",
        "SelectionReport": "pycupel.diagnostics",
        "TraceDetailLevel": "pycupel.diagnostics",
        "DryRunResult": "pycupel.pipeline",
        "Pipeline": "pycupel.pipeline",
        "PipelineResult": "pycupel.pipeline",
        "Policy": "pycupel.policy",
        "load_policy": "pycupel.policy",
        "presets": "pycupel.presets",
        "save_policy": "pycupel.policy",
    },
    __all__,
)
