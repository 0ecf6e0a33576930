"""A session given a saved state: :func:`restore_state` checks the state against the
history of the turn (its fingerprint) and sets the engine's state from it, making again the
shorter versions the window showed (an excerpt from the segments it keeps); whatever does not
come out as saved is treated as an edit from its unit on."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from itertools import chain
from typing import Any, TypeVar

from pycupel.conversation.excerpts.plan import ExcerptSource
from pycupel.conversation.recall import Recall
from pycupel.conversation.versions import Variant, unit_versions
from pycupel.errors import SessionStateError
from pycupel.session.calibration import CalibrationPoint
from pycupel.session.core import SessionCore
from pycupel.session.fingerprint import Fingerprint, first_mismatch, system_print
from pycupel.session.saved import SavedState
from pycupel.session.shrink import ScaledCounter, scaled_editor
from pycupel.tokens import TokenCounter

__all__ = ["restore_state"]

M = TypeVar("M")


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


_NAMES = frozenset({"placeholder", "bare", "truncated"})
"""The shorter versions a state can name (made again from the history)."""
