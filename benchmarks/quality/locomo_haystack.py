"""LoCoMo hidden in a haystack: a conversation's sessions among sessions of the others.

    python benchmarks/quality/locomo_haystack.py [--every N] [--budgets 1000 2000 4000 8000]
        [--methods NAME...] [--before REV] [--seed S] [--json PATH]

LongMemEval's haystack setting, built from LoCoMo (see ``locomo.py`` for the data, its
location and the fixed encoding of turns). In ``run.py`` every turn of the history belongs to
the conversation the question is about; here that conversation is a minority of a long
history, as a user's history with an assistant mixes many unrelated threads.

Construction, for each of the ten conversations (the *target*), from ``locomo.py``'s encoding
(fixed, so that figures compare across runs):

* **Sessions.** A conversation's messages are cut into its sessions by the session number of
  each turn's ``dia_id`` (``D<session>:<turn>``). A session is always taken whole: its first
  message keeps its ``"[SESSION DATE] "`` prefix, every message keeps its ``"Name: text"``
  content (distractor speakers keep their own names) and its role (the session's conversation's
  ``speaker_a`` is ``user``, ``speaker_b`` is ``assistant``). Messages are the very objects of
  the encoded conversations, never rewritten.
* **Distractors.** Every session of the nine other conversations goes into one pool, which is
  shuffled by ``random.Random(f"{seed}:{target}")`` (seed 0 by default). Sessions are taken
  from the shuffled pool, in its order, while the history (all the target's sessions plus the
  distractors taken so far) stays within 120,000 tokens; the first session that would cross
  that line ends the draw. Tokens are counted by ``pycupel.adapters.openai.count_tokens``
  with its default heuristic counter, per-message and per-request overheads included. The
  history is therefore a little under 120,000 tokens (by less than one session: 119.0k to
  119.8k with seed 0), and the distractors are drawn uniformly from the other conversations'
  sessions (all nine other conversations contribute to every history). The target is 13.7k to
  26.4k tokens, so the distractors are 3.5x to 4.3x its tokens (3.5x to 4.1x its sessions)
  for seven of the ten conversations, 5.2x (4.8x) for conversation 49 and 5.9x to 7.8x
  (6.6x to 7.0x) for the two shortest, 26 and 30; the run prints each history's figures.
* **Order.** Each source conversation's sessions (the target's, and each distractor
  conversation's drawn subset) stay in their own chronological order; the sources are merged by
  the same generator, each next session coming from a source chosen with probability
  proportional to the number of sessions it has left. Every interleaving that keeps each
  source's order is then equally likely, so the target's sessions are spread through the
  history rather than clustered at either end. Dates are not comparable across sources (each
  conversation has its own calendar), so a distractor's date header may be older than the
  target session before it.
* **Questions.** Every question of the target whose evidence resolves (as ``locomo.py``
  defines it; all categories) is appended to the history as the final user message; with
  ``--every N``, every N-th question of each conversation, as ``run.py --every N`` samples
  (default 8: 253 of the 1,981 questions). The history is built once per conversation and
  shared by its questions.

Each history is fitted at each budget (1,000 / 2,000 / 4,000 / 8,000 tokens by default).
Evidence recall is the share of the question's evidence turns kept in the fitted window (the
very message object, as in ``run.py``: a turn kept only as an excerpt does not count),
averaged over questions. ``window/budget`` is the fitted window's tokens (same counter) over
the budget, averaged; ``ms/fit`` is the median wall time of one fit. Compared in the same run,
the methods taking turns on each question so that machine load hits them alike:

* ``pycupel``: ``openai.fit_messages(messages, budget=B)``, defaults only;
* ``pycupel (before)``: the same call with pycupel as of git revision ``--before`` (default
  ``92bc2fe``, the previous release), loaded beside the current code by ``_before.py``;
* ``trim_messages``: LangChain ``trim_messages(strategy="last")`` with the same token counter
  (``run.py``'s ``fit_trim_last``);
* ``bm25 top``: turns ranked by BM25 for the question, taken best first while they fit
  (``run.py``'s ``fit_bm25_top``).

Speaker names recur across LoCoMo conversations (three of them have a "John"), so some
distractor turns mention a question's person by name: part of what makes a haystack hard.

Needs the ``bench`` extra (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo
import run

from pycupel.adapters import openai

Message = dict[str, Any]

TARGET_TOKENS = 120_000
BUDGETS = (1_000, 2_000, 4_000, 8_000)
BEFORE = "92bc2fe"
EVERY = 8


@dataclass(frozen=True, slots=True)
class Session:
    """One whole session of a LoCoMo conversation, as encoded by ``locomo.py``."""

    sample: str
    number: int
    start: int  # position of its first message in its conversation's messages
    messages: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class Haystack:
    """A target conversation's sessions hidden among distractor sessions, and its questions."""

    sample: str
    messages: tuple[Message, ...]  # the history, without a question
    sessions: tuple[Session, ...]  # in the history's order
    questions: tuple[locomo.Question, ...]  # evidence as positions in ``messages``
    tokens: int  # of ``messages``

    @property
    def own_sessions(self) -> int:
        return sum(1 for s in self.sessions if s.sample == self.sample)

    @property
    def distractor_sessions(self) -> int:
        return len(self.sessions) - self.own_sessions

    @property
    def own_tokens(self) -> int:
        own = [m for s in self.sessions if s.sample == self.sample for m in s.messages]
        return openai.count_tokens(own)


