"""CompositeScorer: a weighted average of child scorers, plus the scorer-graph cycle check."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING

from pycupel._checks import check_float
from pycupel.errors import ScorerConfigError
from pycupel.model import ContextItem
from pycupel.scorers._immutable import Immutable
from pycupel.scorers.base import (
    SMALL_BATCH,
    BaseScorer,
    FloatArray,
    Scorer,
    as_scorer,
    check_nesting,
    is_builtin,
    score_array,
    score_array_for,
)

if TYPE_CHECKING:
    import numpy as np
else:
    from pycupel._numpy import numpy as np

__all__ = ["CompositeScorer", "find_cycle", "weighted_sums"]

ScorerLike = Scorer | Callable[[ContextItem], float]


class CompositeScorer(Immutable, BaseScorer):
    """Composite scorer: ``sum(child_score * weight / total_weight)`` over the entries.

    Children are scored in entry order and the products accumulated in that order
    (``0.0 + s0*w0 + s1*w1 + ...``), one vectorised pass per child.

    Args:
        entries: ``(scorer, weight)`` pairs; at least one. A scorer may be any object with
            ``score_all`` or a plain function ``item -> float``. Each weight must be a finite
            number > 0 (weights are relative: they are divided by their sum).

    Raises:
        ScorerConfigError: no entries, a malformed entry, a bad weight, or a cycle in the
            scorer graph (found by identity through ``children()``).
    """

    __slots__ = ("_list_children", "_plain_children", "_raw_weights", "_scorers", "_weights")

    _scorers: tuple[Scorer, ...]
    _weights: tuple[float, ...]
    _raw_weights: tuple[float, ...]
    _list_children: tuple[tuple[Callable[..., list[float]], bool, float], ...]
    # The children's list methods when none of them takes the query, else None.
    _plain_children: tuple[Callable[[Sequence[ContextItem]], list[float]], ...] | None

    def __init__(self, entries: Iterable[tuple[ScorerLike, float]]) -> None:
        given: object = entries
        if isinstance(given, str | bytes) or not isinstance(given, Iterable):
            raise ScorerConfigError("entries", given, "must be an iterable of (scorer, weight)")
        scorers: list[Scorer] = []
        raw_weights: list[float] = []
        total = 0.0
        for index, entry in enumerate(given):
            if not isinstance(entry, tuple | list) or len(entry) != 2:
                raise ScorerConfigError(
                    f"entries[{index}]", entry, "must be a (scorer, weight) pair"
                )
            scorer, weight = entry
            scorers.append(_child(index, scorer))
            value = check_float(
                ScorerConfigError, f"entries[{index}].weight", weight, positive=True
            )
            raw_weights.append(value)
            total += value  # accumulated in entry order, as the specification does
        if not scorers:
            raise ScorerConfigError("entries", [], "must contain at least one scorer entry")
        if not math.isfinite(total):
            raise ScorerConfigError("entries", raw_weights, "the sum of weights must be finite")
        object.__setattr__(self, "_scorers", tuple(scorers))
        object.__setattr__(self, "_raw_weights", tuple(raw_weights))
        object.__setattr__(self, "_weights", tuple(w / total for w in raw_weights))
        object.__setattr__(
            self,
            "_list_children",
            tuple(
                (*_list_scoring(scorer), weight)
                for scorer, weight in zip(scorers, self._weights, strict=True)
            ),
        )
        object.__setattr__(
            self,
            "_plain_children",
            None
            if any(takes_query for _, takes_query, _ in self._list_children)
            else tuple(method for method, _, _ in self._list_children),
        )
        cycle = find_cycle(self)
        if cycle is not None:
            # The value names the node only: the repr of a scorer on a cycle would not end.
            raise ScorerConfigError(
                "entries",
                f"<{type(cycle).__name__} object at {id(cycle):#x}>",
                "must not form a cycle: a scorer appears in its own dependency graph",
            )

    @property
    def scorers(self) -> tuple[Scorer, ...]:
        """The child scorers, in entry order."""
        return self._scorers

    @property
    def weights(self) -> tuple[float, ...]:
        """The normalised weights (each weight divided by the sum), in entry order."""
        return self._weights

    @property
    def raw_weights(self) -> tuple[float, ...]:
        """The weights as given."""
        return self._raw_weights

    def children(self) -> tuple[Scorer, ...]:
        return self._scorers

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        return self.score_array_for(items, None)

    def score_array_for(self, items: Sequence[ContextItem], query: str | None) -> FloatArray:
        """The weighted average, each child scored for the run's ``query``."""
        result = np.zeros(len(items), dtype=np.float64)
        for scorer, weight in zip(self._scorers, self._weights, strict=True):
            result += score_array_for(scorer, items, query) * weight
        return result

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return self.score_all_for(items, None)

    def score_all_for(self, items: Sequence[ContextItem], query: str | None) -> list[float]:
        if len(items) > SMALL_BATCH:
            scores: list[float] = self.score_array_for(items, query).tolist()
            return scores
        plain = self._plain_children
        if plain is not None:
            return weighted_sums([method(items) for method in plain], self._weights)
        children = [
            method(items, query) if takes_query else method(items)
            for method, takes_query, _ in self._list_children
        ]
        return weighted_sums(children, self._weights)

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        """The specification's per-item form: each child's own per-item score, weighted."""
        result = 0.0
        for scorer, weight in zip(self._scorers, self._weights, strict=True):
            result += _score_one(scorer, item, all_items) * weight
        return result

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt through the validating constructor (the frozen slots cannot be set later).
        entries = list(zip(self._scorers, self._raw_weights, strict=True))
        return (type(self), (entries,))

    def __repr__(self) -> str:
        shown = ", ".join(
            f"({s!r}, {w!r})" for s, w in zip(self._scorers, self._raw_weights, strict=True)
        )
        return f"CompositeScorer([{shown}])"


