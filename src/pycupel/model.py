"""The data model: what flows through the pipeline.

* :class:`ContextKind` / :class:`ContextSource` — extensible names compared by ASCII case folding.
* :class:`ContextItem` — one immutable candidate (a message, document, tool output, memory...).
* :class:`ContextBudget` — the validated token budget, and :func:`compute_effective_budget`,
  the budget the slicer actually receives.
* :class:`ScoredItem` — an item paired with its score.
* :class:`OverflowStrategy` — what to do when the selection exceeds ``target_tokens``.

Items compare and hash by identity: the specification tells items apart by reference (two
items with equal fields are still two candidates), so ``==`` on items is ``is``.
"""

from __future__ import annotations

import enum
import functools
import math
import os
import string
import sys
import warnings
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple, NoReturn, Self, TypeAlias

from pycupel._checks import check_bool, check_float, check_int, check_str
from pycupel.errors import (
    BudgetValidationError,
    InvalidValueError,
    ItemValidationError,
    KindNameWarning,
    PipelineConfigError,
)

__all__ = [
    "ContextBudget",
    "ContextItem",
    "ContextKind",
    "ContextSource",
    "KindLike",
    "OverflowStrategy",
    "ScoredItem",
    "SourceLike",
    "ascii_fold",
    "compute_effective_budget",
]

_ASCII_LOWER = MappingProxyType(str.maketrans(string.ascii_uppercase, string.ascii_lowercase))
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MICROSECOND = timedelta(microseconds=1)
_EMPTY_METADATA: Mapping[str, Any] = MappingProxyType({})


def ascii_fold(text: str) -> str:
    """Lower-case ASCII letters only (the spec's case folding; other characters unchanged)."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


class _Frozen:
    """Mixin: attributes are set once in ``__init__`` (via ``object.__setattr__``), then frozen."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable; cannot delete {name!r}")


# --------------------------------------------------------------------------- names


class _FoldedName(_Frozen):
    """A non-blank string name whose equality and hash use ASCII case folding.

    Names equal names of the same class only (``ContextKind("Memory") == ContextKind("memory")``,
    same hash); a plain ``str`` is never equal, so ``kind in {"Memory"}`` and
    ``kind == "Memory"`` are both False, consistently. Use ``kind == ContextKind.MEMORY`` or
    ``kind.key == "memory"``.
    """

    __slots__ = ("_key", "_value")
    _field: ClassVar[str] = "name"
    _well_known: ClassVar[tuple[str, ...]] = ()
    _well_known_keys: ClassVar[frozenset[str]] = frozenset()

    _key: str
    _value: str

    def __init__(self, value: str) -> None:
        self._set(value)
        if self._key not in self._well_known_keys:
            suggestion = _closest(self._well_known, self._key)
            if suggestion is not None:
                warnings.warn(
                    KindNameWarning(self._field, value, suggestion),
                    stacklevel=_outside_the_package(),
                )

    def _set(self, value: str) -> None:
        check_str(ItemValidationError, self._field, value, non_blank=True)
        object.__setattr__(self, "_value", value)
        object.__setattr__(self, "_key", ascii_fold(value))

    @classmethod
    def custom(cls, value: str) -> Self:
        """A custom name, meant as given: unlike the constructor, a near miss of a well-known
        name (``"Memo"`` beside ``Memory``) issues no :class:`~pycupel.errors.KindNameWarning`.

        Raises:
            ItemValidationError: ``value`` is not a non-blank string.
        """
        name = cls.__new__(cls)
        name._set(value)
        return name

    @classmethod
    def closest_well_known(cls, value: str) -> str | None:
        """The well-known name ``value`` is a near miss of (``"Document"`` for ``"Documnet"``),
        or None: for a well-known name itself (in any case) and for a name close to none.

        Close means a ``difflib`` similarity of at least 0.75 between the case-folded names
        (about one edit in a short name). The constructor warns for such names.
        """
        key = ascii_fold(value)
        if key in cls._well_known_keys:
            return None
        return _closest(cls._well_known, key)

    @property
    def value(self) -> str:
        """The name exactly as given."""
        return self._value

    @property
    def key(self) -> str:
        """The case-folded name used for comparisons and hashing."""
        return self._key

    def __eq__(self, other: object) -> bool:
        # Only a name of the same class compares equal. A plain str never does: "Memory" and
        # "memory" are different strings with different hashes, so no hash could agree with
        # a case-insensitive str equality (pathlib.PureWindowsPath draws the same line).
        # Compare with ContextKind("memory"), or test `kind.key == "memory"`.
        if type(other) is type(self):
            return self._key == other._key
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key)

    def __str__(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._value!r})"

    def __reduce__(self) -> tuple[object, ...]:
        # A copy or an unpickled name is the name it was: it never warns again.
        return (type(self).custom, (self._value,))


