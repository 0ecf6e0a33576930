"""Shared objects under threads and asyncio, and no module-level state written at run time.

Pipelines, scorers, slicers, placers and token counters hold configuration only (CachedCounter
guards its cache with a lock), so sharing one instance between threads must give exactly the
results of sequential calls. Module globals are checked directly: every mutable container at
module level is flagged, and the contents of all module globals must not change while the
public API is exercised.
"""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
import random
import threading
import types
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any

import pytest

import pycupel
from pycupel.model import ContextBudget, ContextItem, OverflowStrategy, ScoredItem
from pycupel.pipeline import Pipeline
from pycupel.placers import ChronologicalPlacer, UShapedPlacer
from pycupel.scorers import (
    CompositeScorer,
    DecayScorer,
    ExponentialDecay,
    FixedClock,
    FrequencyScorer,
    KindScorer,
    PriorityScorer,
    RecencyScorer,
    ScaledScorer,
    TagScorer,
)
from pycupel.scorers.base import score_array
from pycupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    GreedySlice,
    KnapsackSlice,
    OptimalSlice,
    PackerSlice,
    QuotaEntry,
    QuotaSlice,
)
from pycupel.tokens import CachedCounter, HeuristicCounter

THREADS = 16
RUNS_PER_THREAD = 12
NOW = datetime(2024, 6, 1, tzinfo=UTC)


def _items(seed: int, count: int = 120) -> list[ContextItem]:
    rng = random.Random(seed)
    kinds = ["Message", "Document", "ToolOutput", "Memory"]
    return [
        ContextItem(
            f"item {index} {rng.choice('abcde') * rng.randint(1, 4)}",
            tokens=rng.randint(0, 80),
            kind=rng.choice(kinds),
            priority=rng.choice([None, 1, 2, 3]),
            tags=rng.sample(["a", "b", "c"], rng.randint(0, 2)),
            timestamp=rng.choice([None, NOW - timedelta(minutes=rng.randint(0, 5000))]),
            pinned=rng.random() < 0.03,
        )
        for index in range(count)
    ]


SCORER = CompositeScorer(
    [
        (RecencyScorer(), 2.0),
        (PriorityScorer(), 1.0),
        (ScaledScorer(FrequencyScorer()), 1.0),
        (KindScorer(), 1.0),
        (TagScorer({"a": 1.0, "b": 0.5}), 0.5),
        (DecayScorer(FixedClock(NOW), ExponentialDecay(timedelta(days=1))), 1.0),
    ]
)
COUNTS = [CountQuotaEntry("Document", 2, 6), CountQuotaEntry("Memory", 1, None)]
SLICERS = {
    "greedy": GreedySlice(),
    "knapsack": KnapsackSlice(bucket_size=10),
    "quota": QuotaSlice([QuotaEntry("Document", 10, 50), QuotaEntry("Message", 20, 80)]),
    "count-quota": CountQuotaSlice(COUNTS),
    "count-knapsack": CountConstrainedKnapsackSlice(COUNTS, KnapsackSlice(bucket_size=10)),
    "packer": PackerSlice(),
    # A generous time limit: a selection cut short by the limit may differ (documented), and
    # 16 busy threads on two cores slow every solve down.
    "optimal": OptimalSlice(
        quotas=[QuotaEntry("Document", 10, 60)], count_quotas=COUNTS, time_limit=60.0
    ),
}


def _pipeline(slicer_name: str, placer: object) -> Pipeline:
    return Pipeline(
        budget=ContextBudget(max_tokens=1200, target_tokens=900, output_reserve=100),
        scorer=SCORER,
        slicer=SLICERS[slicer_name],
        placer=placer,  # type: ignore[arg-type]
        overflow_strategy=OverflowStrategy.TRUNCATE,
    )


def _fingerprint(pipeline: Pipeline, items: Sequence[ContextItem], dry: bool) -> tuple[Any, ...]:
    """What a run returned, comparable across runs (identities, totals, the report)."""
    if dry:
        result = pipeline.dry_run(items)
        report = result.report.to_dict()
        for event in report["events"]:
            event["duration_ms"] = 0.0
        report.get("solver", {}).pop("seconds", None)
        return (tuple(id(i) for i in result.items), result.total_tokens, repr(report))
    plain = pipeline.run(items)
    return (tuple(id(i) for i in plain.items), plain.total_tokens, None)


def _hammer(calls: list[Callable[[], object]], threads: int = THREADS) -> list[object]:
    """Run ``calls`` from ``threads`` threads started together; results in call order."""
    results: list[object] = [None] * len(calls)
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def worker(offset: int) -> None:
        barrier.wait()
        for index in range(offset, len(calls), threads):
            try:
                results[index] = calls[index]()
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)

    workers = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    assert not errors, errors[:3]
    return results


