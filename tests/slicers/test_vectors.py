"""The repository's own slicing vectors (and the public suite's, when it is available)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .vector_cases import OWN_VECTORS, check, load, public_vector_files

OWN = sorted(OWN_VECTORS.glob("*.toml"))
PUBLIC = public_vector_files()


def test_own_vectors_are_present() -> None:
    slicers = {load(path)["test"]["slicer"] for path in OWN}
    assert slicers == {"greedy", "knapsack", "quota", "count_quota", "count_constrained_knapsack"}
    assert len(OWN) >= 40


@pytest.mark.parametrize("path", OWN, ids=lambda p: p.stem)
def test_own_vector(path: Path) -> None:
    vector = load(path)
    assert vector["test"]["stage"] == "slicing"
    check(vector)


@pytest.mark.skipif(not PUBLIC, reason="public conformance vectors not available")
@pytest.mark.parametrize("path", PUBLIC, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_public_vector(path: Path) -> None:
    check(load(path))
