"""An incremental BM25 index: postings kept as documents arrive and leave, queried for scores.

A session scores its history for every new user message. Rebuilding a
:class:`~pycupel.scorers._lexical.Bm25Corpus` each turn reads every term of the history; this
index keeps, for each term, the documents holding it and how often (its postings), with each
document's length and the total, so a query reads only the postings of its own terms (and,
with query expansion, the terms of the few best documents).

:func:`relevance_scores` gives bit for bit what
:meth:`~pycupel.scorers.relevance.RelevanceScorer.score_term_ids` gives for the same
documents, in the same order: the same formula evaluated in the same order for each
document (a term a document lacks adds exactly 0.0 there, so it is skipped), the same idf,
the same feedback terms with the same ties (best documents by position, terms by id).

Documents are numbered by the caller (a session numbers them by unit position); the corpus is
the documents currently added, in ascending number.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import cast

import numpy as np

from pycupel.scorers._lexical import FloatArray, IntArray, TermVocabulary, words_of
from pycupel.scorers.relevance import _FEEDBACK_ITEMS, _FEEDBACK_TERMS, RelevanceScorer

__all__ = ["Bm25Index", "relevance_scores"]


class _Postings:
    """The documents holding one term and the term's frequency in each.

    Kept as :class:`array.array` columns: a document's terms are appended one value at a
    time as it arrives (a numpy element assignment costs several times more), and a query
    joins the bytes of its terms' columns in one copy and reads them as one numpy array.
    """

    __slots__ = ("documents", "frequencies")

    def __init__(self) -> None:
        self.documents = array("q")
        self.frequencies = array("d")

    @property
    def size(self) -> int:
        return len(self.documents)

    def append(self, document: int, frequency: int) -> None:
        self.documents.append(document)
        self.frequencies.append(frequency)

    def discard(self, document: int) -> None:
        # A document is listed once per term (its frequency counts the repeats).
        if document in self.documents:
            at = self.documents.index(document)
            del self.documents[at]
            del self.frequencies[at]


class Bm25Index:
    """Postings of the documents added so far (see the module docs).

    Not shared between threads: one belongs to one conversation.

    Attributes:
        postings_read: postings entries read by queries so far (a cost measure for tests).
    """

    __slots__ = ("_documents", "_lengths", "_postings", "_total", "postings_read")

    def __init__(self) -> None:
        self._postings: dict[int, _Postings] = {}  # by term id
        self._documents: dict[int, list[int]] = {}  # each document's distinct term ids
        self._lengths = np.zeros(64, dtype=np.float64)  # by document number
        self._total = 0
        self.postings_read = 0

    def __len__(self) -> int:
        return len(self._documents)

    def __contains__(self, document: object) -> bool:
        return document in self._documents

    def add(self, document: int, term_ids: Sequence[int] | IntArray) -> None:
        """Add ``document`` (a number not in the index) with its terms (repeats counted)."""
        assert document not in self._documents, "a document is indexed once"
        if isinstance(term_ids, np.ndarray):
            term_ids = term_ids.tolist()
        counts = Counter(term_ids)  # in order of first occurrence
        postings = self._postings
        for term, count in counts.items():
            found = postings.get(term)
            if found is None:
                found = postings[term] = _Postings()
            # _Postings.append, inlined: this runs for every distinct term of every unit.
            found.documents.append(document)
            found.frequencies.append(count)
        self._documents[document] = list(counts)
        if document >= len(self._lengths):
            grown = np.zeros(max(2 * len(self._lengths), document + 1), dtype=np.float64)
            grown[: len(self._lengths)] = self._lengths
            self._lengths = grown
        self._lengths[document] = len(term_ids)
        self._total += len(term_ids)

    def remove(self, document: int) -> None:
        """Take ``document`` out of the index (it must be in it); reads its terms' postings."""
        postings = self._postings
        for term in self._documents.pop(document):
            found = postings[term]
            found.discard(document)
            if not found.size:
                del postings[term]
        self._total -= int(self._lengths[document])
        self._lengths[document] = 0.0

    def count_in(self, documents: Iterable[int]) -> int:
        """How many of ``documents`` are in the index."""
        return sum(map(self._documents.__contains__, documents))

    def document_frequency(self, term: int) -> int:
        """The number of documents holding ``term``."""
        found = self._postings.get(term)
        return 0 if found is None else found.size

    def length_norms(self, *, k1: float, b: float) -> FloatArray:
        """Each document's ``k1 * (1 - b + b * |d| / avgdl)``, by document number (the
        part of a BM25 denominator that does not depend on the term); valid until the
        index changes, so the passes of one query share it. Empty when the index holds
        no term."""
        if self._total == 0:
            return np.zeros(0, dtype=np.float64)
        avgdl = self._total / len(self._documents)
        # k1 * (1.0 - b + b * lengths / avgdl), operation by operation, in place.
        norms: FloatArray = self._lengths * b
        norms /= avgdl
        norms += 1.0 - b
        norms *= k1
        return norms

    def scores(
        self,
        chosen: dict[int, float],
        size: int,
        *,
        k1: float,
        b: float,
        norms: FloatArray | None = None,
    ) -> FloatArray:
        """BM25 of every document for the ``chosen`` terms (term id -> weight), as an array
        of ``size`` values indexed by document number (0.0 outside the index); ``norms``
        is :meth:`length_norms` for the same ``k1`` and ``b`` when the caller has it."""
        count = len(self._documents)
        if not chosen or self._total == 0:
            return np.zeros(size, dtype=np.float64)
        entries = list(map(self._postings.get, chosen))  # an entry lists a document or more
        weights = list(chosen.values())
        if None in entries:  # terms no document holds add nothing
            kept = [position for position, entry in enumerate(entries) if entry is not None]
            entries = [entries[position] for position in kept]
            weights = [weights[position] for position in kept]
        found = cast("list[_Postings]", entries)
        if not found:
            return np.zeros(size, dtype=np.float64)
        # A term's document frequency is the length of its postings; the rebuilt corpus's
        # idf arithmetic (integers are exact in floats at these sizes).
        sizes = [len(entry.documents) for entry in found]
        self.postings_read += sum(sizes)
        ratios = [1.0 + (count - frequency + 0.5) / (frequency + 0.5) for frequency in sizes]
        weighted = np.log(np.array(ratios, dtype=np.float64))
        if weights.count(1.0) != len(weights):  # 1.0 x idf is idf, bit for bit
            weighted *= np.array(weights, dtype=np.float64)
        # All the terms' postings in one array pass (their bytes joined in one copy: growing
        # an array term by term copies it again and again); each document's contributions
        # are then summed in the terms' order, from 0.0, as the rebuilt corpus sums a
        # document's column (bincount adds its weights in input order, as np.add.at does,
        # in one pass).
        documents = np.frombuffer(b"".join([entry.documents for entry in found]), np.int64)
        tf = np.frombuffer(b"".join([entry.frequencies for entry in found]), np.float64)
        if norms is None:
            norms = self.length_norms(k1=k1, b=b)
        # The operations of weight * tf * (k1 + 1) / (tf + norm), in that order, in place
        # (the postings' arrays are large: fewer temporaries). Each document's length norm
        # is computed once per document (the same floats as computing it for every
        # posting), then read for every posting.
        contributions = np.repeat(weighted, sizes)
        contributions *= tf
        contributions *= k1 + 1.0
        denominators = norms[documents]
        denominators += tf  # tf + norm: addition is commutative in floating point
        contributions /= denominators
        return np.bincount(documents, weights=contributions, minlength=size).astype(
            np.float64, copy=False
        )

    def feedback_terms(
        self, first_pass: FloatArray, query_terms: Sequence[int], *, top: int, terms: int
    ) -> list[int]:
        """Pseudo-relevance feedback, as :meth:`Bm25Corpus.expansion` chooses it: terms held
        by at least two of the ``top`` best documents of ``first_pass`` (ties: the earlier
        document) and not in the query, by (documents among the top) x idf, the best
        ``terms`` of them (ties: the smaller term id)."""
        length = len(first_pass)
        # Only documents at least as good as the top-th best can be among the best (the
        # scores are never negative: with fewer matches than ``top``, every match).
        floor = 0.0
        if length > top:
            floor = float(np.partition(first_pass, length - top)[length - top])
        matches = first_pass >= floor if floor > 0.0 else first_pass > 0.0
        matched: list[int] = matches.nonzero()[0].tolist()
        # A handful of documents (more only on ties): a stable sort by descending score in
        # plain floats orders them as argsort(-values, kind="stable") does.
        values: list[float] = first_pass[matched].tolist()
        ranked = sorted(range(len(matched)), key=lambda i: -values[i])[:top]
        best = [matched[i] for i in ranked]
        if len(best) < 2:
            return []
        # How many of the best documents hold each term (counted in C).
        held = Counter(chain.from_iterable(map(self._documents.__getitem__, best)))
        # The terms held twice or more, less the query's (set operations in C).
        shared = {term for term, count in held.items() if count >= 2}
        candidates = sorted(shared.difference(query_terms))
        if not candidates:
            return []
        # A few dozen candidates at most: the corpus's arithmetic in plain floats (the same
        # IEEE operations; integers are exact) around one numpy log, and a stable sort on
        # the negated values (what argsort(-value, kind="stable") orders).
        count = len(self._documents)
        postings = self._postings
        ratios = []
        for term in candidates:
            frequency = len(postings[term].documents)
            ratios.append(1.0 + (count - frequency + 0.5) / (frequency + 0.5))
        idf: list[float] = np.log(np.array(ratios, dtype=np.float64)).tolist()
        value = [held[term] * term_idf for term, term_idf in zip(candidates, idf, strict=True)]
        ranked = sorted(range(len(value)), key=lambda i: -value[i])[:terms]
        return [candidates[i] for i in ranked if value[i] > 0.0]


