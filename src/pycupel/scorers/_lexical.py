"""Lexical analysis and Okapi BM25, shared by the relevance scorer and the chat adapters.

* **Terms.** Text is case-folded, split into runs of letters and digits (Unicode-aware;
  an apostrophe inside a word is dropped, so ``"Caroline's"`` gives ``caroline`` and ``s``),
  English stop words and one-letter words are removed, and every word is reduced to its
  Snowball (Porter 2) English stem with PyStemmer. Each distinct word is stemmed once per
  call, so the cost follows the vocabulary, not the text length.
* **BM25.** For a query with terms ``t`` and a document ``d`` among ``N`` documents::

      score(d) = sum over distinct t in the query of
                 idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
      idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

  ``tf`` counts the term in the document, ``|d|`` is the document's term count, ``avgdl`` the
  mean over the documents, ``df`` the number of documents holding the term. This is the
  Lucene form of the idf: never negative, so a very common word adds little, never less
  than nothing.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from itertools import count, pairwise
from typing import Any, Final, cast

import numpy as np
import numpy.typing as npt

from pycupel._unique import unique_ints
from pycupel.errors import MissingDependencyError

__all__ = [
    "STOP_WORDS",
    "Bm25Corpus",
    "TermVocabulary",
    "adjacent_terms",
    "split_case",
    "terms_of",
    "words_of",
]

_WORD: Final = re.compile(r"[^\W_]+")

STOP_WORDS: Final = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just let me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    also get got yes yeah oh ok okay hey hi hello really thanks thank im ive youre dont didnt
    thats
    """.split()  # noqa: SIM905  (a word list reads better as text)
)
"""English function words that say nothing about a topic (and chat fillers)."""


_PER_THREAD = threading.local()


def _stemmer() -> Any:
    """This thread's English stemmer.

    A PyStemmer object is not safe to share between threads and costs milliseconds to build
    (its word cache), so each thread builds one on first use and keeps it; stemming is a pure
    function of the word, so the cache never changes a result.
    """
    stemmer = getattr(_PER_THREAD, "stemmer", None)
    if stemmer is None:
        try:
            import Stemmer  # noqa: PLC0415  (imported on first use: most runs never score text)
        except ImportError as exc:  # pragma: no cover - PyStemmer is a declared dependency
            raise MissingDependencyError("relevance scoring", "PyStemmer", "relevance") from exc
        stemmer = Stemmer.Stemmer("english")
        _PER_THREAD.stemmer = stemmer
    return stemmer


# ASCII letters and digits kept, every other ASCII byte a space: for an ASCII text,
# ``text.lower().encode().translate(_ASCII_WORDS).split()`` gives the words _WORD finds in its
# casefolded form (for ASCII, \w is [A-Za-z0-9_], casefold() is lower()) several times faster.
_ASCII_WORDS: Final = bytes(code if chr(code).isalnum() else 32 for code in range(128)) + bytes(128)


_CAMEL: Final = re.compile(r"(?<=[a-z])(?=[A-Z])")
"""Where a camel-case identifier's words meet (``auditIndexer``, ``AuditIndexerPort``)."""


def split_case(text: str) -> str:
    """``text`` with the words of its camel-case identifiers apart (``notAfter`` becomes
    ``not After``)."""
    if len(text) < 4096:
        return _CAMEL.sub(" ", text)
    # The meeting points found over the code points at once (a regex scan of a long tool
    # output is about 30 MB/s; this is a few ms for a megabyte). _CAMEL's classes are ASCII
    # letters, so a text with other characters is read as UTF-32 the same way.
    if text.isascii():
        codes: npt.NDArray[np.uint8] | npt.NDArray[np.uint32] = np.frombuffer(
            text.encode("ascii"), dtype=np.uint8
        )
    else:
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    lower = (codes >= 97) & (codes <= 122)
    upper = (codes >= 65) & (codes <= 90)
    cuts = (np.flatnonzero(lower[:-1] & upper[1:]) + 1).tolist()
    if not cuts:
        return text
    bounds = [0, *cuts, len(text)]
    return " ".join(text[start:end] for start, end in pairwise(bounds))


def words_of(text: str) -> list[str]:
    """The words of ``text``: casefolded runs of letters and digits (see the module doc)."""
    if text.isascii():
        return text.lower().encode().translate(_ASCII_WORDS).decode().split()
    return _WORD.findall(text.casefold())


