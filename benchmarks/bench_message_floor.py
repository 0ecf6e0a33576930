"""The floor under the message path: what reading a history costs in CPython, before any choice.

    python benchmarks/bench_message_floor.py [--sizes 100 1000 10000] [--repeat 31]

``fit_messages`` by default scores every message for the latest user message (BM25) and keeps
the conversation's structure; LangChain's ``trim_messages(strategy="last")`` walks back from
the newest message adding per-message counts. This script times, on the history of
``bench_messages.py`` (counts precomputed, the same budget), in one process with the calls
taking turns:

* ``trim_messages``, as ``bench_messages.py --vs-langchain`` calls it;
* ``read``: one pass taking each message's role and content (what any adapter must read);
* ``one object``: that pass building one small slotted object per message (a parsed message,
  an item: any selector that reports per message holds at least one);
* ``words``: the history's text case-folded and split into words, in one split (the least
  any lexical relevance score reads: each word once);
* ``words numbered``: the words, each looked up once in a dictionary, in one C-level pass
  (the least any term statistics, BM25's document frequencies and lengths, need);
* ``fit_messages`` with its defaults.

Each row gives the median CPU time, the minimum wall-clock time and their ratios to
``trim_messages`` (at 10k messages a pass that happens to run a full collection of the
garbage collector, over everything the other calls keep alive, shows in its median; the
minimum leaves that out). The floors are lower
bounds on work a message path with query relevance cannot skip, timed with C-level passes
(``str.split``, ``map``) and no validation, so they tell how far below ``trim_messages`` x 2
a pure-Python ``fit_messages`` can get.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

from _harness import format_table, machine_summary, measure  # noqa: E402
from bench_messages import history, langchain_case, precompute  # noqa: E402
from pycupel.adapters import openai  # noqa: E402


class _Parsed:
    """The smallest per-message record: a role, a text and a position."""

    __slots__ = ("position", "role", "text")

    def __init__(self, position: int, role: object, text: object) -> None:
        self.position = position
        self.role = role
        self.text = text


def floors(messages: list[dict[str, Any]]) -> list[tuple[str, Callable[[], object]]]:
    """The floor passes over ``messages``, named."""
    texts = [message.get("content") or "" for message in messages]

    def read() -> object:
        return [(message.get("role"), message.get("content")) for message in messages]

    def one_object() -> object:
        return [
            _Parsed(position, message.get("role"), message.get("content"))
            for position, message in enumerate(messages)
        ]

    # The fastest forms found: one join and one split for the whole history (a split per
    # message costs more), one C-level dictionary pass over the words.
    def words() -> object:
        return " ".join(texts).lower().split()

    def words_numbered() -> object:
        return dict.fromkeys(" ".join(texts).lower().split())

    return [
        ("read", read),
        ("one object", one_object),
        ("words", words),
        ("words numbered", words_numbered),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=0, help="timed runs (default by size)")
    args = parser.parse_args(argv)

    print(machine_summary())
    rows: list[list[str]] = []
    for size in args.sizes:
        messages = history(size)
        counter, budget = precompute(messages)
        repeat = args.repeat or (31 if size <= 1000 else 9)
        trim, _ = langchain_case(messages, budget)
        named: list[tuple[str, Callable[[], object]]] = [
            ("trim_messages", trim),
            *floors(messages),
            (
                "fit_messages",
                partial(openai.fit_messages, messages, budget=budget, counter=counter),
            ),
        ]
        timings = measure([call for _, call in named], repeat, warmup=2)
        trim_cpu, trim_min = timings[0].cpu_ms, timings[0].min_ms
        words = sum(len(str(message.get("content") or "").split()) for message in messages)
        for (name, _), timing in zip(named, timings, strict=True):
            rows.append(
                [
                    f"{size:,}",
                    f"{words:,}",
                    name,
                    f"{timing.cpu_ms:.3f}",
                    f"{timing.min_ms:.3f}",
                    f"{timing.cpu_ms / trim_cpu:.2f}x",
                    f"{timing.min_ms / trim_min:.2f}x",
                ]
            )
    header = ["messages", "words", "pass", "CPU ms (median)", "min ms", "/ trim (CPU)", "(min)"]
    print(format_table(header, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
