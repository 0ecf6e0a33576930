"""FrequencyScorer: the share of peers that have at least one tag in common with the item.

The specification compares every item with every other (O(N^2 * T^2)). This module gets the
same numbers from an inverted view of the tags, with numpy doing the heavy loops:

* Each list position gets its set of distinct *folded* tags (ASCII case folding), as
  ``(position, tag id)`` pairs.
* ``reach(S)`` = number of list positions whose tag set meets ``S``. By inclusion–exclusion,
  ``reach(S) = sum over non-empty T ⊆ S of (-1)^(|T|+1) * covering(T)``, where
  ``covering(T)`` counts positions whose set contains all of ``T``. Subsets are numbered
  level by level (size 1, 2, ...) with ``numpy.unique``, and ``covering`` is a ``bincount``
  of those numbers: O(N * 2^t) work for t tags per item, all vectorised.
* Positions with more than ``SUBSET_TAG_LIMIT`` tags would make that exponential. Their
  reach, and their contribution to the reach of the other positions, is counted exactly as
  the size of a union of posting lists: by de-duplicated ``(query, position)`` pairs when
  the lists are short, else by Python-int bitsets (one bit per position, popcount of an OR).
* An item's peers are the positions its set reaches minus the positions holding that very
  object (its own set always meets itself): ``(reach(S) - occurrences) / (N - 1)``.

Cost: O(F log F + N * 2^t) for F tag occurrences when items carry at most
``SUBSET_TAG_LIMIT`` distinct tags (the usual case). Items with more tags are counted
exactly too, but deciding "shares any tag" between many large tag sets is inherently close
to quadratic; the bitset path keeps that to about N^2 * t / 64 word operations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import chain, combinations, count
from operator import attrgetter
from typing import TYPE_CHECKING

from pycupel._identity import identity_key
from pycupel._numpy import IntArray
from pycupel._unique import unique_ints
from pycupel.model import ContextItem, ascii_fold
from pycupel.scorers._immutable import Immutable
from pycupel.scorers.base import SMALL_BATCH, BaseScorer, FloatArray

if TYPE_CHECKING:
    import numpy as np
else:
    from pycupel._numpy import numpy as np

__all__ = ["FrequencyScorer", "frequency_list"]

SUBSET_TAG_LIMIT = 8
"""Positions with up to this many distinct tags use inclusion–exclusion (<= 255 subsets)."""

PAIR_LIMIT = 2_000_000
"""Above this many (query, posting) pairs, posting-list unions are counted with bitsets."""

PACKED_KEY_LIMIT = 2**62
"""``(position, tag)`` pairs are packed into one int64 key while ``N * tags`` stays below."""


_TAGS = attrgetter("tags")


class FrequencyScorer(Immutable, BaseScorer):
    """Relative scorer: ``matching peers / (len(all_items) - 1)``.

    A peer matches when it is not the scored object itself (identity; every occurrence of the
    same object in the list is "self") and shares at least one tag with it, compared with
    ASCII case folding. Items without tags, and every item of a one-item list, score 0.0.
    The denominator is always ``len(all_items) - 1``, tagless peers included.
    """

    __slots__ = ()

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        size = len(items)
        scores = np.zeros(size, dtype=np.float64)
        if size <= 1:
            return scores
        tag_lists = list(map(_TAGS, items))
        lengths = np.fromiter(map(len, tag_lists), dtype=np.int64, count=size)
        flat = list(chain.from_iterable(tag_lists))
        if not flat:
            return scores
        positions, tags, vocabulary = _folded_pairs(flat, lengths)
        matching = _reach(positions, tags, vocabulary, size) - _occurrences(items)
        tagged = lengths > 0
        scores[tagged] = matching[tagged] / (size - 1)
        return scores

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        if len(items) > SMALL_BATCH:
            return super().score_all(items)
        return frequency_list(items, False)

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        """The specification's per-item loop, O(N * T); ``item`` need not be in the list."""
        if not item.tags or len(all_items) <= 1:
            return 0.0
        mine = {ascii_fold(tag) for tag in item.tags}
        matching = 0
        for other in all_items:
            if other is item or not other.tags:
                continue
            if not mine.isdisjoint(map(ascii_fold, other.tags)):
                matching += 1
        return matching / (len(all_items) - 1)

    def __repr__(self) -> str:
        return "FrequencyScorer()"


