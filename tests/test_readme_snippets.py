"""The README runs as written: every ```python block in it is executed.

The snippets are self-contained and offline; they run from the repository root so they can
read the bundled ``examples/`` files. The adapter section must keep its examples.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ADAPTER_SECTION = "## Use with OpenAI / Anthropic / Gemini / LangChain"


def _blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def readme_snippets() -> list[str]:
    return _blocks((ROOT / "README.md").read_text(encoding="utf-8"))


def adapter_section_snippets() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(ADAPTER_SECTION)
    following = text.find("\n## ", start + len(ADAPTER_SECTION))
    return _blocks(text[start : following if following != -1 else len(text)])


def test_the_adapter_section_has_snippets() -> None:
    assert len(adapter_section_snippets()) >= 3


@pytest.mark.parametrize("number", range(len(readme_snippets())))
def test_snippet_runs(number: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code = readme_snippets()[number]
    exec(compile(code, f"README.md snippet {number + 1}", "exec"), {"__name__": "__readme__"})