def query_term_ids(text: str, vocabulary: TermVocabulary) -> list[int]:
    """The term ids of ``text``'s terms the vocabulary knows, in order, repeats kept (the
    terms :meth:`Bm25Corpus.terms` finds)."""
    return vocabulary.known_ids(words_of(text))


def relevance_scores(
    scorer: RelevanceScorer,
    index: Bm25Index,
    vocabulary: TermVocabulary,
    query: str,
    size: int,
) -> FloatArray:
    """``scorer.score_term_ids`` of the index's documents (ascending number) for ``query``,
    each score placed at its document's number in an array of ``size`` values (0.0 at numbers
    outside the index)."""
    k1, b, expansion = scorer.k1, scorer.b, scorer.expansion
    query_terms = query_term_ids(query, vocabulary)
    norms = index.length_norms(k1=k1, b=b)  # shared by the two passes
    raw = index.scores(dict.fromkeys(query_terms, 1.0), size, k1=k1, b=b, norms=norms)
    if expansion > 0.0:
        extra = index.feedback_terms(raw, query_terms, top=_FEEDBACK_ITEMS, terms=_FEEDBACK_TERMS)
        if extra:
            more = index.scores(dict.fromkeys(extra, 1.0), size, k1=k1, b=b, norms=norms)
            # raw + expansion * more, in place (both arrays are this call's own).
            more *= expansion
            raw += more
    best = float(np.maximum.reduce(raw, initial=0.0))
    if best <= 0.0:
        return np.zeros(size, dtype=np.float64)
    raw /= best
    return raw
