"""Scorers: one relevance score per item (see :mod:`pycupel.scorers.base` for the contract).

Absolute scorers look at one item: :class:`KindScorer`, :class:`TagScorer`,
:class:`ReflexiveScorer`, :class:`DecayScorer`, :class:`MetadataTrustScorer`,
:class:`MetadataKeyScorer`. Relative scorers rank an item among its peers in one
O(N log N) pass: :class:`RecencyScorer`, :class:`PriorityScorer`, :class:`FrequencyScorer`.
Combinators: :class:`CompositeScorer` (weighted average) and :class:`ScaledScorer`
(min-max normalisation). Query-aware scorers read the run's query
(``Pipeline.run(items, query=...)``): :class:`RelevanceScorer` (BM25), :class:`EmbeddingScorer`
(your embedding function) and :class:`RankFusionScorer` (reciprocal rank fusion);
:class:`RetrievalScoreScorer` turns a retriever's raw scores into [0, 1].
"""

from typing import TYPE_CHECKING

from pycupel._lazy import lazy_attributes

# Each name loads its own module on first use: a pipeline that needs three scorers does not
# import the others (nor numpy, which only their array paths use).
if TYPE_CHECKING:
    from pycupel.scorers.base import (
        MAX_SCORER_NESTING,
        BaseScorer,
        FunctionScorer,
        ItemScorer,
        QueryAwareScorer,
        Scorer,
        as_scorer,
        score_array,
        score_array_for,
    )
    from pycupel.scorers.composite import CompositeScorer, find_cycle
    from pycupel.scorers.decay import (
        Clock,
        DecayCurve,
        DecayScorer,
        ExponentialDecay,
        FixedClock,
        StepDecay,
        SystemClock,
        WindowDecay,
    )
    from pycupel.scorers.frequency import FrequencyScorer
    from pycupel.scorers.kind import KindScorer
    from pycupel.scorers.metadata import (
        TRUST_KEY,
        MetadataKeyScorer,
        MetadataTrustScorer,
        parse_decimal_float,
    )
    from pycupel.scorers.priority import PriorityScorer
    from pycupel.scorers.recency import RecencyScorer
    from pycupel.scorers.reflexive import ReflexiveScorer
    from pycupel.scorers.relevance import (
        EmbeddingScorer,
        EmbedFunction,
        RankFusionScorer,
        RelevanceScorer,
        RetrievalScoreScorer,
    )
    from pycupel.scorers.scaled import ScaledScorer
    from pycupel.scorers.tag import TagScorer

__all__ = [
    "MAX_SCORER_NESTING",
    "TRUST_KEY",
    "BaseScorer",
    "Clock",
    "CompositeScorer",
    "DecayCurve",
    "DecayScorer",
    "EmbedFunction",
    "EmbeddingScorer",
    "ExponentialDecay",
    "FixedClock",
    "FrequencyScorer",
    "FunctionScorer",
    "ItemScorer",
    "KindScorer",
    "MetadataKeyScorer",
    "MetadataTrustScorer",
    "PriorityScorer",
    "QueryAwareScorer",
    "RankFusionScorer",
    "RecencyScorer",
    "ReflexiveScorer",
    "RelevanceScorer",
    "RetrievalScoreScorer",
    "ScaledScorer",
    "Scorer",
    "StepDecay",
    "SystemClock",
    "TagScorer",
    "WindowDecay",
    "as_scorer",
    "find_cycle",
    "parse_decimal_float",
    "score_array",
    "score_array_for",
]

__getattr__, __dir__ = lazy_attributes(
    "pycupel.scorers",
    {
        "BaseScorer": "pycupel.scorers.base",
        "Clock": "pycupel.scorers.decay",
        "CompositeScorer": "pycupel.scorers.composite",
        "DecayCurve": "pycupel.scorers.decay",
        "DecayScorer": "pycupel.scorers.decay",
        "EmbedFunction": "pycupel.scorers.relevance",
        "EmbeddingScorer": "pycupel.scorers.relevance",
        "ExponentialDecay": "pycupel.scorers.decay",
        "FixedClock": "pycupel.scorers.decay",
        "FrequencyScorer": "pycupel.scorers.frequency",
        "FunctionScorer": "pycupel.scorers.base",
        "ItemScorer": "pycupel.scorers.base",
        "KindScorer": "pycupel.scorers.kind",
        "MAX_SCORER_NESTING": "pycupel.scorers.base",
        "MetadataKeyScorer": "pycupel.scorers.metadata",
        "MetadataTrustScorer": "pycupel.scorers.metadata",
        "PriorityScorer": "pycupel.scorers.priority",
        "QueryAwareScorer": "pycupel.scorers.base",
        "RankFusionScorer": "pycupel.scorers.relevance",
        "RecencyScorer": "pycupel.scorers.recency",
        "ReflexiveScorer": "pycupel.scorers.reflexive",
        "RelevanceScorer": "pycupel.scorers.relevance",
        "RetrievalScoreScorer": "pycupel.scorers.relevance",
        "ScaledScorer": "pycupel.scorers.scaled",
        "Scorer": "pycupel.scorers.base",
        "StepDecay": "pycupel.scorers.decay",
        "SystemClock": "pycupel.scorers.decay",
        "TRUST_KEY": "pycupel.scorers.metadata",
        "TagScorer": "pycupel.scorers.tag",
        "WindowDecay": "pycupel.scorers.decay",
        "as_scorer": "pycupel.scorers.base",
        "find_cycle": "pycupel.scorers.composite",
        "parse_decimal_float": "pycupel.scorers.metadata",
        "score_array": "pycupel.scorers.base",
        "score_array_for": "pycupel.scorers.base",
    },
    __all__,
)
