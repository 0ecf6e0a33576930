"""A session's state as bytes: what a store keeps between turns, and how a session that has
never seen the conversation takes it back.

The history comes in on every call, so the state holds no message text but the running
summary's; it holds what the session decided and learned, by unit and message position:

* the history's **fingerprint** (:mod:`pycupel.session.fingerprint`: 4 bytes a message and a
  16-byte chain) and each message's **token count** (so the counts are the ones the session
  had, whatever counted them: an asynchronous endpoint, an earlier tokenizer);
* the **zones** (stable prefix, recall zone, tail) and the previous request, the units the
  latest usage report covered, the latest user turn the recall zone was decided for;
* what usage taught: the **calibration** points and each unit's **learned** tokens (exact
  floats);
* the **shorter versions** shown: per unit, which version (``"placeholder"``,
  ``"truncated"``) and its count, and the ratio they were made with; the versions are made
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

import dataclasses
import json
import struct
import sys
import zlib
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from types import MappingProxyType
from typing import Any, TypeVar, cast, get_args

from pycupel.conversation.excerpts.plan import ExcerptSource, kept_segments
from pycupel.conversation.recall import Recall
from pycupel.conversation.validate import MAX_MESSAGES
from pycupel.conversation.versions import Variant, unit_versions
from pycupel.errors import SessionStateError
from pycupel.session.calibration import CalibrationPoint
from pycupel.session.core import SessionCore
from pycupel.session.fingerprint import (
    DIGEST_BYTES,
    STORED_BYTES,
    Fingerprint,
    first_mismatch,
    system_print,
)
from pycupel.session.shrink import ScaledCounter, scaled_editor
from pycupel.session.window import CacheBreak
from pycupel.tokens import TokenCounter

__all__ = [
    "FORMAT_VERSION",
    "STATE_ATTRIBUTES",
    "SavedShown",
    "SavedState",
    "SavedSummary",
    "StateWriter",
    "read_state",
    "restore_state",
]

M = TypeVar("M")

FORMAT_VERSION = 1
"""The version of the layout :meth:`StateWriter.write` writes (and the only one it reads)."""
MAGIC = b"PCS"
"""The first bytes of every saved state."""
_HEAD = MAGIC + bytes((FORMAT_VERSION,))
_LENGTH = struct.Struct("<I")
_COMPRESSION = 1
"""zlib's fastest level: the state is written every turn, and level 6 saves a few percent."""
_COUNT_CODES = (("u2", "H"), ("u4", "I"), ("i8", "q"))
"""The widths of the message counts: a name in the state, an ``array`` type code."""
_SWAP = sys.byteorder == "big"
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
        self._counts = array(_COUNT_CODES[0][1])

    def follow(self, core: SessionCore[M], system: object, *, edited_at: int | None) -> None:
        """Follow a turn of ``core`` (given ``system``, re-read from ``edited_at`` on)."""
        history = core._history
        self.prints.update(history.snapshots, system, edited_at=edited_at)
        counts = history.tokens
        if edited_at is not None:  # re-read counts are packed again
            self._kind = 0
            self._counts = array(_COUNT_CODES[0][1])
        known = len(self._counts)
        if known > len(counts):  # never: a shorter history is an edit
            self._counts = array(_COUNT_CODES[self._kind][1])
            known = 0
        new = counts[known:]
        try:
            self._counts.extend(array(self._counts.typecode, new))
        except OverflowError:  # a count beyond the width: all of them wider
            for kind in range(self._kind + 1, len(_COUNT_CODES)):
                try:
                    self._counts = array(_COUNT_CODES[kind][1], counts)
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
        if _SWAP:
            counts = array(counts.typecode, counts)
            counts.byteswap()
        learned = core._learned
        keys = array("I", sorted(learned))
        values = array("d", map(learned.__getitem__, keys))
        stable = core._stable
        written, stable_runs = self._stable
        if written is not stable:
            stable_runs = _runs(stable)
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
            "tokens": _COUNT_CODES[self._kind][0],
            "turn": core._turn,
            "recorded_turn": core._recorded_turn,
            "last_estimate": core._last_estimate,
            "stable": stable_runs,
            "recall": _runs(core._recall),
            "tail": _runs(core._tail),
            "previous": None if previous == request else _runs(previous),
            # Usually the units of the previous request (when its usage was recorded).
            "reported": None if reported == frozenset(previous) else _runs(sorted(reported)),
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
                    [unit, variant.name, shown.estimates[unit], kept_segments(variant)]
                    for unit, variant in sorted(shown.variants.items())
                ],
            }
        if summary is not None and summary.marked is not None:
            header["summary"] = {
                "text": summary.marked,
                "tokens": summary.tokens,
                "covered": _runs(sorted(summary.covered)),
            }
        text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
        packed = zlib.compress(text, _COMPRESSION)
        if _SWAP:
            keys.byteswap()
            values.byteswap()
        # Only the JSON part is compressed: the digests are random bytes, and the counts and
        # floats would save less than compressing them costs on every turn.
        return b"".join(
            (
                _HEAD,
                _LENGTH.pack(len(packed)),
                packed,
                prints.chain,
                prints.short,
                counts.tobytes(),
                keys.tobytes(),
                values.tobytes(),
            )
        )


