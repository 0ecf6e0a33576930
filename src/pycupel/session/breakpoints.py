"""Explicit prompt-cache breakpoints: where a session's window marks the end of a cached prefix.

A provider that caches prompt prefixes at marked positions (Anthropic's ``cache_control``,
OpenAI's ``prompt_cache_breakpoint`` on GPT-5.6 and later) reads a request from its cache up
to the last breakpoint it has seen before. A session's window is a stable prefix, a recall
zone and the latest turn, so it marks:

* the end of the system prompt (passed beside the messages, or its leading system messages);
* the end of the stable prefix, when a recall zone follows it (the zone changes more often
  than the prefix, which stays cached when it does);
* the end of the request, so the next turn, which extends it, reads all of it from the
  cache.

That is at most three marks, within both providers' limit of four per request. A one-off
request (``prefer="recall"``, :mod:`pycupel.session.fresh`) marks only its system prompt and
the cached prefix it opens with: nothing after them is read by a later request.

The marks are set on copies by the format's codec
(:meth:`~pycupel.conversation.codec.Codec.cache_mark`). A message that cannot carry one (an
OpenAI assistant message, an Anthropic message of thinking blocks only) passes the mark to
the nearest earlier message that can, after the previous mark; the caller's objects are
never modified.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import TypeVar

from pycupel.conversation.codec import Codec
from pycupel.model import ContextKind
from pycupel.session.window import CoreWindow, SessionWindow

__all__ = ["BREAKPOINT_DOCS", "mark_breakpoints"]

M = TypeVar("M")

BREAKPOINT_DOCS: Mapping[str, str] = MappingProxyType(
    {
        "cache_breakpoints": "mark the window with explicit ``prompt_cache_breakpoint``\\ s "
        "(GPT-5.6 and later): at the end of the system prompt, of the stable prefix before "
        "the recall zone and of the request, on copies (see "
        ":mod:`pycupel.session.breakpoints`). Off by default: older models cache every "
        "prefix without marks and reject nothing, but do not read them either.",
    }
)
"""The ``cache_breakpoints`` option of the OpenAI sessions, documented once."""


def mark_breakpoints(
    sent: SessionWindow[M], window: CoreWindow, codec: Codec[M], control: object
) -> SessionWindow[M]:
    """``sent`` with its system prompt, the end of its stable prefix (before a recall zone)
    and its last message carrying the breakpoint ``control`` (see the module docs)."""
    messages = list(sent.messages)
    system = sent.system
    if system is not None:
        system = codec.cache_mark_system(system, control)
    if window.one_off:
        ends = {window.stable_messages - 1}
    else:
        ends = {len(messages) - 1}
        if window.recall_messages:
            ends.add(window.stable_messages - 1)
    leading = 0  # the system prompt's messages at the start of the list
    for unit in window.units:
        if unit.system_parameter:
            continue
        if unit.item.kind != ContextKind.SYSTEM_PROMPT:
            break
        leading += len(unit.message_indices)
    if leading:
        ends.add(leading - 1)
    floor = -1
    for end in sorted(ends):
        for position in range(end, floor, -1):
            marked = codec.cache_mark(messages[position], control)
            if marked is not messages[position]:
                messages[position] = marked
                break
        floor = max(floor, end)
    return dataclasses.replace(sent, messages=messages, system=system)
