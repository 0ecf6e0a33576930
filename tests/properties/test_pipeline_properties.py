"""Properties of every pipeline: all scorers x slicers x placers x overflow strategies.

For any items and budget a run either returns a valid window or raises the one error the
situation calls for, never touches its input, and explains every candidate's fate; the same
input gives the same output and the same report.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta

from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from pipeline_strategies import (
    NOW,
    item_lists,
    items,
    pipelines,
    placers,
    report_without_durations,
    scorers,
    snapshot,
)

from conftest import reliability_examples
from pycupel.diagnostics import (
    BudgetExceeded,
    Deduplicated,
    InclusionReason,
    NegativeTokens,
    PinnedOverride,
    QuotaCapExceeded,
    SelectionReport,
)
from pycupel.errors import (
    BudgetOverflowError,
    CountRequirementError,
    PinnedBudgetError,
    RequirementUnreachableError,
)
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy, compute_effective_budget
from pycupel.pipeline import DryRunResult, Pipeline
from pycupel.placers import ChronologicalPlacer
from pycupel.scorers import ReflexiveScorer
from pycupel.scorers.base import score_array
from pycupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaSlice,
    GreedySlice,
    OptimalSlice,
    PackerSlice,
    QuotaSlice,
    ScarcityBehavior,
)

EXAMPLES = reliability_examples(200)


def _pinned_tokens(candidates: list[ContextItem]) -> int:
    return sum(item.tokens for item in candidates if item.pinned and item.tokens >= 0)


def _throws_on_scarcity(pipeline: Pipeline) -> bool:
    scarcity = getattr(pipeline.slicer, "scarcity", None)
    return scarcity is ScarcityBehavior.THROW


def _commits_regardless_of_budget(pipeline: Pipeline) -> bool:
    """Count requirements: the specification's phase 1 commits the required items whatever the
    budget, so the slicer's selection may exceed its target (the overflow strategy decides)."""
    slicer = pipeline.slicer
    if isinstance(slicer, CountQuotaSlice | CountConstrainedKnapsackSlice):
        return any(entry.require_count > 0 for entry in slicer.entries)
    return False


def _check_window(pipeline: Pipeline, candidates: list[ContextItem], result: DryRunResult) -> None:
    budget = pipeline.budget
    pinned = _pinned_tokens(candidates)
    chosen = list(result.items)
    # A subset of the input by identity, each item at most once.
    assert len({id(item) for item in chosen}) == len(chosen)
    given_ids = {id(item) for item in candidates}
    assert all(id(item) in given_ids for item in chosen)
    assert result.total_tokens == sum(item.tokens for item in chosen)
    # Pinned items always in, negative-token items never.
    chosen_ids = {id(item) for item in chosen}
    for item in candidates:
        if item.pinned and item.tokens >= 0:
            assert id(item) in chosen_ids
        if item.tokens < 0:
            assert id(item) not in chosen_ids
    # The slicer kept within its effective budget; the window within max - reserve.
    strategy = pipeline.overflow_strategy
    effective = compute_effective_budget(budget, pinned)
    sliced = sum(item.tokens for item in chosen if not item.pinned)
    ceiling = budget.max_tokens - budget.output_reserve
    if not _commits_regardless_of_budget(pipeline):
        assert sliced <= effective.target_tokens
        assert result.total_tokens <= ceiling
    # Count requirements commit whatever the budget; the overflow limit (the target, or the
    # ceiling when the target lies above it) still holds the window under THROW and TRUNCATE.
    if strategy is not OverflowStrategy.PROCEED:
        assert result.total_tokens <= ceiling
    if strategy is OverflowStrategy.THROW or (
        strategy is OverflowStrategy.TRUNCATE and pinned <= budget.target_tokens
    ):
        assert result.total_tokens <= budget.target_tokens
    if result.overflow is not None:
        assert strategy is OverflowStrategy.PROCEED
        limit = min(budget.target_tokens, ceiling)
        assert result.overflow.tokens_over_budget == result.total_tokens - limit
    elif strategy is OverflowStrategy.PROCEED:
        assert result.total_tokens <= budget.target_tokens


