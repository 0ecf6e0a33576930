"""A session's state as bytes: what a store keeps between turns, and how a session that has
never seen the conversation takes it back (:mod:`pycupel.session.loaded` reads the bytes
back, :mod:`pycupel.session.restore` gives a session the state).

The history comes in on every call, so the state holds no message text but the running
summary's; it holds what the session decided and learned, by unit and message position:

* the history's **fingerprint** (:mod:`pycupel.session.fingerprint`: 4 bytes a message and a
  16-byte chain) and each message's **token count** (so the counts are the ones the session
  had, whatever counted them: an asynchronous endpoint, an earlier tokenizer);
* the **zones** (stable prefix, recall zone, tail) and the previous request, the units the
  latest usage report covered, the latest user turn the recall zone was decided for;
* what usage taught: the **calibration** points and each unit's **learned** tokens (exact
  floats);
* the **shorter versions** shown: per unit, which version (``"placeholder"``, ``"bare"``
  for a placeholder without the assistant's words before its calls, ``"truncated"``,
  ``"excerpt"``) and its count, and the ratio they were made with; the versions are made
  again from the history, never stored (a version that does not come out the same is not
  trusted: the history is treated as edited from its unit);
* the **running summary**: its text (the one thing that cannot be rebuilt), its count and
  the messages it covers;
* the turn counters.

Layout: ``b"PCS"``, one byte of :data:`FORMAT_VERSION`, a JSON object compressed with zlib
(after its length in 4 bytes; lists of unit positions as runs ``[start, length, ...]``),
then the binary sections, little-endian: the chain, the 4-byte digests, the message counts
(2, 4 or 8 bytes each), the learned units (4 bytes each) and their tokens (float64). About
6 bytes a message and 12 a learned unit, plus a few hundred bytes: 8 KB for a
1,000-message history whose usage is recorded every turn. A state of another format
version, or one that does not read, raises :class:`~pycupel.errors.SessionStateError`.

Everything else a session holds (the parsed history, its BM25 index, the caches of the
request) is rebuilt from the history given to the turn, exactly as the session that saved
the state built it, so the restored session takes the same decisions from then on.
"""

from __future__ import annotations

import json
import struct
import sys
import zlib
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar, get_args

from pycupel.conversation.excerpts.plan import kept_segments
from pycupel.conversation.versions import Variant
from pycupel.session.core import SessionCore
from pycupel.session.fingerprint import Fingerprint
from pycupel.session.window import CacheBreak

__all__ = [
    "CACHE_BREAKS",
    "COUNT_CODES",
    "FORMAT_VERSION",
    "HEAD",
    "LENGTH",
    "MAGIC",
    "STATE_ATTRIBUTES",
    "SWAP",
    "SavedShown",
    "SavedState",
    "SavedSummary",
    "StateWriter",
    "runs",
    "shown_name",
]

M = TypeVar("M")

FORMAT_VERSION = 1
"""The version of the layout :meth:`StateWriter.write` writes (and the only one it reads)."""
MAGIC = b"PCS"
"""The first bytes of every saved state."""
HEAD = MAGIC + bytes((FORMAT_VERSION,))
LENGTH = struct.Struct("<I")
_COMPRESSION = 1
"""zlib's fastest level: the state is written every turn, and level 6 saves a few percent."""
COUNT_CODES = (("u2", "H"), ("u4", "I"), ("i8", "q"))
"""The widths of the message counts: a name in the state, an ``array`` type code."""
SWAP = sys.byteorder == "big"
"""States are little-endian on every machine."""


