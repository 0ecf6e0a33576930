"""Helpers shared by the token-counting tests: a tiny BPE ranks file and a tiny tokenizer,
both built locally (nothing is downloaded)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Merges of the tiny BPE, in rank order after the 256 single bytes (ranks 0..255 = byte value).
# Each merge joins two tokens that exist before it, as real BPE ranks files do.
TINY_MERGES: Sequence[bytes] = (
    b"he",  # 256
    b"ll",  # 257
    b"llo",  # 258
    b"hello",  # 259
    b" w",  # 260
    b"or",  # 261
    b" wor",  # 262
    b"ld",  # 263
    b" world",  # 264
)


def write_bpe_file(path: Path, merges: Sequence[bytes] = TINY_MERGES) -> Path:
    """Write a ranks file: all 256 single bytes, then ``merges``, one ``base64 rank`` a line."""
    tokens = [bytes([b]) for b in range(256)] + list(merges)
    lines = [f"{base64.b64encode(token).decode()} {rank}" for rank, token in enumerate(tokens)]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def word_level_tokenizer() -> Any:
    """A word-level tokenizer: whitespace/punctuation split, a 6-word vocabulary, [UNK] for the
    rest, and a post-processor that wraps each text in [CLS] ... [SEP]."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "hello": 3, "world": 4, "again": 5}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
    )
    return tokenizer
