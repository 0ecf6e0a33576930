"""What each segment is worth to the next answer: relevance to the query, and a reader's signals.

All the segments of all the texts being excerpted are scored in one pass, so that their values
compare across texts:

* **Relevance**: BM25 of each segment for the query, with the analysis of
  :class:`~pycupel.scorers.RelevanceScorer` (stems, stop words; camel-case identifiers read
  as their words, ``auditIndexerPort`` as ``audit indexer port``), each pair of adjacent
  query terms counted once more where the segment holds it whole (a name of several words
  matches where it stands, not where its words are scattered), a run of three or four of
  the question's words matching as its initialism too (``rps`` for "requests per second":
  :data:`INITIALISM_WORDS`), scaled so that the best segment scores 1, and weighed by how
  well the whole text matches (a line that shares a
  word with the question counts for less in a text about something else:
  :data:`TEXT_FLOOR`): the text with its unit's call (the tool's name and arguments, what a
  question names an output by), or the call alone, whichever matches better.
* **The question's names**: a question about a thing named by several words ("the disputes
  cron", "the routing producer") is about that thing, so where some segment holds one of the
  question's names (two of its words side by side, no stop word between them, held next to
  each other in either order: ``replica.search`` for "the search replica"), a segment that
  holds none, neither itself nor in its record (a JSON element, a block of settings), counts
  :data:`NAMELESS_SHARE` of its match (as its neighbours' context it counts whole): the lines
  that pin other services "to version ..." in the question's own words give way to the one
  that names the subject.
* **The kind of answer**: a question that names the kind of value it wants ("which port",
  "what version") is answered by a value of that kind, so a matching segment that holds one
  counts :data:`ANSWER_SHARE` more (:mod:`~pycupel.conversation.excerpts.answers`): of two
  lines that name the same service, the one holding a version answers "what version".
* **Trouble**: log lines that report errors, failures, tracebacks and warnings
  (:data:`TROUBLE_BONUS`, :data:`WARNING_BONUS`). Query expansion is not used: the best
  matching lines of a long output are often many lines of one template, whose words would
  only pull in more of it.
* **Unlike their neighbours**: a line whose shape (its words with the numbers, ids and quoted
  values taken out) occurs once in a text of many lines stands out of a run of alike lines
  (:data:`RARE_BONUS`).
* **Orientation**: the first lines of a text say what it is, its last lines often sum it up
  (:data:`OPENING_BONUS`, :data:`CLOSING_BONUS`).
* **Context**: a segment next to a valuable one shares a little of its value
  (:data:`NEIGHBOUR_SHARE`), so what is kept comes with a little context; and each query
  term a segment lacks counts a share of its match in the segment's whole
  (:data:`GROUP_CONTEXT`): a JSON record's member matches the words of its record (the
  question names the record, the member holds the answer), a code line its block's
  signature, a line its section's heading, a table row its header (the column names say
  what its cells hold; the other rows say nothing about it), a setting its blank-line
  separated record (a pod of ``kubectl describe``: its node is lines away from its restart
  count). A term counts once, where it
  matches best, so a member that repeats its record's name gains nothing over one that
  holds the value.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from typing import Final

import numpy as np
import numpy.typing as npt

from pycupel.conversation.excerpts.answers import answer_patterns, holding
from pycupel.conversation.excerpts.segments import Segments
from pycupel.scorers._lexical import (
    STOP_WORDS,
    Bm25Corpus,
    adjacent_terms,
    split_case,
    terms_of,
    words_of,
)

__all__ = ["segment_values"]

TROUBLE_BONUS: Final = 0.35
WARNING_BONUS: Final = 0.15
RARE_BONUS: Final = 0.1
OPENING_BONUS: Final = 0.15
CLOSING_BONUS: Final = 0.05
NEIGHBOUR_SHARE: Final = 0.3
GROUP_CONTEXT: Final = 0.5
"""A query term's match in a segment's whole counts this share for the segment."""
ANSWER_SHARE: Final = 0.5
"""A matching segment holding a value of the kind the question asks for counts this much more."""
NAMELESS_SHARE: Final = 0.5
"""A segment that holds none of the question's names counts this share of its match (when
some segment holds one): the question is about what it names."""
RECORD_SHAPES: Final = frozenset({"json", "config"})
"""Shapes whose wholes are records (a JSON element, a block of settings): a record that holds
a name names each of its segments (a prose section or a code block is about many things)."""
TEXT_FLOOR: Final = 0.35
"""A segment's relevance counts this share in the text that matches the query least, all of
it in the text that matches best."""

INITIALISM_WORDS: Final = (3, 4)
"""The question's runs of this many words are read as their initialisms too."""

