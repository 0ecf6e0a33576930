"""presets.retrieval() at tight budgets: the higher score wins, by a documented rule.

Chunks are taken by combined score (retriever rank and the question's words), highest first,
skipping what does not fit: a chunk is never left out while one of lower score that it could
have replaced is kept, and the best chunk is kept whenever it fits the budget on its own.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from pycupel import ContextBudget, ContextItem, presets
from pycupel.diagnostics import BudgetExceeded
from pycupel.policy import SlicerSpec
from pycupel.slicers import PackerSlice
from pycupel.tokens import HeuristicCounter

COUNTER = HeuristicCounter()
QUESTION = "How long is the warranty on the Soundwave 5 headphones?"
NEEDED = (
    "Soundwave 5 warranty: two years from the delivery date, covering the earcups, the "
    "battery and the charging case; register the serial number in the Brightline app to add "
    "a third year."
)
DISTRACTOR = "Soundwave 4 warranty: one year."
OTHERS = [
    "returns within 30 days", "store opening hours", "gift wrapping costs 5 USD",
    "firmware 2.4 fixes audio drops", "loyalty points never expire for Gold",
    "USB-C charging takes two hours", "multipoint pairs two devices", "ear pads cost 19 USD",
    "shipping is free over 50 USD", "Soundwave 5 battery lasts 30 hours",
    "Soundwave 5 weighs 250 grams", "the app runs on iOS and Android",
    "noise cancelling has three levels", "the case charges wirelessly",
    "price matching within 14 days", "student discount is 10 percent",
    "express shipping costs 12 USD", "repairs take five days", "Soundwave 3 is discontinued",
    "headphones ship with a cable", "colours: blue, sand, graphite",
    "Bluetooth 5.3 with LE audio", "support chat opens at 8 am", "the manual is online",
    "Soundwave 5 warranty claims need the order number", "refunds take 5 days",
    "the app saves EQ presets", "trade-in gives 40 USD credit",
]  # fmt: skip


def chunk(text: str, score: float) -> ContextItem:
    return ContextItem(
        text, tokens=COUNTER.count(text), kind="Document", metadata={"retrieval_score": score}
    )


def retrieved() -> list[ContextItem]:
    """30 chunks with retrieval scores from 0 to 25: the one the question needs (19.8, long)
    and a short distractor (17.1) among them."""
    chunks = [chunk(NEEDED, 19.8), chunk(DISTRACTOR, 17.1)]
    for n, text in enumerate(OTHERS):
        score = round(25 - n * 25 / len(OTHERS), 1) if n % 3 else round(16.5 - n * 0.4, 1)
        chunks.append(chunk(text[0].upper() + text[1:] + ".", score))
    return chunks


BUDGET = ContextBudget(max_tokens=80, target_tokens=80)


def test_the_preset_takes_chunks_in_score_order_skipping_misfits() -> None:
    policy = presets.retrieval()
    assert policy.slicer == SlicerSpec.of("packer", max_consecutive_skips="unlimited")
    slicer = policy.build(BUDGET).slicer
    assert isinstance(slicer, PackerSlice)
    assert slicer.max_consecutive_skips is None


def test_the_chunk_the_question_needs_is_kept_at_a_tight_budget() -> None:
    chunks = retrieved()
    assert len(chunks) == 30
    assert {c.metadata["retrieval_score"] for c in chunks} <= {x / 10 for x in range(251)}
    result = presets.retrieval().build(BUDGET).run(chunks, query=QUESTION)
    assert chunks[0] in result.items  # 19.8, the answer
    assert result.total_tokens <= 80
    # The rule the preset had before, greedy by score per token, dropped it for short chunks.
    greedy = dataclasses.replace(presets.retrieval(), slicer=SlicerSpec("greedy"))
    assert chunks[0] not in greedy.build(BUDGET).run(chunks, query=QUESTION).items


def _unfair_pairs(chunks: list[ContextItem], budget: int, question: str) -> list[str]:
    report = (
        presets.retrieval()
        .build(ContextBudget(max_tokens=budget, target_tokens=budget))
        .dry_run(chunks, query=question)
        .report
    )
    used = sum(entry.item.tokens for entry in report.included)
    room = budget - used
    found = []
    for out in report.excluded:
        if not isinstance(out.reason, BudgetExceeded):
            continue
        for kept in report.included:
            if out.score > kept.score and out.item.tokens <= kept.item.tokens + room:
                found.append(f"{out.item.content!r} ({out.score}) for {kept.item.content!r}")
    if report.excluded and report.included:
        best = max((*report.included, *report.excluded), key=lambda entry: entry.score)
        if best.item.tokens <= budget and best in report.excluded:
            found.append(f"the best chunk {best.item.content!r} left out")
    return found


def test_no_higher_scored_chunk_is_dropped_for_a_lower_one_in_the_scenario() -> None:
    for budget in range(0, 200, 7):
        assert _unfair_pairs(retrieved(), budget, QUESTION) == []


WORDS = ["warranty", "battery", "refund", "case", "order", "app", "hours", "soundwave", "blue"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=30),
            st.floats(min_value=0, max_value=25, allow_nan=False),
        ),
        min_size=1,
        max_size=30,
    ),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    st.integers(min_value=0, max_value=200),
)
def test_a_higher_scored_chunk_that_fits_is_never_dropped_for_a_lower_one(
    entries: list[tuple[list[str], float]], question: list[str], budget: int
) -> None:
    chunks = [
        chunk(f"{position}: " + " ".join(words), score)
        for position, (words, score) in enumerate(entries)
    ]
    assert _unfair_pairs(chunks, budget, " ".join(question)) == []
