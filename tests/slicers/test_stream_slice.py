"""StreamSlice: micro-batches, greedy per batch, early stop, cancellation, failing sources."""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import AsyncIterator, Sequence

import pytest

from pycupel import ContextBudget, ContextItem
from pycupel.errors import SliceInputError, SlicerConfigError, StreamSourceError
from pycupel.model import ScoredItem
from pycupel.slicers import GreedySlice
from pycupel.slicers.stream import StreamSlice


def budget(target: int) -> ContextBudget:
    return ContextBudget(max_tokens=max(target, 1) * 2, target_tokens=target)


class Source:
    """An async generator over scored items that records how far it was read and closed."""

    def __init__(self, entries: Sequence[ScoredItem], *, fail_at: int | None = None) -> None:
        self.entries = list(entries)
        self.fail_at = fail_at
        self.yielded = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[ScoredItem]:
        try:
            for index, entry in enumerate(self.entries):
                if index == self.fail_at:
                    raise ConnectionError("upstream reset")
                await asyncio.sleep(0)
                self.yielded += 1
                yield entry
        finally:
            self.closed = True


def items(tokens: Sequence[int], scores: Sequence[float] | None = None) -> list[ScoredItem]:
    chosen = scores if scores is not None else [1.0 - n / 1000 for n in range(len(tokens))]
    return [
        ScoredItem(ContextItem(f"item {n}", tokens=t), s)
        for n, (t, s) in enumerate(zip(tokens, chosen, strict=True))
    ]


def run(slicer: StreamSlice, source: object, target: int) -> object:
    return asyncio.run(slicer.aslice(source.__aiter__(), budget(target)))  # type: ignore[attr-defined]


def test_stops_reading_once_the_budget_is_full() -> None:
    source = Source(items([10] * 100))
    result = run(StreamSlice(batch_size=2), source, 50)
    assert sum(item.tokens for item in result.selected) == 50
    # Five items fill the budget; the batch holding the fifth ends at item 6: nothing after.
    assert source.yielded == 6
    assert len(result.consumed) == 6
    assert result.stopped_early
    assert source.closed


def test_each_batch_is_filled_greedily_by_score() -> None:
    scores = [0.1, 0.9, 0.5, 0.7, 0.3, 0.8]
    entries = items([30, 30, 30, 30, 30, 30], scores)
    result = run(StreamSlice(batch_size=3), Source(entries), 60)
    # Batch 1 (0.1, 0.9, 0.5): 0.9 then 0.5 take the whole budget; batch 2 is never read.
    assert [item.content for item in result.selected] == ["item 1", "item 2"]
    assert len(result.consumed) == 3


def test_skips_what_does_not_fit_and_takes_zero_token_items() -> None:
    entries = items([40, 25, 0, 20, 15], [0.9, 0.8, 0.1, 0.7, 0.6])
    result = run(StreamSlice(batch_size=32), Source(entries), 60)
    assert [item.content for item in result.selected] == ["item 0", "item 3", "item 2"]
    assert not result.stopped_early
    assert len(result.consumed) == 5


def test_a_partial_final_batch_is_processed() -> None:
    result = run(StreamSlice(), Source(items([5] * 5)), 50)
    assert len(result.selected) == 5
    assert StreamSlice().batch_size == 32


def test_budget_not_exactly_full_keeps_reading() -> None:
    source = Source(items([30] * 10))
    result = run(StreamSlice(batch_size=2), source, 50)
    assert len(result.selected) == 1
    assert source.yielded == 10  # 20 tokens stay free, so every batch is examined


def test_zero_budget_reads_nothing() -> None:
    source = Source(items([5] * 5))
    result = run(StreamSlice(), source, 0)
    assert result.selected == ()
    assert source.yielded == 0


def test_empty_source() -> None:
    assert run(StreamSlice(), Source([]), 10).selected == ()


