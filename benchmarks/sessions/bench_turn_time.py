"""Time of one turn: a session's incremental fit against LangChain's ``trim_messages``.

    python benchmarks/sessions/bench_turn_time.py [--sizes 100,1000,10000] [--turns 15]

For each history size N, a LangChain conversation of N messages is built; a
``langchain.Session(budget=4000)`` is brought up to N - 2 messages, then each timed turn
appends one human and one AI message and calls ``fit`` with the whole history (what an agent
loop does). ``trim_messages(history, max_tokens=4000, strategy="last",
token_counter=count_tokens_approximately, start_on="human", include_system=True)`` is timed on
the same histories. Medians over the turns, measured alternately in one run; the ratio is
what to read (the machine is shared).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    trim_messages,
)
from langchain_core.messages.utils import count_tokens_approximately

from _harness import format_table, machine_summary
from pycupel.adapters import langchain

BUDGET = 4_000


def history(size: int) -> list[object]:
    messages: list[object] = [SystemMessage("You are a helpful assistant.")]
    turn = 0
    while len(messages) < size:
        messages.append(HumanMessage(f"Question {turn}: how does step {turn} of the plan go?"))
        messages.append(AIMessage(f"Step {turn} goes well; the next check is at {turn + 1}. " * 3))
        turn += 1
    return messages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--turns", type=int, default=15)
    args = parser.parse_args()
    print(machine_summary())
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        full = history(size + 2 * args.turns)
        session = langchain.Session(budget=BUDGET)
        session.fit(full[:size])
        session_times = []
        trim_times = []
        for turn in range(args.turns):
            current = full[: size + 2 * (turn + 1)]
            started = time.perf_counter()
            session.fit(current)
            session_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            trim_messages(
                current,
                max_tokens=BUDGET,
                strategy="last",
                token_counter=count_tokens_approximately,
                start_on="human",
                include_system=True,
            )
            trim_times.append(time.perf_counter() - started)
        session_ms = statistics.median(session_times) * 1000
        trim_ms = statistics.median(trim_times) * 1000
        rows.append(
            [f"{size:,}", f"{session_ms:.2f}", f"{trim_ms:.2f}", f"{session_ms / trim_ms:.2f}x"]
        )
    print(format_table(["messages", "Session.fit ms", "trim_messages ms", "session / trim"], rows))


if __name__ == "__main__":
    main()
