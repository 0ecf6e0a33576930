"""Coding and CI agent histories with one fact planted deep in one tool output.

    python benchmarks/quality/agent_large_a.py [--cases N] [--seed S]

Each history is an OpenAI Chat Completions conversation: a system message describing the
agent's tools, the user's task, then rounds of an assistant message with ``tool_calls``
answered by ``tool`` messages (sometimes two or three calls at once), with assistant text
between the rounds and now and then a user message; the last message is the user's question
about the fact. Tokens are estimated as characters / 4 (content plus call arguments).

* :func:`large_output_cases`: 100k-140k tokens, 12-24 rounds, of which 2-4 return outputs of
  5k-80k tokens (the sizes drawn unevenly, so one output may take most of the history) and
  the rest 50-1,500 tokens. The fact is in one of the large outputs four times in five, else
  in a small one.
* :func:`midsize_cases`: 20-60 outputs of 300-4,000 tokens (60k-120k tokens in all), the fact
  in any one of them, old or recent.

Outputs are test and CI logs (pytest, jest, cargo test, GitHub Actions, service logs),
source files (Python, TypeScript, Go), JSON listings from internal APIs, markdown documents,
query results as tables, and small results (git, code search, pods, patch receipts). The fact
is one topic's value for one subject (a port, timeout, owner, version, base URL, rate limit,
connection limit, error code, flag rollout or table name), written in the output's own
syntax at a uniformly drawn depth. Around it are distractors: the same topic for subjects
sharing a word with the fact's (``billing-primary``, ``ledger-replica`` beside
``billing-replica``) and other topics of the fact's subject, in the same shape, in the fact's
output and in others. The question shares words with the fact's line but never holds its
needle; the needle occurs exactly once in the history (a draw where it does not is drawn
again).

A :class:`Case` holds the messages, the needle, the fact's line as it stands in its output
(for prose, its sentence), the question, the output's shape (``kind``), the fact's depth in
its output (where its line starts, as a share of the output's characters) and the output's
size in tokens. The module's own run prints, per case, those figures, the history's size,
its rounds and outputs, and the position of the fact's output among the outputs (0 the
first, 1 the last).

Everything comes from ``random.Random(seed)``: the same ``(n, seed)`` gives the same cases,
and the first ``k`` cases of ``n`` are the cases of ``k``. No data is downloaded. The
helper modules ``agent_large_a_*`` hold the vocabulary and facts, the logs, the source
files, the JSON, tables and prose, and the small results.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import string
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_large_a_code import code_output
from agent_large_a_docs import json_output, prose_output, table_output
from agent_large_a_facts import TOPICS, Output, Topic, World, pick, rand
from agent_large_a_logs import log_output
from agent_large_a_small import GROWING, SMALL

Message = dict[str, Any]
Shape = Callable[[World, int, float | None], Output]

SHAPES: dict[str, Shape] = {
    "log": log_output,
    "json": json_output,
    "code": code_output,
    "prose": prose_output,
    "table": table_output,
}
# The largest output (tokens) a shape is drawn at: a source file or a document of 80k
# tokens would not be a realistic read.
CAPS = {"log": 80_000, "json": 80_000, "code": 40_000, "prose": 30_000, "table": 80_000}


@dataclass(frozen=True)
class Case:
    """One history and its planted fact."""

    messages: list[dict[str, Any]]
    needle: str
    fact_line: str
    question: str
    kind: str
    depth: float
    output_tokens: int


def tokens(text: str) -> int:
    return len(text) // 4


def history_tokens(messages: list[Message]) -> int:
    """Content plus call arguments, characters / 4."""
    size = 0
    for message in messages:
        size += len(message.get("content") or "")
        for call in message.get("tool_calls") or ():
            size += len(call["function"]["arguments"])
    return size // 4


def large_output_cases(n: int, seed: int = 0) -> list[Case]:
    """``n`` histories of 100k-140k tokens with 2-4 outputs of 5k-80k tokens."""
    return list(itertools.islice(_cases(_large_plan, seed), n))


def midsize_cases(n: int, seed: int = 0) -> list[Case]:
    """``n`` histories of 20-60 outputs of 300-4,000 tokens (60k-120k tokens in all)."""
    return list(itertools.islice(_cases(_midsize_plan, seed), n))


def _cases(plan_of: Plan, seed: int) -> Iterator[Case]:
    """The cases of ``seed``, each from its own generator seeded by the first."""
    master = Random(seed)
    while True:
        yield _draw(plan_of, Random(master.getrandbits(64)))


# Plans: the outputs of a history, in order, before the conversation around them.


@dataclass
class Slot:
    """One tool result to produce: its size range and whether it holds the fact."""

    low: int  # tokens
    high: int
    target: int = 0
    shape: str = ""  # a key of SHAPES, or "" for a small result
    fact: bool = False
    output: Output | None = None


Plan = Callable[[Random, Topic], list[list[Slot]]]


def _large_plan(rng: Random, topic: Topic) -> list[list[Slot]]:
    """Rounds of slots: 12-24 rounds, 2-4 large outputs, the rest small."""
    rounds = rand(rng, 12, 24)
    big = rand(rng, 2, 4)
    fact_kind = pick(rng, list(SHAPES))
    fact_cap = CAPS[fact_kind]
    if fact_kind == "table" and topic.entity in ("flag", "dataset"):
        fact_cap = 15_000  # a table of every flag or dataset is a few thousand rows
    in_big = rng.random() < 0.8
    if in_big and fact_cap < 80_000 and big == 2:
        big = 3  # two outputs, one capped, could not hold the history's size
    plan: list[list[Slot]] = []
    big_rounds = set(rng.sample(range(1, rounds), big))
    for index in range(rounds):
        if index in big_rounds:
            plan.append([Slot(5_000, 80_000)])
        else:
            count = 2 if rng.random() < 0.15 else 1
            plan.append([Slot(50, 1_500, _log_uniform(rng, 60, 1_400)) for _ in range(count)])
    bigs = [slot for row in plan for slot in row if slot.high == 80_000]
    smalls = [slot for row in plan for slot in row if slot.high == 1_500]
    holder = pick(rng, bigs if in_big else smalls)
    holder.fact, holder.shape = True, fact_kind
    if not in_big:
        holder.target = rand(rng, 200, 1_400)
    for slot in smalls:
        if not slot.fact and rng.random() < 0.45:
            slot.shape = pick(rng, list(SHAPES))
    fixed = sum(slot.target for slot in smalls) + 60 * rounds + 500
    total = rand(rng, 104_000, 136_000) - fixed
    caps = [min(78_000, fact_cap if s.fact else CAPS[s.shape]) if s.shape else 78_000 for s in bigs]
    for slot, size in zip(bigs, _split(rng, total, [5_300] * big, caps), strict=True):
        slot.target = size
        if not slot.shape:
            slot.shape = pick(rng, [k for k, cap in CAPS.items() if size <= cap])
    return plan


def _midsize_plan(rng: Random, topic: Topic) -> list[list[Slot]]:
    """Rounds of one to three slots, 20-60 outputs of 300-4,000 tokens."""
    count = rand(rng, 20, 60)
    total = rand(rng, max(62_000, count * 420), min(110_000, count * 3_600))
    sizes = _split(rng, total, [340] * count, [3_800] * count)
    slots = [Slot(300, 4_000, size) for size in sizes]
    holder = pick(rng, slots)
    holder.fact, holder.shape = True, pick(rng, list(SHAPES))
    for slot in slots:
        if not slot.fact and rng.random() < 0.75:
            slot.shape = pick(rng, list(SHAPES))
    plan: list[list[Slot]] = []
    while slots:
        take = 1 if rng.random() < 0.7 else rand(rng, 2, 3)
        plan.append(slots[:take])
        slots = slots[take:]
    return plan


def _log_uniform(rng: Random, low: int, high: int) -> int:
    return round(math.exp(rng.uniform(math.log(low), math.log(high))))


def _split(rng: Random, total: int, lows: list[int], highs: list[int]) -> list[int]:
    """``total`` split into parts within ``[lows[i], highs[i]]``, in uneven random shares
    (clamped to the bounds when ``total`` is out of their reach)."""
    parts = list(lows)
    left = total - sum(parts)
    while left > 0:
        open_ = [i for i, part in enumerate(parts) if part < highs[i]]
        if not open_:
            break
        weights = {i: rng.expovariate(1.0) for i in open_}
        scale = sum(weights.values())
        given = 0
        for i in open_:
            share = min(highs[i] - parts[i], max(1, int(left * weights[i] / scale)))
            parts[i] += share
            given += share
        left -= given
    return parts


# Producing the outputs.


def _produce(world: World, slot: Slot) -> Output:
    """The slot's output, drawn again (at a size scaled to the miss) until its size is within
    the slot's range; a few tries are always enough for these generators."""
    rng = world.rng
    target = slot.target
    fact_at = rng.random() if slot.fact else None
    for _ in range(6):
        if slot.shape:
            output = SHAPES[slot.shape](world, target * 4, fact_at)
        else:
            small = pick(rng, SMALL if slot.high <= 1_500 else GROWING)
            output = small(world, target * 4)
        size = tokens(output.text)
        if slot.low <= size <= slot.high:
            return output
        target = max(20, round(target * min(max(slot.target / max(size, 1), 0.3), 3)))
    return output


