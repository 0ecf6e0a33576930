"""Calibration: how close a session's predicted prompt tokens come to the provider's count.

    python benchmarks/sessions/bench_calibration.py [--turns 150] [--budgets 1500,4000]

The session estimates with the dependency-free heuristic; the "provider" is a real byte-level
BPE tokenizer trained locally on the project's sample texts (nothing is downloaded), whose
counts differ from the heuristic as a provider's do. Each turn a generated conversation
(``tests/session/session_histories.py``) grows by one user message, the session fits it, the
window is counted with the tokenizer and that count is recorded as the usage. Reported per
budget over several seeds, for turns after the third recorded one: the share of turns
predicted within 2 % of the provider's count, the largest error, and the windows over the
budget in the provider's count.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "session"))

from session_histories import SAMPLES, chat_turns

from _harness import format_table, machine_summary
from pycupel.adapters import openai
from pycupel.tokens import HuggingFaceCounter

SYSTEM = {"role": "system", "content": "You are a patient assistant who keeps notes."}
SEEDS = (3, 5, 7, 11, 13)


def train_tokenizer(folder: Path) -> Path:
    import tokenizers  # an optional dependency, in the dev extra

    texts = [
        path.read_text(encoding="utf-8") for path in sorted(SAMPLES.rglob("*")) if path.is_file()
    ]
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE())
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=4_000, initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    path = folder / "tokenizer.json"
    tokenizer.save(str(path))
    return path


def replay(
    provider: HuggingFaceCounter, budget: int, seed: int, turns: int
) -> tuple[list[float], int]:
    session = openai.Session(budget=budget)
    history: list[dict[str, Any]] = [SYSTEM]
    errors: list[float] = []
    over = 0
    for turn, (user, assistant) in enumerate(chat_turns(turns, seed=seed)):
        history.append(user)
        window = session.fit(history)
        reported = openai.count_tokens(window.messages, counter=provider)
        over += reported > budget
        if turn >= 3:
            errors.append(abs(window.tokens - reported) / reported)
        session.record_usage({"prompt_tokens": reported})
        history.append(assistant)
    return errors, over


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=150)
    parser.add_argument("--budgets", default="1500,4000")
    args = parser.parse_args()
    print(machine_summary())
    with tempfile.TemporaryDirectory() as folder:
        provider = HuggingFaceCounter(train_tokenizer(Path(folder)))
        rows = []
        for budget in (int(b) for b in args.budgets.split(",")):
            errors: list[float] = []
            over = 0
            for seed in SEEDS:
                seed_errors, seed_over = replay(provider, budget, seed, args.turns)
                errors += seed_errors
                over += seed_over
            within = sum(error <= 0.02 for error in errors) / len(errors)
            rows.append(
                [f"{budget:,}", str(len(errors)), f"{within:.1%}", f"{max(errors):.1%}", str(over)]
            )
    print(
        format_table(
            ["budget", "turns", "within 2 %", "largest error", "over budget (provider count)"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
