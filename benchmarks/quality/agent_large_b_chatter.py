"""The conversation around the tool outputs of ``agent_large_b``: the system message, the
user's task, the assistant's reasoning before each round of tool calls, the user's
occasional interjections, the closing summary and the final question. None of it states a
value from an output, so the needle stays in its output alone."""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass
from typing import Any

from agent_large_b_world import Output, World

Message = dict[str, Any]

_SYSTEM = (
    "You are the operations assistant of the platform team, working as an SRE and data "
    "analyst. Tools: kubectl_get and kubectl_describe (Kubernetes objects), run_sql (the ops "
    "inventory and the warehouse), fetch_metrics (Prometheus and the SLO store), http_get "
    "(internal HTTP APIs and the wiki), tail_logs (syslog, nginx, Loki and pod logs), "
    "search_docs (runbooks), web_search and read_config (configuration files on hosts). "
    "Check with the tools before you state a value, quote the values you rely on, and say so "
    "when the data is inconclusive. Never change anything in production without approval."
)
_TASKS = (
    "{svc} in {region} has been returning 5xx since about {clock} UTC and its p99 went from "
    "300 ms to over 2 s. Can you find out what changed?",
    "I need a capacity review of the {db} databases before quarterly planning: sizes, "
    "connections, replica lag and anything close to its limits.",
    "Customers in {region} report slow checkouts. Please look at {svc} and its dependencies "
    "and tell me where the time goes.",
    "Security wants an inventory of certificates and rotation settings for everything "
    "{team} owns. Can you pull together what is configured and what expires soon?",
    "On-call got paged overnight for {svc} crash-looping in {region}. Work out the root cause "
    "and whether it can happen again.",
    "Finance asked why storage costs went up last month. Look at retention settings, tenant "
    "quotas and the biggest topics and tables.",
    "Before we move {svc} to the new cluster in {region}, collect its current setup: replicas, "
    "limits, timeouts, schedules and whatever else we need to carry over.",
    "Consumer lag on {svc} keeps growing in {region}. Find the bottleneck, please.",
)
_OBSERVATIONS = (
    "That output is long; most of it looks routine.",
    "Nothing there points at {svc} directly.",
    "The {region} entries look different from the rest and are worth a closer look.",
    "This matches what we saw in the previous output.",
    "No errors in that window, so a config push is unlikely.",
    "{svc} shows up a lot, but mostly as a caller rather than the failing side.",
    "That rules out the obvious suspects.",
    "Noted; I'll come back to it if the other leads go nowhere.",
    "The timing lines up roughly with the last deploy of {svc}.",
    "Mixed picture: a few outliers, nothing systematic yet.",
    "Good, that part looks healthy.",
)
_REASONS = (
    "to see whether anything stands out",
    "to cross-check the previous output",
    "for the current values",
    "to rule it out",
    "so that we have the full picture",
    "before drawing conclusions",
)
_INTERJECTIONS = (
    "Keep going, but skip the staging namespaces.",
    "Also keep an eye on {region}, we had reports from there too.",
    "Any news? The incident channel is asking.",
    "Don't restart anything yet, just look.",
    "FYI {team} says they deployed something around that time.",
    "Can you also check whether the batch jobs are affected?",
    "Thanks, this is useful. Continue.",
    "Is {svc} involved at all?",
)
_ACKS = ("Understood.", "Will do.", "Noted.", "Sure.", "OK.")
_SUMMARIES = (
    "Summary so far: I went through {n} tool outputs. {svc} in {region} is the main lead; the "
    "other services look healthy. I can dig further into any of the outputs above.",
    "Here is where things stand after {n} tool calls: no single root cause yet, but the data "
    "for {region} is the most unusual. Tell me what to focus on next.",
    "I have collected what you asked for ({n} tool outputs above). Nothing is changed; the "
    "details are in the outputs, and I can pull specific values out of them.",
)
_LEADS = ("", "", "One more thing: ", "Quick check before I write this up: ",
          "Unrelated, but while you have the data: ", "Also, ")  # fmt: skip