_NEAR_MISS_CUTOFF = 0.75
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


@functools.lru_cache(maxsize=4096)
def _closest(well_known: tuple[str, ...], key: str) -> str | None:
    """The well-known name whose folded form is closest to ``key`` (similarity >= 0.75)."""
    import difflib  # noqa: PLC0415 (only names that are not well-known reach this)

    folded = {ascii_fold(name): name for name in well_known}
    close = difflib.get_close_matches(key, list(folded), n=1, cutoff=_NEAR_MISS_CUTOFF)
    return folded[close[0]] if close else None


def _outside_the_package() -> int:
    """The ``stacklevel`` of a warning issued by this module's caller that points at the first
    frame outside the pycupel package (the user's line that named the kind)."""
    frame = sys._getframe(1)  # the frame that issues the warning
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level


class ContextKind(_FoldedName):
    """What an item is. Extensible: any non-blank name is valid; comparison with another
    ContextKind ignores ASCII case (a plain str is never equal: see ``key``).

    Well-known kinds: ``MESSAGE`` (the default), ``DOCUMENT``, ``TOOL_OUTPUT``, ``MEMORY``,
    ``SYSTEM_PROMPT``. A name that nearly is one of them (``"Documnet"``: see
    :meth:`closest_well_known`) is kept as a custom kind, as the specification allows, with a
    :class:`~pycupel.errors.KindNameWarning` naming the well-known one; :meth:`custom` builds
    a custom kind you mean without it.
    """

    __slots__ = ()
    _field = "kind"
    _well_known = ("Message", "Document", "ToolOutput", "Memory", "SystemPrompt")
    _well_known_keys = frozenset(map(ascii_fold, _well_known))

    MESSAGE: ClassVar[ContextKind]
    DOCUMENT: ClassVar[ContextKind]
    TOOL_OUTPUT: ClassVar[ContextKind]
    MEMORY: ClassVar[ContextKind]
    SYSTEM_PROMPT: ClassVar[ContextKind]

    @classmethod
    def of(cls, value: KindLike) -> ContextKind:
        """Return ``value`` if it already is a ContextKind, else build one from the string."""
        return value if isinstance(value, ContextKind) else cls(value)


class ContextSource(_FoldedName):
    """Where an item came from. Extensible; comparison with another ContextSource ignores
    ASCII case (a plain str is never equal: see ``key``).

    Well-known sources: ``CHAT`` (the default), ``TOOL``, ``RAG``. A near miss of one
    (``"Tol"``) is kept as a custom source with a :class:`~pycupel.errors.KindNameWarning`,
    as for kinds; :meth:`custom` builds one without it.
    """

    __slots__ = ()
    _field = "source"
    _well_known = ("Chat", "Tool", "Rag")
    _well_known_keys = frozenset(map(ascii_fold, _well_known))

    CHAT: ClassVar[ContextSource]
    TOOL: ClassVar[ContextSource]
    RAG: ClassVar[ContextSource]

    @classmethod
    def of(cls, value: SourceLike) -> ContextSource:
        """Return ``value`` if it already is a ContextSource, else build one from the string."""
        return value if isinstance(value, ContextSource) else cls(value)


