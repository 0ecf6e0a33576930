"""QuotaSlice: validation, budget distribution, the edge-case table, delegation."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pytest

from pycupel.errors import SliceInputError, SlicerConfigError
from pycupel.model import ContextBudget, ContextKind, ScoredItem
from pycupel.slicers import (
    CountQuotaEntry,
    CountQuotaSlice,
    GreedySlice,
    KnapsackSlice,
    QuotaEntry,
    QuotaSlice,
    Slicer,
    SliceResult,
)
from pycupel.slicers.base import TokenRequirementShortfall

from .helpers import budget, cap_records, scored, selected


class Spy:
    """An inner slicer that records what it was given and selects everything."""

    __slots__ = ("calls",)

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], ContextBudget]] = []

    @property
    def budget_monotonic(self) -> bool:
        return True

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        self.calls.append(([s.item.content for s in items], budget))
        return SliceResult.of(s.item for s in items)


# --------------------------------------------------------------------------- QuotaEntry


def test_entry_defaults_and_value_semantics() -> None:
    entry = QuotaEntry("message")
    assert (entry.kind, entry.require, entry.cap) == (ContextKind.MESSAGE, 0.0, 100.0)
    assert entry == QuotaEntry(ContextKind.MESSAGE, 0, 100)
    assert hash(entry) == hash(QuotaEntry("MESSAGE"))
    assert repr(QuotaEntry("Tool", 10, 50)) == "QuotaEntry('Tool', require=10.0, cap=50.0)"
    with pytest.raises(AttributeError):
        entry.cap = 3.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"require": -1.0}, "require: must be >= 0, got -1.0"),
        ({"require": 100.5}, "require: must be <= 100, got 100.5"),
        ({"cap": 101}, "cap: must be <= 100, got 101"),
        ({"require": math.nan}, "require: must be finite, got nan"),
        ({"cap": math.inf}, "cap: must be finite, got inf"),
        ({"require": "10"}, "require: must be a number, got '10'"),
        ({"require": True}, "require: must be a number, got True"),
        (
            {"require": 60.0, "cap": 50.0},
            "require: must be <= cap (50.0) for kind 'Message', got 60.0",
        ),
    ],
)
def test_entry_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SlicerConfigError) as info:
        QuotaEntry("Message", **kwargs)  # type: ignore[arg-type]
    assert str(info.value) == message


@pytest.mark.parametrize("kind", ["", "   ", 5, None])
def test_entry_kind_validation(kind: object) -> None:
    with pytest.raises(SlicerConfigError, match=r"^kind: "):
        QuotaEntry(kind)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- QuotaSlice config


def test_slice_configuration() -> None:
    entries = [QuotaEntry("Message", 10, 50)]
    slicer = QuotaSlice(entries)
    assert slicer.quotas == tuple(entries)
    assert isinstance(slicer.inner, GreedySlice)
    assert isinstance(slicer, Slicer)
    assert slicer.budget_monotonic is False
    assert repr(slicer) == (
        "QuotaSlice([QuotaEntry('Message', require=10.0, cap=50.0)], inner=GreedySlice())"
    )
    assert not hasattr(slicer, "__dict__")
    knapsack = KnapsackSlice(10)
    assert QuotaSlice([], knapsack).inner is knapsack


def test_duplicate_kinds_are_rejected_case_insensitively() -> None:
    with pytest.raises(SlicerConfigError) as info:
        QuotaSlice([QuotaEntry("Message"), QuotaEntry("MESSAGE")])
    assert str(info.value) == (
        "quotas[1].kind: must not repeat a kind (kinds compare case-insensitively), got 'MESSAGE'"
    )


def test_requires_must_sum_to_at_most_100() -> None:
    with pytest.raises(SlicerConfigError) as info:
        QuotaSlice([QuotaEntry("a", 60), QuotaEntry("b", 40.5)])
    assert str(info.value) == "quotas: the require percentages must sum to at most 100, got 100.5"
    QuotaSlice([QuotaEntry("a", 60), QuotaEntry("b", 40)])  # exactly 100 is fine


@pytest.mark.parametrize("quotas", [5, "Message", {"Message": 10}, None])
def test_quotas_must_be_an_iterable_of_entries(quotas: object) -> None:
    with pytest.raises(SlicerConfigError, match=r"^quotas: must be an iterable of QuotaEntry"):
        QuotaSlice(quotas)  # type: ignore[arg-type]


def test_entries_must_be_quota_entries() -> None:
    with pytest.raises(SlicerConfigError, match=r"^quotas\[1\]: must be a QuotaEntry"):
        QuotaSlice([QuotaEntry("a"), ("b", 10, 20)])  # type: ignore[list-item]


def test_inner_must_be_a_slicer() -> None:
    with pytest.raises(SlicerConfigError, match=r"^inner: must be a slicer"):
        QuotaSlice([], inner="greedy")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- distribution


def _basic_items() -> list[ScoredItem]:
    return [
        scored("sys-a", 200, 0.9, "SystemPrompt"),
        scored("msg-a", 300, 0.8, "Message"),
        scored("doc-a", 200, 0.7, "Document"),
        scored("sys-b", 200, 0.5, "SystemPrompt"),
        scored("msg-b", 300, 0.3, "Message"),
    ]


def test_kind_budgets_follow_the_specification() -> None:
    slicer = QuotaSlice([QuotaEntry("SystemPrompt", 30, 50), QuotaEntry("Message", 0, 40)])
    budgets = slicer.kind_budgets(_basic_items(), 1000)
    assert list(budgets.items()) == [
        (ContextKind.SYSTEM_PROMPT, 500),  # 300 + floor(700 * 400 / 1200) = 533, capped at 500
        (ContextKind.MESSAGE, 350),  # floor(700 * 600 / 1200)
        (ContextKind.DOCUMENT, 116),  # floor(700 * 200 / 1200)
    ]


def test_kind_budgets_validates_the_target() -> None:
    with pytest.raises(SlicerConfigError, match="target_tokens"):
        QuotaSlice([]).kind_budgets([], -1)


def test_floor_rounding_leaves_tokens_unallocated() -> None:
    items = [scored("a", 100, 0.9, "A"), scored("b", 100, 0.8, "B")]
    slicer = QuotaSlice([QuotaEntry("A", 33, 100), QuotaEntry("B", 33, 100)])
    budgets = slicer.kind_budgets(items, 1000)
    # 330 each required; the remaining 340 split by equal mass: floor(340 * 100 / 200) = 170.
    assert list(budgets.values()) == [500, 500]
    odd = slicer.kind_budgets(items, 999)
    # floor(0.33 * 999) = 329 each; remaining 341 → floor(341 / 2) = 170 each.
    assert list(odd.values()) == [499, 499]
    assert sum(odd.values()) < 999


def test_inner_receives_cap_as_max_and_kind_budget_as_target() -> None:
    spy = Spy()
    slicer = QuotaSlice([QuotaEntry("SystemPrompt", 30, 50), QuotaEntry("Message", 0, 40)], spy)
    result = slicer.slice(_basic_items(), budget(1000))
    assert spy.calls == [
        (["sys-a", "sys-b"], ContextBudget(max_tokens=500, target_tokens=500)),
        (["msg-a", "msg-b"], ContextBudget(max_tokens=400, target_tokens=350)),
        (["doc-a"], ContextBudget(max_tokens=1000, target_tokens=116)),
    ]
    # Partitions are concatenated in order of first appearance.
    assert selected(result) == ["sys-a", "sys-b", "msg-a", "msg-b", "doc-a"]


def test_public_example_with_greedy() -> None:
    slicer = QuotaSlice([QuotaEntry("SystemPrompt", 30, 50), QuotaEntry("Message", 0, 40)])
    assert sorted(selected(slicer.slice(_basic_items(), budget(1000)))) == [
        "msg-a",
        "sys-a",
        "sys-b",
    ]


# --------------------------------------------------------------------------- edge-case table


def test_empty_input() -> None:
    spy = Spy()
    assert QuotaSlice([QuotaEntry("a", 50)], spy).slice([], budget(100)).selected == ()
    assert spy.calls == []


def test_non_positive_target() -> None:
    spy = Spy()
    items = [scored("a", 0, 0.5)]
    assert QuotaSlice([], spy).slice(items, budget(0)).selected == ()
    assert spy.calls == []


def test_no_quotas_gives_proportional_budgets() -> None:
    items = [
        scored("m1", 300, 0.9, "Message"),
        scored("m2", 300, 0.8, "Message"),
        scored("d1", 400, 0.7, "Document"),
        scored("d2", 100, 0.6, "Document"),
    ]
    slicer = QuotaSlice([])
    assert list(slicer.kind_budgets(items, 1000).values()) == [545, 454]
    assert selected(slicer.slice(items, budget(1000))) == ["m1", "d2"]


def test_require_100_takes_the_whole_budget() -> None:
    items = [scored("m1", 100, 0.9, "Message"), scored("d1", 300, 0.5, "Document")]
    spy = Spy()
    slicer = QuotaSlice([QuotaEntry("Document", 100, 100)], spy)
    assert list(slicer.kind_budgets(items, 1000).values()) == [0, 1000]
    assert selected(slicer.slice(items, budget(1000))) == ["d1"]
    assert [call[0] for call in spy.calls] == [["d1"]]


def test_cap_zero_excludes_the_kind() -> None:
    items = [scored("m1", 100, 0.9, "Message"), scored("d1", 100, 0.5, "Document")]
    slicer = QuotaSlice([QuotaEntry("Message", 0, 0)])
    assert list(slicer.kind_budgets(items, 1000).values()) == [0, 1000]
    assert selected(slicer.slice(items, budget(1000))) == ["d1"]


def test_zero_mass_kind_gets_only_its_require() -> None:
    items = [
        scored("m1", 500, 0.9, "Message"),
        scored("z1", 0, 0.2, "Memory"),
        scored("z2", 0, 0.1, "Memory"),
    ]
    with_require = QuotaSlice([QuotaEntry("Memory", 10, 20)])
    assert list(with_require.kind_budgets(items, 1000).values()) == [900, 100]
    assert selected(with_require.slice(items, budget(1000))) == ["m1", "z1", "z2"]
    without = QuotaSlice([])
    assert list(without.kind_budgets(items, 1000).values()) == [1000, 0]
    assert selected(without.slice(items, budget(1000))) == ["m1"]


def test_kind_without_candidates_still_consumes_its_require() -> None:
    items = [scored("m1", 400, 0.9, "Message"), scored("m2", 400, 0.8, "Message")]
    slicer = QuotaSlice([QuotaEntry("ToolOutput", 50, 100)])
    assert slicer.kind_budgets(items, 1000) == {ContextKind.MESSAGE: 500}
    assert selected(slicer.slice(items, budget(1000))) == ["m1"]


def test_kinds_are_case_insensitive() -> None:
    items = [
        scored("a", 200, 0.9, "Message"),
        scored("b", 200, 0.8, "MESSAGE"),
        scored("c", 200, 0.1, "Document"),
    ]
    slicer = QuotaSlice([QuotaEntry("message", 0, 30)])
    assert list(slicer.kind_budgets(items, 1000).values()) == [300, 333]
    assert selected(slicer.slice(items, budget(1000))) == ["a", "c"]


# --------------------------------------------------------------------------- results


def test_inner_shortfalls_and_cap_exclusions_are_merged() -> None:
    inner = CountQuotaSlice([CountQuotaEntry("tool", 2, 2), CountQuotaEntry("memory", 0, 1)])
    items = [
        scored("t1", 100, 0.9, "tool"),
        scored("m1", 100, 0.8, "memory"),
        scored("m2", 100, 0.7, "memory"),
    ]
    result = QuotaSlice([], inner).slice(items, budget(1000))
    assert selected(result) == ["t1", "m1"]
    # tool partition: 1 of 2 committed; memory partition: 0 of 2 tools → two shortfalls.
    assert [(s.kind.value, s.required_count, s.satisfied_count) for s in result.shortfalls] == [
        ("tool", 2, 1),
        ("tool", 2, 0),
    ]
    # memory partition: the inner count slicer picked m1 and m2 against a cap of 1.
    assert cap_records(result) == [("m2", 1, 2)]


def test_negative_tokens_are_rejected_with_the_input_position() -> None:
    items = [scored("a", 10, 0.9, "A"), scored("b", -5, 0.5, "B")]
    with pytest.raises(SliceInputError, match=r"items\[1\]\.item\.tokens"):
        QuotaSlice([]).slice(items, budget(100))


# --------------------------------------------------------------------------- distribution edges


def test_a_kind_held_at_its_require_takes_no_share_of_the_remainder() -> None:
    # Memory's cap equals its require: its mass must not dilute the others' shares.
    slicer = QuotaSlice([QuotaEntry("Memory", 20, 20)])
    items = [scored("m", 100, 0.9, "Memory"), scored("x", 100, 0.5, "Message")]
    assert list(slicer.kind_budgets(items, 100).values()) == [20, 80]


def test_a_zero_mass_partition_gets_no_proportional_share() -> None:
    zero = [scored("z1", 0, 0.9), scored("z2", 0, 0.1)]
    assert QuotaSlice([]).kind_budgets(zero, 100) == {ContextKind.MESSAGE: 0}
    assert QuotaSlice([QuotaEntry("Message", 5)]).kind_budgets(zero, 100) == {
        ContextKind.MESSAGE: 5
    }


def test_a_one_token_target_and_a_one_token_mass_are_shared() -> None:
    one = [scored("a", 1, 0.5)]
    assert QuotaSlice([]).kind_budgets(one, 100) == {ContextKind.MESSAGE: 100}
    assert QuotaSlice([]).kind_budgets(one, 1) == {ContextKind.MESSAGE: 1}
    assert QuotaSlice([]).kind_budgets(one, 0) == {ContextKind.MESSAGE: 0}
    assert selected(QuotaSlice([]).slice(one, budget(1))) == ["a"]


def test_inner_token_shortfalls_are_passed_on() -> None:
    shortfall = TokenRequirementShortfall(ContextKind.MEMORY, 50, 10)

    class Short:
        @property
        def budget_monotonic(self) -> bool:
            return False

        def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
            return SliceResult((items[0].item,), token_shortfalls=(shortfall,))

    items = [scored("m", 10, 0.9, "Memory"), scored("x", 10, 0.5, "Message")]
    result = QuotaSlice([], Short()).slice(items, budget(100))
    assert selected(result) == ["m", "x"]
    assert result.token_shortfalls == (shortfall, shortfall)


# --------------------------------------------------------------------------- what errors carry


def test_configuration_errors_carry_field_value_and_rule() -> None:
    cases: list[tuple[Callable[[], object], str, object, str]] = [
        (lambda: QuotaEntry("Memory", cap=-1), "cap", -1, "must be >= 0"),
        (lambda: QuotaSlice(7), "quotas", 7, "must be an iterable of QuotaEntry"),  # type: ignore[arg-type]
        (
            lambda: QuotaSlice([QuotaEntry("Memory"), "Message"]),  # type: ignore[list-item]
            "quotas[1]",
            "Message",
            "must be a QuotaEntry",
        ),
        (
            lambda: QuotaSlice([]).kind_budgets([], -1),
            "target_tokens",
            -1,
            "must be >= 0",
        ),
    ]
    for build, field, value, rule in cases:
        with pytest.raises(SlicerConfigError) as info:
            build()
        assert (info.value.field, info.value.value, info.value.rule) == (field, value, rule)


def test_a_negative_token_count_is_named_with_its_value() -> None:
    items = [scored("a", 10, 0.9, "A"), scored("b", -5, 0.5, "B")]
    with pytest.raises(SliceInputError) as info:
        QuotaSlice([]).slice(items, budget(100))
    assert (info.value.field, info.value.value) == ("items[1].item.tokens", -5)


def test_repr_lists_every_entry() -> None:
    slicer = QuotaSlice([QuotaEntry("Memory", 10, 50), QuotaEntry("Message", cap=60)])
    assert repr(slicer) == (
        "QuotaSlice([QuotaEntry('Memory', require=10.0, cap=50.0), "
        "QuotaEntry('Message', require=0.0, cap=60.0)], inner=GreedySlice())"
    )
