"""The slicers a policy can name, and their quota records: the declarations of
:data:`SLICERS`, :data:`QUOTA_ENTRY` and :data:`COUNT_ENTRY` (read through
:mod:`pycupel.policy.registry`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from pycupel.model import ascii_fold
from pycupel.policy._values import (
    Choice,
    Integer,
    Number,
    PositiveIntOrUnlimited,
    Problems,
    Text,
    index_path,
    key_path,
    number_text,
)
from pycupel.policy.model import CountQuotaSpec, QuotaSpec
from pycupel.policy.registry import (
    Category,
    Check,
    ComponentDef,
    OptionDef,
    RecordDef,
    RecordList,
    SlicerRef,
)

__all__ = ["COUNT_ENTRY", "QUOTA_ENTRY", "SLICERS"]


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
