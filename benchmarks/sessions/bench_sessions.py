"""Sessions against per-turn trimming: input cost with prompt caching, cache reads, recall.

    python benchmarks/sessions/bench_sessions.py [--budgets 4000,16000] [--locomo 10] [--agents 3]
        [--histories 2] [--large 3] [--strategies session,fit_messages] [--shrink] [--phases]
        [--by-kind] [--set recall_share=0.15] [--first 2]

Every conversation is replayed turn by turn (each request is the whole history so far) with
these strategies (``--strategies`` picks some; ``sliding``, the yardstick, always runs), all
in the Anthropic Messages format with the adapter's default counter:

* ``session``: one ``anthropic.Session(budget=B)`` per conversation, its ``cache_control``
  breakpoints included, the usage of each request recorded;
* ``session-recall``: the same with ``prefer="recall"`` (one-off requests for the questions
  the window serves worse than a fresh fit, counted in the ``fresh fits`` column);
* ``fit_messages``: ``anthropic.fit_messages(history, budget=B)`` on every turn (defaults);
* ``sliding``: the newest whole units (a tool call with its result) that fit, every turn;
* ``full-then-sliding``: the whole history while it fits, then sliding;
* ``full``: the whole history on every turn, whatever the budget (a reference: its requests
  are not held to the budget).

With ``--shrink``, two more sessions: ``session+placeholders`` (``shrink=True``: a compaction
keeps older tool results as placeholders after their calls, long ones truncated) and
``session+summary`` (``summarize=`` a deterministic local summarizer, :func:`local_summary`:
no model is called). A second table counts, for every session strategy, the cache breaks
measured from the rendered requests (a request that does not extend the previous one, block
for block), how many fell on a compacting turn, how many the session reported for another
reason (a recall zone that moved), how many are unexplained (must be 0), and the
summarizer's calls (must equal the compactions that dropped something).

Input cost is priced at ``claude-sonnet-4-5`` rates by :mod:`pycupel.analytics.cost`, which
measures the cached prefix from the rendered requests themselves (the longest run of leading
messages an earlier request wrote at a breakpoint), not from the session's own claim. The
baselines have no breakpoints of their own: each is priced both without caching and with a
breakpoint at the end of every request, and the cheaper of the two counts. Cost is reported
relative to the sliding window's over the same conversations, and relative to
``fit_messages``' over the same turns: the replay alone, and the replay followed by the
questions asked in a row (every one of them a turn).

Evidence recall: after the replay, every question of the conversation is appended as the final
user message and each strategy fits that history; recall is the share of the question's
evidence messages kept, averaged over questions. Each such question replaces the one before
(an edit of the last message), which makes a session decide its recall zone afresh. ``recall
in a row`` asks the questions as a user would, one after another on a fresh replay of the
conversation, each answered by a short assistant message before the next: a session then
serves each question from the zone it kept or moved, and compacts as the history grows.
Every request of every strategy is checked: within the budget (as the adapter counts it) and
valid (tool calls paired).

With ``--phases``, a third table splits each strategy's cost at the first turn whose whole
history exceeds the budget: before it, every strategy that keeps what fits sends the same
append-only requests (so its cost is about sliding's by construction); after it, the
strategies differ. The ``fitting share`` column is the part of sliding's total cost spent
before that turn: no strategy that sends the whole history while it fits can go below it.
With ``--by-kind``, a table splits each session's cost by the kind of turn (the cache break
its window reports: ``extends`` for none, ``recall`` for a recall zone that moved,
``compaction``, ``edit``), with the mean tokens read from the cache and sent uncached.
``--set OPTION=VALUE`` passes a ``Session`` option to every session strategy (repeatable),
and ``--first N`` skips the first N LoCoMo conversations (a held-out set for settings chosen
on the first ones).

Data: LoCoMo (``../shared/locomo/locomo10.zip``, read in place), generated agent histories
of 340 tool rounds (about 690 messages) with planted facts, and with ``--histories`` /
``--large`` agent histories from two other generators (``pycupel.histories.agent_history``,
and ``benchmarks/quality/agent_large_a.py`` / ``agent_large_b.py``' mid-size cases, whose
recall is whether the fact's needle is in the window's text); see ``data.py``. Timing: one
longer agent history (520 tool rounds, about 1,060 messages) is replayed per budget with the
session alone, and the median milliseconds of ``Session.fit`` and of ``fit_messages`` are
taken over its turns at 900-1,100 messages (the replays above stop short of 1,000 messages).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from data import (
    Conversation,
    Question,
    agent_history,
    histories,
    large_cases,
    load_locomo,
    locomo_path,
    message_text,
)

from _harness import format_table, machine_summary
from pycupel.adapters import anthropic
from pycupel.analytics import CostReport, RenderedRequest, render_request, replay_cost

PRICE = "claude-sonnet-4-5"
STRATEGIES = ("session", "session-recall", "fit_messages", "sliding", "full-then-sliding", "full")
SHRINKING = ("session+placeholders", "session+summary")
ALL = (*STRATEGIES, *SHRINKING)


def local_summary(dropped: list[dict[str, Any]], previous: str | None) -> str:
    """A deterministic stand-in for a model's summary: the opening words of each dropped
    user turn and the tools whose results were dropped, folded into the previous text."""
    asked: list[str] = []
    tools = 0
    for message in dropped:
        content = message["content"]
        if isinstance(content, str):
            if message["role"] == "user":
                asked.append(" ".join(content.split()[:8]))
        else:
            tools += sum(1 for block in content if block.get("type") == "tool_result")
    lines = [previous] if previous else []
    lines.append(f"Earlier: {tools} tool results; " + " | ".join(asked[-6:]))
    return "\n".join(lines)[-1_200:]


Request = tuple[Any, list[Any]]  # (system, messages)


@dataclasses.dataclass
class Tally:
    requests: dict[str, list[list[RenderedRequest]]] = dataclasses.field(
        default_factory=lambda: {name: [] for name in ALL}
    )
    # The replay followed by the questions asked in a row, per conversation.
    with_questions: dict[str, list[list[RenderedRequest]]] = dataclasses.field(
        default_factory=lambda: {name: [] for name in ALL}
    )
    fresh_fits: dict[str, int] = dataclasses.field(default_factory=lambda: dict.fromkeys(ALL, 0))
    recall: dict[str, list[float]] = dataclasses.field(
        default_factory=lambda: {name: [] for name in ALL}
    )
    in_a_row: dict[str, list[float]] = dataclasses.field(
        default_factory=lambda: {name: [] for name in ALL}
    )
    compactions: dict[str, int] = dataclasses.field(default_factory=lambda: dict.fromkeys(ALL, 0))
    # Per session strategy and conversation: each turn's kind (its window's cache break).
    kinds: dict[str, list[list[str]]] = dataclasses.field(
        default_factory=lambda: {name: [] for name in ALL}
    )
    invalid: dict[str, int] = dataclasses.field(default_factory=lambda: dict.fromkeys(ALL, 0))
    # Per session strategy: measured breaks, at compactions, reported otherwise, unexplained.
    breaks: dict[str, list[int]] = dataclasses.field(
        default_factory=lambda: {name: [0, 0, 0, 0] for name in ALL}
    )
    summaries: int = 0
    # Per conversation: the number of leading turns whose whole history fits the budget.
    fitting: list[int] = dataclasses.field(default_factory=list)
    # Per strategy: tool calls of the history visible in the final windows, and all of them.
    visible: dict[str, list[int]] = dataclasses.field(
        default_factory=lambda: {name: [0, 0] for name in ALL}
    )


def sessions(
    budget: int,
    user_first: bool,
    tally: Tally,
    strategies: Sequence[str],
    settings: Mapping[str, float | bool] | None = None,
) -> dict[str, anthropic.Session]:
    """The session strategies of this run, one fresh session each."""

    def counted(dropped: list[dict[str, Any]], previous: str | None) -> str:
        tally.summaries += 1
        return local_summary(dropped, previous)

    options: dict[str, dict[str, Any]] = {
        "session": {},
        "session-recall": {"prefer": "recall"},
        "session+placeholders": {"shrink": True},
        "session+summary": {"summarize": counted},
    }
    return {
        name: anthropic.Session(
            budget=budget,
            start_with_user=user_first,
            **{**(settings or {}), **options[name]},
        )
        for name in strategies
        if name.startswith("session")
    }


def count_break(
    tally: Tally, name: str, before: RenderedRequest | None, now: RenderedRequest, window: Any
) -> None:
    """Classify the request against the previous one (measured from the rendered blocks)."""
    if before is None:
        return
    extends = now.blocks[: len(before.blocks)] == before.blocks
    if extends:
        return
    counts = tally.breaks[name]
    counts[0] += 1
    if window.compacted:
        counts[1] += 1
    elif window.report.cache_break is not None:
        counts[2] += 1
    else:
        counts[3] += 1


class Sliding:
    """Newest whole units that fit; the units of the full history are computed once."""

    def __init__(self, messages: list[dict[str, Any]], budget: int, *, user_first: bool) -> None:
        units = anthropic.from_messages(messages, allow_unanswered=True)
        self.spans = [
            (u.message_indices[0], u.message_indices[-1] + 1, u.item.tokens, u.first_role)
            for u in units
        ]
        self.budget = budget - anthropic.DEFAULT_OVERHEAD.per_request
        self.user_first = user_first

    def fit(self, history: Sequence[Any], *, whole_first: bool) -> list[Any]:
        length = len(history)
        spans = [span for span in self.spans if span[1] <= length]
        extra = history[spans[-1][1] :] if spans else list(history)
        total = sum(span[2] for span in spans)
        if whole_first and total <= self.budget and not extra:
            return list(history)
        kept = []
        used = 0
        for span in reversed(spans):
            if used + span[2] > self.budget:
                break
            kept.append(span)
            used += span[2]
        kept.reverse()
        while self.user_first and kept and kept[0][3] == "assistant":
            kept.pop(0)
        return [message for start, end, _, _ in kept for message in history[start:end]]


def check(tally: Tally, name: str, request: Request, budget: int) -> RenderedRequest:
    system, messages = request
    rendered = render_request(messages, format="anthropic", system=system)
    try:
        anthropic.from_messages(messages, system=system)
        valid = rendered.total_tokens <= budget or name == "full"
    except Exception:
        valid = False
    if not valid:
        tally.invalid[name] += 1
    return rendered


def replay(
    conversation: Conversation,
    budget: int,
    tally: Tally,
    *,
    user_first: bool,
    strategies: Sequence[str] = STRATEGIES,
    settings: Mapping[str, float | bool] | None = None,
) -> None:
    messages = conversation.messages
    fitted_sessions = sessions(budget, user_first, tally, strategies, settings)
    sliding = Sliding(messages, budget, user_first=user_first)
    rendered: dict[str, list[RenderedRequest]] = {name: [] for name in strategies}
    kinds: dict[str, list[str]] = {name: [] for name in fitted_sessions}
    whole = render_request(messages, format="anthropic")
    for end in conversation.turns:
        history = messages[:end]
        for name, each in fitted_sessions.items():
            window = each.fit(history)
            request = check(tally, name, (window.system, window.messages), budget)
            each.record_usage({"input_tokens": request.total_tokens, "cache_read_input_tokens": 0})
            tally.compactions[name] += window.compacted
            tally.fresh_fits[name] += window.report.cache_break == "fresh-fit"
            before = rendered[name][-1] if rendered[name] else None
            count_break(tally, name, before, request, window)
            rendered[name].append(dataclasses.replace(request, compacted=window.compacted))
            kinds[name].append(window.report.cache_break or "extends")
        if "fit_messages" in rendered:
            _, fitted, _ = anthropic.fit_messages(
                history, budget=budget, start_with_user=user_first
            )
            rendered["fit_messages"].append(check(tally, "fit_messages", (None, fitted), budget))
        rendered["sliding"].append(
            check(tally, "sliding", (None, sliding.fit(history, whole_first=False)), budget)
        )
        if "full-then-sliding" in rendered:
            rendered["full-then-sliding"].append(
                check(
                    tally,
                    "full-then-sliding",
                    (None, sliding.fit(history, whole_first=True)),
                    budget,
                )
            )
        if "full" in rendered:
            # The whole history: a prefix of the conversation rendered once (its messages are
            # counted alone, so slicing gives what rendering each request would).
            rendered["full"].append(
                RenderedRequest(whole.blocks[:end], whole.tokens[:end], whole.fixed_tokens)
            )
    for name in strategies:
        tally.requests[name].append(rendered[name])
    for name, each_kinds in kinds.items():
        tally.kinds[name].append(each_kinds)
    fitting = 0
    for end in conversation.turns:
        if render_request(messages[:end], format="anthropic").total_tokens > budget:
            break
        fitting += 1
    tally.fitting.append(fitting)

    identity = {id(message): position for position, message in enumerate(messages)}
    by_text = {json.dumps(m["content"], sort_keys=True): m for m in messages}
    fitters: dict[str, Callable[[list[Any]], list[Any]]] = {
        **{name: _window_of(each) for name, each in fitted_sessions.items()},
        "fit_messages": lambda h: (
            anthropic.fit_messages(h, budget=budget, start_with_user=user_first).messages
        ),
        "sliding": lambda h: sliding.fit(h, whole_first=False),
        "full-then-sliding": lambda h: sliding.fit(h, whole_first=True),
        "full": list,
    }
    fitters = {name: fitter for name, fitter in fitters.items() if name in strategies}
    for question in conversation.questions:
        history = [*messages, {"role": "user", "content": question.text}]
        for name, fitter in fitters.items():
            window = fitter(history)
            tally.visible[name][0] += len(_tool_uses(window))
            tally.visible[name][1] += len(_tool_uses(history))
            tally.recall[name].append(_recall(question, window, identity, by_text))

    # The same questions asked in a row, the sessions fresh and replayed to the end again.
    systems: dict[str, Callable[[], Any]] = {}
    for name, each in sessions(budget, user_first, Tally(), strategies, settings).items():
        for end in conversation.turns:
            _record(each, each.fit(messages[:end]))
        fitters[name] = _recording(each, systems, name)
    row = list(messages)
    if row[-1]["role"] == "user":
        row.append({"role": "assistant", "content": ROW_ANSWER})
    asked: dict[str, list[RenderedRequest]] = {name: [] for name in fitters}
    for question in conversation.questions:
        row.append({"role": "user", "content": question.text})
        for name, fitter in fitters.items():
            window = fitter(row)
            system = systems[name]() if name in systems else None
            asked[name].append(check(tally, name, (system, window), budget))
            tally.in_a_row[name].append(_recall(question, window, identity, by_text))
        row.append({"role": "assistant", "content": ROW_ANSWER})
    for name in fitters:
        tally.with_questions[name].append(rendered[name] + asked[name])


ROW_ANSWER = "Let me think about that."
"""The assistant's reply between questions asked in a row (the same for every strategy)."""


