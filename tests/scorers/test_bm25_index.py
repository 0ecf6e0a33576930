"""The incremental BM25 index gives bit for bit the scores of a corpus rebuilt from scratch
(``RelevanceScorer.score_term_ids``), whatever documents came and went."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.scorers._bm25_index import Bm25Index, relevance_scores
from pycupel.scorers._lexical import TermVocabulary, words_of
from pycupel.scorers.relevance import RelevanceScorer

# Few words, so that documents share terms, scores tie and feedback terms compete.
WORDS = [
    "garden",
    "gardens",
    "storage",
    "code",
    "north",
    "vault",
    "kestrel",
    "weather",
    "alpha",
    "beta",
    "gamma",
    "delta",
    "river",
    "stone",
    "the",
    "and",
    "of",
    "a",
    "x",
    "4471",
]

texts = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
scorers = st.sampled_from(
    [
        RelevanceScorer(),
        RelevanceScorer(expansion=0.3),
        RelevanceScorer(k1=2.0, b=0.3, expansion=1.0),
        RelevanceScorer(k1=0.5, b=0.95),
        RelevanceScorer(b=1.0, expansion=0.3),
        RelevanceScorer(b=0.0, expansion=0.3),
    ]
)


def bits(values: np.ndarray) -> list[int]:
    return np.ascontiguousarray(values, dtype=np.float64).view(np.int64).tolist()


@settings(max_examples=300, deadline=None)
@given(
    documents=st.lists(texts, max_size=30),
    outside=st.lists(texts, max_size=3),
    removals=st.lists(st.integers(min_value=0, max_value=40), max_size=10),
    queries=st.lists(texts, min_size=1, max_size=4),
    scorer=scorers,
)
def test_index_scores_equal_a_rebuilt_corpus_bit_for_bit(
    documents: list[str],
    outside: list[str],
    removals: list[int],
    queries: list[str],
    scorer: RelevanceScorer,
) -> None:
    vocabulary = TermVocabulary()
    for text in outside:  # terms the vocabulary knows but no indexed document holds
        vocabulary.ids(words_of(text))
    per_doc = [vocabulary.ids(words_of(text)) for text in documents]
    index = Bm25Index()
    for number, terms in enumerate(per_doc):
        index.add(number, terms)
    # Documents leave and come back (a session's latest user turn does, every turn).
    for number in removals:
        if number in index:
            index.remove(number)
    for number in removals[::2]:
        if number < len(per_doc) and number not in index:
            index.add(number, per_doc[number])
    corpus = [number for number in range(len(per_doc)) if number in index]
    assert len(index) == len(corpus)
    size = len(per_doc) + 2
    for query in queries:
        expected = scorer.score_term_ids([per_doc[n] for n in corpus], vocabulary, query)
        got = relevance_scores(scorer, index, vocabulary, query, size)
        assert bits(got[corpus]) == bits(expected)
        outside_corpus = np.ones(size, dtype=bool)
        outside_corpus[corpus] = False
        assert not got[outside_corpus].any()


def test_a_query_reads_only_the_postings_of_its_terms() -> None:
    vocabulary = TermVocabulary()
    index = Bm25Index()
    for number in range(1_000):
        index.add(number, vocabulary.ids(words_of(f"common word{number} filler{number % 7}")))
    rare = vocabulary.ids(words_of("kestrel vault"))
    index.add(1_000, rare)
    before = index.postings_read
    scores = relevance_scores(RelevanceScorer(), index, vocabulary, "kestrel vault", 1_001)
    assert index.postings_read - before == 2  # one document holds each term
    assert scores[1_000] == 1.0
    assert not scores[:1_000].any()


def test_index_scores_equal_a_rebuilt_corpus_on_long_random_corpora() -> None:
    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(400)] + ["the", "and", "of"]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(0, 60)))) for _ in range(1_500)]
    vocabulary = TermVocabulary()
    per_doc = [vocabulary.ids(words_of(text)) for text in texts]
    index = Bm25Index()
    for number, terms in enumerate(per_doc):
        index.add(number, terms)
    for number in rng.choice(len(texts), size=200, replace=False).tolist():
        index.remove(number)
    corpus = [number for number in range(len(texts)) if number in index]
    for scorer in (RelevanceScorer(), RelevanceScorer(expansion=0.3)):
        for query in ("w1 w2 w3", "w399 the w7 w7", "w150", "w12 w13 w14 w15 w16 w17 w18"):
            expected = scorer.score_term_ids([per_doc[n] for n in corpus], vocabulary, query)
            got = relevance_scores(scorer, index, vocabulary, query, len(texts))
            assert bits(got[corpus]) == bits(expected)
