"""Every public Cupel conformance vector, and every vector of our own, must pass."""

from __future__ import annotations

from pathlib import Path

from pycupel.conformance import run_file


def _check(path: Path) -> None:
    result = run_file(path)
    assert result.passed, f"{result.name} [{result.stage}]\n{result.message}"
    # The folder a vector sits in names its stage; a mismatch means a misfiled vector.
    assert result.stage == path.parent.name


def test_public_vector_passes(public_vector: Path) -> None:
    _check(public_vector)


def test_own_vector_passes(own_vector: Path) -> None:
    _check(own_vector)


def test_public_suite_has_required_and_optional_levels(conformance_dir: Path) -> None:
    for level in ("required", "optional"):
        assert sorted((conformance_dir / level).rglob("*.toml")), f"no {level} vectors"