ContextKind.MESSAGE = ContextKind("Message")
ContextKind.DOCUMENT = ContextKind("Document")
ContextKind.TOOL_OUTPUT = ContextKind("ToolOutput")
ContextKind.MEMORY = ContextKind("Memory")
ContextKind.SYSTEM_PROMPT = ContextKind("SystemPrompt")
ContextSource.CHAT = ContextSource("Chat")
ContextSource.TOOL = ContextSource("Tool")
ContextSource.RAG = ContextSource("Rag")

KindLike: TypeAlias = ContextKind | str
SourceLike: TypeAlias = ContextSource | str


# --------------------------------------------------------------------------- items


class ContextItem(_Frozen):
    """One candidate for the context window. Immutable; compared and hashed by identity.

    Args:
        content: the text; must be a non-empty string. Deduplication compares it byte-exactly.
        tokens: the caller's token count. Negative counts are allowed here; the pipeline
            excludes such items with reason ``NegativeTokens``.
        kind: what the item is (default ``Message``); a :class:`ContextKind` or a string.
        source: where it came from (default ``Chat``); a :class:`ContextSource` or a string.
        priority: optional importance; higher is more important (PriorityScorer).
        tags: descriptive tags (TagScorer, FrequencyScorer); any iterable of strings but a str.
        metadata: opaque key/value data, copied into a read-only mapping and never interpreted
            by the pipeline (except the ``cupel:`` keys read by the metadata scorers).
        timestamp: when the item was created; must be timezone-aware, stored as UTC.
        future_relevance_hint: caller-provided relevance signal (ReflexiveScorer).
        pinned: pinned items bypass scoring and slicing and are always included.
        original_tokens: the token count before any external summarisation (informational).
    """

    __slots__ = (
        "content",
        "future_relevance_hint",
        "kind",
        "metadata",
        "original_tokens",
        "pinned",
        "priority",
        "source",
        "tags",
        "timestamp",
        "timestamp_micros",
        "tokens",
    )

    content: str
    tokens: int
    kind: ContextKind
    source: ContextSource
    priority: int | None
    tags: tuple[str, ...]
    metadata: Mapping[str, Any]
    timestamp: datetime | None
    timestamp_micros: int | None
    """The timestamp as integer microseconds since the Unix epoch (UTC), or None."""
    future_relevance_hint: float | None
    pinned: bool
    original_tokens: int | None

    def __init__(
        self,
        content: str,
        *,
        tokens: int,
        kind: KindLike = ContextKind.MESSAGE,
        source: SourceLike = ContextSource.CHAT,
        priority: int | None = None,
        tags: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        timestamp: datetime | None = None,
        future_relevance_hint: float | None = None,
        pinned: bool = False,
        original_tokens: int | None = None,
    ) -> None:
        err = ItemValidationError
        check_str(err, "content", content)
        if not content:
            raise err("content", content, "must be a non-empty string")
        check_int(err, "tokens", tokens)
        if priority is not None:
            check_int(err, "priority", priority)
        tag_tuple = _check_tags(tags)
        metadata_view = _check_metadata(metadata)
        micros: int | None = None
        if timestamp is not None:
            timestamp, micros = _check_timestamp(timestamp)
        hint: float | None = None
        if future_relevance_hint is not None:
            # NaN and infinities are accepted: the scorers define their outcome (score 0.0).
            hint = check_float(err, "future_relevance_hint", future_relevance_hint, finite=False)
        check_bool(err, "pinned", pinned)
        if original_tokens is not None:
            check_int(err, "original_tokens", original_tokens, minimum=0)

        setter = object.__setattr__
        setter(self, "content", content)
        setter(self, "tokens", tokens)
        setter(self, "kind", ContextKind.of(kind))
        setter(self, "source", ContextSource.of(source))
        setter(self, "priority", priority)
        setter(self, "tags", tag_tuple)
        setter(self, "metadata", metadata_view)
        setter(self, "timestamp", timestamp)
        setter(self, "timestamp_micros", micros)
        setter(self, "future_relevance_hint", hint)
        setter(self, "pinned", pinned)
        setter(self, "original_tokens", original_tokens)

    @classmethod
    def _prevalidated(
        cls,
        content: str,
        *,
        tokens: int,
        kind: ContextKind,
        source: ContextSource,
        tags: tuple[str, ...],
        metadata: Mapping[str, Any],
        timestamp: datetime,
        timestamp_micros: int,
        pinned: bool,
    ) -> ContextItem:
        """An item from values its caller has already checked, without checking them again.

        For hot paths that build many items from values that are valid by construction (the
        chat adapters: validated messages, counted tokens, UTC timestamps). The caller
        guarantees what ``__init__`` would check: ``content`` a non-empty str, ``tokens`` an
        int, ``tags`` a tuple of str, ``metadata`` a read-only mapping with str keys,
        ``timestamp`` in UTC with ``timestamp_micros`` its microseconds since the epoch.
        """
        item = object.__new__(cls)
        # The slots' own setters: a third of the cost of object.__setattr__ by name.
        _set_content(item, content)
        _set_tokens(item, tokens)
        _set_kind(item, kind)
        _set_source(item, source)
        _set_priority(item, None)
        _set_tags(item, tags)
        _set_metadata(item, metadata)
        _set_timestamp(item, timestamp)
        _set_timestamp_micros(item, timestamp_micros)
        _set_future_relevance_hint(item, None)
        _set_pinned(item, pinned)
        _set_original_tokens(item, None)
        return item

    def replace(self, **changes: Any) -> ContextItem:
        """Return a new, validated item with the given fields changed (a different identity)."""
        fields: dict[str, Any] = {
            "tokens": self.tokens,
            "kind": self.kind,
            "source": self.source,
            "priority": self.priority,
            "tags": self.tags,
            "metadata": self.metadata,
            "timestamp": self.timestamp,
            "future_relevance_hint": self.future_relevance_hint,
            "pinned": self.pinned,
            "original_tokens": self.original_tokens,
        }
        content = changes.pop("content", self.content)
        unknown = set(changes) - set(fields)
        if unknown:
            name = sorted(unknown)[0]
            raise ItemValidationError(name, changes[name], "is not a ContextItem field")
        fields.update(changes)
        return ContextItem(content, **fields)

    def __repr__(self) -> str:
        parts = [repr(_clip(self.content)), f"tokens={self.tokens}"]
        if self.kind != ContextKind.MESSAGE:
            parts.append(f"kind={self.kind.value!r}")
        if self.source != ContextSource.CHAT:
            parts.append(f"source={self.source.value!r}")
        if self.priority is not None:
            parts.append(f"priority={self.priority}")
        if self.tags:
            parts.append(f"tags={self.tags!r}")
        if self.timestamp is not None:
            parts.append(f"timestamp={self.timestamp.isoformat()}")
        if self.future_relevance_hint is not None:
            parts.append(f"future_relevance_hint={self.future_relevance_hint!r}")
        if self.pinned:
            parts.append("pinned=True")
        return f"ContextItem({', '.join(parts)})"

    def __reduce__(self) -> tuple[object, ...]:
        # Pickling/copying builds a new item through the validating constructor.
        return (_rebuild_item, (self.content, self._kwargs()))

    def _kwargs(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "kind": self.kind,
            "source": self.source,
            "priority": self.priority,
            "tags": self.tags,
            "metadata": dict(self.metadata),
            "timestamp": self.timestamp,
            "future_relevance_hint": self.future_relevance_hint,
            "pinned": self.pinned,
            "original_tokens": self.original_tokens,
        }