def _record(session: anthropic.Session, window: Any) -> Any:
    """Record the provider's count of the window's request, as the replay does."""
    rendered = render_request(window.messages, format="anthropic", system=window.system)
    session.record_usage({"input_tokens": rendered.total_tokens, "cache_read_input_tokens": 0})
    return window


def _recording(
    session: anthropic.Session, systems: dict[str, Callable[[], Any]], name: str
) -> Callable[[list[Any]], list[Any]]:
    latest: list[Any] = [None]
    systems[name] = lambda: latest[0]

    def fit(history: list[Any]) -> list[Any]:
        window = _record(session, session.fit(history))
        latest[0] = window.system
        return window.messages

    return fit


def _recall(
    question: Question, window: Sequence[Any], identity: dict[int, int], by_text: dict[str, Any]
) -> float:
    """The share of the question's evidence the window keeps (its needle in the window's
    text, when it has one; else its evidence messages, as the history's objects)."""
    if question.needle is not None:
        return float(any(question.needle in message_text(m) for m in window))
    kept = {identity.get(id(_original(m, by_text)), -1) for m in window}
    hits = sum(1 for position in question.evidence if position in kept)
    return hits / len(question.evidence)


def _tool_uses(messages: Sequence[Any]) -> set[str]:
    return {
        block["id"]
        for message in messages
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use"
    }


