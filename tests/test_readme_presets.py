"""The README's table of preset selections is what the presets select today."""

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
