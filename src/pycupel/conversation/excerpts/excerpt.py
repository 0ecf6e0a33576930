"""An excerpt: the kept segments of a text, in order, every gap marked.

A gap between kept runs becomes one marker naming what was left out and how to get it back::

    [... 1,240 lines (9,876 tokens) elided: ref 3f9a2c5d0e1b7a44 ...]

The ``ref`` appears when the fit was given a :class:`~pycupel.conversation.recall.Recall`:
the elided text is stored under it, and the recall tool gives it back. In a JSON excerpt the
marker is an element of the array (a string) or a member of the object (its key, with the
value ``null``), so the excerpt stays valid JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pycupel.conversation.excerpts.segments import Segments

__all__ = [
    "Excerpt",
    "Gap",
    "Run",
    "chosen_mask",
    "equal_runs",
    "marker_text",
    "render",
    "typical_marker",
]

Remember = Callable[[str], str]
"""``remember(elided_text) -> ref``: stores a gap's text for the recall tool."""


@dataclass(frozen=True, slots=True)
class Run:
    """Kept segments in a row: the lines they span and their tokens."""

    first_line: int
    last_line: int
    tokens: int


@dataclass(frozen=True, slots=True)
class Gap:
    """Elided segments in a row: the lines they span, their tokens, their ref (or ``None``)."""

    first_line: int
    last_line: int
    segments: int
    tokens: int
    ref: str | None


@dataclass(frozen=True, slots=True)
class Excerpt:
    """A rendered excerpt and what it kept and left out."""

    text: str
    kept: tuple[Run, ...]
    elided: tuple[Gap, ...]

    def describe(self) -> dict[str, object]:
        """The excerpt's runs and gaps as plain data (for a report's item metadata)."""
        return {
            "kept": [[run.first_line, run.last_line, run.tokens] for run in self.kept],
            "elided": [[gap.first_line, gap.last_line, gap.tokens, gap.ref] for gap in self.elided],
        }


def marker_text(segments: Segments, gap: Gap, *, members: bool | None = None) -> str:
    """The words of a gap's marker (without the JSON quoting); ``members`` tells whether a
    JSON gap's segments are object members (by default, the main container's kind)."""
    if segments.shape == "json":
        members = segments.object_members if members is None else members
        noun = ("member" if members else "item") + ("s" if gap.segments != 1 else "")
        amount = f"{gap.segments:,} {noun}"
    else:
        lines = gap.last_line - gap.first_line + 1
        amount = f"{lines:,} line{'s' if lines != 1 else ''}"
    ref = f": ref {gap.ref}" if gap.ref else ""
    return f"[... {amount} ({gap.tokens:,} tokens) elided{ref} ...]"


def typical_marker(segments: Segments, *, ref: bool) -> str:
    """A gap's marker as an excerpt of ``segments`` shows it (with the text around it), for
    a gap of a typical size: what a gap costs, to price one before rendering."""
    gap = Gap(1_000, 1_099, 100, 9_999, "0123456789abcdef" if ref else None)
    if segments.shape == "json":
        return segments.separator + _marker(segments, gap)
    return _marker(segments, gap)


