"""Invariants of every run, over generated inputs."""

from __future__ import annotations

from itertools import pairwise

from diag_helpers import AsGivenPlacer, InOrderSlice, by_priority
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.diagnostics import BudgetExceeded, InclusionReason, NegativeTokens, PinnedOverride
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy, compute_effective_budget
from pycupel.pipeline import Pipeline

items_strategy = st.lists(
    st.builds(
        ContextItem,
        st.sampled_from(["a", "b", "c", "d", "e", "A", "a "]),
        tokens=st.integers(min_value=-5, max_value=120),
        priority=st.one_of(st.none(), st.integers(0, 9)),
        pinned=st.sampled_from([False, False, False, True]),
    ),
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(
    items=items_strategy,
    target=st.integers(0, 400),
    strategy=st.sampled_from([OverflowStrategy.TRUNCATE, OverflowStrategy.PROCEED]),
    deduplicate=st.booleans(),
)
def test_report_accounts_for_every_item(
    items: list[ContextItem], target: int, strategy: OverflowStrategy, deduplicate: bool
) -> None:
    pinned = sum(i.tokens for i in items if i.pinned and i.tokens >= 0)
    budget = ContextBudget(max_tokens=max(target, pinned), target_tokens=target)
    pipeline = Pipeline(
        budget=budget,
        scorer=by_priority,
        slicer=InOrderSlice(),
        placer=AsGivenPlacer(),
        deduplicate=deduplicate,
        overflow_strategy=strategy,
    )
    result = pipeline.dry_run(items)
    report = result.report

    # Every input item is either included or excluded, exactly once.
    seen = [id(e.item) for e in report.included] + [id(e.item) for e in report.excluded]
    assert sorted(seen) == sorted(id(i) for i in items)
    assert report.total_candidates == len(items)
    assert report.total_tokens_considered == sum(i.tokens for i in items)
    assert [e.item for e in report.included] == list(result.items)

    # Pinned non-negative items are always in; negative items never.
    for item in items:
        if item.tokens < 0:
            assert item not in result.items
        elif item.pinned:
            assert item in result.items
    # No two included items share content when deduplicating (pinned items are not deduplicated).
    if deduplicate:
        contents = [i.content for i in result.items if not i.pinned]
        assert len(contents) == len(set(contents))

    # Under TRUNCATE only pinned items can push the total over the target.
    if strategy is OverflowStrategy.TRUNCATE:
        assert result.total_tokens <= max(target, pinned)
        assert result.overflow is None
    elif result.total_tokens > target:
        assert result.overflow is not None
        assert result.overflow.tokens_over_budget == result.total_tokens - target

    # Excluded items are sorted by score, descending.
    scores = [e.score for e in report.excluded]
    assert all(a >= b for a, b in pairwise(scores))
    for entry in report.included:
        if entry.item.pinned:
            assert (entry.reason, entry.score) == (InclusionReason.PINNED, 1.0)
        elif entry.item.tokens == 0:
            assert entry.reason is InclusionReason.ZERO_TOKEN
        else:
            assert entry.reason is InclusionReason.SCORED

    # The disabled path gives the same selection.
    assert pipeline.run(items).items == result.items


@settings(max_examples=200, deadline=None)
@given(
    items=items_strategy,
    target=st.integers(0, 400),
    reserve=st.integers(0, 150),
)
def test_slice_exclusions_blame_the_pinned_items_only_when_they_made_the_item_impossible(
    items: list[ContextItem], target: int, reserve: int
) -> None:
    pinned = sum(i.tokens for i in items if i.pinned and i.tokens >= 0)
    budget = ContextBudget(
        max_tokens=target + reserve, target_tokens=target, output_reserve=reserve
    )
    if pinned > target:
        return  # then TRUNCATE could drop items at Place; this property is about Slice
    pipeline = Pipeline(
        budget=budget,
        scorer=by_priority,
        slicer=InOrderSlice(),
        placer=AsGivenPlacer(),
        deduplicate=False,
        overflow_strategy=OverflowStrategy.TRUNCATE,
    )
    report = pipeline.dry_run(items).report
    effective = compute_effective_budget(budget, pinned).target_tokens
    unpinned = compute_effective_budget(budget, 0).target_tokens
    for entry in report.excluded:
        impossible_only_with_pinned = pinned > 0 and effective < entry.item.tokens <= unpinned
        if isinstance(entry.reason, PinnedOverride):
            assert impossible_only_with_pinned
        elif isinstance(entry.reason, BudgetExceeded):
            assert not impossible_only_with_pinned
            assert entry.reason.item_tokens == entry.item.tokens
        else:
            assert isinstance(entry.reason, NegativeTokens)
