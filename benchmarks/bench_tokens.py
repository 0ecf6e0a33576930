"""Token counting: heuristic accuracy against real BPE encodings, and counting speed.

Usage:
    python benchmarks/bench_tokens.py                 # accuracy + timing
    python benchmarks/bench_tokens.py --accuracy      # accuracy only
    python benchmarks/bench_tokens.py --timing        # timing only
    python benchmarks/bench_tokens.py --bpe o200k_base=/path/o200k_base.tiktoken
    python benchmarks/bench_tokens.py --record        # rewrite the recorded reference counts

Accuracy compares :class:`HeuristicCounter` with tiktoken's ``cl100k_base`` and ``o200k_base``
on the samples in ``tests/tokens/data/samples`` (prose, chat, code, JSON, Markdown, mixed
languages, non-Latin scripts, emoji), plus a hold-out of Python standard-library source that
the heuristic was not tuned on. A named encoding is used only when it is available without a
download: from ``--bpe NAME=PATH`` (a local ``.tiktoken`` file), or from tiktoken's own cache
(``TIKTOKEN_CACHE_DIR``). tiktoken is never allowed to download here; an encoding that is not
available locally is reported as such and skipped.

Timing counts 10,000 short chat-style messages with each available counter: per-item ``count``,
``count_batch``, and through a :class:`CachedCounter` cold (every text a miss) and warm (every
text a hit), plus ``items_from_texts``. The Hugging Face counter uses a small byte-level BPE
trained here on the samples (no download).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

from _harness import measure_one  # noqa: E402
from pycupel.errors import TokenizerError  # noqa: E402
from pycupel.tokens import (  # noqa: E402
    CL100K_PAT_STR,
    O200K_PAT_STR,
    CachedCounter,
    HeuristicCounter,
    HuggingFaceCounter,
    TiktokenCounter,
    TokenCounter,
    items_from_texts,
)

SAMPLES = ROOT / "tests" / "tokens" / "data" / "samples"
REFERENCE = ROOT / "tests" / "tokens" / "data" / "reference_counts.json"
ENCODINGS = {"cl100k_base": CL100K_PAT_STR, "o200k_base": O200K_PAT_STR}
HOLDOUT_MODULES = ["textwrap", "json.decoder", "fractions", "string", "calendar"]


# --------------------------------------------------------------------------- loading


@contextmanager
def tiktoken_offline() -> Iterator[None]:
    """Make tiktoken fail instead of downloading: only its cache (or local paths) can serve."""
    import tiktoken.load

    original = tiktoken.load.read_file

    def refuse_remote(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise ConnectionError("download refused: the benchmark only uses local files")
        return original(blobpath)

    tiktoken.load.read_file = refuse_remote
    try:
        yield
    finally:
        tiktoken.load.read_file = original


def load_encodings(bpe_files: dict[str, str]) -> dict[str, TiktokenCounter]:
    """The reference encodings available without a download, by name."""
    available: dict[str, TiktokenCounter] = {}
    for name, pattern in ENCODINGS.items():
        if name in bpe_files:
            available[name] = TiktokenCounter(bpe_file=bpe_files[name], pat_str=pattern)
            print(f"  {name}: from {bpe_files[name]}")
            continue
        try:
            with tiktoken_offline():
                available[name] = TiktokenCounter(name)
            print(f"  {name}: from tiktoken's local cache")
        except TokenizerError:
            print(
                f"  {name}: NOT available locally (not in tiktoken's cache; tiktoken would "
                f"download it). Pass --bpe {name}=PATH or warm TIKTOKEN_CACHE_DIR. Skipped."
            )
    return available


def load_samples() -> dict[str, tuple[str, str]]:
    """Sample id (path relative to the samples folder) -> (category, text)."""
    samples: dict[str, tuple[str, str]] = {}
    for path in sorted(SAMPLES.rglob("*")):
        if path.is_file():
            key = path.relative_to(SAMPLES).as_posix()
            samples[key] = (path.parent.name, path.read_text(encoding="utf-8"))
    return samples


def load_holdout() -> dict[str, tuple[str, str]]:
    import importlib

    holdout: dict[str, tuple[str, str]] = {}
    for module_name in HOLDOUT_MODULES:
        module = importlib.import_module(module_name)
        source = Path(str(module.__file__)).read_text(encoding="utf-8")
        holdout[f"stdlib/{module_name}"] = ("holdout: stdlib source", source)
    return holdout


# --------------------------------------------------------------------------- accuracy


def accuracy(encodings: dict[str, TiktokenCounter]) -> None:
    heuristic = HeuristicCounter()
    samples = load_samples() | load_holdout()
    print(f"\nHeuristicCounter vs BPE encodings ({len(samples)} texts)")
    if not encodings:
        print("  no reference encoding available; nothing to compare against")
        return
    names = list(encodings)
    header = f"  {'category':24} {'texts':>5} {'heuristic':>9}"
    for name in names:
        header += f" | {name:>11} {'total err':>9} {'mean|err|':>9} {'max|err|':>8}"
    print(header)
    by_category: dict[str, list[tuple[int, list[int]]]] = {}
    for category, text in samples.values():
        estimate = heuristic.count(text)
        exact = [encodings[name].count(text) for name in names]
        by_category.setdefault(category, []).append((estimate, exact))
    for category, rows in sorted(by_category.items()):
        total = sum(estimate for estimate, _ in rows)
        line = f"  {category:24} {len(rows):>5} {total:>9}"
        for index in range(len(names)):
            exact_total = sum(exact[index] for _, exact in rows)
            errors = [estimate / exact[index] - 1 for estimate, exact in rows if exact[index]]
            mean_abs = statistics.mean(abs(e) for e in errors)
            worst = max(abs(e) for e in errors)
            line += (
                f" | {exact_total:>11} {total / exact_total - 1:>+9.1%} {mean_abs:>9.1%} "
                f"{worst:>8.1%}"
            )
        print(line)
    print(
        "  total err: sum of estimates vs sum of exact counts; mean|err| and max|err|: "
        "per-text relative error"
    )


def record(encodings: dict[str, TiktokenCounter]) -> None:
    missing = sorted(set(ENCODINGS) - set(encodings))
    if missing:
        raise SystemExit(f"--record needs every reference encoding; missing: {missing}")
    samples = load_samples()
    document: dict[str, Any] = {
        "description": (
            "Exact token counts (tiktoken encode_ordinary) of each file under samples/, "
            "written by benchmarks/bench_tokens.py --record; the heuristic's accuracy test "
            "compares against them. sha256 identifies the sample contents they were taken from."
        ),
        "sha256": {
            key: hashlib.sha256(text.encode("utf-8")).hexdigest()
            for key, (_, text) in samples.items()
        },
        "encodings": {
            name: {key: counter.count(text) for key, (_, text) in samples.items()}
            for name, counter in sorted(encodings.items())
        },
    }
    REFERENCE.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(f"\nwrote {REFERENCE.relative_to(ROOT)} ({len(samples)} samples)")


# --------------------------------------------------------------------------- timing


def make_messages(count: int, seed: int = 7) -> list[str]:
    """Deterministic short chat-style messages, all distinct (a few words to a few sentences)."""
    rng = random.Random(seed)
    words: list[str] = []
    for category, text in load_samples().values():
        if category in ("prose", "chat"):
            words.extend(text.split())
    messages = []
    for index in range(count):
        length = rng.randint(4, 60)
        start = rng.randrange(0, len(words) - length)
        messages.append(f"[{index}] " + " ".join(words[start : start + length]))
    return messages


def small_hf_counter() -> HuggingFaceCounter | None:
    try:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    except ImportError:
        print("  tokenizers not installed; HuggingFaceCounter skipped")
        return None
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=4000,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    corpus = [text for _, text in load_samples().values()] * 4
    tokenizer.train_from_iterator(corpus, trainer=trainer)
    return HuggingFaceCounter(tokenizer)


def best_of(runs: int, function: Callable[[], object]) -> float:
    """The fastest of ``runs`` runs, in seconds (no warm-up: the first run is a real one)."""
    return measure_one(function, runs, warmup=0).min_ms / 1000.0


def timing(encodings: dict[str, TiktokenCounter], message_count: int, runs: int) -> None:
    messages = make_messages(message_count)
    chars = sum(map(len, messages))
    print(
        f"\nCounting {len(messages):,} short messages ({chars / len(messages):.0f} characters "
        f"on average); best of {runs} runs, milliseconds"
    )
    counters: list[TokenCounter] = [HeuristicCounter(), *encodings.values()]
    hf = small_hf_counter()
    if hf is not None:
        counters.append(hf)
    print(
        f"  {'counter':44} {'count()':>9} {'batch':>9} {'cold cache':>10} {'warm cache':>10} "
        f"{'items':>9}"
    )
    for counter in counters:
        loop = best_of(runs, lambda c=counter: [c.count(m) for m in messages])  # type: ignore[misc]
        batch = best_of(runs, lambda c=counter: c.count_batch(messages))  # type: ignore[misc]
        cold = math.inf
        warm = math.inf
        for _ in range(runs):
            cached = CachedCounter(counter, max_entries=2 * len(messages))
            start = time.perf_counter()
            cached.count_batch(messages)
            cold = min(cold, time.perf_counter() - start)
            start = time.perf_counter()
            cached.count_batch(messages)
            warm = min(warm, time.perf_counter() - start)
            assert cached.hits == cached.misses == len(messages)
        items = best_of(runs, lambda c=counter: items_from_texts(messages, counter=c))  # type: ignore[misc]
        label = repr(counter)[:44]
        print(
            f"  {label:44} {loop * 1e3:>9.1f} {batch * 1e3:>9.1f} {cold * 1e3:>10.1f} "
            f"{warm * 1e3:>10.1f} {items * 1e3:>9.1f}"
        )
    cached_loop = CachedCounter(HeuristicCounter(), max_entries=2 * len(messages))
    for message in messages:
        cached_loop.count(message)
    warm_loop = best_of(runs, lambda: [cached_loop.count(m) for m in messages])
    print(f"  CachedCounter(HeuristicCounter()) warm, per-item count(): {warm_loop * 1e3:.1f} ms")


def parse_bpe(values: Sequence[str]) -> dict[str, str]:
    files: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or name not in ENCODINGS:
            raise SystemExit(f"--bpe expects NAME=PATH with NAME in {sorted(ENCODINGS)}")
        files[name] = path
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--accuracy", action="store_true", help="only the accuracy comparison")
    parser.add_argument("--timing", action="store_true", help="only the timing")
    parser.add_argument("--record", action="store_true", help="rewrite the reference counts")
    parser.add_argument("--bpe", action="append", default=[], help="NAME=PATH of a .tiktoken")
    parser.add_argument("--messages", type=int, default=10_000, help="messages to time")
    parser.add_argument("--runs", type=int, default=3, help="repetitions (best is reported)")
    args = parser.parse_args()
    both = not (args.accuracy or args.timing)
    print("Reference encodings:")
    encodings = load_encodings(parse_bpe(args.bpe))
    if args.record:
        record(encodings)
    if args.accuracy or both:
        accuracy(encodings)
    if args.timing or both:
        timing(encodings, args.messages, args.runs)


if __name__ == "__main__":
    main()
