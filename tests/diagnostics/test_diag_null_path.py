"""The disabled path builds no diagnostic object and does no diagnostic work."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest
from diag_helpers import CustomSlice, item, make_pipeline

import pycupel.pipeline
from pycupel.diagnostics import DiagnosticTraceCollector, NullTraceCollector
from pycupel.slicers.base import CapExclusion, SliceResult

# Every module of the pipeline package.
PIPELINE_MODULES = [
    importlib.import_module(f"pycupel.pipeline.{info.name}")
    for info in pkgutil.iter_modules(pycupel.pipeline.__path__)
]

# Every diagnostic constructor and helper the pipeline modules can reach.
DIAGNOSTIC_NAMES = [
    "TraceEvent",
    "BudgetExceeded",
    "Deduplicated",
    "NegativeTokens",
    "PinnedOverride",
    "QuotaCapExceeded",
    "ExcludedItem",
    "IncludedItem",
    "SelectionReport",
    "DiagnosticTraceCollector",
    "Trace",
    "explain_negative",
    "explain_slice",
    "explain_duplicates",
    "explain_truncation",
    "included",
    "_cap_reasons",
    "perf_counter",
]


def _forbid(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("diagnostic work on the disabled path")


@pytest.fixture
def no_diagnostics(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in DIAGNOSTIC_NAMES:
        holders = [module for module in PIPELINE_MODULES if hasattr(module, name)]
        assert holders, name
        for module in holders:
            monkeypatch.setattr(module, name, _forbid)


def _busy_items() -> list[Any]:
    # Something for every stage to decide: negative, pinned, duplicates, budget, cap, zero.
    return [
        item("neg", -3),
        item("pin", 100, pinned=True),
        item("dup", 10, 2),
        item("dup", 10, 5),
        item("big", 900, 9),
        item("zero", 0, 1),
        *(item(f"x{n}", 40, n) for n in range(10)),
    ]


@pytest.mark.usefixtures("no_diagnostics")
@pytest.mark.parametrize("collector", [None, NullTraceCollector()])
def test_disabled_runs_touch_no_diagnostics(collector: NullTraceCollector | None) -> None:
    items = _busy_items()
    capped = CustomSlice(
        lambda entries, b: SliceResult(
            tuple(e.item for e in entries[1:4]),
            cap_exclusions=(CapExclusion(entries[0].item, entries[0].item.kind, 0, 1),),
        )
    )
    for pipeline in (
        make_pipeline(target=300),
        make_pipeline(target=300, slicer=capped),
        make_pipeline(
            target=150,
            slicer=CustomSlice(lambda entries, b: SliceResult(tuple(e.item for e in entries))),
            overflow_strategy="truncate",
        ),
    ):
        result = pipeline.run(items, collector=collector)
        assert result.items


def test_the_guard_really_bites(no_diagnostics: None) -> None:
    # The same run with an enabled collector hits the forbidden constructors.
    with pytest.raises(AssertionError, match="disabled path"):
        make_pipeline(target=300).run(_busy_items(), collector=DiagnosticTraceCollector())


def test_disabled_and_enabled_runs_agree() -> None:
    items = _busy_items()
    pipeline = make_pipeline(target=300)
    assert pipeline.run(items).items == pipeline.dry_run(items).items