def _call_id(rng: Random, used: set[str]) -> str:
    alphabet = string.ascii_letters + string.digits
    while True:
        call_id = "call_" + "".join(pick(rng, alphabet) for _ in range(24))
        if call_id not in used:
            used.add(call_id)
            return call_id


def _draw(plan_of: Plan, rng: Random) -> Case:
    """A case from a fresh topic and plan; drawn again until the needle is unique."""
    while True:
        topic = pick(rng, list(TOPICS.values()))
        case = _build(plan_of(rng, topic), rng, topic)
        if case is not None:
            return case


def _build(plan: list[list[Slot]], rng: Random, topic: Topic) -> Case | None:
    holder = next(slot for row in plan for slot in row if slot.fact)
    world = World(rng, topic)
    for row in plan:
        for slot in row:
            slot.output = _produce(world, slot)
    fact_output = holder.output
    assert fact_output is not None
    needle = fact_output.needle
    if needle is None:  # a shape that found no place for the fact: draw again
        return None
    story = Story(world)
    messages = story.conversation(plan)
    question = story.question(fact_output)
    messages.append({"role": "user", "content": question})
    if _occurrences(messages, needle) != 1 or needle in question:
        return None
    text = fact_output.text
    start = text.index(needle)
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    fact_line = fact_output.fact_line or text[line_start : line_end if line_end >= 0 else None]
    return Case(
        messages=messages,
        needle=needle,
        fact_line=fact_line,
        question=question,
        kind=fact_output.kind,
        depth=round(text.index(fact_line) / len(text), 4),
        output_tokens=tokens(text),
    )