_TROUBLE_WORDS: Final = (
    r"error|errors|errno|exception|traceback|fatal|failed|failure|fail|panic|"
    r"refused|denied|crash(?:ed)?|segfault|timed? ?out|abort(?:ed)?|critical"
)
_WARNING_WORDS: Final = r"warn|warning|deprecated|retry(?:ing)?"
_REPORTED: Final = rf"\b(?:(?P<trouble>{_TROUBLE_WORDS})|(?P<warning>{_WARNING_WORDS}))\b"
"""The words of a line that reports trouble, or a warning: one scan finds both (no word is
in both lists, and each match is a whole word, so the matches are those of two scans)."""
_REPORT: Final = re.compile(_REPORTED, re.IGNORECASE)
# An ASCII text is matched lower-cased by the case-sensitive form: the same matches at the
# same positions, about twice as fast as ignoring case; the look-ahead for the words' first
# letters lets the engine skip to the positions holding one (three times as fast).
_REPORT_LOWERED: Final = re.compile(
    "(?=[{}])".format(
        "".join(sorted({word[0] for word in f"{_TROUBLE_WORDS}|{_WARNING_WORDS}".split("|")}))
    )
    + _REPORTED
)
_WORDLESS: Final = re.compile(r"[\W_]*")
_VARIABLE: Final = re.compile(
    r"\"[^\"\n]*\"|'[^'\n]*'|\b[0-9a-f]{8,}\b|\b\d[\w.:/-]*|\b[\w.-]+@[\w.-]+"
)
# _VARIABLE's matches in a text without "@" (its e-mail alternative cannot match there),
# found sooner: each alternative's first character is read by one class (the \b before a
# word character becomes a look-behind), so the regex engine skips the positions where no
# match can start instead of trying every alternative at each.
_VARIABLE_NO_AT: Final = re.compile(
    r"[0-9a-f\"'\d](?:(?<=\")[^\"\n]*\"|(?<=')[^'\n]*'"
    r"|(?<=[0-9a-f])(?<!\w[0-9a-f])[0-9a-f]{7,}\b|(?<=\d)(?<!\w\d)[\w.:/-]*)"
)


def segment_values(
    texts: Sequence[Segments], query: str, labels: Sequence[str] | None = None
) -> list[list[float]]:
    """Each segment's value, per text (see the module documentation); 0 or more, the best
    match for the query near 1 before the bonuses. Every word is read once: the wholes'
    statistics come from the segments'."""
    pieces = [piece.texts() for piece in texts]
    flat = [segment_text for texts_of in pieces for segment_text in texts_of]
    offsets = [0]
    for texts_of in pieces:
        offsets.append(offsets[-1] + len(texts_of))
    blanks = [
        _wordless(segments, texts_of) for segments, texts_of in zip(texts, pieces, strict=True)
    ]
    wholes = [_groups(segments, blank) for segments, blank in zip(texts, blanks, strict=True)]
    relevance = whole_relevance = named_share = None
    if flat and query.strip():
        named = list(labels) if labels is not None else []
        corpus = Bm25Corpus(flat + named, k1=1.2, b=0.75, split_case=True)
        wanted = answer_patterns(query)
        query = split_case(query)
        terms = corpus.terms(query) + corpus.terms(_initialisms(query))
        sequence = terms_of([query])[0]
        # Each text whole, its unit's label (the call) joined to it.
        whole = corpus.of_ranges(
            list(pairwise(offsets)), [len(flat) + n for n in range(len(named))] or None
        )
        whole_relevance = _scaled(whole.scores(terms) + whole.pair_scores(sequence))
        if named:
            # The call alone too: a short call that matches well ("the services query")
            # names its output even when the output's many other words dilute the match.
            calls = corpus.of_ranges(
                [(len(flat) + n, len(flat) + n + 1) for n in range(len(named))]
            )
            by_call = _scaled(calls.scores(terms) + calls.pair_scores(sequence))
            whole_relevance = np.maximum(whole_relevance, by_call)
        idf, matched = corpus.matches(terms, sequence)
        ranges = [
            (offsets[number] + start, offsets[number] + end)
            for number, (spans, _, _) in enumerate(wholes)
            for start, end in spans
        ]
        grouped = corpus.of_ranges(ranges) if ranges else None
        if grouped is not None:
            _, in_groups = grouped.matches(terms, sequence)
            best = _best_group(in_groups, wholes, offsets, matched.shape[1])
            matched = np.maximum(matched, GROUP_CONTEXT * best)
        relevance = _scaled((idf @ matched)[: len(flat)])
        if wanted:
            held = holding(flat, np.flatnonzero(relevance), wanted)
            relevance *= 1.0 + ANSWER_SHARE * held
        names = adjacent_terms(query)
        nameless = _nameless(corpus, grouped, names, texts=texts, wholes=wholes, offsets=offsets)
        named_share = np.where(nameless, NAMELESS_SHARE, 1.0)
    values: list[list[float]] = []
    for number, (segments, texts_of) in enumerate(zip(texts, pieces, strict=True)):
        count = len(texts_of)
        start, end = offsets[number], offsets[number + 1]
        own = _signals(segments, texts_of)
        # What a segment is worth as its neighbours' context: its whole match, named or not
        # (the lines around the answer say what it is about even when they name nothing).
        context = own
        if relevance is not None and whole_relevance is not None and named_share is not None:
            weight = TEXT_FLOOR + (1.0 - TEXT_FLOOR) * float(whole_relevance[number])
            match = relevance[start:end] * weight
            context = own + match
            own = own + match * named_share[start:end]
        shared = own.copy()
        if count > 1:
            neighbours = np.maximum(np.r_[context[1:], 0.0], np.r_[0.0, context[:-1]])
            shared += NEIGHBOUR_SHARE * neighbours
        # A blank segment says nothing: it is worth nothing on its own (an excerpt keeps it
        # between kept neighbours, where it costs less than a marker).
        shared[blanks[number]] = 0.0
        values.append(shared.tolist())
    return values


