"""The message path: fitting a chat history into a budget, with the token counts precomputed.

Usage:
    python benchmarks/bench_messages.py                  # pycupel alone: 100, 1k, 10k messages
    python benchmarks/bench_messages.py --vs-langchain   # and LangChain's trim_messages
    python benchmarks/bench_messages.py --sizes 100 1000 --repeat 31 --profile
    python benchmarks/bench_messages.py --vs-langchain --before 8877a61   # and that revision

The history is deterministic: a system prompt, then user / assistant turns in which about one
assistant turn in six calls a tool and the next message answers it; texts of 5 to 120 words.
Each message's token count is computed once, before timing, so tokenisation is out of the
measurement on both sides:

* pycupel: ``openai.fit_messages(messages, budget=..., counter=<table lookup>)`` on the
  OpenAI dicts, with its defaults (the structure-aware selection with the Conversation preset,
  the latest user message as the query, a selection report), and the split alone
  (``openai.from_messages``: parse, validate, group and build the items).
* a session turn: an ``openai.Session`` with the same budget and counter, brought up to the
  history's size before timing; each timed call appends a user and an assistant message and
  fits the whole history again (what an agent loop does every turn).
* LangChain: ``trim_messages(messages, strategy="last", max_tokens=..., include_system=True,
  start_on="human", token_counter=<per-message table lookup>)`` on the same history as
  LangChain message objects (built once, before timing), in the same process, the calls taking
  turns (``--vs-langchain``).

With ``--before REV``, ``fit_messages`` of pycupel as of git revision ``REV`` (``_before.py``)
runs too, on the same messages and counter, in turn with the others; ``before / now`` is the
ratio of their median CPU times.

The budget is a quarter of the history's tokens. Times are the median wall-clock, the minimum
wall-clock and the median CPU time of the timed runs; the ratios are of median CPU times (on a
shared machine a long call is descheduled more often than a short one, which skews wall-clock
medians) and of minima.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import pstats
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

from _before import load_before  # noqa: E402
from _harness import format_table, machine_summary, measure  # noqa: E402
from pycupel.adapters import openai  # noqa: E402
from pycupel.tokens import BaseTokenCounter  # noqa: E402

_SENTENCE = (
    "the build failed on step four because the cache key changed after the lockfile update "
    "please check the logs and rerun the job with verbose output we should pin the version "
    "of the compiler and document the workaround in the runbook before friday"
)
WORDS = _SENTENCE.split()


def history(size: int, seed: int = 7) -> list[dict[str, Any]]:
    """A deterministic OpenAI chat history of ``size`` messages."""
    rng = random.Random(seed)

    def text() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 120)))

    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a build assistant."}]
    call = 0
    while len(messages) < size:
        messages.append({"role": "user", "content": text()})
        if len(messages) + 2 < size and rng.random() < 1 / 6:
            call += 1
            call_id = f"call_{call}"
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "read_log", "arguments": '{"step": 4}'},
                        }
                    ],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": text()})
        if len(messages) < size:
            messages.append({"role": "assistant", "content": text()})
    return messages[:size]


class TableCounter(BaseTokenCounter):
    """Counts from a precomputed table (text -> tokens): no tokenising while timed."""

    __slots__ = ("_table",)

    def __init__(self, table: Mapping[str, int]) -> None:
        self._table = table

    def count(self, text: str) -> int:
        return self._table[text]

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return list(map(self._table.__getitem__, texts))


def _word_count(text: str) -> int:
    return len(text.split()) + 1


def precompute(messages: list[dict[str, Any]]) -> tuple[TableCounter, int]:
    """The counter pycupel uses and the budget (a quarter of the history's tokens)."""
    table: dict[str, int] = {}
    counter = _Recorder(table)
    total = openai.count_tokens(messages, counter=counter)
    # One untimed fit records the texts of the shorter versions it builds (placeholders and
    # truncations of tool results), so the timed fits count every text from the table.
    openai.fit_messages(messages, budget=total // 4, counter=counter)
    return TableCounter(table), total // 4


class _Recorder(BaseTokenCounter):
    """Counts every text once (words + 1) and records it in the table."""

    __slots__ = ("_table",)

    def __init__(self, table: dict[str, int]) -> None:
        self._table = table

    def count(self, text: str) -> int:
        return self._table.setdefault(text, _word_count(text))


def session_turns(size: int, budget: int, repeat: int) -> Callable[[], object]:
    """One session turn per call: two more messages, then ``Session.fit`` on the whole history.

    The session is brought up to the ``size`` messages of :func:`history` first; then user and
    assistant messages like the history's are appended, enough for every call the
    measurement makes (warm-up included).
    """
    rng = random.Random(size)
    messages = history(size)
    for turn in range(repeat + 4):
        for role in ("user", "assistant"):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 120)))
            messages.append({"role": role, "content": f"turn {turn}: {words}"})
    counter, _ = precompute(messages)
    session = openai.Session(budget=budget, counter=counter)
    session.fit(messages[:size])
    state = {"length": size}

    def turn() -> object:
        state["length"] += 2
        return session.fit(messages[: state["length"]])

    return turn


