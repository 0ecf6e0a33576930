"""Operations and data-analysis agent histories, one fact planted at a random depth of one
tool output.

Each history is an OpenAI Chat Completions conversation of an SRE / data-analysis agent: a
system message, the user's task (an incident to investigate or a review to prepare), then
tool rounds, each an assistant message (its reasoning and one or two tool calls, arguments
as JSON strings) answered by one ``tool`` message per call, with now and then a user
message between rounds; an assistant summary; and last the user's question about the fact.

The tools and the shapes of what they return:

* ``kubectl_get``: a YAML list of deployments, cronjobs, configmaps or certificates;
* ``kubectl_describe``: described pods (containers, restart counts, probes, events);
* ``run_sql``: a result set as a psql or MySQL table, a markdown table or CSV;
* ``http_get`` / ``fetch_metrics``: nested JSON (tenants with their policies, SLO error
  budgets with samples, Kafka topics with partitions), pretty-printed or on one line;
  ``http_get`` also returns HTML wiki pages;
* ``tail_logs``: syslog, nginx access logs, JSON lines, Java logs with stack traces;
* ``search_docs``: runbook pages in markdown; ``web_search``: titles, URLs and snippets;
* ``read_config``: INI or TOML files.

The fact is one record of one output: a key of one manifest, a cell of one row, a field of
one array element, one log line, one sentence in the middle of a paragraph, one frame or
message of one stack trace, one section of a config. The records around it are of the same
form about other subjects (other deployments with their replicas, other shards with their
endpoints...), and some share the words of the question, one at a time: the question names
its subject by two or three strings (a deployment and a namespace, a shard, a region and a
role), and no other record of the history holds all of them. ``needle`` (the value as it
stands, with its key where the value alone would not be distinctive) occurs exactly once in
the history and never in the question. ``depth`` is the needle's offset in its output over
the output's length; the fact's record sits at a uniformly random index among the output's
records.

* :func:`large_output_cases`: 80k-160k tokens (characters / 4) per history, 10-26 tool
  rounds, 2-4 of whose outputs are large (5k-80k tokens, drawn log-uniformly), the others
  small; the fact is in a large output most of the time.
* :func:`midsize_cases`: 25-70 outputs of 300-4,000 tokens (60k-140k tokens in all), the
  fact in one of them: among the last few, among the first ones, or anywhere.

Everything is drawn from ``random.Random`` seeded by the scenario, the seed and the case's
index: the same arguments give the same cases. Run the module for a summary of 20 cases per
scenario.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_large_b_chatter import Round, assemble
from agent_large_b_documents import json_api, read_config
from agent_large_b_k8s import kubectl_describe, kubectl_yaml
from agent_large_b_logs import tail_logs
from agent_large_b_tables import run_sql
from agent_large_b_text import docs, web_search
from agent_large_b_world import Avoid, Output, RedrawError, Spec, World, loguniform

Message = dict[str, Any]
Shape = Callable[[random.Random, World, Spec, str], Output]
Build = Callable[[random.Random, str], tuple[list[Round], Output, World]]

SHAPES: dict[str, Shape] = {
    "yaml": kubectl_yaml,
    "describe": kubectl_describe,
    "table": run_sql,
    "csv": run_sql,
    "json": json_api,
    "syslog": tail_logs,
    "access_log": tail_logs,
    "jsonl": tail_logs,
    "stacktrace": tail_logs,
    "prose": docs,
    "html": docs,
    "ini": read_config,
    "toml": read_config,
    "search": web_search,
}
LARGE_KINDS = tuple(kind for kind in SHAPES if kind != "search")

LARGE_TOKENS = (80_000, 160_000)
LARGE_OUTPUT = (5_000, 80_000)
SMALL_CAP = 4_800
MID_TOKENS = (60_000, 140_000)
MID_OUTPUT = (300, 4_000)


@dataclass(frozen=True)
class Case:
    """One history and its fact.

    ``messages``: OpenAI chat messages, the system message first and the question last;
    ``needle``: the fact's distinctive text, exactly once in the history and not in the
    question; ``fact_line``: the line holding it as it stands in the output (for prose, its
    sentence; for JSON on one line, its innermost object); ``question``: the last message's
    content; ``kind``: the shape of the output holding the fact; ``depth``: the needle's
    offset in that output over its length; ``output_tokens``: that output's length // 4.
    """

    messages: list[Message]
    needle: str
    fact_line: str
    question: str
    kind: str
    depth: float
    output_tokens: int


def _spec(tokens: float, cap_tokens: int, avoid: Avoid, fact: bool = False) -> Spec:
    return Spec(int(tokens) * 4, cap_tokens * 4, fact, avoid)


def _draw(rng: random.Random, w: World, kind: str, spec: Spec, bounds: tuple[int, int]) -> Output:
    """An output of shape ``kind`` whose tokens are within ``bounds``."""
    for _ in range(4):
        output = SHAPES[kind](rng, w, spec, kind)
        if bounds[0] <= len(output.text) // 4 <= bounds[1]:
            return output
    raise RedrawError(f"no {kind} output of {bounds[0]}-{bounds[1]} tokens")


def _other_kind(rng: random.Random, fact_kind: str, kinds: tuple[str, ...]) -> str:
    """Some outputs take the fact's shape, so that its distractors span outputs too."""
    return fact_kind if rng.random() < 0.3 and fact_kind in kinds else rng.choice(kinds)


