"""What ``import pycupel`` and each command of the command line load.

Start-up time is mostly imports, so the structure is what is tested: each case runs in a fresh
interpreter and reports the modules it ended with. ``import pycupel`` loads the data model and
the errors only; each command loads what it uses and nothing another command needs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "support-chat.json"

# Run a snippet, then print the sorted names of the loaded modules as JSON on the last line.
_PROBE = """
import json, sys
{code}
print(json.dumps(sorted(sys.modules)))
"""

_RUN_COMMAND = """
from pycupel.cli import main
try:
    main({args!r}, standalone_mode=False)
except SystemExit:
    pass
"""


def loaded_modules(code: str) -> set[str]:
    """The modules loaded after running ``code`` in a fresh interpreter."""
    completed = subprocess.run(
        [sys.executable, "-c", _PROBE.format(code=code)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    names: list[str] = json.loads(completed.stdout.strip().splitlines()[-1])
    return set(names)


def command_modules(*args: str) -> set[str]:
    return loaded_modules(_RUN_COMMAND.format(args=list(args)))


def loaded(modules: set[str], *packages: str) -> list[str]:
    """The packages of ``packages`` that are in ``modules`` (a package, or any module in it)."""
    return [
        package
        for package in packages
        if any(name == package or name.startswith(package + ".") for name in modules)
    ]


THIRD_PARTY = ("numpy", "scipy", "rich", "click", "jsonschema", "tiktoken", "tokenizers")


def test_import_pycupel_loads_the_model_and_errors_only() -> None:
    modules = loaded_modules("import pycupel")
    assert loaded(modules, *THIRD_PARTY) == []
    assert sorted(name for name in modules if name.startswith("pycupel")) == [
        "pycupel",
        "pycupel._checks",
        "pycupel._lazy",
        "pycupel.errors",
        "pycupel.model",
    ]


def test_lazy_names_of_the_package_resolve_to_their_modules() -> None:
    modules = loaded_modules(
        "import pycupel\n"
        "from pycupel.pipeline import Pipeline\n"
        "from pycupel.policy import Policy\n"
        "assert pycupel.Pipeline is Pipeline and pycupel.Policy is Policy\n"
        "assert pycupel.presets.chat().name\n"
        "assert set(pycupel.__all__) <= set(dir(pycupel))\n"
        "try:\n"
        "    pycupel.no_such_name\n"
        "except AttributeError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    assert "pycupel.presets" in modules


def test_select_loads_neither_the_conformance_runner_nor_the_renderers() -> None:
    # A small input is scored, sliced and reported on plain lists: numpy never loads, and
    # the scorer and slicer packages load only the modules the pipeline names.
    modules = command_modules("select", str(EXAMPLE), "--budget", "1200")
    assert "pycupel.cli.select" in modules
    assert (
        loaded(
            modules,
            "pycupel.conformance",
            "pycupel.cli.conformance",
            "pycupel.cli.explain",
            "pycupel.cli.simulate",
            "pycupel.cli.policy",
            "pycupel.cli.replay",
            "pycupel.replay",
            "pycupel.render",
            "pycupel.analytics",
            "pycupel.policy",
            "pycupel.presets",
            "pycupel.adapters",
            "pycupel.scorers.relevance",
            "pycupel.slicers.knapsack",
            "numpy",
            "scipy",
            "jsonschema",
        )
        == []
    )


def test_select_loads_the_adapters_only_for_a_message_history(tmp_path: Path) -> None:
    history = tmp_path / "history.json"
    history.write_text(
        json.dumps(
            [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "What is the capital of France?"},
            ]
        ),
        encoding="utf-8",
    )
    modules = command_modules("select", str(history), "--budget", "200", "--format", "openai")
    assert "pycupel.adapters.openai" in modules


def test_select_with_a_preset_loads_the_policy_package() -> None:
    modules = command_modules("select", str(EXAMPLE), "--budget", "1200", "--preset", "chat")
    assert loaded(modules, "pycupel.policy", "pycupel.presets") == [
        "pycupel.policy",
        "pycupel.presets",
    ]
    assert loaded(modules, "pycupel.conformance", "pycupel.render", "scipy") == []


def test_explain_loads_the_html_renderer_only_for_html(tmp_path: Path) -> None:
    plain = command_modules("explain", str(EXAMPLE), "--budget", "1200")
    assert "pycupel.render.console" in plain
    assert loaded(plain, "pycupel.render.html", "pycupel.conformance", "pycupel.analytics") == []
    page = tmp_path / "report.html"
    with_html = command_modules("explain", str(EXAMPLE), "--budget", "1200", "--html", str(page))
    assert page.is_file()
    assert "pycupel.render.html" in with_html


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        (
            ("simulate", str(EXAMPLE), "--budgets", "600,1200"),
            ("pycupel.conformance", "pycupel.render.html", "scipy"),
        ),
        (
            ("policy", "show", "chat"),
            ("pycupel.conformance", "pycupel.render", "pycupel.adapters", "pycupel.analytics"),
        ),
        (
            ("conformance", "--help"),
            ("pycupel.render", "pycupel.adapters", "pycupel.analytics", "pycupel.policy", "rich"),
        ),
    ],
)
def test_each_command_loads_only_what_it_uses(
    args: tuple[str, ...], absent: tuple[str, ...]
) -> None:
    modules = command_modules(*args)
    assert f"pycupel.cli.{args[0]}" in modules
    assert loaded(modules, *absent) == []


def test_every_command_module_is_in_the_lazy_command_table() -> None:
    from pycupel.cli import COMMANDS

    package = Path(__file__).resolve().parents[1] / "src" / "pycupel" / "cli"
    commands = sorted(path.stem for path in package.glob("*.py") if not path.stem.startswith("_"))
    assert sorted(COMMANDS) == commands
    assert all(module == f"pycupel.cli.{name}" for name, module in COMMANDS.items())
    listing = subprocess.run(
        [sys.executable, "-m", "pycupel", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert all(f"  {name} " in listing for name in commands), listing


def test_cost_loads_neither_the_conformance_runner_nor_replay() -> None:
    modules = command_modules("cost", "--help")
    assert "pycupel.cli.cost" in modules
    assert loaded(modules, "pycupel.conformance", "pycupel.replay", "pycupel.render.html") == []
