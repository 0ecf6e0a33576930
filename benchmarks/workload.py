"""The deterministic synthetic workload every benchmark uses.

``make_items(n, seed=...)`` builds ``n`` context items that look like a busy assistant's
candidate pool:

* tokens uniform in 20..2,000;
* kinds cycling over the five well-known kinds (Message, Document, ToolOutput, Memory,
  SystemPrompt);
* each item carries a priority in 0..100 with probability 0.8 (about 80 % of the items), the
  rest none;
* 0..3 tags drawn from a vocabulary of 50;
* distinct timestamps spread at random over one year (timezone-aware UTC, whole seconds);
* unique contents.

``budget_for(items)`` gives a budget of 25 % of their total tokens, and
``make_scored(n, ...)`` the same items with deterministic scores, sorted as the pipeline sorts
them (score descending, input order on ties). The same ``(n, seed)`` always yields the same
workload, on every machine and Python version (only ``random.Random`` is used).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from pycupel.model import ContextBudget, ContextItem, ContextKind, ScoredItem

__all__ = [
    "DEFAULT_SEED",
    "KINDS",
    "TAG_VOCABULARY",
    "budget_for",
    "make_items",
    "make_scored",
]

DEFAULT_SEED = 7
KINDS = (
    ContextKind.MESSAGE,
    ContextKind.DOCUMENT,
    ContextKind.TOOL_OUTPUT,
    ContextKind.MEMORY,
    ContextKind.SYSTEM_PROMPT,
)
TAG_VOCABULARY = tuple(f"topic-{index:02d}" for index in range(50))
_YEAR_START = datetime(2024, 1, 1, tzinfo=UTC)
_YEAR_SECONDS = 366 * 24 * 3600  # 2024 is a leap year
_WORDS = (
    "budget",
    "context",
    "window",
    "token",
    "summary",
    "memory",
    "tool",
    "result",
    "user",
    "assistant",
    "query",
    "document",
    "retrieval",
    "ranking",
    "schedule",
    "invoice",
    "deploy",
    "error",
    "latency",
    "cache",
    "review",
)


def make_items(n: int, seed: int = DEFAULT_SEED) -> list[ContextItem]:
    """``n`` synthetic items (see the module docstring); deterministic for a given seed."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if n > _YEAR_SECONDS:
        raise ValueError(f"n must be <= {_YEAR_SECONDS} for distinct whole-second timestamps")
    rng = random.Random(seed)
    seconds = rng.sample(range(_YEAR_SECONDS), n)
    items = []
    for index in range(n):
        has_priority = rng.random() < 0.8
        priority = rng.randint(0, 100) if has_priority else None
        tags = rng.sample(TAG_VOCABULARY, rng.randint(0, 3))
        words = " ".join(rng.choice(_WORDS) for _ in range(6))
        items.append(
            ContextItem(
                f"#{index:06d} {words}",
                tokens=rng.randint(20, 2000),
                kind=KINDS[index % len(KINDS)],
                priority=priority,
                tags=tags,
                timestamp=_YEAR_START + timedelta(seconds=seconds[index]),
            )
        )
    return items


def budget_for(items: list[ContextItem]) -> ContextBudget:
    """A budget whose target (and maximum) is 25 % of the items' total tokens."""
    target = sum(item.tokens for item in items) // 4
    return ContextBudget(max_tokens=target, target_tokens=target)


def make_scored(n: int, seed: int = DEFAULT_SEED) -> list[ScoredItem]:
    """``make_items(n, seed)`` with deterministic scores in [0, 1), score-sorted."""
    items = make_items(n, seed)
    rng = random.Random(seed ^ 0x5EED)
    scored = [ScoredItem(item, rng.random()) for item in items]
    scored.sort(key=lambda entry: -entry.score)  # stable: input order on ties
    return scored