def _runs(values: Sequence[int]) -> list[int]:
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


# --------------------------------------------------------------------------- reading


def read_state(data: bytes, *, source: str) -> SavedState:
    """A saved state from its bytes (``source`` names the store and key in errors).

    Raises:
        SessionStateError: another format version, or bytes that are not a saved state.
    """
    if not isinstance(data, bytes) or len(data) < len(MAGIC) + 1 or not data.startswith(MAGIC):
        raise SessionStateError(source, "header", "is not a pycupel session state")
    version = data[len(MAGIC)]
    if version != FORMAT_VERSION:  # a layout this pycupel does not know
        raise SessionStateError(
            source,
            "format version",
            f"is {version}; this pycupel reads session states of format version "
            f"{FORMAT_VERSION} (written by a {'newer' if version > FORMAT_VERSION else 'older'}"
            f" pycupel: run the same version on every worker, or delete the key)",
        )
    try:
        (length,) = _LENGTH.unpack_from(data, len(_HEAD))
        start = len(_HEAD) + _LENGTH.size
        header = json.loads(zlib.decompress(data[start : start + length]))
    except (zlib.error, struct.error, ValueError) as exc:
        raise SessionStateError(source, "header", f"does not read ({exc})") from exc
    fields = _Fields(header, source)
    messages = fields.integer("messages")
    learned = fields.integer("learned")
    kind = fields.choice("tokens", [name for name, _ in _COUNT_CODES])
    code = dict(_COUNT_CODES)[kind]
    sections = _Sections(data, start + length, source)
    chain_bytes = sections.take("chain", DIGEST_BYTES)
    digests = sections.take("digests", messages * STORED_BYTES)
    counts = _unpack(code, sections.take("tokens", messages * array(code).itemsize))
    keys = _unpack("I", sections.take("learned units", learned * 4))
    values = _unpack("d", sections.take("learned", learned * 8))
    sections.done()
    previous = fields.runs("previous", optional=True)
    stable, recall, tail = fields.runs("stable"), fields.runs("recall"), fields.runs("tail")
    previous_units = (*stable, *recall, *tail) if previous is None else previous
    reported = fields.runs("reported", optional=True)
    return SavedState(
        provider=fields.string("format"),
        messages=messages,
        system=fields.string("system"),
        system_tokens=fields.integer("system_tokens", optional=True),
        chain=chain_bytes,
        digests=digests,
        tokens=tuple(counts),
        turn=fields.integer("turn", minimum=1),
        recorded_turn=fields.integer("recorded_turn"),
        last_estimate=fields.integer("last_estimate", optional=True),
        stable=stable,
        recall=recall,
        tail=tail,
        previous=previous_units,
        reported=reported if reported is not None else tuple(sorted(set(previous_units))),
        recall_query=fields.integer("recall_query", minimum=-1),
        learned=dict(zip(keys, values, strict=True)),
        calibration=fields.calibration("calibration"),
        shown=fields.shown("shown"),
        summary=fields.summary("summary"),
        one_off=fields.integers("one_off", optional=True),
        pending_break=cast(
            "CacheBreak | None", fields.choice("pending_break", CACHE_BREAKS, optional=True)
        ),
        cached_prefixes=fields.integers("cached_prefixes"),
    )


def _unpack(code: str, data: bytes) -> list[Any]:
    values = array(code)
    values.frombytes(data)
    if _SWAP:
        values.byteswap()
    return values.tolist()


