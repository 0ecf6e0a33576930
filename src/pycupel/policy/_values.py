"""Value types of the policy format: how one option is read, checked, written and described.

Every option of every component is declared with one of these types (see
:mod:`pycupel.policy.registry`). The same declaration drives four things, so they cannot drift
apart: reading a value (from a file or from Python), the problems reported for a bad value,
writing the canonical form back out, and the JSON Schema of the format.

Reading never stops at the first problem: a bad value adds a :class:`PolicyProblem` (with its
path, e.g. ``scorers[2].weight``) to the shared :class:`Problems` list and yields
:data:`INVALID`, and the caller carries on with the next value.
"""

from __future__ import annotations

import math
import re
import reprlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from types import MappingProxyType
from typing import Any, Final, TypeVar

from pycupel.errors import PolicyProblem
from pycupel.model import ascii_fold

__all__ = [
    "INT64_MAX",
    "INVALID",
    "Boolean",
    "Choice",
    "Duration",
    "FrozenMap",
    "Integer",
    "Invalid",
    "Number",
    "PositiveIntOrUnlimited",
    "Problems",
    "SchemaDefs",
    "Text",
    "Timestamp",
    "ValueType",
    "WeightMap",
    "format_duration",
    "index_path",
    "key_path",
    "number_text",
    "show",
    "word_pattern",
]

INT64_MAX: Final = 2**63 - 1
"""Largest integer accepted anywhere in a policy (TOML integers are 64-bit)."""

_V = TypeVar("_V")

SchemaDefs = dict[str, dict[str, Any]]
"""The ``$defs`` section of a schema being generated (name -> sub-schema)."""


class Invalid:
    """Type of :data:`INVALID`, the marker a reader returns when the value had a problem
    (already recorded). Test with ``isinstance(value, Invalid)``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "INVALID"


INVALID: Final = Invalid()


class Problems:
    """The problems found so far while reading one policy (shared by every reader)."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[PolicyProblem] = []

    def add(self, path: str, message: str) -> Invalid:
        """Record a problem; returns :data:`INVALID` so readers can ``return problems.add(...)``."""
        self.items.append(PolicyProblem(path, message))
        return INVALID

    def bad(self, path: str, rule: str, value: object) -> Invalid:
        """Record ``rule`` broken by ``value``: ``path: rule, got value``."""
        return self.add(path, f"{rule}, got {show(value)}")

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)


# --------------------------------------------------------------------------- text helpers

_REPR = reprlib.Repr()
_REPR.maxstring = 60
_REPR.maxother = 60
_REPR.maxlevel = 3
_REPR.maxdict = 4
_REPR.maxlist = 4


def show(value: object) -> str:
    """A short rendering of a rejected value; safe for huge or deeply nested input."""
    if isinstance(value, bool) or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if isinstance(value, float):
        return number_text(value)
    if isinstance(value, timedelta | date):
        return str(value)
    if isinstance(value, int):
        text = _REPR.repr(value)
        return text if len(text) <= 40 else f"{text[:12]}...({len(text)} digits)"
    return _REPR.repr(value)


def number_text(value: float) -> str:
    """``120`` for ``120.0``, ``0.25`` for ``0.25``, ``nan``/``inf`` as such."""
    if math.isfinite(value) and value == int(value) and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def key_path(path: str, key: str) -> str:
    """``path.key`` (or ``key`` at the top level); odd keys are quoted."""
    part = key if re.fullmatch(r"[A-Za-z0-9_$-]+", key) else _REPR.repr(key)
    return f"{path}.{part}" if path else part


def index_path(path: str, index: int) -> str:
    """``path[index]``."""
    return f"{path}[{index}]"


def word_pattern(words: tuple[str, ...], suffixes: tuple[str, ...] = ()) -> str:
    """A regular expression matching ``words`` in any ASCII case, with an optional ``-``/``_``
    between words and an optional trailing suffix word.

    ``("u", "shaped")`` with suffix ``"placer"`` matches ``u-shaped``, ``u_shaped``,
    ``UShaped``, ``ushaped`` and ``UShapedPlacer``. The pattern is the single definition of the
    accepted spellings: the reader matches names with it and the JSON Schema embeds it, so a
    name is accepted by one exactly when it is accepted by the other. (It only uses syntax
    shared by Python's ``re`` and ECMA-262, the regex dialect of JSON Schema.)
    """

    def caseless(word: str) -> str:
        return "".join(
            f"[{ch.upper()}{ch.lower()}]" if ch.isalpha() else re.escape(ch) for ch in word
        )

    body = "[-_]?".join(caseless(word) for word in words)
    if suffixes:
        tails = "|".join(caseless(suffix) for suffix in suffixes)
        body += f"(?:[-_]?(?:{tails}))?"
    return f"^{body}$"


