"""Policy files: JSON and TOML reading and writing, every problem at once, hostile input."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
import tomli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from policy_strategies import policies

from pycupel import presets
from pycupel.errors import InputFormatError, PipelineConfigError, PolicyError
from pycupel.policy import (
    DEFAULT_MAX_BYTES,
    Policy,
    dumps_policy,
    load_policy,
    loads_policy,
    save_policy,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "policies"

MALFORMED = """
{
  "name": "broken",
  "scorers": [
    {"type": "recency", "weight": "high"},
    {"type": "recnecy"},
    {"type": "kind", "weight": -1},
    {"type": "tag", "weights": {"a": "x"}}
  ],
  "slicer": {
    "type": "quota",
    "quotas": [
      {"kind": "Message", "require": 60},
      {"kind": "Document", "require": 60}
    ]
  },
  "placer": "sideways",
  "dedupe": true
}
"""


def test_malformed_policy_reports_every_problem_with_paths() -> None:
    with pytest.raises(PolicyError) as exc:
        loads_policy(MALFORMED, source="broken.json")
    assert [str(p) for p in exc.value.problems] == [
        "scorers[0].weight: must be a number, got 'high'",
        "scorers[1].type: unknown scorer 'recnecy' (did you mean 'recency'?)",
        "scorers[2].weight: must be > 0, got -1",
        "scorers[3].weights.a: must be a number, got 'x'",
        "slicer.quotas[1].require: sum of requires must be <= 100, got 120",
        "placer: unknown placer 'sideways' (expected one of: chronological, u-shaped)",
        "dedupe: unknown key (did you mean 'deduplicate'?)",
    ]
    assert exc.value.source == "broken.json"
    assert str(exc.value).splitlines()[0] == "broken.json: 7 problems in policy"


def test_same_problems_from_toml() -> None:
    text = """
name = "broken"
placer = "sideways"

[[scorers]]
type = "recency"
weight = "high"

[[scorers]]
type = "recnecy"

[slicer]
type = "quota"
quotas = [{ kind = "Message", require = 60 }, { kind = "Document", require = 60 }]
"""
    with pytest.raises(PolicyError) as exc:
        loads_policy(text, "toml")
    assert [p.path for p in exc.value.problems] == [
        "placer",
        "scorers[0].weight",
        "scorers[1].type",
        "slicer.quotas[1].require",
    ]


def test_missing_required_keys() -> None:
    with pytest.raises(PolicyError) as exc:
        loads_policy("{}")
    assert [str(p) for p in exc.value.problems] == ["name: is required", "scorers: is required"]


def test_top_level_must_be_a_table() -> None:
    with pytest.raises(PolicyError) as exc:
        loads_policy("[1, 2]")
    assert str(exc.value.problems[0]) == "a policy must be a table (a JSON object), got [1, 2]"


def test_defaults_when_keys_are_absent() -> None:
    policy = loads_policy('{"name": "n", "scorers": ["recency"]}')
    assert policy.slicer.type == "greedy"
    assert policy.placer == "chronological"
    assert policy.deduplicate is True
    assert policy.overflow_strategy.value == "throw"
    assert policy.description == ""
    assert policy.scorers[0].weight == 1.0


def test_schema_key_is_accepted_and_not_stored() -> None:
    policy = loads_policy('{"$schema": "x.json", "name": "n", "scorers": ["recency"]}')
    assert "$schema" not in policy.to_dict()


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("name", presets.names())
def test_presets_round_trip_json_and_toml(name: str) -> None:
    policy = presets.by_name(name)
    assert loads_policy(dumps_policy(policy, "json")) == policy
    assert loads_policy(dumps_policy(policy, "toml"), "toml") == policy


def test_examples_are_the_same_policy_in_both_formats() -> None:
    from_json = load_policy(EXAMPLES / "support-agent.json")
    from_toml = load_policy(EXAMPLES / "support-agent.toml")
    assert from_json == from_toml
    assert from_json.name == "support-agent"
    assert [s.type for s in from_json.scorers] == ["decay", "kind", "composite"]


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(policies())
def test_any_policy_round_trips_json_policy_toml(policy: Policy) -> None:
    data = policy.to_dict()
    assert Policy.from_dict(data) == policy
    as_json = dumps_policy(policy, "json")
    assert json.loads(as_json) == data
    from_json = loads_policy(as_json)
    as_toml = dumps_policy(from_json, "toml")
    assert tomli.loads(as_toml) == data
    assert loads_policy(as_toml, "toml") == policy


def test_save_and_load_files(tmp_path: Path) -> None:
    policy = presets.document_qa()
    for suffix in (".json", ".toml", ".TOML"):
        path = tmp_path / f"policy{suffix}"
        save_policy(policy, path)
        assert load_policy(path) == policy
    path = tmp_path / "policy.txt"
    save_policy(policy, path, format="toml")
    assert load_policy(path, format="toml") == policy
    with pytest.raises(InputFormatError, match=r"must end in \.json or \.toml"):
        load_policy(path)


def test_canonical_file_form() -> None:
    text = dumps_policy(presets.document_qa(), "json")
    assert json.loads(text) == {
        "name": "DocumentQa",
        "description": presets.document_qa().description,
        "scorers": [
            {"type": "kind", "weight": 2.0},
            {"type": "reflexive", "weight": 2.0},
            {"type": "priority", "weight": 1.0},
        ],
        "slicer": {"type": "knapsack", "bucket_size": 100},
        "placer": "u-shaped",
        "deduplicate": True,
        "overflow_strategy": "throw",
    }


def test_toml_datetimes_are_accepted_as_reference_times() -> None:
    text = """
