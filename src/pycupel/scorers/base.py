"""The scorer contract.

A scorer turns the list of scoreable items into one float64 score per item. The batch form,
``score_all(items)``, is what the pipeline calls: relative scorers (recency, priority,
frequency, scaled) see the whole list once, so they can rank with one sort instead of
comparing every item with every other. ``score(item, all_items)`` is the specification's
per-item form, kept for custom scorers and compatibility.

Custom scorers can be any object with ``score_all``, a subclass of :class:`ItemScorer`
(implement ``score_item``), or a plain function ``item -> float`` passed through
:func:`as_scorer`.
"""

from __future__ import annotations

import inspect
import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard, runtime_checkable

from pycupel._numpy import FloatArray
from pycupel.errors import NonFiniteScoreError, ScorerConfigError
from pycupel.model import ContextItem

if TYPE_CHECKING:
    import numpy as np
else:
    from pycupel._numpy import numpy as np

__all__ = [
    "MAX_SCORER_NESTING",
    "SMALL_BATCH",
    "BaseScorer",
    "FloatArray",
    "FunctionScorer",
    "ItemScorer",
    "QueryAwareScorer",
    "Scorer",
    "as_scorer",
    "check_finite_scores",
    "check_nesting",
    "is_builtin",
    "nesting_depth",
    "real_score",
    "score_array",
    "score_array_for",
]


SMALL_BATCH = 256
"""Up to this many items, the built-in scorers' ``score_all`` works on plain Python lists: at
that size numpy's per-call overhead costs more than the loops it replaces. Both forms give
bitwise identical scores."""


@runtime_checkable
class Scorer(Protocol):
    """Anything that scores a list of items: one float per item, in input order."""

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        """Score every item of ``items`` (each against the whole list); same length and order."""
        ...


@runtime_checkable
class QueryAwareScorer(Protocol):
    """A scorer that also reads the run's query (``Pipeline.run(items, query=...)``).

    ``score_all_for(items, query)`` gets the query of the run, or ``None`` when the run has
    none; a scorer that needs one raises :class:`~pycupel.errors.MissingQueryError` then.
    The query is an argument, never stored: the scorer stays stateless and thread-safe.
    """

    def score_all_for(self, items: Sequence[ContextItem], query: str | None) -> list[float]:
        """Score every item of ``items`` for ``query``; same length and order."""
        ...


class BaseScorer(ABC):
    """Base of the built-in scorers.

    Subclasses implement :meth:`score_array` (the vectorised batch form). ``score_all`` and the
    per-item ``score`` derive from it. Scorers hold configuration only, never per-run state,
    so one instance can serve many threads.
    """

    __slots__ = ()

    @abstractmethod
    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        """Scores of ``items`` as a float64 array (same length and order)."""

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        """Scores of ``items`` as a list of floats (same length and order)."""
        scores: list[float] = self.score_array(items).tolist()
        return scores

    def score_array_for(self, items: Sequence[ContextItem], query: str | None) -> FloatArray:
        """Scores of ``items`` for the run's ``query``.

        Scorers that ignore the query inherit this (it is :meth:`score_array`); query-aware
        scorers override it, and combinators forward the query to their children.
        """
        return self.score_array(items)

    def score_all_for(self, items: Sequence[ContextItem], query: str | None) -> list[float]:
        """:meth:`score_array_for` as a list of floats (the :class:`QueryAwareScorer` form)."""
        if type(self).score_array_for is BaseScorer.score_array_for:
            # The query is ignored: the list form, which small batches compute without numpy.
            return self.score_all(items)
        scores: list[float] = self.score_array_for(items, query).tolist()
        return scores

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        """The specification's per-item form: the score of ``item`` among ``all_items``.

        ``item`` is looked up in ``all_items`` by identity; relative scorers override this
        when ``item`` may be absent from the list.
        """
        for index, candidate in enumerate(all_items):
            if candidate is item:
                return float(self.score_array(all_items)[index])
        return float(self.score_array([*all_items, item])[-1])

    def children(self) -> tuple[Scorer, ...]:
        """Scorers this one delegates to (for cycle detection); empty for leaf scorers."""
        return ()