def _occurrences(messages: list[Message], needle: str) -> int:
    count = 0
    for message in messages:
        count += (message.get("content") or "").count(needle)
        for call in message.get("tool_calls") or ():
            count += call["function"]["arguments"].count(needle)
    return count


# The conversation around the outputs.

_TOOLS = (
    ("run_command", "run a shell command in the repository and return its output"),
    ("read_file", "read a file of the repository"),
    ("list_dir", "list a directory"),
    ("search_code", "search the code with a regular expression"),
    ("apply_patch", "apply a patch to the working tree"),
    ("get_ci_job_log", "fetch the log of a CI job"),
    ("github_api", "call the GitHub REST API"),
    ("http_request", "send an HTTP request to an internal service"),
    ("query_db", "run a read-only SQL query on the staging database"),
    ("fetch_doc", "fetch a page of the internal wiki"),
)
_TASKS = (
    "CI has been red on main since this morning: the {home} integration job fails. Find out "
    "why and fix it.",
    "The nightly {home} export has started timing out. Investigate, and propose a fix with a test.",
    "Add retries with backoff to the {slug} client and make sure the test suite still passes.",
    "We're moving {home} to the new {slug}. Update the configuration and the docs, and check "
    "nothing else still points at the old one.",
    "Upgrade the HTTP client across the {home} services and fix whatever breaks.",
    "A customer reports duplicate {noun} after a retry. Reproduce it and fix it.",
)
_INTENTS = {
    "run_command": (
        "Running it to see what happens.",
        "Let me run that.",
        "I'll check the output of this command.",
    ),
    "read_file": (
        "Reading `{arg}`.",
        "Let me look at `{arg}`.",
        "`{arg}` should show how this is wired.",
    ),
    "list_dir": ("Listing `{arg}` to find the right module.",),
    "search_code": (
        "Searching the code for the related constants.",
        "Let me find where else this is defined.",
    ),
    "apply_patch": ("Applying the change.", "Here is the fix; applying it."),
    "get_ci_job_log": (
        "Pulling the log of the failing CI job.",
        "The CI log should show the first error.",
    ),
    "github_api": ("Checking the recent workflow runs.",),
    "http_request": (
        "Checking what the internal API reports.",
        "Let me ask the registry directly.",
    ),
    "query_db": ("Querying the staging database.", "Let me check the rows themselves."),
    "fetch_doc": ("The wiki should describe the intended setup; fetching it.",),
}
_COMMAND_INTENTS = {
    "python": ("Running the test suite with live logs.", "Let me rerun the tests to reproduce it."),
    "npx": ("Running the frontend tests.", "Let me see whether the web tests agree."),
    "cargo": ("Running the Rust tests.", "The core crate has its own tests; running them."),
    "kubectl": ("Checking what the cluster shows.", "Let me look at the deployment itself."),
    "git": ("Checking the working tree.", "Let me see where the branch stands."),
}
_STATUSES = (
    "Status: the failure reproduces locally. I suspect `{func}` in `{path}`; {observation} "
    "Next I'll check the {slug} side.",
    "So far: the tests fail the same way each run, and `{func}` is the common frame. {observation}",
    "Quick update: I have a likely cause in `{path}` but want to confirm it against {slug} "
    "before changing anything.",
    "Progress: {observation} I'll keep going with `{func}`.",
)
_OBSERVATIONS = (
    "That output is long; the relevant part is near the failures.",
    "Nothing unexpected there.",
    "This narrows it down to the {home} side.",
    "The error repeats for several services, so it is not a single bad host.",
    "The configuration looks consistent with what the tests expect.",
    "That confirms the retry path is the one failing.",
    "The output matches what I expected.",
    "Most of this is noise from the healthy services.",
)
_INTERJECTIONS = (
    "Keep the change minimal please, we're close to a release.",
    "Don't touch the migrations folder.",
    "Can you also check whether {slug} is affected?",
    "FYI staging is being redeployed right now, so ignore 503s from it.",
    "Sounds good, carry on.",
    "Please add a test for whatever you fix.",
)
_PREFIXES = (
    "",
    "",
    "",
    "Quick question: ",
    "Before I merge this: ",
    "Unrelated, but ",
    "One more thing: ",
    "Going back to something you looked at: ",
)


