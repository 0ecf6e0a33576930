"""The API reference covers the public API: every public module has a page, and every name a
page's module exports is documented on the built site.

A module's page is one line of the navigation in ``mkdocs.yml``
(``- reference/pycupel.<module>.md``); ``docs/_hooks/reference_pages.py`` writes it.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
import zlib
from pathlib import Path

import pytest
from docs_pages import DOCS, ROOT
from docs_site import site_dir_fixture  # noqa: F401 (the site_dir fixture)

import pycupel

MKDOCS_YML = ROOT / "mkdocs.yml"
NAV_PAGE = re.compile(r"^\s*-\s+(?:[^:\n]+:\s+)?reference/(?P<module>pycupel[\w.]*)\.md\s*$", re.M)
HAND_WRITTEN = {"pycupel": DOCS / "reference" / "pycupel.md"}
# Public modules documented elsewhere than in the API reference, and why.
NOT_IN_THE_REFERENCE = {
    "pycupel.cli": "the command line: its commands are documented in guides/cli.md",
}
# Packages whose every public module is a page of its own (one module per format/framework).
ONE_PAGE_PER_MODULE = ("pycupel.adapters", "pycupel.integrations")


def nav_modules() -> list[str]:
    return NAV_PAGE.findall(MKDOCS_YML.read_text(encoding="utf-8"))


def public_modules() -> set[str]:
    """``pycupel``, its public modules and packages, and each public module of the packages
    in :data:`ONE_PAGE_PER_MODULE`."""
    found = {"pycupel"}
    for info in pkgutil.iter_modules(pycupel.__path__, "pycupel."):
        if not info.name.rsplit(".", 1)[-1].startswith("_"):
            found.add(info.name)
    for package in ONE_PAGE_PER_MODULE:
        path = importlib.import_module(package).__path__
        for info in pkgutil.iter_modules(path, f"{package}."):
            if not info.name.rsplit(".", 1)[-1].startswith("_"):
                found.add(info.name)
    return found - set(NOT_IN_THE_REFERENCE)


def test_every_public_module_has_a_reference_page() -> None:
    missing = sorted(public_modules() - set(nav_modules()))
    assert not missing, "add to the 'API reference' section of mkdocs.yml: " + ", ".join(
        f"'- reference/{module}.md'" for module in missing
    )


def test_every_reference_page_names_a_module() -> None:
    modules = nav_modules()
    assert len(modules) == len(set(modules)), "a module is listed twice"
    unknown = [module for module in modules if importlib.util.find_spec(module) is None]
    assert not unknown


def test_the_package_page_lists_every_top_level_name() -> None:
    page = HAND_WRITTEN["pycupel"].read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| \[?`([\w.]+)`", page, flags=re.M))
    assert listed == set(pycupel.__all__)


def _inventory(site: Path) -> set[str]:
    """The identifiers of the site's ``objects.inv`` (Sphinx inventory, version 2)."""
    data = (site / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):  # four header lines, then the zlib stream
        header_end = data.index(b"\n", header_end) + 1
    lines = zlib.decompress(data[header_end:]).decode("utf-8").splitlines()
    return {line.split(" ", 1)[0] for line in lines if line}


def test_every_exported_name_is_documented(site_dir: Path) -> None:
    documented = _inventory(site_dir)
    missing = [
        f"{module}.{name}"
        for module in nav_modules()
        if module not in HAND_WRITTEN
        for name in getattr(importlib.import_module(module), "__all__", ())
        if f"{module}.{name}" not in documented
    ]
    assert not missing, missing


def test_the_reference_index_lists_every_page(site_dir: Path) -> None:
    index = (site_dir / "reference" / "index.html").read_text(encoding="utf-8")
    for module in nav_modules():
        assert f'href="{module}/"' in index, module


@pytest.mark.parametrize("module", ["pycupel.adapters.openai", "pycupel.scorers"])
def test_docstring_roles_become_links(site_dir: Path, module: str) -> None:
    """The docstrings' reStructuredText roles (:class:`...`) are rendered as links."""
    page = (site_dir / "reference" / module / "index.html").read_text(encoding="utf-8")
    assert ":class:" not in page
    assert ":func:" not in page
    assert 'class="autorefs autorefs-internal"' in page


def test_module_roles_link_to_the_module_pages(site_dir: Path) -> None:
    """``:mod:`pycupel.scorers``` in the package docstring lands on the module's page."""
    page = (site_dir / "reference" / "pycupel" / "index.html").read_text(encoding="utf-8")
    for module in ("pycupel.scorers", "pycupel.adapters", "pycupel.testing"):
        assert f'href="../{module}/#{module}"' in page, module