def terms_of(texts: Sequence[str]) -> list[list[str]]:
    """The terms (stems, stop words removed) of every text, in order."""
    words = [words_of(text) for text in texts]
    stems = _stems(words)
    return [[stems[w] for w in text_words if w in stems] for text_words in words]


def adjacent_terms(text: str) -> list[tuple[str, str]]:
    """The terms of each two words of ``text`` that stand side by side, neither a stop word
    ("the disputes cron" gives one pair; "calls to the accounts" none): the names of several
    words a question may hold."""
    words = words_of(text)
    stems = _stems([words])
    return [(stems[a], stems[b]) for a, b in pairwise(words) if a in stems and b in stems]


def _stems(words: Sequence[Iterable[str]]) -> dict[str, str]:
    """Stem of every distinct content word of ``words`` (stop words and 1-letter words absent)."""
    vocabulary: set[str] = set().union(*words).difference(STOP_WORDS)
    kept = [word for word in sorted(vocabulary) if len(word) > 1]
    if not kept:
        return {}
    # A word ending in a digit is its own stem (every rule of the English stemmer removes or
    # replaces a suffix of letters): the numbers and ids of logs and JSON, most of a long
    # output's distinct words, skip the stemmer. The keys stay in sorted order.
    stems = dict(zip(kept, kept, strict=True))
    lettered = [word for word in kept if not "0" <= word[-1] <= "9"]
    stems.update(zip(lettered, _stemmer().stemWords(lettered), strict=True))
    return stems


FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]


_SEPARATOR: Final = "\x01"
_SEPARATOR_ID: Final = -2
# _ASCII_WORDS, but ASCII capitals lowered (an ASCII text needs no lower() of its own), the
# separator byte kept as a word of its own and every byte of a multi-byte UTF-8 character
# kept (they only occur inside words already found by _WORD).
_CORPUS_BYTES: Final = bytes(
    ord(chr(code).lower()) if chr(code).isalnum() or chr(code) == _SEPARATOR else 32
    for code in range(128)
) + bytes(range(128, 256))


def _corpus_words(texts: Sequence[str], *, camel: bool = False) -> tuple[IntArray, dict[str, int]]:
    """The term id of every word of ``texts``, in order, and the term ids (stem -> id).

    The texts are joined around a separator word and split once (a split per text costs
    more than the split itself); an ASCII text is left to the byte translation, which
    lowers it and keeps its letters and digits (the words :func:`words_of` finds), any
    other text is replaced by its :func:`words_of` words. Each word is looked up once,
    numbered by first occurrence; the distinct words are then stemmed and the numbers
    mapped to term ids in one array pass. A word's id is its stem's term id, -1 for a stop
    word and :data:`_SEPARATOR_ID` for the separator between two documents. Term ids
    number the stems in the order of their words, sorted (the order :class:`Bm25Corpus`
    has always used: expansion breaks ties by term id).
    """
    glue = f" {_SEPARATOR} "
    joined = glue.join(texts)
    if camel:
        joined = split_case(joined)
        if not joined.isascii():  # the texts, split, for the slower paths below
            whole = joined.count(_SEPARATOR) == max(len(texts) - 1, 0)
            texts = joined.split(glue) if whole else [split_case(text) for text in texts]
    if not joined.isascii():
        whole = joined.count(_SEPARATOR) == max(len(texts) - 1, 0)
        folded = _folded(joined) if whole else None
        joined = (
            folded
            if folded is not None
            else glue.join([text if text.isascii() else " ".join(words_of(text)) for text in texts])
        )
    separator = _SEPARATOR.encode()
    if joined.count(_SEPARATOR) != max(len(texts) - 1, 0):
        # A text holding the separator character itself: fall back to one split per text.
        words: list[bytes] = []
        for position, text in enumerate(texts):
            if position:
                words.append(separator)
            words.extend(word.encode() for word in words_of(text))
        numbers = _FirstSeen()
        first_seen = np.fromiter(map(numbers.__getitem__, words), dtype=np.intp, count=len(words))
        found = list(numbers)
    else:
        first_seen, found = _word_numbers(joined.encode().translate(_CORPUS_BYTES))
    remap, term_ids = _term_numbers(found)
    return remap[first_seen], term_ids


_SORT_BYTES: Final = 16
"""The bytes of a word the array sort of :func:`_term_numbers` compares (longer words that
share them are sorted whole)."""
_STOP_BYTES: Final = frozenset(word.encode() for word in STOP_WORDS)