def _window_of(session: anthropic.Session) -> Callable[[list[Any]], list[Any]]:
    return lambda history: session.fit(history).messages


def _original(message: Any, by_text: dict[str, Any]) -> Any:
    """The history's message object behind a window's message (breakpoints are on copies)."""
    content = message["content"]
    if isinstance(content, list) and any("cache_control" in block for block in content):
        blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in content]
        if len(blocks) == 1 and set(blocks[0]) == {"type", "text"}:
            return by_text.get(json.dumps(blocks[0]["text"]), message)
        return by_text.get(json.dumps(blocks, sort_keys=True), message)
    return message


def time_turns(budget: int) -> tuple[float, float, int]:
    """Median ms of ``Session.fit`` and ``fit_messages`` on the turns at 900-1,100 messages
    of one agent history long enough to reach them (the session replays every turn)."""
    conversation = agent_history(0, steps=520)
    messages = conversation.messages
    session = anthropic.Session(budget=budget, start_with_user=False)
    session_ms: list[float] = []
    fit_ms: list[float] = []
    for end in conversation.turns:
        history = messages[:end]
        started = time.perf_counter()
        window = session.fit(history)
        elapsed = time.perf_counter() - started
        rendered = render_request(window.messages, format="anthropic", system=window.system)
        session.record_usage({"input_tokens": rendered.total_tokens})
        if 900 <= end <= 1100:
            session_ms.append(elapsed * 1000)
            started = time.perf_counter()
            anthropic.fit_messages(history, budget=budget, start_with_user=False)
            fit_ms.append((time.perf_counter() - started) * 1000)
    return statistics.median(session_ms), statistics.median(fit_ms), len(session_ms)


