"""``prefer="recall"``: a question the window serves worse than a fresh fit gets a one-off
request.

A session's window keeps a cached prefix and gives the latest user message a recall zone
(:mod:`pycupel.session.zones`) of at most ``recall_share`` of the budget. A fresh fit
(``fit_messages``) gives the question the whole budget instead, at the price of a request
the provider's cache cannot serve. With ``prefer="recall"`` a session does both:

* every turn is decided as with ``prefer="cost"`` (compaction, recall zone), and that window
  stays the session's state;
* on a turn whose new user message re-decides the recall zone (it asks something, its best
  match lies outside the window, the history was edited or compacted), the session also
  selects the history as ``fit_messages`` would: the same structure-aware selection and
  leading-turn rule over the whole budget in the provider's count, shorter versions only
  when the session makes them too. When that selection passes over the recall zone's best
  match (a selection by relevance per token can pass over a long unit the zone took for its
  relevance alone), the selection made with that match kept is tried too, and the one that
  holds more of the strong matches is the fresh fit;
* requests are weighed by the **strong matches** they hold whole (the units scoring at
  least :data:`~pycupel.session.recall.RELATIVE_THRESHOLD` of the best match), each
  counted for its relevance. A cheaper request serves the question when it lacks at most
  ``1 -`` :data:`FRESH_SHARE` of what the fresh fit holds (what it holds beyond the fresh
  fit does not make up for a match it lacks), or holds as much in all. The window is sent
  when it serves;
* else a **one-off request** is sent, reported as ``cache_break="fresh-fit"``: a prefix of
  the window that an earlier request left in the provider's cache followed by a fresh fit
  of the budget it leaves, when that serves (the longest of :data:`PREFIX_TRIES` such
  prefixes first), or else the fresh fit itself. Its only breakpoints are its system
  prompt's and its cached prefix's, so it writes nothing that no later request reads;
* the next turn goes back to the window, whose prefix the earlier requests left cached
  (what the provider holds of it is what the previous request shared with it; only the
  recall zone, when it moved, and the new messages are sent uncached).

Measured against a fresh fit alone, a one-off made of the cached prefix and a larger recall
zone, and a larger zone with lower watermarks (``docs/benchmarks/sessions.md``), this
recalls within a point or two of ``fit_messages`` for under half its cost where the budget is
small. The weighing by what a cheaper request lacks (rather than by its share of the two
totals) and the best match kept only when it holds more are what bring LoCoMo at 4,000
tokens within a point of ``fit_messages``, at the end and in a row (all ten conversations).
The one-off request holds no running summary. Its usage, when recorded, calibrates the
session's ratio; what single units cost is learned from the window's requests only.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from pycupel.conversation.arguments import resolve_structure
from pycupel.conversation.fit import Fitted, LeadingFilter, fit_units
from pycupel.conversation.units import MessageUnits
from pycupel.errors import PinnedBudgetError
from pycupel.model import ContextKind
from pycupel.session.recall import RELATIVE_THRESHOLD, RecallScores
from pycupel.session.request import Requests
from pycupel.session.window import CoreWindow, SessionReport

if TYPE_CHECKING:
    pass

__all__ = ["PREFER", "FreshFits", "Prefer"]

M = TypeVar("M")

Prefer = Literal["cost", "recall"]
"""What a session favours: ``"cost"`` (the cached window on every turn) or ``"recall"`` (a
fresh fit, once, for a question the window cannot answer as well)."""
PREFER: tuple[Prefer, ...] = ("cost", "recall")
"""The values of ``prefer``."""
FRESH_SHARE = 0.95
"""A cheaper request serves the question when it lacks at most ``1 - FRESH_SHARE`` of the
strong matches' relevance that the fresh fit holds (or holds as much in all)."""
PREFIX_TRIES = 3
"""At most this many cached prefixes (the longest first) are tried before a fresh fit."""


@dataclass(frozen=True, slots=True)
class OneOff:
    """A one-off request: its units in order, those shown in a shorter version (with the
    version), the strong matches the turn's window lacked, and the cached prefix it opens
    with (empty for a fresh fit)."""

    units: list[int]
    variants: dict[int, Any]
    missing: list[int]
    prefix: list[int]


