"""Fixtures for the token-counting tests: tiny local tokenizers, and a network guard.

Nothing here downloads: the BPE ranks file and the tokenizer.json are built in the test's
temporary directory.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from token_fixtures import word_level_tokenizer, write_bpe_file


@pytest.fixture
def bpe_file(tmp_path: Path) -> Path:
    return write_bpe_file(tmp_path / "tiny.tiktoken")


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything tries to open a network connection or resolve a name."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.fixture
def empty_tiktoken_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point tiktoken's cache at an empty folder, so tests can check nothing was written."""
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    return cache


@pytest.fixture
def tokenizer_json(tmp_path: Path) -> Path:
    pytest.importorskip("tokenizers")
    path = tmp_path / "tokenizer.json"
    word_level_tokenizer().save(str(path))
    return path
