"""Pipeline.arun / dry_arun: lists, async sources, streamed runs with StreamSlice."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest

from pycupel import ContextBudget, ContextItem, Pipeline
from pycupel.errors import PipelineConfigError, StreamSourceError
from pycupel.placers import UShapedPlacer
from pycupel.scorers import PriorityScorer, ReflexiveScorer
from pycupel.slicers import GreedySlice, StreamSlice


class Source:
    """An async generator of items that records how far it was read and whether it closed."""

    def __init__(self, items: Sequence[ContextItem], *, fail_at: int | None = None) -> None:
        self.items = list(items)
        self.fail_at = fail_at
        self.yielded = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[ContextItem]:
        try:
            for index, item in enumerate(self.items):
                if index == self.fail_at:
                    raise TimeoutError("vector store timed out")
                await asyncio.sleep(0)
                self.yielded += 1
                yield item
        finally:
            self.closed = True


def notes(count: int, tokens: int = 10) -> list[ContextItem]:
    return [
        ContextItem(f"note {n}", tokens=tokens, future_relevance_hint=(n * 37 % 100) / 100)
        for n in range(count)
    ]


def pipeline(slicer: object, target: int = 100) -> Pipeline:
    return Pipeline(
        budget=ContextBudget(max_tokens=max(1_000, target), target_tokens=target),
        scorer=ReflexiveScorer(),
        slicer=slicer,  # type: ignore[arg-type]
        placer=UShapedPlacer(),
    )


def test_arun_on_a_list_equals_run() -> None:
    items = notes(40)
    greedy = pipeline(GreedySlice())
    assert asyncio.run(greedy.arun(items)).items == greedy.run(items).items
    dry = asyncio.run(greedy.dry_arun(items))
    assert dry.report.exclusion_counts() == greedy.dry_run(items).report.exclusion_counts()


def test_an_async_source_with_another_slicer_is_read_whole() -> None:
    items = notes(40)
    source = Source(items)
    greedy = pipeline(GreedySlice())
    assert asyncio.run(greedy.arun(source.__aiter__())).items == greedy.run(items).items
    assert source.yielded == 40
    assert source.closed


def test_streamed_run_stops_reading_at_the_budget() -> None:
    source = Source(notes(1_000))
    streaming = pipeline(StreamSlice(batch_size=8), target=100)
    result = asyncio.run(streaming.dry_arun(source.__aiter__()))
    assert result.total_tokens == 100
    # Ten 10-token notes fill the budget within the second batch of eight: 16 read, no more.
    assert source.yielded == 16
    assert source.closed
    report = result.report
    assert len(report.included) == 10
    assert report.exclusion_counts() == {"BudgetExceeded": 6}
    assert {entry.item for entry in report.included} == set(result.items)
    # Placed U-shaped by score: the best of the selection first.
    best = max(report.included, key=lambda entry: entry.score)
    assert result.items[0] is best.item


def test_streamed_run_reports_negative_token_items() -> None:
    items = [*notes(3), ContextItem("broken", tokens=-4), *notes(2)]
    result = asyncio.run(pipeline(StreamSlice(), target=1_000).dry_arun(Source(items).__aiter__()))
    assert result.report.exclusion_counts() == {"NegativeTokens": 1}
    assert len(result.items) == 5


def test_streamed_run_scores_each_batch_together() -> None:
    # PriorityScorer ranks within what it sees: in a streamed run, within each batch.
    items = [ContextItem(f"p{n}", tokens=1, priority=n) for n in range(8)]
    result = asyncio.run(
        Pipeline(
            budget=ContextBudget(max_tokens=100, target_tokens=100),
            scorer=PriorityScorer(),
            slicer=StreamSlice(batch_size=4),
        ).dry_arun(Source(items).__aiter__())
    )
    scores = {entry.item.content: entry.score for entry in result.report.included}
    assert scores["p3"] == scores["p7"]  # each the best of its batch


def test_a_failing_source_names_the_stage_and_returns_nothing() -> None:
    streaming = pipeline(StreamSlice(batch_size=4), target=10_000)
    source = Source(notes(50), fail_at=9)
    with pytest.raises(StreamSourceError) as caught:
        asyncio.run(streaming.dry_arun(source.__aiter__()))
    assert (caught.value.stage, caught.value.consumed) == ("Slice", 9)
    assert isinstance(caught.value.__cause__, TimeoutError)
    assert source.closed
    reading = Source(notes(50), fail_at=3)
    with pytest.raises(StreamSourceError) as caught:
        asyncio.run(pipeline(GreedySlice()).arun(reading.__aiter__()))
    assert caught.value.stage == "Classify"


def test_cancelling_a_streamed_run() -> None:
    class Slow(Source):
        async def __aiter__(self) -> AsyncIterator[ContextItem]:
            try:
                for item in self.items:
                    await asyncio.sleep(0.01)
                    self.yielded += 1
                    yield item
            finally:
                self.closed = True

    source = Slow(notes(1_000))

    async def scenario() -> None:
        task = asyncio.create_task(
            pipeline(StreamSlice(batch_size=4), target=9_000).arun(source.__aiter__())
        )
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert 0 < source.yielded < 1_000
    assert source.closed


def test_streamed_runs_refuse_pinned_and_foreign_items() -> None:
    streaming = pipeline(StreamSlice())
    pinned = [ContextItem("system", tokens=5, pinned=True)]
    with pytest.raises(PipelineConfigError, match="pinned"):
        asyncio.run(streaming.arun(Source(pinned).__aiter__()))
    with pytest.raises(PipelineConfigError, match=r"items\[0\]"):
        asyncio.run(streaming.arun(Source(["text"]).__aiter__()))  # type: ignore[list-item]
    # The same pinned item in a list is an ordinary run.
    assert asyncio.run(streaming.arun(pinned)).items == tuple(pinned)
