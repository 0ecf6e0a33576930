"""Budget simulation: what a pipeline would select at other budgets.

Built entirely on :meth:`~pycupel.pipeline.Pipeline.dry_run`, whose determinism (identical
input, identical output) makes repeated runs comparable. Items are compared by identity.

* :func:`marginal_items` — the items a budget includes that the same budget minus
  ``slack_tokens`` does not (the specification's ``GetMarginalItems``).
* :func:`find_min_budget` — the smallest budget in ``[target.tokens, search_ceiling]`` that
  includes ``target_item`` (``FindMinBudgetFor``), by binary search.
* :func:`sweep_budgets` — one run per budget, for plotting how the selection grows.

**Which budget each run uses**

* ``marginal_items``: the full run uses ``budget`` unchanged; the reduced run uses
  ``budget`` with ``max_tokens`` and ``target_tokens`` both lowered by ``slack_tokens`` and
  every other field (``output_reserve``, ``reserved_slots``, the safety margin) kept, so the
  slack is the only difference between the two runs.
* ``find_min_budget``: each probe at ``b`` tokens uses :func:`probe_budget` ``(b)`` =
  ``ContextBudget(max_tokens=b, target_tokens=b)`` — no reserve, no slots, no margin — so the
  answer is a plain token count, directly comparable with ``target_item.tokens`` (the lower
  end of the search). The pipeline's own budget is not used. A probe at which the pinned items
  alone do not fit (:class:`~pycupel.errors.PinnedBudgetError`) counts as "not included".
* ``sweep_budgets``: an integer ``b`` means the base budget (the pipeline's, or
  ``base_budget``) with ``max_tokens = target_tokens = b``; a :class:`ContextBudget` is used
  as given.

**Monotonicity.** The two searches assume a larger budget never drops an item a smaller one
included. Slicers declare it with ``budget_monotonic``; those that declare False (QuotaSlice,
CountQuotaSlice, CountConstrainedKnapsackSlice) or do not declare it are refused with
:class:`~pycupel.errors.NonMonotonicSlicerError`, carrying the specification's messages.
Note that even greedy and knapsack selection, classified monotonic by the specification, can
occasionally drop a small item when a larger one starts to fit. So :func:`find_min_budget`
guarantees what its binary search can: the item is included at the returned budget and not
at one token less. It is the minimum whenever the item's inclusion is monotonic over the
searched range, which the tests check against exhaustive runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from pycupel._checks import check_int
from pycupel.diagnostics import SelectionReport
from pycupel.errors import BudgetSimulationError, NonMonotonicSlicerError, PinnedBudgetError
from pycupel.model import ContextBudget, ContextItem, ContextKind
from pycupel.pipeline import Pipeline
from pycupel.slicers import CountQuotaSlice, QuotaSlice, Slicer

__all__ = [
    "SweepPoint",
    "find_min_budget",
    "marginal_items",
    "probe_budget",
    "sweep_budgets",
]

_MARGINAL_QUOTA_MESSAGE = (
    "GetMarginalItems requires monotonic item inclusion. QuotaSlice produces non-monotonic "
    "inclusion as budget changes shift percentage allocations."
)
_MIN_BUDGET_QUOTA_MESSAGE = (
    "FindMinBudgetFor requires monotonic item inclusion. QuotaSlice and CountQuotaSlice "
    "produce non-monotonic inclusion as budget changes shift allocations. Use a GreedySlice or "
    "KnapsackSlice inner slicer for budget simulation."
)


# --------------------------------------------------------------------------- checks


def _check_pipeline(pipeline: object) -> Pipeline:
    if not isinstance(pipeline, Pipeline):
        raise BudgetSimulationError("pipeline", pipeline, "must be a Pipeline")
    return pipeline


def _check_items(items: object) -> Sequence[ContextItem]:
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise BudgetSimulationError("items", items, "must be a sequence of ContextItem")
    return items


def _check_budget(field_name: str, budget: object) -> ContextBudget:
    if not isinstance(budget, ContextBudget):
        raise BudgetSimulationError(field_name, budget, "must be a ContextBudget")
    return budget


def _require_monotonic(pipeline: Pipeline, operation: str) -> None:
    """Refuse slicers that do not declare monotonic inclusion (spec messages for QuotaSlice and
    CountQuotaSlice, the same wording generalised for any other)."""
    slicer: Slicer = pipeline.slicer
    if getattr(slicer, "budget_monotonic", None) is True:
        return
    name = type(slicer).__name__
    spec_name = "GetMarginalItems" if operation == "marginal_items" else "FindMinBudgetFor"
    if operation == "marginal_items" and isinstance(slicer, QuotaSlice):
        message = _MARGINAL_QUOTA_MESSAGE
    elif operation == "find_min_budget" and isinstance(slicer, QuotaSlice | CountQuotaSlice):
        message = _MIN_BUDGET_QUOTA_MESSAGE
    elif not hasattr(slicer, "budget_monotonic"):
        message = (
            f"{spec_name} requires monotonic item inclusion. {name} does not declare it "
            "(a budget_monotonic property returning True)."
        )
    else:
        message = (
            f"{spec_name} requires monotonic item inclusion. {name} produces non-monotonic "
            "inclusion as budget changes shift allocations."
        )
        if operation == "find_min_budget":
            message += " Use a GreedySlice or KnapsackSlice for budget simulation."
    raise NonMonotonicSlicerError(operation, slicer, message)


def _included(report: SelectionReport) -> list[ContextItem]:
    return [entry.item for entry in report.included]


# --------------------------------------------------------------------------- marginal items


def marginal_items(
    pipeline: Pipeline,
    items: Sequence[ContextItem],
    budget: ContextBudget,
    slack_tokens: int,
) -> list[ContextItem]:
    """Items included at ``budget`` but not at ``budget`` reduced by ``slack_tokens``.

    The result keeps the full run's placed order. See the module docs for the two budgets.

    Raises:
        BudgetSimulationError: ``slack_tokens`` is negative, larger than
            ``budget.target_tokens``, or would leave ``max_tokens`` below ``output_reserve``;
            or another argument has the wrong type.
        NonMonotonicSlicerError: the pipeline's slicer is not budget-monotonic.
    """
    _check_pipeline(pipeline)
    candidates = _check_items(items)
    full = _check_budget("budget", budget)
    slack = check_int(BudgetSimulationError, "slack_tokens", slack_tokens, minimum=0)
    if slack > full.target_tokens:
        raise BudgetSimulationError(
            "slack_tokens", slack, f"must be <= budget.target_tokens ({full.target_tokens})"
        )
    if full.max_tokens - slack < full.output_reserve:
        limit = full.max_tokens - full.output_reserve
        raise BudgetSimulationError(
            "slack_tokens",
            slack,
            f"must be <= budget.max_tokens - budget.output_reserve ({limit})",
        )
    _require_monotonic(pipeline, "marginal_items")
    reduced = full.replace(
        max_tokens=full.max_tokens - slack, target_tokens=full.target_tokens - slack
    )
    primary = _included(pipeline.dry_run(candidates, budget=full).report)
    margin = set(_included(pipeline.dry_run(candidates, budget=reduced).report))
    return [item for item in primary if item not in margin]


# --------------------------------------------------------------------------- minimum budget


def probe_budget(tokens: int) -> ContextBudget:
    """The budget :func:`find_min_budget` probes ``tokens`` with:
    ``ContextBudget(max_tokens=tokens, target_tokens=tokens)``."""
    check_int(BudgetSimulationError, "tokens", tokens, minimum=0)
    return ContextBudget(max_tokens=tokens, target_tokens=tokens)


def _included_at(
    pipeline: Pipeline, items: Sequence[ContextItem], target: ContextItem, tokens: int
) -> bool:
    try:
        report = pipeline.dry_run(items, budget=probe_budget(tokens)).report
    except PinnedBudgetError:
        return False  # the pinned items alone do not fit: nothing else can be included
    return any(entry.item is target for entry in report.included)


def find_min_budget(
    pipeline: Pipeline,
    items: Sequence[ContextItem],
    target_item: ContextItem,
    search_ceiling: int,
) -> int | None:
    """The smallest budget in ``[target_item.tokens, search_ceiling]`` at which the pipeline
    includes ``target_item``, or None when the final check at the search's upper candidate
    does not include it.

    Binary search as specified (stop when ``high - low <= 1``, then one confirming run at
    ``high``), preceded by one run at ``low``: the specification's loop never tests ``low``
    itself, so an item that fits at exactly its own size would be answered one token too high.
    About ``log2(search_ceiling - target_item.tokens) + 2`` dry runs. Each probe's budget is
    :func:`probe_budget`; see the module docs.

    Raises:
        BudgetSimulationError: ``target_item`` is not an element of ``items`` (by identity),
            ``search_ceiling`` is below ``target_item.tokens``; or an argument has the wrong
            type.
        NonMonotonicSlicerError: the pipeline's slicer is not budget-monotonic.
    """
    _check_pipeline(pipeline)
    candidates = _check_items(items)
    if not isinstance(target_item, ContextItem):
        raise BudgetSimulationError("target_item", target_item, "must be a ContextItem")
    if not any(item is target_item for item in candidates):
        raise BudgetSimulationError(
            "target_item", target_item, "must be an element of items (compared by identity)"
        )
    ceiling = check_int(BudgetSimulationError, "search_ceiling", search_ceiling, minimum=0)
    if ceiling < target_item.tokens:
        raise BudgetSimulationError(
            "search_ceiling", ceiling, f"must be >= target_item.tokens ({target_item.tokens})"
        )
    _require_monotonic(pipeline, "find_min_budget")
    if target_item.tokens < 0:
        return None  # excluded at Classify (NegativeTokens) whatever the budget

    low = target_item.tokens
    if _included_at(pipeline, candidates, target_item, low):
        return low
    high = ceiling
    if high == low:
        return None
    while high - low > 1:
        mid = low + (high - low) // 2
        if _included_at(pipeline, candidates, target_item, mid):
            high = mid
        else:
            low = mid
    return high if _included_at(pipeline, candidates, target_item, high) else None


# --------------------------------------------------------------------------- sweep


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """What one budget of a sweep selected.

    Attributes:
        budget: the budget of this run.
        selected: the included items, in placed order (the items themselves: compare with
            ``is``).
        tokens_used: their total tokens.
        total_score: the sum of their report scores (pinned items count 1.0, as merged).
        included_count: ``len(selected)``.
        excluded_count: items left out.
        kind_counts: included items per kind.
        feasible: False when the pinned items alone exceed this budget
            (:class:`~pycupel.errors.PinnedBudgetError`); nothing is selected then.
    """

    budget: ContextBudget
    selected: tuple[ContextItem, ...]
    tokens_used: int
    total_score: float
    included_count: int
    excluded_count: int
    kind_counts: Mapping[ContextKind, int] = field(hash=False)
    feasible: bool = True


def _sweep_budget(index: int, value: object, base: ContextBudget) -> ContextBudget:
    if isinstance(value, ContextBudget):
        return value
    tokens = check_int(BudgetSimulationError, f"budgets[{index}]", value, minimum=0)
    if tokens < base.output_reserve:
        raise BudgetSimulationError(
            f"budgets[{index}]", tokens, f"must be >= base output_reserve ({base.output_reserve})"
        )
    return base.replace(max_tokens=tokens, target_tokens=tokens)


def sweep_budgets(
    pipeline: Pipeline,
    items: Sequence[ContextItem],
    budgets: Iterable[int | ContextBudget],
    *,
    base_budget: ContextBudget | None = None,
) -> list[SweepPoint]:
    """Run the pipeline once per budget; one :class:`SweepPoint` each, in the given order.

    An integer ``b`` means ``base_budget`` (default: the pipeline's budget) with
    ``max_tokens = target_tokens = b``. All budgets are checked before the first run.
    Any slicer is allowed (a sweep only reports; it assumes nothing).

    Raises:
        BudgetSimulationError: a budget is negative, below the base ``output_reserve``, or
            not an int/ContextBudget; or another argument has the wrong type.
    """
    _check_pipeline(pipeline)
    candidates = _check_items(items)
    base = pipeline.budget if base_budget is None else _check_budget("base_budget", base_budget)
    if isinstance(budgets, str | bytes) or not isinstance(budgets, Iterable):
        raise BudgetSimulationError("budgets", budgets, "must be an iterable of budgets")
    resolved = [_sweep_budget(i, value, base) for i, value in enumerate(budgets)]
    points = []
    for budget in resolved:
        try:
            report = pipeline.dry_run(candidates, budget=budget).report
        except PinnedBudgetError:
            points.append(
                SweepPoint(budget, (), 0, 0.0, 0, len(candidates), MappingProxyType({}), False)
            )
            continue
        selected = tuple(entry.item for entry in report.included)
        kinds = Counter(item.kind for item in selected)
        points.append(
            SweepPoint(
                budget=budget,
                selected=selected,
                tokens_used=sum(item.tokens for item in selected),
                total_score=sum(entry.score for entry in report.included),
                included_count=len(selected),
                excluded_count=len(report.excluded),
                kind_counts=MappingProxyType(dict(kinds)),
            )
        )
    return points
