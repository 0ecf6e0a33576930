"""OptimalSlice in policy files: options, validation, building and running."""

from __future__ import annotations

import json

import jsonschema
import pytest

from pycupel import ContextBudget, ContextItem
from pycupel.errors import PolicyError
from pycupel.policy import dumps_policy, loads_policy, policy_json_schema
from pycupel.slicers import OptimalSlice

OPTIMAL_TOML = """
name = "quota-optimal"
[[scorers]]
type = "priority"
weight = 1
[slicer]
type = "OptimalSlice"
time_limit = 0.5
group_key = "bundle"
[[slicer.quotas]]
kind = "Document"
require = 20
cap = 60
[[slicer.count_quotas]]
kind = "Memory"
require_count = 1
cap_count = 2
"""


def test_optimal_policy_builds_the_configured_slicer() -> None:
    policy = loads_policy(OPTIMAL_TOML, format="toml")
    pipeline = policy.build(ContextBudget(max_tokens=500, target_tokens=400))
    slicer = pipeline.slicer
    assert isinstance(slicer, OptimalSlice)
    assert "time_limit=0.5" in repr(slicer)
    assert loads_policy(dumps_policy(policy, format="toml"), format="toml") == policy
    jsonschema.validate(json.loads(dumps_policy(policy, format="json")), policy_json_schema())


def test_optimal_policy_runs_and_honours_its_quotas() -> None:
    policy = loads_policy(OPTIMAL_TOML, format="toml")
    items = [ContextItem(f"doc {n}", tokens=40, kind="Document", priority=n) for n in range(5)] + [
        ContextItem(f"memory {n}", tokens=30, kind="Memory", priority=10 + n) for n in range(4)
    ]
    budget = ContextBudget(max_tokens=200, target_tokens=200)
    result = policy.build(budget).run(items)
    kinds = [item.kind.value for item in result.items]
    assert result.total_tokens <= 200
    assert 1 <= kinds.count("Memory") <= 2  # count quota
    assert kinds.count("Document") * 40 >= 40  # token require: floor(20% of 200) = 40


def test_optimal_policy_reports_every_problem() -> None:
    bad = {
        "name": "x",
        "scorers": [{"type": "kind"}],
        "slicer": {
            "type": "optimal",
            "time_limit": 0,
            "group_key": "",
            "count_quotas": [{"kind": "m", "require_count": 3, "cap_count": 2}],
        },
    }
    with pytest.raises(PolicyError) as info:
        loads_policy(json.dumps(bad), format="json")
    paths = {problem.path for problem in info.value.problems}
    assert paths == {
        "slicer.time_limit",
        "slicer.group_key",
        "slicer.count_quotas[0].require_count",
    }


def test_optimal_policy_rejects_requires_over_100_percent() -> None:
    bad = {
        "name": "x",
        "scorers": [{"type": "kind"}],
        "slicer": {
            "type": "optimal",
            "quotas": [{"kind": "a", "require": 70}, {"kind": "b", "require": 40}],
        },
    }
    with pytest.raises(PolicyError, match=r"slicer\.quotas\[1\]\.require: sum of requires"):
        loads_policy(json.dumps(bad), format="json")
