"""Query-aware scorers: BM25 against hand-computed values, embeddings, fusion, raw scores."""

from __future__ import annotations

import hashlib
import math
import pickle
import threading
from collections.abc import Sequence

import numpy as np
import pytest

from pycupel import ContextItem
from pycupel.errors import ItemValidationError, MissingQueryError, ScorerConfigError
from pycupel.scorers import (
    CompositeScorer,
    EmbeddingScorer,
    RankFusionScorer,
    RecencyScorer,
    RelevanceScorer,
    RetrievalScoreScorer,
    ScaledScorer,
    score_array_for,
)
from pycupel.scorers._lexical import Bm25Corpus, terms_of


def items_of(*texts: str, **metadata: object) -> list[ContextItem]:
    return [ContextItem(text, tokens=len(text.split()), metadata=metadata) for text in texts]


def bm25_term(tf: float, length: float, avgdl: float, df: int, n: int) -> float:
    """One term's BM25 contribution, written out from the formula (k1 = 1.2, b = 0.75)."""
    idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avgdl))


# --------------------------------------------------------------------------- analysis


def test_terms_are_stemmed_casefolded_and_stop_words_removed() -> None:
    assert terms_of(["The Runners were RUNNING to the parks!", "a"]) == [
        ["runner", "run", "park"],
        [],
    ]


def test_bm25_matches_hand_computed_values() -> None:
    # apple: df 2 of 3 documents; lengths 2, 3, 1 (avgdl 2).
    corpus = Bm25Corpus(["apple banana", "apple apple cherry", "date"], k1=1.2, b=0.75)
    raw = corpus.scores(["appl"])
    expected = [
        bm25_term(1, 2, 2.0, 2, 3),
        bm25_term(2, 3, 2.0, 2, 3),
        0.0,
    ]
    assert raw.tolist() == pytest.approx(expected, rel=1e-12)
    # ln(1.6) and ln(1.6) * 4.4 / 3.65, computed by hand:
    assert raw[0] == pytest.approx(0.4700036292457356, rel=1e-12)
    assert raw[1] == pytest.approx(0.4700036292457356 * 4.4 / 3.65, rel=1e-12)


def test_bm25_sums_distinct_query_terms() -> None:
    corpus = Bm25Corpus(["apple banana", "banana cherry", "cherry date"], k1=1.2, b=0.75)
    raw = corpus.scores(["appl", "banana", "banana"])
    # Every document has 2 terms (avgdl 2); apple df 1, banana df 2.
    expected0 = bm25_term(1, 2, 2.0, 1, 3) + bm25_term(1, 2, 2.0, 2, 3)
    assert raw.tolist() == pytest.approx([expected0, bm25_term(1, 2, 2.0, 2, 3), 0.0])


# --------------------------------------------------------------------------- RelevanceScorer


def test_relevance_scorer_divides_by_the_best_score() -> None:
    items = items_of("apple banana", "apple apple cherry", "date")
    scores = RelevanceScorer().score_all_for(items, "Apples?")
    assert scores == pytest.approx([3.65 / 4.4, 1.0, 0.0])


def test_relevance_scorer_matches_inflections() -> None:
    items = items_of("she adopted two dogs", "the weather was nice")
    assert RelevanceScorer().score_all_for(items, "adoption of a dog") == [1.0, 0.0]


def test_relevance_scorer_without_a_match_scores_zero() -> None:
    items = items_of("apple", "banana")
    assert RelevanceScorer().score_all_for(items, "the of and") == [0.0, 0.0]
    assert RelevanceScorer().score_all_for([], "apple") == []


def test_full_length_normalisation_scores_a_document_without_terms_zero() -> None:
    # With b = 1 a document left with no terms (only stop words) has a zero length norm; its
    # score is 0, not 0/0, and the other documents keep their BM25 values.
    items = items_of("the of and", "apple banana", "apple")
    for b in (1.0, 0.75, 0.0):
        scores = RelevanceScorer(b=b).score_all_for(items, "apple")
        assert scores[0] == 0.0
        assert all(math.isfinite(score) for score in scores)
        assert max(scores) == 1.0
    # The shorter document wins under full normalisation (avgdl 1: norms 2.4 and 1.2).
    assert RelevanceScorer(b=1.0).score_all_for(items, "apple") == pytest.approx(
        [0.0, 2.2 / 3.4 / (2.2 / 2.2), 1.0]
    )


def test_relevance_scorer_needs_a_query() -> None:
    items = items_of("apple")
    with pytest.raises(MissingQueryError, match="pass query="):
        RelevanceScorer().score_all(items)
    with pytest.raises(MissingQueryError):
        CompositeScorer([(RelevanceScorer(), 1), (RecencyScorer(), 1)]).score_all(items)
    with pytest.raises(MissingQueryError, match="string"):
        RelevanceScorer().score_all_for(items, 42)  # type: ignore[arg-type]