def sessions(conversation: locomo.Conversation) -> list[Session]:
    """The conversation's sessions, in order, cut by the session number of each ``dia_id``."""
    cut: list[Session] = []
    start = 0
    numbers = [int(dia_id.split(":")[0][1:]) for dia_id in conversation.dia_ids]
    for index in range(1, len(numbers) + 1):
        if index == len(numbers) or numbers[index] != numbers[start]:
            messages = conversation.messages[start:index]
            cut.append(Session(conversation.sample, numbers[start], start, messages))
            start = index
    return cut


def build(
    target: locomo.Conversation,
    others: Sequence[locomo.Conversation],
    *,
    tokens: int = TARGET_TOKENS,
    seed: int = 0,
) -> Haystack:
    """The target's haystack history (see the module's docstring for the construction)."""
    rng = random.Random(f"{seed}:{target.sample}")
    own = sessions(target)
    pool = [s for other in others if other.sample != target.sample for s in sessions(other)]
    rng.shuffle(pool)
    request = openai.count_tokens([])
    used = openai.count_tokens(list(target.messages))
    drawn: dict[str, list[Session]] = {}
    for session in pool:
        cost = openai.count_tokens(list(session.messages)) - request
        if used + cost > tokens:
            break
        drawn.setdefault(session.sample, []).append(session)
        used += cost
    sources = [own] + [sorted(drawn[s], key=lambda x: x.number) for s in sorted(drawn)]
    left = [len(source) for source in sources]
    order: list[Session] = []
    while any(left):
        (pick,) = rng.choices(range(len(sources)), weights=left)
        order.append(sources[pick][len(sources[pick]) - left[pick]])
        left[pick] -= 1
    messages: list[Message] = []
    where: dict[int, int] = {}  # position in the target's messages -> position in the history
    for session in order:
        if session.sample == target.sample:
            for offset in range(len(session.messages)):
                where[session.start + offset] = len(messages) + offset
        messages.extend(session.messages)
    questions = tuple(
        locomo.Question(q.text, q.category, tuple(where[e] for e in q.evidence))
        for q in target.questions
    )
    total = openai.count_tokens(messages)
    return Haystack(target.sample, tuple(messages), tuple(order), questions, total)


def haystacks(*, tokens: int = TARGET_TOKENS, seed: int = 0) -> list[Haystack]:
    """One haystack per LoCoMo conversation."""
    conversations = list(locomo.conversations())
    return [build(c, conversations, tokens=tokens, seed=seed) for c in conversations]


def methods(before: str = BEFORE) -> dict[str, run.Fit]:
    """The compared methods by name; the earlier revision is loaded only when asked for."""

    def fit_before(messages: list[Message], budget: int) -> list[Message]:
        if not loaded:
            loaded.append(run.before_fit(before))
        return loaded[0](messages, budget)

    loaded: list[run.Fit] = []
    return {
        "pycupel": run.fit_pycupel,
        "pycupel (before)": fit_before,
        "trim_messages": run.fit_trim_last,
        "bm25 top": run.fit_bm25_top,
    }


@dataclass(frozen=True, slots=True)
class Outcome:
    """One fit: the share of the evidence kept, window tokens over budget, milliseconds."""

    recall: float
    window: float
    ms: float


