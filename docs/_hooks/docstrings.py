"""A griffe extension: the docstrings as Markdown the API reference can render.

pycupel's docstrings are Google style with a few reStructuredText habits that ``pydoc`` and
IDEs show as written: cross-reference roles (``:class:`Pipeline```, ``:func:`~pycupel.x.y```,
``:meth:`Scorer.score_all```) and literal blocks introduced by a line ending in ``::``.
Markdown has neither, so without this extension the reference would show ``:class:`` before
every name. The extension rewrites them when the package is loaded:

* a role becomes an optional cross-reference (``<autoref identifier=... optional>``): a link
  when the target is documented on the site, the name in code otherwise (no warning, as for
  the links mkdocstrings makes from signatures). A name without its module is resolved the
  way Python would resolve it where the docstring is written (griffe's scopes: the object's
  members, its parents' members, the module's imports). ``~`` shows the last component only,
  and functions and methods get ``()`` as Sphinx shows them;
* a first sentence wrapped over several source lines is joined into one line: the
  reference's summary tables show a docstring's first line, which would otherwise stop
  mid-sentence;
* a paragraph ending in ``::`` ends in ``:`` (its indented block is already Markdown code);
* a doctest (``>>>`` lines and their output, up to a blank line) becomes a fenced ``pycon``
  block: Markdown would read ``>>>`` as quotes and an output such as ``[4, 4]`` as a link
  (an ``Examples:`` section keeps the fence as it is);
* a module attribute listed in ``__all__`` without a docstring of its own (a type alias such
  as ``KindLike``) would be left out of the reference, which shows documented members only:
  it gets a one-line description naming what it is, so every public name has an entry.

Nothing in the source is changed; only the text the reference renders.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(
    r":(?:py:)?(?P<role>mod|class|func|meth|attr|data|exc|obj|const):"
    r"`(?P<tilde>~)?(?P<text>[^`<]+?)(?:\s*<(?P<target>[^>`]+)>)?`"
)
CALLABLE_ROLES = frozenset({"func", "meth"})
DOCTEST_START = re.compile(r"^(?P<indent>[ \t]*)>>> ")
SECTION_TITLE = re.compile(r"^\s*[A-Z][\w ]*:\s*$")
LITERAL_INTRO = re.compile(r"(?<=\S)::$", flags=re.MULTILINE)
BARE_LITERAL_INTRO = re.compile(r"^[ \t]*::\n", flags=re.MULTILINE)


def _resolve(scope: griffe.Object, name: str) -> str:
    """The full path of ``name`` as Python would see it from ``scope`` (``name`` if unknown)."""
    name = name.strip().lstrip(".")
    if name.startswith("pycupel.") or name == "pycupel":
        return name
    first, _, rest = name.partition(".")
    obj: griffe.Object | None = scope
    while obj is not None:
        try:
            path = obj.resolve(first)
        except (griffe.NameResolutionError, AttributeError, KeyError):
            obj = obj.parent
            continue
        return f"{path}.{rest}" if rest else path
    return name


def join_first_paragraph(text: str) -> str:
    """The docstring with the lines of its first paragraph joined (a plain paragraph only)."""
    head, blank, rest = text.partition("\n\n")
    lines = head.split("\n")
    plain = all(
        line.strip()
        and not line.lstrip().startswith(("* ", "- ", "```", ">>>", "|"))
        and not SECTION_TITLE.match(line)
        for line in lines
    )
    if len(lines) > 1 and plain:
        head = " ".join(line.strip() for line in lines)
    return head + blank + rest


def fence_doctests(text: str) -> str:
    """Each run of doctest lines (from ``>>>`` to the next blank line) in a ``pycon`` fence."""
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        start = DOCTEST_START.match(lines[index])
        if start is None:
            out.append(lines[index])
            index += 1
            continue
        indent = start["indent"]
        out.append(f"{indent}```pycon")
        while index < len(lines) and lines[index].strip():
            out.append(lines[index])
            index += 1
        out.append(f"{indent}```")
    return "\n".join(out)


def rewrite(text: str, scope: griffe.Object) -> str:
    """``text`` with its roles turned into cross-references and ``::`` into ``:``."""

    def replace(match: re.Match[str]) -> str:
        target = (match["target"] or match["text"]).strip()
        title = match["text"].strip() if match["target"] else target.lstrip(".")
        if match["tilde"]:
            title = title.rsplit(".", 1)[-1]
        if match["role"] in CALLABLE_ROLES and not title.endswith(")"):
            title += "()"
        identifier = _resolve(scope, target)
        return f'<autoref identifier="{identifier}" optional>`{title}`</autoref>'

    text = fence_doctests(ROLE.sub(replace, join_first_paragraph(text)))
    text = BARE_LITERAL_INTRO.sub("", text)
    return LITERAL_INTRO.sub(":", text)


def _describe_undocumented_exports(module: griffe.Object) -> None:
    for name in module.exports or ():
        member = module.members.get(str(name))
        if member is None or member.is_alias or member.docstring is not None:
            continue
        if member.kind in (griffe.Kind.ATTRIBUTE, griffe.Kind.TYPE_ALIAS):
            annotation = str(getattr(member, "annotation", "") or "")
            what = "A type alias." if "TypeAlias" in annotation else "A module constant."
            member.docstring = griffe.Docstring(what, parent=member)


class ReferenceDocstrings(griffe.Extension):
    """Rewrite every docstring of the package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        self._visit(pkg, seen=set())

    def _visit(self, obj: griffe.Object, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.kind is griffe.Kind.MODULE:
            _describe_undocumented_exports(obj)
        if obj.docstring is not None:
            # A docstring's scope: the object itself for a class or module (its own members
            # first), the parent for a function or attribute (whose names are its siblings).
            scope = obj if obj.kind in (griffe.Kind.MODULE, griffe.Kind.CLASS) else obj.parent
            obj.docstring.value = rewrite(obj.docstring.value, scope or obj)
        for member in obj.members.values():
            if not member.is_alias:
                self._visit(member, seen)  # type: ignore[arg-type]
