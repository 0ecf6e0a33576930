"""The recall zone's selection: dropped units the latest user message needs, within a room.

The same structure-aware relevance as ``fit_messages`` (:mod:`pycupel.conversation.structure`),
applied to what the window left out:

* every unit of the history except the system prompt and the latest user turn is scored for
  the latest user message (BM25 with query expansion, the conversation preset's relevance,
  from the BM25 postings the history keeps of its units; or the session policy's scorer);
* a unit's score takes in a share of its neighbours' (an answer is found through its
  question), whether those neighbours are in the window or not;
* dropped units are then taken by relevance per token, each with the units just before and
  after it and its session's dated header when they fit (:func:`take_relevant`).

Only units at least :data:`RELATIVE_THRESHOLD` of the best match are taken for their own
relevance: the zone is re-sent whenever it changes, so weak matches are not worth their
tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from operator import and_

import numpy as np
import numpy.typing as npt

from pycupel.conversation.structure import (
    Structure,
    session_headers,
    take_relevant,
    with_context,
)
from pycupel.conversation.units import MessageUnit
from pycupel.scorers._bm25_index import Bm25Index, relevance_scores
from pycupel.scorers._lexical import FloatArray, IntArray, TermVocabulary
from pycupel.scorers.base import Scorer, check_finite_scores, score_array_for
from pycupel.scorers.relevance import RelevanceScorer

BoolArray = npt.NDArray[np.bool_]

__all__ = [
    "RECALL_STRUCTURE",
    "RELATIVE_THRESHOLD",
    "Recall",
    "RecallScores",
    "choose_recall",
    "score_recall",
    "select_recall",
]

RELATIVE_THRESHOLD = 0.3
"""Units are recalled for their relevance when they score at least this share of the best."""
RECALL_STRUCTURE = Structure(keep_recent=0)
"""Context share, density, neighbours and headers: the defaults of ``fit_messages``."""
_RANKED = 128
"""At most this many candidates (the best by relevance per token) enter the relevance pass."""
_RELEVANCE = RelevanceScorer(expansion=0.3)
"""The conversation preset's relevance (immutable, so one instance serves all sessions)."""


@dataclass(frozen=True, slots=True)
class Recall:
    """The units to recall (ascending), and whether the best match is left out because it
    alone is larger than the room (what the session's relevance-pressure compaction
    answers)."""

    units: list[int]
    crowded: bool
    best: int = -1
    window_share: float = 1.0
    """The best match among the units marked ``in_window`` as a share of the best match in
    the whole corpus (1.0 when nothing else matches): how much of what the message needs
    the window already holds (the session marks its stable prefix and tail; a unit of the
    recall zone counts as outside, and the zone's own rule keeps it)."""


_NOTHING = Recall([], crowded=False)


@dataclass(frozen=True, slots=True)
class RecallScores:
    """The first half of the selection: every unit scored for the query, and how much of
    the best match the window holds (what a session reads to decide whether the zone moves
    before it pays for choosing one; :func:`choose_recall` finishes the selection)."""

    smoothed: FloatArray
    """Each unit's relevance with its neighbours' share (by unit position)."""
    open: BoolArray
    """The units that may be recalled: in the corpus and not in the window."""
    found: IntArray
    """The open units scoring at least :data:`RELATIVE_THRESHOLD` of the best (ascending)."""
    window_share: float
    """:attr:`Recall.window_share`."""


def select_recall(
    units: Sequence[MessageUnit],
    *,
    tokens: Sequence[float] | FloatArray,
    in_window: Sequence[bool] | BoolArray,
    scored: Sequence[int],
    query: str,
    room: float,
    index: Bm25Index,
    vocabulary: TermVocabulary,
    scorer: Scorer | None = None,
    headers: Sequence[int] | None = None,
    alone: list[bool] | None = None,
    alone_flags: BoolArray | None = None,
    corpus: BoolArray | None = None,
) -> Recall:
    """The units to recall within ``room`` tokens (see :class:`Recall`).

    Args:
        units: the history's units.
        tokens: each unit's tokens as the limits count them.
        in_window: whether each unit is already in the request (never recalled).
        scored: the positions that make up the relevance corpus (ascending).
        query: the latest user message's text.
        room: the tokens the zone may take.
        index, vocabulary: the BM25 postings of ``scored`` (:class:`Bm25Index`, kept as
            units arrive) and the units' term ids (for the default relevance).
        scorer: the policy's scorer instead (scores the units' items for ``query``).
        headers: :func:`session_headers` of the units, when the caller keeps them.
        alone: whether each unit is a tool round (``bool(unit.call_ids)``), when the caller
            keeps them.
        alone_flags, corpus: ``alone`` and ``scored`` as boolean arrays by unit position,
            when the caller keeps them (saves converting them every turn).
        ``tokens`` and ``in_window`` may be given as arrays.
    """
    found = score_recall(
        units,
        in_window=in_window,
        scored=scored,
        query=query,
        index=index,
        vocabulary=vocabulary,
        scorer=scorer,
        alone=alone,
        alone_flags=alone_flags,
        corpus=corpus,
    )
    if found is None:
        return _NOTHING
    return choose_recall(units, found, tokens=tokens, room=room, headers=headers, alone=alone)


