"""The documentation's pages and their fenced code blocks, for the documentation tests.

A page is ``README.md`` or any Markdown file under ``docs/``. A fenced block may be indented
(inside a list item, an admonition or a content tab); its body is returned dedented, with the
line of its opening fence, so a failure points at the page and the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, from 1
    language: str  # the first word of the info string ("" when unlabelled)
    code: str

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"


def pages() -> list[Path]:
    """README.md, then every Markdown page of the site, in path order."""
    return [README, *sorted(path for path in DOCS.rglob("*.md") if "_hooks" not in path.parts)]


def blocks(page: Path) -> list[Block]:
    """Every fenced code block of ``page``, in order."""
    lines = page.read_text(encoding="utf-8").split("\n")
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        info = opening["info"].strip()
        body: list[str] = []
        end = index + 1
        while end < len(lines):
            closing = lines[end]
            if closing.strip() == fence and closing.startswith(indent):
                break
            body.append(closing[len(indent) :] if closing.startswith(indent) else closing)
            end += 1
        else:
            raise AssertionError(f"{page}:{index + 1}: unclosed code fence")
        language = info.split()[0].lstrip("{.").rstrip("}") if info else ""
        found.append(Block(page, index + 1, language, "\n".join(body) + "\n"))
        index = end + 1
    return found


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]


def python_blocks() -> list[Block]:
    return [block for block in all_blocks() if block.language == "python"]
