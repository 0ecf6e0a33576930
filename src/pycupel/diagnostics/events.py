"""Diagnostic events: what the pipeline reports about each stage and each decision.

* :class:`PipelineStage` — the observable stages (Sort is an internal step and has no events).
* :class:`TraceEvent` — one observation: a whole stage (wall-clock duration, item count) or one
  item's decision (duration ``0.0``, item count ``1``, a message such as
  ``"BudgetExceeded: 2048 tokens requested, 512 available"``).
* :class:`OverflowEvent` — the selection exceeded ``target_tokens`` under the PROCEED strategy.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pycupel.model import ContextBudget, ContextItem

__all__ = ["OverflowEvent", "PipelineStage", "TraceEvent"]


class PipelineStage(enum.StrEnum):
    """The pipeline stages that emit diagnostic events (the value is the wire name)."""

    CLASSIFY = "Classify"
    SCORE = "Score"
    DEDUPLICATE = "Deduplicate"
    SLICE = "Slice"
    PLACE = "Place"


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One diagnostic observation.

    Attributes:
        stage: the stage that produced it. Events read from another implementation may name a
            stage this version does not know; such a stage is kept as its plain string.
        duration_ms: wall-clock duration of the stage in milliseconds; ``0.0`` for item events.
        item_count: items the stage received (see :class:`~pycupel.pipeline.Pipeline` for what
            each stage counts); ``1`` for item events.
        message: optional human-readable detail; item events carry the decision here.
    """

    stage: PipelineStage | str
    duration_ms: float
    item_count: int
    message: str | None = None


@dataclass(frozen=True, slots=True)
class OverflowEvent:
    """The merged selection exceeded ``target_tokens`` and the strategy was PROCEED.

    Attributes:
        tokens_over_budget: merged tokens minus ``budget.target_tokens``, or minus the hard
            ceiling ``max_tokens - output_reserve`` when the target lies above it (always > 0).
        overflowing_items: every item present at the time of overflow (pinned, then sliced).
        budget: the budget that was exceeded (the run's budget, not the slicer's).
    """

    tokens_over_budget: int
    overflowing_items: tuple[ContextItem, ...]
    budget: ContextBudget
