"""A default fit of agent histories with long tool outputs, against an earlier version.

    python benchmarks/bench_large_outputs.py --before 92bc2fe [--cases 5] [--seed 9]
        [--shares 0.02 0.05 0.15 0.6]

The histories are the quality benchmark's (``agent_large_a`` and ``agent_large_b``, about 120k
tokens each, their tool outputs logs, JSON, code, tables and prose); each is fitted with
``openai.fit_messages`` at each share of its own token count. The earlier version is loaded
beside the current code (``_before.py``) and the two fits of each history take turns, twice,
so that the machine's load hits both alike: the ratio of their median CPU times is what the
figures compare.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE / "quality"), str(HERE)]

import agent_large_a  # noqa: E402
import agent_large_b  # noqa: E402

from _before import load_before  # noqa: E402
from pycupel.adapters import openai  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="git revision to compare with")
    parser.add_argument("--cases", type=int, default=5, help="histories per generator")
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--shares", type=float, nargs="+", default=[0.02, 0.05, 0.15, 0.6])
    args = parser.parse_args()
    load_before(args.before)
    earlier: Any = importlib.import_module("pycupel_before.adapters.openai")
    cases = [
        *agent_large_a.large_output_cases(args.cases, seed=args.seed),
        *agent_large_b.large_output_cases(args.cases, seed=args.seed),
    ]
    for case in cases[:2]:  # warm both versions (imports, the stemmer, the tokenizer)
        openai.fit_messages(case.messages, budget=5_000)
        earlier.fit_messages(case.messages, budget=5_000)
    print("share  now ms  before ms  now / before")
    for share in args.shares:
        now: list[float] = []
        then: list[float] = []
        for case in cases:
            budget = int(openai.count_tokens(case.messages) * share)
            for _ in range(2):
                started = time.process_time()
                openai.fit_messages(case.messages, budget=budget)
                now.append(time.process_time() - started)
                started = time.process_time()
                earlier.fit_messages(case.messages, budget=budget)
                then.append(time.process_time() - started)
        mine, theirs = statistics.median(now), statistics.median(then)
        print(f"{share:5}  {mine * 1000:6.0f}  {theirs * 1000:9.0f}  {mine / theirs:12.2f}")


if __name__ == "__main__":
    main()