def _term_numbers(found: list[bytes]) -> tuple[IntArray, dict[str, int]]:
    """The term id of each of the distinct words ``found`` (-1 for a stop word or a word of
    one character, :data:`_SEPARATOR_ID` for the separator), and the term ids (stem -> id):
    the stems of :func:`_stems`, numbered in order of first appearance among the words
    sorted.

    The sorting and the tests of the words are array passes over their first bytes (UTF-8
    bytes sort as their characters do); only the stemming and the numbering of the stems go
    word by word.
    """
    size = len(found)
    remap = np.full(size, -1, dtype=np.intp)
    if not size:
        return remap, {}
    lengths = np.fromiter(map(len, found), dtype=np.intp, count=size)
    keys = np.array(found, dtype=f"S{_SORT_BYTES}")  # longer words cut (no word holds a 0)
    order = np.argsort(keys, kind="stable")
    long_words = lengths > _SORT_BYTES
    if long_words.any():
        # Words that share their first bytes (one of them longer) are sorted whole.
        ties = np.flatnonzero(keys[order][1:] == keys[order][:-1])
        if len(ties):
            starts = ties[np.r_[True, ties[1:] != ties[:-1] + 1]]
            ends = ties[np.r_[ties[1:] != ties[:-1] + 1, True]] + 2
            for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
                order[start:end] = sorted(order[start:end].tolist(), key=found.__getitem__)
    # The stop words among the words: those whose first 16 bytes hash as a stop word's do,
    # checked (a long word is no stop word).
    hashes = _prefix_hashes(keys)
    at = np.searchsorted(_STOP_HASHES, hashes).clip(max=len(_STOP_HASHES) - 1)
    stop = np.flatnonzero(_STOP_HASHES[at] == hashes).tolist()
    kept = lengths > 1
    kept[[position for position in stop if found[position] in _STOP_BYTES]] = False
    # A word ending in a digit is its own stem (every rule of the English stemmer removes
    # or replaces a suffix of letters): most of a long output's distinct words, the numbers
    # and ids of logs and JSON, skip the stemmer.
    short_keys = keys.view(np.uint8).reshape(size, _SORT_BYTES)
    last = short_keys[np.arange(size), np.minimum(lengths, _SORT_BYTES) - 1]
    for position in np.flatnonzero(long_words).tolist():
        last[position] = found[position][-1]
    distinct = list(map(bytes.decode, found))
    # A word of 2 to 4 bytes that starts with a non-ASCII byte may be one character.
    first = short_keys[:, 0]
    for position in np.flatnonzero(kept & (lengths <= 4) & (first >= 128)).tolist():
        kept[position] = len(distinct[position]) > 1
    lettered = np.flatnonzero(kept & ((last < 48) | (last > 57))).tolist()
    stems = np.array(distinct, dtype=object)
    if kept.any():
        stems[lettered] = _stemmer().stemWords([distinct[position] for position in lettered])
    in_order = order[kept[order]]
    sequence = stems[in_order].tolist()
    term_ids = dict(zip(dict.fromkeys(sequence), count()))
    remap[in_order] = np.fromiter(
        map(term_ids.__getitem__, sequence), dtype=np.intp, count=len(sequence)
    )
    remap[np.flatnonzero(keys == _SEPARATOR.encode())] = _SEPARATOR_ID
    return remap, term_ids


# Word keys: a word's bytes read as little-endian integers of 8 bytes, the bytes past its end
# masked off (no byte of a word is 0, so distinct words have distinct keys).
_KEY_MASKS: Final = np.array(
    [(1 << (8 * length)) - 1 for length in range(8)] + [(1 << 64) - 1], dtype=np.uint64
)
_KEY_BYTES: Final = 8
_FIBONACCI: Final = np.uint64(0x9E3779B97F4A7C15)
"""2**64 over the golden ratio, odd: multiplying by it spreads keys over the high bits."""


def _prefix_hashes(keys: npt.NDArray[np.bytes_]) -> npt.NDArray[np.uint64]:
    """A hash of each of the :data:`_SORT_BYTES`-byte ``keys`` (for a quick look-up)."""
    halves = keys.view("<u8").reshape(len(keys), 2)
    hashes: npt.NDArray[np.uint64] = (halves[:, 0] * _FIBONACCI) ^ halves[:, 1]
    return hashes


