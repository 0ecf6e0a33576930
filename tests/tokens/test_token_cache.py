"""CachedCounter: hits and misses, LRU eviction order, batching of misses, thread safety."""

from __future__ import annotations

import random
import sys
import threading
from collections.abc import Iterator, Sequence

import pytest

from pycupel.errors import TokenizerError
from pycupel.tokens import (
    BaseTokenCounter,
    CachedCounter,
    CacheStats,
    HeuristicCounter,
    TokenCounter,
)


class RecordingCounter(BaseTokenCounter):
    """Counts characters and records every call it receives (thread-safe)."""

    def __init__(self) -> None:
        self.count_calls: list[str] = []
        self.batch_calls: list[list[str]] = []
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        with self._lock:
            self.count_calls.append(text)
        return len(text)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        with self._lock:
            self.batch_calls.append(list(texts))
        return [len(t) for t in texts]


class BrokenCounter(BaseTokenCounter):
    def __init__(self, single: object, batch: object) -> None:
        self.single = single
        self.batch = batch

    def count(self, text: str) -> int:
        return self.single  # type: ignore[return-value]

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return self.batch  # type: ignore[return-value]

    def __repr__(self) -> str:
        return "BrokenCounter()"


def test_repeated_texts_are_counted_once() -> None:
    inner = RecordingCounter()
    cached = CachedCounter(inner)
    assert isinstance(cached, TokenCounter)
    assert [cached.count(t) for t in ["abc", "de", "abc", "abc", "de"]] == [3, 2, 3, 3, 2]
    assert inner.count_calls == ["abc", "de"]
    assert (cached.hits, cached.misses, cached.size) == (3, 2, 2)
    assert cached.stats() == CacheStats(hits=3, misses=2, size=2, max_entries=65_536)
    assert cached.stats().hit_rate == pytest.approx(0.6)


def test_cache_keys_are_exact_strings() -> None:
    inner = RecordingCounter()
    cached = CachedCounter(inner)
    for text in ["Hello", "hello", "hello ", "héllo", "he\u0301llo"]:
        cached.count(text)
    assert cached.misses == 5
    assert cached.size == 5


def test_empty_string_is_cached_too() -> None:
    inner = RecordingCounter()
    cached = CachedCounter(inner)
    assert cached.count("") == 0
    assert cached.count("") == 0
    assert inner.count_calls == [""]
    assert (cached.hits, cached.misses) == (1, 1)


def test_least_recently_used_entry_is_evicted_first() -> None:
    inner = RecordingCounter()
    cached = CachedCounter(inner, max_entries=2)
    cached.count("a")
    cached.count("bb")
    cached.count("a")  # "a" is now the most recently used
    cached.count("ccc")  # evicts "bb", the least recently used
    assert cached.size == 2
    inner.count_calls.clear()
    cached.count("a")
    cached.count("ccc")
    assert inner.count_calls == []  # both still cached
    cached.count("bb")  # a miss again; evicts "a" (used before "ccc")
    assert inner.count_calls == ["bb"]
    cached.count("ccc")
    cached.count("a")
    assert inner.count_calls == ["bb", "a"]


def test_batch_hits_refresh_recency() -> None:
    inner = RecordingCounter()
    cached = CachedCounter(inner, max_entries=2)
    cached.count_batch(["a", "bb"])
    cached.count_batch(["a"])  # refresh "a"
    cached.count("ccc")  # evicts "bb"
    inner.batch_calls.clear()
    inner.count_calls.clear()
    assert cached.count_batch(["a", "ccc"]) == [1, 3]
    assert inner.batch_calls == []
    assert cached.count_batch(["bb"]) == [2]
    assert inner.batch_calls == [["bb"]]


def test_batch_counts_only_the_misses_in_one_call_and_keeps_order() -> None:
    inner = RecordingCounter()
    cached = CachedCounter(inner)
    cached.count("known")
    texts = ["x", "known", "yy", "x", "zzz", "known", "yy"]
    assert cached.count_batch(texts) == [len(t) for t in texts]
    # One inner batch call, each distinct miss once, in first-seen order.
    assert inner.batch_calls == [["x", "yy", "zzz"]]
    assert inner.count_calls == ["known"]
    # 1 earlier miss; in the batch: 3 distinct misses, 4 hits (2 cached, 2 repeats).
    assert (cached.hits, cached.misses, cached.size) == (4, 4, 4)
    # Everything is cached now: no inner call at all.
    assert cached.count_batch(texts) == [len(t) for t in texts]
    assert len(inner.batch_calls) == 1
    assert cached.count_batch([]) == []
    assert len(inner.batch_calls) == 1


def test_batch_larger_than_the_cache_still_returns_every_count() -> None:
    inner = RecordingCounter()
    cached = CachedCounter(inner, max_entries=3)
    texts = [str(i) * (i + 1) for i in range(10)]
    assert cached.count_batch(texts) == [len(t) for t in texts]
    assert cached.size == 3
    # The most recently stored texts are the ones kept.
    inner.batch_calls.clear()
    cached.count_batch(texts[-3:])
    assert inner.batch_calls == []


