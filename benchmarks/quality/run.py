"""Quality benchmark: what a fitted history keeps of what the next answer needs.

    python benchmarks/quality/run.py [--every N] [--budgets 1000 2000 4000] [--agent-runs N]
        [--methods NAME...] [--before REV]

**LoCoMo** (see ``locomo.py`` for the data, its location and the fixed encoding): every
question with evidence is appended to its conversation as the final user message and the
history is fitted at each budget (tokens counted by the OpenAI adapter's default counter,
the per-message and per-request overheads included). Evidence recall is the share of the
question's evidence turns kept, averaged over questions. Compared in the same run:

* ``pycupel``: ``openai.fit_messages(messages, budget=B)``, defaults only;
* ``pycupel (chat)``: the same with ``policy=presets.chat()`` (the previous default);
* ``trim last``: LangChain ``trim_messages(strategy="last")`` with the same token counter;
* ``llamaindex``: LlamaIndex ``ChatMemoryBuffer`` at the same token limit, its tokenizer
  counting with the same counter (it adds no per-message overhead, so it sees a little
  more room);
* ``bm25 top``: turns ranked by BM25 (``bm25s`` with the PyStemmer English stemmer) for the
  question, taken best first while they fit (skip and continue), the question kept.

``ms/fit`` is the median wall time of one fit. ``--every N`` evaluates every N-th question
(all by default).

**Agent histories** (:func:`pycupel.histories.agent_history`): ``--agent-runs`` histories of
200 turns per kind of question (about an old or a recent fact), fitted with defaults at 15%
of the history's tokens; the share of histories whose fact is kept (its text in the window:
the message whole, or in a truncation's head or tail), for pycupel with and without
tool-result placeholders and the same anchors (except BM25 and LlamaIndex, which cannot keep
tool pairs valid), the share of the history's tool calls still in the window, and every
fitted history's validity (re-parsed by the adapter: no orphaned result or unanswered call).
Also the time of one fit of a ~600-turn LoCoMo conversation (with ``--before REV``, beside
the same fit by pycupel as of git revision ``REV``, the calls taking turns).

Needs the ``bench`` extra (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo

from pycupel import presets
from pycupel.adapters import openai
from pycupel.errors import MessageFormatError
from pycupel.histories import agent_history
from pycupel.tokens import HeuristicCounter

Message = dict[str, Any]
Fit = Callable[[list[Message], int], list[Message]]

COUNTER = HeuristicCounter()


def fit_pycupel(messages: list[Message], budget: int) -> list[Message]:
    return openai.fit_messages(messages, budget=budget).messages


def fit_whole_units(messages: list[Message], budget: int) -> list[Message]:
    return openai.fit_messages(messages, budget=budget, shrink=False).messages


def fit_chat_preset(messages: list[Message], budget: int) -> list[Message]:
    return openai.fit_messages(messages, budget=budget, policy=presets.chat()).messages


def _to_langchain(messages: Sequence[Message]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    converted: list[Any] = []
    for index, message in enumerate(messages):
        role, content = message["role"], message.get("content") or ""
        if role == "system":
            converted.append(SystemMessage(content, id=str(index)))
        elif role == "user":
            converted.append(HumanMessage(content, id=str(index)))
        elif role == "tool":
            converted.append(
                ToolMessage(content, tool_call_id=message["tool_call_id"], id=str(index))
            )
        else:
            calls = [
                {"id": call["id"], "name": call["function"]["name"], "args": {}}
                for call in message.get("tool_calls") or []
            ]
            converted.append(AIMessage(content, tool_calls=calls, id=str(index)))
    return converted


def fit_trim_last(messages: list[Message], budget: int) -> list[Message]:
    from langchain_core.messages import trim_messages

    converted = _to_langchain(messages)
    originals = {str(index): message for index, message in enumerate(messages)}

    def count(batch: list[Any]) -> int:
        return openai.count_tokens([originals[str(m.id)] for m in batch]) if batch else 0

    kept = trim_messages(
        converted,
        max_tokens=budget,
        token_counter=count,
        strategy="last",
        include_system=True,
        start_on="human",
        allow_partial=False,
    )
    return [originals[str(m.id)] for m in kept]


def fit_llamaindex(messages: list[Message], budget: int) -> list[Message]:
    from llama_index.core.base.llms.types import ChatMessage, MessageRole
    from llama_index.core.memory import ChatMemoryBuffer

    roles = {"user": MessageRole.USER, "assistant": MessageRole.ASSISTANT}
    memory = ChatMemoryBuffer.from_defaults(
        token_limit=budget, tokenizer_fn=lambda text: [0] * COUNTER.count(text)
    )
    memory.set(
        [
            ChatMessage(role=roles[m["role"]], content=m["content"], additional_kwargs={"i": i})
            for i, m in enumerate(messages)
        ]
    )
    return [messages[m.additional_kwargs["i"]] for m in memory.get()]


def fit_bm25_top(messages: list[Message], budget: int) -> list[Message]:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    history, question = messages[:-1], messages[-1]
    corpus = bm25s.tokenize(
        [m["content"] for m in history], stopwords="en", stemmer=stemmer, show_progress=False
    )
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    query = bm25s.tokenize(
        [question["content"]],
        stopwords="en",
        stemmer=stemmer,
        return_ids=False,
        show_progress=False,
    )
    scores = retriever.get_scores(query[0]) if query and query[0] else [0.0] * len(history)
    tokens = [openai.count_tokens([m]) - 3 for m in history]
    room = budget - openai.count_tokens([question])
    chosen: set[int] = set()
    for index in sorted(range(len(history)), key=lambda i: (-scores[i], i)):
        if scores[index] <= 0:
            break
        if tokens[index] <= room:
            chosen.add(index)
            room -= tokens[index]
    return [history[i] for i in sorted(chosen)] + [question]


LOCOMO_METHODS: dict[str, Fit] = {
    "pycupel": fit_pycupel,
    "pycupel (chat)": fit_chat_preset,
    "trim last": fit_trim_last,
    "llamaindex": fit_llamaindex,
    "bm25 top": fit_bm25_top,
}


def run_locomo(
    every: int, budgets: Sequence[int], methods: Sequence[str]
) -> dict[str, dict[int, tuple[float, float]]]:
    """method -> budget -> (evidence recall, median ms per fit)."""
    conversations = list(locomo.conversations())
    results: dict[str, dict[int, tuple[float, float]]] = {}
    for name in methods:
        fit = LOCOMO_METHODS[name]
        results[name] = {}
        for budget in budgets:
            recalls: list[float] = []
            times: list[float] = []
            for conversation in conversations:
                for question in conversation.questions[::every]:
                    messages = [*conversation.messages, {"role": "user", "content": question.text}]
                    started = time.perf_counter()
                    fitted = fit(messages, budget)
                    times.append((time.perf_counter() - started) * 1000)
                    kept = {id(m) for m in fitted}
                    hits = sum(1 for e in question.evidence if id(messages[e]) in kept)
                    recalls.append(hits / len(question.evidence))
            results[name][budget] = (statistics.fmean(recalls), statistics.median(times))
            print(
                f"  {name:15} {budget:>5}: recall {results[name][budget][0]:.3f}", file=sys.stderr
            )
    return results


def run_agents(runs: int) -> dict[str, dict[str, float]]:
    """method -> {"old", "recent", "valid", "calls", "tokens"}: fact kept (share), valid
    output (share), tool calls of the history still in the window (share, whole or as a
    placeholder), tokens of the window (mean), milliseconds of one fit (median)."""
    methods: dict[str, Fit] = {
        "pycupel": fit_pycupel,
        "pycupel (no placeholders)": fit_whole_units,
        "pycupel (chat)": fit_chat_preset,
        "trim last": fit_trim_last,
    }
    results: dict[str, dict[str, float]] = {}
    for name, fit in methods.items():
        row: dict[str, float] = {}
        valid = total = 0
        calls = tokens = 0.0
        timings: list[float] = []
        for ask in ("old", "recent"):
            kept = 0
            for seed in range(runs):
                history = agent_history(turns=200, seed=seed, ask=ask)  # type: ignore[arg-type]
                budget = int(openai.count_tokens(history.messages) * 0.15)
                started = time.perf_counter()
                fitted = fit(history.messages, budget)
                timings.append((time.perf_counter() - started) * 1000)
                # The fact is kept when its text is: whole, or in a truncation's head or tail.
                kept += any(history.answer in str(m.get("content")) for m in fitted)
                calls += len(_call_ids(fitted)) / len(_call_ids(history.messages))
                tokens += openai.count_tokens(fitted)
                total += 1
                try:
                    openai.from_messages(fitted)
                    valid += openai.count_tokens(fitted) <= budget
                except MessageFormatError:  # an invalid history is what is counted
                    pass
            row[ask] = kept / runs
        row["valid"] = valid / total
        row["calls"] = calls / total
        row["tokens"] = tokens / total
        row["ms"] = statistics.median(timings)
        results[name] = row
    return results


def _call_ids(messages: Sequence[Message]) -> set[str]:
    return {call["id"] for m in messages for call in m.get("tool_calls") or ()}


def time_large_fit(
    repeat: int = 15, before: Fit | None = None
) -> tuple[int, float, float, float | None]:
    """(messages, median ms of one default fit, of one chat-preset fit, and of one default fit
    by ``before``, an earlier revision's, when given); the calls take turns."""
    conversation = max(locomo.conversations(), key=lambda c: len(c.messages))
    messages = [*conversation.messages, {"role": "user", "content": conversation.questions[0].text}]
    fits: list[tuple[str, Fit]] = [("default", fit_pycupel), ("chat", fit_chat_preset)]
    if before is not None:
        assert before(messages, 2_000) == fit_pycupel(messages, 2_000), "selections differ"
        fits.append(("before", before))
    timings: dict[str, list[float]] = {label: [] for label, _ in fits}
    for _ in range(repeat):
        for label, fit in fits:
            started = time.perf_counter()
            fit(messages, 2_000)
            timings[label].append((time.perf_counter() - started) * 1000)
    return (
        len(messages),
        statistics.median(timings["default"]),
        statistics.median(timings["chat"]),
        statistics.median(timings["before"]) if before is not None else None,
    )


def before_fit(revision: str) -> Fit:
    """``openai.fit_messages`` with defaults as of git revision ``revision``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import importlib

    from _before import load_before

    adapter = importlib.import_module(f"{load_before(revision).__name__}.adapters.openai")

    def fit(messages: list[Message], budget: int) -> list[Message]:
        kept: list[Message] = adapter.fit_messages(messages, budget=budget).messages
        return kept

    return fit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=int, default=1, help="evaluate every N-th question")
    parser.add_argument("--budgets", type=int, nargs="+", default=[1_000, 2_000, 4_000])
    parser.add_argument("--agent-runs", type=int, default=50, help="0 skips agent histories")
    parser.add_argument(
        "--methods", nargs="+", default=list(LOCOMO_METHODS), choices=list(LOCOMO_METHODS)
    )
    parser.add_argument(
        "--before", metavar="REV", help="also time the large fit at git revision REV"
    )
    args = parser.parse_args()

    conversations = list(locomo.conversations())
    asked = sum(len(c.questions[:: args.every]) for c in conversations)
    print(
        f"LoCoMo: {len(conversations)} conversations, {asked} questions with evidence "
        f"(every {args.every}), budgets {args.budgets}\n"
    )
    results = run_locomo(args.every, args.budgets, args.methods)
    header = "| approach | " + " | ".join(f"{b:,}" for b in args.budgets) + " | ms/fit (median) |"
    print(header)
    print("|---" * (len(args.budgets) + 2) + "|")
    for name, row in results.items():
        cells = " | ".join(f"{row[b][0]:.3f}" for b in args.budgets)
        ms = statistics.median(row[b][1] for b in args.budgets)
        print(f"| {name} | {cells} | {ms:.1f} |")

    before = before_fit(args.before) if args.before else None
    count, default_ms, chat_ms, before_ms = time_large_fit(before=before)
    print(
        f"\nOne fit of a {count}-message LoCoMo conversation at 2,000 tokens: "
        f"defaults {default_ms:.1f} ms, chat preset {chat_ms:.1f} ms "
        f"(ratio {default_ms / chat_ms:.2f})"
    )
    if before_ms is not None:
        print(
            f"Defaults at {args.before}: {before_ms:.1f} ms (before / now "
            f"{before_ms / default_ms:.2f}x, the same messages kept)"
        )
    if args.agent_runs <= 0:
        return
    print(f"\nAgent histories: 200 turns, budget 15% of the history, {args.agent_runs} per kind\n")
    print(
        "| approach | old fact kept | recent fact kept | valid histories "
        "| tool calls visible | window tokens (mean) | ms/fit (median) |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, row in run_agents(args.agent_runs).items():
        print(
            f"| {name} | {row['old']:.2f} | {row['recent']:.2f} | {row['valid']:.2f} "
            f"| {row['calls']:.2f} | {row['tokens']:,.0f} | {row['ms']:.0f} |"
        )


if __name__ == "__main__":
    main()
