"""A saved session state read back from its bytes: :func:`read_state` (the layout is
:mod:`pycupel.session.saved`'s), each field checked, a failure naming the field."""

from __future__ import annotations

import json
import struct
import zlib
from array import array
from collections.abc import Sequence
from typing import Any, cast

from pycupel.conversation.validate import MAX_MESSAGES
from pycupel.errors import SessionStateError
from pycupel.session.fingerprint import DIGEST_BYTES, STORED_BYTES
from pycupel.session.saved import (
    CACHE_BREAKS,
    COUNT_CODES,
    FORMAT_VERSION,
    HEAD,
    LENGTH,
    MAGIC,
    SWAP,
    SavedShown,
    SavedState,
    SavedSummary,
)
from pycupel.session.window import CacheBreak

__all__ = ["read_state"]


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
        (length,) = LENGTH.unpack_from(data, len(HEAD))
        start = len(HEAD) + LENGTH.size
        header = json.loads(zlib.decompress(data[start : start + length]))
    except (zlib.error, struct.error, ValueError) as exc:
        raise SessionStateError(source, "header", f"does not read ({exc})") from exc
    fields = _Fields(header, source)
    messages = fields.integer("messages")
    learned = fields.integer("learned")
    kind = fields.choice("tokens", [name for name, _ in COUNT_CODES])
    code = dict(COUNT_CODES)[kind]
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
    if SWAP:
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