def test_a_failing_source_raises_a_cupel_error_naming_the_stage() -> None:
    source = Source(items([1] * 10), fail_at=4)
    with pytest.raises(StreamSourceError) as caught:
        run(StreamSlice(batch_size=3), source, 100)
    error = caught.value
    assert (error.stage, error.consumed) == ("Slice", 4)
    assert isinstance(error.__cause__, ConnectionError)
    assert "Slice stage" in str(error)
    assert "ConnectionError: upstream reset" in str(error)
    assert source.closed
    assert pickle.loads(pickle.dumps(error)).consumed == 4


def test_cancellation_propagates_and_closes_the_source() -> None:
    class Slow(Source):
        async def __aiter__(self) -> AsyncIterator[ScoredItem]:
            try:
                for entry in self.entries:
                    await asyncio.sleep(0.01)
                    self.yielded += 1
                    yield entry
            finally:
                self.closed = True

    source = Slow(items([1] * 1000))

    async def scenario() -> None:
        task = asyncio.create_task(
            StreamSlice(batch_size=4).aslice(source.__aiter__(), budget(900))
        )
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert 0 < source.yielded < 1000
    assert source.closed


def test_the_sync_slice_matches_the_streaming_one() -> None:
    entries = sorted(
        items(
            [17, 3, 40, 0, 22, 9, 31, 5, 12, 28],
            [0.2, 0.9, 0.4, 0.1, 0.8, 0.6, 0.3, 0.7, 0.5, 0.45],
        ),
        key=lambda entry: -entry.score,
    )
    for size in (1, 2, 3, 32):
        for target in (0, 10, 40, 80, 200):
            slicer = StreamSlice(batch_size=size)
            streamed = run(slicer, Source(entries), target)
            assert slicer.slice(entries, budget(target)).selected == streamed.selected
    # One batch holding everything, score-sorted: greedy by score, not by density.
    whole = StreamSlice(batch_size=len(entries)).slice(entries, budget(60))
    assert whole.selected != GreedySlice().slice(entries, budget(60)).selected


@pytest.mark.parametrize("size", [0, -1, 1.5, True, "32"])
def test_batch_size_is_checked(size: object) -> None:
    with pytest.raises(SlicerConfigError):
        StreamSlice(batch_size=size)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "entry",
    [("item", 0.5), (ContextItem("x", tokens=1), float("nan")), (ContextItem("x", tokens=1),)],
)
def test_bad_entries_are_refused(entry: object) -> None:
    async def source() -> AsyncIterator[object]:
        yield entry

    with pytest.raises(SliceInputError):
        asyncio.run(StreamSlice().aslice(source(), budget(10)))  # type: ignore[arg-type]
    with pytest.raises(SliceInputError):
        asyncio.run(StreamSlice().aslice([entry], budget(10)))  # type: ignore[arg-type]


@pytest.mark.parametrize("score", [10**400, -(10**400)], ids=["huge", "minus-huge"])
def test_a_score_beyond_the_float64_range_is_refused_by_name(score: int) -> None:
    entry = ScoredItem(ContextItem("x", tokens=1), score)

    async def source() -> AsyncIterator[ScoredItem]:
        yield ScoredItem(ContextItem("first", tokens=1), 0.5)
        yield entry

    for read in (source(), Source([ScoredItem(ContextItem("first", tokens=1), 0.5), entry])):
        with pytest.raises(SliceInputError) as caught:
            asyncio.run(StreamSlice().aslice(aiter(read), budget(10)))
        assert (caught.value.field, caught.value.value) == ("items[1].score", score)
        assert caught.value.rule == "must be within the float64 range (about ±1.8e308)"


@pytest.mark.parametrize("given", [None, {1, 2}, 5], ids=repr)
def test_slice_refuses_a_non_sequence_like_every_slicer(given: object) -> None:
    with pytest.raises(SliceInputError) as caught:
        StreamSlice().slice(given, budget(10))  # type: ignore[arg-type]
    assert (caught.value.field, caught.value.value) == ("items", given)
