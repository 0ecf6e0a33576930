"""The two steps every engine runs, as plain functions over plain data.

1. **Scan** (:func:`scan_chunk`): each chunk of the input is read and every record validated
   against the log schema; what comes out is a small *entry* per record (where it is, its
   session and turn, its format, or its error), never the messages. The driver checks the
   entries before any replay: with ``on_error="fail"`` a malformed record stops everything,
   and a format without an adapter always does.
2. **Replay** (:func:`replay_entries`): a batch of independent requests, or one session's
   requests in order, is read again by location and replayed under every policy.

Entries and rows are dicts of plain values, so the same functions run in a process pool and as
Ray Data transforms.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from pycupel.errors import ReplayLogError
from pycupel.replay.compute import ReplayConfig, Replayer, SessionState
from pycupel.replay.output import skipped_rows
from pycupel.replay.reader import Chunk, Locator, read_chunk, read_located
from pycupel.replay.schema import FORMAT_NAMES, LoggedRequest, RecordKey

__all__ = [
    "ENTRY_FIELDS",
    "entry_error",
    "replay_entries",
    "scan_chunk",
    "session_order",
]

ENTRY_FIELDS = (
    "file_index",
    "line",
    "kind",
    "offset",
    "length",
    "session_id",
    "turn",
    "format",
    "error_location",
    "error_detail",
)
"""What the scan records about each record (all plain values)."""


def scan_chunk(chunk: Chunk) -> list[dict[str, Any]]:
    """One entry per record of ``chunk``, in order (see :data:`ENTRY_FIELDS`)."""
    entries = []
    for locator, record in read_chunk(chunk, known_formats=FORMAT_NAMES):
        entry: dict[str, Any] = {
            "file_index": locator.key.file_index,
            "line": locator.key.line,
            "kind": locator.kind,
            "offset": locator.offset,
            "length": locator.length,
            "session_id": None,
            "turn": None,
            "format": None,
            "error_location": None,
            "error_detail": None,
        }
        if isinstance(record, ReplayLogError):
            entry["error_location"] = record.location
            entry["error_detail"] = record.detail
        else:
            entry["session_id"] = record.session_id
            entry["turn"] = record.turn
            entry["format"] = record.format
        entries.append(entry)
    return entries


def entry_error(entry: Mapping[str, Any], sources: Sequence[str]) -> ReplayLogError | None:
    """The scan's error for a record, or None."""
    if entry["error_detail"] is None:
        return None
    return ReplayLogError(
        sources[entry["file_index"]], entry["error_location"], entry["error_detail"]
    )


def session_order(entry: Mapping[str, Any]) -> tuple[bool, int, int, int]:
    """The replay order within a session: ascending ``turn``, then input order; requests
    without a turn after those with one."""
    turn = entry["turn"]
    return (turn is None, turn or 0, entry["file_index"], entry["line"])


def replay_entries(
    config: ReplayConfig,
    sources: Sequence[str],
    entries: Sequence[Mapping[str, Any]],
    *,
    session: bool,
    replayer: Replayer | None = None,
) -> list[dict[str, Any]]:
    """Rows for the records of ``entries``: one session's requests in replay order
    (``session=True``) or independent requests.

    ``replayer`` (built for the same ``config`` and ``sources``) lets a worker reuse its
    pipelines and remembered token counts across groups; a new one is made when omitted.

    Raises:
        ReplayLogError: a record is unusable and ``config.on_error`` is ``"fail"``.
    """
    if replayer is None:
        replayer = Replayer(config, sources)
    names = [entry.policy.name for entry in config.policies]
    state = SessionState() if session else None
    rows: list[dict[str, Any]] = []
    for entry, record in zip(entries, _records(entries, sources), strict=True):
        key = RecordKey(entry["file_index"], entry["line"])
        if isinstance(record, ReplayLogError):
            failure = record
        else:
            try:
                rows.extend(replayer.replay_request(record, state))
                continue
            except ReplayLogError as error:
                failure = error
        if config.on_error == "fail":
            raise ReplayLogError(failure.source, failure.location, failure.detail)
        extra = {
            "session_id": entry["session_id"],
            "turn": entry["turn"],
            "format": entry["format"],
            "budget": config.budget,
        }
        rows.extend(skipped_rows(failure, key, names, extra))
    return rows


def _records(
    entries: Iterable[Mapping[str, Any]], sources: Sequence[str]
) -> Iterator[LoggedRequest | ReplayLogError]:
    """Each entry's record read again (or its scan error), in the entries' order."""
    pending: list[Locator] = []
    for entry in entries:
        error = entry_error(entry, sources)
        if error is None:
            key = RecordKey(entry["file_index"], entry["line"])
            pending.append(Locator(key, entry["kind"], entry["offset"], entry["length"]))
            continue
        yield from read_located(pending, sources, known_formats=FORMAT_NAMES)
        pending.clear()
        yield error
    yield from read_located(pending, sources, known_formats=FORMAT_NAMES)
