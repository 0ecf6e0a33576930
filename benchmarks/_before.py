"""An earlier version of pycupel, importable beside the current one, for before/after ratios.

``load_before(rev)`` extracts ``src/pycupel`` at git revision ``rev`` into a temporary
directory as the package ``pycupel_before`` (every ``pycupel`` import in it renamed), and
imports it. Both versions then run in one process, their calls taking turns, so machine load
hits them alike and their ratio means something even on a busy machine. The directory is
removed when the process exits (not before: the package imports its modules lazily).
"""

from __future__ import annotations

import atexit
import importlib
import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
NAME = "pycupel_before"
_WORD = re.compile(r"\bpycupel\b")


def load_before(rev: str) -> ModuleType:
    """Import pycupel as of git revision ``rev`` under the name ``pycupel_before``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "src/pycupel"],
        capture_output=True,
        check=True,
    ).stdout
    target = Path(tempfile.mkdtemp(prefix="pycupel-before-"))
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    package = target / NAME
    (target / "src" / "pycupel").rename(package)
    for path in package.rglob("*.py"):
        path.write_text(_WORD.sub(NAME, path.read_text(encoding="utf-8")), encoding="utf-8")
    sys.path.insert(0, str(target))
    return importlib.import_module(NAME)
