"""The recall zone's array passes choose what the plain formulation chooses.

``select_recall`` reads the history's flags and corpus as boolean arrays, the tokens and the
window as arrays, and ranks with a partial sort; the vocabulary maps a query's words from its
stem cache. Each is checked here against the straightforward version it replaces, on
histories of a small vocabulary (so scores tie and many units match).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel.adapters import openai
from pycupel.conversation.structure import session_headers, take_relevant, with_context
from pycupel.conversation.units import MessageUnit
from pycupel.scorers._bm25_index import Bm25Index, relevance_scores
from pycupel.scorers._lexical import TermVocabulary, _stemmer, _stems, words_of
from pycupel.session import recall
from pycupel.session.recall import (
    RECALL_STRUCTURE,
    RELATIVE_THRESHOLD,
    Recall,
    score_recall,
    select_recall,
)

WORDS = ["garden", "gardens", "vault", "north", "storage", "code", "river", "stone", "the", "x"]

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=10).map(" ".join)


def plain_select_recall(
    units: Sequence[MessageUnit],
    *,
    tokens: list[float],
    in_window: list[bool],
    scored: list[int],
    query: str,
    room: float,
    index: Bm25Index,
    vocabulary: TermVocabulary,
    ranked: int,
) -> Recall:
    """The recall selection written plainly: lists, a full stable sort, a loop for the
    result (the default relevance, headers and tool rounds from the units)."""
    if not query or not scored:
        return Recall([], crowded=False)
    scores = relevance_scores(recall._RELEVANCE, index, vocabulary, query, len(units))
    best = float(scores.max(initial=0.0))
    if best <= 0.0:
        return Recall([], crowded=False)
    structure = RECALL_STRUCTURE
    alone = [bool(unit.call_ids) for unit in units]
    flags = np.asarray(alone, dtype=np.bool_)
    smoothed = with_context(scores, structure.context, ~(flags[:-1] | flags[1:]))
    fixed_array = np.ones(len(units), dtype=np.bool_)
    fixed_array[list(scored)] = False
    fixed_array |= np.asarray(in_window, dtype=np.bool_)
    found = np.flatnonzero(~fixed_array & (smoothed >= RELATIVE_THRESHOLD * best))
    if not found.size:
        return Recall([], crowded=False)
    values = smoothed[found]
    strongest = int(found[np.flatnonzero(values == values.max())[-1]])
    if found.size > ranked:
        sizes = np.asarray(tokens, dtype=np.float64)[found]
        key = -values / np.maximum(sizes, 1.0) ** structure.density
        found = np.sort(found[np.argsort(key, kind="stable")[:ranked]])
    headers = session_headers([unit.item for unit in units])
    fixed: list[bool] = fixed_array.tolist()
    chosen = list(fixed)
    if room > 0:
        take_relevant(
            tokens,
            chosen,
            smoothed.tolist(),
            found.tolist(),
            used=0.0,
            room=room,
            structure=structure,
            headers=headers,
            alone=alone,
        )
    # The best match inside the request against the best match in the whole corpus.
    inside = max((float(smoothed[u]) for u in scored if in_window[u]), default=0.0)
    anywhere = max(float(smoothed[u]) for u in scored)
    return Recall(
        [u for u in range(len(units)) if chosen[u] and not fixed[u]],
        crowded=not chosen[strongest] and tokens[strongest] > room,
        best=strongest,
        window_share=inside / anywhere,
    )


def chat(lines: list[str], tool_every: int) -> list[dict[str, Any]]:
    """A system prompt, then user / assistant turns of ``lines``; every ``tool_every``-th
    assistant turn calls a tool whose result is the next line."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You keep notes."}]
    for position, line in enumerate(lines):
        if position % 2 == 0:
            messages.append({"role": "user", "content": line})
        elif tool_every and position % (2 * tool_every) == 1:
            call = f"call_{position}"
            function = {"name": "read", "arguments": "{}"}
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": call, "type": "function", "function": function}],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call, "content": line})
        else:
            messages.append({"role": "assistant", "content": line})
    return messages


