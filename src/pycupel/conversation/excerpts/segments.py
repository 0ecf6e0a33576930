"""A long text cut where a reader would cut it: its segments, and what each one needs.

:func:`segment` tells the text's shape and cuts it:

* **JSON** (a document ``json`` reads): the items of its main array or the members of its
  main object (the container holding most of the text, found by descending while one
  element holds most of it), each span verbatim; what surrounds the container is kept as
  the excerpt's frame, so an excerpt stays valid JSON;
* **code** (most lines look like code): lines, each anchored to the signature of the block it
  sits in (``def``, ``class``, ``func``, ``function``...), so a kept line shows where it is;
* **tables** (pipe, psql or CSV rows): rows, anchored to the header;
* **markdown and prose**: lines (a paragraph per line, or wrapped lines), anchored to the
  heading of their section; a long paragraph is cut into sentences;
* **configuration** (YAML, INI, TOML, ``key: value`` listings such as ``kubectl describe``):
  lines, each anchored to its parent (the line above it indented less, or its ``[section]``);
* **logs** and anything else: lines; in a log whose records span several lines (a stack
  trace under its timestamped error line), each line anchored to its record's head line.

Segments are character spans of the original text, so a kept segment is the original,
byte for byte. Their order is the text's order.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate, chain, pairwise
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

__all__ = ["Segments", "Shape", "segment"]

Shape = Literal["json", "code", "table", "config", "prose", "log"]

LONG_LINE: Final = 600
"""A line longer than this many characters is cut into sentences (or fixed pieces)."""
PROSE_LINE: Final = 400
"""A prose line (a paragraph) longer than this many characters is cut into sentences: a
question is answered by one sentence of a paragraph, which costs a fraction of it."""
_PIECE: Final = 400
"""Characters of a piece of a long line that has no sentence ends."""
_SPLIT_ELEMENT: Final = 240
"""A JSON element of more characters than this is cut into its own members or items."""

_SENTENCE: Final = re.compile(r"(?<=[.!?;])\s+(?=\S)")
_HEADING: Final = re.compile(r"\s{0,3}#{1,6}\s")
_SIGNATURE: Final = re.compile(
    r"\s*(?:@|(?:async\s+)?def\s|class\s|func\s|function[\s*]|fn\s|pub\s|impl\s|struct\s|"
    r"interface\s|enum\s|type\s+\w+\s|export\s|module\s|package\s|(?:public|private|protected|"
    r"static|final|abstract|override)\s)"
)
_SIGNATURE_STARTS: Final = frozenset("@acdefimopst")
"""The characters a signature starts with (after its indent): what :data:`_SIGNATURE`'s
alternatives start with, so that the other lines are not matched at all."""
_CODE_STARTS: Final = (
    r"\s*(?:def\s|class\s|import\s|from\s+\S+\s+import\s|func\s|function[\s(*]|const\s|let\s|"
    r"var\s|return\b|if\s*\(|for\s*\(|while\s*\(|#include|fn\s|pub\s|impl\s|package\s|@\w+|"
    r"[})\]];?\s*$"
)
_CODE: Final = re.compile(_CODE_STARTS + r"|.*[{;:]\s*$)")
"""A line of code: a keyword or a closing bracket at its start, or ``{``, ``;`` or ``:`` at
its end."""
_CODE_START: Final = re.compile(_CODE_STARTS + ")")
_CODE_ENDS: Final = ("{", ";", ":")


def _code_line(line: str) -> bool:
    """``bool(_CODE.match(line))`` for a line of ``splitlines(keepends=True)``: its last
    alternative, ``.*[{;:]\\s*$``, holds when the line stripped of its trailing white space
    ends in one of those characters (``.`` reads all but the line break, which only ends
    the line; ``\\s`` and ``str.rstrip`` take the same characters); read so, rather than by
    ``.*`` running to the line's end and back, a long line costs little."""
    return line.rstrip()[-1:] in _CODE_ENDS or _CODE_START.match(line) is not None


_TABLE_RULE: Final = re.compile(r"\s*[|+]?\s*:?-{3,}")
_KEY_VALUE: Final = re.compile(r"\s*(?:- )?[\w.\-/\"' ]{1,60}\s*[:=](?:\s|$)")
_SECTION: Final = re.compile(r"\s*\[[^\]\n]{1,100}\]\s*$")


@dataclass(frozen=True, slots=True)
class Segments:
    """A text's segments (see the module documentation).

    Attributes:
        shape: how the text was cut.
        text: the text.
        spans: ``(start, end)`` of each segment in ``text``, in order, not overlapping.
        lines: the 1-based line number each segment starts on.
        anchors: for each segment, the segment an excerpt keeping it keeps too (a code
            line's signature, a row's header, a line's heading), or -1.
        frame: for JSON, the text before the first and after the last element of the main
            container; ``None`` for the other shapes (their segments cover the text).
        object_members: for JSON, whether the container is an object (its elements are
            ``key: value`` members) rather than an array.
        separator: for JSON, the text between two elements in the original (``",\\n  "``).
        groups: for JSON, the element of the main container each segment belongs to (a
            large element is cut into its own members or items, each a segment; a small one
            is one segment); empty for the other shapes.
        group_frames: for JSON, per element: ``None`` when it is one segment, else the text
            before its first and after its last inner segment, the text between two inner
            segments, and whether its inner segments are object members.
    """

    shape: Shape
    text: str
    spans: tuple[tuple[int, int], ...]
    lines: tuple[int, ...]
    anchors: tuple[int, ...]
    frame: tuple[str, str] | None = None
    object_members: bool = False
    separator: str = ","
    groups: tuple[int, ...] = ()
    group_frames: tuple[tuple[str, str, str, bool] | None, ...] = ()

    def __len__(self) -> int:
        return len(self.spans)

    def texts(self) -> list[str]:
        """Each segment's text."""
        text = self.text
        return [text[start:end] for start, end in self.spans]

    def bounds(self) -> npt.NDArray[np.intp]:
        """The spans as an array of ``(start, end)`` rows (for the passes over all of them)."""
        flat = np.fromiter(chain.from_iterable(self.spans), dtype=np.intp, count=2 * len(self))
        return flat.reshape(-1, 2)


def segment(text: str) -> Segments:
    """Cut ``text`` where a reader would (see the module documentation)."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        found = _json_segments(text)
        if found is not None:
            return found
    lines = text.splitlines(keepends=True)
    ends = list(accumulate(map(len, lines)))
    line_spans = list(pairwise([0, *ends]))
    shape = _line_shape(lines)
    anchors = _anchors(shape, lines)
    if max(map(len, lines), default=0) <= _longest(shape):  # the common case: a segment a line
        numbers = tuple(range(1, len(lines) + 1))
        return Segments(shape, text, tuple(line_spans), numbers, tuple(anchors))
    return _split_long_lines(shape, text, line_spans, anchors)


# --------------------------------------------------------------------------- lines


def _line_shape(lines: list[str]) -> Shape:
    """What the lines are, from a sample of the non-blank ones."""
    sample = [line for line in lines[:400] if line.strip()]
    if not sample:
        return "log"
    pipes = sum(1 for line in sample if line.count("|") >= 2)
    if pipes >= 0.6 * len(sample) or any(_TABLE_RULE.match(line) for line in sample[:5]):
        return "table"
    commas = [line.count(",") for line in sample[:50]]
    if len(sample) >= 3 and min(commas) >= 2 and max(commas) == min(commas):
        return "table"  # CSV: the same number of fields on every line
    if _at_least(sample, 0.5, _config_line):
        return "config"
    if _at_least(sample, 0.35, _code_line):
        return "code"
    headings = sum(1 for line in sample if _HEADING.match(line))
    words = sum(len(line.split()) for line in sample) / len(sample)
    if headings or words >= 12:
        return "prose"
    return "log"


def _config_line(line: str) -> bool:
    """Whether ``line`` is a ``key: value`` (or ``key = value``) line or a ``[section]``;
    a line without the character each pattern needs is not matched at all."""
    return bool(
        (("=" in line or ":" in line) and _KEY_VALUE.match(line))
        or ("[" in line and _SECTION.match(line))
    )


def _at_least(lines: list[str], share: float, test: Callable[[str], bool]) -> bool:
    """Whether ``test`` holds for at least ``share`` of ``lines``; stops as soon as the
    answer is known (the line tests are the cost of telling a text's shape)."""
    need = share * len(lines)
    found = 0
    left = len(lines)
    for line in lines:
        left -= 1
        if test(line):
            found += 1
            if found >= need:
                return True
        elif found + left < need:
            return False
    return found >= need


def _anchors(shape: Shape, lines: list[str]) -> list[int]:
    """Each line's anchor (see :class:`Segments`)."""
    anchors = [-1] * len(lines)
    if shape == "table":
        header = _table_header(lines)
        if header >= 0:
            anchors[header + 1 :] = [header] * (len(lines) - header - 1)
    elif shape == "prose":
        heading = -1
        for position, line in enumerate(lines):
            # A heading's "#" stands within its first four characters: the other lines
            # (nearly all of them) are not matched at all.
            if "#" in line[:4] and _HEADING.match(line):
                heading = position
            elif heading >= 0:
                anchors[position] = heading
    elif shape == "log":
        _record_anchors(lines, anchors)
    elif shape in ("code", "config"):
        # The enclosing block: the nearest earlier line indented less (in code, a
        # signature); a [section] holds the lines after it, whatever their indent.
        stack: list[tuple[int, int]] = []  # (indent, line) of open blocks
        for position, line in enumerate(lines):
            if not line.strip():
                continue
            stripped = line.lstrip()
            indent = len(line) - len(stripped)
            section = shape == "config" and "[" in stripped and bool(_SECTION.match(line))
            if section:
                stack.clear()
            while stack and stack[-1][0] >= indent:
                stack.pop()
            if stack:
                anchors[position] = stack[-1][1]
            if section:
                stack.append((-1, position))
            elif shape == "config" or (
                stripped[:1] in _SIGNATURE_STARTS and _SIGNATURE.match(line)
            ):
                stack.append((indent, position))
    return anchors


def _lead(line: str) -> str:
    """The class of a line's first character: ``"0"`` for a digit, ``" "`` for white
    space, ``"a"`` for a letter, else the character itself."""
    first = line[:1]
    if not first or first.isspace():
        return " "
    if first.isdigit():
        return "0"
    if first.isalpha():
        return "a"
    return first


RECORD_HEADS: Final = ("0", "[")
"""How the head line of a log record starts (see :func:`_lead`): a timestamp's digit, a
bracketed level or time."""


def _record_anchors(lines: list[str], anchors: list[int]) -> None:
    """In a log whose records span several lines (a Java stack trace and its ``Caused by:``
    under the timestamped error line, a Python traceback under the line that logged it),
    anchor each line of a record to its head: the nearest line above it that starts as the
    log's record heads do (:data:`RECORD_HEADS`, the first of them that starts two lines or
    more). A log whose every line is a head, or whose first line is none (a few lines that
    start with a number in a log of other lines), is left as it is."""
    leads = [_lead(line) if line.strip() else "" for line in lines]
    found = Counter(leads)
    heads = [lead for lead in RECORD_HEADS if found[lead] >= 2]
    if not heads or found[heads[0]] + found[""] == len(lines):
        return
    head_lead = heads[0]
    if next(lead for lead in leads if lead) != head_lead:
        return
    head = -1
    for position, lead in enumerate(leads):
        if lead == head_lead:
            head = position
        elif lead and head >= 0:
            anchors[position] = head


def _table_header(lines: list[str]) -> int:
    """The header row of a table: the row above its first rule, else its first row."""
    for position, line in enumerate(lines[:10]):
        if _TABLE_RULE.match(line) and position > 0:
            return position - 1
    for position, line in enumerate(lines[:10]):
        if line.strip():
            return position
    return -1


def _split_long_lines(
    shape: Shape, text: str, line_spans: list[tuple[int, int]], anchors: list[int]
) -> Segments:
    """The lines as segments, a long line cut into sentences (or fixed pieces)."""
    longest = _longest(shape)
    cut = {
        number: _pieces(text, start, end)
        for number, (start, end) in enumerate(line_spans)
        if end - start > longest
    }
    # The few long lines are spliced in; every other line is a segment as it stands.
    spans: list[tuple[int, int]] = []
    previous = 0
    for number, pieces in cut.items():
        spans += line_spans[previous:number]
        spans += pieces
        previous = number + 1
    spans += line_spans[previous:]
    counts = np.ones(len(line_spans), dtype=np.intp)
    counts[list(cut)] = [len(pieces) for pieces in cut.values()]
    first = np.zeros(len(line_spans), dtype=np.intp)  # the first segment of each line
    np.cumsum(counts[:-1], out=first[1:])
    line_anchors = np.asarray(anchors, dtype=np.intp)
    mapped = np.where(line_anchors >= 0, first[np.maximum(line_anchors, 0)], -1)
    numbers = np.repeat(np.arange(1, len(line_spans) + 1, dtype=np.intp), counts)
    return Segments(
        shape,
        text,
        tuple(spans),
        tuple(numbers.tolist()),
        tuple(np.repeat(mapped, counts).tolist()),
    )


def _longest(shape: Shape) -> int:
    """The most characters a line of ``shape`` keeps as one segment."""
    return PROSE_LINE if shape == "prose" else LONG_LINE


def _pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A long line cut at sentence ends, else every :data:`_PIECE` characters (at a space)."""
    cuts = [start]
    for match in _SENTENCE.finditer(text, start, end):
        if match.end() - cuts[-1] >= 40:
            cuts.append(match.end())
    pieces: list[tuple[int, int]] = []
    bounds = [*cuts, end]
    for piece_start, piece_end in pairwise(bounds):
        position = piece_start
        while piece_end - position > LONG_LINE:
            cut = text.rfind(" ", position + _PIECE // 2, position + _PIECE)
            cut = position + _PIECE if cut < 0 else cut + 1
            pieces.append((position, cut))
            position = cut
        pieces.append((position, piece_end))
    return pieces


# --------------------------------------------------------------------------- JSON


def _json_segments(text: str) -> Segments | None:
    """The elements of the document's main container, or ``None`` when ``text`` is not
    one JSON document (it is then cut into lines)."""
    decoder = json.JSONDecoder()
    begin = len(text) - len(text.lstrip())
    # The main container's elements, each read by the decoder and their separators checked:
    # the document read once, as ``decoder.raw_decode`` would (the same documents refused).
    # The containers among its elements are read the same way, one level down (keyed by
    # their start): the descent below finds their elements read already.
    read: dict[int, list[tuple[int, int, int, int]]] = {}
    try:
        checked = _checked_elements(text, begin, decoder, read)
    except ValueError:  # the decoder's refusal of a value
        return None
    if checked is None:
        return None
    elements, end = checked
    if text[end:].strip():
        return None  # several documents (JSON Lines): lines are the better cut
    start, stop = begin, end
    # Descend while one element holds most of the text and is a container itself.
    while elements:
        value_start, value_end = max(
            (element[2:] for element in elements), key=lambda span: span[1] - span[0]
        )
        if (value_end - value_start) < 0.6 * (stop - start) or text[value_start] not in "[{":
            break
        inner = read.pop(value_start, None)
        if inner is None:
            inner = _elements(text, value_start, value_end, decoder)
        if not inner or len(inner) < 2:
            break
        start, stop, elements = value_start, value_end, inner
    if len(elements) < 2:
        return None
    outer = [(element[0], element[3]) for element in elements]
    separator = text[outer[0][1] : outer[1][0]]
    frame = (text[: outer[0][0]], text[outer[-1][1] :])
    # A large element (a record of many fields) is cut into its members, each anchored to
    # its first (the record's name or id, as a reader would keep it).
    spans: list[tuple[int, int]] = []
    anchors: list[int] = []
    groups: list[int] = []
    frames: list[tuple[str, str, str, bool] | None] = []
    for number, (element_start, _, value_start, value_end) in enumerate(elements):
        inner = None
        if value_end - value_start > _SPLIT_ELEMENT and text[value_start] in "[{":
            inner = _elements(text, value_start, value_end, decoder)
        if not inner or len(inner) < 2:
            spans.append((element_start, value_end))
            anchors.append(-1)
            groups.append(number)
            frames.append(None)
            continue
        parts = [(part[0], part[3]) for part in inner]
        frames.append(
            (
                text[element_start : parts[0][0]],
                text[parts[-1][1] : value_end],
                text[parts[0][1] : parts[1][0]],
                text[value_start] == "{",
            )
        )
        first = len(spans)
        spans.extend(parts)
        anchors.append(-1)
        anchors.extend([first] * (len(parts) - 1))
        groups.extend([number] * len(parts))
    lines = _line_numbers(text, [start for start, _ in spans])
    return Segments(
        "json",
        text,
        tuple(spans),
        lines,
        tuple(anchors),
        frame=frame,
        object_members=text[start] == "{",
        separator=separator,
        groups=tuple(groups),
        group_frames=tuple(frames),
    )


def _line_numbers(text: str, starts: list[int]) -> tuple[int, ...]:
    """The 1-based line of each of the ascending positions ``starts``."""
    # The line breaks before each position, counted over the text's code points at once.
    if text.isascii():
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    else:
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    breaks = np.flatnonzero(codes == 10)
    numbers: list[int] = (np.searchsorted(breaks, starts) + 1).tolist()
    return tuple(numbers)


def _elements(
    text: str, start: int, stop: int, decoder: json.JSONDecoder
) -> list[tuple[int, int, int, int]] | None:
    """The elements of the array or object spanning ``text[start:stop]`` (a valid JSON
    value): for each, the start of the element (its key, for a member), the end of its key,
    and its value's span. ``None`` when the span is not an array or an object."""
    opening = text[start]
    if opening not in "[{":
        return None
    elements: list[tuple[int, int, int, int]] = []
    position = _skip(text, start + 1)
    if text[position] in "]}":
        return elements
    scan = decoder.raw_decode
    member = _MEMBER.match
    comma = _COMMA.match
    # An element whose value is a string, a number, true, false or null is read, with the
    # comma after it, by one match (in a valid document, each ends where the decoder's
    # reading would end it); a container, or NaN and Infinity, is left to the decoder.
    scalar = (_SCALAR_MEMBER if opening == "{" else _SCALAR_ITEM).match
    while True:
        element_start = position
        found = scalar(text, position)
        if found is not None:
            value_start, value_end = found.span(2)
            elements.append((element_start, found.end(1), value_start, value_end))
            if found.start(3) < 0:
                return elements
            position = found.end()
            continue
        key_end = position
        if opening == "{":
            found = member(text, position)  # the key (a valid document's string), the colon
            assert found is not None  # a valid document's member
            key_end = found.end(1)
            position = found.end()
        _, value_end = scan(text, position)
        elements.append((element_start, key_end, position, value_end))
        found = comma(text, value_end)
        if found is None:
            return elements
        position = found.end()


def _checked_elements(
    text: str,
    start: int,
    decoder: json.JSONDecoder,
    read: dict[int, list[tuple[int, int, int, int]]] | None = None,
) -> tuple[list[tuple[int, int, int, int]], int] | None:
    """:func:`_elements` of the container starting at ``start``, its end after it; ``None``,
    or the decoder's ``ValueError`` for a value, where ``decoder.raw_decode`` would refuse
    the container (what :func:`_elements` may assume is checked here: the keys, the colons,
    the separators, the closing bracket). With ``read``,
    an element that is a container is read the same way, its elements kept in ``read``
    under its start, rather than decoded whole."""
    opening = text[start]
    closing = "]" if opening == "[" else "}"
    elements: list[tuple[int, int, int, int]] = []
    scan = decoder.raw_decode
    position = _skip(text, start + 1)
    if text[position : position + 1] == closing:
        return elements, position + 1
    while True:
        element_start = position
        key_end = position
        if opening == "{":
            if text[position : position + 1] != '"':
                return None  # a key is a string
            _, key_end = scan(text, position)
            position = _skip(text, key_end)
            if text[position : position + 1] != ":":
                return None  # a colon follows a key
            position = _skip(text, position + 1)
        if read is not None and text[position : position + 1] in ("[", "{"):
            inner = _checked_elements(text, position, decoder)
            if inner is None:
                return None
            read[position], value_end = inner
        else:
            _, value_end = scan(text, position)
        elements.append((element_start, key_end, position, value_end))
        position = _skip(text, value_end)
        following = text[position : position + 1]
        if following == closing:
            return elements, position + 1
        if following != ",":
            return None  # a comma between elements
        position = _skip(text, position + 1)


_BLANK: Final = re.compile(r"[ \t\n\r]*")
"""JSON white space (``json`` reads no other)."""
_MEMBER: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"()[ \t\n\r]*:[ \t\n\r]*')
"""A member's key (a string of a valid document, its end the empty group) and its colon."""
_COMMA: Final = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")
_STRING: Final = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_SCALAR: Final = _STRING + r"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null"
# An array's item or an object's member whose value is a scalar, and the comma after it when
# there is one: group 1 ends the key (the item's start, for an item), group 2 is the value,
# group 3 the comma; the match ends where the next element starts.
_SCALAR_ITEM: Final = re.compile(rf"()({_SCALAR})(?=[ \t\n\r]*[,\]}}])(?:[ \t\n\r]*(,)[ \t\n\r]*)?")
_SCALAR_MEMBER: Final = re.compile(
    rf"{_STRING}()[ \t\n\r]*:[ \t\n\r]*({_SCALAR})(?=[ \t\n\r]*[,\]}}])"
    rf"(?:[ \t\n\r]*(,)[ \t\n\r]*)?"
)


def _skip(text: str, position: int) -> int:
    """The first position at or after ``position`` that is not JSON white space."""
    found = _BLANK.match(text, position)
    return found.end() if found is not None else position