(
    _set_content,
    _set_tokens,
    _set_kind,
    _set_source,
    _set_priority,
    _set_tags,
    _set_metadata,
    _set_timestamp,
    _set_timestamp_micros,
    _set_future_relevance_hint,
    _set_pinned,
    _set_original_tokens,
) = (
    getattr(ContextItem, name).__set__
    for name in (
        "content",
        "tokens",
        "kind",
        "source",
        "priority",
        "tags",
        "metadata",
        "timestamp",
        "timestamp_micros",
        "future_relevance_hint",
        "pinned",
        "original_tokens",
    )
)


def _rebuild_item(content: str, kwargs: dict[str, Any]) -> ContextItem:
    return ContextItem(content, **kwargs)


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_tags(tags: object) -> tuple[str, ...]:
    if isinstance(tags, str | bytes) or not isinstance(tags, Iterable):
        raise ItemValidationError("tags", tags, "must be an iterable of strings (not a string)")
    result = tuple(tags)
    for index, tag in enumerate(result):
        if not isinstance(tag, str):
            raise ItemValidationError(f"tags[{index}]", tag, "must be a string")
    return result


def _check_metadata(metadata: object) -> Mapping[str, Any]:
    if metadata is None:
        return _EMPTY_METADATA
    if not isinstance(metadata, Mapping):
        raise ItemValidationError("metadata", metadata, "must be a mapping of str to any value")
    copied = dict(metadata)
    if not copied:
        return _EMPTY_METADATA
    for key in copied:
        if not isinstance(key, str):
            raise ItemValidationError("metadata", key, "keys must be strings")
    return MappingProxyType(copied)


