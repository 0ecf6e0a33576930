"""The documentation site, built once per test session for the tests that read it.

Test modules import :func:`site_dir_fixture` (the ``site_dir`` fixture); it is not in a
``conftest.py`` because other tests import the root ``conftest`` by name.

``PYCUPEL_DOCS_SITE`` names a site already built from this checkout (CI builds it with
``mkdocs build --strict`` before running the tests, and passes its folder); otherwise the site
is built here, strictly, into a temporary folder. Tests that need it are skipped, with the
reason, when the ``docs`` extra (MkDocs, Material, mkdocstrings) is not installed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from docs_pages import ROOT

SITE_ENV = "PYCUPEL_DOCS_SITE"
DOCS_PACKAGES = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")


def _missing_docs_packages() -> list[str]:
    missing = []
    for name in DOCS_PACKAGES:
        try:
            found = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            found = None
        if found is None:
            missing.append(name)
    return missing


_built: list[Path] = []  # the site built in this session, for every module that asks


@pytest.fixture(scope="session", name="site_dir")
def site_dir_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the built site (its ``index.html``, ``objects.inv``, ``search/``)."""
    if _built:
        return _built[0]
    given = os.environ.get(SITE_ENV)
    if given:
        site = Path(given)
        if not (site / "index.html").is_file():
            pytest.fail(f"{SITE_ENV}={given} holds no built site (no index.html)")
        return site
    missing = _missing_docs_packages()
    if missing:
        pytest.skip(
            "the docs extra is not installed (missing: "
            + ", ".join(missing)
            + "); pip install -e '.[docs]'"
        )
    site = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert build.returncode == 0, build.stderr[-5000:]
    _built.append(site)
    return site