def weighted_sums(children: list[list[float]], weights: tuple[float, ...]) -> list[float]:
    """The vectorised form's arithmetic element by element, ``0.0 + s0*w0 + s1*w1 + ...``
    (evaluated left to right: bitwise the numpy result).

    The usual numbers of children get one comprehension each (a comprehension's float
    arithmetic is specialised by the interpreter; a pass per child costs more).
    """
    if len(children) == 4:
        w0, w1, w2, w3 = weights
        return [
            0.0 + a * w0 + b * w1 + c * w2 + d * w3 for a, b, c, d in zip(*children, strict=True)
        ]
    if len(children) == 3:
        w0, w1, w2 = weights
        return [0.0 + a * w0 + b * w1 + c * w2 for a, b, c in zip(*children, strict=True)]
    if len(children) == 2:
        w0, w1 = weights
        return [0.0 + a * w0 + b * w1 for a, b in zip(*children, strict=True)]
    result = [0.0] * len(children[0])
    for child, weight in zip(children, weights, strict=True):
        result = [total + score * weight for total, score in zip(result, child, strict=True)]
    return result


def _list_scoring(scorer: Scorer) -> tuple[Callable[..., list[float]], bool]:
    """How the small-batch path scores with ``scorer``: ``(method, takes_query)``.

    Found once at construction (scorers are immutable): a built-in scorer that ignores the
    query gives its ``score_all``, a query-aware one its ``score_all_for``; any other scorer's
    output is checked and converted as :func:`score_array_for` does.
    """
    if is_builtin(scorer):
        if type(scorer).score_array_for is BaseScorer.score_array_for:
            return scorer.score_all, False
        return scorer.score_all_for, True
    return partial(_checked_list, scorer), True


def _checked_list(scorer: Scorer, items: Sequence[ContextItem], query: str | None) -> list[float]:
    scores: list[float] = score_array_for(scorer, items, query).tolist()
    return scores


def _child(index: int, scorer: object) -> Scorer:
    field = f"entries[{index}].scorer"
    if scorer is None:
        raise ScorerConfigError(field, scorer, "must be a scorer, not None")
    try:
        checked = as_scorer(scorer)  # type: ignore[arg-type]  # validated by as_scorer
    except ScorerConfigError as exc:
        raise ScorerConfigError(field, scorer, exc.rule) from exc
    check_nesting(field, checked)
    return checked


def _score_one(scorer: Scorer, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
    if isinstance(scorer, BaseScorer):
        return scorer.score(item, all_items)
    for index, candidate in enumerate(all_items):
        if candidate is item:
            return float(score_array(scorer, all_items)[index])
    return float(score_array(scorer, [*all_items, item])[-1])


def _children_of(node: object) -> Iterator[object]:
    if isinstance(node, BaseScorer):
        return iter(node.children())
    return iter(())


def find_cycle(root: object) -> object | None:
    """The first scorer found on a cycle of the graph below ``root`` (by identity), or None.

    Iterative depth-first search over ``BaseScorer.children()``: a node reached again while it
    is still on the current path closes a cycle. Each node is expanded once, so the cost is
    O(V + E).
    """
    visited: dict[int, object] = {id(root): root}  # values keep nodes alive, so ids stay unique
    on_path: set[int] = {id(root)}
    stack: list[tuple[object, Iterator[object]]] = [(root, _children_of(root))]
    while stack:
        node, pending = stack[-1]
        child = next(pending, _DONE)
        if child is _DONE:
            stack.pop()
            on_path.discard(id(node))
            continue
        key = id(child)
        if key in visited:
            if key in on_path:
                return child
            continue
        visited[key] = child
        on_path.add(key)
        stack.append((child, _children_of(child)))
    return None


_DONE = object()
