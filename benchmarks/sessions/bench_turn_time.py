"""Time of one turn: a session's incremental fit against LangChain's ``trim_messages``.

    python benchmarks/sessions/bench_turn_time.py [--sizes 100 1000 10000] [--turns 15]
        [--usage] [--before REV [--every-turn]] [--store sqlite|redis] [--profile]

For each history size N, the OpenAI history of ``bench_messages.py`` (a system prompt, user /
assistant turns, a tool call answered in about one assistant turn in six, counts precomputed)
is built; an ``openai.Session`` with a quarter of the history's tokens as its budget is
brought up to N messages, then each timed turn appends a user and an assistant message of
random words (so every turn brings a new query for the recall zone) and calls ``fit`` with
the whole history, what an agent loop does. ``trim_messages(strategy="last")`` runs on the
same histories as LangChain messages with the same counts. With ``--usage`` each turn also
records a provider usage (the estimate plus 10 %), so the calibrated path runs.

With ``--before REV`` a session of pycupel as of git revision ``REV`` (``_before.py``) takes
the same turns, and every turn's window (messages, predicted and cached tokens, report) is
checked equal to the current one's. The calls take turns within each round, the two
revisions taking the first place in alternate rounds (the first call after the untimed
rebuild of the LangChain messages runs on cold caches, about 10 % slower at 100 messages);
the table gives median wall-clock and CPU times per turn and the ratios of median CPU times.
The turns' user messages ask nothing (no question mark), so a session re-decides its recall
zone only when a message's best match lies far outside the window (recall on need); against
a revision from before recall on need, ``--every-turn`` gives the current session
``recall_every_turn=True`` so that both take the same decisions and their windows compare.

With ``--store sqlite`` (a WAL file in a temporary folder) or ``--store redis`` (the server at
``--redis-url``, default ``$PYCUPEL_REDIS_URL``), two more sessions take the same turns with
their state in the store: one object serving every turn (``store``: what one worker serving
a conversation pays, a load of the version and a save after ``fit`` and after
``record_usage``), and a new ``Session`` object for every turn (``reload``: what a worker that
has never seen the conversation pays, the state read and the history parsed again). Every
turn's window of both is checked equal to the in-memory session's; the table adds their
times and their ratios to the in-memory session's CPU time, and the stored state's size.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import os
import pstats
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

BENCHMARKS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCHMARKS))
sys.path.insert(0, str(BENCHMARKS.parent / "src"))

from _before import load_before  # noqa: E402
from _harness import format_table, machine_summary  # noqa: E402
from bench_messages import WORDS, history, langchain_case, precompute  # noqa: E402
from pycupel.adapters import openai  # noqa: E402
from pycupel.session import RedisStore, SessionStore, SQLiteStore  # noqa: E402


def turns(size: int, count: int) -> list[dict[str, Any]]:
    """The history of ``size`` messages and ``count`` more turns of a user and an assistant."""
    rng = random.Random(size)
    messages = history(size)
    for turn in range(count):
        for role in ("user", "assistant"):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 120)))
            messages.append({"role": role, "content": f"turn {turn}: {words}"})
    return messages


class Turns:
    """One session taking turns over a growing history (``openai`` of some revision)."""

    def __init__(
        self,
        adapter: ModuleType,
        messages: list[dict[str, Any]],
        size: int,
        budget: int,
        *,
        usage: bool,
        options: dict[str, Any] | None = None,
    ) -> None:
        counter, _ = precompute(messages)

        def build() -> Any:
            return adapter.Session(budget=budget, counter=counter, **(options or {}))

        self.build = build
        self.session = build()
        self.messages = messages
        self.length = size
        self.usage = usage
        self.windows: list[Any] = []
        self._fit(size)

    def _fit(self, length: int) -> None:
        window = self.session.fit(self.messages[:length])
        if self.usage:
            prompt = int(window.report.estimated_tokens * 1.1) + 3
            self.session.record_usage({"prompt_tokens": prompt})
        self.windows.append(window)

    def turn(self) -> None:
        self.length += 2
        self._fit(self.length)


class ReloadTurns(Turns):
    """Every turn taken by a new session object that loads the state from the store (a
    worker that has never seen the conversation)."""

    def turn(self) -> None:
        self.session = self.build()
        super().turn()


def open_store(kind: str, url: str | None, folder: Path) -> SessionStore:
    if kind == "sqlite":
        return SQLiteStore(folder / "sessions.db")
    if not url:
        raise SystemExit("--store redis needs --redis-url or PYCUPEL_REDIS_URL")
    return RedisStore(url)


def same_window(now: Any, before: Any) -> bool:
    """Whether two revisions' windows are the same (messages, tokens, the whole report)."""
    if (now.messages, now.tokens, now.cached_tokens, now.compacted) != (
        before.messages,
        before.tokens,
        before.cached_tokens,
        before.compacted,
    ):
        return False
    fields = [name for name in type(now.report).__slots__ if name != "selection"]
    if [getattr(now.report, f) for f in fields] != [getattr(before.report, f) for f in fields]:
        return False
    # The specification's entries (a newer report also says why, in words: not compared).
    now_selection, before_selection = now.report.selection, before.report.selection
    if now_selection is None or before_selection is None:
        return now_selection is before_selection
    return all(
        repr(getattr(now_selection, name)) == repr(getattr(before_selection, name))
        for name in ("included", "excluded", "total_candidates", "total_tokens_considered")
    )