@pytest.mark.parametrize("slicer_name", sorted(SLICERS))
@pytest.mark.parametrize("placer", [ChronologicalPlacer(), UShapedPlacer()], ids=repr)
def test_one_pipeline_shared_by_many_threads(slicer_name: str, placer: object) -> None:
    pipeline = _pipeline(slicer_name, placer)
    inputs = [_items(seed) for seed in range(4)]
    runs = 4 if slicer_name == "optimal" else RUNS_PER_THREAD
    jobs = [(inputs[n % 4], n % 2 == 0) for n in range(THREADS * runs)]
    expected = {(id(items), dry): _fingerprint(pipeline, items, dry) for items, dry in jobs}
    calls = [lambda items=items, dry=dry: _fingerprint(pipeline, items, dry) for items, dry in jobs]
    results = _hammer(calls)
    for (items, dry), got in zip(jobs, results, strict=True):
        assert got == expected[(id(items), dry)]


def test_asyncio_through_a_thread_pool_matches_sequential_runs() -> None:
    pipelines = [_pipeline(name, UShapedPlacer()) for name in ("greedy", "knapsack", "quota")]
    inputs = [_items(seed) for seed in range(3)]
    jobs = [(p, items, dry) for p in pipelines for items in inputs for dry in (False, True)] * 6
    expected = [_fingerprint(p, items, dry) for p, items, dry in jobs]

    async def main() -> list[tuple[Any, ...]]:
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(max_workers=8) as pool:
            tasks = [
                asyncio.to_thread(_fingerprint, p, items, dry)
                if index % 2
                else loop.run_in_executor(pool, _fingerprint, p, items, dry)
                for index, (p, items, dry) in enumerate(jobs)
            ]
            return list(await asyncio.gather(*tasks))

    assert asyncio.run(main()) == expected


def test_shared_scorers_slicers_and_placers_across_threads() -> None:
    items = _items(11)
    scores = score_array(SCORER, items).tolist()
    order = sorted(range(len(items)), key=lambda i: -scores[i])
    scored = [ScoredItem(items[i], scores[i]) for i in order]
    budget = ContextBudget(max_tokens=700, target_tokens=700)
    components: list[Callable[[], object]] = [
        lambda: tuple(score_array(SCORER, items).tolist()),
        *(
            lambda slicer=slicer: tuple(id(i) for i in slicer.slice(scored, budget).selected)
            for slicer in SLICERS.values()
        ),
        lambda: tuple(id(i) for i in ChronologicalPlacer().place(scored)),
        lambda: tuple(id(i) for i in UShapedPlacer().place(scored)),
    ]
    expected = [call() for call in components]
    calls = [components[n % len(components)] for n in range(len(components) * THREADS * 2)]
    for index, got in enumerate(_hammer(calls)):
        assert got == expected[index % len(components)]


def test_cached_counter_shared_by_threads() -> None:
    counter = CachedCounter(HeuristicCounter(), max_entries=64)  # small: evictions race too
    reference = HeuristicCounter()
    texts = [f"text number {n} " * (n % 7 + 1) for n in range(200)]
    expected = reference.count_batch(texts)

    def job(n: int) -> object:
        if n % 2:
            return counter.count_batch(texts[n % 50 :])
        return [counter.count(text) for text in texts[n % 50 :]]

    calls = [lambda n=n: job(n) for n in range(THREADS * 8)]
    for n, got in enumerate(_hammer(calls)):
        assert got == expected[n % 50 :]
    assert counter.size <= 64
    assert counter.hits + counter.misses == sum(len(texts) - n % 50 for n in range(THREADS * 8))


# --------------------------------------------------------------------------- module state

# Module-level mutable containers that are nevertheless constant: none today. Add an entry
# ("module", "name") only with a comment saying why it cannot be a tuple, frozenset or
# MappingProxyType.
MUTABLE_GLOBALS_ALLOWED: frozenset[tuple[str, str]] = frozenset()

# Class machinery (enum member tables, NamedTuple defaults, the model configuration pydantic
# sets on every model class, e.g. the LlamaIndex integration's): built once by the class
# statement and never written afterwards.
CLASS_MACHINERY = frozenset(
    {
        "_member_names_",
        "_member_map_",
        "_value2member_map_",
        "_unhashable_values_",
        "_field_defaults",
        "model_config",
    }
)
MUTABLE = (dict, list, set, bytearray)


def _all_modules() -> list[types.ModuleType]:
    modules = [pycupel]
    for info in pkgutil.walk_packages(pycupel.__path__, "pycupel."):
        if not info.name.endswith(".__main__"):  # importing it runs the command line
            modules.append(importlib.import_module(info.name))
    return modules


def _own_classes(module: types.ModuleType) -> list[type]:
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type) and value.__module__ == module.__name__
    ]


