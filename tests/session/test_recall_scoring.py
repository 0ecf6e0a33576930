"""The recall zone scores with RelevanceScorer from term ids analysed once per unit: the same
scores as scoring the texts."""

from __future__ import annotations

import numpy as np
from session_histories import sample_sentences

from pycupel import ContextItem
from pycupel.scorers._lexical import TermVocabulary, words_of
from pycupel.scorers.relevance import RelevanceScorer


def test_score_term_ids_equals_score_array_for_on_the_same_texts() -> None:
    texts = [*sample_sentences()[:60], "the the the", "Kestrel-4471 storage code"]
    # The vocabulary also knows texts outside the scored corpus (a session's window).
    outside = ["the weather garden storage zzz", "Kestrel nests by the garden"]
    vocabulary = TermVocabulary()
    for text in outside:
        vocabulary.ids(words_of(text))
    per_doc = [vocabulary.ids(words_of(text)) for text in texts]
    items = [ContextItem(text, tokens=max(len(text) // 4, 1)) for text in texts]
    for scorer in (RelevanceScorer(), RelevanceScorer(k1=2.0, b=0.3)):
        for query in ("storage code Kestrel", "the garden and the weather", "zzz", "weather"):
            expected = scorer.score_array_for(items, query)
            got = scorer.score_term_ids(per_doc, vocabulary, query)
            assert got.tolist() == expected.tolist()
    assert RelevanceScorer().score_term_ids([], vocabulary, "garden").tolist() == []


def test_a_vocabulary_analyses_each_word_once_and_skips_stop_words() -> None:
    vocabulary = TermVocabulary()
    first = vocabulary.ids(words_of("The gardens of the garden"))
    second = vocabulary.ids(words_of("garden party"))
    assert first.tolist() == [0, 0]  # "gardens" and "garden" share a stem; stop words dropped
    assert second.tolist() == [0, 1]
    assert len(vocabulary.term_ids) == 2


def test_score_term_ids_expands_the_query_as_scoring_the_texts_does() -> None:
    texts = [
        *sample_sentences()[:80],
        "Kestrel-4471 storage code, north vault",
        "storage code for Kestrel: north vault",
        "the north vault door",
    ]
    # A vocabulary that meets the words in alphabetical order numbers the terms as a text
    # corpus does, so even ties between feedback terms resolve alike.
    words = sorted({word for text in texts for word in words_of(text)})
    vocabulary = TermVocabulary()
    vocabulary.ids(words)
    per_doc = [vocabulary.ids(words_of(text)) for text in texts]
    items = [ContextItem(text, tokens=max(len(text) // 4, 1)) for text in texts]
    scorer = RelevanceScorer(expansion=0.3)
    for query in ("storage code Kestrel", "the garden and the weather", "weather"):
        expected = scorer.score_array_for(items, query)
        got = scorer.score_term_ids(per_doc, vocabulary, query)
        assert np.allclose(got, expected, rtol=1e-12, atol=0.0)
    # The feedback terms ("north", "vault") reach a document without the query's words.
    query = "storage code Kestrel"
    assert RelevanceScorer().score_term_ids(per_doc, vocabulary, query)[-1] == 0.0
    assert scorer.score_term_ids(per_doc, vocabulary, query)[-1] > 0.0


def test_texts_and_term_ids_give_one_ranking_on_long_random_corpora() -> None:
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(300)] + ["the", "and", "of"]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(1, 40)))) for _ in range(500)]
    vocabulary = TermVocabulary()
    per_doc = [vocabulary.ids(words_of(text)) for text in texts]
    items = [ContextItem(text, tokens=10) for text in texts]
    scorer = RelevanceScorer()
    for query in ("w1 w2 w3", "w299 the w7 w7", "w150"):
        got = scorer.score_term_ids(per_doc, vocabulary, query)
        assert got.tolist() == scorer.score_array_for(items, query).tolist()
