"""StreamSlice: online selection over an asynchronous source of scored items, in micro-batches.

The .NET reference's semantics:

* items are read into batches of ``batch_size``; each full batch is sorted by score
  (descending; arrival order on ties, so the result is deterministic) and filled greedily:
  an item that fits the remaining budget is taken, one that does not is skipped, and a
  zero-token item is always taken;
* after a full batch, once the remaining budget is zero the source is not read any further: it
  is closed (``aclose()``), so a generator's ``finally`` blocks run and nothing upstream keeps
  producing;
* a final partial batch is processed if any budget remains; ``target_tokens <= 0`` selects
  nothing without reading the source;
* cancelling the awaiting task cancels the read (the ``CancelledError`` propagates untouched)
  and closes the source.

A source that raises becomes :class:`~pycupel.errors.StreamSourceError` (stage ``Slice``, the
number of items read, the original exception chained): no partial selection is returned.

:meth:`StreamSlice.aslice` is the streaming entry point; :meth:`StreamSlice.slice` runs the same
algorithm over a list, so the slicer also works in a synchronous pipeline. Because the
selection depends on where batch boundaries fall and stops at an exactly full budget, it is
not budget-monotonic (budget simulation refuses it).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterable, AsyncIterator, Sequence
from dataclasses import dataclass

from pycupel._checks import check_int
from pycupel.errors import CupelError, SliceInputError, SlicerConfigError, StreamSourceError
from pycupel.model import ContextBudget, ContextItem, ScoredItem
from pycupel.slicers._common import (
    SCORE_RANGE_RULE,
    Frozen,
    check_budget,
    check_scored_items,
)
from pycupel.slicers.base import SliceResult

__all__ = ["StreamSlice", "StreamSliceResult"]


@dataclass(frozen=True, slots=True)
class StreamSliceResult:
    """What a streaming slice selected and what it read to get there."""

    selected: tuple[ContextItem, ...]
    """The items taken, batch by batch, each batch in score order."""
    consumed: tuple[ScoredItem, ...]
    """Every item read from the source, in arrival order (selected or not)."""
    stopped_early: bool
    """True when the budget filled up and the source was closed before it was exhausted."""

    @property
    def result(self) -> SliceResult:
        """The selection as a plain :class:`~pycupel.slicers.SliceResult`."""
        return SliceResult.of(self.selected)


class StreamSlice(Frozen):
    """Online greedy selection in micro-batches (see the module documentation).

    Args:
        batch_size: items gathered before a batch is sorted and filled (>= 1; default 32).
    """

    __slots__ = ("_batch_size",)

    _batch_size: int

    def __init__(self, batch_size: int = 32) -> None:
        size = check_int(SlicerConfigError, "batch_size", batch_size, minimum=1)
        object.__setattr__(self, "_batch_size", size)

    @property
    def batch_size(self) -> int:
        """Items per micro-batch."""
        return self._batch_size

    @property
    def budget_monotonic(self) -> bool:
        """False: batch boundaries and the early stop make the selection budget-dependent."""
        return False

    def __repr__(self) -> str:
        return f"StreamSlice(batch_size={self._batch_size})"

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> SliceResult:
        """The streaming algorithm over a list (already read): batches in list order."""
        remaining = check_budget(budget).target_tokens
        items = check_scored_items(items)
        selected: list[ContextItem] = []
        if remaining <= 0:
            return SliceResult.of(selected)
        size = self._batch_size
        for start in range(0, len(items), size):
            batch = [
                _checked(entry, start + offset)
                for offset, entry in enumerate(items[start : start + size])
            ]
            remaining = _fill(batch, remaining, selected)
            if remaining <= 0 and len(batch) == size:
                break
        return SliceResult.of(selected)

    async def aslice(
        self, items: AsyncIterable[ScoredItem], budget: ContextBudget
    ) -> StreamSliceResult:
        """Read ``items`` batch by batch until the budget is full or the source ends."""
        remaining = check_budget(budget).target_tokens
        if not isinstance(items, AsyncIterable):
            raise SliceInputError("items", items, "must be an async iterable of ScoredItem")
        selected: list[ContextItem] = []
        consumed: list[ScoredItem] = []
        if remaining <= 0:
            return StreamSliceResult((), (), stopped_early=False)
        iterator = aiter(items)
        batch: list[ScoredItem] = []
        stopped_early = False
        try:
            while True:
                try:
                    entry = await anext(iterator)
                except StopAsyncIteration:
                    break
                except CupelError:
                    raise  # our own checks upstream (a bad item or score) stand as they are
                except Exception as exc:  # the source failed: report it, select nothing
                    raise StreamSourceError(
                        "Slice", len(consumed), f"{type(exc).__name__}: {exc}"
                    ) from exc
                batch.append(_checked(entry, len(consumed)))
                consumed.append(entry)
                if len(batch) == self._batch_size:
                    remaining = _fill(batch, remaining, selected)
                    batch = []
                    if remaining <= 0:
                        stopped_early = True
                        break
            if batch and remaining > 0:
                _fill(batch, remaining, selected)
        finally:
            await _close(iterator)
        return StreamSliceResult(tuple(selected), tuple(consumed), stopped_early)


def _checked(entry: object, index: int) -> ScoredItem:
    if not (
        isinstance(entry, tuple)
        and len(entry) == 2
        and isinstance(entry[0], ContextItem)
        and isinstance(entry[1], int | float)
        and not isinstance(entry[1], bool)
    ):
        raise SliceInputError(f"items[{index}]", entry, "must be a ScoredItem(item, score)")
    try:
        finite = math.isfinite(entry[1])
    except OverflowError:  # an int beyond float64
        raise SliceInputError(f"items[{index}].score", entry[1], SCORE_RANGE_RULE) from None
    if not finite:
        raise SliceInputError(f"items[{index}].score", entry[1], "must be finite")
    if entry[0].tokens < 0:
        raise SliceInputError(f"items[{index}].item.tokens", entry[0].tokens, "must be >= 0")
    return ScoredItem(entry[0], float(entry[1]))


def _fill(batch: list[ScoredItem], remaining: int, selected: list[ContextItem]) -> int:
    """Take the batch's items best first while they fit; the budget left afterwards."""
    for item, _ in sorted(batch, key=lambda entry: -entry.score):  # stable: arrival on ties
        if item.tokens == 0:
            selected.append(item)
        elif item.tokens <= remaining:
            selected.append(item)
            remaining -= item.tokens
    return remaining


async def _close(iterator: AsyncIterator[ScoredItem]) -> None:
    """Close an async generator (or any iterator with ``aclose``) so its cleanup runs now."""
    close = getattr(iterator, "aclose", None)
    if close is not None:
        await close()
