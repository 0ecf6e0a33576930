"""Exact token counts with OpenAI's ``tiktoken``.

Optional extra: ``pip install 'pycupel[tiktoken]'``.

Three ways to pick the encoding:

* ``TiktokenCounter("o200k_base")`` -- a named encoding;
* ``TiktokenCounter(model="gpt-4o")`` -- the encoding tiktoken associates with a model;
* ``TiktokenCounter(bpe_file="ranks.tiktoken")`` -- a BPE ranks file on disk (lines of
  ``base64(token_bytes) rank``), read by pycupel itself: nothing touches the network or
  tiktoken's cache.

Named encodings (and model names) are resolved by tiktoken, which **downloads the BPE file the
first time an encoding is used** and caches it (in ``$TIKTOKEN_CACHE_DIR``, or a
``data-gym-cache`` folder in the system temporary directory). On machines without network
access, point ``TIKTOKEN_CACHE_DIR`` at a folder that already holds the cached files, or load the
``.tiktoken`` file directly with ``bpe_file=`` and the matching ``pat_str``
(:data:`O200K_PAT_STR` or :data:`CL100K_PAT_STR`).

Special tokens: by default text is encoded with ``encode_ordinary``, so a string such as
``"<|endoftext|>"`` inside an item counts as the ordinary text it is (several tokens), which is
what a chat API does with user content. Pass ``allowed_special`` (names, or ``"all"``) to count
those strings as the single special tokens instead.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from pycupel.errors import TokenizerError
from pycupel.tokens.base import BaseTokenCounter, require_text, require_texts

if TYPE_CHECKING:
    import tiktoken

__all__ = ["CL100K_PAT_STR", "O200K_PAT_STR", "TiktokenCounter", "load_bpe_ranks"]

_NAME: Final = "TiktokenCounter"
_INSTALL_HINT: Final = "install it with pip install 'pycupel[tiktoken]'"

CL100K_PAT_STR: Final = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
"""The pre-tokenizer pattern of ``cl100k_base`` (GPT-4, GPT-3.5 Turbo, text-embedding-3)."""

O200K_PAT_STR: Final = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
"""The pre-tokenizer pattern of ``o200k_base`` (GPT-4o, GPT-4.1, o-series); the default for
``bpe_file``."""

# tiktoken's batch API hands every text to a thread pool, which costs more than encoding a
# short text (measured: ~6x slower than a loop for chat-sized messages). Only batches of long
# texts, averaging at least this many characters, are encoded in parallel.
_PARALLEL_MIN_AVERAGE_CHARS: Final = 8192

AllowedSpecial = Literal["all"] | Collection[str]


class TiktokenCounter(BaseTokenCounter):
    """Count tokens with a tiktoken encoding.

    Give exactly one of ``encoding``, ``model`` or ``bpe_file``.

    Args:
        encoding: an encoding name (``"o200k_base"``, ``"cl100k_base"``...; may download on
            first use, see the module documentation) or an existing ``tiktoken.Encoding``.
        model: a model name tiktoken knows (``"gpt-4o"``, ``"gpt-4"``...); may download too.
        bpe_file: path of a local BPE ranks file (``base64(token_bytes) rank`` per line). It
            must contain all 256 single bytes. Read directly; never touches the network.
        pat_str: the pre-tokenizer regex for ``bpe_file`` (default :data:`O200K_PAT_STR`).
        special_tokens: special-token strings and their ids for ``bpe_file`` (default none).
        allowed_special: special tokens to count as single tokens (names, or ``"all"``). By
            default none: every string is counted as ordinary text.
        num_threads: threads ``count_batch`` uses for batches of long texts (tiktoken releases the
            GIL while encoding).

    Raises:
        TokenizerError: tiktoken is not installed, the encoding or model is unknown or cannot
            be loaded, the BPE file is unreadable or malformed, or an argument is invalid.

    Example:
        >>> counter = TiktokenCounter("o200k_base")  # doctest: +SKIP
        >>> counter.count("hello world")  # doctest: +SKIP
        2
        >>> TiktokenCounter(model="gpt-4o").encoding_name  # doctest: +SKIP
        'o200k_base'
    """

    __slots__ = ("_allowed", "_allowed_all", "_encoding", "_num_threads", "_source")

    def __init__(
        self,
        encoding: str | tiktoken.Encoding | None = None,
        *,
        model: str | None = None,
        bpe_file: str | os.PathLike[str] | None = None,
        pat_str: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
        allowed_special: AllowedSpecial = (),
        num_threads: int = 8,
    ) -> None:
        module = _import_tiktoken()
        given = [
            name
            for name, value in (("encoding", encoding), ("model", model), ("bpe_file", bpe_file))
            if value is not None
        ]
        if len(given) != 1:
            raise TokenizerError(
                _NAME,
                "give exactly one of encoding=, model= or bpe_file=, got "
                + (", ".join(given) if given else "none"),
            )
        if bpe_file is None and (pat_str is not None or special_tokens is not None):
            raise TokenizerError(
                _NAME,
                "pat_str and special_tokens apply only to bpe_file=; a named encoding "
                "already defines them",
            )
        if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
            raise TokenizerError(
                _NAME, f"num_threads: must be an integer >= 1, got {num_threads!r}"
            )

        enc: tiktoken.Encoding
        if encoding is not None:
            enc, source = _from_encoding(module, encoding)
        elif model is not None:
            enc, source = _from_model(module, model)
        else:
            assert bpe_file is not None
            enc, source = _from_bpe_file(module, bpe_file, pat_str, special_tokens)

        self._encoding = enc
        self._source = source
        self._allowed = _check_allowed_special(enc, allowed_special)
        self._allowed_all = isinstance(allowed_special, str) and allowed_special == "all"
        self._num_threads = num_threads

    @property
    def encoding(self) -> tiktoken.Encoding:
        """The underlying ``tiktoken.Encoding``."""
        return self._encoding

    @property
    def encoding_name(self) -> str:
        """The encoding's name (for ``bpe_file``: the file name without its extension)."""
        name: str = self._encoding.name
        return name

    @property
    def allowed_special(self) -> frozenset[str]:
        """The special tokens counted as single tokens (empty: all text is ordinary)."""
        return self._allowed

    def count(self, text: str) -> int:
        """The number of tokens in ``text``."""
        return self._count_valid(require_text(self, text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts of ``texts`` in order.

        Batches of long texts (several, averaging 8,192 characters or more) are encoded in
        parallel with tiktoken's batch API; shorter ones in a loop, which is faster for them.
        """
        batch = list(require_texts(self, texts))
        parallel_from = _PARALLEL_MIN_AVERAGE_CHARS * max(2, len(batch))
        if self._num_threads == 1 or sum(map(len, batch)) < parallel_from:
            count = self._count_valid
            return [count(text) for text in batch]
        if self._allowed:
            encoded = self._encoding.encode_batch(
                batch,
                num_threads=self._num_threads,
                allowed_special=self._allowed,
                disallowed_special=(),
            )
        else:
            encoded = self._encoding.encode_ordinary_batch(batch, num_threads=self._num_threads)
        return [len(tokens) for tokens in encoded]

    def _count_valid(self, text: str) -> int:
        if self._allowed:
            tokens = self._encoding.encode(
                text, allowed_special=self._allowed, disallowed_special=()
            )
        else:
            tokens = self._encoding.encode_ordinary(text)
        return len(tokens)

    def __repr__(self) -> str:
        parts = [self._source]
        if self._allowed_all:
            parts.append("allowed_special='all'")
        elif self._allowed:
            parts.append(f"allowed_special={sorted(self._allowed)!r}")
        return f"TiktokenCounter({', '.join(parts)})"


def load_bpe_ranks(path: str | os.PathLike[str]) -> dict[bytes, int]:
    """Read a tiktoken BPE ranks file: one ``base64(token_bytes) rank`` pair per line.

    The file is read from disk only (no network, no cache). Every problem raises
    :class:`TokenizerError` naming the file and the line: a line without exactly two fields,
    invalid base64, a rank that is not a non-negative integer, a token or rank listed twice,
    or a missing single byte (BPE needs all 256 to encode arbitrary text).

    Example:
        >>> import tempfile, base64, os
        >>> lines = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]
        >>> lines.append(f"{base64.b64encode(b'ab').decode()} 256")
        >>> with tempfile.NamedTemporaryFile("w", suffix=".tiktoken", delete=False) as f:
        ...     _ = f.write("\\n".join(lines))
        >>> ranks = load_bpe_ranks(f.name)
        >>> len(ranks), ranks[b"ab"]
        (257, 256)
        >>> os.remove(f.name)
    """
    file = Path(path)
    try:
        contents = file.read_bytes()
    except OSError as exc:
        raise TokenizerError(
            _NAME, f"bpe_file: cannot read {str(file)!r}: {exc.strerror or exc}"
        ) from exc

    ranks: dict[bytes, int] = {}
    seen_ranks: dict[int, int] = {}
    for number, line in enumerate(contents.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"bpe_file {str(file)!r}, line {number}"
        fields = line.split()
        if len(fields) != 2:
            raise TokenizerError(
                _NAME, f"{where}: expected 'base64_token rank', got {_clip(line)!r}"
            )
        encoded, rank_text = fields
        try:
            token = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise TokenizerError(
                _NAME, f"{where}: invalid base64 token {_clip(encoded)!r}"
            ) from exc
        if not token:
            raise TokenizerError(_NAME, f"{where}: the token is empty")
        if not rank_text.isdigit():
            raise TokenizerError(
                _NAME, f"{where}: rank must be an integer >= 0, got {_clip(rank_text)!r}"
            )
        rank = int(rank_text)
        if token in ranks:
            raise TokenizerError(_NAME, f"{where}: token {token!r} is listed twice")
        if rank in seen_ranks:
            raise TokenizerError(
                _NAME, f"{where}: rank {rank} is already used on line {seen_ranks[rank]}"
            )
        ranks[token] = rank
        seen_ranks[rank] = number

    missing = [byte for byte in range(256) if bytes([byte]) not in ranks]
    if missing:
        shown = ", ".join(f"0x{byte:02x}" for byte in missing[:8])
        more = f" and {len(missing) - 8} more" if len(missing) > 8 else ""
        raise TokenizerError(
            _NAME,
            f"bpe_file {str(file)!r}: missing single-byte tokens {shown}{more}; a BPE ranks "
            f"file must contain all 256 single bytes",
        )
    return ranks


# --------------------------------------------------------------------------- helpers


def _import_tiktoken() -> Any:
    try:
        return importlib.import_module("tiktoken")
    except ImportError as exc:
        raise TokenizerError(_NAME, f"needs the 'tiktoken' package; {_INSTALL_HINT}") from exc


def _from_encoding(tiktoken: Any, encoding: object) -> tuple[Any, str]:
    if isinstance(encoding, tiktoken.Encoding):
        return encoding, f"encoding={encoding.name!r}"
    if not isinstance(encoding, str) or not encoding.strip():
        raise TokenizerError(
            _NAME,
            f"encoding: must be an encoding name or a tiktoken.Encoding, got {encoding!r}",
        )
    if encoding not in tiktoken.list_encoding_names():
        known = ", ".join(sorted(tiktoken.list_encoding_names()))
        raise TokenizerError(_NAME, f"encoding: unknown encoding {encoding!r}; known: {known}")
    return _load_named(tiktoken, encoding, f"encoding {encoding!r}"), f"encoding={encoding!r}"


def _from_model(tiktoken: Any, model: object) -> tuple[Any, str]:
    if not isinstance(model, str) or not model.strip():
        raise TokenizerError(_NAME, f"model: must be a model name, got {model!r}")
    try:
        name = tiktoken.encoding_name_for_model(model)
    except KeyError as exc:
        raise TokenizerError(
            _NAME,
            f"model: tiktoken does not know the model {model!r}; pass encoding= instead "
            f"(e.g. 'o200k_base')",
        ) from exc
    enc = _load_named(tiktoken, name, f"encoding {name!r} for model {model!r}")
    return enc, f"model={model!r}"


def _load_named(tiktoken: Any, name: str, what: str) -> Any:
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # network, cache or hash failures surface as various types
        raise TokenizerError(
            _NAME,
            f"cannot load {what}: {type(exc).__name__}: {exc}. tiktoken downloads each "
            f"encoding on first use and caches it (TIKTOKEN_CACHE_DIR); without network "
            f"access, use a cached copy or bpe_file=",
        ) from exc


def _from_bpe_file(
    tiktoken: Any,
    bpe_file: str | os.PathLike[str],
    pat_str: str | None,
    special_tokens: Mapping[str, int] | None,
) -> tuple[Any, str]:
    if not isinstance(bpe_file, str | os.PathLike):
        raise TokenizerError(_NAME, f"bpe_file: must be a path, got {bpe_file!r}")
    pattern = O200K_PAT_STR if pat_str is None else pat_str
    if not isinstance(pattern, str) or not pattern:
        raise TokenizerError(_NAME, f"pat_str: must be a non-empty regex string, got {pattern!r}")
    ranks = load_bpe_ranks(bpe_file)
    specials = _check_special_tokens(special_tokens, ranks)
    path = Path(bpe_file)
    try:
        enc = tiktoken.Encoding(
            path.stem or "bpe_file",
            pat_str=pattern,
            mergeable_ranks=ranks,
            special_tokens=specials,
        )
    except ValueError as exc:  # tiktoken rejects a pattern it cannot compile
        raise TokenizerError(_NAME, f"pat_str: cannot be used by tiktoken: {exc}") from exc
    return enc, f"bpe_file={str(path)!r}"


def _check_special_tokens(
    special_tokens: Mapping[str, int] | None, ranks: Mapping[bytes, int]
) -> dict[str, int]:
    if special_tokens is None:
        return {}
    if not isinstance(special_tokens, Mapping):
        raise TokenizerError(
            _NAME, f"special_tokens: must be a mapping of str to int, got {special_tokens!r}"
        )
    used = set(ranks.values())
    result: dict[str, int] = {}
    for name, token_id in special_tokens.items():
        if not isinstance(name, str) or not name:
            raise TokenizerError(
                _NAME, f"special_tokens: names must be non-empty strings, got {name!r}"
            )
        if isinstance(token_id, bool) or not isinstance(token_id, int) or token_id < 0:
            raise TokenizerError(
                _NAME, f"special_tokens[{name!r}]: must be an integer >= 0, got {token_id!r}"
            )
        if token_id in used:
            raise TokenizerError(
                _NAME,
                f"special_tokens[{name!r}]: id {token_id} is already used by a BPE token "
                f"or another special token",
            )
        used.add(token_id)
        result[name] = token_id
    return result


def _check_allowed_special(enc: Any, allowed: object) -> frozenset[str]:
    known: frozenset[str] = frozenset(enc.special_tokens_set)
    if allowed == "all":
        return known
    if isinstance(allowed, str | bytes) or not isinstance(allowed, Collection):
        raise TokenizerError(
            _NAME,
            f"allowed_special: must be 'all' or a collection of special-token names, "
            f"got {allowed!r}",
        )
    names = frozenset(allowed)
    unknown = sorted(str(name) for name in names - known)
    if unknown:
        listed = ", ".join(sorted(known)) or "none"
        raise TokenizerError(
            _NAME,
            f"allowed_special: {unknown!r} are not special tokens of encoding "
            f"{enc.name!r} (it has: {listed})",
        )
    return names


def _clip(value: bytes | str, limit: int = 40) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    return text if len(text) <= limit else text[: limit - 3] + "..."