def utc_micros(timestamp: datetime) -> tuple[datetime, int]:
    """An aware ``timestamp`` in UTC and as integer microseconds since the Unix epoch."""
    utc = timestamp.astimezone(UTC)
    return utc, (utc - _EPOCH) // _ONE_MICROSECOND


def _check_timestamp(timestamp: object) -> tuple[datetime, int]:
    if not isinstance(timestamp, datetime):
        raise ItemValidationError("timestamp", timestamp, "must be a datetime")
    try:
        offset = None if timestamp.tzinfo is None else timestamp.utcoffset()
        if offset is None:
            raise ItemValidationError(
                "timestamp", timestamp, "must be timezone-aware (naive datetimes are ambiguous)"
            )
        return utc_micros(timestamp)
    except OverflowError as exc:
        raise ItemValidationError(
            "timestamp", timestamp, "must be representable in UTC (within year 1..9999)"
        ) from exc
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ItemValidationError):
            raise
        # A custom tzinfo whose utcoffset() returns a non-timedelta or a day or more.
        raise ItemValidationError(
            "timestamp",
            timestamp,
            f"must have a tzinfo whose utcoffset() is a timedelta under 24 hours ({exc})",
        ) from exc


# --------------------------------------------------------------------------- budget


class ContextBudget(_Frozen):
    """The token budget. Validated at construction: an invalid budget cannot exist.

    Args:
        max_tokens: hard ceiling, the model's context window (>= 0).
        target_tokens: soft goal the slicer aims for (0 <= target <= max).
        output_reserve: tokens kept free for the model's answer (0 <= reserve <= max).
        reserved_slots: per-kind reservations (each >= 0), subtracted from the slicing budget.
        estimation_safety_margin_percent: 0..100; shrinks the slicing budget by that percentage
            to absorb token-estimation error.
    """

    __slots__ = (
        "estimation_safety_margin_percent",
        "max_tokens",
        "output_reserve",
        "reserved_slots",
        "target_tokens",
    )

    max_tokens: int
    target_tokens: int
    output_reserve: int
    reserved_slots: Mapping[ContextKind, int]
    estimation_safety_margin_percent: float

    def __init__(
        self,
        *,
        max_tokens: int,
        target_tokens: int,
        output_reserve: int = 0,
        reserved_slots: Mapping[KindLike, int] | None = None,
        estimation_safety_margin_percent: float = 0.0,
    ) -> None:
        err = BudgetValidationError
        check_int(err, "max_tokens", max_tokens, minimum=0)
        check_int(err, "target_tokens", target_tokens, minimum=0)
        if target_tokens > max_tokens:
            raise err("target_tokens", target_tokens, f"must be <= max_tokens ({max_tokens})")
        check_int(err, "output_reserve", output_reserve, minimum=0)
        if output_reserve > max_tokens:
            raise err("output_reserve", output_reserve, f"must be <= max_tokens ({max_tokens})")
        margin = check_float(
            err,
            "estimation_safety_margin_percent",
            estimation_safety_margin_percent,
            minimum=0.0,
            maximum=100.0,
        )
        slots = _check_reserved_slots(reserved_slots)
        setter = object.__setattr__
        setter(self, "max_tokens", max_tokens)
        setter(self, "target_tokens", target_tokens)
        setter(self, "output_reserve", output_reserve)
        setter(self, "reserved_slots", slots)
        setter(self, "estimation_safety_margin_percent", margin)

    @property
    def reserved_tokens(self) -> int:
        """Sum of all ``reserved_slots`` values."""
        return sum(self.reserved_slots.values())

    def effective(self, pinned_tokens: int) -> ContextBudget:
        """The budget handed to the slicer; see :func:`compute_effective_budget`."""
        return compute_effective_budget(self, pinned_tokens)

    def replace(self, **changes: Any) -> ContextBudget:
        """Return a new, validated budget with the given fields changed."""
        fields: dict[str, Any] = {
            "max_tokens": self.max_tokens,
            "target_tokens": self.target_tokens,
            "output_reserve": self.output_reserve,
            "reserved_slots": self.reserved_slots,
            "estimation_safety_margin_percent": self.estimation_safety_margin_percent,
        }
        unknown = set(changes) - set(fields)
        if unknown:
            name = sorted(unknown)[0]
            raise BudgetValidationError(name, changes[name], "is not a ContextBudget field")
        fields.update(changes)
        return ContextBudget(**fields)

    def _identity(self) -> tuple[object, ...]:
        slots = tuple(sorted((kind.key, count) for kind, count in self.reserved_slots.items()))
        return (
            self.max_tokens,
            self.target_tokens,
            self.output_reserve,
            slots,
            self.estimation_safety_margin_percent,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContextBudget):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:
        parts = [f"max_tokens={self.max_tokens}", f"target_tokens={self.target_tokens}"]
        if self.output_reserve:
            parts.append(f"output_reserve={self.output_reserve}")
        if self.reserved_slots:
            slots = {kind.value: count for kind, count in self.reserved_slots.items()}
            parts.append(f"reserved_slots={slots!r}")
        if self.estimation_safety_margin_percent:
            parts.append(
                f"estimation_safety_margin_percent={self.estimation_safety_margin_percent!r}"
            )
        return f"ContextBudget({', '.join(parts)})"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_budget, (self._kwargs(),))

    def _kwargs(self) -> dict[str, Any]:
        return {
            "max_tokens": self.max_tokens,
            "target_tokens": self.target_tokens,
            "output_reserve": self.output_reserve,
            "reserved_slots": {kind.value: n for kind, n in self.reserved_slots.items()},
            "estimation_safety_margin_percent": self.estimation_safety_margin_percent,
        }


