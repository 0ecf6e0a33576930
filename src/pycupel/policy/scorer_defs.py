"""The scorers a policy can name, and their decay curves: the declarations of
:data:`SCORERS` and :data:`CURVES` (read through :mod:`pycupel.policy.registry`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pycupel.policy._values import (
    Choice,
    Duration,
    Number,
    Problems,
    Text,
    Timestamp,
    WeightMap,
    index_path,
    key_path,
)
from pycupel.policy.model import StepWindowSpec
from pycupel.policy.registry import (
    Category,
    ComponentDef,
    CurveRef,
    OptionDef,
    RecordDef,
    RecordList,
    ScorerList,
    ScorerRef,
)

__all__ = ["CURVES", "CURVE_DURATION", "SCORERS", "STEP_WINDOW", "WEIGHT"]


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


CURVE_DURATION: Final = Duration()


WEIGHT: Final = Number(exclusive_minimum=0.0)
"""A scorer weight: finite and > 0 (the composite scorer's rule)."""


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