def _check_report(pipeline: Pipeline, candidates: list[ContextItem], result: DryRunResult) -> None:
    report = result.report
    fates = [id(e.item) for e in report.included] + [id(e.item) for e in report.excluded]
    assert Counter(fates) == Counter(id(item) for item in candidates)
    assert report.total_candidates == len(candidates)
    assert report.total_tokens_considered == sum(item.tokens for item in candidates)
    assert [entry.item for entry in report.included] == list(result.items)
    assert sum(e.item.tokens for e in report.included) == result.total_tokens
    for entry in report.included:
        item = entry.item
        if item.pinned:
            assert entry.reason is InclusionReason.PINNED
            assert entry.score == 1.0
        elif item.tokens == 0:
            assert entry.reason is InclusionReason.ZERO_TOKEN
        else:
            assert entry.reason is InclusionReason.SCORED
    pinned_contents = {item.content for item in candidates if item.pinned and item.tokens >= 0}
    for entry in report.excluded:
        item, reason = entry.item, entry.reason
        assert (item.tokens < 0) == isinstance(reason, NegativeTokens)
        assert not item.pinned or item.tokens < 0
        if isinstance(reason, NegativeTokens):
            assert reason.tokens == item.tokens
        elif isinstance(reason, Deduplicated):
            assert pipeline.deduplicate
            assert reason.deduplicated_against == item.content
            twins = [
                other
                for other in candidates
                if other is not item and other.content == item.content and not other.pinned
            ]
            assert twins
        elif isinstance(reason, BudgetExceeded):
            assert reason.item_tokens == item.tokens
        elif isinstance(reason, PinnedOverride):
            assert reason.displaced_by in pinned_contents
        elif isinstance(reason, QuotaCapExceeded):
            assert isinstance(
                pipeline.slicer,
                CountQuotaSlice | CountConstrainedKnapsackSlice | QuotaSlice | OptimalSlice,
            )
            assert reason.kind.lower() == item.kind.key
        else:
            raise AssertionError(f"unexpected exclusion reason {reason!r}")
    # The report reads back from its own JSON.
    again = SelectionReport.from_json(report.to_json())
    assert again.to_dict() == report.to_dict()


@settings(max_examples=EXAMPLES)
@given(pipeline=pipelines, candidates=item_lists)
def test_every_run_is_valid_untouched_explained_and_deterministic(
    pipeline: Pipeline, candidates: list[ContextItem]
) -> None:
    before = [snapshot(item) for item in candidates]
    given_list = list(candidates)
    budget = pipeline.budget
    pinned = _pinned_tokens(candidates)
    pinned_over = pinned > budget.max_tokens - budget.output_reserve
    error: Exception | None = None
    result: DryRunResult | None = None
    try:
        result = pipeline.dry_run(candidates)
    except (
        PinnedBudgetError,
        BudgetOverflowError,
        CountRequirementError,
        RequirementUnreachableError,
    ) as exc:
        error = exc
    event(f"slicer: {type(pipeline.slicer).__name__}")
    event(f"outcome: {type(error).__name__ if error else 'window'}")
    # PinnedBudgetError exactly when the pinned items exceed max - reserve.
    assert isinstance(error, PinnedBudgetError) == pinned_over
    if isinstance(error, PinnedBudgetError):
        available = budget.max_tokens - budget.output_reserve
        assert (error.pinned_tokens, error.available_tokens) == (pinned, available)
    if isinstance(error, BudgetOverflowError):
        # Only the pinned items or committed count requirements push a run over its target.
        assert pipeline.overflow_strategy is OverflowStrategy.THROW
        assert pinned > budget.target_tokens or _commits_regardless_of_budget(pipeline)
        assert error.target_tokens == budget.target_tokens
    if isinstance(error, CountRequirementError | RequirementUnreachableError):
        assert _throws_on_scarcity(pipeline)
    # Nothing about the input changed: the list, the items, their tags and metadata.
    assert candidates == given_list
    assert [snapshot(item) for item in candidates] == before
    if result is None:
        return
    _check_window(pipeline, candidates, result)
    _check_report(pipeline, candidates, result)

    # Determinism: run() and a second dry_run() agree to the item and to the report.
    second = pipeline.dry_run(candidates)
    assert [id(i) for i in second.items] == [id(i) for i in result.items]
    assert report_without_durations(second.report.to_dict()) == report_without_durations(
        result.report.to_dict()
    )
    plain = pipeline.run(candidates)
    assert [id(i) for i in plain.items] == [id(i) for i in result.items]
    assert (plain.total_tokens, plain.overflow, plain.shortfalls) == (
        result.total_tokens,
        result.overflow,
        result.shortfalls,
    )
    # A fresh copy of every item (same fields, new identities) gives the same window.
    copies = [item.replace() for item in candidates]
    position = {id(copy): index for index, copy in enumerate(copies)}
    copied = pipeline.run(copies)
    original_position = {id(item): index for index, item in enumerate(candidates)}
    assert [position[id(i)] for i in copied.items] == [
        original_position[id(i)] for i in result.items
    ]


