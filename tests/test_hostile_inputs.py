"""Hostile inputs to the public API: each is refused with a specific CupelError that names the
field, the value and the rule, or accepted when it is valid (docs/errors.md,
docs/edge-cases.md). Nothing here may end in a bare TypeError, AttributeError, OverflowError,
ValueError or RecursionError."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from pycupel.errors import (
    BudgetValidationError,
    CupelError,
    ItemValidationError,
    ScorerConfigError,
    SliceInputError,
    SlicerConfigError,
)
from pycupel.model import (
    ContextBudget,
    ContextItem,
    ContextKind,
    ContextSource,
    ScoredItem,
    compute_effective_budget,
)
from pycupel.pipeline import Pipeline
from pycupel.scorers import (
    MAX_SCORER_NESTING,
    CompositeScorer,
    DecayScorer,
    ExponentialDecay,
    FixedClock,
    FunctionScorer,
    KindScorer,
    MetadataKeyScorer,
    MetadataTrustScorer,
    PriorityScorer,
    ScaledScorer,
    StepDecay,
    TagScorer,
    WindowDecay,
    as_scorer,
)
from pycupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    GreedySlice,
    KnapsackSlice,
    OptimalSlice,
    PackerSlice,
    QuotaEntry,
    QuotaSlice,
    Slicer,
)

HUGE = 10**400
"""An int that float() cannot represent (float64 tops out near 1.8e308)."""

NOW = datetime(2024, 6, 1, tzinfo=UTC)
BUDGET = ContextBudget(max_tokens=1000, target_tokens=500)


def run(scorer: object, items: Sequence[ContextItem] | None = None) -> tuple[ContextItem, ...]:
    pipeline = Pipeline(budget=BUDGET, scorer=scorer)  # type: ignore[arg-type]
    chosen = items if items is not None else [ContextItem("a", tokens=10)]
    return pipeline.run(chosen).items


# --------------------------------------------------------------------------- huge numbers

HUGE_FLOAT_FIELDS: dict[str, tuple[Callable[[], object], type[CupelError], str]] = {
    "future_relevance_hint": (
        lambda: ContextItem("x", tokens=1, future_relevance_hint=HUGE),
        ItemValidationError,
        "future_relevance_hint",
    ),
    "safety margin": (
        lambda: ContextBudget(
            max_tokens=10, target_tokens=5, estimation_safety_margin_percent=HUGE
        ),
        BudgetValidationError,
        "estimation_safety_margin_percent",
    ),
    "composite weight": (
        lambda: CompositeScorer([(KindScorer(), HUGE)]),
        ScorerConfigError,
        "entries[0].weight",
    ),
    "kind weight": (lambda: KindScorer({"Message": HUGE}), ScorerConfigError, "Message"),
    "tag weight": (lambda: TagScorer({"t": HUGE}), ScorerConfigError, "weights['t']"),
    "metadata-key boost": (
        lambda: MetadataKeyScorer("k", "v", HUGE),
        ScorerConfigError,
        "boost",
    ),
    "trust default": (lambda: MetadataTrustScorer(HUGE), ScorerConfigError, "default_score"),
    "quota require": (
        lambda: QuotaSlice([QuotaEntry("Message", require=HUGE)]),
        SlicerConfigError,
        "require",
    ),
    "quota cap": (
        lambda: QuotaSlice([QuotaEntry("Message", cap=-HUGE)]),
        SlicerConfigError,
        "cap",
    ),
}


@pytest.mark.parametrize("case", sorted(HUGE_FLOAT_FIELDS))
def test_huge_integers_in_float_fields_are_refused_by_name(case: str) -> None:
    build, error, field = HUGE_FLOAT_FIELDS[case]
    with pytest.raises(error) as caught:
        build()
    assert field in caught.value.field
    assert caught.value.value in (HUGE, -HUGE)
    assert "float64" in caught.value.rule


def test_an_integer_too_long_to_print_still_gives_a_readable_message() -> None:
    # Python refuses str() of ints over 4,300 digits; the message must not hit that limit.
    with pytest.raises(ItemValidationError) as caught:
        ContextItem("x", tokens=1, future_relevance_hint=10**5000)
    assert "future_relevance_hint" in str(caught.value)
    assert "digits" in str(caught.value)


# --------------------------------------------------------------------------- decay curves


def test_step_decay_accepts_the_largest_timedelta() -> None:
    curve = StepDecay([(timedelta(days=1), 1.0), (timedelta.max, 0.5)])
    scorer = DecayScorer(FixedClock(NOW), curve)
    young = ContextItem("young", tokens=1, timestamp=NOW - timedelta(hours=1))
    old = ContextItem("old", tokens=1, timestamp=datetime(1, 1, 1, tzinfo=UTC))
    assert scorer.score_all([young, old]) == [1.0, 0.5]
    assert curve.score_age(timedelta.max) == 0.5
    assert StepDecay([(timedelta.max, 0.25)]).score_age(timedelta(0)) == 0.25


def test_window_decay_accepts_the_largest_timedelta() -> None:
    curve = WindowDecay(timedelta.max)
    oldest = ContextItem("old", tokens=1, timestamp=datetime(1, 1, 1, tzinfo=UTC))
    assert DecayScorer(FixedClock(NOW), curve).score_all([oldest]) == [1.0]
    assert curve.score_age(timedelta.max) == 0.0
    assert ExponentialDecay(timedelta.max).score_age(timedelta(days=365)) > 0.99


# --------------------------------------------------------------------------- function scorers


@pytest.mark.parametrize(
    "returned",
    [None, [0.5], 0.5j, HUGE, "abc", "0.5", Decimal("0.5"), True, np.bool_(True), object()],
    ids=repr,
)
def test_a_function_scorer_must_return_a_real_number(returned: object) -> None:
    def answer(item: ContextItem) -> float:
        return returned  # type: ignore[return-value]

    with pytest.raises(ScorerConfigError) as caught:
        run(FunctionScorer(answer))
    assert "answer" in caught.value.field
    assert caught.value.value is returned
    assert "real number" in caught.value.rule


@pytest.mark.parametrize(
    "returned", [0, 1, 0.25, Fraction(1, 4), np.float32(0.25), np.int64(1)], ids=repr
)
def test_real_numbers_of_any_numeric_type_are_scores(returned: object) -> None:
    scorer = FunctionScorer(lambda item: returned)  # type: ignore[arg-type, return-value]
    expected = float(returned)  # type: ignore[arg-type]
    assert scorer.score_all([ContextItem("a", tokens=1)]) == [expected]


def test_a_custom_score_all_must_return_real_numbers() -> None:
    class Texts:
        def score_all(self, items: Sequence[ContextItem]) -> list[object]:
            return ["0.5" for _ in items]

    with pytest.raises(ScorerConfigError) as caught:
        run(Texts())
    assert caught.value.field == "Texts.score_all(items)[0]"
    assert "real number" in caught.value.rule


def test_a_custom_score_all_returning_a_huge_integer_is_refused() -> None:
    class Huge:
        def score_all(self, items: Sequence[ContextItem]) -> list[object]:
            return [HUGE for _ in items]

    with pytest.raises(ScorerConfigError, match=r"Huge\.score_all\(items\)\[0\]"):
        run(Huge())


@pytest.mark.parametrize(
    "function",
    [lambda a, b: 0.5, lambda: 0.5, lambda *, item: 0.5],
    ids=["two arguments", "no argument", "keyword only"],
)
def test_a_function_that_cannot_take_one_item_is_refused_at_construction(
    function: Callable[..., float],
) -> None:
    with pytest.raises(ScorerConfigError) as caught:
        as_scorer(function)
    assert "one positional argument" in caught.value.rule
    with pytest.raises(CupelError, match="scorer: must be"):
        Pipeline(budget=BUDGET, scorer=function)


@pytest.mark.parametrize(
    "function",
    [lambda item, extra=1: 0.5, lambda *items: 0.5, len],
    ids=["optional second", "varargs", "builtin len"],
)
def test_functions_callable_with_one_item_are_accepted(function: Callable[..., float]) -> None:
    assert isinstance(as_scorer(function), FunctionScorer)


@pytest.mark.parametrize("cls", [KindScorer, PriorityScorer, CompositeScorer])
def test_a_scorer_class_instead_of_an_instance_is_refused(cls: type) -> None:
    with pytest.raises(ScorerConfigError) as caught:
        as_scorer(cls)
    assert caught.value.value is cls
    assert f"an instance such as {cls.__name__}(...)" in caught.value.rule
    with pytest.raises(ScorerConfigError, match=r"^inner: "):
        ScaledScorer(cls)
    with pytest.raises(ScorerConfigError, match=r"^entries\[0\]\.scorer: "):
        CompositeScorer([(cls, 1.0)])


@pytest.mark.parametrize("cls", [GreedySlice, KnapsackSlice])
def test_a_slicer_class_as_an_inner_slicer_is_refused(cls: type) -> None:
    with pytest.raises(SlicerConfigError) as caught:
        QuotaSlice([QuotaEntry("Message", 10, 60)], cls)
    assert caught.value.value is cls
    assert "instance" in caught.value.rule


# ----------------------------------------------------------------- slicers called directly


def all_slicers() -> dict[str, Slicer]:
    return {
        "greedy": GreedySlice(),
        "knapsack": KnapsackSlice(),
        "quota": QuotaSlice([QuotaEntry("Message", 0, 100)]),
        "count-quota": CountQuotaSlice([CountQuotaEntry("Message", 0, 5)]),
        "count-knapsack": CountConstrainedKnapsackSlice([CountQuotaEntry("Message", 0, 5)]),
        "packer": PackerSlice(None),
        "optimal": OptimalSlice(),
    }


SLICER_NAMES = sorted(all_slicers())
ITEM = ContextItem("a", tokens=10)


@pytest.mark.parametrize("name", SLICER_NAMES)
@pytest.mark.parametrize("items", [None, "abc", 5, {ScoredItem(ITEM, 0.5)}], ids=repr)
def test_slicers_refuse_a_non_sequence(name: str, items: object) -> None:
    with pytest.raises(SliceInputError) as caught:
        all_slicers()[name].slice(items, BUDGET)  # type: ignore[arg-type]
    assert caught.value.field == "items"
    assert "sequence of ScoredItem" in caught.value.rule


@pytest.mark.parametrize("name", SLICER_NAMES)
@pytest.mark.parametrize("element", [1, ITEM, (ITEM,), None], ids=repr)
def test_slicers_refuse_elements_that_are_not_scored_items(name: str, element: object) -> None:
    items = [ScoredItem(ITEM, 0.5), element]
    with pytest.raises(SliceInputError) as caught:
        all_slicers()[name].slice(items, BUDGET)  # type: ignore[arg-type]
    assert caught.value.field == "items[1]"
    assert "must be a ScoredItem" in caught.value.rule


@pytest.mark.parametrize("name", SLICER_NAMES)
@pytest.mark.parametrize("score", [None, "0.5", Decimal("0.5"), [0.5], True], ids=repr)
def test_slicers_refuse_scores_that_are_not_real_numbers(name: str, score: object) -> None:
    with pytest.raises(SliceInputError) as caught:
        all_slicers()[name].slice([ScoredItem(ITEM, score)], BUDGET)  # type: ignore[arg-type]
    assert caught.value.field == "items[0].score"
    assert caught.value.value is score
    assert "real number" in caught.value.rule


@pytest.mark.parametrize("name", SLICER_NAMES)
def test_slicers_refuse_an_item_that_is_not_a_context_item(name: str) -> None:
    with pytest.raises(SliceInputError) as caught:
        all_slicers()[name].slice([ScoredItem("text", 0.5)], BUDGET)  # type: ignore[arg-type]
    assert caught.value.field == "items[0].item"


@pytest.mark.parametrize("name", SLICER_NAMES)
def test_slicers_accept_numpy_and_integer_scores(name: str) -> None:
    items = [ScoredItem(ITEM, np.float64(0.5)), ScoredItem(ContextItem("b", tokens=5), 1)]
    result = all_slicers()[name].slice(items, BUDGET)
    assert {item.content for item in result.selected} == {"a", "b"}


# --------------------------------------------------------------------------- nesting depth


def nested(depth: int, wrap: Callable[[object], object]) -> object:
    scorer: object = KindScorer()
    for _ in range(depth):
        scorer = wrap(scorer)
    return scorer


WRAPPERS: dict[str, Callable[[object], object]] = {
    "composite": lambda inner: CompositeScorer([(inner, 1.0)]),  # type: ignore[list-item]
    "scaled": ScaledScorer,  # type: ignore[dict-item]
    "alternating": lambda inner: (
        ScaledScorer(inner)  # type: ignore[arg-type]
        if isinstance(inner, CompositeScorer)
        else CompositeScorer([(inner, 1.0)])  # type: ignore[list-item]
    ),
}


@pytest.mark.parametrize("how", sorted(WRAPPERS))
def test_nesting_is_bounded_at_construction(how: str) -> None:
    deepest = nested(MAX_SCORER_NESTING, WRAPPERS[how])
    # The deepest allowed scorer runs, prints and pickles.
    assert len(run(deepest)) == 1
    assert repr(deepest).count("(") > MAX_SCORER_NESTING
    assert repr(pickle.loads(pickle.dumps(deepest))) == repr(deepest)
    with pytest.raises(ScorerConfigError) as caught:
        WRAPPERS[how](deepest)
    assert f"at most {MAX_SCORER_NESTING}" in caught.value.rule
    assert caught.value.field in {"inner", "entries[0].scorer"}


def test_nesting_depth_counts_the_deepest_branch() -> None:
    shallow = KindScorer()
    deep = nested(MAX_SCORER_NESTING - 1, WRAPPERS["scaled"])
    # One more level over the deep branch is allowed; a second is not.
    top = CompositeScorer([(shallow, 1.0), (deep, 1.0)])  # type: ignore[list-item]
    with pytest.raises(ScorerConfigError):
        ScaledScorer(top)


def test_a_shared_child_is_not_counted_exponentially() -> None:
    # A diamond-shaped graph (the same child twice at every level) stays cheap to check.
    scorer: object = KindScorer()
    for _ in range(MAX_SCORER_NESTING):
        scorer = CompositeScorer([(scorer, 1.0), (scorer, 2.0)])  # type: ignore[list-item]
    assert isinstance(scorer, CompositeScorer)


# --------------------------------------------------------------------------- model helpers


@pytest.mark.parametrize("budget", [None, 5, "budget"], ids=repr)
def test_compute_effective_budget_needs_a_budget(budget: object) -> None:
    with pytest.raises(BudgetValidationError) as caught:
        compute_effective_budget(budget, 5)  # type: ignore[arg-type]
    assert caught.value.field == "budget"
    assert "must be a ContextBudget" in caught.value.rule


class _TextOffset(tzinfo):
    def utcoffset(self, dt: datetime | None) -> timedelta:
        return "+01:00"  # type: ignore[return-value]

    def dst(self, dt: datetime | None) -> timedelta | None:
        return None


class _HugeOffset(tzinfo):
    def utcoffset(self, dt: datetime | None) -> timedelta:
        return timedelta(days=2)

    def dst(self, dt: datetime | None) -> timedelta | None:
        return None


@pytest.mark.parametrize("zone", [_TextOffset(), _HugeOffset()], ids=type)
def test_a_broken_tzinfo_is_an_item_error(zone: tzinfo) -> None:
    with pytest.raises(ItemValidationError) as caught:
        ContextItem("x", tokens=1, timestamp=datetime(2024, 1, 1, tzinfo=zone))
    assert caught.value.field == "timestamp"
    assert "utcoffset" in caught.value.rule


# --------------------------------------------------------------------------- kinds and sources


@pytest.mark.parametrize("cls", [ContextKind, ContextSource])
def test_equal_names_hash_equal(cls: type[ContextKind] | type[ContextSource]) -> None:
    upper, lower = cls("Memory"), cls("memory")
    assert upper == lower
    assert hash(upper) == hash(lower)
    assert lower in {upper}
    # A name never equals a plain string, so equality and hashing cannot disagree.
    assert upper != "Memory"
    assert upper not in {"Memory"}
    assert upper.key in {"memory"}
