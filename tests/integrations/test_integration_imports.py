"""``import pycupel`` stays light: no framework is imported until an integration is."""

from __future__ import annotations

import subprocess
import sys

FRAMEWORKS = ("langchain", "langgraph", "llama_index", "agents", "openai")


def test_import_pycupel_imports_no_framework() -> None:
    code = (
        "import sys, pycupel, pycupel.integrations, pycupel.adapters.openai\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({FRAMEWORKS!r})))"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert output.strip() == "[]"
