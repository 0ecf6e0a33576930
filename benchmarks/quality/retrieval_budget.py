"""Retrieval at tight budgets: which slicing rule keeps what the question needs, and fairly.

    python benchmarks/quality/retrieval_budget.py [--every N] [--budgets 80 160 320] [--top 30]

**The retrieval sets.** For every LoCoMo question with evidence (``locomo.py``: the data,
its location, the encoding of turns), a BM25 retriever (``bm25s`` with the PyStemmer
English stemmer and English stop words, indexed over the conversation's turns) returns its
``--top`` turns with their raw scores (about 0 to 25), the chunks a RAG pipeline would be
handed. Questions none of whose evidence turns were retrieved are left out: no slicer can
keep them. Each chunk is a ``ContextItem`` of kind ``Document`` counted by the default
``HeuristicCounter``, its raw score in ``metadata["retrieval_score"]``; the pipeline runs
with the question as its query at each budget (``max_tokens = target_tokens``).

**The rules compared** (the ``presets.retrieval()`` scorers in every row but the last):

* ``greedy``: score per token, best first, skipping what does not fit (the spec's
  GreedySlice; the preset's slicer before this benchmark);
* ``score order``: the highest combined score first, skipping what does not fit and going on
  (``packer`` with ``max_consecutive_skips="unlimited"``);
* ``knapsack``: the largest total score under the budget, exactly (``KnapsackSlice`` with
  ``bucket_size=1``);
* ``raw score order``: the retriever's own score alone, highest first, skip and continue
  (what "a higher retrieval score wins" means literally, without the question's words).

**The figures.** ``evidence`` is the share of the question's retrieved evidence turns kept,
averaged over questions. ``dropped for lower`` is the share of questions where a chunk was
left out for budget while a chunk of lower combined score was kept that it could have
replaced (its tokens at most the kept chunk's plus the room left over): the unfairness a
reader of the report sees. ``raw inversions`` is the same by the retriever's raw score.
``top kept`` is the share of questions whose highest-scored chunk (by combined score) is
kept when it fits the budget on its own. ``tokens`` is the mean share of the budget used.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo

from pycupel import ContextBudget, ContextItem, presets
from pycupel.policy import Policy, ScorerSpec, SlicerSpec
from pycupel.tokens import HeuristicCounter

COUNTER = HeuristicCounter()


def rules() -> dict[str, Policy]:
    base = presets.retrieval()
    greedy = dataclasses.replace(base, slicer=SlicerSpec("greedy"))
    return {
        "greedy": greedy,
        "score order": dataclasses.replace(
            base, slicer=SlicerSpec.of("packer", max_consecutive_skips="unlimited")
        ),
        "knapsack": dataclasses.replace(base, slicer=SlicerSpec.of("knapsack", bucket_size=1)),
        "raw score order": dataclasses.replace(
            base,
            scorers=[ScorerSpec.of("retrieval_score", 1, scale="minmax")],
            slicer=SlicerSpec.of("packer", max_consecutive_skips="unlimited"),
        ),
    }


@dataclasses.dataclass
class Tally:
    evidence: list[float] = dataclasses.field(default_factory=list)
    dropped_for_lower: list[bool] = dataclasses.field(default_factory=list)
    raw_inversions: list[bool] = dataclasses.field(default_factory=list)
    top_kept: list[bool] = dataclasses.field(default_factory=list)
    used: list[float] = dataclasses.field(default_factory=list)


def unfair(
    kept: Sequence[int],
    left: Sequence[int],
    value: Sequence[float],
    tokens: Sequence[int],
    room: int,
) -> bool:
    """Whether some chunk left out outranks a kept one it could have replaced."""
    for out in left:
        for inside in kept:
            if value[out] > value[inside] and tokens[out] <= tokens[inside] + room:
                return True
    return False


def retrieval_sets(every: int, top: int) -> list[tuple[str, list[ContextItem], set[int]]]:
    """(question, chunks best first, positions of the retrieved evidence chunks)."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    sets: list[tuple[str, list[ContextItem], set[int]]] = []
    for conversation in locomo.conversations():
        texts = [message["content"] for message in conversation.messages]
        corpus = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(corpus, show_progress=False)
        for question in conversation.questions[::every]:
            query = bm25s.tokenize(
                [question.text],
                stopwords="en",
                stemmer=stemmer,
                return_ids=False,
                show_progress=False,
            )
            if not query or not query[0]:
                continue
            scores = retriever.get_scores(query[0])
            ranked = sorted(range(len(texts)), key=lambda i: (-scores[i], i))[:top]
            ranked = [index for index in ranked if scores[index] > 0]
            evidence = {pos for pos, index in enumerate(ranked) if index in question.evidence}
            if not evidence:
                continue
            chunks = [
                ContextItem(
                    texts[index],
                    tokens=COUNTER.count(texts[index]),
                    kind="Document",
                    metadata={"retrieval_score": float(scores[index])},
                )
                for index in ranked
            ]
            sets.append((question.text, chunks, evidence))
    return sets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=int, default=1, help="every N-th question")
    parser.add_argument("--budgets", type=int, nargs="+", default=[80, 160, 320])
    parser.add_argument("--top", type=int, default=30, help="chunks the retriever returns")
    args = parser.parse_args()

    sets = retrieval_sets(args.every, args.top)
    sizes = [chunk.tokens for _, chunks, _ in sets for chunk in chunks]
    raw = [chunk.metadata["retrieval_score"] for _, chunks, _ in sets for chunk in chunks]
    print(
        f"{len(sets)} questions with retrieved evidence; {args.top} chunks each; chunk tokens "
        f"median {statistics.median(sizes):.0f} (max {max(sizes)}); raw scores "
        f"{min(raw):.1f} to {max(raw):.1f}"
    )
    policies = rules()
    print(
        f"{'budget':>6}  {'rule':<16} {'evidence':>8} {'dropped for lower':>17} "
        f"{'raw inversions':>14} {'top kept':>8} {'tokens':>6}"
    )
    for budget_tokens in args.budgets:
        budget = ContextBudget(max_tokens=budget_tokens, target_tokens=budget_tokens)
        pipelines = {name: policy.build(budget) for name, policy in policies.items()}
        reference = pipelines["greedy"]
        tallies = {name: Tally() for name in policies}
        for question, chunks, evidence in sets:
            combined = {
                entry.item: entry.score
                for entry in (
                    *reference.dry_run(chunks, query=question).report.included,
                    *reference.dry_run(chunks, query=question).report.excluded,
                )
            }
            value = [combined[chunk] for chunk in chunks]
            raw_value = [chunk.metadata["retrieval_score"] for chunk in chunks]
            tokens = [chunk.tokens for chunk in chunks]
            best = max(range(len(chunks)), key=lambda i: (value[i], -i))
            for name, pipeline in pipelines.items():
                result = pipeline.dry_run(chunks, query=question)
                chosen = {id(item) for item in result.items}
                kept = [i for i, chunk in enumerate(chunks) if id(chunk) in chosen]
                left = [i for i, chunk in enumerate(chunks) if id(chunk) not in chosen]
                room = budget_tokens - result.total_tokens
                tally = tallies[name]
                tally.evidence.append(len(evidence & set(kept)) / len(evidence))
                tally.dropped_for_lower.append(unfair(kept, left, value, tokens, room))
                tally.raw_inversions.append(unfair(kept, left, raw_value, tokens, room))
                if tokens[best] <= budget_tokens:
                    tally.top_kept.append(best in kept)
                tally.used.append(result.total_tokens / budget_tokens)
        for name, tally in tallies.items():
            print(
                f"{budget_tokens:>6}  {name:<16} {statistics.fmean(tally.evidence):>8.3f} "
                f"{statistics.fmean(tally.dropped_for_lower):>17.3f} "
                f"{statistics.fmean(tally.raw_inversions):>14.3f} "
                f"{statistics.fmean(tally.top_kept):>8.3f} {statistics.fmean(tally.used):>6.1%}"
            )


if __name__ == "__main__":
    main()