def _ratio(part: float, whole: float) -> str:
    return f"{part / whole:.3f}" if whole else "-"


def _share(counts: list[int]) -> str:
    return f"{counts[0] / counts[1]:.2f}" if counts[1] else "-"


def priced(conversation: list[RenderedRequest], *, baseline: bool) -> CostReport:
    """The conversation's cost report (a baseline: the cheaper of no caching and a
    breakpoint at the end of every request)."""
    plain = replay_cost(conversation, price=PRICE)
    if not baseline:
        return plain
    marked = replay_cost(
        [dataclasses.replace(r, breakpoints=(len(r.blocks),)) for r in conversation],
        price=PRICE,
    )
    return min(plain, marked, key=lambda report: report.total_cost_usd)


def cost(requests: list[list[RenderedRequest]], *, baseline: bool) -> tuple[float, int, int]:
    total = 0.0
    prompt = 0
    read = 0
    for conversation in requests:
        best = priced(conversation, baseline=baseline)
        total += best.total_cost_usd
        prompt += best.prompt_tokens
        read += best.cache_read_tokens
    return total, prompt, read


def phase_costs(
    requests: list[list[RenderedRequest]], fitting: list[int], *, baseline: bool
) -> tuple[float, float]:
    """The cost of the turns whose whole history fits the budget, and of the turns after."""
    before = after = 0.0
    for conversation, leading in zip(requests, fitting, strict=True):
        turns = priced(conversation, baseline=baseline).turns
        before += sum(turn.cost_usd for turn in turns[:leading])
        after += sum(turn.cost_usd for turn in turns[leading:])
    return before, after


