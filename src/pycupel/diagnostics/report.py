"""The selection report: every candidate, included or excluded, with its score and reason.

A report is built once per run from what the pipeline recorded in a
:class:`~pycupel.diagnostics.DiagnosticTraceCollector` (or returned by
:meth:`~pycupel.pipeline.Pipeline.dry_run`). It is plain immutable data with a JSON form
(:meth:`SelectionReport.to_json` / :meth:`SelectionReport.from_json`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from pycupel._order import stable_argsort
from pycupel.diagnostics.events import TraceEvent
from pycupel.diagnostics.reasons import ExclusionReason, InclusionReason
from pycupel.diagnostics.why import Why
from pycupel.model import ContextItem
from pycupel.slicers.base import (
    CountRequirementShortfall,
    PackingStats,
    SolverStats,
    TokenRequirementShortfall,
)

if TYPE_CHECKING:
    import numpy as np
else:
    from pycupel._numpy import numpy as np

__all__ = ["ExcludedItem", "IncludedItem", "SelectionReport"]

_NO_WHY: Mapping[ContextItem, Why] = MappingProxyType({})


class IncludedItem(NamedTuple):
    """An item placed in the context window (an immutable record, like ScoredItem).

    ``score`` is the item's computed score; pinned items carry ``1.0``, the score the pipeline
    merges them with.
    """

    item: ContextItem
    score: float
    reason: InclusionReason


class ExcludedItem(NamedTuple):
    """An item left out, with the score it had when the decision was made.

    Items excluded before scoring (``NegativeTokens``) carry ``0.0``.
    """

    item: ContextItem
    score: float
    reason: ExclusionReason


@dataclass(frozen=True, slots=True)
class SelectionReport:
    """Complete diagnostic output of one pipeline run.

    Attributes:
        events: recorded trace events in insertion order.
        included: placed items, in final placed order.
        excluded: left-out items, by score descending; ties keep exclusion order (Classify,
            Deduplicate, Slice, Place, and within a stage the order items were decided).
        total_candidates: ``len(included) + len(excluded)``: every input item.
        total_tokens_considered: sum of ``tokens`` over included and excluded items.
        count_requirement_shortfalls: count requirements the slicer could not meet.
        token_requirement_shortfalls: token requirements the slicer could not meet.
        packing: the packer's statistics, when the slicer reported them.
        solver: the optimiser's statistics, when the slicer reported them.
        why: a chat fit's account of its entries, by item (the report's own item objects):
            why each unit was kept, shortened or dropped, beside the specification's
            reason (see :mod:`pycupel.diagnostics.why`); empty for a pipeline run.
    """

    events: tuple[TraceEvent, ...]
    included: tuple[IncludedItem, ...]
    excluded: tuple[ExcludedItem, ...]
    total_candidates: int
    total_tokens_considered: int
    count_requirement_shortfalls: tuple[CountRequirementShortfall, ...] = ()
    token_requirement_shortfalls: tuple[TokenRequirementShortfall, ...] = ()
    packing: PackingStats | None = None
    solver: SolverStats | None = None
    why: Mapping[ContextItem, Why] = field(default_factory=lambda: _NO_WHY, hash=False)

    @classmethod
    def build(
        cls,
        *,
        events: Iterable[TraceEvent],
        included: Iterable[IncludedItem],
        excluded: Iterable[ExcludedItem],
        count_requirement_shortfalls: Iterable[CountRequirementShortfall] = (),
        token_requirement_shortfalls: Iterable[TokenRequirementShortfall] = (),
        packing: PackingStats | None = None,
        solver: SolverStats | None = None,
        why: Mapping[ContextItem, Why] | None = None,
    ) -> SelectionReport:
        """Assemble a report from items in exclusion order: sorts ``excluded`` by score
        (descending, stable; NaN scores last) and computes the totals. ``why`` gives the
        entries' whys by item (those of items not in the report are never looked up)."""
        included_tuple = tuple(included)
        excluded_tuple = _sort_by_score(tuple(excluded))
        item_tokens = attrgetter("item.tokens")
        tokens = sum(map(item_tokens, included_tuple)) + sum(map(item_tokens, excluded_tuple))
        return cls(
            events=tuple(events),
            included=included_tuple,
            excluded=excluded_tuple,
            total_candidates=len(included_tuple) + len(excluded_tuple),
            total_tokens_considered=tokens,
            count_requirement_shortfalls=tuple(count_requirement_shortfalls),
            token_requirement_shortfalls=tuple(token_requirement_shortfalls),
            packing=packing,
            solver=solver,
            why=_why_of(why),
        )

    def explain(self, entry: IncludedItem | ExcludedItem) -> str:
        """Why ``entry`` (one of this report's) is in or out, in words: its :attr:`why` when
        the run recorded one (``"relevant to the query (score 1.572)"``, ``"the budget ran
        out: it needs 3,933 tokens, 199 were free"``), else its reason's own account
        (``"Scored"``, ``"BudgetExceeded: 900 tokens requested, 120 available"``)."""
        why = self.why.get(entry.item)
        if why is not None:
            return why.describe(entry.item, entry.score)
        return str(entry.reason)

    def exclusion_counts(self) -> dict[str, int]:
        """How many items each exclusion reason removed, most frequent first."""
        counts = Counter(entry.reason.name for entry in self.excluded)
        return dict(counts.most_common())

    def to_dict(self) -> dict[str, Any]:
        """The report in the specification's JSON shape (absent fields omitted, never null)."""
        from pycupel.diagnostics import wire  # noqa: PLC0415  (wire imports this module)

        return wire.report_to_dict(self)

    def to_json(self, *, indent: int | None = None) -> str:
        """The report as a JSON document (see :meth:`to_dict`)."""
        from pycupel.diagnostics import wire  # noqa: PLC0415  (wire imports this module)

        return wire.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<report>") -> SelectionReport:
        """Read a report from its JSON shape; unknown exclusion reasons and stages are kept.

        Raises:
            InputFormatError: a field is missing, unknown, or of the wrong type.
        """
        from pycupel.diagnostics import wire  # noqa: PLC0415  (wire imports this module)

        return wire.report_from_dict(data, source=source)

    @classmethod
    def from_json(
        cls, text: str | bytes, *, source: str = "<report>", max_bytes: int | None = None
    ) -> SelectionReport:
        """Read a report from a JSON document (see :meth:`from_dict`).

        ``max_bytes`` caps the document's size (default 256 MiB); the nesting depth is capped
        at 64 levels. Over a limit is an :class:`~pycupel.errors.InputFormatError`.
        """
        from pycupel.diagnostics import wire  # noqa: PLC0415  (wire imports this module)

        limits = {} if max_bytes is None else {"max_bytes": max_bytes}
        return wire.report_from_dict(wire.loads(text, source=source, **limits), source=source)


def _why_of(why: Mapping[ContextItem, Why] | None) -> Mapping[ContextItem, Why]:
    """``why`` as a read-only copy (the caller's mapping may change after)."""
    return MappingProxyType(dict(why)) if why else _NO_WHY


_SMALL_REPORT = 256
"""Up to this many exclusions the report sorts them without numpy."""


def _sort_by_score(excluded: Sequence[ExcludedItem]) -> tuple[ExcludedItem, ...]:
    if len(excluded) < 2:
        return tuple(excluded)
    listed = [entry.score for entry in excluded]
    if len(listed) <= _SMALL_REPORT and not any(map(math.isnan, listed)):
        # A few scores, none NaN: Python's sort, stable with reverse=True, gives the same
        # order without numpy.
        ranked = sorted(range(len(listed)), key=listed.__getitem__, reverse=True)
        return tuple(map(excluded.__getitem__, ranked))
    scores = np.array(listed, dtype=np.float64)
    # Negating puts the highest score first; a stable sort keeps exclusion order on ties and
    # sorts NaN (which has no place in a descending order) after every number.
    order = stable_argsort(-scores)
    return tuple([excluded[index] for index in order.tolist()])
