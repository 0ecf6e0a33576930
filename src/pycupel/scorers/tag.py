"""TagScorer: the share of configured tag weight that an item's tags match."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, repeat
from types import MappingProxyType

import numpy as np

from pycupel._checks import check_bool, check_float
from pycupel.errors import ScorerConfigError
from pycupel.model import ContextItem, ascii_fold
from pycupel.scorers._immutable import Immutable
from pycupel.scorers.base import FloatArray, ItemScorer

__all__ = ["TagScorer"]


class TagScorer(Immutable, ItemScorer):
    """Absolute scorer: ``min(sum of matched tag weights / sum of all weights, 1.0)``.

    Every occurrence of a configured tag on the item adds its weight (duplicates count
    again, hence the clamp). Items without tags, or a scorer whose weights are all zero,
    score 0.0.

    Args:
        weights: tag -> weight; each weight finite and >= 0, and their sum finite.
        case_sensitive: the specification's default is an exact (ordinal) tag lookup. With
            ``False`` tags match after ASCII case folding, and two configured tags that fold
            to the same text are an error.
    """

    __slots__ = ("_case_sensitive", "_lookup", "_total", "_weights")

    _case_sensitive: bool
    _lookup: dict[str, float]
    _total: float
    _weights: Mapping[str, float]

    def __init__(self, weights: Mapping[str, float], *, case_sensitive: bool = True) -> None:
        if not isinstance(weights, Mapping):
            raise ScorerConfigError("weights", weights, "must be a mapping of tag to weight")
        check_bool(ScorerConfigError, "case_sensitive", case_sensitive)
        checked: dict[str, float] = {}
        lookup: dict[str, float] = {}
        total = 0.0
        for tag, weight in weights.items():
            if not isinstance(tag, str):
                raise ScorerConfigError("weights", tag, "keys must be strings")
            value = check_float(ScorerConfigError, f"weights[{tag!r}]", weight, minimum=0.0)
            key = tag if case_sensitive else ascii_fold(tag)
            if key in lookup:
                raise ScorerConfigError(
                    "weights", tag, "must not name the same tag twice (ASCII case-insensitive)"
                )
            checked[tag] = value
            lookup[key] = value
            # Summed in mapping order, as the specification accumulates it.
            total += value
        if not math.isfinite(total):
            raise ScorerConfigError("weights", dict(checked), "the sum of weights must be finite")
        object.__setattr__(self, "_weights", MappingProxyType(checked))
        object.__setattr__(self, "_lookup", lookup)
        object.__setattr__(self, "_total", total)
        object.__setattr__(self, "_case_sensitive", case_sensitive)

    @property
    def weights(self) -> Mapping[str, float]:
        """The validated tag weights (read-only), as given."""
        return self._weights

    @property
    def total_weight(self) -> float:
        """The sum of all configured weights (the score's denominator)."""
        return self._total

    @property
    def case_sensitive(self) -> bool:
        """Whether tags are looked up exactly (True, the default) or ASCII case-folded."""
        return self._case_sensitive

    def score_item(self, item: ContextItem) -> float:
        total = self._total
        tags = item.tags
        if total == 0.0 or not tags:
            return 0.0
        lookup = self._lookup
        fold = not self._case_sensitive
        matched = 0.0
        for tag in tags:
            weight = lookup.get(ascii_fold(tag) if fold else tag)
            if weight is not None:
                matched += weight
        return min(matched / total, 1.0)

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        size = len(items)
        if self._total == 0.0:
            return np.zeros(size, dtype=np.float64)
        tag_lists = [item.tags for item in items]
        lengths = np.fromiter(map(len, tag_lists), dtype=np.intp, count=size)
        flat: Iterable[str] = chain.from_iterable(tag_lists)
        if not self._case_sensitive:
            flat = map(ascii_fold, flat)
        total_tags = int(lengths.sum())
        # One weight per tag occurrence (0.0 when unconfigured), summed per item in tag order
        # by bincount, which accumulates sequentially from 0.0 like the specification's loop.
        weights = np.fromiter(
            map(self._lookup.get, flat, repeat(0.0)), dtype=np.float64, count=total_tags
        )
        owners = np.repeat(np.arange(size), lengths)
        matched = np.bincount(owners, weights=weights, minlength=size)
        result: FloatArray = np.minimum(matched / self._total, 1.0)
        return result

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        scores: list[float] = self.score_array(items).tolist()
        return scores

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt through the validating constructor (the frozen slots cannot be set later).
        return (_rebuild, (type(self), dict(self._weights), self._case_sensitive))

    def __repr__(self) -> str:
        suffix = "" if self._case_sensitive else ", case_sensitive=False"
        return f"TagScorer({dict(self._weights)!r}{suffix})"


def _rebuild(cls: type[TagScorer], weights: dict[str, float], case_sensitive: bool) -> TagScorer:
    return cls(weights, case_sensitive=case_sensitive)
