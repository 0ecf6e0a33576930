"""The kinds' clues find every text holding a value: :func:`holding` is a plain search per
text, whatever the texts."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.conversation.excerpts.answers import _KINDS, holding

_VALUES = [value for _, value, _, _ in _KINDS]

# Pieces of values and near misses of every kind, in both cases, with the characters that
# sit around them (boundaries, digits, spaces, non-ASCII look-alikes: ſ is s ignoring case).
_PIECES = (  # noqa: SIM905  (a list of short pieces reads better as text)
    "v1.2.3|10.0.0.1|1.2|x12.3.4|a1.5ms|5 ms|5MS|12s|3 mins|2h|1.5 Hours|9 secs|4 minute|50%|3 %|"
    "pct|PERCENT|20 req/s|5rps|RPS|qps|3 QPS|requests per second|rate_limit|RateLimit|30 days|"
    "7d|2 D|team-a|Team_b|@ops|E_BAD_THING|HTTP-404|AB1234|503|200x|699|user_events_log|a_b|"
    "://|https://x.io|HTTPS://Y|:8080|port 443|Port: 80|\u017f|\u212a|\u0663|\u2713|_|-|.|:|/|"
    "%|@| |\t|\n|a|Z|0|9|1"
).split("|")


@settings(max_examples=300)
@given(
    st.lists(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join), max_size=12),
    st.sets(st.integers(min_value=0, max_value=len(_VALUES) - 1), min_size=1, max_size=3),
    st.data(),
)
def test_holding_is_a_search_per_text(
    texts: list[str], kinds: set[int], data: st.DataObject
) -> None:
    patterns = [_VALUES[kind] for kind in sorted(kinds)]
    candidates = np.array(
        sorted(
            data.draw(st.sets(st.integers(min_value=0, max_value=max(len(texts) - 1, 0))))
            if texts
            else []
        ),
        dtype=np.intp,
    )
    expected = np.zeros(len(texts))
    for position in candidates.tolist():
        if any(pattern.search(texts[position]) for pattern in patterns):
            expected[position] = 1.0
    assert holding(texts, candidates, patterns).tolist() == expected.tolist()


def test_every_kind_on_its_own_values() -> None:
    texts = [*_PIECES, "nothing to see here"]
    candidates = np.arange(len(texts), dtype=np.intp)
    for pattern in _VALUES:
        expected = [1.0 if pattern.search(text) else 0.0 for text in texts]
        assert holding(texts, candidates, [pattern]).tolist() == expected, pattern.pattern