def _nameless(
    corpus: Bm25Corpus,
    grouped: Bm25Corpus | None,
    names: Sequence[tuple[str, str]],
    *,
    texts: Sequence[Segments],
    wholes: Sequence[_Wholes],
    offsets: Sequence[int],
) -> np.ndarray:
    """The segments that hold none of the question's ``names`` (two of its words side by side,
    held next to each other in either order:
    :meth:`~pycupel.scorers._lexical.Bm25Corpus.holds_pairs`), neither in themselves nor in
    their record (a whole of a :data:`RECORD_SHAPES` text); none when no segment holds one
    (the question names nothing the texts hold). A text's call does not name its segments:
    counting it measured no better."""
    count = offsets[-1]
    named = corpus.holds_pairs(names)[:count]
    if not named.any():
        return named  # no segment holds a name: none is told apart by it
    if grouped is not None:
        in_groups = grouped.holds_pairs(names)
        group_offsets = np.cumsum([0] + [len(spans) for spans, _, _ in wholes])
        for number, segments in enumerate(texts):
            if segments.shape in RECORD_SHAPES:
                _, members, owners = wholes[number]
                in_record = in_groups[owners + group_offsets[number]]
                named[members[in_record] + offsets[number]] = True
    nameless: np.ndarray = ~named
    return nameless


def _initialisms(query: str) -> str:
    """The initials of each run of :data:`INITIALISM_WORDS` words of ``query``, as words
    ("requests per second" gives ``rps``): a text that writes a unit or a name as its
    initialism (``rate_limit_rps``) matches the question that spells it out. A run starts
    and ends with a word that is not a stop word ("the metrics proxy" is not ``tmp``); an
    initialism the texts lack matches nothing."""
    words = words_of(query)
    return " ".join(
        "".join(word[0] for word in run)
        for size in INITIALISM_WORDS
        for run in (words[start : start + size] for start in range(len(words) - size + 1))
        if run[0] not in STOP_WORDS and run[-1] not in STOP_WORDS
    )


def _best_group(
    in_groups: np.ndarray,
    wholes: Sequence[_Wholes],
    offsets: Sequence[int],
    documents: int,
) -> np.ndarray:
    """Per query unit and document (segments first, as numbered across texts; labels
    after, left at 0), its best match in a whole holding the segment (``in_groups[unit,
    group]`` per group of :func:`_groups`, numbered across texts)."""
    group_offsets = np.cumsum([0] + [len(spans) for spans, _, _ in wholes])
    members = np.concatenate(
        [np.zeros(0, dtype=np.intp)]
        + [whole[1] + offsets[number] for number, whole in enumerate(wholes)]
    )
    owners = np.concatenate(
        [np.zeros(0, dtype=np.intp)]
        + [whole[2] + group_offsets[number] for number, whole in enumerate(wholes)]
    )
    best = np.zeros((documents, in_groups.shape[0]), dtype=np.float64)
    if len(members):
        # The pairs sorted by segment, each segment's rows reduced at once (rather than
        # np.maximum.at row by row); 0 is where every maximum starts, as it is in ``best``.
        order = np.argsort(members, kind="stable")
        members = members[order]
        starts = np.flatnonzero(np.r_[True, members[1:] != members[:-1]])
        found = np.maximum.reduceat(in_groups.T[owners[order]], starts, axis=0)
        best[members[starts]] = np.maximum(0.0, found)
    return best.T


