"""Stage 1, Classify: negative-token items out, the rest split into pinned and scoreable.

Items with negative ``tokens`` are excluded first (even pinned ones); the others split into
pinned and scoreable, keeping input order. Pinned tokens above ``max_tokens - output_reserve``
raise :class:`~pycupel.errors.PinnedBudgetError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import NoReturn

from pycupel.errors import PinnedBudgetError, PipelineConfigError
from pycupel.model import ContextBudget, ContextItem

__all__ = ["check_no_repeats", "classify"]

_TOKENS = attrgetter("tokens")
_PINNED = attrgetter("pinned")
_PLAIN_TYPES = frozenset({ContextItem})


def classify(
    candidates: Sequence[ContextItem], budget: ContextBudget
) -> tuple[Sequence[ContextItem], list[ContextItem], list[ContextItem], int, bool]:
    """``(scoreable, pinned, negative, pinned_tokens, plain)`` for the run's ``candidates``.

    ``plain``: every candidate is exactly a scoreable ContextItem, so ``scoreable`` is
    ``candidates`` itself and the items hash by identity (later stages key sets on them).

    Raises:
        PipelineConfigError: an element is not a ContextItem.
        PinnedBudgetError: the pinned items need more than ``max_tokens - output_reserve``.
    """
    pinned: list[ContextItem] = []
    negative: list[ContextItem] = []
    scoreable: Sequence[ContextItem]
    # The common case (every candidate exactly a ContextItem, none negative or pinned) is
    # checked with C-level passes, with no Python frame per item.
    plain = (
        bool(candidates)
        and set(map(type, candidates)) == _PLAIN_TYPES
        and min(map(_TOKENS, candidates)) >= 0
        and not any(map(_PINNED, candidates))
    )
    if plain:
        scoreable = candidates
    else:
        scoreable = []
        for item in candidates:
            if type(item) is not ContextItem and not isinstance(item, ContextItem):
                _reject_item(candidates)
            if item.tokens < 0:
                negative.append(item)
            elif item.pinned:
                pinned.append(item)
            else:
                scoreable.append(item)
        # Deduplicate cannot see these (a repeated pinned object would be placed twice).
        if len(set(map(id, pinned))) != len(pinned) or len(set(map(id, negative))) != len(negative):
            check_no_repeats(candidates)
    pinned_tokens = sum(map(_TOKENS, pinned))
    available_for_pinned = budget.max_tokens - budget.output_reserve
    if pinned_tokens > available_for_pinned:
        raise PinnedBudgetError(pinned_tokens, available_for_pinned)
    return scoreable, pinned, negative, pinned_tokens, plain


def _reject_item(items: Sequence[object]) -> NoReturn:
    for index, value in enumerate(items):
        if not isinstance(value, ContextItem):
            raise PipelineConfigError(f"items[{index}]", value, "must be a ContextItem")
    raise AssertionError("unreachable: an element failed the ContextItem check")


def check_no_repeats(items: Sequence[ContextItem]) -> None:
    """Reject the same item object given twice (the pipeline tells items apart by identity).

    Raises:
        PipelineConfigError: naming both positions of the first repeated object.
    """
    if len(set(map(id, items))) == len(items):
        return
    first: dict[int, int] = {}
    for index, item in enumerate(items):
        earlier = first.setdefault(id(item), index)
        if earlier != index:
            raise PipelineConfigError(
                f"items[{index}]",
                item,
                f"is the same object as items[{earlier}]; pass each candidate once "
                "(item.replace() makes a distinct copy)",
            )
