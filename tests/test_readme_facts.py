"""Facts the README states about the project stay true: the preset table, the vector counts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_shows_the_current_preset_selections() -> None:
    spec = importlib.util.spec_from_file_location(
        "presets_on_example", ROOT / "examples" / "presets_on_example.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table: str = module.preset_table(1200)
    assert table.count("\n") == 8  # header, rule and the seven presets
    assert table in (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_counts_the_project_vectors() -> None:
    vectors = ROOT / "tests" / "vectors"
    counts = {
        stage: len(list((vectors / stage).glob("*.toml")))
        for stage in ("scoring", "slicing", "placing", "pipeline")
    }
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    total = sum(counts.values())
    expected = (
        f"all {total} of the project's own ({counts['scoring']} scoring, {counts['slicing']} "
        f"slicing, {counts['placing']} placing, {counts['pipeline']} pipeline)"
    )
    assert expected in text


def test_readme_maps_every_pipeline_module() -> None:
    package = ROOT / "src" / "pycupel" / "pipeline"
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    modules = sorted(path.name for path in package.glob("*.py") if path.name != "__init__.py")
    assert "classify.py" in modules
    for name in modules:
        assert f"`pipeline/{name}`" in text, name
    for stage in ("classify", "score", "deduplicate", "sort", "slice", "place"):
        # The "where" column of the stage table points at the stage's own module.
        assert f"| `pipeline/{stage}.py`" in text, stage
