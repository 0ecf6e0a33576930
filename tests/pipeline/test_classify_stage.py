"""Stage 1 (classify) on its own: the plain fast path, the per-item split and its errors."""

from __future__ import annotations

import pytest

from pycupel.errors import PinnedBudgetError, PipelineConfigError
from pycupel.model import ContextBudget, ContextItem
from pycupel.pipeline.classify import check_no_repeats, classify

BUDGET = ContextBudget(max_tokens=100, target_tokens=80, output_reserve=10)


def test_plain_candidates_are_passed_through_as_they_are() -> None:
    # zero-token items are still plain: only negative ones leave the fast path
    candidates = [ContextItem("a", tokens=0), ContextItem("b", tokens=5)]
    scoreable, pinned, negative, pinned_tokens, plain = classify(candidates, BUDGET)
    assert plain is True
    assert scoreable is candidates
    assert (pinned, negative, pinned_tokens) == ([], [], 0)


def test_empty_candidates_are_not_plain() -> None:
    scoreable, pinned, negative, pinned_tokens, plain = classify([], BUDGET)
    assert plain is False
    assert (list(scoreable), pinned, negative, pinned_tokens) == ([], [], [], 0)


def test_mixed_candidates_split_in_input_order() -> None:
    a = ContextItem("a", tokens=3)
    minus = ContextItem("minus", tokens=-2)
    pin = ContextItem("pin", tokens=40, pinned=True)
    minus_pin = ContextItem("minus pin", tokens=-1, pinned=True)
    b = ContextItem("b", tokens=0)
    pin2 = ContextItem("pin2", tokens=50, pinned=True)
    scoreable, pinned, negative, pinned_tokens, plain = classify(
        [a, minus, pin, minus_pin, b, pin2], BUDGET
    )
    assert plain is False
    assert list(scoreable) == [a, b]
    assert pinned == [pin, pin2]
    assert negative == [minus, minus_pin]  # negative first, even when pinned
    assert pinned_tokens == 90


def test_pinned_over_the_budget_less_the_reserve_is_refused() -> None:
    pins = [ContextItem("p", tokens=45, pinned=True), ContextItem("q", tokens=46, pinned=True)]
    with pytest.raises(PinnedBudgetError):
        classify(pins, BUDGET)


class TaggedItem(ContextItem):
    """A ContextItem subclass: still an item, just not the plain type."""

    __slots__ = ()


def test_subclass_items_are_accepted_off_the_fast_path() -> None:
    item = TaggedItem("sub", tokens=2)
    scoreable, _, _, _, plain = classify([item, ContextItem("x", tokens=1)], BUDGET)
    assert plain is False
    assert [*scoreable] == [item, scoreable[1]]
    assert scoreable[0] is item


def test_a_non_item_is_rejected_naming_its_position_and_value() -> None:
    bad = {"content": "x"}
    with pytest.raises(PipelineConfigError) as info:
        classify([ContextItem("a", tokens=1), bad], BUDGET)  # type: ignore[list-item]
    assert info.value.field == "items[1]"
    assert info.value.value is bad
    assert info.value.rule == "must be a ContextItem"


def test_a_repeated_object_is_rejected_naming_both_positions() -> None:
    pin = ContextItem("pin", tokens=1, pinned=True)
    with pytest.raises(PipelineConfigError) as info:
        classify([pin, ContextItem("a", tokens=1), pin], BUDGET)
    assert info.value.field == "items[2]"
    assert info.value.value is pin
    assert "same object as items[0]" in info.value.rule
    assert "item.replace() makes a distinct copy" in info.value.rule
    check_no_repeats([pin, ContextItem("a", tokens=1)])  # distinct objects pass