_STOP_HASHES: Final = np.sort(
    _prefix_hashes(np.array(sorted(_STOP_BYTES), dtype=f"S{_SORT_BYTES}"))
)
"""The stop words' hashes, sorted: a word's is looked up by a binary search (``np.isin``
sorts the corpus's words' hashes with them)."""


def _word_numbers(data: bytes) -> tuple[IntArray, list[bytes]]:
    """Which distinct word each word of ``data`` is (its position in the list returned),
    and the distinct words: ``data.split()`` numbered, for bytes whose only whitespace is
    the space (a translation by :data:`_CORPUS_BYTES`).

    A dict lookup per word costs most of a corpus's analysis; here the words of up to 8
    bytes (nearly all), then those of up to 16, are numbered by array passes over their
    integer keys (:func:`_distinct_keys`, :func:`_distinct_pairs`); only the longer ones,
    and the few of up to 16 bytes that lost their slot, are looked up one by one.
    """
    size = len(data)
    padded = np.frombuffer(data + bytes(2 * _KEY_BYTES), dtype=np.uint8)
    in_word = np.zeros(size + 2, dtype=bool)
    np.not_equal(padded[:size], 32, out=in_word[1:-1])
    edges = np.flatnonzero(in_word[1:] != in_word[:-1])
    starts, ends = edges[0::2], edges[1::2]
    lengths = ends - starts
    # The 8 bytes from every position, read as one integer each (unaligned reads).
    windows = np.ndarray(shape=(size + _KEY_BYTES,), dtype="<u8", buffer=padded, strides=(1,))
    short = lengths <= _KEY_BYTES
    keys = windows[starts[short]] & _KEY_MASKS[lengths[short]]
    numbers = np.empty(len(starts), dtype=np.intp)
    unique_keys, numbers[short] = _distinct_keys(keys)
    found: list[bytes] = unique_keys.astype("<u8").view("S8").tolist()  # trailing 0s dropped
    looked_up = np.flatnonzero(lengths > 2 * _KEY_BYTES)
    medium = np.flatnonzero(~short & (lengths <= 2 * _KEY_BYTES))
    if len(medium):
        first = starts[medium]
        pairs = np.empty((len(medium), 2), dtype=np.uint64)
        pairs[:, 0] = windows[first]
        pairs[:, 1] = windows[first + _KEY_BYTES] & _KEY_MASKS[lengths[medium] - _KEY_BYTES]
        chosen, positions, won = _distinct_pairs(pairs)
        numbers[medium] = len(found) + positions
        found.extend(pairs[chosen].astype("<u8").view("S16").ravel().tolist())
        looked_up = np.concatenate([looked_up, medium[~won]])
    if len(looked_up):
        more = _FirstSeen()
        bounds = zip(starts[looked_up].tolist(), ends[looked_up].tolist(), strict=True)
        numbers[looked_up] = len(found) + np.fromiter(
            (more[data[start:end]] for start, end in bounds), dtype=np.intp, count=len(looked_up)
        )
        found.extend(more)
    return numbers, found


def _distinct_keys(keys: npt.NDArray[np.uint64]) -> tuple[npt.NDArray[np.uint64], IntArray]:
    """The distinct nonzero ``keys``, and the position of each key among them.

    A hash table of about one slot per key: each key is written to its slot (one per slot
    wins), and a key equal to its slot's is numbered by the slot. Every occurrence of a key
    shares its slot, so the keys that lost are none of those in the table: they are sorted
    apart (they are few).
    """
    bits = max(len(keys).bit_length() - 1, 8)
    slots = ((keys * _FIBONACCI) >> np.uint64(64 - bits)).astype(np.intp)
    table = np.zeros(1 << bits, dtype=np.uint64)
    table[slots] = keys
    won = table[slots] == keys
    occupied = np.flatnonzero(table)
    numbers = np.zeros(len(table), dtype=np.intp)
    numbers[occupied] = np.arange(len(occupied), dtype=np.intp)
    positions = numbers[slots]
    unique_keys = table[occupied]
    if not won.all():
        lost = np.flatnonzero(~won)
        rest, where = np.unique(keys[lost], return_inverse=True)
        positions[lost] = len(unique_keys) + where.reshape(-1)
        unique_keys = np.concatenate([unique_keys, rest])
    return unique_keys, positions


