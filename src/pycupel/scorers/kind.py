"""KindScorer: a fixed weight per ContextKind."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import attrgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar

from pycupel._checks import check_float
from pycupel.errors import InvalidValueError, ScorerConfigError
from pycupel.model import ContextItem, ContextKind, KindLike
from pycupel.scorers._immutable import Immutable
from pycupel.scorers.base import FloatArray, ItemScorer

if TYPE_CHECKING:
    import numpy as np
else:
    from pycupel._numpy import numpy as np

__all__ = ["KindScorer"]

# The kind's folded name, read from its slot (the ``key`` property costs a Python call).
_KIND_KEY = attrgetter("kind._key")


class KindScorer(Immutable, ItemScorer):
    """Absolute scorer: the configured weight of the item's kind, or 0.0 if it has none.

    Kinds match case-insensitively (ContextKind equality). Weights must be finite and
    non-negative; they may exceed 1.0 and are returned unclamped.

    Args:
        weights: kind -> weight (keys are ContextKind or str). ``None`` uses
            :attr:`DEFAULT_WEIGHTS`. Naming one kind twice (up to case) is an error.
    """

    __slots__ = ("_by_key", "_weights")

    DEFAULT_WEIGHTS: ClassVar[Mapping[ContextKind, float]] = MappingProxyType(
        {
            ContextKind.SYSTEM_PROMPT: 1.0,
            ContextKind.MEMORY: 0.8,
            ContextKind.TOOL_OUTPUT: 0.6,
            ContextKind.DOCUMENT: 0.4,
            ContextKind.MESSAGE: 0.2,
        }
    )
    """The specification's default weights (SystemPrompt 1.0 down to Message 0.2)."""

    _by_key: dict[str, float]
    _weights: Mapping[ContextKind, float]

    def __init__(self, weights: Mapping[KindLike, float] | None = None) -> None:
        source: object = self.DEFAULT_WEIGHTS if weights is None else weights
        if not isinstance(source, Mapping):
            raise ScorerConfigError("weights", source, "must be a mapping of kind to weight")
        checked: dict[ContextKind, float] = {}
        for raw_kind, weight in source.items():
            kind = _as_kind(raw_kind)
            if kind in checked:
                raise ScorerConfigError(
                    "weights", raw_kind, "must not name the same kind twice (case-insensitive)"
                )
            field = f"weights[{kind.value!r}]"
            checked[kind] = check_float(ScorerConfigError, field, weight, minimum=0.0)
        object.__setattr__(self, "_weights", MappingProxyType(checked))
        object.__setattr__(self, "_by_key", {kind.key: w for kind, w in checked.items()})

    @property
    def weights(self) -> Mapping[ContextKind, float]:
        """The validated weights (read-only)."""
        return self._weights

    def score_item(self, item: ContextItem) -> float:
        return self._by_key.get(item.kind.key, 0.0)

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return list(map(self._by_key.get, map(_KIND_KEY, items), repeat(0.0)))

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        weights = map(self._by_key.get, map(_KIND_KEY, items), repeat(0.0))
        return np.fromiter(weights, dtype=np.float64, count=len(items))

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt through the validating constructor (the frozen slots cannot be set later).
        return (type(self), (dict(self._weights),))

    def __repr__(self) -> str:
        if self._weights == self.DEFAULT_WEIGHTS:
            return "KindScorer()"
        shown = {kind.value: weight for kind, weight in self._weights.items()}
        return f"KindScorer({shown!r})"


def _as_kind(value: object) -> ContextKind:
    if isinstance(value, ContextKind):
        return value
    if not isinstance(value, str):
        raise ScorerConfigError("weights", value, "keys must be ContextKind or str")
    try:
        return ContextKind(value)
    except InvalidValueError as exc:
        raise ScorerConfigError("weights", value, f"keys: {exc.rule}") from exc
