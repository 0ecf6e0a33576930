"""The recall zone scores with RelevanceScorer from words read once per unit: same scores."""

from __future__ import annotations

import numpy as np
from session_histories import sample_sentences

from pycupel import ContextItem
from pycupel.scorers._lexical import words_of
from pycupel.scorers.relevance import RelevanceScorer


def test_score_words_equals_score_array_for_on_the_same_texts() -> None:
    texts = [*sample_sentences()[:60], "the the the", "Kestrel-4471 storage code"]
    items = [ContextItem(text, tokens=max(len(text) // 4, 1)) for text in texts]
    for scorer in (RelevanceScorer(), RelevanceScorer(k1=2.0, b=0.3, expansion=0.5)):
        for query in ("storage code Kestrel", "the garden and the weather", "zzz"):
            expected = scorer.score_array_for(items, query)
            got = scorer.score_words([words_of(text) for text in texts], query)
            np.testing.assert_allclose(got, expected)