STATE_ATTRIBUTES: Mapping[str, str] = MappingProxyType(
    {
        # The session's settings: given to every session object alike.
        **dict.fromkeys(
            (
                "budget",
                "compact_at",
                "compact_to",
                "grid",
                "recall_share",
                "compact_for_recall",
                "recall_every_turn",
                "prefer",
                "recall",
                "policy",
                "shrink",
                "format",
                "counter",
                "_scorer",
                "_lock",
            ),
            "setting",
        ),
        # Saved in the state.
        **dict.fromkeys(
            (
                "_calibration",
                "_stable",
                "_recall",
                "_tail",
                "_previous",
                "_reported_units",
                "_recall_query",
                "_turn",
                "_recorded_turn",
                "_last_estimate",
                "_learned",
                "_shown",
                "_summary",
                "_one_off_units",
                "_pending_break",
                "_cached_prefixes",
            ),
            "saved",
        ),
        # Made again from the history and the saved state.
        **dict.fromkeys(
            (
                "_history",
                "_previous_max",
                "_previous_tokens",
                "_previous_units",
                "_previous_indices",
                "_stable_messages",
                "_recall_messages",
                "_stable_positions",
                "_headers",
                "_previous_summary",
            ),
            "rebuilt",
        ),
    }
)
"""How a restored session gets each attribute of
:class:`~pycupel.session.state.SessionState`: a setting, saved, or rebuilt. A test checks
that it names every attribute, so a new one is never forgotten by the saved state."""


@dataclass(frozen=True, slots=True)
class SavedShown:
    """The shorter versions a saved window showed.

    Attributes:
        ratio: the calibration's upper ratio they were made with.
        units: ``(unit, version name, tokens by the session's counter, segments)`` per
            shortened unit; ``segments`` are the segments an excerpt keeps (per text,
            ``[start, stop)`` ranges), None for another version.
    """

    ratio: float
    units: tuple[tuple[int, str, int, list[list[list[int]]] | None], ...]


@dataclass(frozen=True, slots=True)
class SavedSummary:
    """A saved running summary: its message's text, its tokens, the messages it covers."""

    text: str
    tokens: int
    covered: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SavedState:
    """A session's state as read back from its bytes (see the module documentation)."""

    provider: str
    messages: int
    system: str
    system_tokens: int | None
    chain: bytes
    digests: bytes
    tokens: tuple[int, ...]
    turn: int
    recorded_turn: int
    last_estimate: int | None
    stable: tuple[int, ...]
    recall: tuple[int, ...]
    tail: tuple[int, ...]
    previous: tuple[int, ...]
    reported: tuple[int, ...]
    recall_query: int
    learned: Mapping[int, float]
    calibration: tuple[tuple[int, int], ...]
    shown: SavedShown | None
    summary: SavedSummary | None
    one_off: tuple[int, ...] | None
    pending_break: CacheBreak | None
    cached_prefixes: tuple[int, ...]


CACHE_BREAKS: tuple[str, ...] = get_args(CacheBreak)


# --------------------------------------------------------------------------- writing