class Story:
    """The text around the outputs: system prompt, task, intents, updates, the question."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.rng = world.rng
        self.used: set[str] = set()

    def fill(self, template: str, arg: str = "") -> str:
        world = self.world
        return template.format(
            home=world.home,
            slug=world.slug(),
            arg=arg,
            noun=pick(self.rng, ("invoices", "refunds", "payouts")),
        )

    def system(self) -> str:
        tools = "\n".join(f"- {name}: {text}" for name, text in _TOOLS)
        return (
            f"You are a coding agent working in the acme/{self.world.home}-platform repository. "
            "You can inspect and change the code and look at CI and the staging systems with "
            f"these tools:\n{tools}\n\nWork step by step, explain briefly what you are doing, "
            "and keep changes small. Never push to main."
        )

    def conversation(self, plan: list[list[Slot]]) -> list[Message]:
        rng = self.rng
        messages: list[Message] = [
            {"role": "system", "content": self.system()},
            {"role": "user", "content": self.fill(pick(rng, _TASKS))},
        ]
        for index, row in enumerate(plan):
            calls = []
            for slot in row:
                assert slot.output is not None
                arguments = json.dumps(slot.output.arguments)
                calls.append(
                    {
                        "id": _call_id(rng, self.used),
                        "type": "function",
                        "function": {"name": slot.output.tool, "arguments": arguments},
                    }
                )
            first = row[0].output
            assert first is not None
            arg = str(next(iter(first.arguments.values())))
            intents = _INTENTS[first.tool]
            if first.tool == "run_command":
                intents = _COMMAND_INTENTS[arg.split(maxsplit=1)[0]]
            intent = self.fill(pick(rng, intents), arg[:80])
            if index and rng.random() < 0.5:
                intent = f"{self.fill(pick(rng, _OBSERVATIONS))} {intent}"
            messages.append({"role": "assistant", "content": intent, "tool_calls": calls})
            for slot, call in zip(row, calls, strict=True):
                assert slot.output is not None
                messages.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": slot.output.text}
                )
            if index < len(plan) - 1 and rng.random() < 0.12:
                messages.append({"role": "assistant", "content": self.update()})
                messages.append({"role": "user", "content": self.fill(pick(rng, _INTERJECTIONS))})
        messages.append({"role": "assistant", "content": self.update(final=True)})
        return messages

    def update(self, final: bool = False) -> str:
        world, rng = self.world, self.rng
        path = f"src/{world.home}/{world.func_name()}.py"
        if final:
            return (
                f"Done. The fix is in `{path}`: the {world.slug()} path no longer retries on a "
                "closed connection, and the new test covers it. The full suite passes locally; "
                "CI should pick it up on the next push."
            )
        return pick(rng, _STATUSES).format(
            func=world.func_name(),
            path=path,
            slug=world.slug(),
            observation=self.fill(pick(rng, _OBSERVATIONS)),
        )

    def question(self, output: Output) -> str:
        rng = self.rng
        fact = self.world.fact
        core = fact.question(rng)
        roll = rng.random()
        needle = output.needle or ""
        if (
            output.kind == "code"
            and roll < 0.3
            and needle.startswith((fact.ident + " ", fact.go_ident + " "))
        ):
            name = needle.split(" ")[0]
            return f"What is {name} set to in {output.source}?"
        if roll < 0.55:
            core = f"{core[:-1]}, according to {output.source}?"
        prefix = pick(rng, _PREFIXES)
        return prefix + core if prefix else core[0].upper() + core[1:]


# Summary.


def _summary_row(case: Case, seconds: float) -> str:
    messages = case.messages
    rounds = sum(1 for m in messages if m.get("tool_calls"))
    results = [i for i, m in enumerate(messages) if m["role"] == "tool"]
    holder = next(i for i in results if case.needle in messages[i]["content"])
    position = results.index(holder) / max(1, len(results) - 1)
    return (
        f"{case.kind:<6} {case.output_tokens:>7,} {case.depth:>6.2f} "
        f"{history_tokens(messages):>8,} {rounds:>6} {len(results):>7} {position:>8.2f} "
        f"{seconds * 1000:>5.0f}  {case.needle[:44]}"
    )


def summarize(name: str, plan_of: Plan, count: int, seed: int) -> None:
    print(f"\n{name}: {count} cases, seed {seed}")
    print(
        f"{'kind':<6} {'output':>7} {'depth':>6} {'history':>8} {'rounds':>6} {'outputs':>7} "
        f"{'position':>8} {'ms':>5}  needle"
    )
    cases: list[Case] = []
    drawn = _cases(plan_of, seed)
    for _ in range(count):
        started = time.perf_counter()
        case = next(drawn)
        seconds = time.perf_counter() - started
        cases.append(case)
        print(_summary_row(case, seconds))
    kinds = Counter(case.kind for case in cases)
    sizes = [case.output_tokens for case in cases]
    totals = [history_tokens(case.messages) for case in cases]
    depths = sorted(case.depth for case in cases)
    print(f"kinds: {dict(sorted(kinds.items()))}")
    print(
        f"fact output tokens: min {min(sizes):,} median {statistics.median(sizes):,.0f} "
        f"max {max(sizes):,}"
    )
    print(f"history tokens: min {min(totals):,} max {max(totals):,}")
    print(f"depth quartiles: {[round(d, 2) for d in statistics.quantiles(depths, n=4)]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    summarize("large outputs", _large_plan, args.cases, args.seed)
    summarize("mid-size outputs", _midsize_plan, args.cases, args.seed)


if __name__ == "__main__":
    main()
