"""A MkDocs hook: the API reference's pages are generated from the navigation.

Every navigation entry ``reference/<module>.md`` that has no file under ``docs/`` gets a page
made of the module's name and one mkdocstrings block (``::: <module>``), so documenting a new
module is one line in ``mkdocs.yml``::

    - reference/pycupel.conversation.md

``reference/index.md``, when it has no file either, lists every module page of the navigation
with the first line of the module's docstring (read from ``src/`` without importing it).
A page written by hand under ``docs/reference/`` takes precedence over the generated one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

PREFIX = "reference/"
INDEX = f"{PREFIX}index.md"
SOURCE = Path(__file__).resolve().parents[2] / "src"


def _nav_paths(nav: Any) -> Iterator[str]:
    """Every page path of a navigation tree (as ``mkdocs.yml`` spells it), in order."""
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for entry in nav:
            yield from _nav_paths(entry)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_paths(value)


def reference_modules(nav: Any) -> list[str]:
    """The modules the navigation gives a reference page, in navigation order."""
    return [
        path[len(PREFIX) : -len(".md")]
        for path in _nav_paths(nav)
        if path.startswith(PREFIX) and path.endswith(".md") and path != INDEX
    ]


def module_summary(module: str) -> str:
    """The first line of ``module``'s docstring, read from its source file."""
    base = SOURCE.joinpath(*module.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            tree = ast.parse(candidate.read_text(encoding="utf-8"))
            docstring = ast.get_docstring(tree) or ""
            return docstring.strip().split("\n\n", 1)[0].replace("\n", " ")
    raise FileNotFoundError(f"no source for {module} under {SOURCE}")


def module_page(module: str) -> str:
    # The heading's id is the module's path, so cross-references to the module (the
    # docstrings' :mod: roles) land on its page.
    return f"# `{module}` {{ #{module} }}\n\n::: {module}\n"


def index_page(modules: list[str]) -> str:
    lines = [
        "# API reference",
        "",
        "Generated from the docstrings of the code, one page per public module. Names are",
        "listed where users import them from (`from pycupel.scorers import RecencyScorer`);",
        "each page starts with the module's own documentation.",
        "",
        "| module | what it holds |",
        "| --- | --- |",
    ]
    for module in modules:
        summary = module_summary(module).replace("|", "\\|")
        lines.append(f"| [`{module}`]({module}.md) | {summary} |")
    return "\n".join(lines) + "\n"


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    modules = reference_modules(config.nav)
    for module in modules:
        path = f"{PREFIX}{module}.md"
        if files.get_file_from_path(path) is None:
            files.append(File.generated(config, path, content=module_page(module)))
    if files.get_file_from_path(INDEX) is None:
        files.append(File.generated(config, INDEX, content=index_page(modules)))
    return files