class StateWriter:
    """Writes a session's state after each turn (:meth:`write`), keeping the history's
    fingerprint (:attr:`prints`) and what did not change since the previous turn.

    Not thread-safe on its own: a stored session guards it with its lock.
    """

    __slots__ = ("_counts", "_kind", "_stable", "prints")

    def __init__(self, prints: Fingerprint | None = None) -> None:
        self.prints = prints if prints is not None else Fingerprint()
        # The stable zone's runs, for the list they were written from (the zone is replaced,
        # never changed in place).
        self._stable: tuple[list[int] | None, list[int]] = (None, [])
        # The message counts packed so far (a turn packs only the counts it adds).
        self._kind = 0
        self._counts = array(COUNT_CODES[0][1])

    def follow(self, core: SessionCore[M], system: object, *, edited_at: int | None) -> None:
        """Follow a turn of ``core`` (given ``system``, re-read from ``edited_at`` on)."""
        history = core._history
        self.prints.update(history.snapshots, system, edited_at=edited_at)
        counts = history.tokens
        if edited_at is not None:  # re-read counts are packed again
            self._kind = 0
            self._counts = array(COUNT_CODES[0][1])
        known = len(self._counts)
        if known > len(counts):  # never: a shorter history is an edit
            self._counts = array(COUNT_CODES[self._kind][1])
            known = 0
        new = counts[known:]
        try:
            self._counts.extend(array(self._counts.typecode, new))
        except OverflowError:  # a count beyond the width: all of them wider
            for kind in range(self._kind + 1, len(COUNT_CODES)):
                try:
                    self._counts = array(COUNT_CODES[kind][1], counts)
                except OverflowError:
                    continue
                self._kind = kind
                break

    def write(self, core: SessionCore[M]) -> bytes:
        """The bytes of ``core``'s state (after a turn :meth:`follow` followed)."""
        history = core._history
        units = history.units
        prints = self.prints
        assert len(self._counts) == len(history.tokens)  # follow() saw the turn
        counts = self._counts
        if SWAP:
            counts = array(counts.typecode, counts)
            counts.byteswap()
        learned = core._learned
        keys = array("I", sorted(learned))
        values = array("d", map(learned.__getitem__, keys))
        stable = core._stable
        written, stable_runs = self._stable
        if written is not stable:
            stable_runs = runs(stable)
            self._stable = (stable, stable_runs)
        previous = core._previous
        request = [*stable, *core._recall, *core._tail]
        reported = core._reported_units
        shown = core._shown
        summary = core._summary
        header: dict[str, Any] = {
            "format": core.format.provider,
            "messages": history.message_count,
            "system": prints.system,
            "system_tokens": units[0].item.tokens if units and units[0].system_parameter else None,
            "tokens": COUNT_CODES[self._kind][0],
            "turn": core._turn,
            "recorded_turn": core._recorded_turn,
            "last_estimate": core._last_estimate,
            "stable": stable_runs,
            "recall": runs(core._recall),
            "tail": runs(core._tail),
            "previous": None if previous == request else runs(previous),
            # Usually the units of the previous request (when its usage was recorded).
            "reported": None if reported == frozenset(previous) else runs(sorted(reported)),
            "recall_query": core._recall_query,
            "learned": len(keys),
            "calibration": [
                [point.estimated_tokens, point.reported_tokens]
                for point in core._calibration.points
            ],
            "shown": None,
            "summary": None,
            # After a one-off request (prefer="recall"): its units, in order, and the cache
            # break the next window reports; the prefix lengths the provider has cached.
            "one_off": core._one_off_units,
            "pending_break": core._pending_break,
            "cached_prefixes": core._cached_prefixes,
        }
        if shown is not None and shown.variants:
            header["shown"] = {
                "ratio": shown.ratio,
                "units": [
                    [unit, shown_name(variant), shown.estimates[unit], kept_segments(variant)]
                    for unit, variant in sorted(shown.variants.items())
                ],
            }
        if summary is not None and summary.marked is not None:
            header["summary"] = {
                "text": summary.marked,
                "tokens": summary.tokens,
                "covered": runs(sorted(summary.covered)),
            }
        text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
        packed = zlib.compress(text, _COMPRESSION)
        if SWAP:
            keys.byteswap()
            values.byteswap()
        # Only the JSON part is compressed: the digests are random bytes, and the counts and
        # floats would save less than compressing them costs on every turn.
        return b"".join(
            (
                HEAD,
                LENGTH.pack(len(packed)),
                packed,
                prints.chain,
                prints.short,
                counts.tobytes(),
                keys.tobytes(),
                values.tobytes(),
            )
        )


def shown_name(variant: Variant[Any]) -> str:
    """The name a saved state gives a shown version: its own, or ``"bare"`` for a
    placeholder without the assistant's words (made again from that name)."""
    return "bare" if variant.bare else variant.name


def runs(values: Sequence[int]) -> list[int]:
    """``values`` as runs of consecutive integers: ``[start, length, start, length...]``."""
    if not values:
        return []
    first = values[0]
    if values[-1] - first + 1 == len(values) and values == list(range(first, first + len(values))):
        return [first, len(values)]  # one run (a zone mostly is), compared at C speed
    runs: list[int] = []
    for value in values:
        if runs and value == runs[-2] + runs[-1]:
            runs[-1] += 1
        else:
            runs += [value, 1]
    return runs
