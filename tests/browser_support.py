"""Headless Chromium for the browser tests (the HTML report, the documentation site).

:func:`chromium` finds the binary or skips the test with the reason; :data:`CHROMIUM_FLAGS`
are the flags every run starts with (headless, no sandbox, nothing fetched from the network:
the test machines have none). A fresh ``--user-data-dir`` is added per run.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def chromium() -> str:
    """The Chromium binary (``$PYCUPEL_CHROMIUM``, else the first found); skips without one."""
    configured = os.environ.get("PYCUPEL_CHROMIUM")
    if configured:
        return configured
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    if Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium"
    pytest.skip(
        "no Chromium binary found (install it with 'apt-get install -y chromium', or set "
        "PYCUPEL_CHROMIUM)"
    )
