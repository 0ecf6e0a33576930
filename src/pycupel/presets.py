"""The seven reference presets: ready-made policies for common workloads.

===========  ===============================  =====================  =============
Preset       Scorers (weight)                 Slicer                 Placer
===========  ===============================  =====================  =============
Chat         recency 3, kind 1                greedy                 chronological
CodeReview   kind 2, priority 2, recency 1    greedy                 chronological
Rag          reflexive 3, kind 1              greedy                 u-shaped
DocumentQa   kind 2, reflexive 2, priority 1  knapsack (bucket 100)  u-shaped
ToolUse      kind 2, recency 2, priority 1    greedy                 chronological
LongRunning  recency 3, frequency 1, kind 1   greedy                 chronological
Debugging    priority 3, kind 2, recency 1    greedy                 chronological
===========  ===============================  =====================  =============

Every preset deduplicates, raises on overflow (THROW), and uses the kind scorer with the
specification's default weights.

Three more presets go beyond the specification's set and read the run's query
(``Pipeline.run(items, query=...)``):

============  ===========================================  =======  =============
Preset        Scorers (weight)                             Slicer   Placer
============  ===========================================  =======  =============
Conversation  relevance 10 (query expansion 0.3), recency  greedy   chronological
              0.1
Retrieval     retrieval score 2 (rank), relevance 1        score    u-shaped
                                                           order
Memory        relevance 3 (expansion 0.3), recency 1,      greedy   chronological
              kind 1
============  ===========================================  =======  =============

``Conversation`` is the default of the chat adapters' ``fit_messages`` and of the CLI, where
it is combined with the conversation's structure (a recent tail, neighbours, dated headers;
see :mod:`pycupel.adapters`). ``Retrieval`` ranks retrieved chunks by the retriever's own
score (``metadata["retrieval_score"]``, any range) and by their words' match with the
question, and takes them highest score first, skipping what does not fit (score order: a
chunk is never dropped for a lower-scored one it could have replaced; see :func:`retrieval`).
``Memory`` recalls long-term memories by relevance, then recency. These three do not
deduplicate (two turns that read the same are still two turns).

A preset is an ordinary :class:`~pycupel.policy.Policy`:
build it with a budget (``presets.chat().build(budget)``), save it, or derive a variant with
:func:`dataclasses.replace`.

Examples:
    >>> from pycupel import presets
    >>> presets.names()
    ('Chat', 'CodeReview', 'Rag', 'DocumentQa', 'ToolUse', 'LongRunning', 'Debugging')
    >>> presets.by_name("code-review").name
    'CodeReview'
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final

from pycupel.errors import PipelineConfigError
from pycupel.model import OverflowStrategy, ascii_fold
from pycupel.policy import Policy, ScorerSpec, SlicerSpec
from pycupel.shrink import Shrink

_EXPANSION = 0.3
"""Weight of the query-expansion terms in the query-aware presets' relevance scorer."""

__all__ = [
    "all_names",
    "by_name",
    "chat",
    "code_review",
    "conversation",
    "debugging",
    "document_qa",
    "long_running",
    "memory",
    "names",
    "rag",
    "retrieval",
    "tool_use",
]


def _preset(
    name: str,
    description: str,
    scorers: list[tuple[str, float]],
    *,
    slicer: SlicerSpec | None = None,
    placer: str = "chronological",
) -> Policy:
    return Policy(
        name=name,
        description=description,
        scorers=[ScorerSpec(type_name, weight) for type_name, weight in scorers],
        slicer=slicer if slicer is not None else SlicerSpec("greedy"),
        placer=placer,
        deduplicate=True,
        overflow_strategy=OverflowStrategy.THROW,
    )


def chat() -> Policy:
    """Conversations: the newest turns first, kinds as a tie-breaker; read in time order."""
    return _preset(
        "Chat",
        "Conversation: keep the latest turns, prefer weightier kinds, in time order.",
        [("recency", 3), ("kind", 1)],
    )


