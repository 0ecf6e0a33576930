"""The README's adapter section runs as written: every python block is executed.

The snippets are self-contained and offline; they run from the repository root so they can
read the bundled ``examples/`` files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Use with OpenAI / Anthropic / LangChain"


def section_snippets() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    following = text.find("\n## ", start + len(SECTION))
    body = text[start : following if following != -1 else len(text)]
    return re.findall(r"^```python\n(.*?)^```", body, flags=re.DOTALL | re.MULTILINE)


def test_the_section_has_snippets() -> None:
    assert len(section_snippets()) >= 3


@pytest.mark.parametrize("number", range(len(section_snippets())))
def test_snippet_runs(number: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code = section_snippets()[number]
    exec(compile(code, f"README.md snippet {number + 1}", "exec"), {"__name__": "__readme__"})
