"""Fixtures for the session tests: a real BPE tokenizer trained locally, nothing downloaded."""

from __future__ import annotations

from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent.parent / "tokens" / "data" / "samples"


@pytest.fixture(scope="session")
def trained_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level BPE tokenizer (tokenizer.json) trained on the project's sample texts.

    It plays the provider in the calibration tests: a real tokenizer whose counts differ
    from the heuristic estimate the sessions use, as a provider's do.
    """
    tokenizers = pytest.importorskip("tokenizers")
    texts = [
        path.read_text(encoding="utf-8") for path in sorted(SAMPLES.rglob("*")) if path.is_file()
    ]
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE())
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=4_000, initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    tokenizer.save(str(path))
    return path