def _rebuild_budget(kwargs: dict[str, Any]) -> ContextBudget:
    return ContextBudget(**kwargs)


def _check_reserved_slots(reserved: object) -> Mapping[ContextKind, int]:
    if reserved is None:
        return MappingProxyType({})
    if not isinstance(reserved, Mapping):
        raise BudgetValidationError(
            "reserved_slots", reserved, "must be a mapping of kind to integer"
        )
    slots: dict[ContextKind, int] = {}
    for raw_kind, count in reserved.items():
        try:
            kind = ContextKind.of(raw_kind)
        except InvalidValueError as exc:
            raise BudgetValidationError("reserved_slots", raw_kind, exc.rule) from exc
        field = f"reserved_slots[{kind.value!r}]"
        check_int(BudgetValidationError, field, count, minimum=0)
        if kind in slots:
            raise BudgetValidationError(
                "reserved_slots", raw_kind, "must not name the same kind twice (case-insensitive)"
            )
        slots[kind] = count
    return MappingProxyType(slots)


def compute_effective_budget(budget: ContextBudget, pinned_tokens: int) -> ContextBudget:
    """The budget the slicer receives, after pinned items, output reserve, reserved slots and
    the safety margin are taken out.

    ``effective_target`` is clamped to ``effective_max``; the margin is applied last, as a
    multiplication floored to whole tokens. The result carries only ``max_tokens`` and
    ``target_tokens``: the other fields are already folded into them.
    """
    if not isinstance(budget, ContextBudget):
        raise BudgetValidationError("budget", budget, "must be a ContextBudget")
    check_int(BudgetValidationError, "pinned_tokens", pinned_tokens, minimum=0)
    return effective_budget_of(budget, pinned_tokens)


