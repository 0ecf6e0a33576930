"""The LoCoMo haystack benchmark's construction (benchmarks/quality/locomo_haystack.py), checked
on the real data for two conversations; skipped when the LoCoMo archive is absent.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path[:0] = [str(BENCHMARKS / "quality"), str(BENCHMARKS)]

import locomo  # noqa: E402
import locomo_haystack as haystack  # noqa: E402

if not locomo.locomo_path().exists():
    pytest.skip(f"LoCoMo data not found at {locomo.locomo_path()}", allow_module_level=True)

TARGETS = ("42", "48")  # conversations of typical length (22k and 23k tokens)


@pytest.fixture(scope="module")
def conversations() -> dict[str, locomo.Conversation]:
    return {c.sample: c for c in locomo.conversations()}


@pytest.fixture(scope="module")
def built(conversations: dict[str, locomo.Conversation]) -> dict[str, haystack.Haystack]:
    others = list(conversations.values())
    return {sample: haystack.build(conversations[sample], others) for sample in TARGETS}


@pytest.mark.parametrize("sample", TARGETS)
def test_the_target_is_all_there_in_order_among_whole_distractor_sessions(
    sample: str, conversations: dict[str, locomo.Conversation], built: dict[str, haystack.Haystack]
) -> None:
    target, stack = conversations[sample], built[sample]
    own = [m for m in stack.messages if any(m is t for t in target.messages)]
    assert len(own) == len(target.messages)
    assert all(a is b for a, b in zip(own, target.messages, strict=True))
    numbers = [s.number for s in stack.sessions if s.sample == sample]
    assert numbers == [s.number for s in haystack.sessions(target)]
    # The history is the sessions, each whole, in order; each source keeps its own order.
    flat = [m for s in stack.sessions for m in s.messages]
    assert all(a is b for a, b in zip(flat, stack.messages, strict=True))
    assert len(flat) == len(stack.messages)
    for session in stack.sessions:
        source = conversations[session.sample]
        start, end = session.start, session.start + len(session.messages)
        assert session.messages == source.messages[start:end]
        assert session.messages[0]["content"].startswith("[")
        assert {d.split(":")[0] for d in source.dia_ids[start:end]} == {f"D{session.number}"}
    for other in {s.sample for s in stack.sessions} - {sample}:
        order = [s.number for s in stack.sessions if s.sample == other]
        assert order == sorted(order)
    # The target is spread through the history, not bunched at one end.
    positions = [i for i, s in enumerate(stack.sessions) if s.sample == sample]
    assert positions[0] < len(stack.sessions) / 4
    assert positions[-1] > len(stack.sessions) * 3 / 4


@pytest.mark.parametrize("sample", TARGETS)
def test_size_and_share_of_distractors(
    sample: str, conversations: dict[str, locomo.Conversation], built: dict[str, haystack.Haystack]
) -> None:
    stack = built[sample]
    assert stack.tokens == haystack.openai.count_tokens(list(stack.messages))
    assert abs(stack.tokens - haystack.TARGET_TOKENS) <= 0.1 * haystack.TARGET_TOKENS
    assert stack.tokens <= haystack.TARGET_TOKENS
    assert 3.5 <= stack.distractor_sessions / stack.own_sessions <= 4.5
    assert 3.5 <= (stack.tokens - stack.own_tokens) / stack.own_tokens <= 4.5
    sources = {s.sample for s in stack.sessions} - {sample}
    assert len(sources) >= 6  # drawn from across the other conversations
    names = {m["content"].split(": ", 1)[0].rsplit("] ", 1)[-1] for m in stack.messages}
    assert len(names) > 10  # distractor speakers keep their own names


def test_the_build_is_deterministic_and_seeded(
    conversations: dict[str, locomo.Conversation], built: dict[str, haystack.Haystack]
) -> None:
    others = list(conversations.values())
    again = haystack.build(conversations[TARGETS[0]], others)
    assert again.sessions == built[TARGETS[0]].sessions
    other_seed = haystack.build(conversations[TARGETS[0]], others, seed=1)
    assert other_seed.sessions != again.sessions


@pytest.mark.parametrize("sample", TARGETS)
def test_evidence_points_at_the_same_turns(
    sample: str, conversations: dict[str, locomo.Conversation], built: dict[str, haystack.Haystack]
) -> None:
    target, stack = conversations[sample], built[sample]
    assert len(stack.questions) == len(target.questions)
    for moved, original in zip(stack.questions, target.questions, strict=True):
        assert moved.text == original.text
        assert len(moved.evidence) == len(original.evidence)
        for new, old in zip(moved.evidence, original.evidence, strict=True):
            assert stack.messages[new] is target.messages[old]


def test_whole_history_recalls_everything_and_the_question_alone_nothing(
    built: dict[str, haystack.Haystack],
) -> None:
    fits = {
        "whole": lambda messages, budget: messages,
        "question": lambda messages, budget: messages[-1:],
    }
    stacks = list(built.values())
    results = haystack.evaluate(stacks, 25, [1_000], fits)
    asked = sum(len(s.questions[::25]) for s in stacks)
    assert len(results["whole"][1_000]) == asked > 0
    whole = haystack.summarize(results["whole"][1_000])
    assert whole["recall"] == 1.0
    assert whole["window"] > 100  # the whole ~120k-token history over a 1k budget
    assert haystack.summarize(results["question"][1_000])["recall"] == 0.0
    mean, error = haystack.paired(results["whole"][1_000], results["question"][1_000])
    assert (mean, error) == (1.0, 0.0)
