"""The public pipeline conformance vectors, including their diagnostics expectations.

Pipelines are built by hand from each vector's [config]; the vector files are read in place
from the conformance directory (``PYCUPEL_CONFORMANCE_DIR``, default ``../shared/cupel-conformance``
beside the repository) and the tests skip when it is absent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import tomli

from pycupel.diagnostics import ExcludedItem, SelectionReport
from pycupel.model import ContextBudget, ContextItem
from pycupel.pipeline import Pipeline
from pycupel.placers import ChronologicalPlacer, Placer, UShapedPlacer
from pycupel.scorers import (
    CompositeScorer,
    FrequencyScorer,
    KindScorer,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    Scorer,
)
from pycupel.slicers import GreedySlice, KnapsackSlice, Slicer

REPO = Path(__file__).resolve().parents[2]
ROOT = Path(os.environ.get("PYCUPEL_CONFORMANCE_DIR", REPO.parent / "shared" / "cupel-conformance"))
VECTORS = sorted(ROOT.glob("*/pipeline/*.toml")) if ROOT.is_dir() else []
EPSILON = 1e-9

pytestmark = pytest.mark.skipif(not VECTORS, reason=f"no conformance vectors under {ROOT}")

_SCORERS: dict[str, type[Any]] = {
    "recency": RecencyScorer,
    "priority": PriorityScorer,
    "kind": KindScorer,
    "frequency": FrequencyScorer,
    "reflexive": ReflexiveScorer,
}
_ITEM_FIELDS = {
    "content": "content",
    "tokens": "tokens",
    "kind": "kind",
    "timestamp": "timestamp",
    "priority": "priority",
    "tags": "tags",
    "futureRelevanceHint": "future_relevance_hint",
    "pinned": "pinned",
}


def _scorer(config: Mapping[str, Any]) -> Scorer:
    entries = [(_SCORERS[entry["type"]](), float(entry["weight"])) for entry in config["scorers"]]
    if len(entries) == 1:
        return entries[0][0]
    return CompositeScorer(entries)


def _slicer(config: Mapping[str, Any]) -> Slicer:
    if config["slicer"] == "greedy":
        return GreedySlice()
    if config["slicer"] == "knapsack":
        return KnapsackSlice(bucket_size=int(config.get("bucket_size", 100)))
    raise AssertionError(f"slicer {config['slicer']!r} has no builder in this helper")


def _placer(config: Mapping[str, Any]) -> Placer:
    return {"chronological": ChronologicalPlacer, "u-shaped": UShapedPlacer}[config["placer"]]()


def build(vector: Mapping[str, Any]) -> tuple[Pipeline, list[ContextItem]]:
    config = vector["config"]
    budget = vector["budget"]
    pipeline = Pipeline(
        budget=ContextBudget(
            max_tokens=budget["max_tokens"],
            target_tokens=budget["target_tokens"],
            output_reserve=budget.get("output_reserve", 0),
        ),
        scorer=_scorer(config),
        slicer=_slicer(config),
        placer=_placer(config),
        deduplicate=config.get("deduplication", True),
        overflow_strategy=config.get("overflow_strategy", "throw"),
    )
    items = [
        ContextItem(
            **{_ITEM_FIELDS[key]: value for key, value in raw.items() if key in _ITEM_FIELDS}
        )
        for raw in vector.get("items", [])
    ]
    return pipeline, items


def _check_excluded(actual: ExcludedItem, expected: Mapping[str, Any]) -> None:
    assert actual.item.content == expected["content"]
    assert abs(actual.score - expected["score_approx"]) < EPSILON
    assert actual.reason.name == expected["exclusion_reason"]
    for key, value in expected.items():
        if key not in {"content", "score_approx", "exclusion_reason"}:
            assert getattr(actual.reason, key) == value, key


def _check_diagnostics(report: SelectionReport, expected: Mapping[str, Any]) -> None:
    if "included" in expected:
        assert len(report.included) == len(expected["included"])
        for entry, want in zip(report.included, expected["included"], strict=True):
            assert entry.item.content == want["content"]
            assert abs(entry.score - want["score_approx"]) < EPSILON
            assert entry.reason.value == want["inclusion_reason"]
    if "excluded" in expected:
        assert len(report.excluded) == len(expected["excluded"])
        for entry, want in zip(report.excluded, expected["excluded"], strict=True):
            _check_excluded(entry, want)
    summary = expected.get("summary", {})
    if "total_candidates" in summary:
        assert report.total_candidates == summary["total_candidates"]
    if "total_tokens_considered" in summary:
        assert report.total_tokens_considered == summary["total_tokens_considered"]


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_pipeline_vector(path: Path) -> None:
    vector = tomli.loads(path.read_text(encoding="utf-8"))
    pipeline, items = build(vector)
    expected_output = [entry["content"] for entry in vector.get("expected_output", [])]

    result = pipeline.run(items)
    assert [item.content for item in result.items] == expected_output

    dry = pipeline.dry_run(items)
    assert dry.items == result.items
    assert [entry.item for entry in dry.report.included] == list(result.items)
    diagnostics = vector.get("expected", {}).get("diagnostics")
    if diagnostics is not None:
        _check_diagnostics(dry.report, diagnostics)
    # The report round-trips through JSON whatever the vector.
    assert SelectionReport.from_json(dry.report.to_json()).to_dict() == dry.report.to_dict()


def test_diagnostics_vectors_are_present() -> None:
    names = {p.stem for p in VECTORS}
    assert {
        "diag-pinned-override",
        "diagnostics-budget-exceeded",
        "diag-deduplicated",
        "diag-negative-tokens",
        "diag-scored-inclusion",
    } <= names