def test_batch_equals_per_item() -> None:
    texts = ["alpha beta", "", "γάμμα", "alpha beta", "{'json': [1, 2, 3]}"] * 4
    per_item = CachedCounter(HeuristicCounter())
    batched = CachedCounter(HeuristicCounter())
    assert batched.count_batch(texts) == [per_item.count(t) for t in texts]


def test_clear_resets_entries_and_stats() -> None:
    inner = RecordingCounter()
    cached = CachedCounter(inner)
    cached.count_batch(["a", "b", "a"])
    cached.clear()
    assert cached.stats() == CacheStats(hits=0, misses=0, size=0, max_entries=65_536)
    cached.count("a")
    assert cached.misses == 1
    assert CacheStats(0, 0, 0, 1).hit_rate == 0.0


def test_invalid_inner_results_are_rejected_and_not_cached() -> None:
    cached = CachedCounter(BrokenCounter(single=-1, batch=[1.5]))
    with pytest.raises(TokenizerError, match=r"BrokenCounter\(\): returned -1; a token count"):
        cached.count("text")
    with pytest.raises(TokenizerError, match=r"returned 1\.5 \(float\) for texts\[0\]"):
        cached.count_batch(["text"])
    assert cached.size == 0
    short = CachedCounter(BrokenCounter(single=1, batch=[1]))
    with pytest.raises(TokenizerError, match="count_batch returned 1 counts for 2 texts"):
        short.count_batch(["a", "b"])
    assert short.size == 0


@pytest.mark.parametrize("bad", [0, -5, 1.5, True, "10", None])
def test_max_entries_must_be_a_positive_integer(bad: object) -> None:
    with pytest.raises(TokenizerError, match=r"CachedCounter: max_entries: must be a positive"):
        CachedCounter(HeuristicCounter(), max_entries=bad)  # type: ignore[arg-type]


def test_inner_must_be_a_counter() -> None:
    with pytest.raises(TokenizerError, match="inner: must be a token counter"):
        CachedCounter(len)  # type: ignore[arg-type]


def test_repr_and_properties() -> None:
    inner = HeuristicCounter()
    cached = CachedCounter(inner, max_entries=10)
    assert cached.inner is inner
    assert cached.max_entries == 10
    assert repr(cached) == "CachedCounter(HeuristicCounter(), max_entries=10)"


def test_invalid_texts() -> None:
    cached = CachedCounter(HeuristicCounter())
    with pytest.raises(TokenizerError, match="text: must be a string, got 5"):
        cached.count(5)  # type: ignore[arg-type]
    with pytest.raises(TokenizerError, match="texts: must be a sequence of strings"):
        cached.count_batch("abc")
    with pytest.raises(TokenizerError, match=r"texts\[0\]: must be a string"):
        cached.count_batch([b"abc"])  # type: ignore[list-item]
    assert cached.stats().hits + cached.stats().misses == 0


@pytest.fixture
def fast_thread_switching() -> Iterator[None]:
    """Switch threads as often as possible, to make races show up."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


@pytest.mark.usefixtures("fast_thread_switching")
@pytest.mark.parametrize("trial", range(4))
def test_shared_across_eight_threads(trial: int) -> None:
    inner = RecordingCounter()
    cached = CachedCounter(inner, max_entries=40)  # smaller than the texts: constant eviction
    texts = [f"message {i} " + "x" * (i % 17) for i in range(120)]
    threads_count = 8
    rounds = 1000
    barrier = threading.Barrier(threads_count)
    lookups = [0] * threads_count
    failures: list[BaseException] = []

    def work(worker: int) -> None:
        rng = random.Random(trial * 100 + worker)
        barrier.wait()
        try:
            for _ in range(rounds):
                if rng.random() < 0.5:
                    text = rng.choice(texts)
                    assert cached.count(text) == len(text)
                    lookups[worker] += 1
                else:
                    batch = rng.choices(texts, k=rng.randint(1, 12))
                    assert cached.count_batch(batch) == [len(t) for t in batch]
                    lookups[worker] += len(batch)
        except BaseException as exc:  # collected and re-raised in the main thread
            failures.append(exc)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads_count)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()

    assert failures == []
    stats = cached.stats()
    # No look-up was lost: the statistics add up exactly.
    assert stats.hits + stats.misses == sum(lookups)
    assert 0 < stats.size <= 40
    assert stats.hits > 0
    # Every miss reached the inner counter (concurrent misses of one text may both count it).
    inner_texts = len(inner.count_calls) + sum(len(b) for b in inner.batch_calls)
    assert inner_texts == stats.misses
    # Afterwards the cache is consistent: every cached text answers without the inner counter.
    before = len(inner.count_calls)
    kept = [t for t in texts if t in cached._entries]
    assert len(kept) == stats.size
    for text in kept:
        assert cached.count(text) == len(text)
    assert len(inner.count_calls) == before
