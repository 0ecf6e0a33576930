"""The JSON Schema: generated from the registry, shipped, and in agreement with the reader."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import tomli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from policy_strategies import policies

from pycupel import presets
from pycupel.errors import PolicyError
from pycupel.policy import Policy, ScorerSpec, policy_json_schema
from pycupel.policy.registry import PLACERS, SCORERS, SLICERS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "policies"
VALIDATOR = jsonschema.Draft202012Validator(policy_json_schema())


def errors(document: Any) -> list[str]:
    return [error.json_path for error in VALIDATOR.iter_errors(document)]


def test_shipped_schema_is_the_generated_one() -> None:
    shipped = resources.files("pycupel").joinpath("schemas/policy.schema.json").read_text()
    assert json.loads(shipped) == policy_json_schema()


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(policy_json_schema())


def test_schema_accepts_the_example_files() -> None:
    assert errors(json.loads((EXAMPLES / "support-agent.json").read_text())) == []
    with (EXAMPLES / "support-agent.toml").open("rb") as handle:
        assert errors(tomli.load(handle)) == []


@pytest.mark.parametrize("name", presets.names())
def test_schema_accepts_every_preset(name: str) -> None:
    assert errors(presets.by_name(name).to_dict()) == []


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(policies())
def test_schema_accepts_every_valid_policy(policy: Policy) -> None:
    assert errors(policy.to_dict()) == []


GOOD: dict[str, Any] = {"name": "n", "scorers": [{"type": "recency", "weight": 1}]}


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"scorers": [{"type": "recnecy"}]}, "$.scorers[0]"),
        ({"scorers": [{"type": "recency", "weight": -1}]}, "$.scorers[0]"),
        ({"scorers": [{"type": "recency", "weight": "1"}]}, "$.scorers[0]"),
        ({"scorers": [{"type": "recency", "wieght": 1}]}, "$.scorers[0]"),
        ({"scorers": [{"type": "tag"}]}, "$.scorers[0]"),
        ({"scorers": []}, "$.scorers"),
        ({"slicer": {"type": "knapsack", "bucket_size": 0}}, "$.slicer"),
        ({"slicer": {"type": "count_quota", "inner": "knapsack"}}, "$.slicer"),
        ({"slicer": {"type": "quota", "quotas": [{"kind": "a", "require": 101}]}}, "$.slicer"),
        ({"placer": "sideways"}, "$.placer"),
        ({"deduplicate": "yes"}, "$.deduplicate"),
        ({"overflow_strategy": "explode"}, "$.overflow_strategy"),
        ({"extra": 1}, "$"),
        ({"name": ""}, "$.name"),
    ],
)
def test_schema_rejects_bad_documents(change: dict[str, Any], where: str) -> None:
    document = {**GOOD, **change}
    assert where in errors(document)
    with pytest.raises(PolicyError):
        Policy.from_dict(document)


def test_schema_requires_name_and_scorers() -> None:
    assert errors({}) == ["$", "$"]


type_names = st.one_of(
    st.text(alphabet="abcdeghiklmnopqrstuyACDGKMQRSTU-_ ", max_size=30),
    st.sampled_from(
        [*SCORERS.names, *SLICERS.names, *PLACERS.names, "UShaped", "RecencyScorer", "u--shaped"]
    ).flatmap(
        lambda name: st.sampled_from(
            [
                name,
                name.upper(),
                name.replace("_", "-"),
                name.replace("_", ""),
                name + "Slice",
                name.title().replace("_", ""),
                " " + name,
            ]
        )
    ),
)


@settings(max_examples=300)
@given(type_names)
def test_schema_and_reader_accept_the_same_type_spellings(spelling: str) -> None:
    """The name patterns are the single definition of accepted spellings."""
    by_reader = True
    try:
        ScorerSpec(spelling)
    except PolicyError as exc:
        by_reader = not any(p.path == "type" for p in exc.problems)
    patterns = [SCORERS.patterns[name] for name in SCORERS.names]
    by_schema = any(re.fullmatch(pattern, spelling) for pattern in patterns)
    # The schema uses ECMA-262 regexes; these patterns only use syntax common to both.
    assert by_reader == by_schema