@settings(max_examples=80, deadline=None)
@given(
    lines=st.lists(texts, min_size=3, max_size=40),
    tool_every=st.integers(min_value=0, max_value=3),
    data=st.data(),
    room=st.floats(min_value=0.0, max_value=300.0),
    ranked=st.sampled_from([1, 3, 128]),
)
def test_select_recall_chooses_as_the_plain_formulation(
    lines: list[str],
    tool_every: int,
    data: st.DataObject,
    room: float,
    ranked: int,
) -> None:
    session = openai.Session(budget=100_000)
    session.fit(chat(lines, tool_every))
    history = session._core._history
    units = history.units
    count = len(units)
    # The history's arrays say what its lists say.
    corpus = history.recall_corpus()
    assert np.flatnonzero(corpus).tolist() == history.recall_units
    assert history.alone_flags().tolist() == history.unit_alone
    flags = history.alone_flags()
    assert history.linked_flags().tolist() == (~(flags[:-1] | flags[1:])).tolist()
    in_window = data.draw(st.lists(st.booleans(), min_size=count, max_size=count))
    tokens = history.guarded_tokens(1.1, {})
    query = history.latest_user_text()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(recall, "_RANKED", ranked)
        expected = plain_select_recall(
            units,
            tokens=tokens,
            in_window=in_window,
            scored=history.recall_units,
            query=query,
            room=room,
            index=history.recall_index,
            vocabulary=history.vocabulary,
            ranked=ranked,
        )
        common: dict[str, Any] = {
            "scored": history.recall_units,
            "query": query,
            "room": room,
            "index": history.recall_index,
            "vocabulary": history.vocabulary,
        }
        from_lists = select_recall(units, tokens=tokens, in_window=in_window, **common)
        from_arrays = select_recall(
            units,
            tokens=history.guarded_token_array(1.1, {}),
            in_window=np.asarray(in_window, dtype=np.bool_),
            alone=history.unit_alone,
            alone_flags=history.alone_flags(),
            corpus=corpus,
            headers=session_headers([unit.item for unit in units]),
            **common,
        )
        # The first half alone (what a session reads to decide whether the zone moves):
        # the same share, and None exactly when the selection is empty for want of a match.
        scores = score_recall(
            units,
            in_window=in_window,
            scored=history.recall_units,
            query=query,
            index=history.recall_index,
            vocabulary=history.vocabulary,
        )
        window_array = np.asarray(in_window, dtype=np.bool_)
        from_open = score_recall(
            units,
            in_window=window_array,
            scored=history.recall_units,
            query=query,
            index=history.recall_index,
            vocabulary=history.vocabulary,
            corpus=corpus,
            open_units=corpus & ~window_array,
            linked=history.linked_flags(),
        )
    assert from_lists == expected
    assert from_arrays == expected
    if scores is None:
        assert expected == Recall([], crowded=False)
        assert from_open is None
    else:
        assert scores.window_share == expected.window_share
        assert expected.best >= 0
        assert from_open is not None
        assert from_open.found.tolist() == scores.found.tolist()
        assert from_open.window_share == scores.window_share


@settings(max_examples=200, deadline=None)
@given(
    keys=st.lists(st.sampled_from([-3.0, -2.5, -1.0, -0.25, 0.0]), max_size=40),
    count=st.integers(min_value=1, max_value=45),
)
def test_first_by_key_holds_the_stable_sorts_first_positions(keys: list[float], count: int) -> None:
    key = np.asarray(keys, dtype=np.float64)
    expected = np.sort(np.argsort(key, kind="stable")[:count]).tolist()
    assert np.sort(recall._first_by_key(key, count)).tolist() == expected


