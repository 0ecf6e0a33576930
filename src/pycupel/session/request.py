"""A turn's request: the zones' units in order, their messages, tokens and cached prefix.

The request is compared with the previous one: the units they share at the start are the
prefix the provider serves from its cache; the counts of an extending request are added to
the previous request's, so a turn's cost follows what it adds.
"""

from __future__ import annotations

from itertools import chain
from operator import attrgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeVar

from pycupel.diagnostics import SelectionReport
from pycupel.model import ContextKind
from pycupel.session.window import CacheBreak, CoreWindow, SessionReport
from pycupel.session.zones import Zones

if TYPE_CHECKING:
    pass

__all__ = ["Requests"]

M = TypeVar("M")

_INDICES = attrgetter("message_indices")
"""A unit's message positions."""


class Requests(Zones[M]):
    """The request a turn sends, compared with the previous one.

    A part of :class:`~pycupel.session.core.SessionCore`.
    """

    def _window(
        self,
        *,
        messages_in: int,
        valid_below: int,
        compacted: bool,
        cache_break: CacheBreak | None,
        edited_at: int | None,
        selection: SelectionReport | None,
        unsent: bool = False,
    ) -> CoreWindow:
        """The turn's window; ``unsent``: a one-off request replaces it
        (:mod:`pycupel.session.fresh`), so the next request is compared with the part of it
        the provider already holds (what it shares with the previous request)."""
        history = self._history
        units = history.units
        request = [*self._stable, *self._recall, *self._tail]
        previous = self._previous
        extends = request[: len(previous)] == previous and (
            not previous or self._previous_max < valid_below
        )
        if extends:
            common = len(previous)  # the request extends the previous one (compared in C)
        else:
            common = 0
            for before, now in zip(previous, request, strict=False):
                if before != now or now >= valid_below:
                    break
                common += 1
        if cache_break is None and self._pending_break is not None:
            cache_break = self._pending_break  # what a one-off request left unsent
        if cache_break is None and common < len(self._previous):
            cache_break = "recall"  # defensive: any shrink of the prefix is reported
        fixed = self._fixed()
        calibration = self._calibration
        ratio = calibration.ratio
        new_units = request[common:] if extends else request
        self._previous_max = max(self._previous_max if extends else -1, *new_units, -1)
        if self._shown is None:
            # The units' counts, summed once: an extending request adds its new units to the
            # previous request's sum (integers, exact).
            if extends:
                common_tokens = self._previous_tokens
                units_tokens = common_tokens + history.tokens_of(new_units)
            else:
                units_tokens = history.tokens_of(request)
                common_tokens = history.tokens_of(request[:common])
            self._previous_tokens = units_tokens
            estimate = units_tokens + fixed
            if not self._learned:
                # What _sum gives from the counts alone: the count times the ratio.
                tokens = round(units_tokens * ratio + fixed * ratio)
                cached = round(common_tokens * ratio)
        else:
            estimate = sum(self._estimate(u) for u in request) + fixed
        if self._shown is not None or self._learned:
            tokens = round(self._sum([request], ratio) + fixed * ratio)
            cached = round(self._sum([request[:common]], ratio))
        # Per unit in C (map, chain). A request that extends the previous one within the
        # same units (no edit re-read them) adds its new units' parts to the previous ones.
        if extends and edited_at is None:
            added = tuple(map(units.__getitem__, new_units))
            request_units = self._previous_units + added
            indices = self._previous_indices + tuple(chain.from_iterable(map(_INDICES, added)))
        else:
            request_units = tuple(map(units.__getitem__, request))
            indices = tuple(chain.from_iterable(map(_INDICES, request_units)))
        self._previous_units = request_units
        self._previous_indices = indices
        # The stable prefix's messages, counted again only when the zone was replaced (it
        # is never changed in place).
        counted, stable = self._stable_messages
        if counted is not self._stable or edited_at is not None:
            stable = sum(map(len, map(_INDICES, map(units.__getitem__, self._stable))))
            self._stable_messages = (self._stable, stable)
        # The recall zone's messages, listed again only when the zone was replaced.
        listed, recall_messages = self._recall_messages
        if listed is not self._recall or edited_at is not None:
            recall_messages = tuple(
                chain.from_iterable(map(_INDICES, map(units.__getitem__, self._recall)))
            )
            self._recall_messages = (self._recall, recall_messages)
        recall = len(recall_messages)
        summary = self._summary.message if self._summary is not None else None
        summary_at = 0
        if summary is not None:
            stable += 1
            # The summary follows the system prompt (parameter or messages), and the turn the
            # provider reads the history from, when it compacted the conversation itself.
            anchor = history.start_unit or -1
            leading = 0
            for u in request:
                unit = units[u]
                if (
                    not unit.system_parameter
                    and unit.item.kind != ContextKind.SYSTEM_PROMPT
                    and u != anchor
                ):
                    break
                leading += 1
                summary_at += len(unit.message_indices)
            if summary is self._previous_summary and common >= leading:
                cached += round(self._summary.tokens * ratio)  # type: ignore[union-attr]
        self._previous_summary = summary
        report = SessionReport(
            turn=self._turn,
            history_messages=messages_in,
            window_messages=len(indices) + (summary is not None),
            stable_messages=stable,
            recall_messages=recall_messages,
            dropped_units=len(units) - len(request),
            compacted=compacted,
            cache_break=cache_break,
            edited_at=edited_at,
            estimated_tokens=estimate,
            calibration_ratio=calibration.ratio,
            selection=selection,
        )
        self._one_off_units = None
        self._pending_break = None
        if not unsent:
            # Where this request leaves a prefix of the stable zone in the provider's cache
            # (its marks: the end of the stable prefix, or of the request without a zone).
            if not self._recall:
                self._cached_prefixes.append(len(request))
            elif self._stable:
                self._cached_prefixes.append(len(self._stable))
            del self._cached_prefixes[:-8]
        if unsent:
            # Only the part shared with the previous request is in the provider's cache.
            self._pending_break = cache_break
            request = request[:common]
            request_units = request_units[:common]
            indices = indices[: sum(map(len, map(_INDICES, request_units)))]
            self._previous_units = request_units
            self._previous_indices = indices
            self._previous_max = max(request, default=-1)
            if self._shown is None:
                self._previous_tokens = history.tokens_of(request)
        self._previous = request
        self._last_estimate = estimate
        return CoreWindow(
            units=request_units,
            message_indices=indices,
            stable_messages=stable,
            recall_messages=recall,
            tokens=tokens,
            cached_tokens=cached,
            compacted=compacted,
            report=report,
            overrides=self._shown.overrides if self._shown is not None else MappingProxyType({}),
            summary=summary,
            summary_at=summary_at,
        )