class FreshFits(Requests[M]):
    """The one-off fresh fit of ``prefer="recall"`` (see the module docs).

    A part of :class:`~pycupel.session.core.SessionCore`.
    """

    def _fresh_fit(
        self, messages: Sequence[M], prefix: Sequence[int] = (), keep: Collection[int] = ()
    ) -> tuple[Fitted, dict[int, int]] | None:
        """The history selected as ``fit_messages`` selects it, in the provider's count, with
        each selected unit's position; None when the pinned units alone do not fit. With a
        ``prefix`` (units sent first, as the window shows them), the rest of the history is
        selected in what the prefix leaves of the budget; ``keep``: units kept whatever the
        selection says (the recall zone's best match)."""
        history = self._history
        latest = history.latest_user_unit
        start = history.start_unit
        guarded = self._guarded_units(latest)
        for u in keep:
            unit = guarded[u]
            guarded[u] = dataclasses.replace(unit, item=unit.item.replace(pinned=True))
        before = set(prefix)
        positions = [
            u
            for u in range(len(guarded))
            if (u >= start or guarded[u].system_parameter) and u not in before
        ]
        units = [guarded[u] for u in positions]
        position_of = {id(unit): u for u, unit in zip(positions, units, strict=True)}
        overhead = self.format.overhead
        candidates: MessageUnits[M] = MessageUnits(
            self.format.provider, tuple(messages), tuple(units), overhead
        )
        upper = self._calibration.upper_ratio
        per_request = overhead.per_request
        taken = sum(self._guard(u) for u in prefix)
        limit = max(int(self.budget - per_request * upper - taken), 0)
        # Shorter versions (and their recall) only when the session makes them too.
        options = self._shrink_options()
        drops = self.format.drops_leading
        if any(not history.units[u].system_parameter for u in prefix):
            drops = None  # the prefix opens the messages
        options["leading_filter"] = LeadingFilter("leading", drops) if drops is not None else None
        try:
            fitted = fit_units(
                candidates,
                budget=limit + per_request,
                policy=self.policy,
                deduplicate=False,
                unanswered_tool_calls="error",
                query=history.latest_user_text(),
                structure=resolve_structure(self.policy, None, None),
                **options,
            )
        except PinnedBudgetError:
            return None
        return fitted, position_of

    def _fresh_request(self, messages: Sequence[M]) -> OneOff | None:
        """This turn's one-off request, or None when the turn's window holds nearly as much
        of the strong matches as a fresh fit (or no fresh fit can be made, or the window
        leaves out nothing the provider would read)."""
        history = self._history
        start = history.start_unit
        read = len(history.units) - start + (start > 0 and history.units[0].system_parameter)
        if len(self._stable) + len(self._recall) + len(self._tail) >= read:
            return None
        scores = self._score_recall()
        if scores is None:  # nothing outside the window matches the message
            return None
        shown = self._shown.variants if self._shown is not None else MappingProxyType({})
        strong = set(_strong(scores, history.recall_corpus()).tolist())
        smoothed = scores.smoothed

        def held(units: Iterable[int], shorter: Collection[int] = ()) -> float:
            """The strong matches' relevance a request of ``units`` holds whole (``shorter``:
            the units it shows in a shorter version)."""
            return float(sum(smoothed[u] for u in strong.intersection(units).difference(shorter)))

        # The recall zone's best match, when the fresh fit passes over it (a selection by
        # relevance per token can pass over a long unit the zone took for its relevance
        # alone), is tried kept: the fit that holds more of the strong matches is the one.
        found = strong.intersection(self._recall)
        keep = {max(found, key=lambda u: (smoothed[u], -u))} if found else set()
        fresh = self._fresh_fit(messages)
        if fresh is None:
            return None
        chosen, variants = _selected(*fresh)
        if not keep.issubset(chosen):
            kept = self._fresh_fit(messages, keep=keep)
            if kept is not None:
                with_best = _selected(*kept)
                if held(*with_best) > held(chosen, variants):
                    chosen, variants = with_best
                else:
                    keep = set()
        # What the fresh fit holds whole of the strong matches, and what of it a cheaper
        # request lacks (held whole by the fresh fit, not by the cheaper request).
        fitted = strong.intersection(chosen).difference(variants)
        best = held(fitted)
        if best <= 0.0:
            return None
        lack = (1.0 - FRESH_SHARE) * best

        def serves(units: Collection[int], shorter: Collection[int]) -> bool:
            """Whether a request of ``units`` (``shorter``: shown shorter) lacks at most
            ``lack`` of what the fresh fit holds, or holds as much in all."""
            kept = set(units).difference(shorter)
            return held(fitted.difference(kept)) <= lack or held(kept) >= best

        window = [*self._stable, *self._recall, *self._tail]
        whole = set(window).difference(shown)
        if serves(window, shown):
            return None
        missing = [u for u in chosen if u in strong and u not in variants and u not in whole]
        if self._summary is None:
            # A prefix the provider holds, then a fresh fit of what it leaves: cheaper than
            # the fresh fit, and as good when it holds nearly as much.
            stable = self._stable
            lengths = sorted({k for k in self._cached_prefixes if 0 < k <= len(stable)})
            for k in reversed(lengths[-PREFIX_TRIES:]):
                head = stable[:k]
                filled = self._fresh_fit(messages, head, keep.difference(head))
                if filled is None:
                    continue
                fill, fill_positions = filled
                rest = [fill_positions[id(unit)] for unit in fill.units]
                fill_variants = {fill_positions[id(unit)]: v for unit, v in fill.variants.items()}
                shorter = {*fill_variants, *(u for u in head if u in shown)}
                if serves([*head, *rest], shorter):
                    return OneOff([*head, *rest], fill_variants, missing, head)
        return OneOff(chosen, variants, missing, [])

    def _one_off(self, one_off: OneOff, window: CoreWindow) -> CoreWindow:
        """The window of a one-off request in place of ``window``, the turn's window (made
        unsent: the session's zones stay as it left them)."""
        chosen, variants, missing = one_off.units, one_off.variants, one_off.missing
        units = self._history.units
        request_units = tuple(units[u] for u in chosen)
        indices = tuple(index for unit in request_units for index in unit.message_indices)
        shown = self._shown.variants if self._shown is not None else MappingProxyType({})
        overrides = {
            index: message
            for u, variant in variants.items()
            for index, message in zip(units[u].message_indices, variant.messages, strict=True)
        }
        if one_off.prefix:
            # The cached prefix as the window shows it, its end marked (read from the cache).
            assert self._shown is not None or not shown
            if self._shown is not None:
                overrides.update(
                    (index, message)
                    for index, message in self._shown.overrides.items()
                    if any(index in units[u].message_indices for u in chosen)
                )
            leading = sum(len(units[u].message_indices) for u in one_off.prefix)
        else:
            # The leading system prompt messages (a system prompt in the list) keep their mark.
            leading = 0
            for unit in request_units:
                if unit.system_parameter:
                    continue
                if unit.item.kind != ContextKind.SYSTEM_PROMPT:
                    break
                leading += len(unit.message_indices)
        ratio = self._calibration.ratio
        fixed = self.format.overhead.per_request
        prefix = set(one_off.prefix)
        learned = self._learned
        upper = self._calibration.upper_ratio
        estimated = total = 0.0
        for u, unit in zip(chosen, request_units, strict=True):
            variant = variants.get(u)
            if u in prefix:  # as the window shows it
                estimated += self._estimate(u)
                total += learned[u] if u in learned else self._estimate(u) * ratio
            elif variant is not None:  # counted in the provider's count, erring high
                estimated += variant.item.tokens / upper
                total += variant.item.tokens
            else:  # whole
                estimated += unit.item.tokens
                whole = u not in shown
                total += learned[u] if whole and u in learned else unit.item.tokens * ratio
        estimate = math.ceil(estimated) + fixed
        total += fixed * ratio
        # What the previous request shares with this one at its start (its system prompt,
        # or the cached prefix).
        cached = 0.0
        for before, now in zip(self._previous, chosen, strict=False):
            if before != now or not (now in prefix or units[now].item.pinned):
                break
            cached += learned[now] if now in learned else self._estimate(now) * ratio
        report = SessionReport(
            turn=self._turn,
            history_messages=window.report.history_messages,
            window_messages=len(indices),
            stable_messages=leading,
            recall_messages=tuple(
                sorted(index for u in missing for index in units[u].message_indices)
            ),
            dropped_units=len(units) - len(chosen),
            compacted=window.compacted,
            cache_break="fresh-fit",
            edited_at=window.report.edited_at,
            estimated_tokens=estimate,
            calibration_ratio=ratio,
            selection=window.report.selection,
        )
        self._one_off_units = list(chosen)
        self._last_estimate = estimate
        return CoreWindow(
            units=request_units,
            message_indices=indices,
            stable_messages=leading,
            recall_messages=0,
            tokens=round(total),
            cached_tokens=round(cached),
            compacted=window.compacted,
            report=report,
            overrides=MappingProxyType(overrides),
            one_off=True,
        )


def _selected(fitted: Fitted, position_of: dict[int, int]) -> tuple[list[int], dict[int, Any]]:
    """A fresh fit's units (positions, in order) and those shown in a shorter version."""
    chosen = [position_of[id(unit)] for unit in fitted.units]
    return chosen, {position_of[id(unit)]: v for unit, v in fitted.variants.items()}


def _strong(scores: RecallScores, corpus: npt.NDArray[np.bool_]) -> npt.NDArray[np.intp]:
    """The corpus units scoring at least :data:`~pycupel.session.recall.RELATIVE_THRESHOLD`
    of the best match (inside the window or not)."""
    smoothed = scores.smoothed
    best = float(np.maximum.reduce(smoothed, where=corpus, initial=0.0))
    return np.flatnonzero((smoothed >= RELATIVE_THRESHOLD * best) & corpus)