def parse_setting(text: str) -> tuple[str, float | bool]:
    """``--set OPTION=VALUE``: a number or true/false for a ``Session`` option."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise SystemExit(f"--set {text!r}: expected OPTION=VALUE")
    if value.lower() in ("true", "false"):
        return name, value.lower() == "true"
    try:
        return name, float(value) if "." in value else int(value)
    except ValueError:
        raise SystemExit(f"--set {text!r}: VALUE must be a number, true or false") from None


def cost_by_kind(
    requests: list[list[RenderedRequest]], kinds: list[list[str]]
) -> list[tuple[str, int, float, float, float]]:
    """A session's turns grouped by kind (its window's cache break, ``extends`` when none):
    turns, share of the session's cost, mean tokens read from the cache and mean tokens
    sent uncached (written or not cached), per kind."""
    grouped: dict[str, list[float]] = {}
    total = 0.0
    for conversation, conversation_kinds in zip(requests, kinds, strict=True):
        turns = priced(conversation, baseline=False).turns
        for turn, kind in zip(turns, conversation_kinds, strict=True):
            entry = grouped.setdefault(kind, [0, 0.0, 0, 0])
            entry[0] += 1
            entry[1] += turn.cost_usd
            entry[2] += turn.cache_read_tokens
            entry[3] += turn.prompt_tokens - turn.cache_read_tokens
            total += turn.cost_usd
    return [
        (kind, int(n), spent / total if total else 0.0, read / n, sent / n)
        for kind, (n, spent, read, sent) in sorted(grouped.items(), key=lambda kv: -kv[1][1])
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budgets", default="4000,16000")
    parser.add_argument("--locomo", type=int, default=10, help="LoCoMo conversations (0-10)")
    parser.add_argument("--agents", type=int, default=3, help="generated agent histories")
    parser.add_argument(
        "--histories",
        type=int,
        default=0,
        help="pycupel.histories.agent_history histories (150 turns, 12 questions each)",
    )
    parser.add_argument(
        "--large",
        type=int,
        default=0,
        help="mid-size cases of each of benchmarks/quality/agent_large_a.py and _b.py",
    )
    parser.add_argument(
        "--strategies",
        default="",
        help="comma-separated strategies to run (default: all); sliding is always run",
    )
    parser.add_argument(
        "--shrink",
        action="store_true",
        help="add session+placeholders and session+summary, and the cache-break table",
    )
    parser.add_argument("--no-timing", action="store_true", help="skip the turn-time table")
    parser.add_argument(
        "--phases",
        action="store_true",
        help="split the cost at the first turn whose whole history exceeds the budget",
    )
    parser.add_argument(
        "--by-kind",
        action="store_true",
        help="split each session's cost by the kind of turn (extends, recall, compaction...)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="a session option for every session strategy (repeatable), e.g. recall_share=0.2",
    )
    parser.add_argument(
        "--first",
        type=int,
        default=0,
        help="skip this many LoCoMo conversations before taking --locomo of them",
    )
    args = parser.parse_args()
    settings = dict(parse_setting(text) for text in args.set)
    strategies = (STRATEGIES[0], *SHRINKING, *STRATEGIES[1:]) if args.shrink else STRATEGIES
    if args.strategies:
        wanted = {*args.strategies.split(","), "sliding"}
        strategies = tuple(name for name in strategies if name in wanted)
    budgets = [int(b) for b in args.budgets.split(",")]
    # Agent windows may open with a tool round (the current Messages API accepts a first
    # assistant turn); LoCoMo keeps the stricter user-first rule, the adapter's default.
    datasets: list[tuple[str, list[Conversation], bool]] = []
    if args.locomo:
        if locomo_path().exists():
            datasets.append(("LoCoMo", load_locomo()[args.first : args.first + args.locomo], True))
        else:
            print(f"LoCoMo not found at {locomo_path()} (set PYCUPEL_LOCOMO); skipped")
    if args.agents:
        agents = [agent_history(seed) for seed in range(args.agents)]
        datasets.append(("agent histories", agents, False))
    if args.histories:
        datasets.append(("pycupel.histories", histories(args.histories), False))
    if args.large:
        datasets.append(("agent_large a+b", large_cases(args.large), False))
    print(machine_summary())
    rows = []
    timing = []
    break_rows = []
    phase_rows = []
    kind_rows = []
    for dataset, conversations, user_first in datasets:
        turns = sum(len(c.turns) for c in conversations)
        questions = sum(len(c.questions) for c in conversations)
        for budget in budgets:
            tally = Tally()
            started = time.perf_counter()
            for conversation in conversations:
                replay(
                    conversation,
                    budget,
                    tally,
                    user_first=user_first,
                    strategies=strategies,
                    settings=settings,
                )
            sliding_cost, _, _ = cost(tally.requests["sliding"], baseline=True)
            fit_cost = fit_asked = 0.0
            if "fit_messages" in strategies:
                fit_cost, _, _ = cost(tally.requests["fit_messages"], baseline=True)
                fit_asked, _, _ = cost(tally.with_questions["fit_messages"], baseline=True)
            sliding_phases = phase_costs(tally.requests["sliding"], tally.fitting, baseline=True)
            for name in strategies:
                own = name.startswith("session")
                total, prompt, read = cost(tally.requests[name], baseline=not own)
                asked, _, _ = cost(tally.with_questions[name], baseline=not own)
                recall = statistics.fmean(tally.recall[name]) if tally.recall[name] else 0.0
                row_recall = statistics.fmean(tally.in_a_row[name]) if tally.in_a_row[name] else 0.0
                rows.append(
                    [
                        f"{dataset} @ {budget:,}",
                        name,
                        f"{total / sliding_cost:.3f}",
                        f"{read / prompt:.0%}" if prompt else "-",
                        str(tally.compactions[name]) if own else "-",
                        str(tally.fresh_fits[name]) if own else "-",
                        f"{recall:.3f}",
                        f"{row_recall:.3f}",
                        _ratio(total, fit_cost),
                        _ratio(asked, fit_asked),
                        str(tally.invalid[name]),
                    ]
                )
                if args.phases:
                    before, after = phase_costs(
                        tally.requests[name], tally.fitting, baseline=not own
                    )
                    phase_rows.append(
                        [
                            f"{dataset} @ {budget:,}",
                            name,
                            f"{sum(tally.fitting)} / {turns}",
                            _ratio(before, sliding_phases[0]),
                            _ratio(after, sliding_phases[1]),
                            f"{sliding_phases[0] / sliding_cost:.3f}",
                            f"{total / sliding_cost:.3f}",
                        ]
                    )
                if own and args.by_kind:
                    for kind, n, share, read, sent in cost_by_kind(
                        tally.requests[name], tally.kinds[name]
                    ):
                        kind_rows.append(
                            [
                                f"{dataset} @ {budget:,}",
                                name,
                                kind,
                                str(n),
                                f"{share:.2f}",
                                f"{read:,.0f}",
                                f"{sent:,.0f}",
                            ]
                        )
                if own and args.shrink:
                    requests = [r for c in tally.requests[name] for r in c]
                    measured, at_compaction, reported, unexplained = tally.breaks[name]
                    break_rows.append(
                        [
                            f"{dataset} @ {budget:,}",
                            name,
                            f"{statistics.fmean(r.total_tokens for r in requests):,.0f}",
                            str(tally.compactions[name]),
                            str(measured),
                            str(at_compaction),
                            str(reported),
                            str(unexplained),
                            str(tally.summaries) if name == "session+summary" else "-",
                            _share(tally.visible[name]),
                        ]
                    )
            print(
                f"{dataset} @ {budget}: {len(conversations)} conversations, {turns} turns, "
                f"{questions} questions, {time.perf_counter() - started:.0f} s",
                flush=True,
            )
    if args.agents and not args.no_timing:
        for budget in budgets:
            session_ms, fit_ms, turns_timed = time_turns(budget)
            timing.append(
                [
                    f"agent history @ {budget:,}",
                    str(turns_timed),
                    f"{session_ms:.2f}",
                    f"{fit_ms:.2f}",
                    f"{fit_ms / session_ms:.0f}x",
                ]
            )
    print()
    print(
        format_table(
            [
                "replay",
                "strategy",
                "cost / sliding",
                "cache reads",
                "compactions",
                "fresh fits",
                "recall at end",
                "recall in a row",
                "cost / fit_messages",
                "with questions / fit_messages",
                "invalid or over",
            ],
            rows,
        )
    )
    if break_rows:
        print()
        print(
            format_table(
                [
                    "replay",
                    "strategy",
                    "mean input tokens",
                    "compactions",
                    "cache breaks (measured)",
                    "at compactions",
                    "reported (recall)",
                    "unexplained",
                    "summarizer calls",
                    "tool calls visible",
                ],
                break_rows,
            )
        )
    if phase_rows:
        print()
        print(
            format_table(
                [
                    "replay",
                    "strategy",
                    "turns fitting",
                    "cost / sliding, fitting",
                    "cost / sliding, after",
                    "fitting share",
                    "cost / sliding",
                ],
                phase_rows,
            )
        )
    if kind_rows:
        print()
        print(
            format_table(
                [
                    "replay",
                    "strategy",
                    "turn kind",
                    "turns",
                    "cost share",
                    "cache reads / turn",
                    "uncached / turn",
                ],
                kind_rows,
            )
        )
    if timing:
        print()
        print(
            format_table(
                [
                    "turns at 900-1,100 messages",
                    "turns",
                    "Session.fit ms",
                    "fit_messages ms",
                    "fit_messages / Session",
                ],
                timing,
            )
        )


if __name__ == "__main__":
    main()
