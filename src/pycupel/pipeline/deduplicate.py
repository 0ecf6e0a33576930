"""Stage 3, Deduplicate: byte-exact duplicate contents keep their best-scored item.

The earliest item wins a tie; survivors keep input order. On by default
(``Pipeline(deduplicate=False)`` skips the stage).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pycupel.model import ContextItem
from pycupel.pipeline.score import Scores

if TYPE_CHECKING:
    import numpy as np
else:
    from pycupel._numpy import numpy as np

__all__ = ["deduplicate"]


def deduplicate(
    items: tuple[ContextItem, ...], scores: Scores
) -> tuple[Sequence[ContextItem], Scores, list[int] | None]:
    """``(survivors, their scores, surviving indices)``; the indices are None when no item
    was a duplicate (then ``items`` and ``scores`` come back as they are)."""
    contents = [item.content for item in items]
    if len(set(contents)) == len(contents):
        return items, scores, None
    score_list: list[float] = scores if isinstance(scores, list) else scores.tolist()
    best: dict[str, int] = {}
    for index, content in enumerate(contents):
        current = best.get(content)
        # A strictly higher score replaces; on a tie the earlier item stays.
        if current is None or score_list[index] > score_list[current]:
            best[content] = index
    keep = sorted(best.values())
    if isinstance(scores, list):
        return [items[i] for i in keep], [scores[i] for i in keep], keep
    return [items[i] for i in keep], scores[np.asarray(keep, dtype=np.intp)], keep