# --------------------------------------------------------------------------- frozen mapping


class FrozenMap(Mapping[str, _V]):
    """An immutable, hashable mapping with string keys (insertion order kept).

    Used for option values so that the specs holding them stay hashable and cannot be changed.
    """

    __slots__ = ("_data", "_hash")

    _data: dict[str, _V]
    _hash: int | None

    def __init__(self, data: Mapping[str, _V] | None = None) -> None:
        object.__setattr__(self, "_data", dict(data) if data else {})
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("FrozenMap is immutable")

    def __getitem__(self, key: str) -> _V:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash(frozenset(self._data.items()))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._data == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (FrozenMap, (self._data,))


# --------------------------------------------------------------------------- value types


class ValueType(ABC):
    """How one option value is read, written, described and schematised."""

    @abstractmethod
    def read(self, raw: object, path: str, problems: Problems, depth: int) -> Any:
        """The checked, normalised value of ``raw``, or :data:`INVALID` after recording why.

        ``depth`` is the current component nesting depth (only nested specs use it).
        """

    @abstractmethod
    def dump(self, value: Any) -> Any:
        """The canonical file form of an already normalised value (JSON and TOML safe)."""

    @abstractmethod
    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        """The JSON Schema fragment accepting what :meth:`read` accepts (as far as JSON Schema
        can say it). Shared sub-schemas are added to ``defs`` and referenced with ``$ref``."""

    def describe(self, value: Any) -> str:
        """Human-readable text for the value (used by ``pycupel policy show``)."""
        dumped = self.dump(value)
        return number_text(dumped) if isinstance(dumped, float) else str(dumped)


def _is_number(raw: object) -> bool:
    return isinstance(raw, int | float) and not isinstance(raw, bool)


class Number(ValueType):
    """A finite real number (ints are accepted and stored as float)."""

    def __init__(
        self,
        *,
        minimum: float | None = None,
        exclusive_minimum: float | None = None,
        maximum: float | None = None,
    ) -> None:
        self.minimum = minimum
        self.exclusive_minimum = exclusive_minimum
        self.maximum = maximum

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> float | Invalid:
        if not _is_number(raw):
            return problems.bad(path, "must be a number", raw)
        assert isinstance(raw, int | float)
        try:
            number = float(raw)
        except OverflowError:
            return problems.bad(path, "must be a finite number", raw)
        if not math.isfinite(number):
            return problems.bad(path, "must be a finite number", raw)
        if self.exclusive_minimum is not None and not number > self.exclusive_minimum:
            return problems.bad(path, f"must be > {number_text(self.exclusive_minimum)}", raw)
        if self.minimum is not None and number < self.minimum:
            return problems.bad(path, f"must be >= {number_text(self.minimum)}", raw)
        if self.maximum is not None and number > self.maximum:
            return problems.bad(path, f"must be <= {number_text(self.maximum)}", raw)
        return number

    def dump(self, value: Any) -> Any:
        return float(value)

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "number"}
        if self.exclusive_minimum is not None:
            out["exclusiveMinimum"] = self.exclusive_minimum
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out


class Integer(ValueType):
    """A whole number (a float such as ``1.0`` is refused) within 64-bit range."""

    def __init__(self, *, minimum: int | None = None, maximum: int = INT64_MAX) -> None:
        self.minimum = minimum
        self.maximum = maximum

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> int | Invalid:
        if isinstance(raw, bool) or not isinstance(raw, int):
            return problems.bad(path, "must be an integer", raw)
        if self.minimum is not None and raw < self.minimum:
            return problems.bad(path, f"must be >= {self.minimum}", raw)
        if raw > self.maximum:
            return problems.bad(path, f"must be <= {self.maximum}", raw)
        return raw

    def dump(self, value: Any) -> Any:
        return int(value)

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "integer"}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        out["maximum"] = self.maximum
        return out


class PositiveIntOrUnlimited(ValueType):
    """An integer >= 1, or the word ``unlimited`` (any case; stored as ``"unlimited"``)."""

    _WORD: Final = "unlimited"

    def __init__(self) -> None:
        self._pattern = word_pattern((self._WORD,))
        self._integer = Integer(minimum=1)

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> int | str | Invalid:
        if isinstance(raw, str):
            if re.fullmatch(self._pattern, raw):
                return self._WORD
            return problems.bad(path, "must be an integer >= 1 or 'unlimited'", raw)
        value: int | Invalid = self._integer.read(raw, path, problems, depth)
        return value

    def dump(self, value: Any) -> Any:
        return value if isinstance(value, str) else int(value)

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        return {"anyOf": [self._integer.schema(defs), {"type": "string", "pattern": self._pattern}]}


