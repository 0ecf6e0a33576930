"""Exact token counts with Hugging Face ``tokenizers``.

Optional extra: ``pip install 'pycupel[hf]'``.

Load a local ``tokenizer.json`` (``HuggingFaceCounter("path/to/tokenizer.json")``) or wrap a
``tokenizers.Tokenizer`` you already have. pycupel never downloads anything: to count with a
model from the Hugging Face Hub, fetch its ``tokenizer.json`` yourself (or call
``Tokenizer.from_pretrained`` yourself) and pass the file or object here.

Counts exclude the special tokens a tokenizer's post-processor adds (``[CLS]``, ``<s>``...)
unless ``add_special_tokens=True``: items are pieces of a prompt, not whole model inputs.
Truncation and padding configured on the tokenizer are ignored, since they would change the
count; a tokenizer object that has them enabled is copied first, never modified.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pycupel.errors import TokenizerError
from pycupel.tokens.base import BaseTokenCounter, require_text, require_texts

if TYPE_CHECKING:
    import tokenizers

__all__ = ["HuggingFaceCounter"]

_NAME: Final = "HuggingFaceCounter"
_INSTALL_HINT: Final = "install it with pip install 'pycupel[hf]'"


class HuggingFaceCounter(BaseTokenCounter):
    """Count tokens with a Hugging Face ``tokenizers.Tokenizer``.

    Args:
        tokenizer: the path of a ``tokenizer.json`` file, or a ``tokenizers.Tokenizer``.
        add_special_tokens: also count the special tokens the tokenizer's post-processor
            adds around each text (default ``False``).

    Raises:
        TokenizerError: ``tokenizers`` is not installed, the file is missing or not a valid
            tokenizer, or an argument has the wrong type.

    Example:
        >>> from tokenizers import Tokenizer, models, pre_tokenizers
        >>> tok = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1}, unk_token="[UNK]"))
        >>> tok.pre_tokenizer = pre_tokenizers.Whitespace()
        >>> HuggingFaceCounter(tok).count_batch(["hello hello", "hello there, world"])
        [2, 4]
    """

    __slots__ = ("_add_special_tokens", "_batch", "_source", "_tokenizer")

    def __init__(
        self,
        tokenizer: str | os.PathLike[str] | tokenizers.Tokenizer,
        *,
        add_special_tokens: bool = False,
    ) -> None:
        module = _import_tokenizers()
        if not isinstance(add_special_tokens, bool):
            raise TokenizerError(
                _NAME, f"add_special_tokens: must be a boolean, got {add_special_tokens!r}"
            )
        if isinstance(tokenizer, module.Tokenizer):
            loaded = _without_truncation_or_padding(module, tokenizer)
            source = "<Tokenizer>"
        elif isinstance(tokenizer, str | os.PathLike):
            loaded = _load_file(module, Path(tokenizer))
            source = repr(str(tokenizer))
        else:
            raise TokenizerError(
                _NAME,
                f"tokenizer: must be a tokenizer.json path or a tokenizers.Tokenizer, "
                f"got {tokenizer!r}",
            )
        self._tokenizer = loaded
        self._add_special_tokens = add_special_tokens
        self._source = source
        # encode_batch_fast (tokenizers >= 0.21) skips computing offsets, which counts don't need.
        self._batch = getattr(loaded, "encode_batch_fast", loaded.encode_batch)

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], *, add_special_tokens: bool = False
    ) -> HuggingFaceCounter:
        """Load a local ``tokenizer.json``; same as passing the path to the constructor."""
        if not isinstance(path, str | os.PathLike):
            raise TokenizerError(_NAME, f"path: must be a file path, got {path!r}")
        return cls(path, add_special_tokens=add_special_tokens)

    @property
    def tokenizer(self) -> tokenizers.Tokenizer:
        """The ``tokenizers.Tokenizer`` used for counting (a private copy when one was needed)."""
        tokenizer: tokenizers.Tokenizer = self._tokenizer
        return tokenizer

    @property
    def add_special_tokens(self) -> bool:
        """Whether the post-processor's special tokens are counted."""
        return self._add_special_tokens

    def count(self, text: str) -> int:
        """The number of tokens in ``text``."""
        require_text(self, text)
        try:
            encoding = self._tokenizer.encode(text, add_special_tokens=self._add_special_tokens)
        except TypeError:
            # Lone surrogates cannot cross into Rust; count them as U+FFFD, like tiktoken does.
            encoding = self._tokenizer.encode(
                _replace_surrogates(text), add_special_tokens=self._add_special_tokens
            )
        return len(encoding)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts of ``texts`` in order, encoded in parallel by ``tokenizers``."""
        batch = list(require_texts(self, texts))
        try:
            encodings = self._batch(batch, add_special_tokens=self._add_special_tokens)
        except TypeError:
            encodings = self._batch(
                [_replace_surrogates(text) for text in batch],
                add_special_tokens=self._add_special_tokens,
            )
        return [len(encoding) for encoding in encodings]

    def __repr__(self) -> str:
        special = ", add_special_tokens=True" if self._add_special_tokens else ""
        return f"HuggingFaceCounter({self._source}{special})"


def _import_tokenizers() -> Any:
    try:
        return importlib.import_module("tokenizers")
    except ImportError as exc:
        raise TokenizerError(_NAME, f"needs the 'tokenizers' package; {_INSTALL_HINT}") from exc


def _load_file(module: Any, path: Path) -> Any:
    if not path.is_file():
        raise TokenizerError(_NAME, f"tokenizer: no such file {str(path)!r}")
    try:
        return module.Tokenizer.from_file(str(path))
    except Exception as exc:  # the Rust side raises plain Exception for malformed files
        raise TokenizerError(
            _NAME, f"tokenizer: cannot load {str(path)!r} as a tokenizer.json: {exc}"
        ) from exc


def _without_truncation_or_padding(module: Any, tokenizer: Any) -> Any:
    if tokenizer.truncation is None and tokenizer.padding is None:
        return tokenizer
    copy = module.Tokenizer.from_str(tokenizer.to_str())
    copy.no_truncation()
    copy.no_padding()
    return copy


def _replace_surrogates(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
