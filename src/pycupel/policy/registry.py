"""Every component a policy can name, with its options: the one source of truth.

The policy reader, the writer, the JSON Schema (:mod:`pycupel.policy.schema`), the ``show``
rendering and the builder all work from these declarations. Adding an option here adds it
everywhere at once; the builder (:mod:`pycupel.policy.build`) maps each declared option to the
component's constructor argument.

This module holds the declaration types (:class:`OptionDef`, :class:`ComponentDef`,
:class:`Category`, :class:`RecordDef`), the value types of nested parts and the policy's own
fields; each part kind is declared in its module and re-exported here: :data:`SCORERS` and
:data:`CURVES` (decay curves, :data:`STEP_WINDOW`) in :mod:`~pycupel.policy.scorer_defs`,
:data:`SLICERS` and the records :data:`QUOTA_ENTRY`, :data:`COUNT_ENTRY` in
:mod:`~pycupel.policy.slicer_defs`, :data:`PLACERS` in :mod:`~pycupel.policy.placer_defs`.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pycupel.model import ascii_fold

# The reader (_codec) and the schema generator import this module too: an import cycle by
# design, safe because both are only used at call time.
from pycupel.policy import _codec
from pycupel.policy import schema as _schema
from pycupel.policy._values import (
    INVALID,
    Boolean,
    Choice,
    Invalid,
    Problems,
    SchemaDefs,
    Text,
    ValueType,
    index_path,
    show,
    word_pattern,
)

__all__ = [
    "COUNT_ENTRY",
    "CURVES",
    "CURVE_DURATION",
    "MAX_NESTING_DEPTH",
    "PLACERS",
    "POLICY_FIELDS",
    "QUOTA_ENTRY",
    "SCORERS",
    "SLICERS",
    "STEP_WINDOW",
    "WEIGHT",
    "Category",
    "ComponentDef",
    "OptionDef",
    "PlacerName",
    "RecordDef",
    "suggest",
]

MAX_NESTING_DEPTH: Final = 16
"""Deepest allowed nesting of scorers/slicers inside each other (a policy is a tree; this
bounds the work and the recursion spent on hostile input)."""


Check = Callable[[Mapping[str, Any], str, Problems], None]
"""A cross-field rule: gets the already-valid option values and the path; records problems."""


@dataclass(frozen=True)
class OptionDef:
    """One option: its name, value type, whether it is required, and its default.

    ``default`` is the value used when the option is absent (``None`` where the absent option
    has its own meaning, explained in ``description``).
    """

    name: str
    type: ValueType
    description: str
    required: bool = False
    default: Any = None


@dataclass(frozen=True)
class ComponentDef:
    """One scorer/slicer/placer/curve type."""

    name: str
    """Canonical spelling, used when saving."""
    words: tuple[str, ...]
    """The words of the name, for matching other spellings (``("u", "shaped")``)."""
    description: str
    options: tuple[OptionDef, ...] = ()
    check: Check | None = None

    def option(self, name: str) -> OptionDef | None:
        """The option called ``name``, if this component has one."""
        for option in self.options:
            if option.name == name:
                return option
        return None

    @property
    def required_options(self) -> tuple[str, ...]:
        """Names of the options that must be given."""
        return tuple(option.name for option in self.options if option.required)


@dataclass(frozen=True)
class Category:
    """A family of components named by a ``type`` (scorers, slicers, placers, curves)."""

    label: str
    """``"scorer"``, ``"slicer"``, ``"placer"``, ``"curve"`` (used in messages)."""
    suffixes: tuple[str, ...]
    """Class-name suffixes accepted after the name (``GreedySlice``, ``RecencyScorer``)."""
    components: tuple[ComponentDef, ...]
    patterns: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "patterns",
            {c.name: word_pattern(c.words, self.suffixes) for c in self.components},
        )

    @property
    def names(self) -> tuple[str, ...]:
        """Canonical names, in declaration order."""
        return tuple(c.name for c in self.components)

    def get(self, name: str) -> ComponentDef:
        """The component with canonical name ``name`` (KeyError if none)."""
        for component in self.components:
            if component.name == name:
                return component
        raise KeyError(name)

    def find(self, spelling: str) -> ComponentDef | None:
        """The component ``spelling`` names (any accepted spelling), or None."""
        for component in self.components:
            if re.fullmatch(self.patterns[component.name], spelling):
                return component
        return None

    def unknown_message(self, spelling: str) -> str:
        """``unknown scorer 'recnecy' (did you mean 'recency'?)``."""
        squashed = re.sub(r"[-_\s]", "", ascii_fold(spelling))
        for suffix in self.suffixes:
            squashed = squashed.removesuffix(suffix)
        squashed_names = {re.sub(r"[-_]", "", c.name): c.name for c in self.components}
        close = difflib.get_close_matches(squashed, list(squashed_names), n=1, cutoff=0.6)
        if close:
            hint = f"did you mean {squashed_names[close[0]]!r}?"
        else:
            hint = f"expected one of: {', '.join(self.names)}"
        return f"unknown {self.label} {show(spelling)} ({hint})"


@dataclass(frozen=True)
class RecordDef:
    """A small record inside a list option (a quota entry, a step window)."""

    label: str
    cls: type
    fields: tuple[OptionDef, ...]
    check: Check | None = None

    def field_def(self, name: str) -> OptionDef | None:
        """The field called ``name``, if any."""
        for option in self.fields:
            if option.name == name:
                return option
        return None


def suggest(key: str, allowed: Sequence[str]) -> str:
    """``(did you mean 'weight'?)`` or ``(allowed: a, b)`` for an unknown key."""
    close = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    return f"allowed: {', '.join(allowed)}" if allowed else "this table takes no other keys"


class ScorerRef(ValueType):
    """A nested scorer spec (a table, a bare type name, or a :class:`ScorerSpec`).

    ``weighted`` scorers take a ``weight`` key (composite children); unweighted ones (the
    ``inner`` of ``scaled``) must not.
    """

    def __init__(self, *, weighted: bool) -> None:
        self.weighted = weighted

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> Any:
        return _codec.read_scorer(raw, path, problems, depth + 1, weighted=self.weighted)

    def dump(self, value: Any) -> Any:
        return _codec.dump_scorer(value, weighted=self.weighted)

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        return _schema.scorer_ref(defs, weighted=self.weighted)

    def describe(self, value: Any) -> str:
        return _codec.describe_component(value)


class ScorerList(ValueType):
    """A non-empty list of weighted scorer specs."""

    def __init__(self, *, max_items: int = 100) -> None:
        self.max_items = max_items
        self._item = ScorerRef(weighted=True)

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> Any:
        if isinstance(raw, str | bytes | Mapping) or not isinstance(raw, Sequence):
            return problems.bad(path, "must be a list of scorers", raw)
        if not raw:
            return problems.add(path, "must contain at least one scorer")
        if len(raw) > self.max_items:
            return problems.bad(path, f"must contain at most {self.max_items} scorers", raw)
        specs = [
            self._item.read(entry, index_path(path, i), problems, depth)
            for i, entry in enumerate(raw)
        ]
        if any(isinstance(spec, Invalid) for spec in specs):
            return INVALID
        total = 0.0
        for spec in specs:  # summed in order, as the composite scorer does
            total += spec.weight
        if not math.isfinite(total):
            return problems.add(path, "the sum of the weights must be finite")
        return tuple(specs)

    def dump(self, value: Any) -> Any:
        return [self._item.dump(spec) for spec in value]

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        return {
            "type": "array",
            "minItems": 1,
            "maxItems": self.max_items,
            "items": self._item.schema(defs),
        }

    def describe(self, value: Any) -> str:
        total = sum(spec.weight for spec in value)
        shares = ", ".join(
            f"{self._item.describe(spec)} {spec.weight / total:.1%}" for spec in value
        )
        return f"[{shares}]"


class SlicerRef(ValueType):
    """A nested slicer spec, optionally limited to some types (``allowed``)."""

    def __init__(
        self,
        *,
        allowed: tuple[str, ...] | None = None,
        def_name: str = "slicer",
        hint: str = "",
    ) -> None:
        self.allowed = allowed
        self.def_name = def_name
        self.hint = hint

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> Any:
        return _codec.read_slicer(
            raw, path, problems, depth + 1, allowed=self.allowed, hint=self.hint
        )

    def dump(self, value: Any) -> Any:
        return _codec.dump_component(value)

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        return _schema.slicer_ref(defs, self.def_name, self.allowed)

    def describe(self, value: Any) -> str:
        return _codec.describe_component(value)


class CurveRef(ValueType):
    """A decay curve spec."""

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> Any:
        return _codec.read_curve(raw, path, problems, depth)

    def dump(self, value: Any) -> Any:
        return _codec.dump_component(value)

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        return _schema.curve_ref(defs)

    def describe(self, value: Any) -> str:
        return _codec.describe_component(value)


class RecordList(ValueType):
    """A list of records (quota entries, count entries, step windows)."""

    def __init__(
        self, record: Callable[[], RecordDef], *, min_items: int = 0, max_items: int = 1000
    ) -> None:
        # A callable, because the record definitions are declared after this module's types.
        self._record = record
        self.min_items = min_items
        self.max_items = max_items

    @property
    def record(self) -> RecordDef:
        """The record definition of the entries."""
        return self._record()

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> Any:
        label = self.record.label
        if isinstance(raw, str | bytes | Mapping) or not isinstance(raw, Sequence):
            return problems.bad(path, f"must be a list of {label} tables", raw)
        if len(raw) < self.min_items:
            return problems.add(path, f"must contain at least {self.min_items} {label}(s)")
        if len(raw) > self.max_items:
            return problems.bad(path, f"must contain at most {self.max_items} entries", raw)
        records = [
            _codec.read_record(self.record, entry, index_path(path, i), problems)
            for i, entry in enumerate(raw)
        ]
        if any(isinstance(record, Invalid) for record in records):
            return INVALID
        return tuple(records)

    def dump(self, value: Any) -> Any:
        return [_codec.dump_record(self.record, record) for record in value]

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "array",
            "items": _schema.record_ref(defs, self.record),
            "maxItems": self.max_items,
        }
        if self.min_items:
            out["minItems"] = self.min_items
        return out

    def describe(self, value: Any) -> str:
        return "[" + "; ".join(_codec.describe_record(self.record, entry) for entry in value) + "]"


# The declarations of each part kind live in their own module; they build on the types above,
# so they are imported once those exist.
from pycupel.policy.placer_defs import PLACERS, PlacerName  # noqa: E402
from pycupel.policy.scorer_defs import (  # noqa: E402
    CURVE_DURATION,
    CURVES,
    SCORERS,
    STEP_WINDOW,
    WEIGHT,
)
from pycupel.policy.shrink_defs import ShrinkTable  # noqa: E402
from pycupel.policy.slicer_defs import COUNT_ENTRY, QUOTA_ENTRY, SLICERS  # noqa: E402

POLICY_FIELDS: Final = (
    OptionDef("name", Text(non_blank=True, max_length=200), "Policy name.", required=True),
    OptionDef("description", Text(max_length=10_000), "What the policy is for.", default=""),
    OptionDef(
        "scorers",
        ScorerList(),
        "The scorers; several are combined by weighted average.",
        required=True,
    ),
    OptionDef(
        "slicer",
        SlicerRef(),
        "How items are chosen within the budget (absent = greedy).",
        default=None,
    ),
    OptionDef("placer", PlacerName(), "The order of the chosen items.", default="chronological"),
    OptionDef("deduplicate", Boolean(), "Drop byte-identical duplicates.", default=True),
    OptionDef(
        "overflow_strategy",
        Choice({"throw": ("throw",), "truncate": ("truncate",), "proceed": ("proceed",)}),
        "When the selection exceeds target_tokens: throw, truncate or proceed.",
        default="throw",
    ),
    OptionDef(
        "shrink",
        ShrinkTable(),
        "Chat histories: keep older tool results as placeholders and long ones truncated "
        "instead of dropping them (absent = never shorten).",
        default=None,
    ),
)
"""The top-level keys of a policy file."""


SCHEMA_KEY: Final = "$schema"
"""An optional top-level key for editors (a schema URL); accepted and not stored."""
