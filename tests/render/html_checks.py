"""A strict reading of the generated pages: every element closed in order, no duplicate ids,
and the rows of the items table with their classes and cell texts."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"meta", "link", "input", "br", "hr", "img", "source", "wbr", "col", "area", "base"}
# SVG elements written as self-closing tags.
SELF_CLOSING = {"line", "rect", "circle", "polyline", "path"}


@dataclass
class Row:
    classes: list[str]
    cells: list[str] = field(default_factory=list)


class StrictPage(HTMLParser):
    """Parses a page and fails on misnested or unclosed elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.ids: list[str] = []
        self.doctype: str | None = None
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: dict[str, list[Row]] = {}
        self.scripts: list[str] = []
        self._table: str | None = None
        self._row: Row | None = None
        self._cell: list[str] | None = None
        self._in_script = False
        self._in_style = False
        self.text: list[str] = []

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if "id" in attributes and attributes["id"] is not None:
            self.ids.append(attributes["id"])
        if tag == "table":
            self._table = attributes.get("id") or attributes.get("class") or "table"
            self.rows.setdefault(self._table, [])
        if tag == "tr" and self._table is not None:
            self._row = Row((attributes.get("class") or "").split())
        if tag in {"td", "th"} and self._row is not None:
            self._cell = []
        if tag == "script":
            self._in_script = True
            self.scripts.append("")
        if tag == "style":
            self._in_style = True
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID and tag not in SELF_CLOSING:
            self.errors.append(f"self-closing <{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            self.errors.append(f"end tag for void element {tag}")
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()
        if tag in {"td", "th"} and self._row is not None and self._cell is not None:
            self._row.cells.append(" ".join("".join(self._cell).split()))
            self._cell = None
        if tag == "tr" and self._row is not None and self._table is not None:
            self.rows[self._table].append(self._row)
            self._row = None
        if tag == "table":
            self._table = None
        if tag == "script":
            self._in_script = False
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data
            return
        if self._in_style:
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def parse_page(page: str) -> StrictPage:
    parser = StrictPage()
    parser.feed(page)
    parser.close()
    return parser


def assert_well_formed(page: str) -> StrictPage:
    parsed = parse_page(page)
    assert parsed.doctype is not None
    assert parsed.doctype.lower() == "doctype html"
    assert parsed.errors == []
    assert parsed.stack == [], f"unclosed: {parsed.stack}"
    assert len(parsed.ids) == len(set(parsed.ids)), "duplicate ids"
    html_tag = next(attrs for tag, attrs in parsed.tags if tag == "html")
    assert html_tag.get("lang") == "en"
    assert ("meta", {"charset": "utf-8"}) in parsed.tags
    return parsed


def body_rows(parsed: StrictPage, table: str) -> list[Row]:
    """The data rows of a table (its header row left out)."""
    return [row for row in parsed.rows[table] if row.cells and row.classes != ["head"]][1:]
