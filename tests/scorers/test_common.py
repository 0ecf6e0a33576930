"""Properties shared by every built-in scorer: frozen configuration, no per-run state,
safe concurrent use, the Scorer protocol, and package exports."""

from __future__ import annotations

import copy
import pickle
import random
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

import pycupel.scorers as scorers_package
from pycupel.model import ContextItem
from pycupel.scorers import (
    BaseScorer,
    CompositeScorer,
    DecayScorer,
    ExponentialDecay,
    FixedClock,
    FrequencyScorer,
    KindScorer,
    MetadataKeyScorer,
    MetadataTrustScorer,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    ScaledScorer,
    Scorer,
    StepDecay,
    TagScorer,
    WindowDecay,
)

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def all_scorers() -> list[BaseScorer]:
    return [
        RecencyScorer(),
        PriorityScorer(),
        KindScorer(),
        TagScorer({"a": 1.0, "b": 2.0}),
        FrequencyScorer(),
        ReflexiveScorer(),
        CompositeScorer([(RecencyScorer(), 1.0), (KindScorer(), 2.0)]),
        ScaledScorer(PriorityScorer()),
        DecayScorer(FixedClock(NOW), ExponentialDecay(timedelta(days=1))),
        MetadataTrustScorer(),
        MetadataKeyScorer("k", "v", 2.0),
    ]


def random_items(seed: int, count: int) -> list[ContextItem]:
    rng = random.Random(seed)
    return [
        ContextItem(
            f"item {i}",
            tokens=rng.randint(1, 100),
            kind=rng.choice(["Message", "Document", "Memory"]),
            priority=rng.choice([None, 1, 2, 3]),
            timestamp=rng.choice([None, NOW - timedelta(hours=rng.randint(0, 100))]),
            tags=rng.sample(["a", "B", "c", "D"], rng.randint(0, 3)),
            future_relevance_hint=rng.choice([None, rng.random()]),
            metadata={"k": rng.choice(["v", "w"]), "cupel:trust": str(rng.random())},
        )
        for i in range(count)
    ]


@pytest.mark.parametrize("scorer", all_scorers(), ids=repr)
def test_configuration_is_frozen(scorer: BaseScorer) -> None:
    with pytest.raises(AttributeError):
        scorer.anything = 1  # type: ignore[attr-defined]
    for slot in type(scorer).__slots__:
        with pytest.raises(AttributeError, match="immutable"):
            setattr(scorer, slot, None)
        with pytest.raises(AttributeError, match="immutable"):
            delattr(scorer, slot)
    assert not hasattr(scorer, "__dict__")


@pytest.mark.parametrize("scorer", all_scorers(), ids=repr)
def test_is_a_scorer_with_consistent_forms(scorer: BaseScorer) -> None:
    assert isinstance(scorer, Scorer)
    items = random_items(1, 25)
    batch = scorer.score_array(items)
    assert batch.dtype.name == "float64"
    assert batch.shape == (25,)
    assert scorer.score_all(items) == batch.tolist()
    assert [scorer.score(item, items) for item in items] == batch.tolist()
    assert scorer.score_all([]) == []


@pytest.mark.parametrize("scorer", all_scorers(), ids=repr)
def test_scoring_does_not_change_the_scorer_or_the_items(scorer: BaseScorer) -> None:
    items = random_items(2, 30)
    before_repr = repr(scorer)
    snapshot = [(i.tags, dict(i.metadata), i.priority, i.timestamp) for i in items]
    first = scorer.score_all(items)
    assert scorer.score_all(list(reversed(items))) == list(reversed(first))
    assert scorer.score_all(items) == first
    assert repr(scorer) == before_repr
    assert [(i.tags, dict(i.metadata), i.priority, i.timestamp) for i in items] == snapshot


@pytest.mark.parametrize("scorer", all_scorers(), ids=repr)
def test_concurrent_use_gives_the_same_results(scorer: BaseScorer) -> None:
    lists = [random_items(seed, 200) for seed in range(8)]
    expected = [scorer.score_all(items) for items in lists]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(scorer.score_all, lists * 4))
    assert results == expected * 4


@pytest.mark.parametrize("scorer", all_scorers(), ids=repr)
def test_repr_is_informative(scorer: BaseScorer) -> None:
    text = repr(scorer)
    assert text.startswith(type(scorer).__name__ + "(")
    assert "object at" not in text


def test_copy_returns_an_equivalent_scorer() -> None:
    items = random_items(3, 20)
    for scorer in all_scorers():
        assert copy.deepcopy(scorer).score_all(items) == scorer.score_all(items)


def test_stateless_scorers_pickle() -> None:
    items = random_items(4, 20)
    for scorer in [
        RecencyScorer(),
        KindScorer({"Memory": 2.0}),
        TagScorer({"a": 1.0}),
        CompositeScorer([(FrequencyScorer(), 1.0), (ScaledScorer(PriorityScorer()), 1.0)]),
        DecayScorer(FixedClock(NOW), StepDecay([(timedelta(hours=5), 1.0)])),
        DecayScorer(FixedClock(NOW), WindowDecay(timedelta(hours=5))),
        MetadataKeyScorer("k", "v", 2.0),
    ]:
        clone = pickle.loads(pickle.dumps(scorer))
        assert clone.score_all(items) == scorer.score_all(items)
        assert repr(clone) == repr(scorer)


def test_package_exports_every_public_name() -> None:
    for name in scorers_package.__all__:
        assert hasattr(scorers_package, name), name
    for name in [
        "RecencyScorer",
        "PriorityScorer",
        "KindScorer",
        "TagScorer",
        "FrequencyScorer",
        "ReflexiveScorer",
        "CompositeScorer",
        "ScaledScorer",
        "DecayScorer",
        "Clock",
        "FixedClock",
        "SystemClock",
        "ExponentialDecay",
        "StepDecay",
        "WindowDecay",
        "MetadataTrustScorer",
        "MetadataKeyScorer",
    ]:
        assert name in scorers_package.__all__
