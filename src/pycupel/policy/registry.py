"""Every component a policy can name, with its options: the one source of truth.

The policy reader, the writer, the JSON Schema (:mod:`pycupel.policy.schema`), the ``show``
rendering and the builder all work from these declarations. Adding an option here adds it
everywhere at once; the builder (:mod:`pycupel.policy.build`) maps each declared option to the
component's constructor argument.

Categories: :data:`SCORERS`, :data:`SLICERS`, :data:`PLACERS`, :data:`CURVES` (decay curves),
and the record types :data:`QUOTA_ENTRY`, :data:`COUNT_ENTRY`, :data:`STEP_WINDOW`.
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
    Duration,
    Integer,
    Invalid,
    Number,
    PositiveIntOrUnlimited,
    Problems,
    SchemaDefs,
    Text,
    Timestamp,
    ValueType,
    WeightMap,
    index_path,
    key_path,
    number_text,
    show,
    word_pattern,
)
from pycupel.policy.model import CountQuotaSpec, QuotaSpec, StepWindowSpec

__all__ = [
    "COUNT_ENTRY",
    "CURVES",
    "MAX_NESTING_DEPTH",
    "PLACERS",
    "POLICY_FIELDS",
    "QUOTA_ENTRY",
    "SCORERS",
    "SLICERS",
    "STEP_WINDOW",
    "Category",
    "ComponentDef",
    "OptionDef",
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


# --------------------------------------------------------------------------- nested values


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


class PlacerName(ValueType):
    """A placer type name (any accepted spelling), stored canonically."""

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> str | Invalid:
        if not isinstance(raw, str):
            return problems.bad(path, "must be a placer name", raw)
        component = PLACERS.find(raw)
        if component is None:
            return problems.add(path, PLACERS.unknown_message(raw))
        return component.name

    def dump(self, value: Any) -> Any:
        return str(value)

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        return {
            "type": "string",
            "anyOf": [{"pattern": pattern} for pattern in PLACERS.patterns.values()],
        }


# --------------------------------------------------------------------------- cross-field rules


def _check_decay(options: Mapping[str, Any], path: str, problems: Problems) -> None:
    if "clock" in options and "reference_time" in options:
        problems.add(
            key_path(path, "reference_time"),
            "give either clock = 'system' or a fixed reference_time, not both",
        )


def _check_step(options: Mapping[str, Any], path: str, problems: Problems) -> None:
    windows: tuple[StepWindowSpec, ...] = options.get("windows", ())
    for i in range(1, len(windows)):
        if windows[i].max_age <= windows[i - 1].max_age:
            previous = CURVE_DURATION.dump(windows[i - 1].max_age)
            current = CURVE_DURATION.dump(windows[i].max_age)
            problems.add(
                key_path(index_path(key_path(path, "windows"), i), "max_age"),
                f"must be greater than the previous window's max_age ({previous}); "
                f"windows go from youngest to oldest, got {current}",
            )


def _check_unique_kinds(list_name: str) -> Check:
    def check(options: Mapping[str, Any], path: str, problems: Problems) -> None:
        seen: dict[str, int] = {}
        for i, entry in enumerate(options.get(list_name, ())):
            folded = ascii_fold(entry.kind)
            if folded in seen:
                problems.add(
                    key_path(index_path(key_path(path, list_name), i), "kind"),
                    f"kind {entry.kind!r} already has an entry ({list_name}[{seen[folded]}]); "
                    "kinds are compared case-insensitively",
                )
            else:
                seen[folded] = i

    return check


def _check_quotas(options: Mapping[str, Any], path: str, problems: Problems) -> None:
    _check_unique_kinds("quotas")(options, path, problems)
    entries = options.get("quotas", ())
    requires: list[float] = []
    for i, entry in enumerate(entries):
        requires.append(entry.require)
        # Summed exactly (fsum), as the slicer does, so both draw the line at the same place.
        total = math.fsum(requires)
        if total > 100.0:
            problems.add(
                key_path(index_path(key_path(path, "quotas"), i), "require"),
                f"sum of requires must be <= 100, got {number_text(total)}",
            )
            return


def _check_count_entries(options: Mapping[str, Any], path: str, problems: Problems) -> None:
    _check_unique_kinds("entries")(options, path, problems)


def _check_optimal(options: Mapping[str, Any], path: str, problems: Problems) -> None:
    _check_quotas(options, path, problems)
    _check_unique_kinds("count_quotas")(options, path, problems)


def _check_quota_entry(values: Mapping[str, Any], path: str, problems: Problems) -> None:
    require = values.get("require", 0.0)
    cap = values.get("cap", 100.0)
    if require > cap:
        problems.add(
            key_path(path, "require"),
            f"must be <= cap ({number_text(cap)}), got {number_text(require)}",
        )


def _check_count_entry(values: Mapping[str, Any], path: str, problems: Problems) -> None:
    require = values.get("require_count", 0)
    cap = values.get("cap_count")
    if cap is not None and require > cap:
        problems.add(
            key_path(path, "require_count"),
            f"must be <= cap_count ({cap}), got {require}",
        )


# --------------------------------------------------------------------------- declarations

CURVE_DURATION: Final = Duration()
WEIGHT: Final = Number(exclusive_minimum=0.0)
"""A scorer weight: finite and > 0 (the composite scorer's rule)."""
_KIND = Text(non_blank=True, max_length=200)
_SCARCITY = Choice({"degrade": ("degrade",), "throw": ("throw",)})
_BUCKET = OptionDef(
    "bucket_size", Integer(minimum=1), "Tokens per knapsack capacity bucket (> 0).", default=100
)
_TABLE_BYTES = OptionDef(
    "max_table_bytes",
    Integer(minimum=1),
    "Memory cap of the knapsack table in bytes (> 0); absent = the library default.",
)

QUOTA_ENTRY: Final = RecordDef(
    "quota entry",
    QuotaSpec,
    (
        OptionDef("kind", _KIND, "The context kind (case-insensitive).", required=True),
        OptionDef(
            "require",
            Number(minimum=0.0, maximum=100.0),
            "Minimum share of the target budget, percent.",
            default=0.0,
        ),
        OptionDef(
            "cap",
            Number(minimum=0.0, maximum=100.0),
            "Maximum share of the target budget, percent (>= require).",
            default=100.0,
        ),
    ),
    _check_quota_entry,
)

COUNT_ENTRY: Final = RecordDef(
    "count entry",
    CountQuotaSpec,
    (
        OptionDef("kind", _KIND, "The context kind (case-insensitive).", required=True),
        OptionDef(
            "require_count",
            Integer(minimum=0),
            "Items of this kind committed first.",
            default=0,
        ),
        OptionDef(
            "cap_count",
            Integer(minimum=0),
            "Most items of this kind in the result (>= require_count); absent = uncapped.",
        ),
    ),
    _check_count_entry,
)

STEP_WINDOW: Final = RecordDef(
    "step window",
    StepWindowSpec,
    (
        OptionDef("max_age", CURVE_DURATION, "Items younger than this (> 0)...", required=True),
        OptionDef(
            "score", Number(minimum=0.0, maximum=1.0), "...score this, in [0, 1].", required=True
        ),
    ),
)

CURVES: Final = Category(
    "curve",
    (),
    (
        ComponentDef(
            "exponential",
            ("exponential",),
            "2^(-age / half_life): 1 when new, 0.5 at one half-life.",
            (OptionDef("half_life", CURVE_DURATION, "The half-life (> 0).", required=True),),
        ),
        ComponentDef(
            "step",
            ("step",),
            "The score of the first window whose max_age exceeds the age (else the last).",
            (
                OptionDef(
                    "windows",
                    RecordList(lambda: STEP_WINDOW, min_items=1),
                    "Windows from youngest to oldest (strictly increasing max_age).",
                    required=True,
                ),
            ),
            _check_step,
        ),
        ComponentDef(
            "window",
            ("window",),
            "1 while age < max_age, then 0.",
            (OptionDef("max_age", CURVE_DURATION, "The window length (> 0).", required=True),),
        ),
    ),
)

SCORERS: Final = Category(
    "scorer",
    ("scorer",),
    (
        ComponentDef(
            "recency",
            ("recency",),
            "Rank by timestamp: newest 1.0, oldest 0.0 (relative).",
        ),
        ComponentDef(
            "priority",
            ("priority",),
            "Rank by priority: highest 1.0, lowest 0.0 (relative).",
        ),
        ComponentDef(
            "kind",
            ("kind",),
            "A fixed weight per context kind.",
            (
                OptionDef(
                    "weights",
                    WeightMap(
                        key_label="kind", fold_keys=True, non_blank_keys=True, finite_sum=False
                    ),
                    "Weight per kind (>= 0); absent = the specification's default weights.",
                ),
            ),
        ),
        ComponentDef(
            "tag",
            ("tag",),
            "Matched tag weight over total tag weight.",
            (
                OptionDef(
                    "weights",
                    WeightMap(
                        key_label="tag", fold_keys=False, non_blank_keys=False, finite_sum=True
                    ),
                    "Weight per tag (>= 0; tags are case-sensitive).",
                    required=True,
                ),
            ),
        ),
        ComponentDef(
            "frequency",
            ("frequency",),
            "Share of the other items sharing a tag (relative).",
        ),
        ComponentDef(
            "reflexive",
            ("reflexive",),
            "The item's future_relevance_hint, clamped to [0, 1].",
        ),
        ComponentDef(
            "relevance",
            ("relevance",),
            "BM25 relevance of the content to the run's query, best item 1.0 (needs a query).",
            (
                OptionDef(
                    "k1",
                    Number(exclusive_minimum=0.0),
                    "Term-frequency saturation (> 0).",
                    default=1.2,
                ),
                OptionDef(
                    "b",
                    Number(minimum=0.0, maximum=1.0),
                    "Length normalisation, in [0, 1].",
                    default=0.75,
                ),
                OptionDef(
                    "expansion",
                    Number(minimum=0.0),
                    "Weight of query-expansion terms from the best matches (0: off).",
                    default=0.0,
                ),
            ),
        ),
        ComponentDef(
            "retrieval_score",
            ("retrieval", "score"),
            "A retriever's raw score in metadata[key], of any range, ranked or min-max scaled.",
            (
                OptionDef(
                    "key",
                    Text(non_blank=True, max_length=1000),
                    "Metadata key holding the score.",
                    default="retrieval_score",
                ),
                OptionDef(
                    "scale",
                    Choice({"rank": ("rank",), "minmax": ("min", "max")}),
                    "'rank' (order only) or 'minmax' (linear).",
                    default="rank",
                ),
            ),
        ),
        ComponentDef(
            "scaled",
            ("scaled",),
            "Min-max normalisation of an inner scorer over the candidates.",
            (
                OptionDef(
                    "inner", ScorerRef(weighted=False), "The scorer to normalise.", required=True
                ),
            ),
        ),
        ComponentDef(
            "composite",
            ("composite",),
            "Weighted average of child scorers.",
            (OptionDef("scorers", ScorerList(), "The weighted children.", required=True),),
        ),
        ComponentDef(
            "decay",
            ("decay",),
            "Absolute age decay against a clock.",
            (
                OptionDef("curve", CurveRef(), "The decay curve.", required=True),
                OptionDef(
                    "null_timestamp_score",
                    Number(minimum=0.0, maximum=1.0),
                    "Score of items without a timestamp, in [0, 1].",
                    default=0.5,
                ),
                OptionDef(
                    "clock",
                    Choice({"system": ("system",)}),
                    "'system': the current time when scoring (the default when no "
                    "reference_time is given).",
                ),
                OptionDef(
                    "reference_time",
                    Timestamp(),
                    "A fixed 'now' (RFC 3339 with offset), for reproducible scores.",
                ),
            ),
            _check_decay,
        ),
        ComponentDef(
            "metadata_trust",
            ("metadata", "trust"),
            "The item's metadata['cupel:trust'], clamped to [0, 1].",
            (
                OptionDef(
                    "default_score",
                    Number(minimum=0.0, maximum=1.0),
                    "Score when the trust value is absent or unusable, in [0, 1].",
                    default=0.5,
                ),
            ),
        ),
        ComponentDef(
            "metadata_key",
            ("metadata", "key"),
            "boost when metadata[key] == value, else 1.0 (a multiplier).",
            (
                OptionDef(
                    "key", Text(non_blank=True, max_length=1000), "Metadata key.", required=True
                ),
                OptionDef("value", Text(max_length=10_000), "Value to match.", required=True),
                OptionDef(
                    "boost", Number(exclusive_minimum=0.0), "Multiplier (> 0).", required=True
                ),
            ),
        ),
    ),
)

_SIMPLE_SLICERS: Final = ("greedy", "knapsack", "packer")

SLICERS: Final = Category(
    "slicer",
    ("slicer", "slice"),
    (
        ComponentDef("greedy", ("greedy",), "Fill by score per token, skipping misfits."),
        ComponentDef(
            "knapsack", ("knapsack",), "0/1 knapsack optimum (bucketed).", (_BUCKET, _TABLE_BYTES)
        ),
        ComponentDef(
            "quota",
            ("quota",),
            "Split the budget by kind (require/cap percentages), slice each kind.",
            (
                OptionDef(
                    "quotas",
                    RecordList(lambda: QUOTA_ENTRY),
                    "Per-kind require/cap percentages (sum of requires <= 100).",
                    default=(),
                ),
                OptionDef(
                    "inner",
                    SlicerRef(allowed=_SIMPLE_SLICERS, def_name="quota_inner_slicer"),
                    "Slicer used within each kind (absent = greedy).",
                    default=None,
                ),
            ),
            _check_quotas,
        ),
        ComponentDef(
            "count_quota",
            ("count", "quota"),
            "Commit required item counts per kind, slice the rest, cap counts.",
            (
                OptionDef(
                    "entries",
                    RecordList(lambda: COUNT_ENTRY),
                    "Per-kind require_count / cap_count.",
                    default=(),
                ),
                OptionDef(
                    "inner",
                    SlicerRef(
                        allowed=("greedy", "packer"),
                        def_name="count_quota_inner_slicer",
                        hint="use the count_constrained_knapsack slicer for knapsack selection",
                    ),
                    "Slicer for the residual budget (absent = greedy).",
                    default=None,
                ),
                OptionDef(
                    "scarcity",
                    _SCARCITY,
                    "When a kind has too few candidates: degrade (record a shortfall) or throw.",
                    default="degrade",
                ),
            ),
            _check_count_entries,
        ),
        ComponentDef(
            "count_constrained_knapsack",
            ("count", "constrained", "knapsack"),
            "count_quota with a knapsack for the residual budget.",
            (
                OptionDef(
                    "entries",
                    RecordList(lambda: COUNT_ENTRY),
                    "Per-kind require_count / cap_count.",
                    default=(),
                ),
                _BUCKET,
                _TABLE_BYTES,
                OptionDef(
                    "scarcity",
                    _SCARCITY,
                    "When a kind has too few candidates: degrade (record a shortfall) or throw.",
                    default="degrade",
                ),
            ),
            _check_count_entries,
        ),
        ComponentDef(
            "optimal",
            ("optimal",),
            "The best total score under the budget, token and count quotas, all-or-none "
            "groups and alternative versions at once (mixed-integer program; needs SciPy).",
            (
                OptionDef(
                    "quotas",
                    RecordList(lambda: QUOTA_ENTRY),
                    "Per-kind require/cap token percentages (sum of requires <= 100).",
                    default=(),
                ),
                OptionDef(
                    "count_quotas",
                    RecordList(lambda: COUNT_ENTRY),
                    "Per-kind require_count / cap_count.",
                    default=(),
                ),
                OptionDef(
                    "scarcity",
                    _SCARCITY,
                    "When a requirement cannot be met: degrade (record a shortfall) or throw.",
                    default="degrade",
                ),
                OptionDef(
                    "group_key",
                    Text(non_blank=True, max_length=1000),
                    "Metadata key naming all-or-none groups of items.",
                    default="cupel:group",
                ),
                OptionDef(
                    "variant_key",
                    Text(non_blank=True, max_length=1000),
                    "Metadata key naming versions of one item, at most one of which is taken.",
                    default="cupel:variant-of",
                ),
                OptionDef(
                    "time_limit",
                    Number(exclusive_minimum=0.0, maximum=3600.0),
                    "Seconds the solver may spend per selection (> 0); the best selection "
                    "found is returned with its optimality gap.",
                    default=0.2,
                ),
            ),
            _check_optimal,
        ),
        ComponentDef(
            "packer",
            ("packer",),
            "Score-order packing that skips misfits and stops after N consecutive skips.",
            (
                OptionDef(
                    "max_consecutive_skips",
                    PositiveIntOrUnlimited(),
                    "Stop after this many consecutive misfits (>= 1), or 'unlimited'.",
                    default=3,
                ),
            ),
        ),
    ),
)

PLACERS: Final = Category(
    "placer",
    ("placer",),
    (
        ComponentDef("chronological", ("chronological",), "Oldest first (by timestamp)."),
        ComponentDef(
            "u-shaped",
            ("u", "shaped"),
            "Best items at both ends, weakest in the middle.",
        ),
    ),
)

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
)
"""The top-level keys of a policy file."""

SCHEMA_KEY: Final = "$schema"
"""An optional top-level key for editors (a schema URL); accepted and not stored."""
