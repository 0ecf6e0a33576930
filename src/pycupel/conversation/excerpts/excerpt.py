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

from pycupel.conversation.excerpts.segments import Segments

__all__ = ["Excerpt", "Gap", "Run", "marker_text", "render", "typical_marker"]

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
    position = 0
    count = len(spans)
    while position < count:
        start = position
        kept = position in chosen
        while position < count and (position in chosen) == kept:
            position += 1
        first_line = lines[start]
        last_line = lines[position - 1]
        run_tokens = sum(tokens[start:position])
        if kept:
            runs.append(Run(first_line, last_line, run_tokens))
            pieces.append(_joined(segments, start, position))
        else:
            elided = text[spans[start][0] : spans[position - 1][1]]
            ref = remember(elided) if remember is not None else None
            gap = Gap(first_line, last_line, position - start, run_tokens, ref)
            gaps.append(gap)
            pieces.append(_marker(segments, gap))
    return Excerpt(_assembled(segments, pieces), tuple(runs), tuple(gaps))


def _render_json(
    segments: Segments, chosen: set[int], tokens: Sequence[int], remember: Remember | None
) -> Excerpt:
    """A JSON excerpt: the main container's elements kept whole, cut (a record keeping some
    of its members), or elided in runs; every gap an element or a member of its own."""
    text, spans, lines, groups = segments.text, segments.spans, segments.lines, segments.groups
    runs: list[Run] = []
    gaps: list[Gap] = []
    pieces: list[str] = []
    pending: list[int] = []  # the segments of the elements elided since the last kept one

    def gap_of(members: list[int]) -> Gap:
        elided = text[spans[members[0]][0] : spans[members[-1]][1]]
        ref = remember(elided) if remember is not None else None
        count = len({groups[s] for s in members})
        gap = Gap(
            lines[members[0]], lines[members[-1]], count, sum(tokens[s] for s in members), ref
        )
        gaps.append(gap)
        return gap

    def flush() -> None:
        if pending:
            gap = gap_of(pending)
            pieces.append(_marker(segments, gap))
            pending.clear()

    position = 0
    count = len(spans)
    while position < count:
        group = groups[position]
        end = position
        while end < count and groups[end] == group:
            end += 1
        members = list(range(position, end))
        kept = [s for s in members if s in chosen]
        if not kept:
            pending.extend(members)
        else:
            flush()
            frame = segments.group_frames[group]
            if frame is None or len(kept) == len(members):
                whole = text[spans[position][0] : spans[end - 1][1]]
                pieces.append(whole if frame is None else frame[0] + whole + frame[1])
                runs.append(Run(lines[position], lines[end - 1], sum(tokens[s] for s in members)))
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
    flush()
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
        run = members[position:end]
        run_tokens = sum(tokens[s] for s in run)
        if kept:
            parts.extend(text[spans[s][0] : spans[s][1]] for s in run)
            runs.append(Run(lines[run[0]], lines[run[-1]], run_tokens))
        else:
            elided = text[spans[run[0]][0] : spans[run[-1]][1]]
            ref = remember(elided) if remember is not None else None
            gap = Gap(lines[run[0]], lines[run[-1]], len(run), run_tokens, ref)
            gaps.append(gap)
            words = json.dumps(marker_text(segments, gap, members=members_kind), ensure_ascii=False)
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
    cut = {groups[s] for s in chosen} if segments.shape == "json" and groups else None
    filled: set[int] = set()
    count = len(spans)
    position = 0
    while position < count:
        if position in chosen:
            position += 1
            continue
        end = position
        if cut is None:
            while end < count and end not in chosen:
                end += 1
            inner = position > 0 and end < count
            if inner and all(not text[a:b].strip() for a, b in spans[position:end]):
                filled.update(range(position, end))
        else:
            group = groups[position]
            inside = group in cut  # elided members of a cut element
            while end < count and end not in chosen and (groups[end] in cut) == inside:
                if inside and groups[end] != group:
                    break
                end += 1
        if sum(tokens[position:end]) <= marker:
            filled.update(range(position, end))
        position = end
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
    quoted = json.dumps(words, ensure_ascii=False)
    return f"{quoted}: null" if segments.object_members else quoted


def _assembled(segments: Segments, pieces: list[str]) -> str:
    if segments.frame is None:
        text = "".join(pieces)
        return text if not text.endswith("\n") or segments.text.endswith("\n") else text[:-1]
    head, tail = segments.frame
    return head + segments.separator.join(pieces) + tail