def _widths(rng: random.Random, calls: int) -> list[int]:
    """Calls per assistant message: one, or two in parallel a quarter of the time."""
    return [2 if rng.random() < 0.25 else 1 for _ in range(calls)]


def _rounds(outputs: list[Output], widths: list[int]) -> list[Round]:
    """The outputs in order, grouped by ``widths``."""
    rounds: list[Round] = []
    index = 0
    for width in widths:
        rounds.append(Round(outputs[index : index + width]))
        index += width
    assert index == len(outputs)
    return rounds


def _split(rng: random.Random, total: float, parts: int, low: float, high: float) -> list[float]:
    """``parts`` sizes in ``[low, high]`` summing to ``total``, each drawn log-uniformly in
    what the others leave."""
    sizes: list[float] = []
    for left in range(parts, 0, -1):
        lo = max(low, total - high * (left - 1))
        hi = min(high, total - low * (left - 1))
        if lo > hi:
            raise RedrawError("no split of the outputs' sizes fits")
        size = hi if left == 1 else loguniform(rng, lo, hi)
        sizes.append(size)
        total -= size
    rng.shuffle(sizes)
    return sizes


def _large(rng: random.Random, kind: str) -> tuple[list[Round], Output, World]:
    w = World(rng)
    widths = _widths(rng, rng.randint(10, 26))
    count = sum(widths)
    in_big = rng.random() < 0.85
    low, high = LARGE_OUTPUT[0], LARGE_OUTPUT[1] - 1_500
    if in_big:
        spec = _spec(loguniform(rng, low, high), LARGE_OUTPUT[1], Avoid(), fact=True)
        fact = _draw(rng, w, kind, spec, LARGE_OUTPUT)
    else:
        spec = _spec(loguniform(rng, 300, 2_500), SMALL_CAP, Avoid(), fact=True)
        fact = _draw(rng, w, kind, spec, (0, SMALL_CAP))
    assert fact.plant is not None
    avoid = Avoid(fact.plant.needle, fact.plant.ident)
    others = rng.randint(2, 4) - in_big  # the other large outputs
    smalls = []
    for _ in range(count - others - 1):
        spec = _spec(loguniform(rng, 60, 2_500), SMALL_CAP, avoid)
        smalls.append(_draw(rng, w, _other_kind(rng, kind, tuple(SHAPES)), spec, (0, SMALL_CAP)))
    used = (len(fact.text) + sum(len(o.text) for o in smalls)) / 4 + 90 * count
    total_low = max(LARGE_TOKENS[0] + 5_000, used + low * others)
    total_high = min(LARGE_TOKENS[1] - 5_000, used + high * others)
    if total_low > total_high:
        raise RedrawError("the history's size is out of range")
    large = []
    for size in _split(rng, rng.uniform(total_low, total_high) - used, others, low, high):
        spec = _spec(size, LARGE_OUTPUT[1], avoid)
        large.append(_draw(rng, w, _other_kind(rng, kind, LARGE_KINDS), spec, LARGE_OUTPUT))
    outputs = smalls + large
    rng.shuffle(outputs)
    outputs.insert(rng.randint(0, len(outputs)), fact)
    return _rounds(outputs, widths), fact, w