class ItemScorer(BaseScorer):
    """Base for absolute scorers: the score depends on the item alone."""

    __slots__ = ()

    @abstractmethod
    def score_item(self, item: ContextItem) -> float:
        """The score of one item."""

    def score_array(self, items: Sequence[ContextItem]) -> FloatArray:
        score_item = self.score_item
        return np.fromiter((score_item(i) for i in items), dtype=np.float64, count=len(items))

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        score_item = self.score_item
        return [score_item(i) for i in items]

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        return self.score_item(item)


_SCORE_RULE = "must be a real number (int, float or another numbers.Real; text and Decimal are not"
_SCORE_RULE += " converted: convert them explicitly)"


def real_score(value: object, field: str) -> float:
    """``value`` as a float if it is a real number; :class:`ScorerConfigError` otherwise.

    Accepted: ``int``, ``float`` and every other :class:`numbers.Real` (``Fraction``, numpy
    integers and floats). Refused: ``bool`` (a predicate is not a score), text such as
    ``"0.5"`` and ``Decimal`` (not real numbers in Python's numeric tower: converting them
    would hide a scorer bug), and ints beyond the float64 range.
    """
    if type(value) is float:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ScorerConfigError(field, value, _SCORE_RULE)
    try:
        return float(value)
    except OverflowError:
        raise ScorerConfigError(
            field, value, "must be a real number within the float64 range (about ±1.8e308)"
        ) from None


def _check_item_function(field: str, function: object) -> Callable[[ContextItem], Any]:
    """``function`` if it is an instance callable with one positional argument (the item)."""
    if isinstance(function, type):
        raise ScorerConfigError(
            field,
            function,
            f"must be a scorer or a function, not a class: pass an instance such as "
            f"{function.__name__}(...)",
        )
    if not callable(function):
        raise ScorerConfigError(field, function, "must be callable")
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # some builtins have no signature: nothing to check
        return function
    try:
        signature.bind(None)
    except TypeError:
        raise ScorerConfigError(
            field,
            function,
            f"must be a function taking one positional argument (the item); its signature "
            f"is {signature}",
        ) from None
    return function


class FunctionScorer(ItemScorer):
    """An absolute scorer from a plain function ``item -> float``.

    The function must accept one positional argument (checked at construction) and return
    a real number (checked on every call, see :func:`real_score`).
    """

    __slots__ = ("_field", "_function", "name")

    def __init__(self, function: Callable[[ContextItem], float], name: str | None = None) -> None:
        self._function = _check_item_function("function", function)
        self.name = name or getattr(function, "__name__", "function")
        self._field = f"FunctionScorer({self.name})(item)"

    def score_item(self, item: ContextItem) -> float:
        value = self._function(item)
        return value if type(value) is float else real_score(value, self._field)

    def __repr__(self) -> str:
        return f"FunctionScorer({self.name})"


def as_scorer(value: Scorer | Callable[[ContextItem], float]) -> Scorer:
    """Accept a scorer object or a function ``item -> float``; reject anything else."""
    if isinstance(value, Scorer) and not isinstance(value, type):
        return value
    if callable(value):
        try:
            return FunctionScorer(value)
        except ScorerConfigError as exc:
            raise ScorerConfigError("scorer", value, exc.rule) from exc
    raise ScorerConfigError(
        "scorer", value, "must have a score_all(items) method or be a function item -> float"
    )


def is_builtin(scorer: object) -> TypeGuard[BaseScorer]:
    """Whether ``scorer`` is an instance of one of pycupel's own scorer classes (not of a
    subclass defined elsewhere): then its ``score_all`` and ``score_all_for`` return floats
    by construction."""
    cls = type(scorer)
    # The MRO test is the isinstance of an ABC without its per-call cache lookups.
    return cls.__module__.startswith("pycupel.scorers.") and BaseScorer in cls.__mro__


def score_array(scorer: Scorer, items: Sequence[ContextItem]) -> FloatArray:
    """Scores of ``items`` from any scorer as a float64 array, checking the scorer's output.

    Built-in scorers take their vectorised path; for other scorers the result of
    ``score_all`` must have exactly one number per item.
    """
    if isinstance(scorer, BaseScorer):
        return scorer.score_array(items)
    return _checked(scorer, scorer.score_all(items), items)