def code_review() -> Policy:
    """Code review: important kinds and explicit priorities, then recency."""
    return _preset(
        "CodeReview",
        "Code review: what kind of context it is and how important the caller says it is "
        "count most; recency breaks ties.",
        [("kind", 2), ("priority", 2), ("recency", 1)],
    )


def rag() -> Policy:
    """Retrieval-augmented generation: the retriever's relevance hints, best at the edges."""
    return _preset(
        "Rag",
        "Retrieval: rank passages by the caller's relevance hint and place the best at both "
        "ends of the window.",
        [("reflexive", 3), ("kind", 1)],
        placer="u-shaped",
    )


def document_qa() -> Policy:
    """Question answering over documents: optimal packing of relevant, important passages."""
    return _preset(
        "DocumentQa",
        "Document Q&A: kind and relevance first, then priority; packed by knapsack in "
        "100-token buckets, best passages at the edges.",
        [("kind", 2), ("reflexive", 2), ("priority", 1)],
        slicer=SlicerSpec.of("knapsack", bucket_size=100),
        placer="u-shaped",
    )


def tool_use() -> Policy:
    """Agents calling tools: tool outputs and memories by kind, and the latest steps."""
    return _preset(
        "ToolUse",
        "Tool use: favour tool outputs and memories by kind and the most recent steps; "
        "priority breaks ties.",
        [("kind", 2), ("recency", 2), ("priority", 1)],
    )


def long_running() -> Policy:
    """Long sessions: recent items, plus topics that keep coming back (shared tags)."""
    return _preset(
        "LongRunning",
        "Long sessions: mostly recency, with a boost for recurring topics (shared tags) "
        "and weightier kinds.",
        [("recency", 3), ("frequency", 1), ("kind", 1)],
    )


def debugging() -> Policy:
    """Debugging: explicitly prioritised evidence (errors, traces) first."""
    return _preset(
        "Debugging",
        "Debugging: what the caller marks as important (errors, stack traces) first, then "
        "kind, then recency.",
        [("priority", 3), ("kind", 2), ("recency", 1)],
    )


def conversation() -> Policy:
    """Chat histories: what the latest question needs, then the newest turns.

    The chat adapters combine it with the conversation's structure (see
    :mod:`pycupel.adapters`); on its own it ranks items by BM25 relevance to the run's query,
    recency breaking ties. It carries :class:`~pycupel.shrink.Shrink` defaults, so a chat
    history fitted with it keeps older tool results as placeholders after their calls (and
    long ones truncated) instead of dropping them; ``keep_whole`` is 0 because the
    structure-aware selection already keeps the newest turns whole as its recent tail, and a
    result kept whole by force would be dropped, call and all, when it does not fit.
    """
    return Policy(
        name="Conversation",
        description="Conversation: turns relevant to the latest question first (BM25 with "
        "query expansion), the newest turns next; in time order.",
        scorers=[
            ScorerSpec.of("relevance", 10, expansion=_EXPANSION),
            ScorerSpec("recency", 0.1),
        ],
        slicer=SlicerSpec("greedy"),
        placer="chronological",
        deduplicate=False,
        overflow_strategy=OverflowStrategy.THROW,
        shrink=Shrink(),
    )


