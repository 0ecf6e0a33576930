"""Structure-aware selection of message units: what the next answer needs, as a valid history.

The generic pipeline ranks items one by one. A conversation has a shape that a per-item
ranking cannot see, so the chat adapters' default selection works on units (a message, or a
tool call with its results) in four passes, all inside one token budget:

1. **Pinned units** (system prompts, the latest user turn) are kept first.
2. **The recent tail.** The newest units are kept as an unbroken run, walking back from the
   end until ``keep_recent`` tokens are used (by default :attr:`Structure.recent_share` of
   the budget); the first unit that does not fit ends the tail, so the tail never has holes.
3. **Relevance.** Every other unit is scored by the policy's scorer for the query (by
   default the latest user message's text; the conversation preset's relevance scorer also
   expands the query from the best-matching units). A unit's relevance then takes in a share
   (:attr:`Structure.context`) of its neighbours' relevance: a turn matters when the exchange
   it sits in matches the query, which finds the answer whose question holds the query's
   words. Units are then taken by relevance per token (``score / tokens ** density``), so
   many short relevant turns beat one long, loosely related one.
4. **Neighbours and headers.** A unit taken for its relevance brings the unit just before it
   and the one just after it (the question it answers, the answer it got) when they fit; and
   the unit carrying the dated header of its session (a message starting ``[date] ...``) when
   it fits, so what is kept stays dated.

Units are never split, so a tool call and its results stay together; the result is always a
sub-sequence of whole units in conversation order, with the system prompt first because it
comes first in the input.

Each pass records what it took (:class:`~pycupel.diagnostics.Cause`: the tail, relevance, a
neighbour or header and the relevant unit it came with, the room left), and the report says
so beside the specification's reasons (:mod:`pycupel.conversation.explain`).

:func:`select_structured` is the entry point; the sessions layer builds on it and on its
relevance pass (:func:`take_relevant`).
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from pycupel._checks import check_bool, check_float, check_int
from pycupel.conversation.explain import selection_report
from pycupel.conversation.units import MessageUnit
from pycupel.diagnostics import Cause, SelectionReport
from pycupel.errors import PinnedBudgetError, PipelineConfigError
from pycupel.model import ContextBudget, ContextItem, compute_effective_budget
from pycupel.scorers.base import Scorer, check_finite_scores, score_array_for

__all__ = [
    "Structure",
    "StructuredChoice",
    "StructuredSelection",
    "choose_structured",
    "select_structured",
]

_DATED_HEADER: Final = re.compile(r"\s*\[[^\]\n]{0,80}\d[^\]\n]{0,80}\]")
"""A message that opens with a bracketed text holding a digit: ``[1:56 pm on 8 May, 2023]``."""


@dataclass(frozen=True, slots=True)
class Structure:
    """How the conversation's shape steers the selection (see the module documentation).

    Attributes:
        keep_recent: tokens of newest units kept as an unbroken tail; ``None`` uses
            ``recent_share`` of the budget left after the pinned units.
        recent_share: share of that budget for the tail when ``keep_recent`` is ``None``
            (0 to 1).
        neighbours: a unit selected for its relevance brings the units just before and
            just after it when they fit.
        session_headers: a selected unit brings the unit holding its session's dated header.
        density: exponent of the token count in ``score / tokens ** density`` (0 ranks by
            score alone, 1 by score per token).
        context: share of each adjacent unit's relevance added to a unit's own (0 scores
            every unit alone).
    """

    keep_recent: int | None = None
    recent_share: float = 0.1
    neighbours: bool = True
    session_headers: bool = True
    density: float = 0.25
    context: float = 0.8

    def __post_init__(self) -> None:
        err = PipelineConfigError
        if self.keep_recent is not None:
            check_int(err, "structure.keep_recent", self.keep_recent, minimum=0)
        share = check_float(err, "structure.recent_share", self.recent_share)
        if not 0.0 <= share <= 1.0:
            raise PipelineConfigError(
                "structure.recent_share", self.recent_share, "must be between 0 and 1"
            )
        for name in ("neighbours", "session_headers"):
            check_bool(err, f"structure.{name}", getattr(self, name))
        density = check_float(err, "structure.density", self.density)
        if not 0.0 <= density <= 1.0:
            raise PipelineConfigError("structure.density", self.density, "must be between 0 and 1")
        context = check_float(err, "structure.context", self.context)
        if not 0.0 <= context <= 1.0:
            raise PipelineConfigError("structure.context", self.context, "must be between 0 and 1")


@dataclass(frozen=True, slots=True)
class StructuredSelection:
    """The selected units in conversation order, and the report explaining the selection."""

    units: tuple[MessageUnit, ...]
    report: SelectionReport


@dataclass(frozen=True, slots=True)
class StructuredChoice:
    """What :func:`select_structured` decided, per position, before its report is built
    (for callers that build their own report from it, as the shrinking selection does).

    Attributes:
        chosen: whether each unit is selected.
        scores: each unit's score, as its report entry gives it (1.0 for a pinned unit).
        duplicates: positions left out as duplicates -> the item kept in their place.
        left: tokens of the room left unused.
        room: the tokens the unpinned units may take.
        causes: each unpinned selected position -> the pass that took it.
        beside: a neighbour's or session header's position -> the relevant unit's it came
            with.
    """

    chosen: list[bool]
    scores: list[float]
    duplicates: dict[int, ContextItem]
    left: int
    room: int = 0
    causes: dict[int, Cause] = field(default_factory=dict)
    beside: dict[int, int] = field(default_factory=dict)


def select_structured(
    units: Sequence[MessageUnit],
    *,
    budget: ContextBudget,
    scorer: Scorer,
    query: str | None,
    structure: Structure,
    deduplicate: bool = False,
) -> StructuredSelection:
    """Select units within ``budget``, keeping the conversation's structure.

    Args:
        units: the candidate units in conversation order (units with unanswered tool calls
            already removed); their items' ``pinned`` flags mark what must be kept.
        budget: the pipeline budget for the units (the format's per-request overhead already
            taken off); pinned units count against it first.
        scorer: scores the unpinned units for the query (the conversation preset's
            relevance and recency blend, or any scorer; query-aware ones receive ``query``).
        query: the text the selection should serve; ``None`` scores without a query (a
            query-aware scorer then raises :class:`~pycupel.errors.MissingQueryError`).
        structure: the structural options.
        deduplicate: leave out unpinned units whose rendered text is byte-identical to a
            pinned unit's or to a newer unit's (the newest occurrence is the one kept, so
            the recent tail stays whole); reported with reason ``Deduplicated``.

    Returns:
        The selected units in conversation order and a report: every unit included
        (``Pinned``, or ``Scored`` with its score) or excluded (``BudgetExceeded``), each
        with its :class:`~pycupel.diagnostics.Why` in the report's ``why``.

    Raises:
        PinnedBudgetError: the pinned units alone exceed the budget's target.
    """
    choice = choose_structured(
        units,
        budget=budget,
        scorer=scorer,
        query=query,
        structure=structure,
        deduplicate=deduplicate,
    )
    selected = tuple(unit for unit, kept in zip(units, choice.chosen, strict=True) if kept)
    report = selection_report(
        units,
        {position: None for position, kept in enumerate(choice.chosen) if kept},
        scores=choice.scores,
        causes=choice.causes,
        beside=choice.beside,
        duplicates=choice.duplicates,
        room=choice.room,
    )
    return StructuredSelection(selected, report)


def choose_structured(
    units: Sequence[MessageUnit],
    *,
    budget: ContextBudget,
    scorer: Scorer,
    query: str | None,
    structure: Structure,
    deduplicate: bool = False,
) -> StructuredChoice:
    """:func:`select_structured`'s decision, without the report (same arguments, same
    errors)."""
    items = [unit.item for unit in units]
    pinned = [position for position, item in enumerate(items) if item.pinned]
    pinned_tokens = sum(max(items[p].tokens, 0) for p in pinned)
    available_for_pinned = budget.max_tokens - budget.output_reserve
    if pinned_tokens > available_for_pinned:
        raise PinnedBudgetError(pinned_tokens, available_for_pinned)
    room = compute_effective_budget(budget, pinned_tokens).target_tokens

    # Plain lists: the passes below read and write one element at a time.
    tokens = [item.tokens for item in items]
    chosen = [item.pinned for item in items]
    duplicates = _duplicates(items) if deduplicate else {}
    free = [p for p in range(len(items)) if not chosen[p] and p not in duplicates]

    # The recent tail: newest first, unbroken.
    tail_budget = (
        structure.keep_recent
        if structure.keep_recent is not None
        else int(room * structure.recent_share)
    )
    used = 0
    tail_room = min(tail_budget, room)
    causes: dict[int, Cause] = {}
    for position in reversed(free):
        if used + tokens[position] > tail_room:
            break
        chosen[position] = True
        causes[position] = Cause.RECENT
        used += tokens[position]

    # Relevance over every unpinned unit (the whole conversation is the corpus).
    free_items = [items[p] for p in free]
    scores = np.zeros(len(items), dtype=np.float64)
    if free_items:
        base = np.asarray(score_array_for(scorer, free_items, query), dtype=np.float64)
        check_finite_scores(scorer, free_items, base)
        scores[free] = base
        scores = with_context(scores, structure.context)

    score_list: list[float] = scores.tolist()
    headers = session_headers(items) if structure.session_headers else None
    beside: dict[int, int] = {}
    used = int(
        take_relevant(
            tokens,
            chosen,
            score_list,
            [p for p in free if not chosen[p]],
            used=used,
            room=room,
            structure=structure,
            headers=headers,
            excluded=duplicates,
            causes=causes,
            beside=beside,
        )
    )

    # Fill what is left with the newest remaining units that fit (recency as the tie-breaker).
    for position in reversed(free):
        if not chosen[position] and used + tokens[position] <= room:
            chosen[position] = True
            causes[position] = Cause.ROOM_LEFT
            used += tokens[position]

    # A pinned unit's report entry scores 1.0.
    for position in pinned:
        score_list[position] = 1.0
    return StructuredChoice(chosen, score_list, duplicates, room - used, room, causes, beside)


def with_context(
    scores: npt.NDArray[np.float64],
    context: float,
    linked: npt.NDArray[np.bool_] | None = None,
) -> npt.NDArray[np.float64]:
    """Each unit's score plus ``context`` x its adjacent units' own scores (a new array).

    ``linked[p]`` (one per pair of adjacent units, default all True) says whether units
    ``p`` and ``p + 1`` share context.
    """
    if context <= 0.0 or len(scores) < 2:
        return scores
    own = scores.copy()
    result = scores.copy()
    if linked is None:
        result[1:] += context * own[:-1]
        result[:-1] += context * own[1:]
    else:
        result[1:] += np.where(linked, context * own[:-1], 0.0)
        result[:-1] += np.where(linked, context * own[1:], 0.0)
    return result


def take_relevant(
    tokens: Sequence[float],
    chosen: list[bool],
    scores: Sequence[float],
    candidates: Sequence[int],
    *,
    used: float,
    room: float,
    structure: Structure,
    headers: Sequence[int] | None,
    alone: Sequence[bool] | None = None,
    excluded: Container[int] = (),
    causes: dict[int, Cause] | None = None,
    beside: dict[int, int] | None = None,
) -> float:
    """The relevance pass: marks ``candidates`` in ``chosen`` by relevance per token, each
    with its neighbours and its session's header when they fit; returns the tokens used.

    ``tokens``, ``chosen``, ``scores`` and ``headers`` (see :func:`session_headers`) are
    indexed by unit position; only units with a positive score are taken for relevance.
    A unit marked in ``alone`` neither brings nor is brought as a neighbour; a position in
    ``excluded`` (a left-out duplicate) is never brought. ``causes`` (when given) receives
    what took each position it marks, and ``beside`` the relevant unit a neighbour or a
    header came with.
    """
    density = structure.density
    # By relevance per token, ties by position: the positions ascending, then a stable sort
    # on the float keys alone (what sorting (key, position) pairs gives, without comparing
    # tuples). The key's arithmetic is the same in plain floats as in numpy float64 scalars.
    eligible = sorted([p for p in candidates if scores[p] > 0.0])
    keys = [-scores[p] / max(tokens[p], 1) ** density for p in eligible]
    count = len(chosen)
    for position in map(eligible.__getitem__, sorted(range(len(keys)), key=keys.__getitem__)):
        if used >= room:
            break
        if chosen[position] or used + tokens[position] > room:
            continue
        chosen[position] = True
        used += tokens[position]
        if causes is not None:
            causes[position] = Cause.RELEVANT
        extras: list[tuple[int, Cause]] = []
        if structure.neighbours and (alone is None or not alone[position]):
            extras.extend(
                (p, Cause.NEIGHBOUR)
                for p in (position - 1, position + 1)
                if 0 <= p < count and (alone is None or not alone[p])
            )
        if headers is not None and headers[position] >= 0:
            extras.append((headers[position], Cause.SESSION_HEADER))
        for extra_position, cause in extras:
            if (
                0 <= extra_position < count
                and not chosen[extra_position]
                and extra_position not in excluded
            ):
                extra_tokens = tokens[extra_position]
                if extra_tokens >= 0 and used + extra_tokens <= room:
                    chosen[extra_position] = True
                    used += extra_tokens
                    if causes is not None:
                        causes[extra_position] = cause
                    if beside is not None:
                        beside[extra_position] = position
    return used


def _duplicates(items: Sequence[ContextItem]) -> dict[int, ContextItem]:
    """Unpinned positions whose content repeats a pinned or newer item -> the item kept."""
    kept: dict[str, ContextItem] = {item.content: item for item in items if item.pinned}
    found: dict[int, ContextItem] = {}
    for position in range(len(items) - 1, -1, -1):
        item = items[position]
        if item.pinned:
            continue
        original = kept.setdefault(item.content, item)
        if original is not item:
            found[position] = original
    return found


def session_headers(items: Sequence[ContextItem], current: int = -1, start: int = 0) -> list[int]:
    """For each unit, the position of the unit holding its session's dated header (or -1).

    ``items`` may continue a list already scanned: ``start`` is the position of its first
    item and ``current`` the header position in force before it.
    """
    result: list[int] = []
    match = _DATED_HEADER.match
    for position, item in enumerate(items, start):
        text = item.content
        # The rendered content starts with the role label: look right after "label: ".
        found = text.find(": ")
        # A header opens with "[" after optional whitespace: most texts fail that test
        # before the regular expression is tried.
        if (
            found >= 0
            and (text.startswith("[", found + 2) or text[found + 2 : found + 3].isspace())
            and match(text, found + 2)
        ):
            current = position
        result.append(current)
    return result