def _distinct_pairs(
    pairs: npt.NDArray[np.uint64],
) -> tuple[IntArray, IntArray, npt.NDArray[np.bool_]]:
    """:func:`_distinct_keys` for keys of two integers (the rows of ``pairs``), a row's
    index written to its slot: one row of each distinct pair that won its slot, each row's
    position among them, and whether it won (a pair that lost is none of those numbered:
    the caller looks it up)."""
    bits = max(len(pairs).bit_length(), 8)
    mixed = ((pairs[:, 0] * _FIBONACCI) ^ pairs[:, 1]) * _FIBONACCI
    slots = (mixed >> np.uint64(64 - bits)).astype(np.intp)
    table = np.full(1 << bits, -1, dtype=np.intp)
    table[slots] = np.arange(len(pairs), dtype=np.intp)
    winners = table[slots]
    won = (pairs[winners, 0] == pairs[:, 0]) & (pairs[winners, 1] == pairs[:, 1])
    occupied = np.flatnonzero(table >= 0)
    numbers = np.zeros(len(table), dtype=np.intp)
    numbers[occupied] = np.arange(len(occupied), dtype=np.intp)
    return table[occupied], numbers[slots], won


_FOLDED_CHARACTERS: Final = 16
"""The most distinct non-ASCII characters :func:`_folded` replaces one at a time."""


def _folded(text: str) -> str | None:
    """``text`` with each non-ASCII character replaced by its casefolded form, the
    characters of that form that are not letters or digits by spaces (``None`` when it
    has more than :data:`_FOLDED_CHARACTERS` distinct ones).

    Casefolding maps each character on its own, so the byte translation of
    :func:`_corpus_words` finds in the result the words :func:`words_of` finds in each
    text, without a regex pass over the mostly ASCII text around the few others.
    """
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    found = np.unique(codes[codes > 127])
    if len(found) > _FOLDED_CHARACTERS:
        return None
    for code in found.tolist():
        character = chr(code)
        folded = "".join(c if _WORD.fullmatch(c) else " " for c in character.casefold())
        if folded != character:
            text = text.replace(character, folded)
    return text


class _FirstSeen(dict[bytes, int]):
    """Numbers keys by first occurrence: looking up a new key adds it."""

    __slots__ = ()

    def __missing__(self, key: bytes) -> int:
        self[key] = number = len(self)
        return number


_NOT_STOP: Final = (-1).__ne__
"""Whether a word's term id is one (-1 marks a stop word)."""


class TermVocabulary:
    """Term ids assigned as documents arrive, for a corpus that grows (a session's history).

    Each document is analysed once (:meth:`ids`); a :class:`Bm25Corpus` over any subset of the
    documents seen is then built from their id arrays without reading a word again. Not
    shared between threads: one belongs to one conversation.
    """

    __slots__ = ("_stems", "_word_ids", "term_ids")

    def __init__(self) -> None:
        self.term_ids: dict[str, int] = {}
        self._stems: dict[str, str | None] = {}  # word -> stem, None for a stop word
        # Word -> its stem's term id (-1 for a stop word), for the words of the documents
        # numbered so far: a text of known words is looked up in one C pass.
        self._word_ids: dict[str, int] = {}

    def _learn(self, words: Sequence[str]) -> dict[str, str | None]:
        """Word -> stem (``None`` for a stop word) with every one of ``words`` in it; each
        distinct word is stemmed once, the first time it is seen."""
        known = self._stems
        new = set(words).difference(known)  # in C (the order of the new words is irrelevant)
        if new:
            # A number is its own stem (the English stemmer's rules are all about letters),
            # and chats bring new ones every turn: they skip the stemmer.
            for word in [word for word in new if word.isdigit() and word.isascii()]:
                known[word] = word if len(word) > 1 else None
                new.discard(word)
        if new:
            stems = _stems([new])
            for word in new:
                known[word] = stems.get(word)
        return known

    def known_ids(self, words: Sequence[str]) -> list[int]:
        """The term ids of ``words`` (a :func:`words_of` list) that the vocabulary already
        numbers, in order, repeats kept: stop words and terms no document holds are left
        out, and no term gets a new id (a query's terms)."""
        found = list(map(self._word_ids.get, words))
        if None not in found:  # every word was in a numbered document (a session's query)
            return list(filter(_NOT_STOP, cast("list[int]", found)))
        known = self._learn(words)
        # Looked up per word in C (map); only the filtering runs per word in Python.
        stems = [stem for stem in map(known.__getitem__, words) if stem is not None]
        return [term for term in map(self.term_ids.get, stems) if term is not None]

    def id_list(self, words: Sequence[str]) -> list[int]:
        """:meth:`ids` as a list."""
        word_ids = self._word_ids
        found = list(map(word_ids.get, words))
        if None in found:
            self._number([word for word in dict.fromkeys(words) if word not in word_ids])
            found = list(map(word_ids.__getitem__, words))
        return list(filter(_NOT_STOP, cast("list[int]", found)))

    def _number(self, new: list[str]) -> None:
        """Remember the ``new`` words (distinct, in order of first appearance) with their
        stems' term ids (-1 for a stop word), numbering new stems in that order.

        A stem no document held yet can only come from a word never seen in one, so the
        stems of a text are numbered in order of first appearance, as a pass over all its
        words would number them.
        """
        known = self._learn(new)
        term_ids = self.term_ids
        word_ids = self._word_ids
        for word in new:
            stem = known[word]
            word_ids[word] = -1 if stem is None else term_ids.setdefault(stem, len(term_ids))

    def ids(self, words: Sequence[str]) -> IntArray:
        """The term ids of ``words`` (a :func:`words_of` list), stop words left out, in order."""
        return np.array(self.id_list(words), dtype=np.intp)


