"""Why each item was left out or kept: the reasons a traced run records.

Called only when the run has a :class:`~pycupel.pipeline.trace.Trace` that wants per-item
decisions. A budget exclusion is blamed on the pinned items (``PinnedOverride``) only when they
made the item impossible: at Slice, when it is larger than the slicer's effective target yet
would fit the target of the same budget without pinned items; at Place (TRUNCATE), when it would
have fit without the pinned tokens. Anything else is ``BudgetExceeded``. A count cap's
exclusion (``QuotaCapExceeded``) carries the numbers the slicer recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import attrgetter

from pycupel._identity import identity_key
from pycupel.diagnostics.reasons import (
    BudgetExceeded,
    Deduplicated,
    ExclusionReason,
    InclusionReason,
    NegativeTokens,
    PinnedOverride,
    QuotaCapExceeded,
)
from pycupel.diagnostics.report import IncludedItem
from pycupel.errors import SlicerConfigError
from pycupel.model import ContextBudget, ContextItem, ScoredItem, compute_effective_budget
from pycupel.pipeline.score import Scores
from pycupel.pipeline.trace import Trace
from pycupel.slicers.base import CapExclusion, SliceResult

__all__ = [
    "explain_duplicates",
    "explain_negative",
    "explain_slice",
    "explain_truncation",
    "included",
]

_TOKENS = attrgetter("tokens")
_tuple_new = tuple.__new__


def explain_negative(trace: Trace, negative: list[ContextItem]) -> None:
    """Classify: the items excluded for negative token counts."""
    for item in negative:
        trace.exclude(item, 0.0, NegativeTokens(item.tokens))


def explain_duplicates(
    trace: Trace, items: tuple[ContextItem, ...], scores: Scores, keep: list[int]
) -> None:
    """Deduplicate: the scored ``items`` whose index is not in ``keep``."""
    kept = set(keep)
    score_list: list[float] = scores if isinstance(scores, list) else scores.tolist()
    for index, item in enumerate(items):
        if index not in kept:
            # The kept item has byte-identical content: that content names it.
            trace.exclude(item, score_list[index], Deduplicated(item.content))


def explain_slice(
    trace: Trace,
    items: list[ContextItem],
    scores: list[float],
    result: SliceResult,
    *,
    budget: ContextBudget,
    effective_target: int,
    selected_tokens: int,
    pinned: list[ContextItem],
    slicer_name: str,
) -> None:
    """Reasons for the sorted items the slicer left out (``items``, with their ``scores``).

    An item a count cap removed gets the slicer's :class:`QuotaCapExceeded`. Any other item
    gets :class:`PinnedOverride` (naming the largest pinned item) when it is larger than the
    slicer's effective target but no larger than the target the budget gives without pinned
    items, and :class:`BudgetExceeded` otherwise, whose ``available_tokens`` is the effective
    target minus the tokens of everything the slicer selected (the specification's D025
    definition), the same for every item of the stage.
    """
    displaced_by = _largest(pinned)
    unpinned_target = effective_target
    if displaced_by is not None:
        unpinned_target = compute_effective_budget(budget, 0).target_tokens
    caps = _cap_reasons(result, items, slicer_name)
    # Reasons are immutable: items with the same token count share one.
    by_tokens = _ReasonsByTokens(
        effective_target - selected_tokens, effective_target, unpinned_target, displaced_by
    )
    if caps:
        reasons = [caps.get(id(item)) or by_tokens[item.tokens] for item in items]
    else:
        reasons = list(map(by_tokens.__getitem__, map(_TOKENS, items)))
    trace.exclude_all(items, scores, reasons)


def explain_truncation(
    trace: Trace,
    truncated: list[tuple[ScoredItem, int]],
    target: int,
    pinned_tokens: int,
    pinned: list[ContextItem],
) -> None:
    """Place: reasons for the items TRUNCATE dropped; see :func:`_truncation_budget_reason`."""
    if not truncated:
        return
    displaced_by = _largest(pinned)
    for entry, kept_tokens in truncated:
        reason = _truncation_budget_reason(
            entry.item.tokens, target - kept_tokens, pinned_tokens, displaced_by
        )
        trace.exclude(entry.item, entry.score, reason)


def included(
    placed: tuple[ContextItem, ...],
    items: list[ContextItem],
    scores: list[float],
    pinned_count: int,
) -> list[IncludedItem]:
    """The placed items with their scores and inclusion reasons, in placed order.

    ``items`` and ``scores`` are the (possibly truncated) merge: pinned items first.
    """
    # Pinned items lead the merge; the others are free when they cost nothing.
    reasons = [InclusionReason.PINNED] * pinned_count
    tokens = list(map(_TOKENS, items[pinned_count:]))
    if 0 in tokens:
        reasons.extend(
            InclusionReason.ZERO_TOKEN if count == 0 else InclusionReason.SCORED for count in tokens
        )
    else:
        reasons.extend([InclusionReason.SCORED] * len(tokens))
    entries = map(_tuple_new, repeat(IncludedItem), zip(items, scores, reasons, strict=True))
    keys = identity_key(items, placed)
    by_key = dict(zip(keys(items), entries, strict=True))
    return list(map(by_key.__getitem__, keys(placed)))


def _largest(pinned: Sequence[ContextItem]) -> ContextItem | None:
    """The pinned item with the most tokens (the earliest on ties), or None."""
    best: ContextItem | None = None
    for item in pinned:
        if best is None or item.tokens > best.tokens:
            best = item
    return best


def _slice_budget_reason(
    tokens: int,
    available: int,
    effective_target: int,
    unpinned_target: int,
    displaced_by: ContextItem | None,
) -> ExclusionReason:
    """Why the slicer left out an item of ``tokens`` tokens that no count cap removed."""
    # The slicer's target already lacks the pinned tokens, and ``available`` also lacks what the
    # other scored items took. The pinned items are to blame only when they made the item
    # impossible: too big for the slicer's target, but not for the target the same budget gives
    # without pinned items. Losing room to better-scored items is ordinary competition.
    if displaced_by is not None and effective_target < tokens <= unpinned_target:
        return PinnedOverride(displaced_by.content)
    return BudgetExceeded(tokens, available)


def _truncation_budget_reason(
    tokens: int, available: int, pinned_tokens: int, displaced_by: ContextItem | None
) -> ExclusionReason:
    """Why TRUNCATE dropped an item of ``tokens`` tokens with ``available`` tokens left."""
    # The kept tokens counted against the original target include the pinned ones (TRUNCATE
    # never drops those): the pinned items are to blame when the item would have fit without.
    if (
        displaced_by is not None
        and pinned_tokens > 0
        and available < tokens <= available + pinned_tokens
    ):
        return PinnedOverride(displaced_by.content)
    return BudgetExceeded(tokens, available)


def _cap_reasons(
    result: SliceResult,
    rejected: Sequence[ContextItem],
    slicer_name: str,
) -> dict[int, ExclusionReason]:
    """QuotaCapExceeded for the items a count cap removed, from the slicer's own records.

    Only the slicer that enforced the cap knows its numbers (the configured cap and how many
    items of the kind it would have taken without it), so they are used as recorded. Each
    record must name an item of the slicer's input that it did not select, once.
    """
    if not result.cap_exclusions:
        return {}
    # The slicer's input minus its selection: exactly the items a record may name.
    rejected_ids = set(map(id, rejected))
    reasons: dict[int, ExclusionReason] = {}
    # Records with equal numbers share one immutable reason.
    shared: dict[tuple[str, int, int], ExclusionReason] = {}
    for index, record in enumerate(result.cap_exclusions):
        field = f"{slicer_name}.slice().cap_exclusions[{index}]"
        if not isinstance(record, CapExclusion):
            raise SlicerConfigError(field, record, "must be a CapExclusion")
        item = record.item
        if id(item) not in rejected_ids:
            raise SlicerConfigError(
                field, item, "must name an item of the slicer's input that it did not select"
            )
        if id(item) in reasons:
            raise SlicerConfigError(field, item, "must not name an item a second time")
        key = (record.kind.value, record.cap, record.actual)
        reason = shared.get(key)
        if reason is None:
            reason = shared[key] = QuotaCapExceeded(*key)
        reasons[id(item)] = reason
    return reasons


class _ReasonsByTokens(dict[int, ExclusionReason]):
    """The slice-stage budget reason for an item of a given token count, built on first use."""

    def __init__(
        self,
        available: int,
        effective_target: int,
        unpinned_target: int,
        displaced_by: ContextItem | None,
    ) -> None:
        super().__init__()
        self.available = available
        self.effective_target = effective_target
        self.unpinned_target = unpinned_target
        self.displaced_by = displaced_by

    def __missing__(self, tokens: int) -> ExclusionReason:
        reason = _slice_budget_reason(
            tokens, self.available, self.effective_target, self.unpinned_target, self.displaced_by
        )
        self[tokens] = reason
        return reason
