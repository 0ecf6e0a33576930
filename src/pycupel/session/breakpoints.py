"""Explicit prompt-cache breakpoints: where a session's window marks the end of a cached prefix.

A provider that caches prompt prefixes at marked positions (Anthropic's ``cache_control``)
reads a request from its cache up to the last breakpoint it has seen before. A session's
window is a stable prefix, a recall zone and the latest turn, so it marks:

* the end of the system prompt passed beside the messages;
* the end of the stable prefix, when a recall zone follows it (the zone changes more often
  than the prefix, which stays cached when it does);
* the end of the request, so the next turn, which extends it, reads all of it from the
  cache.

The marks are set on copies by the format's codec
(:meth:`~pycupel.conversation.codec.Codec.cache_mark`); a message that cannot carry one is
left unmarked. The caller's objects are never modified.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

from pycupel.conversation.codec import Codec
from pycupel.session.window import CoreWindow, SessionWindow

__all__ = ["mark_breakpoints"]

M = TypeVar("M")


def mark_breakpoints(
    sent: SessionWindow[M], window: CoreWindow, codec: Codec[M], control: object
) -> SessionWindow[M]:
    """``sent`` with its system prompt, the end of its stable prefix (before a recall zone)
    and its last message carrying the breakpoint ``control`` (see the module docs)."""
    messages = list(sent.messages)
    system = sent.system
    if system is not None:
        system = codec.cache_mark_system(system, control)
    marks = {len(messages) - 1}
    if window.recall_messages:
        marks.add(window.stable_messages - 1)
    for position in sorted(marks):
        if position >= 0:
            messages[position] = codec.cache_mark(messages[position], control)
    return dataclasses.replace(sent, messages=messages, system=system)