def effective_budget_of(budget: ContextBudget, pinned_tokens: int) -> ContextBudget:
    """:func:`compute_effective_budget` for arguments already known valid (a pipeline run's
    own budget and the pinned tokens it summed), without checking them again."""
    effective_max, effective_target = effective_limits(budget, pinned_tokens)
    # Valid by construction (0 <= target <= max, no reserve, slots or margin): built through
    # the slots' own setters, as every run computes one.
    effective = object.__new__(ContextBudget)
    _set_max_tokens(effective, effective_max)
    _set_target_tokens(effective, effective_target)
    _set_output_reserve(effective, 0)
    _set_reserved_slots(effective, _NO_SLOTS)
    _set_margin(effective, 0.0)
    return effective


def effective_limits(budget: ContextBudget, pinned_tokens: int) -> tuple[int, int]:
    """``(max_tokens, target_tokens)`` of :func:`effective_budget_of`, as two integers (for a
    run that needs no budget object)."""
    reserved = budget.reserved_tokens if budget.reserved_slots else 0
    effective_max = max(0, budget.max_tokens - budget.output_reserve - pinned_tokens - reserved)
    effective_target = max(0, budget.target_tokens - pinned_tokens - reserved)
    effective_target = min(effective_target, effective_max)
    margin = budget.estimation_safety_margin_percent
    if margin > 0:
        multiplier = 1.0 - margin / 100.0
        effective_max = math.floor(effective_max * multiplier)
        effective_target = math.floor(effective_target * multiplier)
        effective_target = min(effective_target, effective_max)
    return effective_max, effective_target


_NO_SLOTS: Mapping[ContextKind, int] = MappingProxyType({})
(
    _set_max_tokens,
    _set_target_tokens,
    _set_output_reserve,
    _set_reserved_slots,
    _set_margin,
) = (
    getattr(ContextBudget, name).__set__
    for name in (
        "max_tokens",
        "target_tokens",
        "output_reserve",
        "reserved_slots",
        "estimation_safety_margin_percent",
    )
)


# --------------------------------------------------------------------------- scored items


class ScoredItem(NamedTuple):
    """An item with its relevance score (a float64, conventionally in [0, 1])."""

    item: ContextItem
    score: float


class OverflowStrategy(enum.StrEnum):
    """What the pipeline does when the selection exceeds ``target_tokens``."""

    THROW = "throw"
    """Raise :class:`~pycupel.errors.BudgetOverflowError` (the default)."""
    TRUNCATE = "truncate"
    """Drop non-pinned items from the lowest-scored end until the selection fits."""
    PROCEED = "proceed"
    """Keep everything and report an overflow event."""

    @classmethod
    def parse(cls, value: str | OverflowStrategy) -> Self:
        """Parse a strategy name case-insensitively (``"Truncate"`` -> ``TRUNCATE``)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            folded = ascii_fold(value.strip())
            for member in cls:
                if member.value == folded:
                    return member
        choices = ", ".join(m.value for m in cls)
        raise PipelineConfigError("overflow_strategy", value, f"must be one of: {choices}")
