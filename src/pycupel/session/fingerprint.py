"""A compact fingerprint of the history a session has read, to check a saved state against.

A session's state is saved without the history's text (the caller passes the whole history
on every turn). When another process restores the state, it must know that the history it
is given is the one the state was made from: the same conversation, not edited, not
truncated, not another conversation's history saved under the same key. The fingerprint
says so without keeping the text:

* each message's **digest**: BLAKE2b (16 bytes) of a canonical serialisation of the content
  the session compares messages by (the format's snapshot: JSON with sorted keys); the
  state keeps the first :data:`STORED_BYTES` bytes of each, 4 bytes a message, which locate
  the first message that differs;
* a **chain** digest over all of them in order (16 bytes), which a restore also checks, so
  that a change hidden by a collision of the short digests is still caught (the state is
  then trusted only before the first short digest that differs, or not at all);
* the system prompt passed beside the messages (Anthropic, Responses, Gemini): absent,
  ``None`` or its digest.

A state whose fingerprint does not match the history is never trusted past the first
message that differs: the restored session treats that message as an edit, exactly as the
session that saved the state would have treated the same change.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TypeVar

from pycupel.conversation.codec import snapshot_json
from pycupel.session.format import NO_SYSTEM, MessageFormat

__all__ = [
    "DIGEST_BYTES",
    "STORED_BYTES",
    "Fingerprint",
    "canonical",
    "chain_of",
    "digest",
    "first_mismatch",
    "system_print",
]

M = TypeVar("M")

DIGEST_BYTES = 16
"""Bytes of a message's digest (and of the chain)."""
STORED_BYTES = 4
"""Bytes of each message's digest a saved state keeps."""
_CHAIN_START = bytes(DIGEST_BYTES)


def canonical(value: object) -> bytes:
    """A deterministic serialisation of a message's snapshot (the same bytes in every
    process for equal content): JSON with sorted keys; what JSON cannot hold by its type
    name, digest or ``repr``."""
    try:
        text = json.dumps(
            value,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            default=_leaf,
        )
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text.encode("utf-8", "surrogatepass")


def _leaf(value: object) -> object:
    """What JSON cannot write, as something it can (other objects by their ``repr``: one
    that differs between processes only makes a restored session read the history again)."""
    if isinstance(value, type):
        return {"$type": f"{value.__module__}.{value.__qualname__}"}
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$bytes": hashlib.blake2b(value, digest_size=DIGEST_BYTES).hexdigest()}
    if isinstance(value, set | frozenset):
        return {"$set": sorted(value)}
    dump = getattr(value, "model_dump", None)  # pydantic models
    if callable(dump):
        return {"$model": type(value).__qualname__, "fields": dump()}
    return {"$repr": repr(value)}


def digest(snapshot: object) -> bytes:
    """A message's digest (:data:`DIGEST_BYTES` bytes) from its snapshot."""
    return hashlib.blake2b(canonical(snapshot), digest_size=DIGEST_BYTES).digest()


def chain_of(digests: Sequence[bytes], start: bytes = _CHAIN_START) -> bytes:
    """The chain digest of ``digests`` in order, continuing ``start``."""
    chain = start
    blake2b = hashlib.blake2b
    for value in digests:
        chain = blake2b(chain + value, digest_size=DIGEST_BYTES).digest()
    return chain


def system_print(system: object) -> str:
    """The system prompt passed beside the messages: ``"-"`` for a format without one,
    ``"0"`` for none given, else its digest in hex."""
    if system is NO_SYSTEM:
        return "-"
    if system is None:
        return "0"
    return digest(snapshot_json(system)).hex()


class Fingerprint:
    """The fingerprint of the messages a session has read, kept as its history grows: the
    short digests and the chain after each message (20 bytes a message, in two byte arrays).

    Not thread-safe on its own: a stored session guards it with its lock.
    """

    __slots__ = ("_chains", "short", "system")

    def __init__(self, digests: Sequence[bytes] = (), *, system: str | None = None) -> None:
        self.short = bytearray()
        """The first :data:`STORED_BYTES` bytes of each message's digest, joined (saved)."""
        self._chains = bytearray()
        self.system = system
        """:func:`system_print` of the system prompt (None before the first turn)."""
        self._extend(digests)

    def __len__(self) -> int:
        return len(self.short) // STORED_BYTES

    @property
    def chain(self) -> bytes:
        """The chain digest of every message's digest, in order."""
        return bytes(self._chains[-DIGEST_BYTES:]) if self._chains else _CHAIN_START

    def _extend(self, digests: Sequence[bytes]) -> None:
        chain = self.chain
        blake2b = hashlib.blake2b
        for value in digests:
            chain = blake2b(chain + value, digest_size=DIGEST_BYTES).digest()
            self._chains += chain
            self.short += value[:STORED_BYTES]

    def update(
        self,
        snapshots: Sequence[object],
        system: object,
        *,
        edited_at: int | None,
    ) -> None:
        """Follow a turn: the history's message ``snapshots`` (all of them), its ``system``
        prompt, and the first position the turn re-read (``edited_at``; ``None`` when the
        history only grew)."""
        if edited_at is not None and edited_at < len(self):
            del self.short[edited_at * STORED_BYTES :]
            del self._chains[edited_at * DIGEST_BYTES :]
        if edited_at == 0 or self.system is None:
            self.system = system_print(system)
        known = len(self)
        assert known <= len(snapshots)  # a shorter history is reported as an edit
        self._extend([digest(snapshot) for snapshot in snapshots[known:]])


def first_mismatch(
    fmt: MessageFormat[M],
    messages: Sequence[M],
    *,
    saved_short: bytes,
    saved_chain: bytes,
) -> tuple[int | None, list[bytes]]:
    """Where ``messages`` first differ from a saved fingerprint (its short digests and
    chain), and the digests of the messages before that point.

    Returns ``(None, digests)`` when the history holds every saved message unchanged (and
    the chain agrees), else the position of the first message that differs (the length of
    ``messages`` when it ends before the saved history does; 0 when the chain disagrees
    although no short digest does).
    """
    saved = len(saved_short) // STORED_BYTES
    snapshot = fmt.snapshot
    digests: list[bytes] = []
    for position in range(min(saved, len(messages))):
        value = digest(snapshot(messages[position]))
        start = position * STORED_BYTES
        if value[:STORED_BYTES] != saved_short[start : start + STORED_BYTES]:
            return position, digests
        digests.append(value)
    if len(messages) < saved:
        return len(messages), digests
    if chain_of(digests) != saved_chain:
        return 0, []  # a change the short digests missed: nothing is trusted
    return None, digests