class Boolean(ValueType):
    """``true`` or ``false``."""

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> bool | Invalid:
        if not isinstance(raw, bool):
            return problems.bad(path, "must be a boolean (true or false)", raw)
        return raw

    def dump(self, value: Any) -> Any:
        return bool(value)

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        return {"type": "boolean"}

    def describe(self, value: Any) -> str:
        return "yes" if value else "no"


class Text(ValueType):
    """A string; optionally not empty/whitespace-only; at most ``max_length`` characters."""

    def __init__(self, *, non_blank: bool = False, max_length: int = 10_000) -> None:
        self.non_blank = non_blank
        self.max_length = max_length

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> str | Invalid:
        if not isinstance(raw, str):
            return problems.bad(path, "must be a string", raw)
        if self.non_blank and not raw.strip():
            return problems.bad(path, "must not be empty or whitespace-only", raw)
        if len(raw) > self.max_length:
            return problems.bad(path, f"must be at most {self.max_length} characters", raw)
        return raw

    def dump(self, value: Any) -> Any:
        return str(value)

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "string", "maxLength": self.max_length}
        if self.non_blank:
            out["pattern"] = r"\S"
        return out


class Choice(ValueType):
    """One of a few words, matched case-insensitively (``-``/``_`` between words optional);
    stored and written in the canonical spelling."""

    def __init__(self, choices: Mapping[str, tuple[str, ...]]) -> None:
        # canonical spelling -> the words it is made of
        self.choices = dict(choices)
        self._patterns = {name: word_pattern(words) for name, words in self.choices.items()}

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> str | Invalid:
        if isinstance(raw, str):
            for name, pattern in self._patterns.items():
                if re.fullmatch(pattern, raw):
                    return name
        return problems.bad(path, f"must be one of: {', '.join(self.choices)}", raw)

    def dump(self, value: Any) -> Any:
        return str(value)

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        return {
            "type": "string",
            "anyOf": [{"pattern": pattern} for pattern in self._patterns.values()],
        }


class WeightMap(ValueType):
    """A table of name -> weight (a finite number >= 0).

    With ``fold_keys`` (kind names) two keys differing only in ASCII case are a conflict,
    because the component compares them case-insensitively.
    """

    def __init__(
        self,
        *,
        key_label: str,
        fold_keys: bool,
        non_blank_keys: bool,
        finite_sum: bool,
        max_entries: int = 10_000,
    ) -> None:
        self.key_label = key_label
        self.fold_keys = fold_keys
        self.non_blank_keys = non_blank_keys
        self.finite_sum = finite_sum
        self.max_entries = max_entries
        self._weight = Number(minimum=0.0)

    def read(
        self, raw: object, path: str, problems: Problems, depth: int
    ) -> FrozenMap[float] | Invalid:
        if not isinstance(raw, Mapping):
            return problems.bad(path, f"must be a table of {self.key_label} -> weight", raw)
        if len(raw) > self.max_entries:
            return problems.bad(path, f"must have at most {self.max_entries} entries", raw)
        result: dict[str, float] = {}
        seen: dict[str, str] = {}
        ok = True
        for key, value in raw.items():
            if not isinstance(key, str) or (self.non_blank_keys and not key.strip()):
                rule = "non-blank strings" if self.non_blank_keys else "strings"
                problems.bad(path, f"{self.key_label} names must be {rule}", key)
                ok = False
                continue
            entry_path = key_path(path, key)
            folded = ascii_fold(key) if self.fold_keys else key
            if folded in seen:
                problems.add(
                    entry_path,
                    f"{self.key_label} {key!r} is already given as {seen[folded]!r} "
                    "(names are compared case-insensitively)",
                )
                ok = False
                continue
            seen[folded] = key
            weight = self._weight.read(value, entry_path, problems, depth)
            if isinstance(weight, Invalid):
                ok = False
                continue
            result[key] = weight
        if not ok:
            return INVALID
        if self.finite_sum:
            total = 0.0
            for weight in result.values():  # summed in order, as the scorer does
                total += weight
            if not math.isfinite(total):
                return problems.add(path, "the sum of the weights must be finite")
        return FrozenMap(result)

    def dump(self, value: Any) -> Any:
        return {key: float(weight) for key, weight in value.items()}

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "object",
            "additionalProperties": self._weight.schema(defs),
            "maxProperties": self.max_entries,
        }
        if self.non_blank_keys:
            out["propertyNames"] = {"pattern": r"\S"}
        return out

    def describe(self, value: Any) -> str:
        return "{" + ", ".join(f"{key}={number_text(w)}" for key, w in value.items()) + "}"