def retrieval() -> Policy:
    """Retrieved chunks: the retriever's own scores (any range) and the question's words.

    **Scores.** Each chunk's score combines the rank of its retriever score
    (``metadata["retrieval_score"]``, any range; weight 2) with the BM25 match of its words
    with the question (weight 1). The report shows that combined score.

    **The rule at tight budgets: the higher score wins.** Chunks are taken by combined score,
    highest first; one that does not fit the room left is skipped and the next is tried
    (skip and continue, to the end of the list: ``packer`` with
    ``max_consecutive_skips="unlimited"``). So a chunk is never left out while one of lower
    combined score that it could have replaced is kept, and the best chunk is always kept
    when it fits the budget on its own. Greedy (score per token), the slicer of the
    specification's presets, instead prefers short chunks: at tight budgets it drops the
    chunk a question needs for shorter, lower-scored distractors. Measured on LoCoMo
    questions (``benchmarks/quality/retrieval_budget.py``: a BM25 retriever's top 30 turns
    for each of the 1,503 questions whose evidence it retrieved), score order keeps 0.50 of
    the evidence at 80 tokens, 0.71 at 160 and 0.83 at 320, against 0.14 / 0.28 / 0.59 for
    greedy and 0.15 / 0.30 / 0.61 for the largest total score (an exact knapsack, which also
    drops the best chunk for several small ones: it keeps it in 42-88% of the questions);
    greedy left a chunk out for a lower one it could have replaced in 36-41% of the
    questions, score order in none; the window is as full (95-99% of the budget). Ordering
    by the retriever's raw score alone keeps less (0.44 / 0.65 / 0.79): the question's
    words are worth their third of the score.
    """
    return Policy(
        name="Retrieval",
        description="Retrieval: rank chunks by the retriever's score (metadata "
        "retrieval_score, any range) and their match with the question; take them highest "
        "score first, skipping what does not fit; best at the edges.",
        scorers=[ScorerSpec("retrieval_score", 2), ScorerSpec("relevance", 1)],
        slicer=SlicerSpec.of("packer", max_consecutive_skips="unlimited"),
        placer="u-shaped",
        deduplicate=True,
        overflow_strategy=OverflowStrategy.THROW,
    )


def memory() -> Policy:
    """Long-term memory: memories relevant to the query, then recent ones."""
    return Policy(
        name="Memory",
        description="Long-term memory: memories relevant to the query first (BM25 with query "
        "expansion), then recent ones and weightier kinds; in time order.",
        scorers=[
            ScorerSpec.of("relevance", 3, expansion=_EXPANSION),
            ScorerSpec("recency", 1),
            ScorerSpec("kind", 1),
        ],
        slicer=SlicerSpec("greedy"),
        placer="chronological",
        deduplicate=True,
        overflow_strategy=OverflowStrategy.THROW,
    )


_PRESETS: Final[Mapping[str, Callable[[], Policy]]] = MappingProxyType(
    {
        "Chat": chat,
        "CodeReview": code_review,
        "Rag": rag,
        "DocumentQa": document_qa,
        "ToolUse": tool_use,
        "LongRunning": long_running,
        "Debugging": debugging,
    }
)


_QUERY_PRESETS: Final[Mapping[str, Callable[[], Policy]]] = MappingProxyType(
    {"Conversation": conversation, "Retrieval": retrieval, "Memory": memory}
)
_ALL: Final[Mapping[str, Callable[[], Policy]]] = MappingProxyType({**_PRESETS, **_QUERY_PRESETS})


def names() -> tuple[str, ...]:
    """The seven reference preset names, in the reference order."""
    return tuple(_PRESETS)


def all_names() -> tuple[str, ...]:
    """Every preset name: the seven reference presets, then Conversation, Retrieval, Memory."""
    return tuple(_ALL)


def _squash(name: str) -> str:
    return re.sub(r"[-_\s]", "", ascii_fold(name))


def by_name(name: str) -> Policy:
    """The preset called ``name``, ignoring ASCII case and ``-``/``_``/spaces
    (``"code-review"``, ``"code_review"``, ``"CodeReview"``).

    Raises:
        PipelineConfigError: no preset has that name (the message suggests the closest).
    """
    if not isinstance(name, str):
        raise PipelineConfigError("preset", name, "must be a preset name (a string)")
    squashed = _squash(name)
    by_squashed = {_squash(preset): preset for preset in _ALL}
    if squashed in by_squashed:
        return _ALL[by_squashed[squashed]]()
    close = difflib.get_close_matches(squashed, list(by_squashed), n=1, cutoff=0.6)
    hint = f" (did you mean {by_squashed[close[0]]!r}?)" if close else ""
    raise PipelineConfigError("preset", name, f"must be one of: {', '.join(_ALL)}{hint}")