def timed(call: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--turns", type=int, default=15, help="timed turns per size")
    parser.add_argument("--usage", action="store_true", help="record a usage every turn")
    parser.add_argument("--before", metavar="REV", help="also run pycupel at git revision REV")
    parser.add_argument(
        "--every-turn",
        action="store_true",
        help="the current session re-decides its recall zone on every user message "
        "(recall_every_turn=True), as sessions before recall on need did",
    )
    parser.add_argument(
        "--store", choices=("sqlite", "redis"), help="also time sessions keeping their state there"
    )
    parser.add_argument("--redis-url", default=os.environ.get("PYCUPEL_REDIS_URL"))
    parser.add_argument("--profile", action="store_true", help="cProfile the timed turns")
    parser.add_argument("--sort", default="tottime", help="the profile's order (pstats keys)")
    parser.add_argument("--lines", type=int, default=25, help="the profile's lines")
    args = parser.parse_args(argv)
    before = None
    if args.before:
        before = importlib.import_module(f"{load_before(args.before).__name__}.adapters.openai")
    print(machine_summary())
    warmup = 2
    rows = []
    folder = Path(tempfile.mkdtemp(prefix="pycupel-bench-"))
    store = open_store(args.store, args.redis_url, folder) if args.store else None
    for size in args.sizes:
        messages = turns(size, args.turns + warmup)
        _, budget = precompute(messages[:size])
        options = {"recall_every_turn": True} if args.every_turn else None
        now = Turns(openai, messages, size, budget, usage=args.usage, options=options)
        old = Turns(before, messages, size, budget, usage=args.usage) if before else None
        stored = reloaded = None
        if store is not None:
            for key in (f"bench-{size}", f"bench-reload-{size}"):
                store.delete(key)
            stored = Turns(
                openai,
                messages,
                size,
                budget,
                usage=args.usage,
                options={**(options or {}), "store": store, "key": f"bench-{size}"},
            )
            reloaded = ReloadTurns(
                openai,
                messages,
                size,
                budget,
                usage=args.usage,
                options={**(options or {}), "store": store, "key": f"bench-reload-{size}"},
            )
        trim, _ = langchain_case(messages[:size], budget)
        # trim_messages on the same growing history: rebuild its case each turn, untimed.
        times: dict[str, list[tuple[float, float]]] = {
            "now": [],
            "trim": [],
            "before": [],
            "store": [],
            "reload": [],
        }
        profiler = cProfile.Profile(time.process_time) if args.profile else None
        for round_ in range(args.turns + warmup):
            trim, _ = langchain_case(messages[: size + 2 * (round_ + 1)], budget)
            # The two revisions take the first place (right after the untimed rebuild of the
            # LangChain messages, which leaves the caches cold) in alternate rounds.
            sample_before = None
            if old is not None and round_ % 2:
                sample_before = timed(old.turn)
            if profiler is not None:
                profiler.enable()
            sample_now = timed(now.turn)
            if profiler is not None:
                profiler.disable()
            sample_trim = timed(trim)
            if old is not None and not round_ % 2:
                sample_before = timed(old.turn)
            if old is not None and not same_window(now.windows[-1], old.windows[-1]):
                print(f"DIFFERENT WINDOWS at {size} messages, turn {round_ + 1}")
                return 1
            samples = {}
            for name, turns_ in (("store", stored), ("reload", reloaded)):
                if turns_ is not None:
                    samples[name] = timed(turns_.turn)
                    if not same_window(now.windows[-1], turns_.windows[-1]):
                        print(f"DIFFERENT WINDOWS ({name}) at {size} messages, turn {round_ + 1}")
                        return 1
            if round_ >= warmup:
                times["now"].append(sample_now)
                times["trim"].append(sample_trim)
                if sample_before is not None:
                    times["before"].append(sample_before)
                for name, sample in samples.items():
                    times[name].append(sample)
        wall = {key: statistics.median(t[0] for t in v) * 1000 for key, v in times.items() if v}
        cpu = {key: statistics.median(t[1] for t in v) * 1000 for key, v in times.items() if v}
        row = [
            f"{size:,}",
            f"{wall['now']:.2f} / {cpu['now']:.2f}",
            f"{wall['trim']:.2f} / {cpu['trim']:.2f}",
            f"{cpu['now'] / cpu['trim']:.2f}x",
        ]
        if old is not None:
            row += [
                f"{wall['before']:.2f} / {cpu['before']:.2f}",
                f"{cpu['before'] / cpu['now']:.2f}x",
            ]
        if store is not None:
            found = store.load(f"bench-{size}")
            state = len(found.state) if found is not None and found.state is not None else 0
            row += [
                f"{wall['store']:.2f} / {cpu['store']:.2f}",
                f"{cpu['store'] / cpu['now']:.2f}x",
                f"{wall['reload']:.2f} / {cpu['reload']:.2f}",
                f"{cpu['reload'] / cpu['now']:.2f}x",
                f"{state:,}",
            ]
        rows.append(row)
        if profiler is not None:
            print(f"--- {size:,} messages, {args.turns + warmup} turns")
            pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.lines)
    header = [
        "messages",
        "session turn ms (median / CPU)",
        "trim_messages ms (median / CPU)",
        "turn / trim (CPU)",
    ]
    if before is not None:
        header += ["before turn ms (median / CPU)", "before / now (CPU)"]
    if store is not None:
        header += [
            f"{args.store} turn ms (median / CPU)",
            "store / now (CPU)",
            "reload turn ms (median / CPU)",
            "reload / now (CPU)",
            "state bytes",
        ]
    print(format_table(header, rows))
    if store is not None:
        print("every turn's window with the store equal to the in-memory session's: yes")
    if before is not None:
        print("every turn's window equal to the earlier revision's: yes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