def frequency_list(items: Sequence[ContextItem], distinct: bool) -> list[float]:
    """:meth:`FrequencyScorer.score_all` for a small batch, without numpy (the same scores).

    ``distinct`` says the caller knows ``items`` to be distinct objects (each its own only
    "self"); otherwise this checks.

    One bit per position for each raw tag, then the masks of raw tags that fold alike merged;
    an item's reach is the number of bits in the union of its tags' masks (itself included),
    as in :meth:`FrequencyScorer.score_array`.
    """
    size = len(items)
    if size <= 1:
        return [0.0] * size
    tag_lists = list(map(_TAGS, items))
    masks: dict[str, int] = {}
    get = masks.get
    bit = 1
    for tags in tag_lists:
        for tag in tags:
            masks[tag] = get(tag, 0) | bit
        bit <<= 1
    if not masks:
        return [0.0] * size
    # Text whose cased characters are all lower case (and which has one) holds no A-Z, so
    # ascii_fold leaves every tag in it unchanged and no two tags merge: one C-level test of
    # the tags joined. Otherwise the tags are folded once each, in C (ascii_fold is
    # str.lower on ASCII text), and the masks of tags that fold alike merged.
    if not "".join(masks).islower():
        raw = list(masks)
        folded = list(map(str.lower if all(map(str.isascii, raw)) else ascii_fold, raw))
        if len(set(folded)) != len(raw):
            merged: dict[str, int] = {}
            for tag, key in zip(raw, folded, strict=True):
                merged[key] = merged.get(key, 0) | masks[tag]
            masks = dict(zip(raw, map(merged.__getitem__, folded), strict=True))
    denominator = size - 1
    scores: list[float] = []
    append = scores.append
    # Distinct objects (the usual case) each occur once; repeats count as "self".
    if distinct or len(set(map(id, items))) == size:
        for tags in tag_lists:
            if tags:
                union = 0
                for tag in tags:
                    union |= masks[tag]
                append((union.bit_count() - 1) / denominator)
            else:
                append(0.0)
        return scores
    occurrences = _occurrences(items)
    selves = [1] * size if isinstance(occurrences, int) else occurrences.tolist()
    for tags, self_count in zip(tag_lists, selves, strict=True):
        if tags:
            union = 0
            for tag in tags:
                union |= masks[tag]
            append((union.bit_count() - self_count) / denominator)
        else:
            append(0.0)
    return scores


def _folded_pairs(flat: list[str], lengths: IntArray) -> tuple[IntArray, IntArray, int]:
    """Sorted, de-duplicated ``(position, folded tag id)`` pairs and the number of tag ids."""
    distinct = list(dict.fromkeys(flat))
    raw_ids = dict(zip(distinct, count(), strict=False))
    # ascii_fold is str.lower on ASCII text; mapping the C method avoids a Python call per tag.
    if all(map(str.isascii, distinct)):
        folded = list(map(str.lower, distinct))
    else:
        folded = list(map(ascii_fold, distinct))
    folded_ids = dict(zip(dict.fromkeys(folded), count(), strict=False))
    folded_of_raw = np.fromiter(
        map(folded_ids.__getitem__, folded), dtype=np.int64, count=len(folded)
    )
    raw = np.fromiter(map(raw_ids.__getitem__, flat), dtype=np.int64, count=len(flat))
    tags = folded_of_raw[raw]
    vocabulary = len(folded_ids)
    positions = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    if len(lengths) * vocabulary < PACKED_KEY_LIMIT:
        pairs = np.sort(positions * vocabulary + tags)
        pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]
        unique_positions, unique_tags = np.divmod(pairs, vocabulary)
        return unique_positions, unique_tags, vocabulary
    # Too many positions x tags to pack into one int64: sort the pairs lexicographically.
    order = np.lexsort((tags, positions))
    positions, tags = positions[order], tags[order]
    keep = np.ones(len(tags), dtype=np.bool_)
    keep[1:] = (positions[1:] != positions[:-1]) | (tags[1:] != tags[:-1])
    return positions[keep], tags[keep], vocabulary


def _occurrences(items: Sequence[ContextItem]) -> IntArray | int:
    """How many positions hold the same object as each position (1 unless repeated)."""
    keys = identity_key(items)  # identity, whatever equality a subclass defines
    if len(set(keys(items))) == len(items):
        return 1
    counts = Counter(keys(items))
    return np.fromiter(map(counts.__getitem__, keys(items)), dtype=np.int64, count=len(items))


class _Postings:
    """Positions per tag id: ``positions[start[t] : start[t] + count[t]]``, ascending."""

    __slots__ = ("count", "positions", "start")

    def __init__(self, positions: IntArray, tags: IntArray, vocabulary: int) -> None:
        order = np.argsort(tags, kind="stable")
        self.positions: IntArray = positions[order]
        self.count: IntArray = np.bincount(tags, minlength=vocabulary).astype(np.int64)
        self.start: IntArray = np.cumsum(self.count) - self.count