def score_recall(
    units: Sequence[MessageUnit],
    *,
    in_window: Sequence[bool] | BoolArray | None = None,
    scored: Sequence[int],
    query: str,
    index: Bm25Index,
    vocabulary: TermVocabulary,
    scorer: Scorer | None = None,
    alone: list[bool] | None = None,
    alone_flags: BoolArray | None = None,
    corpus: BoolArray | None = None,
    open_units: BoolArray | None = None,
    linked: BoolArray | None = None,
) -> RecallScores | None:
    """:func:`select_recall`'s scores (its arguments), or None when nothing open matches
    (the selection is then empty, with a ``window_share`` of 1.0). ``open_units`` is
    ``corpus & ~in_window`` (``in_window`` is then not read; without either, nothing is in
    the window) and ``linked`` is ``~(alone_flags[:-1] | alone_flags[1:])`` when the caller
    has them."""
    if not query or not scored:
        return None
    if scorer is None:
        scores = relevance_scores(_RELEVANCE, index, vocabulary, query, len(units))
    else:
        items = [units[u].item for u in scored]
        base = np.asarray(score_array_for(scorer, items, query), dtype=np.float64)
        check_finite_scores(scorer, items, base)
        scores = np.zeros(len(units), dtype=np.float64)
        scores[list(scored)] = base
    # ufunc reductions called directly: the array methods' wrappers cost more than the
    # reductions at these sizes.
    best = float(np.maximum.reduce(scores, initial=0.0))
    if best <= 0.0:
        return None
    # A tool round stands alone (its output is the evidence, the rounds around it are other
    # calls): it neither shares context with its neighbours nor brings them.
    if linked is None:
        if alone_flags is None:
            if alone is None:
                alone = [bool(unit.call_ids) for unit in units]
            alone_flags = np.asarray(alone, dtype=np.bool_)
        linked = ~(alone_flags[:-1] | alone_flags[1:])
    smoothed = with_context(scores, RECALL_STRUCTURE.context, linked)
    # Units outside the corpus (the system prompt, the latest user turn) are never recalled.
    if corpus is None:
        corpus = np.zeros(len(units), dtype=np.bool_)
        corpus[list(scored)] = True
    if open_units is None:
        open_units = corpus.copy()
        if in_window is not None:
            open_units &= ~np.asarray(in_window, dtype=np.bool_)
    strong = smoothed >= RELATIVE_THRESHOLD * best
    strong &= open_units
    found = strong.nonzero()[0]
    if not found.size:
        return None
    # The corpus units in the window: where the corpus and its open units differ.
    inside = float(np.maximum.reduce(smoothed, where=corpus ^ open_units, initial=0.0))
    window_share = inside / float(np.maximum.reduce(smoothed, where=corpus, initial=0.0))
    return RecallScores(smoothed, open_units, found, window_share)


def choose_recall(
    units: Sequence[MessageUnit],
    scores: RecallScores,
    *,
    tokens: Sequence[float] | FloatArray,
    room: float,
    headers: Sequence[int] | None = None,
    alone: list[bool] | None = None,
) -> Recall:
    """The second half of :func:`select_recall` (its arguments): the open units taken by
    relevance per token within ``room``."""
    structure = RECALL_STRUCTURE
    smoothed_array, open_array, found = scores.smoothed, scores.open, scores.found
    values = smoothed_array[found]
    strongest = int(found[np.flatnonzero(values == values.max())[-1]])
    token_array = np.asarray(tokens, dtype=np.float64)
    if found.size > _RANKED:
        # Only the best by relevance per token can fit a zone a share of the budget large.
        key = -values / np.maximum(token_array[found], 1.0) ** structure.density
        found = np.sort(found[_first_by_key(key, _RANKED)])
    if alone is None:
        alone = [bool(unit.call_ids) for unit in units]
    if not structure.session_headers:
        headers = None
    elif headers is None:
        headers = session_headers([unit.item for unit in units])
    token_list: Sequence[float] = token_array.tolist() if isinstance(tokens, np.ndarray) else tokens
    opened: list[bool] = open_array.tolist()
    # A unit is taken when take_relevant marks it; the others (fixed ones) start marked.
    chosen: list[bool] = (~open_array).tolist()
    if room > 0:
        take_relevant(
            token_list,
            chosen,
            smoothed_array.tolist(),
            found.tolist(),
            used=0.0,
            room=room,
            structure=structure,
            headers=headers,
            alone=alone,
        )
    return Recall(
        # Taken and open (True and True): the units take_relevant marked.
        list(compress(range(len(units)), map(and_, chosen, opened))),
        crowded=not chosen[strongest] and token_list[strongest] > room,
        best=strongest,
        window_share=scores.window_share,
    )


def _first_by_key(key: FloatArray, count: int) -> IntArray:
    """The positions of the ``count`` smallest keys, ties by position: what
    ``np.argsort(key, kind="stable")[:count]`` holds (as a set), without sorting them all."""
    if len(key) <= count:
        return np.arange(len(key))
    bound = np.partition(key, count - 1)[count - 1]
    below = np.flatnonzero(key < bound)
    tied = np.flatnonzero(key == bound)[: count - len(below)]
    return np.concatenate([below, tied])