@settings(max_examples=EXAMPLES)
@given(scorer=scorers, candidates=st.lists(items(), min_size=1, max_size=14), seed=st.integers())
def test_scores_do_not_depend_on_input_order(
    scorer: object, candidates: list[ContextItem], seed: int
) -> None:
    shuffled = list(candidates)
    random.Random(seed).shuffle(shuffled)
    first = score_array(scorer, candidates).tolist()  # type: ignore[arg-type]
    second = score_array(scorer, shuffled).tolist()  # type: ignore[arg-type]
    by_item = {id(item): score for item, score in zip(shuffled, second, strict=True)}
    for item, score in zip(candidates, first, strict=True):
        assert repr(by_item[id(item)]) == repr(score), item


@st.composite
def untied_cases(draw: st.DrawFn) -> tuple[Pipeline, list[ContextItem]]:
    """A pipeline and items on which no decision depends on input order.

    Scores (ReflexiveScorer on distinct hints), token counts, densities, contents and
    timestamps are all distinct, so sorting, greedy and packer visiting order, deduplication
    and chronological placement have no ties; U-shaped placement gets no pinned items (they
    all score 1.0).
    """
    placer = draw(placers)
    count = draw(st.integers(0, 12))
    hints = draw(st.lists(st.floats(0.01, 0.99), min_size=count, max_size=count, unique=True))
    # Distinct token counts too: a PinnedOverride names the largest pinned item (the earliest
    # on ties), and the knapsack-free slicers never tie on them.
    tokens = draw(st.lists(st.integers(1, 60), min_size=count, max_size=count, unique=True))
    minutes = draw(st.lists(st.integers(0, 10_000), min_size=count, max_size=count, unique=True))
    pinned_allowed = isinstance(placer, ChronologicalPlacer)
    candidates = []
    for index in range(count):
        candidates.append(
            ContextItem(
                f"item {index}",
                tokens=tokens[index],
                future_relevance_hint=hints[index],
                timestamp=NOW - timedelta(minutes=minutes[index]),
                pinned=pinned_allowed and draw(st.sampled_from([False] * 5 + [True])),
            )
        )
    densities = [h / t for h, t in zip(hints, tokens, strict=True)]
    assume(len(set(densities)) == len(densities))
    target = draw(st.integers(0, 300))
    pinned = sum(item.tokens for item in candidates if item.pinned)
    pipeline = Pipeline(
        budget=ContextBudget(max_tokens=max(target, pinned), target_tokens=target),
        scorer=ReflexiveScorer(),
        slicer=draw(st.sampled_from([GreedySlice(), PackerSlice(), PackerSlice(None)])),
        placer=placer,
        deduplicate=draw(st.booleans()),
        overflow_strategy=draw(
            st.sampled_from([OverflowStrategy.TRUNCATE, OverflowStrategy.PROCEED])
        ),
    )
    return pipeline, candidates


@settings(max_examples=EXAMPLES)
@given(case=untied_cases(), seed=st.integers())
def test_without_ties_the_window_does_not_depend_on_input_order(
    case: tuple[Pipeline, list[ContextItem]], seed: int
) -> None:
    pipeline, candidates = case
    shuffled = list(candidates)
    random.Random(seed).shuffle(shuffled)
    first = pipeline.dry_run(candidates)
    second = pipeline.dry_run(shuffled)
    assert [id(i) for i in first.items] == [id(i) for i in second.items]
    assert first.total_tokens == second.total_tokens
    assert {id(e.item): e.reason for e in first.report.excluded} == {
        id(e.item): e.reason for e in second.report.excluded
    }
    # Restoring the original order restores the original report exactly.
    restored = [shuffled[shuffled.index(item)] for item in candidates]
    assert report_without_durations(pipeline.dry_run(restored).report.to_dict()) == (
        report_without_durations(first.report.to_dict())
    )


def test_pinned_override_names_the_earliest_of_equal_pinned_items() -> None:
    """Found by the no-ties property: with equal-sized pinned items the reason depends on
    input order, so that property keeps token counts distinct; this is the documented tie."""
    pipeline = Pipeline(
        budget=ContextBudget(max_tokens=3, target_tokens=2),
        scorer=ReflexiveScorer(),
        overflow_strategy=OverflowStrategy.TRUNCATE,
    )
    loose = ContextItem("a", tokens=1, future_relevance_hint=0.5)
    first = ContextItem("p", tokens=1, pinned=True)
    second = ContextItem("q", tokens=1, pinned=True)
    for order, expected in (([loose, first, second], "p"), ([loose, second, first], "q")):
        (excluded,) = pipeline.dry_run(order).report.excluded
        assert excluded.reason == PinnedOverride(expected)