name = "n"
[[scorers]]
type = "decay"
reference_time = 2025-01-01T12:00:00Z
curve = { type = "window", max_age = 3600 }
"""
    policy = loads_policy(text, "toml")
    assert policy.scorers[0].options["reference_time"].isoformat() == "2025-01-01T12:00:00+00:00"
    local = text.replace("12:00:00Z", "12:00:00")
    with pytest.raises(PolicyError) as exc:
        loads_policy(local, "toml")
    assert exc.value.problems[0].path == "scorers[0].reference_time"


# --------------------------------------------------------------------------- input errors


def test_invalid_json_and_toml() -> None:
    with pytest.raises(InputFormatError) as exc:
        loads_policy('{"name": ', source="p.json")
    assert exc.value.location.startswith("line 1 column")
    with pytest.raises(InputFormatError, match="invalid TOML"):
        loads_policy("name = ", "toml")


def test_duplicate_json_keys_are_refused() -> None:
    with pytest.raises(InputFormatError, match="'name' appears twice"):
        loads_policy('{"name": "a", "name": "b", "scorers": ["recency"]}')


def test_nan_and_infinity_are_refused_with_their_path() -> None:
    with pytest.raises(PolicyError) as exc:
        loads_policy(
            '{"name": "n", "scorers": [{"type": "recency", "weight": NaN}, '
            '{"type": "kind", "weight": Infinity}, {"type": "kind", "weight": 1e999}]}'
        )
    assert [p.path for p in exc.value.problems] == [
        "scorers[0].weight",
        "scorers[1].weight",
        "scorers[2].weight",
    ]
    assert all("finite" in p.message for p in exc.value.problems)


def test_huge_and_deep_input() -> None:
    with pytest.raises(InputFormatError):
        loads_policy('{"name": "n", "x": ' + "9" * 10_000 + "}")
    with pytest.raises(InputFormatError, match="nested too deeply"):
        loads_policy("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputFormatError, match="larger than"):
        loads_policy(" " * (DEFAULT_MAX_BYTES + 1))
    with pytest.raises(InputFormatError, match="larger than 10 bytes"):
        loads_policy('{"name": "abc"}', max_bytes=10)
    with pytest.raises(PipelineConfigError):
        loads_policy("{}", max_bytes=0)


def test_file_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text(" " * 100 + '{"name": "n", "scorers": ["recency"]}')
    assert load_policy(path).name == "n"
    with pytest.raises(InputFormatError, match="larger than 50 bytes"):
        load_policy(path, max_bytes=50)


def test_bytes_encoding_and_bom(tmp_path: Path) -> None:
    text = '{"name": "n", "scorers": ["recency"]}'
    assert loads_policy(text.encode("utf-8-sig")).name == "n"
    with pytest.raises(InputFormatError, match="not valid UTF-8"):
        loads_policy(b"\xff\xfe{}")
    path = tmp_path / "p.json"
    path.write_bytes(b'{"name": "\xff"}')
    with pytest.raises(InputFormatError, match="not valid UTF-8"):
        load_policy(path)


def test_missing_file() -> None:
    with pytest.raises(InputFormatError, match="cannot read the file"):
        load_policy("/nonexistent/policy.json")


def test_bad_arguments() -> None:
    with pytest.raises(PipelineConfigError):
        loads_policy("{}", "yaml")  # type: ignore[arg-type]
    with pytest.raises(PipelineConfigError):
        loads_policy(42)  # type: ignore[arg-type]
    with pytest.raises(PipelineConfigError):
        dumps_policy({"name": "x"})  # type: ignore[arg-type]


# --------------------------------------------------------------------------- fuzzing

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["recency", "kind", "quota", "u-shaped", "1h", "unlimited", "decay"]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(max_size=8)
            | st.sampled_from(
                [
                    "name",
                    "scorers",
                    "type",
                    "weight",
                    "slicer",
                    "weights",
                    "inner",
                    "curve",
                    "quotas",
                    "entries",
                    "kind",
                    "require",
                    "cap",
                    "placer",
                    "scorers",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=25,
)


def _only_project_errors(call: Any) -> None:
    with contextlib.suppress(PolicyError, InputFormatError):
        call()


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_any_json_like_structure_gives_a_policy_or_a_policy_error(data: object) -> None:
    _only_project_errors(lambda: Policy.from_dict(data))
    _only_project_errors(lambda: Policy.from_dict({"name": "n", "scorers": data}))
    _only_project_errors(
        lambda: Policy.from_dict({"name": "n", "scorers": ["kind"], "slicer": data})
    )
    _only_project_errors(lambda: Policy.from_dict({"name": "n", "scorers": [data]}))
    text = json.dumps(data, allow_nan=True)
    _only_project_errors(lambda: loads_policy(text))


@settings(max_examples=200)
@given(st.text(max_size=200))
def test_any_text_gives_a_policy_or_a_project_error(text: str) -> None:
    _only_project_errors(lambda: loads_policy(text, "json"))
    _only_project_errors(lambda: loads_policy(text, "toml"))


@settings(max_examples=200)
@given(st.binary(max_size=200))
def test_any_bytes_give_a_policy_or_a_project_error(data: bytes) -> None:
    _only_project_errors(lambda: loads_policy(data, "json"))
    _only_project_errors(lambda: loads_policy(data, "toml"))


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(policies(), st.data())
def test_mutated_valid_policies_give_a_policy_or_a_policy_error(
    policy: Policy, data: st.DataObject
) -> None:
    """Replace one value deep inside a valid policy with junk: only PolicyError comes out."""
    document = policy.to_dict()
    paths: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                paths.append((node, key))
                walk(value)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                paths.append((node, index))
                walk(value)

    walk(document)
    container, key = data.draw(st.sampled_from(paths))
    container[key] = data.draw(json_values)
    _only_project_errors(lambda: Policy.from_dict(document))
    _only_project_errors(lambda: loads_policy(json.dumps(document, allow_nan=True)))


def test_non_string_keys_are_problems_not_crashes() -> None:
    with pytest.raises(PolicyError) as exc:
        Policy.from_dict({1: "x", "name": "n", "scorers": [{"type": "kind", 2: 3}]})
    assert [str(p) for p in exc.value.problems] == [
        "keys must be strings, got 1",
        "scorers[0]: keys must be strings, got 2",
    ]


def test_integers_too_large_for_a_float_are_problems() -> None:
    with pytest.raises(PolicyError) as exc:
        Policy.from_dict({"name": "n", "scorers": [{"type": "recency", "weight": 10**400}]})
    assert exc.value.problems[0].message.startswith("must be a finite number, got 1000")
