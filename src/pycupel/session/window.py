"""What a session returns each turn: the window to send and the report explaining it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, Literal, TypeVar

from pycupel.conversation.units import MessageUnit
from pycupel.diagnostics import SelectionReport

__all__ = ["CacheBreak", "CoreWindow", "SessionReport", "SessionWindow"]

M = TypeVar("M")

CacheBreak = Literal[
    "compaction",
    "edit",
    "recall",
    "recall-dropped",
    "fresh-fit",
    "provider-compaction",
    "first",
]
"""Why the request stopped being an extension of the previous one.

* ``compaction``: the window reached the high watermark and was cut down to the low one;
* ``edit``: an earlier message of the history changed or disappeared;
* ``recall``: the latest user message asks for other dropped messages than the previous
  recall zone held, so the recall zone moved (only the recall zone and what follows it are
  re-sent; the stable prefix before it stays cached);
* ``recall-dropped``: the recall zone was emptied (no dropped message matches the latest
  user message, or none fits beside the grown tail);
* ``fresh-fit``: with ``prefer="recall"``, the latest user message is served by a one-off
  request selected as ``fit_messages`` selects it (:mod:`pycupel.session.fresh`); the next
  turn goes back to the session's window;
* ``provider-compaction``: the provider compacted the conversation (an Anthropic
  ``compaction`` block): it reads the history from that message on, so the window starts
  over from it (only the system prompt stays cached);
* ``first``: the session's first window (nothing was cached).
"""


@dataclass(frozen=True, slots=True)
class SessionReport:
    """Why this turn's window looks the way it does.

    Attributes:
        turn: 1 for the session's first window, counting every ``fit`` call.
        history_messages: messages in the history given to ``fit``.
        window_messages: messages in the window (the system parameter not included).
        stable_messages: leading messages of the window that form the stable prefix (before
            the recall zone).
        recall_messages: positions in the history of the messages in the recall zone.
        dropped_units: units of the history left out of the window.
        compacted: whether this turn compacted.
        cache_break: why the window is not an extension of the previous request, or None
            when it is (append-only).
        edited_at: position of the first history message that changed since the previous
            turn (None without an edit; 0 also for a changed system prompt).
        estimated_tokens: the window's tokens by the session's counter, uncalibrated.
        calibration_ratio: the factor turning estimated into predicted tokens (1.0 until
            usage was recorded).
        selection: the policy's report of this turn's compaction (None on other turns).
    """

    turn: int
    history_messages: int
    window_messages: int
    stable_messages: int
    recall_messages: tuple[int, ...]
    dropped_units: int
    compacted: bool
    cache_break: CacheBreak | None
    edited_at: int | None
    estimated_tokens: int
    calibration_ratio: float
    selection: SelectionReport | None = None


@dataclass(frozen=True, slots=True)
class SessionWindow(Generic[M]):
    """One turn's request and what the session predicts about it.

    Attributes:
        messages: the messages to send, in order (your objects; Anthropic cache breakpoints
            are set on copies).
        report: why the window looks the way it does.
        tokens: the predicted prompt tokens of the request, calibrated with the recorded
            usage.
        cached_tokens: the predicted tokens of the request's leading part that the previous
            request already sent (what a provider can serve from its prompt cache).
        compacted: whether this turn compacted (the cached prefix was given up once).
        system: the system prompt to send beside the messages (Anthropic; None elsewhere).
    """

    messages: list[M]
    report: SessionReport
    tokens: int
    cached_tokens: int
    compacted: bool
    system: object = None


@dataclass(frozen=True, slots=True)
class CoreWindow:
    """A turn's window in provider-neutral terms; the adapter turns it into messages.

    Attributes:
        units: the request's units in order (a system-parameter unit first when present).
        message_indices: positions in the history of the request's messages, in order.
        stable_messages: how many leading entries of ``message_indices`` form the stable
            prefix; the recall zone follows them.
        recall_messages: how many entries after those are the recall zone.
        tokens, cached_tokens, compacted, report: as in
            :class:`~pycupel.session.window.SessionWindow`.
        overrides: history position -> the shorter version of that message the window
            shows (:mod:`pycupel.session.shrink`).
        summary: the running summary's message (:mod:`pycupel.session.summary`), shown at
            ``summary_at`` among the window's messages; it is counted in
            ``stable_messages``.
        one_off: a one-off request (:mod:`pycupel.session.fresh`): only its system prompt
            (the one beside the messages, or its ``stable_messages`` leading ones) carries a
            cache breakpoint.
    """

    units: tuple[MessageUnit, ...]
    message_indices: tuple[int, ...]
    stable_messages: int
    recall_messages: int
    tokens: int
    cached_tokens: int
    compacted: bool
    report: SessionReport
    overrides: Mapping[int, Any] = field(default_factory=lambda: MappingProxyType({}))
    summary: Any = None
    summary_at: int = 0
    one_off: bool = False

    def entries(self, messages: Sequence[M]) -> list[tuple[int | None, M]]:
        """The window's messages with their history positions (``None`` for the summary)."""
        shown = self.overrides
        entries: list[tuple[int | None, M]] = [
            (index, shown.get(index, messages[index])) for index in self.message_indices
        ]
        if self.summary is not None:
            entries.insert(self.summary_at, (None, self.summary))
        return entries

    def messages(self, messages: Sequence[M]) -> list[M]:
        """The window's messages, taken from ``messages`` (the history this window was
        fitted for), with the shorter versions and the summary in place."""
        if not self.overrides and self.summary is None:
            return list(map(messages.__getitem__, self.message_indices))
        return [message for _, message in self.entries(messages)]

    def window(self, messages: Sequence[M]) -> SessionWindow[M]:
        """The window of ``messages`` (the history this window was fitted for), unmarked."""
        return SessionWindow(
            messages=self.messages(messages),
            report=self.report,
            tokens=self.tokens,
            cached_tokens=self.cached_tokens,
            compacted=self.compacted,
        )