def render(
    segments: Segments,
    keep: Collection[int],
    tokens: Sequence[int],
    remember: Remember | None = None,
    *,
    marker: int = 0,
) -> Excerpt:
    """The excerpt of ``segments`` keeping the segments ``keep`` (and their anchors);
    ``tokens`` is each segment's token count. A gap of at most ``marker`` tokens (what its
    marker would cost), or of blank lines only, is kept rather than marked."""
    chosen = set(keep)
    for position in list(chosen):
        anchor = segments.anchors[position]
        while anchor >= 0 and anchor not in chosen:
            chosen.add(anchor)
            anchor = segments.anchors[anchor]
    chosen |= _cheap_gaps(segments, chosen, tokens, marker)
    if segments.shape == "json" and segments.groups:
        return _render_json(segments, chosen, tokens, remember)
    text = segments.text
    spans = segments.spans
    lines = segments.lines
    pieces: list[str] = []
    runs: list[Run] = []
    gaps: list[Gap] = []
    kept = chosen_mask(len(spans), chosen)
    for start, stop in equal_runs(kept):
        first_line = lines[start]
        last_line = lines[stop - 1]
        run_tokens = sum(tokens[start:stop])
        if kept[start]:
            runs.append(Run(first_line, last_line, run_tokens))
            pieces.append(_joined(segments, start, stop))
        else:
            elided = text[spans[start][0] : spans[stop - 1][1]]
            ref = remember(elided) if remember is not None else None
            gap = Gap(first_line, last_line, stop - start, run_tokens, ref)
            gaps.append(gap)
            pieces.append(_marker(segments, gap))
    return Excerpt(_assembled(segments, pieces), tuple(runs), tuple(gaps))


def chosen_mask(count: int, chosen: Collection[int]) -> npt.NDArray[np.bool_]:
    """Whether each of ``count`` segments is in ``chosen``."""
    mask = np.zeros(count, dtype=bool)
    mask[np.fromiter(chosen, dtype=np.intp, count=len(chosen))] = True
    return mask


def equal_runs(keys: npt.NDArray[Any]) -> list[tuple[int, int]]:
    """The runs of equal ``keys``, as ``(start, stop)`` ranges in order: found in one array
    pass (an excerpt keeps a few segments of thousands, which a loop would visit one by
    one)."""
    if not len(keys):
        return []
    edges = (np.flatnonzero(keys[1:] != keys[:-1]) + 1).tolist()
    return list(zip([0, *edges], [*edges, len(keys)], strict=True))


def _render_json(
    segments: Segments, chosen: set[int], tokens: Sequence[int], remember: Remember | None
) -> Excerpt:
    """A JSON excerpt: the main container's elements kept whole, cut (a record keeping some
    of its members), or elided in runs; every gap an element or a member of its own."""
    text, spans, lines, groups = segments.text, segments.spans, segments.lines, segments.groups
    runs: list[Run] = []
    gaps: list[Gap] = []
    pieces: list[str] = []

    def elide(start: int, stop: int) -> None:
        """Mark the whole elements of segments ``start`` to ``stop`` as one gap."""
        elided = text[spans[start][0] : spans[stop - 1][1]]
        ref = remember(elided) if remember is not None else None
        elements = len(set(groups[start:stop]))
        gap = Gap(lines[start], lines[stop - 1], elements, sum(tokens[start:stop]), ref)
        gaps.append(gap)
        pieces.append(_marker(segments, gap))

    # Each element's segments are consecutive (elements numbered in order): only the
    # elements holding a chosen segment are visited, the runs between them are the gaps.
    bounds = equal_runs(np.asarray(groups, dtype=np.intp))
    position = 0
    for group in sorted({groups[s] for s in chosen}):
        start, end = bounds[group]
        if start > position:
            elide(position, start)
        members = list(range(start, end))
        kept = [s for s in members if s in chosen]
        frame = segments.group_frames[group]
        if frame is None or len(kept) == len(members):
            whole = text[spans[start][0] : spans[end - 1][1]]
            pieces.append(whole if frame is None else frame[0] + whole + frame[1])
            runs.append(Run(lines[start], lines[end - 1], sum(tokens[start:end])))
        else:
            cut = _cut_element(
                segments,
                members,
                chosen=chosen,
                tokens=tokens,
                frame=frame,
                remember=remember,
                runs=runs,
                gaps=gaps,
            )
            pieces.append(cut)
        position = end
    if position < len(spans):
        elide(position, len(spans))
    head, tail = segments.frame or ("", "")
    return Excerpt(head + segments.separator.join(pieces) + tail, tuple(runs), tuple(gaps))