def score_array_for(scorer: Scorer, items: Sequence[ContextItem], query: str | None) -> FloatArray:
    """Like :func:`score_array`, passing the run's ``query`` to scorers that read one.

    Built-in scorers get it through :meth:`BaseScorer.score_array_for`; a custom scorer gets it
    when it has ``score_all_for(items, query)`` (:class:`QueryAwareScorer`); any other scorer
    is scored without it.
    """
    if isinstance(scorer, BaseScorer):
        return scorer.score_array_for(items, query)
    if isinstance(scorer, QueryAwareScorer):
        return _checked(scorer, scorer.score_all_for(items, query), items)
    return _checked(scorer, scorer.score_all(items), items)


def _checked(scorer: object, raw: object, items: Sequence[ContextItem]) -> FloatArray:
    name = type(scorer).__name__
    if isinstance(raw, np.ndarray) and raw.dtype.kind in "fiu":
        array = raw.astype(np.float64)
    elif isinstance(raw, str | bytes) or not isinstance(raw, Sequence | np.ndarray):
        raise ScorerConfigError(f"{name}.score_all", raw, "must return a sequence of numbers")
    else:
        values = list(raw)
        if any(type(value) is not float for value in values):
            values = [
                real_score(value, f"{name}.score_all(items)[{index}]")
                for index, value in enumerate(values)
            ]
        array = np.array(values, dtype=np.float64)
    if array.shape != (len(items),):
        raise ScorerConfigError(
            f"{type(scorer).__name__}.score_all",
            f"{array.size} scores",
            f"must return exactly one score per item ({len(items)})",
        )
    return array


def check_finite_scores(scorer: Scorer, items: Sequence[ContextItem], scores: FloatArray) -> None:
    """Raise :class:`~pycupel.errors.NonFiniteScoreError` for the first NaN or infinite score.

    The pipeline calls this on its final scores: a NaN has no place in a descending order and
    no slicer can weigh an infinity, so such scores are refused rather than ranked by a rule
    that would silently decide the window. (Inner scores inside a ScaledScorer or a
    CompositeScorer follow those scorers' own rules.)
    """
    finite = np.isfinite(scores)
    if finite.all():
        return
    index = int(np.flatnonzero(~finite)[0])
    raise NonFiniteScoreError(
        type(scorer).__name__, index, float(scores[index]), items[index].content
    )


MAX_SCORER_NESTING = 64
"""How many combinator levels (:class:`~pycupel.scorers.CompositeScorer`,
:class:`~pycupel.scorers.ScaledScorer`, or any scorer with children) may stack. Scoring,
``repr`` and pickling recurse once per level; the bound keeps all three far from Python's
recursion limit, and no sensible policy comes near it."""


def _children(node: object) -> tuple[object, ...]:
    children = getattr(node, "children", None)
    if not callable(children) or isinstance(node, type):
        return ()
    try:
        found = children()
    except AttributeError:
        # A scorer still in its own __init__ (listing itself as a child): the cycle check
        # that follows construction reports it.
        return ()
    return tuple(found) if isinstance(found, tuple | list) else ()


def nesting_depth(scorer: object) -> int:
    """Combinator levels above the deepest leaf of ``scorer``'s graph (0 for a leaf).

    Iterative, and each node is measured once, so a graph that shares children stays linear.
    A node met again on the current path (a cycle, which the cycle check reports) counts 0.
    """
    depth: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[object, bool]] = [(scorer, False)]
    while stack:
        node, expanded = stack.pop()
        key = id(node)
        if expanded:
            on_path.discard(key)
            below = [depth.get(id(child), 0) for child in _children(node)]
            depth[key] = 1 + max(below) if below else 0
            continue
        if key in depth or key in on_path:
            continue
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))
    return depth[id(scorer)]


def check_nesting(field: str, child: object) -> None:
    """Refuse ``child`` if wrapping it in one more combinator exceeds the nesting bound."""
    levels = nesting_depth(child) + 1
    if levels > MAX_SCORER_NESTING:
        raise ScorerConfigError(
            field,
            f"<{type(child).__name__} nesting {levels - 1} levels>",
            f"must leave the scorer at most {MAX_SCORER_NESTING} combinator levels deep "
            f"(this would make {levels})",
        )
