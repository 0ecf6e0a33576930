"""The replay log format: one logged request per JSON Lines line or Parquet row.

A record is an object with these fields (JSON Lines: a JSON object per line; Parquet: one
column per field, with ``messages``, ``system``, ``usage`` and ``evidence`` as JSON text):

=============  ========================  ====================================================
field          type                      meaning
=============  ========================  ====================================================
format         string, required          the message format: ``openai``, ``anthropic``,
                                         ``responses``, ``gemini`` or ``langchain``
messages       array, required           the request's messages, as sent to the provider
                                         (LangChain: message dicts as ``message.model_dump()``)
system         string/array/object, opt. the system prompt sent beside the messages
                                         (Anthropic's ``system``, Responses' ``instructions``,
                                         Gemini's ``system_instruction``)
session_id     string, optional          requests of one conversation share it; they replay in
                                         order, on one worker, with cache accounting
turn           integer >= 0, optional    the request's position in its session
usage          object, optional          the provider's reported usage (kept for comparison)
evidence       array of int, optional    indices into ``messages`` of the messages a reference
                                         answer needed (evidence recall)
=============  ========================  ====================================================

Other fields are ignored (a log usually carries ``model``, ``tools``, timestamps...). Every rule
broken raises :class:`~pycupel.errors.ReplayLogError` naming the file, the line (or row) and
the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pycupel.errors import ReplayLogError

__all__ = [
    "FORMAT_NAMES",
    "LoggedRequest",
    "RecordKey",
    "parse_record",
    "parse_record_text",
    "reported_usage",
]

FORMAT_NAMES = ("openai", "anthropic", "responses", "gemini", "langchain")
"""Every format the log schema names (an adapter may not be installed for each)."""

_MAX_TURN = 2**53


@dataclass(frozen=True, slots=True, order=True)
class RecordKey:
    """Where a record came from: the input file's position in the list and its line (JSON
    Lines, from 1) or row (Parquet, from 0). Output rows are sorted by it."""

    file_index: int
    line: int


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """One validated record of a replay log (see the module documentation)."""

    key: RecordKey
    format: str
    messages: Sequence[Any]
    system: Any = None
    session_id: str | None = None
    turn: int | None = None
    usage: Mapping[str, Any] | None = None
    evidence: tuple[int, ...] | None = None
    unit: str = "line"
    """How the record's position is named in messages: ``"line"`` or ``"row"`` (Parquet)."""

    @property
    def location(self) -> str:
        """``"line 7"`` or ``"row 7"``."""
        return f"{self.unit} {self.key.line}"


def parse_record_text(text: str | bytes, *, source: str, key: RecordKey, unit: str) -> Any:
    """The JSON value of one line; :class:`ReplayLogError` when it is not valid JSON."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReplayLogError(source, f"{unit} {key.line}", f"not valid JSON ({exc})") from None
    except RecursionError:
        raise ReplayLogError(source, f"{unit} {key.line}", "JSON nested too deeply") from None


def parse_record(
    value: object,
    *,
    source: str,
    key: RecordKey,
    unit: str = "line",
    known_formats: Sequence[str] = FORMAT_NAMES,
) -> LoggedRequest:
    """Validate one decoded record and return it as a :class:`LoggedRequest`.

    Args:
        value: the decoded JSON object (or a Parquet row as a dict).
        source: the file, for error messages.
        key: the record's file index and line or row.
        unit: ``"line"`` (JSON Lines) or ``"row"`` (Parquet), for error messages.
        known_formats: the formats accepted in ``format``.

    Raises:
        ReplayLogError: a field is missing or has the wrong type; the message names the file,
            the line and the field.
    """
    where = f"{unit} {key.line}"

    if not isinstance(value, Mapping):
        raise _bad(source, where, "", "must be a JSON object (one logged request)", value)
    fmt = value.get("format")
    if not isinstance(fmt, str) or fmt not in known_formats:
        raise _bad(source, where, "format", f"must be one of {', '.join(known_formats)}", fmt)
    messages = value.get("messages")
    if not isinstance(messages, list):
        raise _bad(source, where, "messages", "must be an array of messages", messages)
    system = value.get("system")
    if system is not None and not isinstance(system, str | list | Mapping):
        raise _bad(
            source, where, "system", "must be a string, an array of blocks or an object", system
        )
    session_id = value.get("session_id")
    if session_id is not None and (not isinstance(session_id, str) or not session_id):
        raise _bad(source, where, "session_id", "must be a non-empty string", session_id)
    turn = value.get("turn")
    if turn is not None and (
        isinstance(turn, bool) or not isinstance(turn, int) or not 0 <= turn < _MAX_TURN
    ):
        raise _bad(source, where, "turn", "must be an integer >= 0", turn)
    usage = value.get("usage")
    if usage is not None and not isinstance(usage, Mapping):
        raise _bad(source, where, "usage", "must be an object", usage)
    evidence = _evidence(value.get("evidence"), messages, source, where)
    return LoggedRequest(
        key=key,
        format=fmt,
        messages=messages,
        system=system,
        session_id=session_id,
        turn=turn,
        usage=usage,
        evidence=evidence,
        unit=unit,
    )


def _evidence(
    value: object, messages: Sequence[Any], source: str, where: str
) -> tuple[int, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise _bad(source, where, "evidence", "must be an array of message indices", value)
    indices: list[int] = []
    for position, index in enumerate(value):
        if isinstance(index, bool) or not isinstance(index, int):
            raise _bad(
                source, where, f"evidence[{position}]", "must be an integer message index", index
            )
        if not 0 <= index < len(messages):
            raise _bad(
                source,
                where,
                f"evidence[{position}]",
                f"must index a message (0..{len(messages) - 1})",
                index,
            )
        indices.append(index)
    return tuple(dict.fromkeys(indices))


def reported_usage(usage: Mapping[str, Any] | None) -> tuple[int | None, int | None]:
    """The provider-reported input and cached input tokens, whatever the provider's names.

    OpenAI Chat Completions (``prompt_tokens``, ``prompt_tokens_details.cached_tokens``),
    Responses (``input_tokens``, ``input_tokens_details.cached_tokens``), Anthropic
    (``input_tokens`` + ``cache_read_input_tokens`` + ``cache_creation_input_tokens``) and
    Gemini (``promptTokenCount``, ``cachedContentTokenCount``). Missing: ``None``.
    """
    if not usage:
        return None, None

    def number(mapping: object, name: str) -> int | None:
        found = mapping.get(name) if isinstance(mapping, Mapping) else None
        return found if isinstance(found, int) and not isinstance(found, bool) else None

    if (prompt := number(usage, "prompt_tokens")) is not None:
        return prompt, number(usage.get("prompt_tokens_details"), "cached_tokens")
    if (prompt := number(usage, "promptTokenCount")) is not None:
        return prompt, number(usage, "cachedContentTokenCount")
    if (prompt := number(usage, "input_tokens")) is not None:
        read = number(usage, "cache_read_input_tokens")
        if read is not None or "cache_creation_input_tokens" in usage:
            written = number(usage, "cache_creation_input_tokens") or 0
            return prompt + (read or 0) + written, read or 0
        return prompt, number(usage.get("input_tokens_details"), "cached_tokens")
    return None, None


def _bad(source: str, where: str, field: str, rule: str, got: object = ...) -> ReplayLogError:
    """The error for a broken rule: ``source: line N: field: rule, got value``."""
    detail = rule if got is ... else f"{rule}, got {_show(got)}"
    return ReplayLogError(source, f"{where}: {field}" if field else where, detail)


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
