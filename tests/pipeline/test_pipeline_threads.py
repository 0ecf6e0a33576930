"""One pipeline instance serves many threads with identical results."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from pycupel.diagnostics import DiagnosticTraceCollector, TraceDetailLevel
from pycupel.model import ContextBudget, ContextItem
from pycupel.pipeline import Pipeline
from pycupel.placers import UShapedPlacer
from pycupel.scorers import (
    CompositeScorer,
    FrequencyScorer,
    KindScorer,
    PriorityScorer,
    RecencyScorer,
)
from pycupel.slicers import GreedySlice

KINDS = ["Message", "Document", "ToolOutput", "Memory"]


def workloads(count: int) -> list[list[ContextItem]]:
    rng = random.Random(20240603)
    start = datetime(2024, 6, 1, tzinfo=UTC)
    batches = []
    for batch in range(count):
        items = [
            ContextItem(
                f"item {rng.randrange(60)}",  # repeats on purpose: deduplication has work
                tokens=rng.randrange(-2, 300),
                kind=rng.choice(KINDS),
                priority=rng.choice([None, *range(5)]),
                tags=rng.sample(["a", "b", "c", "d"], rng.randrange(3)),
                timestamp=start + timedelta(minutes=rng.randrange(10_000)),
                pinned=rng.random() < 0.03,
            )
            for _ in range(50 + 10 * batch)
        ]
        batches.append(items)
    return batches


def test_eight_threads_agree_with_a_sequential_run() -> None:
    pipeline = Pipeline(
        budget=ContextBudget(max_tokens=20_000, target_tokens=3_000),
        scorer=CompositeScorer(
            [(RecencyScorer(), 3), (PriorityScorer(), 2), (KindScorer(), 1), (FrequencyScorer(), 1)]
        ),
        slicer=GreedySlice(),
        placer=UShapedPlacer(),
        overflow_strategy="truncate",
    )
    batches = workloads(24)

    def work(index: int) -> tuple[tuple[int, ...], int, list[str]]:
        items = batches[index % len(batches)]
        collector = DiagnosticTraceCollector(TraceDetailLevel.ITEM)
        result = pipeline.run(items, collector=collector)
        report = collector.build_report()
        positions = {id(item): n for n, item in enumerate(items)}
        reasons = [str(entry.reason) for entry in report.excluded]
        return tuple(positions[id(item)] for item in result.items), result.total_tokens, reasons

    jobs = list(range(400))
    sequential = [work(index) for index in jobs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        concurrent = list(pool.map(work, jobs))
    assert concurrent == sequential
    assert len({s[0] for s in sequential}) > 10  # the workloads really differ