def langchain_case(
    messages: list[dict[str, Any]], budget: int
) -> tuple[Callable[[], object], Callable[[list[Any]], int]]:
    """The trim_messages call on the same history, and how many messages it kept."""
    from langchain_core.messages import BaseMessage, convert_to_messages, trim_messages

    converted = convert_to_messages(messages)
    counts = {id(message): _word_count(str(message.content)) + 4 for message in converted}

    # The annotation must be the class itself: trim_messages reads it to call this per message.
    def token_counter(message: BaseMessage) -> int:
        return counts[id(message)]

    token_counter.__annotations__["message"] = BaseMessage

    def call() -> object:
        return trim_messages(
            converted,
            max_tokens=budget,
            strategy="last",
            token_counter=token_counter,
            include_system=True,
            start_on="human",
        )

    return call, len


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=0, help="timed runs (default by size)")
    parser.add_argument("--vs-langchain", action="store_true")
    parser.add_argument("--profile", action="store_true", help="cProfile fit_messages once")
    parser.add_argument("--before", metavar="REV", help="also time pycupel at git revision REV")
    args = parser.parse_args(argv)
    before_openai = None
    if args.before:
        before_openai = importlib.import_module(
            f"{load_before(args.before).__name__}.adapters.openai"
        )

    print(machine_summary())
    rows: list[list[str]] = []
    for size in args.sizes:
        messages = history(size)
        counter, budget = precompute(messages)
        repeat = args.repeat or (31 if size <= 1000 else 9)

        def fit(
            messages: list[dict[str, Any]] = messages,
            counter: TableCounter = counter,
            budget: int = budget,
        ) -> object:
            return openai.fit_messages(messages, budget=budget, counter=counter)

        def split(
            messages: list[dict[str, Any]] = messages, counter: TableCounter = counter
        ) -> object:
            return openai.from_messages(messages, counter=counter)

        calls: list[Callable[[], object]] = [fit, split, session_turns(size, budget, repeat)]
        if args.vs_langchain:
            trim, _ = langchain_case(messages, budget)
            calls.append(trim)
        if before_openai is not None:
            old_fit = before_openai.fit_messages
            old_kept = old_fit(messages, budget=budget, counter=counter).messages
            assert (
                old_kept == openai.fit_messages(messages, budget=budget, counter=counter).messages
            )
            calls.append(
                lambda f=old_fit, m=messages, c=counter, b=budget: f(m, budget=b, counter=c)
            )
        timings = measure(calls, repeat, warmup=2)
        fit_t, split_t, turn_t = timings[0], timings[1], timings[2]
        row = [
            f"{size:,}",
            f"{fit_t.median_ms:.2f} / {fit_t.min_ms:.2f} / {fit_t.cpu_ms:.2f}",
            f"{split_t.cpu_ms:.2f}",
            f"{turn_t.cpu_ms:.2f}",
        ]
        if args.vs_langchain:
            trim_t = timings[3]
            row += [
                f"{trim_t.median_ms:.2f} / {trim_t.min_ms:.2f} / {trim_t.cpu_ms:.2f}",
                f"{fit_t.cpu_ms / trim_t.cpu_ms:.1f}x",
                f"{fit_t.min_ms / trim_t.min_ms:.1f}x",
                f"{turn_t.cpu_ms / trim_t.cpu_ms:.2f}x",
            ]
        if before_openai is not None:
            old_t = timings[-1]
            row += [f"{old_t.cpu_ms:.2f}", f"{old_t.cpu_ms / fit_t.cpu_ms:.2f}x"]
        rows.append(row)
        if args.profile:
            profiler = cProfile.Profile(time.process_time)
            profiler.runcall(fit)
            pstats.Stats(profiler).sort_stats("tottime").print_stats(15)

    header = [
        "messages",
        "fit_messages ms (median / min / CPU)",
        "from_messages CPU ms",
        "session turn CPU ms",
    ]
    if args.vs_langchain:
        header += [
            "trim_messages ms (median / min / CPU)",
            "fit / trim (CPU)",
            "(min)",
            "turn / trim (CPU)",
        ]
    if before_openai is not None:
        header += ["before fit CPU ms", "before / now"]
    print(format_table(header, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
