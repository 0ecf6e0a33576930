"""What the driver decides between the scan and the replay: stop or go, and the work units.

* Every scan error is a malformed record: with ``on_error="fail"`` the first one (in input
  order) is raised before any replay; with ``"skip"`` they are counted and replayed as
  ``skipped`` rows.
* A format no adapter here can read is raised whatever ``on_error`` says: skipping would drop a
  whole format's traffic.
* Independent requests go in batches of consecutive records; the requests of a session form
  one group, in replay order (:func:`~pycupel.replay.tasks.session_order`), that one worker
  replays from start to end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pycupel.errors import ReplayLogError
from pycupel.replay.compute import ReplayConfig
from pycupel.replay.formats import unavailable_reason
from pycupel.replay.tasks import entry_error, session_order

__all__ = ["BATCH_RECORDS", "Group", "ScanSummary", "check_entries", "group_entries"]

BATCH_RECORDS = 16
"""Independent requests per work unit (and sessions are packed up to about this many)."""

Group = tuple[tuple[Mapping[str, Any], ...], bool]
"""Entries replayed together, and whether they are one session (in order)."""


@dataclass(frozen=True, slots=True)
class ScanSummary:
    """What the scan found: records, malformed records (skipped), sessions and the requests
    belonging to one, formats."""

    records: int
    skipped: int
    sessions: int
    sessions_requests: int
    formats: tuple[str, ...]


def check_entries(
    entries: Iterable[Mapping[str, Any]], sources: Sequence[str], config: ReplayConfig
) -> ScanSummary:
    """Stop on the first malformed record (``on_error="fail"``) or on a format no adapter can
    read; otherwise count what the scan found.

    Raises:
        ReplayLogError: as described above.
    """
    records = skipped = 0
    first_error: tuple[int, int, ReplayLogError] | None = None
    first_use: dict[str, tuple[int, int]] = {}
    sessions: set[str] = set()
    in_sessions = 0
    for entry in entries:
        records += 1
        error = entry_error(entry, sources)
        position = (entry["file_index"], entry["line"])
        if error is not None:
            skipped += 1
            if first_error is None or position < first_error[:2]:
                first_error = (*position, error)
            continue
        name = entry["format"]
        if name not in first_use or position < first_use[name]:
            first_use[name] = position
        if entry["session_id"] is not None:
            sessions.add(entry["session_id"])
            in_sessions += 1
    if first_error is not None and config.on_error == "fail":
        found = first_error[2]
        raise ReplayLogError(found.source, found.location, found.detail)
    for name, (file_index, line) in sorted(first_use.items(), key=lambda pair: pair[1]):
        reason = unavailable_reason(name)
        if reason is not None:
            unit = "row" if sources[file_index].lower().endswith((".parquet", ".pq")) else "line"
            raise ReplayLogError(sources[file_index], f"{unit} {line}: format", reason)
    return ScanSummary(records, skipped, len(sessions), in_sessions, tuple(sorted(first_use)))


def group_entries(entries: Iterable[Mapping[str, Any]]) -> list[list[Group]]:
    """The work units: lists of groups of about :data:`BATCH_RECORDS` records each."""
    sessions: dict[str, list[Mapping[str, Any]]] = {}
    units: list[list[Group]] = []
    batch: list[Mapping[str, Any]] = []
    for entry in entries:
        session_id = entry["session_id"]
        if session_id is not None:
            sessions.setdefault(session_id, []).append(entry)
            continue
        batch.append(entry)
        if len(batch) >= BATCH_RECORDS:
            units.append([(tuple(batch), False)])
            batch = []
    if batch:
        units.append([(tuple(batch), False)])
    packed: list[Group] = []
    size = 0
    for members in sessions.values():
        packed.append((tuple(sorted(members, key=session_order)), True))
        size += len(members)
        if size >= BATCH_RECORDS:
            units.append(packed)
            packed, size = [], 0
    if packed:
        units.append(packed)
    return units