def _mid(rng: random.Random, kind: str) -> tuple[list[Round], Output, World]:
    w = World(rng)
    count = rng.randint(25, 70)
    low, high = MID_OUTPUT[0] + 20, MID_OUTPUT[1] - 500
    chatter = 90 * count
    total = rng.uniform(
        max(MID_TOKENS[0] + 3_000, count * low * 1.3 + chatter),
        min(MID_TOKENS[1] - 6_000, count * high * 0.8 + chatter),
    )
    sizes = [loguniform(rng, low, high) for _ in range(count)]
    for _ in range(6):  # scale towards the total, sizes kept in range
        scale = (total - chatter) / sum(sizes)
        sizes = [min(high, max(low, s * scale)) for s in sizes]
    roll = rng.random()
    if roll < 0.35:  # among the last five outputs
        at = rng.randint(count - 5, count - 1)
    elif roll < 0.6:  # among the first quarter
        at = rng.randint(0, count // 4)
    else:
        at = rng.randint(0, count - 1)
    cap = MID_OUTPUT[1] - 50
    fact = _draw(rng, w, kind, _spec(sizes[at], cap, Avoid(), fact=True), MID_OUTPUT)
    assert fact.plant is not None
    avoid = Avoid(fact.plant.needle, fact.plant.ident)
    outputs = []
    for index, size in enumerate(sizes):
        if index == at:
            outputs.append(fact)
        else:
            other = _other_kind(rng, kind, tuple(SHAPES))
            outputs.append(_draw(rng, w, other, _spec(size, cap, avoid), MID_OUTPUT))
    widths: list[int] = []
    while sum(widths) < count:
        widths += [2] if rng.random() < 0.25 and sum(widths) + 2 <= count else [1]
    return _rounds(outputs, widths), fact, w


def _case(rng: random.Random, kind: str, build: Build) -> Case:
    rounds, fact, w = build(rng, kind)
    assert fact.plant is not None
    plant = fact.plant
    messages, question = assemble(rng, w, rounds, plant.question)
    _check(messages, plant.needle)
    return Case(
        messages=messages,
        needle=plant.needle,
        fact_line=plant.fact_line,
        question=question,
        kind=fact.kind,
        depth=fact.text.index(plant.needle) / len(fact.text),
        output_tokens=len(fact.text) // 4,
    )


def _check(messages: list[Message], needle: str) -> None:
    """The needle once in the history (contents and call arguments), never in the question;
    every call answered once, the ids unique."""
    texts = [str(m.get("content") or "") for m in messages]
    texts += [c["function"]["arguments"] for m in messages for c in m.get("tool_calls") or ()]
    if sum(t.count(needle) for t in texts) != 1 or needle in texts[len(messages) - 1]:
        raise RedrawError("the needle is not exactly once in the history")
    calls = [c["id"] for m in messages for c in m.get("tool_calls") or ()]
    answers = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    if len(set(calls)) != len(calls) or sorted(calls) != sorted(answers):
        raise RedrawError("tool call ids collide")


def tokens(messages: list[Message]) -> int:
    """The history's size: characters of contents and call arguments over 4."""
    chars = sum(len(str(m.get("content") or "")) for m in messages)
    chars += sum(
        len(c["function"]["arguments"]) for m in messages for c in m.get("tool_calls") or ()
    )
    return chars // 4


_SCENARIOS: dict[str, tuple[tuple[str, ...], Build, tuple[int, int]]] = {
    "large": (LARGE_KINDS, _large, LARGE_TOKENS),
    "mid": (tuple(SHAPES), _mid, MID_TOKENS),
}


def _cases(scenario: str, n: int, seed: int) -> list[Case]:
    """``n`` cases of ``scenario``; the fact's shape cycles through the kinds in an order
    drawn from the seed, and a case whose draw fails a constraint is drawn again."""
    kinds, build, bounds = _SCENARIOS[scenario]
    order = list(kinds)
    random.Random(f"agent_large_b/{scenario}/{seed}").shuffle(order)
    cases = []
    for index in range(n):
        rng = random.Random(f"agent_large_b/{scenario}/{seed}/{index}")
        for _ in range(50):
            try:
                case = _case(rng, order[index % len(order)], build)
            except RedrawError:
                continue
            if bounds[0] <= tokens(case.messages) <= bounds[1]:
                break
        else:
            raise RuntimeError(f"no {scenario} case for seed {seed}, index {index}")
        cases.append(case)
    return cases


def large_output_cases(n: int, seed: int = 0) -> list[Case]:
    """``n`` histories of 80k-160k tokens whose fact is usually in one of 2-4 large outputs."""
    return _cases("large", n, seed)


def midsize_cases(n: int, seed: int = 0) -> list[Case]:
    """``n`` histories of 25-70 outputs of 300-4,000 tokens, the fact in one of them."""
    return _cases("mid", n, seed)


def _summary(title: str, cases: list[Case], seconds: float) -> None:
    print(f"\n{title}: {len(cases)} cases, {seconds / len(cases) * 1000:.0f} ms per history")
    print(
        f"{'kind':<11} {'out tok':>8} {'depth':>6} {'total':>8} {'rounds':>6} {'outputs':>7}"
        "  needle, question"
    )
    for case in cases:
        rounds = sum(1 for m in case.messages if m.get("tool_calls"))
        outputs = sum(1 for m in case.messages if m["role"] == "tool")
        print(
            f"{case.kind:<11} {case.output_tokens:>8,} {case.depth:>6.2f} "
            f"{tokens(case.messages):>8,} {rounds:>6} {outputs:>7}  {case.needle!r}"
        )
        print(f"{'':>50}{case.question}")
    depths = sorted(case.depth for case in cases)
    sizes = sorted(case.output_tokens for case in cases)
    totals = sorted(tokens(case.messages) for case in cases)
    print(
        f"kinds {len({case.kind for case in cases})}; depth quartiles "
        f"{', '.join(f'{depths[int(q * (len(depths) - 1))]:.2f}' for q in (0.25, 0.5, 0.75))}; "
        f"output tokens {sizes[0]:,}-{sizes[-1]:,} (median {sizes[len(sizes) // 2]:,}); "
        f"history tokens {totals[0]:,}-{totals[-1]:,}"
    )


if __name__ == "__main__":
    for name, generate in (("large outputs", large_output_cases), ("mid-size", midsize_cases)):
        started = time.perf_counter()
        batch = generate(20, seed=0)
        _summary(name, batch, time.perf_counter() - started)
