"""Query-aware scorers: how well each item answers the run's query.

The query travels with the run (``Pipeline.run(items, query=...)``, ``fit_messages(...,
query=...)``) and reaches these scorers through ``score_array_for(items, query)``; they keep
nothing from one run to the next (the embedding cache holds vectors of contents, not runs).
Run without a query they raise :class:`~pycupel.errors.MissingQueryError`.

* :class:`RelevanceScorer`: lexical relevance, Okapi BM25 over the run's items (see
  :mod:`pycupel.scorers._lexical` for the analysis and the formula), divided by the best
  item's score so it lies in [0, 1] and composes with the other scorers.
* :class:`EmbeddingScorer`: semantic relevance from any batch embedding function you supply:
  ``(1 + cosine(query, item)) / 2``, in [0, 1].
* :class:`RankFusionScorer`: reciprocal rank fusion of several scorers (lexical and
  embedding, typically): ``sum(1 / (k + rank))`` over the children, divided by its largest
  possible value; ranks, not raw values, so scorers of different scales fuse fairly.
* :class:`RetrievalScoreScorer`: your retriever's own scores, of any range, read from item
  metadata and turned into [0, 1] by rank or by min-max scaling (never clamped).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

import numpy as np

from pycupel._checks import check_float, check_int
from pycupel.errors import ItemValidationError, MissingQueryError, ScorerConfigError
from pycupel.model import ContextItem
from pycupel.scorers._immutable import Immutable
from pycupel.scorers._lexical import Bm25Corpus, IntArray, TermVocabulary
from pycupel.scorers.base import BaseScorer, FloatArray, Scorer, as_scorer, score_array_for

__all__ = [
    "EmbedFunction",
    "EmbeddingScorer",
    "RankFusionScorer",
    "RelevanceScorer",
    "RetrievalScoreScorer",
]

EmbedFunction = Callable[[Sequence[str]], Sequence[Sequence[float]]]
"""A batch embedding function: texts in, one vector (a sequence of floats) per text out."""


def _require_query(scorer: object, query: object) -> str:
    name = type(scorer).__name__
    if query is None:
        raise MissingQueryError(
            "query",
            None,
            f"{name} scores relevance to the run's query: pass query= to Pipeline.run, "
            f"Pipeline.dry_run or fit_messages",
        )
    if not isinstance(query, str):
        raise MissingQueryError("query", query, f"{name} needs the query as a string")
    return query


class RelevanceScorer(Immutable, BaseScorer):
    """Lexical relevance of each item's content to the run's query (BM25).

    Every item is a document of the run's corpus; the score is the item's BM25 divided by the
    best score of the run, so the best match scores 1.0 and an item sharing no term with the
    query scores 0.0 (all items score 0.0 when none shares a term).

    With ``expansion > 0`` the query is expanded once from the run's own items
    (pseudo-relevance feedback): the terms shared by at least two of the 8 best-matching
    items, ranked by how many of them hold the term times its idf, 12 at most, are added
    with weight ``expansion``. This finds items that answer the query in other words ("the
    adoption agency" for "plans for the summer"), at the cost of a second, cheap query.

    Args:
        k1: term-frequency saturation (> 0; 1.2 by default).
        b: document-length normalisation, in [0, 1] (0.75 by default).
        expansion: weight of the expansion terms (>= 0; 0, the default, turns expansion off).

    Raises:
        ScorerConfigError: ``k1``, ``b`` or ``expansion`` out of range.
        MissingQueryError: when scored without a query.
    """

    __slots__ = ("_b", "_expansion", "_k1")

    _k1: float
    _b: float
    _expansion: float

    def __init__(self, *, k1: float = 1.2, b: float = 0.75, expansion: float = 0.0) -> None:
        object.__setattr__(self, "_k1", check_float(ScorerConfigError, "k1", k1, positive=True))
        value = check_float(ScorerConfigError, "b", b)
        if not 0.0 <= value <= 1.0:
            raise ScorerConfigError("b", b, "must be between 0 and 1")
        object.__setattr__(self, "_b", value)
        weight = check_float(ScorerConfigError, "expansion", expansion)
        if weight < 0.0:
            raise ScorerConfigError("expansion", expansion, "must be >= 0")
        object.__setattr__(self, "_expansion", weight)

    @property
    def expansion(self) -> float:
        """Weight of the pseudo-relevance-feedback terms (0: no expansion)."""
        return self._expansion

    @property
    def k1(self) -> float:
        """Term-frequency saturation."""
        return self._k1

    @property
    def b(self) -> float:
        """Document-length normalisation."""
        return self._b

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        return self.score_array_for(items, None)

    def score_array_for(self, items: Sequence[ContextItem], query: str | None) -> FloatArray:
        """BM25 of every item for ``query``, divided by the best one (0.0 when none matches)."""
        text = _require_query(self, query)
        corpus = Bm25Corpus([item.content for item in items], k1=self._k1, b=self._b)
        return self._scaled(corpus, text)

    def score_term_ids(
        self, per_doc: Sequence[IntArray], vocabulary: TermVocabulary, query: str | None
    ) -> FloatArray:
        """:meth:`score_array_for` of documents given as :meth:`TermVocabulary.ids` arrays
        (the same scores, for callers that analyse each document once while the corpus
        grows, as a session's history does).

        With expansion, feedback terms of equal weight are ranked by their ids, which a
        growing vocabulary numbers in order of first appearance (text corpora number them
        alphabetically): such a tie may pick another term than :meth:`score_array_for`,
        the same one for the same documents every time.
        """
        text = _require_query(self, query)
        corpus = Bm25Corpus.of_term_ids(per_doc, vocabulary, k1=self._k1, b=self._b)
        return self._scaled(corpus, text)

    def _scaled(self, corpus: Bm25Corpus, text: str) -> FloatArray:
        terms = corpus.terms(text)
        raw = corpus.scores(terms)
        if self._expansion > 0.0:
            extra = corpus.expansion(raw, terms, top=_FEEDBACK_ITEMS, terms=_FEEDBACK_TERMS)
            if extra:
                raw = raw + self._expansion * corpus.scores(extra)
        best = float(raw.max(initial=0.0))
        if best <= 0.0:
            return np.zeros(corpus.size, dtype=np.float64)
        scaled: FloatArray = raw / best
        return scaled

    def __reduce__(self) -> tuple[object, ...]:
        return (_relevance, (self._k1, self._b, self._expansion))

    def __repr__(self) -> str:
        return f"RelevanceScorer(k1={self._k1!r}, b={self._b!r}, expansion={self._expansion!r})"


_FEEDBACK_ITEMS = 8
_FEEDBACK_TERMS = 12


def _relevance(k1: float, b: float, expansion: float) -> RelevanceScorer:
    return RelevanceScorer(k1=k1, b=b, expansion=expansion)


class EmbeddingScorer(Immutable, BaseScorer):
    """Semantic relevance from your embedding model: ``(1 + cosine(query, item)) / 2``.

    ``embed`` receives a list of texts and returns one vector per text (lists, tuples or
    numpy arrays; every vector of the same length). Each run embeds, in one call, only the
    contents (and the query) not yet in the cache. The cache maps text to vector, holds at
    most ``cache_size`` entries (least recently used evicted first) and is guarded by a lock,
    so one scorer serves many threads. The embedding function itself is called outside the
    lock and must be safe to call from several threads if you share the scorer.

    Args:
        embed: the batch embedding function (see :data:`EmbedFunction`).
        cache_size: most cached vectors (>= 0; 0 disables the cache).

    Raises:
        ScorerConfigError: ``embed`` not callable, a bad ``cache_size``, or an embedding
            function returning the wrong number of vectors, vectors of different lengths,
            empty or non-finite vectors.
        MissingQueryError: when scored without a query.
    """

    __slots__ = ("_cache", "_cache_size", "_embed", "_lock")

    _embed: EmbedFunction
    _cache_size: int
    _cache: OrderedDict[str, FloatArray]
    _lock: threading.Lock

    def __init__(self, *, embed: EmbedFunction, cache_size: int = 10_000) -> None:
        if not callable(embed):
            raise ScorerConfigError("embed", embed, "must be a function texts -> vectors")
        object.__setattr__(self, "_embed", embed)
        object.__setattr__(
            self, "_cache_size", check_int(ScorerConfigError, "cache_size", cache_size, minimum=0)
        )
        object.__setattr__(self, "_cache", OrderedDict())
        object.__setattr__(self, "_lock", threading.Lock())

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        return self.score_array_for(items, None)

    def score_array_for(self, items: Sequence[ContextItem], query: str | None) -> FloatArray:
        """``(1 + cosine)/2`` between the query's vector and each item's (0.5 for a zero vector)."""
        text = _require_query(self, query)
        vectors = self.vectors([text, *(item.content for item in items)])
        norms = np.linalg.norm(vectors, axis=1)
        safe = np.where(norms == 0.0, 1.0, norms)
        unit = vectors / safe[:, None]
        cosine = np.clip(unit[1:] @ unit[0], -1.0, 1.0)  # rounding only: |cos| <= 1 exactly
        scores: FloatArray = (1.0 + cosine) / 2.0
        return scores

    def vectors(self, texts: Sequence[str]) -> FloatArray:
        """The vectors of ``texts`` (one row per text), from the cache or one ``embed`` call."""
        found: dict[str, FloatArray] = {}
        with self._lock:
            for text in texts:
                vector = self._cache.get(text)
                if vector is not None:
                    self._cache.move_to_end(text)
                    found[text] = vector
        missing = list(dict.fromkeys(text for text in texts if text not in found))
        if missing:
            fresh = self._call_embed(missing)
            found.update(zip(missing, fresh, strict=True))
            if self._cache_size:
                with self._lock:
                    for text, vector in zip(missing, fresh, strict=True):
                        self._cache[text] = vector
                        self._cache.move_to_end(text)
                    while len(self._cache) > self._cache_size:
                        self._cache.popitem(last=False)
        rows = [found[text] for text in texts]
        if not rows:
            return np.zeros((0, 0), dtype=np.float64)
        width = {row.shape[0] for row in rows}
        if len(width) != 1:
            raise ScorerConfigError(
                "embed", f"vectors of lengths {sorted(width)}", "must return vectors of one length"
            )
        return np.vstack(rows)

    def _call_embed(self, texts: list[str]) -> list[FloatArray]:
        raw = self._embed(texts)
        try:
            matrix = np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ScorerConfigError(
                "embed", type(raw).__name__, "must return one sequence of numbers per text"
            ) from exc
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise ScorerConfigError(
                "embed",
                f"an array of shape {matrix.shape}",
                f"must return exactly one vector per text ({len(texts)})",
            )
        if matrix.shape[1] == 0:
            raise ScorerConfigError("embed", "empty vectors", "must return non-empty vectors")
        if not np.isfinite(matrix).all():
            raise ScorerConfigError("embed", "a NaN or infinite value", "must return finite values")
        return [row.copy() for row in matrix]

    def __reduce__(self) -> tuple[object, ...]:
        return (_embedding, (self._embed, self._cache_size))

    def __repr__(self) -> str:
        name = getattr(self._embed, "__name__", type(self._embed).__name__)
        return f"EmbeddingScorer(embed={name}, cache_size={self._cache_size})"


def _embedding(embed: EmbedFunction, cache_size: int) -> EmbeddingScorer:
    return EmbeddingScorer(embed=embed, cache_size=cache_size)


class RankFusionScorer(Immutable, BaseScorer):
    """Reciprocal rank fusion of several scorers, each given the run's query.

    Each child ranks the items (rank 1 is its best; equal scores share the better rank); an
    item's fused value is ``sum(1 / (k + rank))`` over the children, and its score is that
    value divided by ``len(children) / (k + 1)``, the value of an item every child ranks
    first, so scores lie in (0, 1]. Fusing ranks rather than values is what makes a BM25
    ranking and a cosine ranking comparable (Cormack et al., 2009, use ``k = 60``).

    Args:
        scorers: at least one scorer (a ``RelevanceScorer`` and an ``EmbeddingScorer``,
            typically); any scorer or function ``item -> float`` is accepted.
        k: the rank offset (> 0); larger values flatten the difference between top ranks.
    """

    __slots__ = ("_k", "_scorers")

    _scorers: tuple[Scorer, ...]
    _k: float

    def __init__(
        self, scorers: Iterable[Scorer | Callable[[ContextItem], float]], *, k: float = 60.0
    ) -> None:
        given: object = scorers
        if isinstance(given, str | bytes) or not isinstance(given, Iterable):
            raise ScorerConfigError("scorers", given, "must be an iterable of scorers")
        children: list[Scorer] = []
        for index, scorer in enumerate(given):
            try:
                children.append(as_scorer(scorer))
            except ScorerConfigError as exc:
                raise ScorerConfigError(f"scorers[{index}]", scorer, exc.rule) from exc
        if not children:
            raise ScorerConfigError("scorers", [], "must contain at least one scorer")
        object.__setattr__(self, "_scorers", tuple(children))
        object.__setattr__(self, "_k", check_float(ScorerConfigError, "k", k, positive=True))

    @property
    def scorers(self) -> tuple[Scorer, ...]:
        """The fused scorers."""
        return self._scorers

    def children(self) -> tuple[Scorer, ...]:
        return self._scorers

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        return self.score_array_for(items, None)

    def score_array_for(self, items: Sequence[ContextItem], query: str | None) -> FloatArray:
        """The fused reciprocal ranks, each child scored for ``query``."""
        fused = np.zeros(len(items), dtype=np.float64)
        for scorer in self._scorers:
            fused += 1.0 / (self._k + competition_ranks(score_array_for(scorer, items, query)))
        result: FloatArray = fused / (len(self._scorers) / (self._k + 1.0))
        return result

    def __reduce__(self) -> tuple[object, ...]:
        return (_fusion, (self._scorers, self._k))

    def __repr__(self) -> str:
        return f"RankFusionScorer({list(self._scorers)!r}, k={self._k!r})"


def _fusion(scorers: tuple[Scorer, ...], k: float) -> RankFusionScorer:
    return RankFusionScorer(scorers, k=k)


def competition_ranks(scores: FloatArray) -> FloatArray:
    """1-based ranks by descending score; equal scores share the best rank ("1224")."""
    count = len(scores)
    if count == 0:
        return np.zeros(0, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    ordered = scores[order]
    first = np.ones(count, dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(count), 0))
    ranks = np.empty(count, dtype=np.float64)
    ranks[order] = start + 1.0
    return ranks


class RetrievalScoreScorer(Immutable, BaseScorer):
    """Your retriever's scores, of any range, as scores in [0, 1].

    Reads ``item.metadata[key]`` (an int or float: a BM25 score, a cosine, a negative
    distance...). ``scale="minmax"`` maps the lowest to 0 and the highest to 1 linearly (all
    equal: 1.0); ``scale="rank"`` keeps only the order: the best scores 1, the worst 0,
    evenly spaced, equal scores sharing the better rank. Larger raw values are better;
    negate a distance before storing it. Nothing is clamped: 37.2 and 41.0 stay distinct.

    Args:
        key: the metadata key holding the score (``"retrieval_score"`` by default).
        scale: ``"rank"`` (default) or ``"minmax"``.

    Raises:
        ScorerConfigError: a blank key or an unknown scale.
        ItemValidationError: an item without the key, or with a value that is not a finite
            number.
    """

    __slots__ = ("_key", "_scale")

    _key: str
    _scale: Literal["rank", "minmax"]

    def __init__(
        self, *, key: str = "retrieval_score", scale: Literal["rank", "minmax"] = "rank"
    ) -> None:
        if not isinstance(key, str) or not key.strip():
            raise ScorerConfigError("key", key, "must be a non-blank string")
        if scale not in ("rank", "minmax"):
            raise ScorerConfigError("scale", scale, "must be 'rank' or 'minmax'")
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_scale", scale)

    @property
    def key(self) -> str:
        """The metadata key read."""
        return self._key

    @property
    def scale(self) -> str:
        """``"rank"`` or ``"minmax"``."""
        return self._scale

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        raw = np.fromiter(
            (self._raw(index, item) for index, item in enumerate(items)),
            dtype=np.float64,
            count=len(items),
        )
        if len(raw) == 0:
            return raw
        if self._scale == "minmax":
            low, high = float(raw.min()), float(raw.max())
            if high == low:
                return np.ones(len(raw), dtype=np.float64)
            scaled: FloatArray = (raw - low) / (high - low)
            return scaled
        if len(raw) == 1:
            return np.ones(1, dtype=np.float64)
        ranked: FloatArray = 1.0 - (competition_ranks(raw) - 1.0) / (len(raw) - 1.0)
        return ranked

    def _raw(self, index: int, item: ContextItem) -> float:
        value = item.metadata.get(self._key)
        field = f"items[{index}].metadata[{self._key!r}]"
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ItemValidationError(
                field, value, "must be a number (the retriever's score) for RetrievalScoreScorer"
            )
        try:
            number = float(value)
        except OverflowError:  # an int beyond the float range
            number = math.inf
        if not math.isfinite(number):
            raise ItemValidationError(field, value, "must be a finite number")
        return number

    def __reduce__(self) -> tuple[object, ...]:
        return (_retrieval, (self._key, self._scale))

    def __repr__(self) -> str:
        return f"RetrievalScoreScorer(key={self._key!r}, scale={self._scale!r})"


def _retrieval(key: str, scale: Literal["rank", "minmax"]) -> RetrievalScoreScorer:
    return RetrievalScoreScorer(key=key, scale=scale)