@dataclass(frozen=True)
class Round:
    """The outputs answering one assistant message's calls."""

    outputs: list[Output]


def _slots(w: World) -> dict[str, str]:
    rng = w.rng
    return {
        "svc": rng.choice((w.focus_service, w.service())),
        "region": rng.choice((w.focus_region, w.region())),
        "team": w.team(),
        "db": w.database(),
        "clock": f"{rng.randint(0, 23):02d}:{rng.choice((0, 10, 15, 20, 30, 40, 45, 50)):02d}",
    }


def _intent(out: Output) -> str:
    a = out.args
    if out.tool == "kubectl_get":
        return f"list the {a['resource']} in {a['context']}"
    if out.tool == "kubectl_describe":
        return "describe the backend pods"
    if out.tool == "run_sql":
        table = a["query"].split(" FROM ")[1].split()[0]
        return f"query {table} in {a['database']}"
    if out.tool == "fetch_metrics":
        return f"pull {a['query']} over the last {a['window']}"
    if out.tool == "http_get":
        return f"fetch {a['url']}"
    if out.tool == "tail_logs":
        return f"tail the {a['source']} logs of the last {a['since']}"
    if out.tool == "search_docs":
        return f'search the runbooks for "{a["query"]}"'
    if out.tool == "web_search":
        return f'search the web for "{a["query"]}"'
    return f"read {a['path']} on {a['host']}"


def _call_id(rng: random.Random) -> str:
    return "call_" + "".join(rng.choices(string.ascii_letters + string.digits, k=24))


def _reasoning(rng: random.Random, w: World, outputs: list[Output], first: bool) -> str:
    intents = [_intent(o) for o in outputs]
    plan = intents[0] if len(intents) == 1 else f"{intents[0]} and, in parallel, {intents[1]}"
    lead = rng.choice(("Let me", "Next I'll", "I'll", "Now I'll"))
    text = f"{lead} {plan} {rng.choice(_REASONS)}."
    if first:
        return f"I'll start broad and narrow down. {text}"
    if rng.random() < 0.7:
        return f"{rng.choice(_OBSERVATIONS).format(**_slots(w))} {text}"
    return text


def assemble(
    rng: random.Random, w: World, rounds: list[Round], question: str
) -> tuple[list[Message], str]:
    """The history around ``rounds``, ending with ``question`` (with a lead-in, sometimes);
    returns the messages and the final question as asked."""
    messages: list[Message] = [
        {"role": "system", "content": _SYSTEM},
        {"role": "user", "content": rng.choice(_TASKS).format(**_slots(w))},
    ]
    acknowledge = False
    for index, round_ in enumerate(rounds):
        text = _reasoning(rng, w, round_.outputs, index == 0)
        if acknowledge:
            text = f"{rng.choice(_ACKS)} {text}"
        ids = [_call_id(rng) for _ in round_.outputs]
        calls = [
            {"id": i, "type": "function",
             "function": {"name": o.tool, "arguments": json.dumps(o.args)}}
            for i, o in zip(ids, round_.outputs, strict=True)
        ]  # fmt: skip
        messages.append({"role": "assistant", "content": text, "tool_calls": calls})
        messages += [
            {"role": "tool", "tool_call_id": i, "content": o.text}
            for i, o in zip(ids, round_.outputs, strict=True)
        ]
        acknowledge = index + 1 < len(rounds) and rng.random() < 0.15
        if acknowledge:
            messages.append(
                {"role": "user", "content": rng.choice(_INTERJECTIONS).format(**_slots(w))}
            )
    outputs = sum(len(r.outputs) for r in rounds)
    summary = rng.choice(_SUMMARIES).format(n=outputs, **_slots(w))
    messages.append({"role": "assistant", "content": summary})
    lead = rng.choice(_LEADS)
    asked = f"{lead}{question[0].lower()}{question[1:]}" if lead else question
    messages.append({"role": "user", "content": asked})
    return messages, asked
