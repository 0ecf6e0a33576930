"""Placers: the final order of the selected items in the context window.

A placer receives the merged list (pinned items first with score 1.0, then the sliced items in
score order) and returns the same items, reordered. It never adds, drops or changes an item.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pycupel.model import ContextItem, ScoredItem

__all__ = ["Placer"]


@runtime_checkable
class Placer(Protocol):
    """Orders the selected items for the model's attention."""

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        """Return the items of ``items`` in presentation order."""
        ...
