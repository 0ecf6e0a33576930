"""A policy's ``shrink``: the conversation preset shortens tool results without shrink=True."""

from __future__ import annotations

from typing import Any

import pytest

from pycupel import presets
from pycupel.adapters import openai, variant_name
from pycupel.errors import PolicyError
from pycupel.histories import agent_history
from pycupel.policy import Policy, ScorerSpec, dumps_policy, loads_policy
from pycupel.shrink import Shrink

HISTORY = agent_history(turns=60, seed=2)
BUDGET = openai.count_tokens(HISTORY.messages) * 15 // 100


def names(report: Any) -> set[str]:
    return {variant_name(entry.item) for entry in report.included}


def test_the_conversation_preset_carries_placeholders() -> None:
    assert presets.conversation().shrink == Shrink()
    assert presets.chat().shrink is None


def test_fitting_with_the_conversation_preset_shrinks_without_being_asked() -> None:
    fitted, report = openai.fit_messages(
        HISTORY.messages, budget=BUDGET, policy=presets.conversation()
    )
    assert "placeholder" in names(report)
    openai.from_messages(fitted)
    assert openai.count_tokens(fitted) <= BUDGET
    # Switched off by the call, or absent from the policy: nothing is shortened.
    unshrunk, off = openai.fit_messages(
        HISTORY.messages, budget=BUDGET, policy=presets.conversation(), shrink=False
    )
    _, chat = openai.fit_messages(HISTORY.messages, budget=BUDGET, policy=presets.chat())
    assert names(off) == names(chat) == {"full"}

    # More of the history's tool calls stay visible, and the planted fact is still kept.
    def calls(messages: list[dict[str, Any]]) -> int:
        return sum(len(m.get("tool_calls") or ()) for m in messages)

    assert calls(fitted) > 2 * calls(unshrunk)
    assert HISTORY.answer in str(unshrunk)
    assert HISTORY.answer in str(fitted)


def test_a_policys_own_shrink_options_are_used() -> None:
    policy = Policy(
        name="no read_file placeholders",
        scorers=presets.conversation().scorers,
        deduplicate=False,
        shrink=Shrink(exclude_tools={"read_file"}, truncate=False),
    )
    fitted, report = openai.fit_messages(HISTORY.messages, budget=BUDGET, policy=policy)
    assert "placeholder" in names(report)
    assert names(report) <= {"full", "placeholder", "excerpt"}  # never truncated
    tools = {
        c["id"]: c["function"]["name"] for m in HISTORY.messages for c in m.get("tool_calls") or ()
    }
    cleared = [m for m in fitted if m["role"] == "tool" and "cleared" in m["content"]]
    assert cleared
    assert all(tools[m["tool_call_id"]] != "read_file" for m in cleared)


def test_a_session_follows_its_policys_shrink() -> None:
    def placeholders(session: openai.Session) -> int:
        shown = 0
        for end in range(2, len(HISTORY.messages) + 1):
            history = HISTORY.messages[:end]
            if history[-1]["role"] == "assistant" and history[-1].get("tool_calls"):
                continue  # a call waiting for its result
            window = session.fit(history)
            shown = sum(
                1 for m in window.messages if m["role"] == "tool" and "cleared" in m["content"]
            )
        return shown

    assert placeholders(openai.Session(budget=2_000, policy=presets.conversation())) > 0
    assert placeholders(openai.Session(budget=2_000)) == 0


@pytest.mark.parametrize("form", ["json", "toml"])
def test_shrink_round_trips_through_policy_files(form: str) -> None:
    policy = Policy(
        name="shrinking",
        scorers=[ScorerSpec("recency")],
        shrink=Shrink(keep_whole=2, exclude_tools={"read_file", "search"}, truncate_to=50),
    )
    text = dumps_policy(policy, format=form)
    assert loads_policy(text, format=form) == policy
    assert "shrink" not in Policy(name="plain", scorers=[ScorerSpec("recency")]).to_dict()


def test_a_bad_shrink_table_lists_every_problem() -> None:
    data = {
        "name": "bad",
        "scorers": [{"type": "recency"}],
        "shrink": {"keep_whole": -1, "placeholder_share": 2, "exclude_tools": "read_file"},
    }
    with pytest.raises(PolicyError) as caught:
        Policy.from_dict(data)
    paths = {problem.path for problem in caught.value.problems}
    assert paths == {"shrink.keep_whole", "shrink.placeholder_share", "shrink.exclude_tools"}
