"""Every ```python block of the documentation runs: the README and every page of the site.

Each block is self-contained and runs on its own, offline, from the repository root (so it can
read the bundled ``examples/``), in a fresh namespace. A block that would call a provider
builds the request and stops before sending it (the call is a comment). Blocks that only
show a shell command, a file or an output are labelled ``bash``, ``console``, ``text``,
``toml`` or ``json``; a fence with no language, or a Python one spelt otherwise (``py``,
``pycon``...), fails here, so no Python can slip past the runner.

The chat-history guide must keep one example per message format.
"""

from __future__ import annotations

import linecache
import re

import pytest
from docs_pages import DOCS, README, ROOT, Block, all_blocks, blocks, python_blocks

SHOWN_ONLY = frozenset({"bash", "console", "text", "toml", "json", "yaml"})
CHAT_GUIDE = DOCS / "guides" / "chat-history.md"
FORMATS = ("openai", "responses", "anthropic", "gemini", "langchain")


def _run(block: Block) -> None:
    # Registered in linecache, so that a failure's traceback shows the block's lines.
    linecache.cache[block.name] = (len(block.code), None, block.code.splitlines(True), block.name)
    code = compile(block.code, block.name, "exec")
    exec(code, {"__name__": "__docs__"})


@pytest.mark.parametrize("block", python_blocks(), ids=lambda block: block.name)
def test_python_block_runs(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    before = sorted(path.name for path in ROOT.iterdir())
    _run(block)
    # Blocks write only to temporary folders, never into the checkout.
    assert sorted(path.name for path in ROOT.iterdir()) == before


def test_every_fence_is_python_or_shown_only() -> None:
    wrong = [
        f"{block.name} ({block.language or 'no language'})"
        for block in all_blocks()
        if block.language != "python" and block.language not in SHOWN_ONLY
    ]
    assert not wrong, "label these blocks python (run) or bash/console/text/toml/json: " + str(
        wrong
    )


def test_the_readme_and_the_site_have_python_blocks() -> None:
    assert len(blocks(README)) >= 6
    assert len(python_blocks()) >= 40


def test_the_chat_history_guide_keeps_an_example_per_format() -> None:
    """The guide shows every adapter fitting a history, each in its own runnable block."""
    guide = [block.code for block in blocks(CHAT_GUIDE) if block.language == "python"]
    for name in FORMATS:
        fitting = [
            code
            for code in guide
            if re.search(rf"^from pycupel\.adapters import .*\b{name}\b", code, re.MULTILINE)
            and f"{name}.fit_messages(" in code
        ]
        assert fitting, f"{CHAT_GUIDE.name} has no example of {name}.fit_messages"
    # The split and rejoin of a history (from_messages / to_messages) stays shown as well.
    assert any(".from_messages(" in code and ".to_messages(" in code for code in guide)


def test_the_readme_shows_a_chat_history_being_fitted() -> None:
    readme = [block.code for block in blocks(README) if block.language == "python"]
    assert any(".fit_messages(" in code for code in readme)