@settings(max_examples=200, deadline=None)
@given(known=st.lists(texts, max_size=6), query=st.lists(st.sampled_from([*WORDS, "kestrel"])))
def test_known_ids_are_the_query_terms_the_vocabulary_numbers(
    known: list[str], query: list[str]
) -> None:
    vocabulary = TermVocabulary()
    for text in known:
        vocabulary.ids(words_of(text))
    words = words_of(" ".join(query))
    stems = _stems([words])
    term_ids = dict(vocabulary.term_ids)
    expected = [term_ids[stems[w]] for w in words if w in stems and stems[w] in term_ids]
    assert vocabulary.known_ids(words) == expected
    assert vocabulary.term_ids == term_ids  # a query numbers no new term


NUMBERS = st.integers(min_value=0, max_value=10**12).map(str) | st.sampled_from(["0042", "7"])


@settings(max_examples=200, deadline=None)
@given(
    known=st.lists(texts, max_size=6),
    text=st.lists(st.sampled_from([*WORDS, "kestrel", "runs2"]) | NUMBERS),
)
def test_id_list_numbers_new_terms_in_order_as_the_plain_loop(
    known: list[str], text: list[str]
) -> None:
    vocabulary = TermVocabulary()
    plain = TermVocabulary()
    for line in known:
        vocabulary.ids(words_of(line))
        plain.ids(words_of(line))
    words = words_of(" ".join(text))
    # The plain loop: each content word's stem, numbered on first sight.
    stems = _stems([words])
    expected = [
        plain.term_ids.setdefault(stems[w], len(plain.term_ids)) for w in words if w in stems
    ]
    assert vocabulary.id_list(words) == expected
    assert vocabulary.term_ids == plain.term_ids
    assert vocabulary.ids(words).tolist() == expected  # numbered already: the same ids


def test_linked_flags_and_counts_follow_an_edit() -> None:
    # An edit re-reads the history from the edited unit: the flags kept as units arrive
    # are those of the history as it now is.
    lines = [f"note {position} about the garden vault" for position in range(12)]
    session = openai.Session(budget=100_000)
    messages = chat(lines, tool_every=2)
    session.fit(messages)
    messages[1] = {"role": "user", "content": "a different question"}
    session.fit(messages)
    assert session.fit(messages[:-2]).report.edited_at is not None
    history = session._core._history
    flags = np.asarray([bool(unit.call_ids) for unit in history.units], dtype=np.bool_)
    assert history.alone_flags().tolist() == flags.tolist()
    assert history.linked_flags().tolist() == (~(flags[:-1] | flags[1:])).tolist()
    everything = list(range(len(history.units)))
    assert history.tokens_of(everything) == sum(unit.item.tokens for unit in history.units)


@settings(max_examples=300, deadline=None)
@given(number=st.text(alphabet="0123456789", min_size=1, max_size=30))
def test_a_number_is_its_own_stem(number: str) -> None:
    # The vocabulary skips the stemmer for ASCII digit strings.
    assert _stemmer().stemWord(number) == number


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(texts, min_size=3, max_size=30),
    data=st.data(),
    ratio=st.floats(min_value=0.5, max_value=2.0),
)
def test_guarded_sums_add_one_by_one_in_either_path(
    lines: list[str], data: st.DataObject, ratio: float
) -> None:
    session = openai.Session(budget=100_000)
    session.fit(chat(lines, tool_every=2))
    history = session._core._history
    count = len(history.units)
    positions = st.integers(min_value=0, max_value=count - 1)
    zones = data.draw(st.lists(st.lists(positions, max_size=count), max_size=3))
    # Something learned (without, each zone's count times the ratio is the documented sum).
    learned = data.draw(
        st.dictionaries(
            positions, st.floats(min_value=0.0, max_value=500.0), min_size=1, max_size=count
        )
    )
    expected = 0.0  # the plain formulation: one unit after another, zone after zone
    for zone in zones:
        for unit in zone:
            expected += learned.get(unit, history.units[unit].item.tokens * ratio)
    assert history.guarded_sum(zones, ratio, learned) == expected
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("pycupel.session.columns._FEW", 0)  # the array path
        assert history.guarded_sum(zones, ratio, learned) == expected
