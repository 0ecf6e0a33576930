"""TiktokenCounter: local BPE files (no network), special tokens, batch, errors."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import pytest
from token_fixtures import write_bpe_file

from pycupel.errors import TokenizerError
from pycupel.tokens import (
    CL100K_PAT_STR,
    O200K_PAT_STR,
    TiktokenCounter,
    TokenCounter,
    load_bpe_ranks,
)

pytest.importorskip("tiktoken")


@pytest.mark.usefixtures("no_network")
def test_bpe_file_counts_with_the_merges(bpe_file: Path, empty_tiktoken_cache: Path) -> None:
    counter = TiktokenCounter(bpe_file=bpe_file)
    # "hello" and " world" merge fully; the pattern splits "hello world" into exactly those.
    assert counter.count("hello world") == 2
    assert counter.count("hello") == 1
    # No merge covers these: one token per byte.
    assert counter.count("xyz") == 3
    assert counter.count("é") == len("é".encode())
    # " hello" has no merged form with the space: " " + "hello".
    assert counter.count("hello hello") == 3
    assert counter.count("") == 0
    # Reading the file neither touched the network (fixture) nor tiktoken's download cache.
    assert list(empty_tiktoken_cache.iterdir()) == []


def test_bpe_file_is_a_token_counter(bpe_file: Path) -> None:
    counter = TiktokenCounter(bpe_file=bpe_file)
    assert isinstance(counter, TokenCounter)
    assert counter.encoding_name == "tiny"
    assert counter.allowed_special == frozenset()
    assert repr(counter) == f"TiktokenCounter(bpe_file={str(bpe_file)!r})"


def test_pat_str_changes_the_split(bpe_file: Path) -> None:
    # Splitting into single characters leaves no piece a merge could apply to.
    per_char = TiktokenCounter(bpe_file=bpe_file, pat_str=r"[\s\S]")
    assert per_char.count("hello world") == len("hello world")
    cl100k_style = TiktokenCounter(bpe_file=bpe_file, pat_str=CL100K_PAT_STR)
    assert cl100k_style.count("hello world") == 2


def test_default_pat_str_is_o200k(bpe_file: Path) -> None:
    explicit = TiktokenCounter(bpe_file=bpe_file, pat_str=O200K_PAT_STR)
    default = TiktokenCounter(bpe_file=bpe_file)
    texts = ["hello world", "Hello World's end", "a\n\n  b  ", "x/y\n", "12345 hello"]
    assert default.count_batch(texts) == explicit.count_batch(texts)


def test_special_tokens_are_text_unless_allowed(bpe_file: Path) -> None:
    specials = {"<|end|>": 300, "<|tool|>": 301}
    ordinary = TiktokenCounter(bpe_file=bpe_file, special_tokens=specials)
    # Encoded as ordinary text: the seven bytes of "<|end|>" have no merges.
    assert ordinary.count("hello<|end|>") == 1 + len(b"<|end|>")
    allowed = TiktokenCounter(
        bpe_file=bpe_file, special_tokens=specials, allowed_special={"<|end|>"}
    )
    assert allowed.count("hello<|end|>") == 2
    # A special token that is not allowed is still counted as text (never an error).
    assert allowed.count("<|tool|>") == len(b"<|tool|>")
    everything = TiktokenCounter(bpe_file=bpe_file, special_tokens=specials, allowed_special="all")
    assert everything.count("<|tool|><|end|>") == 2
    assert everything.allowed_special == frozenset(specials)
    assert "allowed_special='all'" in repr(everything)
    assert everything.count_batch(["<|tool|>", "hello"] * 3) == [1, 1] * 3


def test_unknown_allowed_special_is_rejected(bpe_file: Path) -> None:
    with pytest.raises(TokenizerError, match=r"allowed_special: \['<\|nope\|>'\] are not special"):
        TiktokenCounter(bpe_file=bpe_file, allowed_special={"<|nope|>"})
    with pytest.raises(TokenizerError, match="allowed_special: must be 'all' or a collection"):
        TiktokenCounter(bpe_file=bpe_file, allowed_special="<|end|>")


def test_batch_equals_per_item_on_both_paths(bpe_file: Path) -> None:
    short = ["hello world", "", "xyz", "hello hello world", "é🎉"] * 5
    long = ["hello world " * 2000, "lorem ipsum " * 1500, "x" * 9000]
    for num_threads in (1, 2):
        counter = TiktokenCounter(bpe_file=bpe_file, num_threads=num_threads)
        for texts in (short, long):
            assert counter.count_batch(texts) == [counter.count(t) for t in texts]
    specials = TiktokenCounter(
        bpe_file=bpe_file, special_tokens={"<|end|>": 300}, allowed_special="all", num_threads=2
    )
    long_special = ["hello<|end|>" * 1000, "<|end|> world" * 1000]
    assert specials.count_batch(long_special) == [specials.count(t) for t in long_special]


def test_existing_encoding_object(bpe_file: Path) -> None:
    import tiktoken

    ranks = load_bpe_ranks(bpe_file)
    encoding = tiktoken.Encoding(
        "mine", pat_str=O200K_PAT_STR, mergeable_ranks=ranks, special_tokens={}
    )
    counter = TiktokenCounter(encoding)
    assert counter.encoding is encoding
    assert counter.count("hello world") == 2
    assert repr(counter) == "TiktokenCounter(encoding='mine')"


def test_load_bpe_ranks_reads_the_file(bpe_file: Path) -> None:
    ranks = load_bpe_ranks(bpe_file)
    assert len(ranks) == 256 + 9
    assert ranks[b"hello"] == 259
    assert ranks[b"\x00"] == 0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("aGk=", "expected 'base64_token rank'"),
        ("aGk= 300 extra", "expected 'base64_token rank'"),
        ("!!!! 300", "invalid base64 token '!!!!'"),
        ("aGk= -1", "rank must be an integer >= 0, got '-1'"),
        ("aGk= x", "rank must be an integer >= 0, got 'x'"),
        ("AA== 300", r"token b'\\x00' is listed twice"),
        ("aGk= 5", "rank 5 is already used on line 6"),
    ],
)
def test_malformed_bpe_lines_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    path = write_bpe_file(tmp_path / "bad.tiktoken", merges=())
    path.write_text(path.read_text() + line + "\n")
    with pytest.raises(TokenizerError, match=message) as info:
        TiktokenCounter(bpe_file=path)
    assert "line 257" in str(info.value)
    assert str(path) in str(info.value)


def test_bpe_file_must_cover_every_byte(tmp_path: Path) -> None:
    path = tmp_path / "partial.tiktoken"
    path.write_text(
        "\n".join(f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(250)) + "\n"
    )
    with pytest.raises(TokenizerError, match=r"missing single-byte tokens 0xfa, 0xfb, .*0xff"):
        load_bpe_ranks(path)


def test_missing_bpe_file(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match=r"bpe_file: cannot read .*nope\.tiktoken"):
        TiktokenCounter(bpe_file=tmp_path / "nope.tiktoken")


def test_bad_pattern_is_reported(bpe_file: Path) -> None:
    with pytest.raises(TokenizerError, match="pat_str: cannot be used by tiktoken"):
        TiktokenCounter(bpe_file=bpe_file, pat_str="(")
    with pytest.raises(TokenizerError, match="pat_str: must be a non-empty regex"):
        TiktokenCounter(bpe_file=bpe_file, pat_str="")


@pytest.mark.parametrize(
    ("specials", "message"),
    [
        ({"<|a|>": 5}, r"special_tokens\['<\|a\|>'\]: id 5 is already used"),
        ({"<|a|>": 300, "<|b|>": 300}, r"special_tokens\['<\|b\|>'\]: id 300 is already used"),
        ({"<|a|>": -1}, r"special_tokens\['<\|a\|>'\]: must be an integer >= 0, got -1"),
        ({"<|a|>": True}, r"must be an integer >= 0, got True"),
        ({"": 300}, "names must be non-empty strings"),
    ],
)
def test_bad_special_tokens(bpe_file: Path, specials: dict[str, int], message: str) -> None:
    with pytest.raises(TokenizerError, match=message):
        TiktokenCounter(bpe_file=bpe_file, special_tokens=specials)


@pytest.mark.usefixtures("no_network")
def test_choosing_the_source(bpe_file: Path) -> None:
    with pytest.raises(TokenizerError, match=r"give exactly one of .* got none"):
        TiktokenCounter()
    with pytest.raises(TokenizerError, match="got encoding, bpe_file"):
        TiktokenCounter("o200k_base", bpe_file=bpe_file)
    with pytest.raises(TokenizerError, match="pat_str and special_tokens apply only to bpe_file"):
        TiktokenCounter("o200k_base", pat_str=O200K_PAT_STR)
    # Unknown names are rejected before anything is loaded or downloaded.
    with pytest.raises(TokenizerError, match=r"unknown encoding 'no_such_base'; known: .*o200k"):
        TiktokenCounter("no_such_base")
    with pytest.raises(TokenizerError, match="does not know the model 'no-such-model'"):
        TiktokenCounter(model="no-such-model")
    with pytest.raises(TokenizerError, match="encoding: must be an encoding name"):
        TiktokenCounter(42)  # type: ignore[arg-type]
    with pytest.raises(TokenizerError, match="num_threads: must be an integer >= 1, got 0"):
        TiktokenCounter(bpe_file=bpe_file, num_threads=0)


def test_a_failed_download_explains_the_cache(
    monkeypatch: pytest.MonkeyPatch, empty_tiktoken_cache: Path
) -> None:
    import tiktoken.load

    def offline(blobpath: str) -> bytes:
        raise ConnectionError(f"no route to {blobpath}")

    monkeypatch.setattr(tiktoken.load, "read_file", offline)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    with pytest.raises(TokenizerError, match=r"cannot load encoding 'cl100k_base'.*TIKTOKEN_CACHE"):
        TiktokenCounter("cl100k_base")
    with pytest.raises(
        TokenizerError, match=r"cannot load encoding 'o200k_base' for model 'gpt-4o'"
    ):
        TiktokenCounter(model="gpt-4o")


def test_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    with pytest.raises(TokenizerError) as info:
        TiktokenCounter("o200k_base")
    assert "pip install 'pycupel[tiktoken]'" in str(info.value)
    assert info.value.counter == "TiktokenCounter"


def test_invalid_texts(bpe_file: Path) -> None:
    counter = TiktokenCounter(bpe_file=bpe_file)
    with pytest.raises(TokenizerError, match=r"text: must be a string, got b'x' \(bytes\)"):
        counter.count(b"x")  # type: ignore[arg-type]
    with pytest.raises(TokenizerError, match="texts: must be a sequence of strings"):
        counter.count_batch("hello")
    with pytest.raises(TokenizerError, match=r"texts\[1\]: must be a string, got None"):
        counter.count_batch(["a", None])  # type: ignore[list-item]


def test_lone_surrogates_are_counted(bpe_file: Path) -> None:
    counter = TiktokenCounter(bpe_file=bpe_file)
    assert counter.count("a\ud800b") >= 2
