"""The pipeline: classify, score, deduplicate, sort, slice, place.

One module per stage of the specification's fixed order, each with the stage's rules in its
docstring:

======================  ===============================================================
``classify``            negative-token items out; pinned and scoreable items apart
``score``               the scorer's batch pass over the scoreable items
``deduplicate``         byte-exact duplicate contents keep their best-scored item
``sort``                score descending, input order on ties
``slice``               the slicer's choice within the effective budget
``place``               merge with the pinned items, overflow strategy, the placer's order
======================  ===============================================================

Around them: ``pipeline`` (the :class:`Pipeline` class: configuration and the ``run`` and
``dry_run`` entry points), ``run`` (the run loop that chains the stages), ``fused`` (the same
stages in one pass, for a small run without diagnostics), ``result``
(:class:`PipelineResult`, :class:`DryRunResult`), ``trace`` (a traced run's events) and
``explain`` (the reason for every exclusion and inclusion).

Diagnostics: with an enabled collector each stage emits one stage event after it completes
(Sort emits none). Its ``item_count`` is the number of items the stage *received*: Classify all
candidates, Score the scoreable items, Deduplicate the scored items, Slice the sorted
(deduplicated) items, Place the merged pinned and sliced items (before any truncation). Item
events, one per exclusion, precede their stage's event. With no collector, or a disabled one,
no event, reason or report object is built.
"""

from __future__ import annotations

from pycupel.pipeline.pipeline import Pipeline
from pycupel.pipeline.result import DryRunResult, PipelineResult

__all__ = ["DryRunResult", "Pipeline", "PipelineResult"]