_ALNUM_BYTES: Final = bytes(chr(code).isalnum() for code in range(128)) + bytes(128)
"""1 for an ASCII letter or digit, else 0: ``bytes.translate`` marks them in one C pass."""


def _wordless(segments: Segments, texts: list[str]) -> np.ndarray:
    """Whether each segment has no letter or digit."""
    text = segments.text
    if not text.isascii():
        return np.fromiter(
            (_WORDLESS.fullmatch(piece) is not None for piece in texts),
            dtype=bool,
            count=len(texts),
        )
    # ASCII: the letters and digits marked over the text at once, and whether any lies in
    # each segment found by one reduction over the bounds (a 0 after the text, so that a
    # bound at its end is an index; an empty segment's reduction reads the mark at its
    # start, so it is set apart).
    if not len(segments):
        return np.zeros(0, dtype=bool)
    marks = np.frombuffer(text.encode("ascii").translate(_ALNUM_BYTES) + b"\0", dtype=bool)
    bounds = segments.bounds()
    held = np.logical_or.reduceat(marks, bounds.reshape(-1))[::2]
    held[bounds[:, 0] == bounds[:, 1]] = False
    wordless: np.ndarray = ~held
    return wordless


def _scaled(raw: np.ndarray) -> np.ndarray:
    """Scores divided by the best one (zeros when nothing matches)."""
    best = float(raw.max(initial=0.0))
    return raw / best if best > 0.0 else np.zeros(len(raw), dtype=np.float64)


_Wholes = tuple[list[tuple[int, int]], "npt.NDArray[np.intp]", "npt.NDArray[np.intp]"]
"""A text's wholes (ranges of segments), and the ``(segment, whole)`` pairs as two arrays."""


def _groups(segments: Segments, blank: np.ndarray) -> _Wholes:
    """The wholes a text's segments belong to (as ranges of segments), and which segment
    sits in which whole (``(segment, whole)`` pairs, as the arrays of segments and of
    wholes): a JSON record of several members; a table row's header alone; else every
    anchor above the segment (a signature, a parent key, a heading), from it to its last
    descendant. Wholes are numbered in order of their first segment (an anchor's, in the
    order of its first descendant, the nearest anchor first)."""
    empty = np.zeros(0, dtype=np.intp)
    if segments.groups:
        groups = np.asarray(segments.groups, dtype=np.intp)
        framed = np.fromiter(
            (frame is not None for frame in segments.group_frames),
            dtype=bool,
            count=len(segments.group_frames),
        )
        members = np.flatnonzero(framed[groups])
        if not len(members):
            return [], empty, empty
        # A JSON element's segments are consecutive: a whole starts where the element does.
        inner = groups[members]
        starts = np.r_[True, inner[1:] != inner[:-1]]
        owners = np.cumsum(starts) - 1
        ends = np.r_[starts[1:], True]
        ranges = list(zip(members[starts].tolist(), (members[ends] + 1).tolist(), strict=True))
        return ranges, members, owners
    if segments.shape == "table":
        # A row's whole is its header alone: the column names say what its cells hold (the
        # question names the column, the row holds the value); the other rows say nothing.
        rows = np.flatnonzero(np.asarray(segments.anchors, dtype=np.intp) >= 0)
        if not len(rows):
            return [], empty, empty
        header = segments.anchors[int(rows[0])]
        return [(header, header + 1)], rows, np.zeros(len(rows), dtype=np.intp)
    anchors = np.asarray(segments.anchors, dtype=np.intp)
    # Every (segment, anchor above it, steps up) triple, one step up the anchors at a time.
    found: list[tuple[np.ndarray, np.ndarray, int]] = []
    below = np.flatnonzero(anchors >= 0)
    above = anchors[below]
    step = 0
    while len(below):
        found.append((below, above, step))
        higher = anchors[above]
        keep = higher >= 0
        below, above, step = below[keep], higher[keep], step + 1
    if not found:
        return _with_blocks(segments, blank, ([], empty, empty))
    members = np.concatenate([pair[0] for pair in found])
    tops = np.concatenate([pair[1] for pair in found])
    steps = np.concatenate([np.full(len(pair[0]), pair[2], dtype=np.intp) for pair in found])
    order = np.lexsort((steps, members))  # by segment, the nearest anchor first
    members, tops = members[order], tops[order]
    anchored, first, which = np.unique(tops, return_index=True, return_inverse=True)
    numbers = np.empty(len(anchored), dtype=np.intp)
    numbers[np.argsort(first, kind="stable")] = np.arange(len(anchored), dtype=np.intp)
    owners = numbers[which.reshape(-1)]
    ends = np.zeros(len(anchored), dtype=np.intp)
    np.maximum.at(ends, owners, members + 1)
    starts = np.empty(len(anchored), dtype=np.intp)
    starts[owners] = tops
    ranges = list(zip(starts.tolist(), ends.tolist(), strict=True))
    return _with_blocks(segments, blank, (ranges, members, owners))


