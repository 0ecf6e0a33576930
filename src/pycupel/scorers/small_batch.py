"""The fused run's scoring: a small batch scored by one function chosen when the pipeline is built.

For a small batch (at most :data:`~pycupel.scorers.base.SMALL_BATCH` items) a call of
``score_all`` on a composite goes through a method per child, and most of its time goes to the
calls and the checks each method repeats, not to the scores. :func:`small_batch_scoring` looks
at a scorer once (scorers are immutable) and, for a built-in :class:`RecencyScorer`,
:class:`PriorityScorer`, :class:`KindScorer` or :class:`FrequencyScorer`, or a
:class:`CompositeScorer` whose children are all of them, returns a plain function of the items
that computes the very same list: the same list forms the scorers' own ``score_all`` use
(:func:`~pycupel.scorers._rank.rank_score_list`, :func:`~pycupel.scorers.frequency.frequency_list`,
the kind table) and the composite's weighted sums in entry order, so the scores are bitwise
those of ``score_all``.

Its second argument says whether the caller knows the items to be distinct objects (the run
does when their contents are distinct), which spares FrequencyScorer its identity check.

Every score such a function returns is finite, so the run need not check them: rank and
frequency scores lie in [0, 1], kind weights are finite, and a composite's weights sum to
about 1, so its weighted sum stays below the largest child score times ``1 + 1e-9``. Kind
weights above :data:`_KIND_WEIGHT_BOUND` (where that sum could round up to infinity) get no
such function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from operator import attrgetter

from pycupel.model import ContextItem
from pycupel.scorers._rank import rank_score_list

__all__ = ["SmallBatchScoring", "small_batch_scoring"]

SmallBatchScoring = Callable[[Sequence[ContextItem], bool], list[float]]
"""``(items, distinct) -> scores``: a scorer's ``score_all`` for a small batch of items."""

_MICROS = attrgetter("timestamp_micros")
_PRIORITY = attrgetter("priority")


_KIND_WEIGHT_BOUND = 1e300
"""The largest kind weight the small-batch functions take (far below the largest float)."""


def small_batch_scoring(scorer: object) -> SmallBatchScoring | None:
    """The one function that scores a small batch as ``scorer.score_all`` does, every score
    finite, or None when ``scorer`` is not one of the built-in scorers (or a composite of
    them) it covers."""
    # Imported here: the scorers load lazily, and a pipeline without them need not load them.
    from pycupel.scorers.composite import CompositeScorer, weighted_sums  # noqa: PLC0415

    if type(scorer) is not CompositeScorer:
        return _single(scorer)
    children = [_single(child) for child in scorer.scorers]
    if None in children:
        return None
    steps: tuple[SmallBatchScoring, ...] = tuple(children)  # type: ignore[arg-type]  # no None
    if len(steps) == 4:
        w0, w1, w2, w3 = scorer.weights
        return partial(_composite_of_four, *steps, w0, w1, w2, w3)
    return partial(_composite, steps, scorer.weights, weighted_sums)


def _single(scorer: object) -> SmallBatchScoring | None:
    from pycupel.scorers.frequency import FrequencyScorer, frequency_list  # noqa: PLC0415
    from pycupel.scorers.kind import KindScorer  # noqa: PLC0415
    from pycupel.scorers.priority import PriorityScorer  # noqa: PLC0415
    from pycupel.scorers.recency import RecencyScorer  # noqa: PLC0415

    cls = type(scorer)
    if cls is RecencyScorer:
        return _recency
    if cls is PriorityScorer:
        return _priority
    if isinstance(scorer, KindScorer) and cls is KindScorer:
        if max(scorer.weights.values(), default=0.0) > _KIND_WEIGHT_BOUND:
            return None
        return partial(_ignoring_distinct, scorer.score_all)  # one C-level pass already
    if cls is FrequencyScorer:
        return frequency_list
    return None


def _recency(items: Sequence[ContextItem], distinct: bool) -> list[float]:
    return rank_score_list(list(map(_MICROS, items)))


def _priority(items: Sequence[ContextItem], distinct: bool) -> list[float]:
    return rank_score_list(list(map(_PRIORITY, items)))


def _ignoring_distinct(
    score_all: Callable[[Sequence[ContextItem]], list[float]],
    items: Sequence[ContextItem],
    distinct: bool,
) -> list[float]:
    return score_all(items)


def _composite(
    steps: tuple[SmallBatchScoring, ...],
    weights: tuple[float, ...],
    weighted_sums: Callable[[list[list[float]], tuple[float, ...]], list[float]],
    items: Sequence[ContextItem],
    distinct: bool,
) -> list[float]:
    return weighted_sums([step(items, distinct) for step in steps], weights)


def _composite_of_four(  # noqa: PLR0917 (bound once by partial)
    first: SmallBatchScoring,
    second: SmallBatchScoring,
    third: SmallBatchScoring,
    fourth: SmallBatchScoring,
    w0: float,
    w1: float,
    w2: float,
    w3: float,
    items: Sequence[ContextItem],
    distinct: bool,
) -> list[float]:
    # weighted_sums' four-child arithmetic, in the same order: the same bits.
    return [
        0.0 + a * w0 + b * w1 + c * w2 + d * w3
        for a, b, c, d in zip(
            first(items, distinct),
            second(items, distinct),
            third(items, distinct),
            fourth(items, distinct),
            strict=True,
        )
    ]
