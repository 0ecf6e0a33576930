"""What a session returns each turn: the window to send and the report explaining it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from pycupel.diagnostics import SelectionReport

__all__ = ["CacheBreak", "SessionReport", "SessionWindow"]

M = TypeVar("M")

CacheBreak = Literal["compaction", "edit", "recall", "recall-dropped", "first"]
"""Why the request stopped being an extension of the previous one.

* ``compaction``: the window reached the high watermark and was cut down to the low one;
* ``edit``: an earlier message of the history changed or disappeared;
* ``recall``: the latest user message asks for other dropped messages than the previous
  recall zone held, so the recall zone moved (only the recall zone and what follows it are
  re-sent; the stable prefix before it stays cached);
* ``recall-dropped``: the recall zone was emptied (no dropped message matches the latest
  user message, or none fits beside the grown tail);
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