def test_query_reaches_children_of_combinators() -> None:
    items = items_of("apple banana", "apple apple cherry", "date")
    scaled = ScaledScorer(RelevanceScorer())
    assert score_array_for(scaled, items, "apple").tolist() == pytest.approx([3.65 / 4.4, 1, 0])
    composite = CompositeScorer([(RelevanceScorer(), 3), (RecencyScorer(), 1)])
    relevance = RelevanceScorer().score_array_for(items, "apple")
    recency = RecencyScorer().score_array(items)
    assert composite.score_array_for(items, "apple").tolist() == pytest.approx(
        (relevance * 0.75 + recency * 0.25).tolist()
    )


def test_expansion_finds_items_sharing_the_top_items_vocabulary() -> None:
    items = items_of(
        "we visited the adoption agency about a puppy",
        "the agency said the puppy needs a yard",
        "adoption paperwork for the puppy is done",
        "lunch was pasta",
        "the weather was fine",
    )
    plain = RelevanceScorer().score_all_for(items, "adoption")
    expanded = RelevanceScorer(expansion=0.5).score_all_for(items, "adoption")
    assert plain[1] == 0.0
    assert expanded[1] > 0.0  # shares "puppy" with both adoption items
    assert expanded[3] == expanded[4] == 0.0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"k1": 0}, "k1"), ({"b": 1.5}, "b"), ({"expansion": -1}, "expansion")],
)
def test_relevance_scorer_rejects_bad_parameters(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(ScorerConfigError) as caught:
        RelevanceScorer(**kwargs)
    assert caught.value.field == field


def test_relevance_scorer_pickles() -> None:
    scorer = RelevanceScorer(k1=1.5, b=0.5, expansion=0.2)
    clone = pickle.loads(pickle.dumps(scorer))
    assert (clone.k1, clone.b, clone.expansion) == (1.5, 0.5, 0.2)


# --------------------------------------------------------------------------- EmbeddingScorer


class HashingEmbedder:
    """A deterministic local embedding: hashed bag of words, 64 dimensions; counts its calls."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.lock = threading.Lock()

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        with self.lock:
            self.calls.append(list(texts))
        vectors = []
        for text in texts:
            vector = [0.0] * 64
            for word in text.lower().split():
                digest = hashlib.sha256(word.encode()).digest()
                vector[digest[0] % 64] += 1.0
            vectors.append(vector)
        return vectors


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_embedding_scorer_is_half_one_plus_cosine() -> None:
    embed = HashingEmbedder()
    items = items_of("red apple pie", "blue sky", "apple")
    scores = EmbeddingScorer(embed=embed).score_all_for(items, "apple pie")
    query_vector = HashingEmbedder()(["apple pie"])[0]
    vectors = HashingEmbedder()([item.content for item in items])
    assert scores == pytest.approx([(1 + cosine(query_vector, v)) / 2 for v in vectors])
    assert scores[0] > scores[1]


def test_embedding_cache_is_keyed_by_content() -> None:
    embed = HashingEmbedder()
    scorer = EmbeddingScorer(embed=embed)
    scorer.score_all_for(items_of("one", "two"), "q")
    scorer.score_all_for(items_of("two", "three"), "q")
    assert embed.calls == [["q", "one", "two"], ["three"]]


def test_embedding_cache_is_bounded() -> None:
    embed = HashingEmbedder()
    scorer = EmbeddingScorer(embed=embed, cache_size=2)
    scorer.score_all_for(items_of("one", "two"), "q")  # q, one, two -> keeps one, two
    scorer.score_all_for(items_of("two"), "one")  # both cached: no call
    assert embed.calls == [["q", "one", "two"]]
    scorer.score_all_for(items_of("two"), "q")  # q was evicted first
    assert embed.calls[-1] == ["q"]
    no_cache = HashingEmbedder()
    uncached = EmbeddingScorer(embed=no_cache, cache_size=0)
    uncached.score_all_for(items_of("one"), "q")
    uncached.score_all_for(items_of("one"), "q")
    assert no_cache.calls == [["q", "one"], ["q", "one"]]


def test_embedding_scorer_is_thread_safe() -> None:
    embed = HashingEmbedder()
    scorer = EmbeddingScorer(embed=embed)
    items = items_of(*(f"text number {i}" for i in range(50)))
    expected = EmbeddingScorer(embed=HashingEmbedder()).score_all_for(items, "number 7")
    results: list[list[float]] = []

    def work() -> None:
        for _ in range(5):
            results.append(scorer.score_all_for(items, "number 7"))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(result == expected for result in results)
    assert len(results) == 20


@pytest.mark.parametrize(
    ("embed", "rule"),
    [
        (lambda texts: [[1.0]] * (len(texts) - 1), "one vector per text"),
        (lambda texts: [[math.nan]] * len(texts), "finite"),
        (lambda texts: [[]] * len(texts), "non-empty"),
        (lambda texts: ["x"] * len(texts), "numbers"),
    ],
)
def test_embedding_scorer_checks_the_embedding_function(embed: object, rule: str) -> None:
    scorer = EmbeddingScorer(embed=embed)  # type: ignore[arg-type]
    with pytest.raises(ScorerConfigError, match=rule):
        scorer.score_all_for(items_of("a", "b"), "q")


def test_embedding_scorer_rejects_bad_arguments() -> None:
    with pytest.raises(ScorerConfigError, match="embed"):
        EmbeddingScorer(embed="model")  # type: ignore[arg-type]
    with pytest.raises(ScorerConfigError, match="cache_size"):
        EmbeddingScorer(embed=HashingEmbedder(), cache_size=-1)
    with pytest.raises(MissingQueryError):
        EmbeddingScorer(embed=HashingEmbedder()).score_all(items_of("a"))


# --------------------------------------------------------------------------- fusion


def test_rank_fusion_of_hand_ranked_scorers() -> None:
    items = items_of("a", "b", "c")
    first = RetrievalScoreScorer(key="x")
    fused_items = [
        ContextItem("a", tokens=1, metadata={"x": 3.0, "y": 1.0}),
        ContextItem("b", tokens=1, metadata={"x": 2.0, "y": 3.0}),
        ContextItem("c", tokens=1, metadata={"x": 1.0, "y": 3.0}),
    ]
    fusion = RankFusionScorer([first, RetrievalScoreScorer(key="y")], k=60)
    # ranks by x: 1, 2, 3; by y: 3, 1, 1 (ties share the better rank).
    top = 2 / 61
    expected = [
        (1 / 61 + 1 / 63) / top,
        (1 / 62 + 1 / 61) / top,
        (1 / 63 + 1 / 61) / top,
    ]
    assert fusion.score_all_for(fused_items, None) == pytest.approx(expected)
    assert len(items) == 3


def test_rank_fusion_forwards_the_query() -> None:
    items = items_of("apple pie", "blue sky")
    fusion = RankFusionScorer([RelevanceScorer(), EmbeddingScorer(embed=HashingEmbedder())])
    scores = fusion.score_all_for(items, "apple")
    assert scores[0] == pytest.approx(1.0)
    assert scores[1] < scores[0]
    with pytest.raises(MissingQueryError):
        fusion.score_all(items)


def test_rank_fusion_rejects_bad_arguments() -> None:
    with pytest.raises(ScorerConfigError, match="at least one"):
        RankFusionScorer([])
    with pytest.raises(ScorerConfigError, match=r"scorers\[0\]"):
        RankFusionScorer([42])  # type: ignore[list-item]
    with pytest.raises(ScorerConfigError, match="k"):
        RankFusionScorer([RelevanceScorer()], k=0)


# --------------------------------------------------------------------------- raw scores


def test_retrieval_scores_of_any_range_are_not_clamped() -> None:
    items = [
        ContextItem(f"chunk {i}", tokens=5, metadata={"retrieval_score": raw})
        for i, raw in enumerate([41.0, 37.2, 12.5, 37.2])
    ]
    ranked = RetrievalScoreScorer().score_all(items)
    assert ranked == pytest.approx([1.0, 2 / 3, 0.0, 2 / 3])
    minmax = RetrievalScoreScorer(scale="minmax").score_all(items)
    assert minmax == pytest.approx([1.0, (37.2 - 12.5) / 28.5, 0.0, (37.2 - 12.5) / 28.5])
    assert len(set(ranked)) == 3


def test_retrieval_scores_degenerate_lists() -> None:
    one = [ContextItem("a", tokens=1, metadata={"retrieval_score": -3})]
    assert RetrievalScoreScorer().score_all(one) == [1.0]
    assert RetrievalScoreScorer(scale="minmax").score_all(one * 1) == [1.0]
    assert RetrievalScoreScorer().score_all([]) == []


@pytest.mark.parametrize("value", [None, "0.9", True, math.nan, 10**400])
def test_retrieval_scores_must_be_finite_numbers(value: object) -> None:
    items = [ContextItem("a", tokens=1, metadata={"retrieval_score": value})]
    with pytest.raises(ItemValidationError, match=r"items\[0\]\.metadata\['retrieval_score'\]"):
        RetrievalScoreScorer().score_all(items)


def test_retrieval_scorer_rejects_bad_options() -> None:
    with pytest.raises(ScorerConfigError, match="key"):
        RetrievalScoreScorer(key=" ")
    with pytest.raises(ScorerConfigError, match="scale"):
        RetrievalScoreScorer(scale="log")  # type: ignore[arg-type]


def test_scores_are_float_arrays() -> None:
    items = items_of("apple", "pear")
    assert RelevanceScorer().score_array_for(items, "apple").dtype == np.float64