BLOCK_SHAPES: Final = frozenset({"config"})
"""Shapes whose blank-line blocks are wholes too: the records of a listing (a pod of
``kubectl describe``, a block of settings) are separated by blank lines, and the line holding
a value is told from its siblings in other records by the record's name (a log's blank lines
measured no better)."""


def _with_blocks(segments: Segments, blank: np.ndarray, wholes: _Wholes) -> _Wholes:
    """``wholes`` and, for a text of a :data:`BLOCK_SHAPES` shape with at least two blocks of
    several segments between blank segments, each such block as a whole of its own
    (numbered after them)."""
    ranges, members, owners = wholes
    if segments.shape not in BLOCK_SHAPES or not blank.any():
        return wholes
    # A block starts after each blank segment (and at the first), ends before the next.
    edges = np.flatnonzero(np.diff(np.r_[True, blank, True].astype(np.int8)))
    starts, ends = edges[0::2], edges[1::2]
    several = ends - starts >= 2
    starts, ends = starts[several], ends[several]
    if len(starts) < 2:
        return wholes
    sizes = ends - starts
    block_members = np.repeat(starts, sizes) + (
        np.arange(int(sizes.sum()), dtype=np.intp) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    )
    block_owners = np.repeat(np.arange(len(starts), dtype=np.intp), sizes) + len(ranges)
    return (
        [*ranges, *zip(starts.tolist(), ends.tolist(), strict=True)],
        np.concatenate([members, block_members]),
        np.concatenate([owners, block_owners]),
    )


def _signals(segments: Segments, texts: list[str]) -> np.ndarray:
    """The bonuses of a reader's signals for one text's segments."""
    count = len(texts)
    bonus = np.zeros(count, dtype=np.float64)
    if segments.shape == "log":  # elsewhere "error" or "critical" are words, not a report
        starts = np.fromiter((start for start, _ in segments.spans), dtype=np.intp, count=count)
        text = segments.text
        found = _REPORT_LOWERED.finditer(text.lower()) if text.isascii() else _REPORT.finditer(text)
        where: dict[str | None, list[int]] = {"trouble": [], "warning": []}
        for match in found:
            where[match.lastgroup].append(match.start())

        def reported(kind: str) -> np.ndarray:
            """The segments holding a report of ``kind``, each once."""
            found_in = np.searchsorted(starts, where[kind], side="right") - 1
            # The matches are in order, so are their segments: repeats are neighbours.
            return (
                found_in[np.r_[True, found_in[1:] != found_in[:-1]]] if len(found_in) else found_in
            )

        troubled = reported("trouble")
        bonus[troubled] += TROUBLE_BONUS
        # A warning counts where no trouble is reported.
        warned = reported("warning")
        bonus[warned[bonus[warned] == 0.0]] += WARNING_BONUS
        if count >= 20:
            variable = _VARIABLE if "@" in text else _VARIABLE_NO_AT
            lines = variable.sub("#", text).splitlines()
            if len(lines) >= segments.lines[-1]:  # a value holding a line break: line by line
                shapes = [lines[number - 1].strip() for number in segments.lines]
            else:
                shapes = [variable.sub("#", piece).strip() for piece in texts]
            seen_shapes = Counter(shapes)
            rare = [bool(shape) and seen_shapes[shape] == 1 for shape in shapes]
            bonus[np.fromiter(rare, dtype=bool, count=count)] += RARE_BONUS
    for position in range(min(2, count)):
        bonus[position] += OPENING_BONUS * (1.0 - position / 2)
    for position in range(max(count - 2, 0), count):
        bonus[position] += CLOSING_BONUS
    return bonus
