"""Facts the documentation states about the project stay true, on the page that states them:
the preset table (policies guide), the vector counts and the stage map (concepts), the
README's set-up commands and links, and the why guide's example outputs and causes.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
from pathlib import Path

from click.testing import CliRunner
from docs_pages import DOCS, README, ROOT, blocks

from pycupel.cli import main
from pycupel.diagnostics import Cause

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


WHY_GUIDE = DOCS / "guides" / "why-dropped.md"


def _why_example() -> tuple[dict[str, object], str, str, str]:
    """The why guide's example: its namespace when run, what it printed, and the two output
    blocks the page shows for it (what the block prints, what ``pycupel explain`` prints)."""
    page = blocks(WHY_GUIDE)
    index = next(
        n
        for n, block in enumerate(page)
        if "report.explain(entry)" in block.code and "history = [" in block.code
    )
    printed = io.StringIO()
    namespace: dict[str, object] = {"__name__": "__docs__"}
    with contextlib.redirect_stdout(printed):
        exec(compile(page[index].code, page[index].name, "exec"), namespace)
    shown = page[index + 1]
    console = next(block for block in page[index + 2 :] if block.language == "console")
    return namespace, printed.getvalue(), shown.code, console.code


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def test_the_why_guide_shows_what_its_example_prints(tmp_path: Path) -> None:
    namespace, printed, shown, console = _why_example()
    assert _lines(shown) == _lines(printed)
    # The command line's table of the same history, as the page shows it.
    command, *table = console.strip("\n").splitlines()
    name = command.split()[3]
    (tmp_path / name).write_text(json.dumps(namespace["history"]), encoding="utf-8")
    runner = CliRunner(env={"COLUMNS": "100"})
    with contextlib.chdir(tmp_path):
        result = runner.invoke(main, command.split()[2:], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert _lines("\n".join(table)) == _lines(result.stdout)


def test_the_why_guide_lists_every_cause() -> None:
    text = WHY_GUIDE.read_text(encoding="utf-8")
    missing = [cause.value for cause in Cause if f"`{cause.value}`" not in text]
    assert not missing, missing
