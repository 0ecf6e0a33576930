"""Token counting: turn text into the token counts pycupel's items carry.

* :class:`TokenCounter` -- the protocol (``count(text)``, ``count_batch(texts)``);
  :class:`BaseTokenCounter` derives ``count_batch`` from ``count`` for custom counters.
* :class:`HeuristicCounter` -- the dependency-free default estimate (close to BPE counts for
  English prose, code and JSON).
* :class:`TiktokenCounter` -- exact counts with tiktoken (``pip install 'pycupel[tiktoken]'``).
* :class:`HuggingFaceCounter` -- exact counts with a ``tokenizer.json``
  (``pip install 'pycupel[hf]'``).
* :class:`CachedCounter` -- a thread-safe LRU cache in front of any counter.
* :func:`item_from_text` / :func:`items_from_texts` -- build items from text.

Example:
    >>> from pycupel.tokens import CachedCounter, HeuristicCounter, items_from_texts
    >>> counter = CachedCounter(HeuristicCounter())
    >>> items = items_from_texts(["You are terse.", "Summarise the log."], counter=counter)
    >>> [item.tokens for item in items]
    [4, 4]

The optional tokenizers are imported only when a counter that needs them is created, so
importing this package never requires them.
"""

from pycupel.tokens.base import BaseTokenCounter, TokenCounter
from pycupel.tokens.cache import CachedCounter, CacheStats
from pycupel.tokens.heuristic import HeuristicCounter
from pycupel.tokens.hf_counter import HuggingFaceCounter
from pycupel.tokens.items import ItemFields, item_from_text, items_from_texts
from pycupel.tokens.tiktoken_counter import (
    CL100K_PAT_STR,
    O200K_PAT_STR,
    TiktokenCounter,
    load_bpe_ranks,
)

__all__ = [
    "CL100K_PAT_STR",
    "O200K_PAT_STR",
    "BaseTokenCounter",
    "CacheStats",
    "CachedCounter",
    "HeuristicCounter",
    "HuggingFaceCounter",
    "ItemFields",
    "TiktokenCounter",
    "TokenCounter",
    "item_from_text",
    "items_from_texts",
    "load_bpe_ranks",
]
