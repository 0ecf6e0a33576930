"""SystemFirstPlacer: pinned system prompts open the window; the rest keeps the inner order."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from pycupel import ContextBudget, Pipeline, presets
from pycupel.cli import main
from pycupel.errors import PipelineConfigError, PlacerConfigError
from pycupel.model import ContextItem, ScoredItem
from pycupel.placers import ChronologicalPlacer, Placer, SystemFirstPlacer, UShapedPlacer
from pycupel.scorers import PriorityScorer

BASE = datetime(2026, 1, 1, tzinfo=UTC)
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-chat.json"


def system(content: str = "You are terse.", *, pinned: bool = True) -> ContextItem:
    return ContextItem(content, tokens=5, kind="SystemPrompt", pinned=pinned)


def turn(content: str, minutes: int, *, pinned: bool = False) -> ContextItem:
    return ContextItem(
        content, tokens=5, timestamp=BASE + timedelta(minutes=minutes), pinned=pinned
    )


def contents(items: list[ContextItem]) -> list[str]:
    return [item.content for item in items]


def test_chronological_alone_puts_the_undated_system_prompt_last() -> None:
    # The specification's order, which SystemFirstPlacer exists to change.
    entries = [
        ScoredItem(system(), 1.0),
        ScoredItem(turn("b", 2), 0.5),
        ScoredItem(turn("a", 1), 0.9),
    ]
    assert contents(ChronologicalPlacer().place(entries)) == ["a", "b", "You are terse."]
    placed = SystemFirstPlacer().place(entries)
    assert contents(placed) == ["You are terse.", "a", "b"]


def test_u_shaped_inner_keeps_every_pinned_system_prompt_in_front_in_merge_order() -> None:
    entries = [
        ScoredItem(system("rules"), 1.0),
        ScoredItem(system("persona"), 1.0),
        ScoredItem(turn("x", 1), 0.9),
        ScoredItem(turn("y", 2), 0.1),
    ]
    assert contents(UShapedPlacer().place(entries))[-1] == "persona"
    placed = SystemFirstPlacer(UShapedPlacer()).place(entries)
    assert contents(placed) == ["rules", "persona", "x", "y"]


def test_unpinned_system_prompts_and_other_pinned_items_follow_the_inner_order() -> None:
    entries = [
        ScoredItem(turn("pinned note", 5, pinned=True), 1.0),
        ScoredItem(system("loose", pinned=False), 0.2),
        ScoredItem(turn("a", 1), 0.9),
    ]
    inner = ChronologicalPlacer().place(entries)
    assert SystemFirstPlacer().place(entries) == inner


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 50), st.floats(0, 1)), max_size=12))
def test_order_is_the_inner_order_after_the_system_prompts(
    rows: list[tuple[bool, int, float]],
) -> None:
    entries = [
        ScoredItem(system(f"s{n}") if is_system else turn(f"t{n}", minutes), score)
        for n, (is_system, minutes, score) in enumerate(rows)
    ]
    placed = SystemFirstPlacer(UShapedPlacer()).place(entries)
    leading = [entry.item for entry in entries if entry.item.kind.value == "SystemPrompt"]
    rest = [entry for entry in entries if entry.item.kind.value != "SystemPrompt"]
    assert placed == leading + UShapedPlacer().place(rest)


class Reversing:
    """A placer that is not a ColumnPlacer: the wrapper must go through place()."""

    def place(self, items: list[ScoredItem]) -> list[ContextItem]:
        return [entry.item for entry in reversed(items)]


class Dropping:
    def place(self, items: list[ScoredItem]) -> list[ContextItem]:
        return [entry.item for entry in items[1:]]


def test_any_placer_can_be_wrapped_and_a_broken_one_is_caught() -> None:
    entries = [
        ScoredItem(turn("a", 1), 0.5),
        ScoredItem(system(), 1.0),
        ScoredItem(turn("b", 2), 0.5),
    ]
    assert contents(SystemFirstPlacer(Reversing()).place(entries)) == ["You are terse.", "b", "a"]
    with pytest.raises(PlacerConfigError, match=r"Dropping\.place: must return exactly"):
        SystemFirstPlacer(Dropping()).place(entries)


def test_configuration_is_checked_immutable_and_comparable() -> None:
    with pytest.raises(PlacerConfigError, match="inner: must be a placer"):
        SystemFirstPlacer("chronological")  # type: ignore[arg-type]
    placer = SystemFirstPlacer(UShapedPlacer())
    with pytest.raises(AttributeError):
        placer._inner = ChronologicalPlacer()  # type: ignore[misc]
    assert SystemFirstPlacer(placer) == placer  # wrapping twice wraps once
    assert SystemFirstPlacer() == SystemFirstPlacer(ChronologicalPlacer())
    assert hash(SystemFirstPlacer()) == hash(SystemFirstPlacer(ChronologicalPlacer()))
    assert repr(placer) == "SystemFirstPlacer(UShapedPlacer())"
    assert isinstance(placer, Placer)


def test_the_pipeline_and_the_policy_keep_the_system_prompt_first() -> None:
    items = [turn("old", 1), system(), turn("new", 2)]
    budget = ContextBudget(max_tokens=100, target_tokens=100)
    spec_order = presets.chat().build(budget).run(items).items
    assert contents(list(spec_order))[-1] == "You are terse."
    first = presets.chat().build(budget, system_first=True)
    assert isinstance(first.placer, SystemFirstPlacer)
    assert contents(list(first.run(items).items)) == ["You are terse.", "old", "new"]
    # The pipeline's column path and the placer's own place() agree.
    pipeline = Pipeline(budget=budget, scorer=PriorityScorer(), placer=SystemFirstPlacer())
    dry = pipeline.dry_run(items)
    assert dry.items == tuple(
        pipeline.placer.place([ScoredItem(i, 1.0 if i.pinned else 0.5) for i in items])
    )
    with pytest.raises(PipelineConfigError, match="system_first"):
        presets.chat().build(budget, system_first="yes")  # type: ignore[arg-type]


def _selected_kinds(*args: str) -> list[str]:
    result = CliRunner().invoke(main, ["select", str(EXAMPLE), "--budget", "1200", "--json", *args])
    assert result.exit_code == 0, result.output
    return [item["kind"] for item in json.loads(result.output)["items"]]


def test_the_cli_keeps_the_system_prompt_first_by_default() -> None:
    assert _selected_kinds()[0] == "SystemPrompt"
    assert _selected_kinds("--preset", "chat")[0] == "SystemPrompt"
    # The specification's chronological order: dated items first, the undated ones after.
    spec_order = _selected_kinds("--no-system-first")
    assert spec_order[0] != "SystemPrompt"
    assert "SystemPrompt" in spec_order
