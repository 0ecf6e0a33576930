"""Runs of same-role messages merged into one, for APIs that demand alternating roles.

Dropping units can leave two user (or two assistant) messages side by side. Anthropic accepts
that (it combines them itself); Gemini does not, and some gateways demand strict alternation.
:func:`merge_runs` merges each run into one new message whose blocks (``content`` blocks,
``parts``) are the run's blocks in order. A message holding keys other than its role and its
blocks cannot be merged without losing them, and raises
:class:`~pycupel.errors.MessageFormatError` naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pycupel.conversation.validate import fail

__all__ = ["merge_runs"]

Message = Mapping[str, Any]


def merge_runs(
    kept: Sequence[tuple[int | None, Message]],
    *,
    source: str,
    list_name: str,
    body: str,
    blocks: Callable[[Any], list[Any]],
    lead: Callable[[str, object], bool] | None = None,
) -> list[Message]:
    """The messages of ``kept`` (with their history positions) with each run of same-role
    messages merged into one ``{"role": ..., body: blocks}`` message.

    Args:
        source, list_name: name the input in errors (``"gemini contents"``, ``"contents"``).
        body: the key holding a message's blocks (``"content"``, ``"parts"``).
        blocks: a message's blocks from its ``body`` value (a string becomes a text block).
        lead: ``lead(role, block)``: the block must open a merged message of that role
            (Anthropic's thinking blocks open an assistant turn); such blocks move first, in
            order.
    """
    merged: list[Message] = []
    for index, message in kept:
        role = message.get("role")
        if not merged or merged[-1].get("role") != role:
            merged.append(message)
            continue
        for candidate, where in ((merged[-1], None), (message, index)):
            extra = sorted(set(candidate) - {"role", body})
            if extra:
                fail(
                    source,
                    f"{list_name}[{where}]" if where is not None else "merged message",
                    f"cannot merge consecutive {role} messages holding keys other than role "
                    f"and {body} ({', '.join(map(str, extra))})",
                )
        joined = [*blocks(merged[-1][body]), *blocks(message[body])]
        if lead is not None:
            joined.sort(key=lambda block: not lead(str(role), block))
        merged[-1] = {"role": role, body: joined}
    return merged
