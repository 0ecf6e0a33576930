"""Why a chat fit kept, shortened or dropped each unit, as the selection decided it.

The history has a known shape: a system prompt; a first session opened by a dated header, in
which a question about the ledger replica is answered; chatter; a second session with a long
log (kept as an excerpt) and a service listing; a recent turn; and the latest user question,
which asks about the ledger replica again.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from pycupel import ContextBudget, presets
from pycupel.adapters import anthropic, gemini, langchain, openai, responses
from pycupel.conversation.arguments import resolve_structure
from pycupel.conversation.fit import fit_units
from pycupel.conversation.recall import Recall
from pycupel.conversation.versions import Shrink
from pycupel.diagnostics import (
    BudgetExceeded,
    Cause,
    ExcludedItem,
    IncludedItem,
    PinnedOverride,
    SelectionReport,
    Why,
)

Entry = IncludedItem | ExcludedItem


def call(call_id: str, name: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def history() -> list[dict[str, Any]]:
    chatter = "about lunch plans and the weather outside today"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an ops agent."},
        {"role": "user", "content": "[9:00 am on 3 March, 2024] Morning. Let us review billing."},
        {"role": "assistant", "content": "Sure, where do we start?"},
        {"role": "user", "content": "Which port does the ledger replica listen on?"},
        {"role": "assistant", "content": "The ledger replica listens on port 7421."},
        {"role": "user", "content": "Good to know, noted."},
    ]
    for n in range(12):
        messages.append({"role": "user", "content": f"Unrelated chatter number {n} {chatter}."})
        messages.append({"role": "assistant", "content": f"Reply {n}: fine, nothing on {chatter}."})
    log = "\n".join(
        f"2024-03-05T14:{n // 60:02d}:{n % 60:02d}Z INFO worker-{n % 9} heartbeat ok "
        f"queue depth {n % 17}" + (" ledger replica restarted on port 7421" if n == 700 else "")
        for n in range(1500)
    )
    listing = [{"name": f"svc-{n}", "owner": f"team-{n % 5}", "status": "ok"} for n in range(60)]
    messages += [
        {"role": "user", "content": "[2:00 pm on 5 March, 2024] Back again. Check the logs."},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "fetch_logs")]},
        {"role": "tool", "tool_call_id": "c1", "content": log},
        {"role": "assistant", "content": None, "tool_calls": [call("c2", "list_services")]},
        {"role": "tool", "tool_call_id": "c2", "content": json.dumps(listing, indent=2)},
        {"role": "assistant", "content": "The logs and the service list are in."},
        {"role": "user", "content": "Which port does the ledger replica use now?"},
    ]
    return messages


HISTORY = history()
WHOLE = {unit.message_indices: unit.item.tokens for unit in openai.from_messages(HISTORY).units}
LOG, LISTING = (31, 32), (33, 34)


def by_messages(report: SelectionReport) -> dict[tuple[int, ...], tuple[Entry, Why]]:
    """Every entry of the report by the messages its unit holds, with its why."""
    found: dict[tuple[int, ...], tuple[Entry, Why]] = {}
    for entry in (*report.included, *report.excluded):
        why = report.why.get(entry.item)
        assert why is not None, f"no why for {entry.item!r}"
        found[tuple(entry.item.metadata["message_indices"])] = (entry, why)
    return found


def test_every_kept_unit_says_what_took_it() -> None:
    _, report = openai.fit_messages(HISTORY, budget=1_200)
    units = by_messages(report)
    assert units[(0,)][1] == Why(Cause.SYSTEM_PROMPT)
    assert units[(36,)][1] == Why(Cause.LATEST_TURN)
    assert units[(35,)][1] == Why(Cause.RECENT)
    assert report.explain(units[(35,)][0]) == "part of the recent tail"
    # The earlier question about the ledger replica is the best match, with its score.
    question, why = units[(3,)]
    assert why == Why(Cause.RELEVANT)
    assert report.explain(question) == f"relevant to the query (score {question.score:.3f})"
    relevant = [entry.score for entry, why in units.values() if why.cause is Cause.RELEVANT]
    assert question.score == max(relevant)
    # The turns around it come as its neighbours (the answer it got among them), the
    # session's dated header with it.
    assert units[(2,)][1] == Why(Cause.NEIGHBOUR, beside=(3,))
    assert units[(4,)][1] == Why(Cause.NEIGHBOUR, beside=(3,))
    assert report.explain(units[(4,)][0]) == "next to a relevant turn (msg 3)"
    assert units[(1,)][1] == Why(Cause.SESSION_HEADER, beside=(3,))
    assert report.explain(units[(1,)][0]) == "the dated header of the session of msg 3"
    # Every kept unit is included with the specification's reason, unchanged.
    assert {entry.reason.value for entry in report.included} == {"Pinned", "Scored"}


def test_an_excerpt_says_which_lines_it_kept_and_elided_and_their_tokens() -> None:
    _, report = openai.fit_messages(HISTORY, budget=1_200)
    entry, why = by_messages(report)[LOG]
    assert why.version == "excerpt"
    assert why.whole_tokens == WHOLE[LOG]
    parts = why.parts(entry.item)
    kept = [part for part in parts if part.kept]
    gaps = [part for part in parts if not part.kept]
    assert kept
    assert gaps
    # The parts are the excerpt's own account, and cover the log line by line.
    described = entry.item.metadata["excerpt"]
    assert [[p.first_line, p.last_line, p.tokens] for p in kept] == described["kept"]
    assert [[p.first_line, p.last_line, p.tokens, p.ref] for p in gaps] == described["elided"]
    assert parts[0].first_line == 1
    assert parts[-1].last_line == 1_500
    assert all(a.last_line + 1 == b.first_line for a, b in itertools.pairwise(parts))
    # Without a recall, no gap has a ref.
    assert all(part.ref is None for part in gaps)
    elided = sum(part.tokens for part in gaps)
    noun = "gap" if len(gaps) == 1 else "gaps"
    assert report.explain(entry).endswith(
        f"shortened to an excerpt ({entry.item.tokens:,} of {WHOLE[LOG]:,} tokens; "
        f"{len(gaps)} {noun} of {elided:,} tokens elided)"
    )


def test_with_a_recall_every_gap_names_the_ref_its_marker_carries() -> None:
    recall = Recall(scope="conversation-1")
    units = openai.from_messages(HISTORY)
    fitted = fit_units(
        units,
        budget=1_200,
        policy=None,
        deduplicate=False,
        unanswered_tool_calls="error",
        query=None,
        structure=resolve_structure(None, None, None),
        shrink=Shrink(),
        editor=openai.CODEC.editor(units.overhead),
        counter=None,
        recall=recall,
    )
    entry, why = by_messages(fitted.report)[LOG]
    gaps = [part for part in why.parts(entry.item) if not part.kept]
    assert gaps
    assert all(part.ref for part in gaps)
    # Each ref is the one the gap's marker carries, and the recall gives the text back.
    markers = re.findall(r"elided: ref ([0-9a-f]{16})", entry.item.content)
    assert [part.ref for part in gaps] == markers
    assert all(part.ref is not None and recall.lookup(part.ref) for part in gaps)
    assert "with recall refs" in fitted.report.explain(entry)
    assert f"ref {gaps[0].ref}" in gaps[0].describe()


def test_a_placeholder_says_what_it_replaced() -> None:
    _, report = openai.fit_messages(HISTORY, budget=700, shrink=Shrink(excerpts=False))
    shortened = {
        messages: (entry, why)
        for messages, (entry, why) in by_messages(report).items()
        if why.version is not None
    }
    assert LOG in shortened
    for messages, (entry, why) in shortened.items():
        assert why.version == "placeholder"
        assert why.whole_tokens == WHOLE[messages]
        assert report.explain(entry).endswith(
            f"shortened to a placeholder ({entry.item.tokens:,} of {WHOLE[messages]:,} tokens)"
        )
        assert why.cause in {Cause.TOOL_CALL, Cause.RELEVANT, Cause.ROOM_LEFT}


def test_a_dropped_unit_says_what_it_would_have_cost() -> None:
    _, report = openai.fit_messages(HISTORY, budget=700)
    assert report.excluded
    for entry in report.excluded:
        why = report.why[entry.item]
        assert isinstance(entry.reason, BudgetExceeded)  # the specification's reason stays
        assert why.cause is Cause.NO_ROOM
        # What was free is what the window left over, the same figure the reason gives.
        assert why.free_tokens == entry.reason.available_tokens
        words = report.explain(entry)
        assert f"it needs {entry.item.tokens:,} tokens" in words
        assert "pinned" not in words
        assert "displaced" not in words
    used = sum(entry.item.tokens for entry in report.included if not entry.item.pinned)
    free = report.why[report.excluded[0].item].free_tokens
    assert free is not None
    assert used + free <= 700


def test_a_unit_too_large_beside_the_pinned_ones_is_told_as_not_fitting() -> None:
    # The policy's pipeline blames the pinned units (PinnedOverride, as the specification
    # says); the why tells the reader what happened: it needed more than was free.
    output = "\n".join(f"line {n}: ledger replica heartbeat ok" for n in range(60))
    messages = [
        {"role": "system", "content": "You are an ops agent. " * 10},
        {"role": "user", "content": "Fetch the logs."},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "fetch_logs")]},
        {"role": "tool", "tool_call_id": "c1", "content": output},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Nice. Now, which port does the ledger replica use?"},
    ]
    pipeline = presets.chat().build(ContextBudget(max_tokens=600, target_tokens=600))
    _, report = openai.fit_messages(messages, budget=600, policy=pipeline)
    (entry,) = report.excluded
    assert isinstance(entry.reason, PinnedOverride)
    why = report.why[entry.item]
    assert why.cause is Cause.NO_ROOM
    assert why.free_tokens is not None
    assert why.free_tokens < entry.item.tokens
    assert report.explain(entry) == (
        f"the budget ran out: it needs {entry.item.tokens:,} tokens, {why.free_tokens:,} were free"
    )
    kept = {report.why[e.item].cause for e in report.included}
    assert kept == {Cause.SYSTEM_PROMPT, Cause.LATEST_TURN, Cause.SCORED}
    # The JSON keeps the specification's reason, and carries the why in the item's metadata.
    data = report.to_dict()["excluded"][0]
    assert data["reason"]["reason"] == "PinnedOverride"
    assert data["item"]["metadata"]["why"]["cause"] == "no-room"


def events_history(fmt: str, output: str) -> tuple[list[Any], dict[str, Any]]:
    """The same small agent history in ``fmt``, and the system prompt's argument."""
    system = "You are an ops agent."
    turns = [("user", "[9:00 am on 3 March, 2024] Fetch the logs."), ("tool", output)]
    turns += [("assistant", f"Step {n} done, nothing about the weather.") for n in range(6)]
    turns += [("user", "Which port does the ledger replica use?")]
    if fmt in ("openai", "langchain"):
        messages: list[Any] = [{"role": "system", "content": system}]
        for role, text in turns:
            if role == "tool":
                messages.append(
                    {"role": "assistant", "content": None, "tool_calls": [call("c1", "f")]}
                )
                messages.append({"role": "tool", "tool_call_id": "c1", "content": text})
            else:
                messages.append({"role": role, "content": text})
        if fmt == "langchain":
            from langchain_core.messages import convert_to_messages

            return list(convert_to_messages(messages)), {}
        return messages, {}
    if fmt == "responses":
        items: list[Any] = []
        for role, text in turns:
            if role == "tool":
                items.append(
                    {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
                )
                items.append({"type": "function_call_output", "call_id": "c1", "output": text})
            else:
                items.append({"role": role, "content": text})
        return items, {"instructions": system}
    if fmt == "anthropic":
        blocks: list[Any] = []
        for role, text in turns:
            if role == "tool":
                use = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
                blocks.append({"role": "assistant", "content": [use]})
                result = {"type": "tool_result", "tool_use_id": "t1", "content": text}
                blocks.append({"role": "user", "content": [result]})
            elif blocks and blocks[-1]["role"] == role:
                blocks.append(
                    {"role": "user" if role == "assistant" else "assistant", "content": "ok"}
                )
                blocks.append({"role": role, "content": text})
            else:
                blocks.append({"role": role, "content": text})
        return blocks, {"system": system}
    contents: list[Any] = []
    for role, text in turns:
        if role == "tool":
            use = {"functionCall": {"name": "f", "id": "g1", "args": {}}}
            contents.append({"role": "model", "parts": [use]})
            answer = {"functionResponse": {"name": "f", "id": "g1", "response": {"log": text}}}
            contents.append({"role": "user", "parts": [answer]})
        else:
            contents.append(
                {"role": "model" if role == "assistant" else role, "parts": [{"text": text}]}
            )
    return contents, {"system_instruction": system}


FITS: dict[str, Callable[..., Any]] = {
    "langchain": langchain.fit_messages,
    "openai": openai.fit_messages,
    "responses": responses.fit_messages,
    "anthropic": anthropic.fit_messages,
    "gemini": gemini.fit_messages,
}


@pytest.mark.parametrize("fmt", sorted(FITS))
@pytest.mark.parametrize("budget", [150, 400, 100_000])
def test_every_format_explains_every_unit(fmt: str, budget: int) -> None:
    output = "\n".join(f"worker {n} heartbeat ok, queue depth {n % 7}" for n in range(300))
    messages, system = events_history(fmt, output)
    report: SelectionReport = FITS[fmt](messages, budget=budget, **system)[-1]
    for entry in (*report.included, *report.excluded):
        if entry.reason.name == "Filtered":  # the format's own rule, as the reason says
            continue
        why = report.why[entry.item]
        words = report.explain(entry)
        assert words
        assert words != str(entry.reason)
        if isinstance(entry, ExcludedItem):
            assert why.cause in {Cause.NO_ROOM, Cause.DUPLICATE}
        else:
            assert why.cause not in {Cause.NO_ROOM, Cause.DUPLICATE}
    assert {report.why[e.item].cause for e in report.included if e.item.pinned} <= {
        Cause.SYSTEM_PROMPT,
        Cause.LATEST_TURN,
    }