def evaluate(
    stacks: Sequence[Haystack],
    every: int,
    budgets: Sequence[int],
    fits: Mapping[str, run.Fit],
    progress: bool = False,
) -> dict[str, dict[int, list[Outcome]]]:
    """method -> budget -> one outcome per question (same order for every method)."""
    results: dict[str, dict[int, list[Outcome]]] = {
        name: {budget: [] for budget in budgets} for name in fits
    }
    for stack in stacks:
        started = time.perf_counter()
        asked = stack.questions[::every]
        for question in asked:
            messages = [*stack.messages, {"role": "user", "content": question.text}]
            for budget in budgets:
                for name, fit in fits.items():
                    began = time.perf_counter()
                    fitted = fit(messages, budget)
                    ms = (time.perf_counter() - began) * 1000
                    kept = {id(m) for m in fitted}
                    hits = sum(1 for e in question.evidence if id(messages[e]) in kept)
                    window = openai.count_tokens(fitted) / budget
                    results[name][budget].append(Outcome(hits / len(question.evidence), window, ms))
        if progress:
            print(
                f"  conversation {stack.sample}: {len(asked)} questions, "
                f"{time.perf_counter() - started:.0f} s",
                file=sys.stderr,
            )
    return results


def summarize(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """Mean recall, mean window/budget, median ms per fit."""
    return {
        "recall": statistics.fmean(o.recall for o in outcomes),
        "window": statistics.fmean(o.window for o in outcomes),
        "ms": statistics.median(o.ms for o in outcomes),
    }


def paired(now: Sequence[Outcome], before: Sequence[Outcome]) -> tuple[float, float]:
    """Mean per-question recall difference (now - before) and its standard error."""
    diffs = [a.recall - b.recall for a, b in zip(now, before, strict=True)]
    spread = statistics.stdev(diffs) if len(diffs) > 1 else 0.0
    return statistics.fmean(diffs), spread / len(diffs) ** 0.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--every", type=int, default=EVERY, help=f"every N-th question (default {EVERY})"
    )
    parser.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    names = list(methods())
    parser.add_argument("--methods", nargs="+", default=names, choices=names)
    parser.add_argument(
        "--before", metavar="REV", default=BEFORE, help=f"revision of 'pycupel (before)' ({BEFORE})"
    )
    parser.add_argument("--seed", type=int, default=0, help="draw and interleaving seed")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()

    stacks = haystacks(seed=args.seed)
    asked = sum(len(s.questions[:: args.every]) for s in stacks)
    print(
        f"LoCoMo haystack: {len(stacks)} histories of ~{TARGET_TOKENS:,} tokens, {asked} "
        f"questions with evidence (every {args.every}), budgets {args.budgets}, seed {args.seed}"
        f", before = {args.before}\n"
    )
    print("| conversation | history tokens | own tokens | own sessions | distractor sessions |")
    print("|---|---|---|---|---|")
    for s in stacks:
        print(
            f"| {s.sample} | {s.tokens:,} | {s.own_tokens:,} | {s.own_sessions} "
            f"| {s.distractor_sessions} ({s.distractor_sessions / s.own_sessions:.1f}x) |"
        )

    every_fit = methods(args.before)
    fits = {name: every_fit[name] for name in args.methods}
    results = evaluate(stacks, args.every, args.budgets, fits, progress=True)
    table = {
        name: {budget: summarize(row[budget]) for budget in args.budgets}
        for name, row in results.items()
    }
    print("\n| method | budget | evidence recall | window/budget | ms/fit (median) |")
    print("|---|---|---|---|---|")
    for name, row in table.items():
        for budget, cell in row.items():
            print(
                f"| {name} | {budget:,} | {cell['recall']:.3f} | {cell['window']:.3f} "
                f"| {cell['ms']:.1f} |"
            )
    differences: dict[int, tuple[float, float]] = {}
    if "pycupel" in results and "pycupel (before)" in results:
        print(f"\npycupel - pycupel ({args.before}), recall per question (mean +- standard error):")
        for budget in args.budgets:
            differences[budget] = paired(
                results["pycupel"][budget], results["pycupel (before)"][budget]
            )
            mean, error = differences[budget]
            print(f"  {budget:>5,}: {mean:+.3f} +- {error:.3f}")
    if args.json:
        report = {
            "every": args.every,
            "questions": asked,
            "budgets": args.budgets,
            "seed": args.seed,
            "before": args.before,
            "target_tokens": TARGET_TOKENS,
            "histories": [
                {
                    "conversation": s.sample,
                    "tokens": s.tokens,
                    "own_tokens": s.own_tokens,
                    "own_sessions": s.own_sessions,
                    "distractor_sessions": s.distractor_sessions,
                }
                for s in stacks
            ],
            "results": {
                name: {str(budget): cell for budget, cell in row.items()}
                for name, row in table.items()
            },
            "pycupel_minus_before": {
                str(budget): {"mean": mean, "stderr": error}
                for budget, (mean, error) in differences.items()
            },
        }
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