# --------------------------------------------------------------------------- durations

_UNIT_MICROS: Final = MappingProxyType(
    {
        "d": 86_400_000_000,
        "h": 3_600_000_000,
        "m": 60_000_000,
        "s": 1_000_000,
        "ms": 1_000,
    }
)
DURATION_PATTERN: Final = r"^(?:[0-9]+(?:\.[0-9]+)?(?:ms|d|h|m|s))+$"
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|d|h|m|s)")
_MAX_DURATION_MICROS: Final = timedelta.max // timedelta(microseconds=1)


class Duration(ValueType):
    """A positive length of time: a number of seconds, or a string of ``<number><unit>``
    parts with units ``d``, ``h``, ``m``, ``s``, ``ms`` (``"24h"``, ``"1h30m"``, ``"0.5s"``).

    It must be a whole number of microseconds (Python's time resolution) and is written back
    in the string form (``"1d"``, ``"1h30m"``, ``"0.25s"``).
    """

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> timedelta | Invalid:
        rule = "must be a positive duration: seconds, or a string like '24h', '1h30m', '0.5s'"
        micros: Decimal
        if isinstance(raw, timedelta):
            micros = Decimal(raw // timedelta(microseconds=1))
        elif _is_number(raw):
            assert isinstance(raw, int | float)
            if isinstance(raw, float) and not math.isfinite(raw):
                return problems.bad(path, rule, raw)
            try:
                micros = Decimal(repr(raw) if isinstance(raw, float) else raw) * 1_000_000
            except (InvalidOperation, ValueError):
                return problems.bad(path, rule, raw)
        elif isinstance(raw, str) and len(raw) <= 200 and re.fullmatch(DURATION_PATTERN, raw):
            micros = Decimal(0)
            for amount, unit in _DURATION_PART.findall(raw):
                micros += Decimal(amount) * _UNIT_MICROS[unit]
        else:
            return problems.bad(path, rule, raw)
        if micros <= 0:
            return problems.bad(path, "must be > 0", raw)
        if micros != micros.to_integral_value():
            return problems.bad(path, "must be a whole number of microseconds", raw)
        if micros > _MAX_DURATION_MICROS:
            return problems.bad(path, "must be at most 999999999 days", raw)
        return timedelta(microseconds=int(micros))

    def dump(self, value: Any) -> Any:
        return format_duration(value)

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        return {
            "anyOf": [
                {"type": "number", "exclusiveMinimum": 0},
                {"type": "string", "pattern": DURATION_PATTERN, "maxLength": 200},
            ]
        }


def format_duration(value: timedelta) -> str:
    """The canonical text of a duration: ``"1d"``, ``"1h30m"``, ``"0.25s"``, ``"2d3h4m5.5s"``."""
    remaining = value // timedelta(microseconds=1)
    parts: list[str] = []
    for unit in ("d", "h", "m"):
        size = _UNIT_MICROS[unit]
        count, remaining = divmod(remaining, size)
        if count:
            parts.append(f"{count}{unit}")
    if remaining or not parts:
        seconds = (Decimal(remaining) / 1_000_000).normalize()
        parts.append(f"{seconds:f}s")
    return "".join(parts)


# --------------------------------------------------------------------------- timestamps


class Timestamp(ValueType):
    """A point in time with a UTC offset: an RFC 3339 string (``2025-01-01T12:00:00Z``) or a
    TOML offset date-time. Stored in UTC; written as an RFC 3339 string ending in ``Z``."""

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> datetime | Invalid:
        rule = "must be a date-time with a UTC offset, like '2025-01-01T12:00:00Z'"
        when: datetime
        if isinstance(raw, datetime):
            when = raw
        elif isinstance(raw, date):
            return problems.bad(path, rule, raw)
        elif isinstance(raw, str) and len(raw) <= 100:
            try:
                when = datetime.fromisoformat(raw)
            except ValueError:
                return problems.bad(path, rule, raw)
        else:
            return problems.bad(path, rule, raw)
        if when.tzinfo is None or when.utcoffset() is None:
            return problems.bad(path, rule, raw)
        try:
            return when.astimezone(UTC)
        except OverflowError:
            return problems.bad(path, "must be representable in UTC", raw)

    def dump(self, value: Any) -> Any:
        text: str = value.isoformat()
        return text.removesuffix("+00:00") + "Z" if text.endswith("+00:00") else text

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        return {"type": "string", "format": "date-time", "maxLength": 100}
