"""Structure-aware selection (the default of fit_messages): guarantees over generated histories."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel import presets
from pycupel.adapters import Structure, anthropic, langchain, openai, select_structured
from pycupel.conversation.arguments import resolve_budget
from pycupel.diagnostics import Deduplicated
from pycupel.errors import PipelineConfigError
from pycupel.histories import agent_history
from pycupel.scorers import RelevanceScorer


def kept_indices(fitted: list[Any], messages: list[Any]) -> list[int]:
    ids = {id(message): index for index, message in enumerate(messages)}
    return [ids[id(message)] for message in fitted]


@settings(max_examples=25, deadline=None)
@given(
    turns=st.integers(min_value=12, max_value=60),
    seed=st.integers(min_value=0, max_value=10_000),
    ask=st.sampled_from(["old", "recent"]),
    share=st.floats(min_value=0.04, max_value=0.7),
    keep_recent=st.one_of(st.none(), st.integers(min_value=0, max_value=3_000)),
)
def test_structure_guarantees_over_generated_histories(
    turns: int, seed: int, ask: str, share: float, keep_recent: int | None
) -> None:
    history = agent_history(turns=turns, seed=seed, ask=ask)  # type: ignore[arg-type]
    messages = history.messages
    total = openai.count_tokens(messages)
    units = openai.from_messages(messages)
    pinned = sum(unit.item.tokens for unit in units if unit.item.pinned) + 3
    budget = max(pinned, int(total * share))
    # The structure's own guarantees, with units kept whole or dropped (no shorter versions).
    fitted, report = openai.fit_messages(
        messages, budget=budget, keep_recent=keep_recent, shrink=False
    )

    # Valid: re-parsing finds no orphaned result or unanswered call; within the budget.
    openai.from_messages(fitted)
    assert openai.count_tokens(fitted) <= budget
    # System prompt first, the question last, conversation order kept.
    assert fitted[0] is messages[0]
    assert fitted[-1] is messages[-1]
    indices = kept_indices(fitted, messages)
    assert indices == sorted(indices)
    # Tool calls and their results together (pairs kept).
    kept = set(indices)
    for unit in units:
        in_output = [index in kept for index in unit.message_indices]
        assert all(in_output) or not any(in_output)
    # The recent tail is unbroken: the newest unpinned units within keep_recent are all kept.
    room = budget - 3 - pinned + 3
    tail = keep_recent if keep_recent is not None else int(room * 0.1)
    used = 0
    for unit in reversed([u for u in units if not u.item.pinned]):
        if used + unit.item.tokens > min(tail, room):
            break
        used += unit.item.tokens
        assert all(index in kept for index in unit.message_indices)
    assert report.total_candidates == len(units)


def chat(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"role": role, "content": text} for role, text in pairs]


def test_a_relevant_answer_brings_its_question() -> None:
    filler = [("user", f"filler question {i} about weather") for i in range(30)]
    messages = chat(("system", "be brief"))
    for index, (role, text) in enumerate(filler):
        messages += chat((role, text), ("assistant", f"filler answer {index}, sunny and mild"))
        if index == 5:
            messages += chat(
                ("user", "what should I name the cat?"),
                ("assistant", "Call the kitten Biscuit, it suits her orange fur."),
            )
    messages += chat(("user", "remind me, what did you suggest for the kitten Biscuit?"))
    fitted, _ = openai.fit_messages(messages, budget=150, keep_recent=0)
    texts = [message["content"] for message in fitted]
    answer = "Call the kitten Biscuit, it suits her orange fur."
    assert answer in texts
    assert texts[texts.index(answer) - 1] == "what should I name the cat?"


def context_history() -> list[dict[str, Any]]:
    """A question about the query's topic whose answer shares none of its words, among
    unrelated exchanges and one long turn that mentions the topic in passing."""
    messages = chat(("system", "be brief"))
    for index in range(12):
        messages += chat(
            ("user", f"Ann: any news on the garden, week {index}?"),
            ("assistant", f"Bob: the tomatoes grew {index} cm, the beans climb the fence nicely"),
        )
        if index == 4:
            messages += chat(
                ("user", "Ann: where did you take the kayak last weekend?"),
                ("assistant", "Bob: up the Wharfe, past Bolton Abbey, lovely water"),
            )
    messages += chat(("user", "Ann: where did Bob take his kayak?"))
    return messages


def test_an_answer_without_the_query_words_is_found_through_its_question() -> None:
    messages = context_history()
    answer = "Bob: up the Wharfe, past Bolton Abbey, lovely water"
    alone = Structure(keep_recent=0, neighbours=False, session_headers=False, context=0.0)
    in_context = Structure(keep_recent=0, neighbours=False, session_headers=False)
    question = messages.index(
        {"role": "user", "content": "Ann: where did you take the kayak last weekend?"}
    )
    budget = openai.count_tokens([messages[0], *messages[question : question + 2], messages[-1]])
    without, _ = openai.fit_messages(messages, budget=budget, structure=alone)
    with_context, _ = openai.fit_messages(messages, budget=budget, structure=in_context)
    assert answer not in [message["content"] for message in without]
    assert answer in [message["content"] for message in with_context]


def test_dated_session_header_stays_with_what_it_dates() -> None:
    messages = chat(("system", "be brief"))
    for session in range(6):
        messages += chat(
            ("user", f"[1 May 202{session}] Ann: hello again, session {session}"),
            ("assistant", "Bob: hi Ann, good to see you"),
        )
        for turn in range(6):
            text = "I adopted a greyhound named Comet" if (session, turn) == (2, 4) else "chat"
            messages += chat(("user", f"Ann: {text} {turn}"), ("assistant", f"Bob: nice {turn}"))
    messages += chat(("user", "What is the name of Ann's greyhound?"))
    fitted, _ = openai.fit_messages(messages, budget=120, keep_recent=0)
    texts = [message["content"] for message in fitted]
    assert "Ann: I adopted a greyhound named Comet 4" in texts
    assert "[1 May 2022] Ann: hello again, session 2" in texts


def test_query_overrides_the_latest_user_message() -> None:
    messages = chat(
        ("user", "the blue key opens the shed"),
        ("assistant", "noted"),
        ("user", "the red key opens the garage"),
        ("assistant", "noted too"),
        ("user", "thanks"),
    )
    shed, _ = openai.fit_messages(messages, budget=25, keep_recent=0, query="shed")
    garage, _ = openai.fit_messages(messages, budget=25, keep_recent=0, query="garage")
    assert messages[0] in shed
    assert messages[0] not in garage
    assert messages[2] in garage


def test_history_without_user_text_is_fitted_by_recency() -> None:
    messages = chat(("system", "s"), ("assistant", "one"), ("assistant", "two"))
    fitted, _ = openai.fit_messages(messages, budget=30)
    assert fitted[0] is messages[0]
    assert fitted[-1] is messages[-1]


def test_deduplicate_keeps_the_newest_occurrence() -> None:
    messages = chat(("user", "ok"), ("assistant", "go on?"), ("user", "ok"), ("user", "bye"))
    fitted, report = openai.fit_messages(messages, budget=1_000, deduplicate=True)
    assert fitted == [messages[1], messages[2], messages[3]]
    assert [type(entry.reason) for entry in report.excluded] == [Deduplicated]


@settings(max_examples=40, deadline=None)
@given(
    replies=st.lists(
        st.sampled_from(["ok", "noted", "sure thing", "done"]), min_size=8, max_size=40
    ),
    asked=st.integers(min_value=0, max_value=39),
    budget=st.integers(min_value=40, max_value=400),
)
def test_a_left_out_duplicate_is_never_brought_back_as_a_neighbour(
    replies: list[str], asked: int, budget: int
) -> None:
    # Repeated short replies follow distinct questions: a relevant question brings its
    # answer as a neighbour, and that answer may be a duplicate left out of the window.
    messages: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
    for turn, reply in enumerate(replies):
        messages.append({"role": "user", "content": f"question {turn} about topic{turn}"})
        messages.append({"role": "assistant", "content": reply})
    messages.append({"role": "user", "content": f"topic{asked % len(replies)} again?"})
    fitted, report = openai.fit_messages(messages, budget=budget, deduplicate=True, shrink=False)
    sent = sorted(f"{m['role']}: {m['content']}" for m in fitted)
    assert sent == sorted(entry.item.content for entry in report.included)


def test_every_adapter_defaults_to_structure_aware_selection() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    history = agent_history(turns=30, seed=3, ask="old")
    budget = openai.count_tokens(history.messages) // 5
    fitted, _ = openai.fit_messages(history.messages, budget=budget)
    assert history.messages[history.fact_index] in fitted

    plain = [m for m in history.messages if m["role"] in ("user", "assistant") and m["content"]]
    lc = [SystemMessage("sys")] + [
        HumanMessage(m["content"]) if m["role"] == "user" else AIMessage(m["content"])
        for m in plain
    ]
    lc_fitted, _ = langchain.fit_messages(lc, budget=200)
    assert lc_fitted[0] is lc[0]
    assert lc_fitted[-1] is lc[-1]

    anthropic_messages = [{"role": m["role"], "content": m["content"]} for m in plain]
    result = anthropic.fit_messages(anthropic_messages, system="sys", budget=200)
    assert result.system == "sys"
    assert result.messages[0]["role"] == "user"
    assert result.messages[-1] is anthropic_messages[-1]


def test_select_structured_directly() -> None:
    messages = chat(("system", "s"), ("user", "apples are red"), ("assistant", "yes"))
    messages += chat(("user", "pears are green"), ("assistant", "ok"), ("user", "colour?"))
    units = openai.from_messages(messages)
    selection = select_structured(
        units.units,
        budget=resolve_budget(40, 3),
        scorer=RelevanceScorer(),
        query="pears",
        structure=Structure(keep_recent=0, neighbours=False, session_headers=False),
    )
    kept = [index for unit in selection.units for index in unit.message_indices]
    assert kept[0] == 0
    assert 3 in kept
    assert len(selection.report.included) == len(selection.units)


def test_a_policy_without_structure_runs_the_pipeline_with_the_query() -> None:
    messages = chat(("user", "apples are red"), ("user", "pears are green"), ("user", "hm"))
    fitted, _ = openai.fit_messages(
        messages, budget=20, policy=presets.conversation(), query="apples"
    )
    assert messages[0] in fitted
    assert messages[1] not in fitted


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"keep_recent": -1}, "structure.keep_recent"),
        ({"recent_share": 2.0}, "structure.recent_share"),
        ({"neighbours": "yes"}, "structure.neighbours"),
        ({"density": -0.5}, "structure.density"),
        ({"context": 1.5}, "structure.context"),
        ({"context": float("nan")}, "structure.context"),
    ],
)
def test_structure_rejects_bad_options(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(PipelineConfigError) as caught:
        Structure(**kwargs)
    assert caught.value.field == field


def test_fit_messages_rejects_bad_structure_arguments() -> None:
    messages = chat(("user", "hi"))
    with pytest.raises(PipelineConfigError, match="structure"):
        openai.fit_messages(messages, budget=50, structure="tail")  # type: ignore[arg-type]
    with pytest.raises(PipelineConfigError, match="keep_recent"):
        openai.fit_messages(messages, budget=50, keep_recent=5, structure=Structure())
    with pytest.raises(PipelineConfigError, match="query"):
        openai.fit_messages(messages, budget=50, query=3)  # type: ignore[arg-type]