def _reach(positions: IntArray, tags: IntArray, vocabulary: int, size: int) -> IntArray:
    """For each position, how many positions (itself included) share a tag with it."""
    set_sizes = np.bincount(positions, minlength=size)
    is_large = set_sizes > SUBSET_TAG_LIMIT
    pair_is_large = is_large[positions]
    small_positions, small_tags = positions[~pair_is_large], tags[~pair_is_large]
    reach = _inclusion_exclusion(small_positions, small_tags, set_sizes, vocabulary, size)
    if pair_is_large.any():
        large_positions, large_tags = positions[pair_is_large], tags[pair_is_large]
        everyone = _Postings(positions, tags, vocabulary)
        large_only = _Postings(large_positions, large_tags, vocabulary)
        reach[is_large] = _union_sizes(large_positions, large_tags, everyone, size)[is_large]
        reach += _union_sizes(small_positions, small_tags, large_only, size)
    return reach


def _inclusion_exclusion(
    positions: IntArray, tags: IntArray, set_sizes: IntArray, vocabulary: int, size: int
) -> IntArray:
    """Reach of the small positions, counting only small positions (see module docstring)."""
    reach = np.zeros(size, dtype=np.int64)
    if len(tags) == 0:
        return reach
    # groups[t] = (positions with t distinct tags, their sorted tag ids as an (n_t, t) matrix)
    groups: dict[int, tuple[IntArray, IntArray]] = {}
    for width in range(1, SUBSET_TAG_LIMIT + 1):
        members = np.flatnonzero(set_sizes == width)
        if len(members):
            matrix = tags[np.searchsorted(positions, members)[:, None] + np.arange(width)]
            groups[width] = (members, matrix)

    # Level 1: a one-tag subset's number is the tag id itself.
    covering = np.bincount(tags, minlength=vocabulary)
    numbers: dict[tuple[int, tuple[int, ...]], IntArray] = {}
    for width, (members, matrix) in groups.items():
        for column in range(width):
            numbers[(width, (column,))] = matrix[:, column]
            reach[members] += covering[matrix[:, column]]

    for level in range(2, max(groups) + 1):
        keys: list[IntArray] = []
        owners: list[tuple[int, tuple[int, ...]]] = []
        for width, (_, matrix) in groups.items():
            if width < level:
                continue
            for columns in combinations(range(width), level):
                prefix = numbers[(width, columns[:-1])]
                keys.append(prefix * vocabulary + matrix[:, columns[-1]])
                owners.append((width, columns))
        joined = np.concatenate(keys)
        _, inverse = np.unique(joined, return_inverse=True)
        inverse = inverse.reshape(-1).astype(np.int64)
        covering = np.bincount(inverse)
        sign = 1 if level % 2 else -1
        next_numbers: dict[tuple[int, tuple[int, ...]], IntArray] = {}
        offset = 0
        for (width, columns), key in zip(owners, keys, strict=True):
            subset_numbers = inverse[offset : offset + len(key)]
            offset += len(key)
            next_numbers[(width, columns)] = subset_numbers
            reach[groups[width][0]] += sign * covering[subset_numbers]
        numbers = next_numbers
    return reach


def _union_sizes(
    query_positions: IntArray, query_tags: IntArray, postings: _Postings, size: int
) -> IntArray:
    """Per query position, the size of the union of the posting lists of its tags.

    ``query_positions`` is ascending (pairs are sorted by position).
    """
    counts = postings.count[query_tags]
    total = int(counts.sum())
    if total == 0:
        return np.zeros(size, dtype=np.int64)
    if total <= PAIR_LIMIT:
        query_of_pair = np.repeat(query_positions, counts)
        first_of_run = np.cumsum(counts) - counts
        index = np.repeat(postings.start[query_tags] - first_of_run, counts) + np.arange(total)
        hits = unique_ints(query_of_pair * size + postings.positions[index])
        return np.bincount(hits // size, minlength=size).astype(np.int64)
    return _union_sizes_bitset(query_positions, query_tags, postings, size)


def _union_sizes_bitset(
    query_positions: IntArray, query_tags: IntArray, postings: _Postings, size: int
) -> IntArray:
    masks: dict[int, int] = {}
    for tag in np.unique(query_tags).tolist():
        start, length = int(postings.start[tag]), int(postings.count[tag])
        if length == 0:
            continue
        members = postings.positions[start : start + length]
        if length < 64:
            masks[tag] = sum(1 << p for p in members.tolist())
        else:
            bits = np.zeros(size, dtype=np.bool_)
            bits[members] = True
            masks[tag] = int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")
    result = np.zeros(size, dtype=np.int64)
    current = -1
    union = 0
    for position, tag in zip(query_positions.tolist(), query_tags.tolist(), strict=True):
        if position != current:
            if current >= 0:
                result[current] = union.bit_count()
            current, union = position, 0
        union |= masks.get(tag, 0)
    result[current] = union.bit_count()
    return result
