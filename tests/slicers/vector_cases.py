"""Load slicing vectors (the conformance TOML format) and run them against the slicers.

Used for the repository's own vectors under ``tests/vectors/slicing`` and, when a checkout of
the public conformance suite is available, for its slicing vectors too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import tomli

from pycupel.model import ContextBudget, ContextItem, ScoredItem
from pycupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    GreedySlice,
    KnapsackSlice,
    QuotaEntry,
    QuotaSlice,
    Slicer,
    SliceResult,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
OWN_VECTORS = REPO_ROOT / "tests" / "vectors" / "slicing"


def public_vector_files() -> list[Path]:
    """Slicing vectors of the public suite: $CUPEL_CONFORMANCE_DIR or ../shared beside the repo."""
    configured = os.environ.get("CUPEL_CONFORMANCE_DIR")
    root = Path(configured) if configured else REPO_ROOT.parent / "shared" / "cupel-conformance"
    return sorted(root.glob("*/slicing/*.toml"))


def load(path: Path) -> dict[str, Any]:
    with path.open("rb") as handle:
        return tomli.load(handle)


def build_slicer(name: str, config: dict[str, Any]) -> Slicer:
    """The slicer a vector names, configured from its ``[config]`` table."""
    bucket = config.get("bucket_size", 100)
    if name == "greedy":
        return GreedySlice()
    if name == "knapsack":
        return KnapsackSlice(bucket)
    if name == "quota":
        quotas = [
            QuotaEntry(q["kind"], q.get("require", 0.0), q.get("cap", 100.0))
            for q in config.get("quotas", [])
        ]
        return QuotaSlice(quotas, build_slicer(config.get("inner_slicer", "greedy"), config))
    entries = [
        CountQuotaEntry(e["kind"], e.get("require_count", 0), e.get("cap_count"))
        for e in config.get("entries", [])
    ]
    scarcity = config.get("scarcity_behavior", "degrade")
    if name == "count_quota":
        inner = build_slicer(config.get("inner_slicer", "greedy"), config)
        return CountQuotaSlice(entries, inner, scarcity)
    if name == "count_constrained_knapsack":
        return CountConstrainedKnapsackSlice(entries, KnapsackSlice(bucket), scarcity)
    raise ValueError(f"unknown slicer {name!r}")


def build_items(vector: dict[str, Any]) -> list[ScoredItem]:
    items = []
    for entry in vector.get("scored_items", []):
        kind = entry.get("kind", "Message")
        item = ContextItem(entry["content"], tokens=entry["tokens"], kind=kind)
        items.append(ScoredItem(item, float(entry["score"])))
    return items


def build_budget(vector: dict[str, Any]) -> ContextBudget:
    table = vector["budget"]
    target = table["target_tokens"]
    return ContextBudget(max_tokens=table.get("max_tokens", target), target_tokens=target)


def run(vector: dict[str, Any]) -> SliceResult:
    slicer = build_slicer(vector["test"]["slicer"], vector.get("config", {}))
    return slicer.slice(build_items(vector), build_budget(vector))


def check(vector: dict[str, Any]) -> None:
    """Run ``vector`` and assert its expectations (selection compared as a set)."""
    result = run(vector)
    expected = vector["expected"]
    contents = [item.content for item in result.selected]
    assert len(contents) == len(set(contents)), f"duplicates in {contents}"
    assert set(contents) == set(expected["selected_contents"])
    if "shortfall_count" in expected:
        assert len(result.shortfalls) == expected["shortfall_count"]
    if "cap_excluded_count" in expected:
        assert len(result.cap_excluded) == expected["cap_excluded_count"]
