"""Asynchronous runs: ``Pipeline.arun`` and ``dry_arun`` over lists or asynchronous sources.

* A list (or tuple) of items runs the ordinary stages: selection does no I/O, so awaiting it
  changes nothing but the calling style.
* An asynchronous iterable with any slicer but :class:`~pycupel.slicers.StreamSlice` is read to
  the end first (a failing source raises :class:`~pycupel.errors.StreamSourceError` for stage
  ``Classify``), then run as a list.
* An asynchronous iterable with a ``StreamSlice`` is a *streamed* run, the .NET reference's
  streaming execution: items are classified and scored in micro-batches of the slicer's
  ``batch_size`` (a relative scorer sees the batch), the slicer fills the budget batch by batch
  and stops reading the source as soon as the budget is full, and the selection is placed by
  its scores. A streamed run cannot know what is still to come, so it takes no pinned items
  (one raises :class:`~pycupel.errors.PipelineConfigError`: pass a list instead) and does not
  deduplicate. Its report lists every item read: the selected ones, the negative-token ones
  (``NegativeTokens``) and the ones that did not fit (``BudgetExceeded``); items never read are
  not in it. A source that fails raises ``StreamSourceError`` for stage ``Slice``; nothing is
  returned or recorded from a failed or cancelled run.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Sequence
from time import perf_counter

from pycupel.diagnostics.events import PipelineStage
from pycupel.diagnostics.reasons import BudgetExceeded
from pycupel.errors import CupelError, PipelineConfigError, StreamSourceError
from pycupel.model import (
    ContextBudget,
    ContextItem,
    OverflowStrategy,
    ScoredItem,
    compute_effective_budget,
)
from pycupel.pipeline.explain import explain_negative, included
from pycupel.pipeline.place import place
from pycupel.pipeline.result import PipelineResult
from pycupel.pipeline.score import score
from pycupel.pipeline.trace import Trace
from pycupel.placers import Placer
from pycupel.scorers.base import Scorer
from pycupel.slicers.stream import StreamSlice

__all__ = ["read_all", "stream_run"]


async def read_all(source: AsyncIterable[ContextItem]) -> list[ContextItem]:
    """Every item of ``source``; a failing source raises StreamSourceError (stage Classify)."""
    items: list[ContextItem] = []
    iterator = aiter(source)
    try:
        while True:
            try:
                items.append(await anext(iterator))
            except StopAsyncIteration:
                return items
            except CupelError:
                raise
            except Exception as exc:
                raise StreamSourceError(
                    "Classify", len(items), f"{type(exc).__name__}: {exc}"
                ) from exc
    finally:
        await _close(iterator)


async def stream_run(  # noqa: PLR0917 (positional, like the synchronous run loop)
    source: AsyncIterable[ContextItem],
    budget: ContextBudget,
    trace: Trace | None,
    scorer: Scorer,
    slicer: StreamSlice,
    placer: Placer,
    overflow_strategy: OverflowStrategy,
    query: str | None = None,
) -> PipelineResult:
    """A streamed run (see the module documentation); ``query`` reaches the scorer."""
    started = perf_counter()
    negative: list[ContextItem] = []
    stats = _Counts()
    scored = _scored_batches(source, scorer, slicer.batch_size, negative, stats, query=query)
    streamed = await slicer.aslice(scored, compute_effective_budget(budget, 0))
    ended = perf_counter()

    selected = streamed.selected
    score_of = {id(entry.item): entry.score for entry in streamed.consumed}
    chosen_scores = [score_of[id(item)] for item in selected]
    selected_tokens = sum(item.tokens for item in selected)
    if trace is not None:
        # The stages ran interleaved, batch by batch: each gets the streamed run's time once.
        if trace.decisions:
            explain_negative(trace, negative)
            trace.flush_items(PipelineStage.CLASSIFY)
        trace.stage(PipelineStage.CLASSIFY, started, ended, stats.read)
        trace.stage(PipelineStage.SCORE, started, ended, len(streamed.consumed))
        if trace.decisions:
            chosen = {id(item) for item in selected}
            available = compute_effective_budget(budget, 0).target_tokens - selected_tokens
            for entry in streamed.consumed:
                if id(entry.item) not in chosen:
                    trace.exclude(
                        entry.item, entry.score, BudgetExceeded(entry.item.tokens, available)
                    )
            trace.flush_items(PipelineStage.SLICE)
        trace.stage(PipelineStage.SLICE, started, ended, len(streamed.consumed))
        started = perf_counter()

    placed, total_tokens, overflow, _, merged_items, merged_scores, merged_count = place(
        placer,
        None,
        overflow_strategy,
        [],
        list(selected),
        chosen_scores,
        None,
        [],
        selected_tokens,
        budget,
    )
    if trace is not None:
        trace.stage(PipelineStage.PLACE, started, perf_counter(), merged_count)
        if trace.recorder is not None:
            trace.recorder(
                included=included(placed, merged_items, merged_scores, 0),
                excluded=trace.excluded,
                count_requirement_shortfalls=(),
                token_requirement_shortfalls=(),
                packing=None,
                solver=None,
            )
    return PipelineResult(
        items=placed,
        total_tokens=total_tokens,
        overflow=overflow,
        shortfalls=(),
        token_shortfalls=(),
        packing=None,
        solver=None,
    )


class _Counts:
    __slots__ = ("read",)

    def __init__(self) -> None:
        self.read = 0


async def _scored_batches(
    source: AsyncIterable[ContextItem],
    scorer: Scorer,
    size: int,
    negative: list[ContextItem],
    stats: _Counts,
    *,
    query: str | None,
) -> AsyncIterator[ScoredItem]:
    """Classify and score the source in batches of ``size``; closes the source when closed."""
    if not isinstance(source, AsyncIterable):
        raise PipelineConfigError("items", source, "must be a sequence or an async iterable")
    iterator = aiter(source)
    batch: list[ContextItem] = []
    try:
        while True:
            try:
                item = await anext(iterator)
            except StopAsyncIteration:
                break
            except CupelError:
                raise
            except Exception as exc:  # the source failed while the slicer was reading it
                raise StreamSourceError(
                    "Slice", stats.read, f"{type(exc).__name__}: {exc}"
                ) from exc
            where = f"items[{stats.read}]"
            stats.read += 1
            if not isinstance(item, ContextItem):
                raise PipelineConfigError(where, item, "must be a ContextItem")
            if item.pinned:
                raise PipelineConfigError(
                    f"{where}.pinned",
                    True,
                    "a streamed run (StreamSlice over an async source) takes no pinned items; "
                    "pass a list to arun instead",
                )
            if item.tokens < 0:
                negative.append(item)
                continue
            batch.append(item)
            if len(batch) == size:
                for entry in _score(scorer, batch, query):
                    yield entry
                batch = []
        for entry in _score(scorer, batch, query):
            yield entry
    finally:
        await _close(iterator)


def _score(scorer: Scorer, batch: Sequence[ContextItem], query: str | None) -> list[ScoredItem]:
    if not batch:
        return []
    items = tuple(batch)
    scores = score(scorer, items, query)
    values: list[float] = scores if isinstance(scores, list) else scores.tolist()
    return [ScoredItem(item, value) for item, value in zip(items, values, strict=True)]


async def _close(iterator: object) -> None:
    close = getattr(iterator, "aclose", None)
    if close is not None:
        await close()