def test_no_module_level_mutable_containers() -> None:
    found = []
    for module in _all_modules():
        for name, value in vars(module).items():
            if name.startswith("__") or (module.__name__, name) in MUTABLE_GLOBALS_ALLOWED:
                continue
            if isinstance(value, MUTABLE):
                found.append(f"{module.__name__}.{name}: {type(value).__name__}")
        for cls in _own_classes(module):
            for name, value in vars(cls).items():
                if name.startswith("__") or name in CLASS_MACHINERY:
                    continue
                if isinstance(value, MUTABLE):
                    found.append(f"{module.__name__}.{cls.__name__}.{name}: {type(value).__name__}")
    assert not found, "mutable module/class-level containers:\n" + "\n".join(found)


def _state(value: object, depth: int = 0, seen: frozenset[int] = frozenset()) -> object:
    """A comparable picture of a global's contents, walking containers and object attributes
    (functions, classes and modules by name; objects also by identity)."""
    if value is None or isinstance(value, bool | int | str | bytes | Enum):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, types.ModuleType | types.FunctionType | types.BuiltinFunctionType | type):
        return ("ref", getattr(value, "__qualname__", getattr(value, "__name__", "?")))
    if id(value) in seen or depth > 8:
        return ("seen", id(value))
    inner = seen | {id(value)}
    if isinstance(value, dict | types.MappingProxyType):
        return (
            type(value).__name__,
            tuple(
                (_state(k, depth + 1, inner), _state(v, depth + 1, inner)) for k, v in value.items()
            ),
        )
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_state(x, depth + 1, inner) for x in value))
    if isinstance(value, set | frozenset | bytearray):
        return (type(value).__name__, tuple(sorted(repr(x) for x in value)))
    names = [
        n for k in type(value).__mro__ for n in getattr(k, "__slots__", ()) if isinstance(n, str)
    ]
    fields = {n: getattr(value, n) for n in names if hasattr(value, n)}
    if hasattr(value, "__dict__"):
        fields.update(vars(value))
    return (
        "object",
        type(value).__qualname__,
        id(value),
        tuple((k, _state(v, depth + 1, inner)) for k, v in sorted(fields.items())),
    )


def _snapshot(modules: list[types.ModuleType]) -> dict[str, object]:
    picture: dict[str, object] = {}
    for module in modules:
        for name, value in list(vars(module).items()):
            if name.startswith("__"):
                continue
            picture[f"{module.__name__}.{name}"] = _state(value)
        for cls in _own_classes(module):
            # Class attributes too (the ContextKind.MESSAGE constants, defaults...).
            for name, value in list(vars(cls).items()):
                if not name.startswith("__") and not callable(value):
                    picture[f"{module.__name__}.{cls.__qualname__}.{name}"] = _state(value)
    return picture


def _exercise_public_api() -> None:
    from pycupel import presets
    from pycupel.adapters import openai
    from pycupel.analytics import find_min_budget, sweep_budgets
    from pycupel.diagnostics import SelectionReport
    from pycupel.itemio import items_to_json, items_to_jsonl, parse_items
    from pycupel.policy import dumps_policy, loads_policy

    items = _items(5, 30)
    for name in ("greedy", "knapsack", "quota", "count-quota", "packer", "optimal"):
        for placer in (ChronologicalPlacer(), UShapedPlacer()):
            pipeline = _pipeline(name, placer)
            pipeline.run(_items(3))
            report = pipeline.dry_run(_items(4)).report
            SelectionReport.from_json(report.to_json())
    for preset in presets.names():
        policy = presets.by_name(preset)
        for kind in ("json", "toml"):
            loads_policy(dumps_policy(policy, kind), kind)  # type: ignore[arg-type]
        pipeline = policy.build(ContextBudget(max_tokens=800, target_tokens=600))
        pipeline.dry_run(items)
        if pipeline.slicer.budget_monotonic:
            find_min_budget(pipeline, items, items[0], 800)
        sweep_budgets(pipeline, items, [100, 300])
    parse_items(items_to_json(items))
    parse_items(items_to_jsonl(items))
    openai.fit_messages(
        [{"role": "system", "content": "terse"}, {"role": "user", "content": "hi " * 50}],
        budget=ContextBudget(max_tokens=500, target_tokens=400),
    )
    CachedCounter(HeuristicCounter()).count_batch([item.content for item in items])


def test_module_globals_do_not_change_at_run_time() -> None:
    modules = _all_modules()
    _exercise_public_api()  # first use may fill lazy caches legitimately: start after it
    before = _snapshot(modules)
    _exercise_public_api()
    after = _snapshot(modules)
    changed = sorted(key for key in before if after.get(key) != before[key])
    assert not changed, f"module globals changed at run time: {changed}"


def test_the_snapshot_sees_a_change_inside_a_constant() -> None:
    fake = types.ModuleType("pycupel_fake")
    fake.TABLE = types.MappingProxyType({"a": [1, 2]})  # type: ignore[attr-defined]
    before = _snapshot([fake])
    fake.TABLE["a"].append(3)  # type: ignore[attr-defined]
    assert _snapshot([fake]) != before