class _Fields:
    """The JSON part of a state, read field by field (each failure names its field)."""

    __slots__ = ("_header", "_source")

    def __init__(self, header: object, source: str) -> None:
        if not isinstance(header, dict):
            raise SessionStateError(source, "body", "must hold a JSON object")
        self._header: dict[str, Any] = header
        self._source = source

    def fail(self, name: str, detail: str) -> SessionStateError:
        return SessionStateError(self._source, name, detail)

    def _get(self, name: str) -> object:
        if name not in self._header:
            raise self.fail(name, "is missing")
        return self._header[name]

    def integer(self, name: str, *, minimum: int = 0, optional: bool = False) -> Any:
        value = self._get(name)
        if value is None and optional:
            return None
        return self._int(name, value, minimum)

    def _int(self, name: str, value: object, minimum: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(name, f"must be an integer >= {minimum}, got {value!r}")
        return value

    def string(self, name: str) -> str:
        value = self._get(name)
        if not isinstance(value, str):
            raise self.fail(name, f"must be a string, got {value!r}")
        return value

    def choice(self, name: str, choices: Sequence[str], *, optional: bool = False) -> Any:
        if optional and self._get(name) is None:
            return None
        value = self.string(name)
        if value not in choices:
            raise self.fail(name, f"must be one of {list(choices)}, got {value!r}")
        return value

    def integers(self, name: str, *, optional: bool = False) -> Any:
        values = self._get(name)
        if values is None and optional:
            return None
        if not isinstance(values, list) or len(values) > MAX_MESSAGES:
            raise self.fail(name, "must be a list of integers")
        return tuple(self._int(name, value) for value in values)

    def runs(self, name: str, *, optional: bool = False, value: object = None) -> Any:
        runs = self._get(name) if value is None else value
        if runs is None and optional:
            return None
        if not isinstance(runs, list) or len(runs) % 2:
            raise self.fail(name, "must be a list of [start, length] runs")
        result: list[int] = []
        for start, length in zip(runs[::2], runs[1::2], strict=True):
            self._int(name, start)
            self._int(name, length, minimum=1)
            if start + length > MAX_MESSAGES or len(result) + length > MAX_MESSAGES:
                raise self.fail(name, f"names positions beyond {MAX_MESSAGES:,}")
            result.extend(range(start, start + length))
        return tuple(result)

    def calibration(self, name: str) -> tuple[tuple[int, int], ...]:
        points = self._get(name)
        if not isinstance(points, list) or not all(
            isinstance(point, list) and len(point) == 2 for point in points
        ):
            raise self.fail(name, "must be a list of [estimated, reported] pairs")
        return tuple((self._int(name, e), self._int(name, r)) for e, r in points)

    def shown(self, name: str) -> SavedShown | None:
        shown = self._get(name)
        if shown is None:
            return None
        if not isinstance(shown, dict) or not isinstance(shown.get("units"), list):
            raise self.fail(name, "must be an object with a units list")
        ratio = shown.get("ratio")
        if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not ratio > 0:
            raise self.fail(f"{name}.ratio", f"must be a positive number, got {ratio!r}")
        units: list[tuple[int, str, int, list[list[list[int]]] | None]] = []
        for entry in shown["units"]:
            if not isinstance(entry, list) or len(entry) != 4 or not isinstance(entry[1], str):
                raise self.fail(
                    f"{name}.units", f"must hold [unit, name, tokens, segments], got {entry!r}"
                )
            units.append(
                (
                    self._int(f"{name}.units", entry[0]),
                    entry[1],
                    self._int(name, entry[2]),
                    self._segments(f"{name}.units", entry[3]),
                )
            )
        return SavedShown(float(ratio), tuple(units))

    def _segments(self, name: str, value: object) -> list[list[list[int]]] | None:
        """An excerpt's kept segments: per text, a list of ``[start, stop)`` ranges."""
        if value is None:
            return None
        if not isinstance(value, list) or not all(
            isinstance(text, list)
            and all(
                isinstance(r, list)
                and len(r) == 2
                and self._int(name, r[0]) < self._int(name, r[1])
                for r in text
            )
            for text in value
        ):
            raise self.fail(name, f"must hold per text [start, stop) ranges, got {value!r}")
        return value

    def summary(self, name: str) -> SavedSummary | None:
        summary = self._get(name)
        if summary is None:
            return None
        if not isinstance(summary, dict) or not isinstance(summary.get("text"), str):
            raise self.fail(name, "must be an object with the summary's text")
        return SavedSummary(
            summary["text"],
            self._int(f"{name}.tokens", summary.get("tokens")),
            self.runs(f"{name}.covered", value=summary.get("covered")),
        )


class _Sections:
    """The binary part of a state, taken section by section."""

    __slots__ = ("_body", "_offset", "_source")

    def __init__(self, body: bytes, offset: int, source: str) -> None:
        self._body = body
        self._offset = offset
        self._source = source

    def take(self, name: str, size: int) -> bytes:
        end = self._offset + size
        if end > len(self._body):
            raise SessionStateError(self._source, name, "is cut short")
        data = self._body[self._offset : end]
        self._offset = end
        return data

    def done(self) -> None:
        if self._offset != len(self._body):
            raise SessionStateError(
                self._source, "body", f"has {len(self._body) - self._offset} unread bytes"
            )


# --------------------------------------------------------------------------- restoring


def restore_state(
    core: SessionCore[M],
    saved: SavedState,
    messages: Sequence[M],
    system: object,
    *,
    source: str,
) -> Fingerprint:
    """Give a new ``core`` (never fitted) a saved state, for a turn on ``messages`` (and
    ``system``); returns the fingerprint of the history it now holds.

    The history is checked against the state's fingerprint: when it holds every saved
    message unchanged, the core continues exactly as the session that saved the state
    would have; when it differs from a message on (an edit, a truncation, another
    conversation's history), the turn treats that message as edited, as that session
    would have.

    Raises:
        SessionStateError: a state saved by another format, or by a session with other
            shrink or summary settings, or one that does not fit its own history.
    """
    fmt = core.format
    if saved.provider != fmt.provider:
        raise SessionStateError(
            source,
            "format",
            f"was saved by a {saved.provider!r} session, not a {fmt.provider!r} one (give "
            f"each conversation and format its own key)",
        )
    if saved.shown is not None and core._shown is None:
        raise SessionStateError(
            source,
            "shown",
            "holds shorter versions, but this session does not shrink (build every "
            "worker's session with the same shrink= option)",
        )
    if saved.summary is not None and core._summary is None:
        raise SessionStateError(
            source,
            "summary",
            "holds a running summary, but this session has no summarize= (build every "
            "worker's session with the same options)",
        )
    if len(saved.tokens) != saved.messages:
        raise SessionStateError(source, "tokens", "must hold one count per message")
    system_changed = system_print(system) != saved.system
    edited_at: int | None
    if system_changed:
        edited_at, digests = 0, list[bytes]()
    else:
        edited_at, digests = first_mismatch(
            fmt, messages, saved_short=saved.digests, saved_chain=saved.chain
        )
    history = core._history
    while True:
        if system_changed:
            history.forget()  # another system prompt: everything is read afresh
        else:
            end = saved.messages if edited_at is None else edited_at
            try:
                history.restore(
                    messages[:end],
                    system,
                    tokens=saved.tokens[:end],
                    system_tokens=saved.system_tokens,
                    edited_at=edited_at,
                )
            except Exception as exc:
                raise SessionStateError(
                    source, "messages", f"does not match its history ({exc})"
                ) from exc
        unit_count = len(history.units)
        if edited_at is None:
            _check_positions(saved, unit_count, source)
        untrusted = _restore_core(core, saved, messages, unit_count)
        if untrusted is None:
            break
        # A shorter version that does not come out as it was saved: the state is trusted
        # only before its unit.
        edited_at = untrusted if edited_at is None else min(edited_at, untrusted)
        del digests[edited_at:]
    if system_changed:
        return Fingerprint()
    return Fingerprint(digests, system=saved.system)


def _check_positions(saved: SavedState, units: int, source: str) -> None:
    """Every unit position of a state that matches its history names one of its units."""
    named = {
        "stable": saved.stable,
        "recall": saved.recall,
        "tail": saved.tail,
        "previous": saved.previous,
        "reported": saved.reported,
        "learned": tuple(saved.learned),
        "shown": tuple(unit for unit, *_ in saved.shown.units) if saved.shown else (),
        "recall_query": (saved.recall_query,) if saved.recall_query >= 0 else (),
    }
    for name, positions in named.items():
        if positions and max(positions) >= units:
            raise SessionStateError(
                source,
                name,
                f"names unit {max(positions)}, but the saved history has {units} units",
            )


def _restore_core(
    core: SessionCore[M], saved: SavedState, messages: Sequence[M], unit_count: int
) -> int | None:
    """Set the core's state from ``saved`` (its history already restored, with
    ``unit_count`` units); returns the first message position of a unit whose shorter
    version does not come out as saved (the state is not trusted from there), else None."""
    history = core._history
    units = history.units
    core._turn = saved.turn
    core._recorded_turn = saved.recorded_turn
    core._last_estimate = saved.last_estimate
    core._calibration.restore(
        [CalibrationPoint(estimated, reported) for estimated, reported in saved.calibration]
    )
    core._stable = list(saved.stable)
    core._recall = list(saved.recall)
    core._tail = list(saved.tail)
    previous = list(saved.previous)
    core._previous = previous
    core._previous_max = max(previous, default=-1)
    if all(u < unit_count for u in previous):
        request_units = tuple(units[u] for u in previous)
        core._previous_units = request_units
        core._previous_indices = tuple(
            chain.from_iterable(unit.message_indices for unit in request_units)
        )
        core._previous_tokens = history.tokens_of(previous)
    # Otherwise the turn is an edit before some unit of the previous request: it does not
    # extend it, and these are not read.
    core._reported_units = frozenset(saved.reported)
    core._recall_query = saved.recall_query
    core._learned = dict(saved.learned)
    core._one_off_units = None if saved.one_off is None else list(saved.one_off)
    core._pending_break = saved.pending_break
    core._cached_prefixes = list(saved.cached_prefixes)
    summary = core._summary
    if summary is not None and saved.summary is not None:
        summary.restore(saved.summary.text, saved.summary.tokens, saved.summary.covered)
    core._previous_summary = summary.message if summary is not None else None
    shown = core._shown
    if shown is None or saved.shown is None:
        return None
    editor = core.format.editor
    shrink = core.shrink
    assert editor is not None  # a session that shrinks has an editor
    assert shrink is not None
    ratio = saved.shown.ratio
    chosen: dict[int, Variant[M]] = {}
    for unit, name, _, segments in saved.shown.units:
        if unit >= unit_count:
            continue  # past an edit: forgotten by the turn
        variant = _version_again(
            units[unit],
            messages,
            name,
            segments,
            editor=editor,
            shrink=shrink,
            counter=core.counter,
            ratio=ratio,
            recall=core.recall,
        )
        if variant is None:
            return _first_message(units[unit])
        chosen[unit] = variant
    shown.replace(chosen, units, core.counter, ratio=ratio)
    for unit, _, tokens, _ in saved.shown.units:
        if unit in chosen and shown.estimates[unit] != tokens:
            return _first_message(units[unit])
    return None


def _first_message(unit: Any) -> int:
    indices: tuple[int, ...] = unit.message_indices
    return indices[0] if indices else 0


def _version_again(
    unit: Any,
    messages: Sequence[M],
    name: str,
    segments: list[list[list[int]]] | None,
    *,
    editor: Any,
    shrink: Any,
    counter: TokenCounter,
    ratio: float,
    recall: Recall | None,
) -> Variant[M] | None:
    """The shorter version ``name`` of ``unit``, made again as the compaction made it (the
    same rewriting, counted with the same ratio; an excerpt keeping the same ``segments``);
    None when it does not come out."""
    # The unit as a candidate the version is never pruned against (its count was the
    # compaction's; only the versions' own texts matter here).
    candidate = dataclasses.replace(unit, item=unit.item.replace(tokens=2**40, pinned=False))
    editor = scaled_editor(editor, ratio)
    counter = ScaledCounter(counter, ratio)
    shrink = dataclasses.replace(shrink, keep_whole=0)
    if name == "excerpt":
        if segments is None:
            return None
        source = ExcerptSource(
            [candidate],
            messages,
            editor=editor,
            counter=counter,
            shrink=shrink,
            query="",
            recall=recall,
        )
        return source.rebuild(0, segments)
    versions = unit_versions(
        [candidate], messages, editor=editor, counter=counter, shrink=shrink
    ).get(0)
    if versions is None:
        return None
    variant: Variant[M] | None = getattr(versions, name, None) if name in _NAMES else None
    return variant


_NAMES = frozenset({"placeholder", "truncated"})
"""The shorter versions a state can name (made again from the history)."""