class Bm25Corpus:
    """BM25 statistics of a list of texts, queried any number of times.

    Built once per run (never stored on a scorer). Every term gets an integer id; the corpus
    keeps one flat array of term ids with the document of each, so a query is a few
    vectorised passes whatever the number of documents.
    """

    __slots__ = ("_avgdl", "_b", "_doc_of", "_ids", "_k1", "_lengths", "_n", "_term_ids")

    def __init__(
        self, texts: Sequence[str], *, k1: float, b: float, split_case: bool = False
    ) -> None:
        self._k1 = k1
        self._b = b
        self._n = len(texts)
        ids, term_ids = _corpus_words(texts, camel=split_case)
        # Separators (-2) end the documents; stop words (-1) and separators are dropped. A
        # document's length is the number of terms kept between its separators.
        kept = ids >= 0
        self._ids: IntArray = ids[kept]
        lengths = np.zeros(self._n, dtype=np.intp)
        if len(ids):
            starts = np.zeros(self._n, dtype=np.intp)
            starts[1:] = np.flatnonzero(ids == _SEPARATOR_ID)
            lengths = np.add.reduceat(kept.astype(np.intp), starts)
        self._doc_of: IntArray = np.repeat(np.arange(self._n, dtype=np.intp), lengths)
        self._lengths = lengths.astype(np.float64)
        self._avgdl = float(self._lengths.mean()) if self._n else 0.0
        self._term_ids = term_ids

    @classmethod
    def of_term_ids(
        cls, per_doc: Sequence[IntArray], vocabulary: TermVocabulary, *, k1: float, b: float
    ) -> Bm25Corpus:
        """The corpus of documents given as :meth:`TermVocabulary.ids` arrays.

        The statistics are those of the same documents' texts: each document's length is its
        number of terms, and a query term the vocabulary knows but these documents lack
        scores 0 everywhere, exactly as an unknown one.
        """
        return cls._of_documents(per_doc, vocabulary.term_ids, k1=k1, b=b)

    @classmethod
    def _of_documents(
        cls, per_doc: Sequence[IntArray], term_ids: dict[str, int], *, k1: float, b: float
    ) -> Bm25Corpus:
        """The corpus of documents given as arrays of term ids (``term_ids``' numbers)."""
        corpus = cls.__new__(cls)
        corpus._k1 = k1
        corpus._b = b
        corpus._n = len(per_doc)
        counts = np.fromiter(map(len, per_doc), dtype=np.intp, count=corpus._n)
        corpus._ids = np.concatenate(per_doc) if per_doc else np.zeros(0, dtype=np.intp)
        corpus._doc_of = np.repeat(np.arange(corpus._n, dtype=np.intp), counts)
        corpus._lengths = counts.astype(np.float64)
        corpus._avgdl = float(corpus._lengths.mean()) if corpus._n else 0.0
        corpus._term_ids = term_ids
        return corpus

    def of_ranges(
        self, ranges: Sequence[tuple[int, int]], extra: Sequence[int] | None = None
    ) -> Bm25Corpus:
        """The corpus whose document ``i`` is the documents ``ranges[i][0]`` up to (not
        including) ``ranges[i][1]`` of this one, joined (and then document ``extra[i]`` too,
        when given and not negative): the statistics of the joined texts, without reading a
        word again (ranges may overlap)."""
        offsets = np.zeros(self._n + 1, dtype=np.intp)
        np.cumsum(self._lengths.astype(np.intp), out=offsets[1:])
        ids = self._ids
        per_doc = [ids[offsets[start] : offsets[end]] for start, end in ranges]
        if extra is not None:
            per_doc = [
                doc if more < 0 else np.concatenate([doc, ids[offsets[more] : offsets[more + 1]]])
                for doc, more in zip(per_doc, extra, strict=True)
            ]
        return Bm25Corpus._of_documents(per_doc, self._term_ids, k1=self._k1, b=self._b)

    @property
    def size(self) -> int:
        """The number of documents."""
        return self._n

    def terms(self, text: str) -> list[str]:
        """The terms of ``text`` that occur in the corpus (in order, repeats kept)."""
        words = words_of(text)
        stems = _stems([words])
        return [stems[w] for w in words if w in stems and stems[w] in self._term_ids]

    def scores(
        self, query_terms: Sequence[str], weights: Sequence[float] | None = None
    ) -> FloatArray:
        """BM25 of every document for the distinct ``query_terms``.

        ``weights`` (one per query term, default 1) multiplies each term's contribution; a
        term given twice counts once, with its larger weight.
        """
        chosen: dict[int, float] = {}
        for position, term in enumerate(query_terms):
            term_id = self._term_ids.get(term)
            if term_id is None:
                continue
            weight = 1.0 if weights is None else float(weights[position])
            chosen[term_id] = max(weight, chosen.get(term_id, weight))
        return self._score_ids(chosen)

    def pair_scores(self, query_terms: Sequence[str]) -> FloatArray:
        """BM25 of every document for the pairs of adjacent ``query_terms`` (see
        :meth:`matches`), each pair scored as one term."""
        idf, saturation = self.matches([], query_terms)
        scores: FloatArray = idf @ saturation
        return scores

    def holds_pairs(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.bool_]:
        """Whether each document holds one of the ``pairs`` of terms (see :func:`adjacent_terms`)
        next to each other, in either order, stop words between them aside: a name of several
        words, or the same name written the other way round (the host ``replica.search`` of
        "the search replica")."""
        ids = [(self._term_ids.get(a, -1), self._term_ids.get(b, -1)) for a, b in pairs]
        width = len(self._term_ids) + 1
        codes = [
            code for a, b in ids if a >= 0 and b >= 0 for code in (a * width + b, b * width + a)
        ]
        held = np.zeros(self._n, dtype=bool)
        if codes and len(self._ids) >= 2:
            _, hit = self._adjacent(codes, width)
            held[self._doc_of[:-1][hit]] = True
        return held

    def _adjacent(self, codes: Sequence[int], width: int) -> tuple[IntArray, npt.NDArray[np.bool_]]:
        """Each two neighbouring terms as one code (``first * width + second``; ``width``
        exceeds every term id), and whether the two stand in one document as one of
        ``codes`` (the corpus holds at least two terms)."""
        pairs = self._ids[:-1] * width + self._ids[1:]
        doc_of = self._doc_of
        return pairs, (doc_of[:-1] == doc_of[1:]) & np.isin(pairs, codes)

    def matches(
        self, query_terms: Sequence[str], sequence: Sequence[str] = ()
    ) -> tuple[FloatArray, FloatArray]:
        """Each query unit's idf and its saturated frequency in every document
        (``tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))``): BM25 of a document is
        ``(idf[:, None] * saturation).sum(axis=0)``. The units are the distinct
        ``query_terms`` the corpus holds, then the distinct pairs of adjacent terms of
        ``sequence`` (a query's terms in order, see :func:`terms_of`), a pair held by a
        document where its two terms follow each other (stop words between them aside): a
        name of several words (``"search consumer"``, ``"us-west-2"``) counts where it
        stands whole, not where its words are scattered. A term the corpus lacks breaks the
        sequence."""
        term_ids = list(
            dict.fromkeys(t for t in map(self._term_ids.get, query_terms) if t is not None)
        )
        ids = [self._term_ids.get(term, -1) for term in sequence]
        width = len(self._term_ids) + 1
        codes = list(dict.fromkeys(a * width + b for a, b in pairwise(ids) if a >= 0 and b >= 0))
        tf = np.zeros((len(term_ids) + len(codes), self._n), dtype=np.float64)
        if term_ids:
            tf[: len(term_ids)] = self._term_frequencies(np.asarray(term_ids, dtype=np.intp))
        if codes and len(self._ids) >= 2:
            pairs, hit = self._adjacent(codes, width)
            if hit.any():
                slot = {code: number for number, code in enumerate(codes)}
                which = np.fromiter(map(slot.__getitem__, pairs[hit].tolist()), dtype=np.intp)
                flat = which * self._n + self._doc_of[:-1][hit]
                counts = np.bincount(flat, minlength=len(codes) * self._n)
                tf[len(term_ids) :] = counts.reshape(len(codes), self._n)
        df = (tf > 0).sum(axis=1)
        idf = np.log(1.0 + (self._n - df + 0.5) / (df + 0.5))
        if self._avgdl == 0.0:
            return idf, np.zeros_like(tf)
        k1 = self._k1
        norm = k1 * (1.0 - self._b + self._b * self._lengths / self._avgdl)
        saturation = np.divide(
            tf * (k1 + 1.0), tf + norm[None, :], out=np.zeros_like(tf), where=tf > 0
        )
        return idf, saturation

    def _score_ids(self, chosen: dict[int, float]) -> FloatArray:
        result = np.zeros(self._n, dtype=np.float64)
        if not chosen or self._avgdl == 0.0:
            return result
        tf = self._term_frequencies(np.fromiter(chosen, dtype=np.intp, count=len(chosen)))
        weights = np.fromiter(chosen.values(), dtype=np.float64, count=len(chosen))
        df = (tf > 0).sum(axis=1)
        idf = np.log(1.0 + (self._n - df + 0.5) / (df + 0.5))
        k1 = self._k1
        norm = k1 * (1.0 - self._b + self._b * self._lengths / self._avgdl)
        numerators = (weights * idf)[:, None] * tf * (k1 + 1.0)
        # A document without terms has norm 0 when b is 1: its 0/0 contributions are 0.
        contributions = np.divide(
            numerators, tf + norm[None, :], out=np.zeros_like(numerators), where=tf > 0
        )
        result += contributions.sum(axis=0)
        return result

    def _term_frequencies(self, term_ids: IntArray) -> FloatArray:
        """``tf[q, d]``: occurrences of ``term_ids[q]`` in document ``d``."""
        slot = np.full(len(self._term_ids) + 1, -1, dtype=np.intp)
        slot[term_ids] = np.arange(len(term_ids), dtype=np.intp)
        which = slot[self._ids]
        hit = which >= 0
        flat = which[hit] * self._n + self._doc_of[hit]
        counts = np.bincount(flat, minlength=len(term_ids) * self._n)
        return counts.reshape(len(term_ids), self._n).astype(np.float64)

    def expansion(
        self, first_pass: FloatArray, query_terms: Sequence[str], *, top: int, terms: int
    ) -> list[str]:
        """Pseudo-relevance feedback: terms shared by the ``top`` best documents.

        Terms found in at least two of the ``top`` documents of ``first_pass`` and not in the
        query, ranked by (documents holding them among the top) x idf, best ``terms`` kept.
        """
        best = [int(p) for p in np.argsort(-first_pass, kind="stable")[:top] if first_pass[p] > 0]
        if len(best) < 2:
            return []
        in_best = np.isin(self._doc_of, best)
        pairs = unique_ints(self._ids[in_best] * self._n + self._doc_of[in_best])
        counts = np.bincount(pairs // self._n, minlength=len(self._term_ids))
        every_pair = unique_ints(self._ids * self._n + self._doc_of)
        df = np.bincount(every_pair // self._n, minlength=len(self._term_ids))
        idf = np.log(1.0 + (self._n - df + 0.5) / (df + 0.5))
        for term in query_terms:
            term_id = self._term_ids.get(term)
            if term_id is not None:
                counts[term_id] = 0
        value = np.where(counts >= 2, counts * idf, 0.0)
        order = np.argsort(-value, kind="stable")[:terms]
        names = list(self._term_ids)
        return [names[i] for i in order if value[i] > 0.0]
