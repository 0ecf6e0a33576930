"""Facts the documentation states about the project stay true, on the page that states them:
the preset table (policies guide), the vector counts and the stage map (concepts), and the
README's set-up commands and links.
"""

from __future__ import annotations

import importlib.util
import re

from docs_pages import DOCS, README, ROOT

POLICIES = DOCS / "guides" / "policies.md"
CONCEPTS = DOCS / "concepts.md"
SETUP = (
    "```bash\n"
    'python3 -m venv .venv && .venv/bin/pip install -e ".[dev]" && .venv/bin/pycupel select '
    "examples/support-chat.json --budget 1200\n"
    ".venv/bin/python -m pytest\n"
    "```\n"
)


def test_the_policies_guide_shows_the_current_preset_selections() -> None:
    spec = importlib.util.spec_from_file_location(
        "presets_on_example", ROOT / "examples" / "presets_on_example.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table: str = module.preset_table(1200)
    assert table.count("\n") == 8  # header, rule and the seven presets
    assert table in POLICIES.read_text(encoding="utf-8")


def test_the_concepts_page_counts_the_project_vectors() -> None:
    vectors = ROOT / "tests" / "vectors"
    counts = {
        stage: len(list((vectors / stage).glob("*.toml")))
        for stage in ("scoring", "slicing", "placing", "pipeline")
    }
    text = " ".join(CONCEPTS.read_text(encoding="utf-8").split())
    total = sum(counts.values())
    expected = (
        f"all {total} of the project's own ({counts['scoring']} scoring, {counts['slicing']} "
        f"slicing, {counts['placing']} placing, {counts['pipeline']} pipeline)"
    )
    assert expected in text


def test_the_concepts_page_maps_every_pipeline_module() -> None:
    package = ROOT / "src" / "pycupel" / "pipeline"
    text = CONCEPTS.read_text(encoding="utf-8")
    modules = sorted(path.name for path in package.glob("*.py") if path.name != "__init__.py")
    assert "classify.py" in modules
    for name in modules:
        assert f"`pipeline/{name}`" in text, name
    for stage in ("classify", "score", "deduplicate", "sort", "slice", "place"):
        # The "where" column of the stage table points at the stage's own module.
        assert f"| `pipeline/{stage}.py`" in text, stage


def test_the_readme_opens_with_the_two_setup_commands() -> None:
    """CI and users copy these two lines: they stay byte for byte as they are."""
    text = README.read_text(encoding="utf-8")
    assert text.startswith("# pycupel\n\n" + SETUP)


def test_the_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_the_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert local
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, missing