def _cut_element(
    segments: Segments,
    members: list[int],
    *,
    chosen: set[int],
    tokens: Sequence[int],
    frame: tuple[str, str, str, bool],
    remember: Remember | None,
    runs: list[Run],
    gaps: list[Gap],
) -> str:
    """An element keeping some of its members (or items), its gaps marked inside it."""
    opening, closing, separator, members_kind = frame
    text, spans, lines = segments.text, segments.spans, segments.lines
    parts: list[str] = []
    position = 0
    while position < len(members):
        kept = members[position] in chosen
        end = position
        while end < len(members) and (members[end] in chosen) == kept:
            end += 1
        first, last = members[position], members[end - 1]  # consecutive segments
        run_tokens = sum(tokens[first : last + 1])
        if kept:
            parts.extend([text[a:b] for a, b in spans[first : last + 1]])
            runs.append(Run(lines[first], lines[last], run_tokens))
        else:
            elided = text[spans[first][0] : spans[last][1]]
            ref = remember(elided) if remember is not None else None
            gap = Gap(lines[first], lines[last], end - position, run_tokens, ref)
            gaps.append(gap)
            words = _quoted(marker_text(segments, gap, members=members_kind))
            parts.append(f"{words}: null" if members_kind else words)
        position = end
    return opening + separator.join(parts) + closing


def _cheap_gaps(
    segments: Segments, chosen: set[int], tokens: Sequence[int], marker: int
) -> set[int]:
    """The elided segments worth keeping instead of a marker: a gap of at most ``marker``
    tokens, or of blank lines between kept segments. In JSON a gap is cut into the pieces
    that get a marker each (the part of it inside a cut element; a run of whole elements)."""
    if not chosen:
        return set()
    text, spans, groups = segments.text, segments.spans, segments.groups
    count = len(spans)
    kept = chosen_mask(count, chosen)
    if segments.shape == "json" and groups:
        # A gap ends where a cut element's members end: the elided members of one cut
        # element are a gap of their own, a run of elided whole elements another.
        elements = np.asarray(groups, dtype=np.intp)
        cut = np.zeros(int(elements[-1]) + 1, dtype=bool)
        cut[elements[kept]] = True
        keys = np.where(kept, -2, np.where(cut[elements], elements, -1))
    else:
        keys = kept
    filled: set[int] = set()
    for start, stop in equal_runs(keys):
        if kept[start]:
            continue
        blank = (
            keys is kept
            and start > 0
            and stop < count
            and all(not text[a:b].strip() for a, b in spans[start:stop])
        )
        if blank or sum(tokens[start:stop]) <= marker:
            filled.update(range(start, stop))
    return filled


def _joined(segments: Segments, start: int, stop: int) -> str:
    """Segments ``start`` to ``stop`` as they stand in the text."""
    spans = segments.spans
    if segments.shape == "json":
        return segments.separator.join(segments.text[a:b] for a, b in spans[start:stop])
    return segments.text[spans[start][0] : spans[stop - 1][1]]


def _marker(segments: Segments, gap: Gap) -> str:
    words = marker_text(segments, gap)
    if segments.shape != "json":
        return words + "\n"
    quoted = _quoted(words)
    return f"{quoted}: null" if segments.object_members else quoted


def _quoted(words: str) -> str:
    """A marker's words as a JSON string (``json.dumps`` keeping non-ASCII characters):
    quoted as they stand when they hold nothing JSON escapes, as a marker's words do."""
    if words.isprintable() and '"' not in words and "\\" not in words:
        return f'"{words}"'
    return json.dumps(words, ensure_ascii=False)


def _assembled(segments: Segments, pieces: list[str]) -> str:
    if segments.frame is None:
        text = "".join(pieces)
        return text if not text.endswith("\n") or segments.text.endswith("\n") else text[:-1]
    head, tail = segments.frame
    return head + segments.separator.join(pieces) + tail
