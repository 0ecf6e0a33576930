"""Every parser turns any input into a result or a CupelError with a message.

Inputs: random bytes, random JSON trees (NaN and infinities included), byte-level mutations of
valid documents (BOMs, invalid UTF-8, cut and repeated spans) and structural mutations (a random
subtree grafted anywhere: wrong types, huge numbers, long strings, deep nesting, duplicate
keys). The atheris harness in ``fuzz/`` drives the same targets for long sessions.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
import tomli
import tomli_w
from fuzz_targets import TARGETS, seeds
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from conftest import reliability_examples
from pycupel.errors import CupelError

TARGET_NAMES = sorted(TARGETS)
TOML_TARGETS = {"policy_toml", "vector"}
SLOW_INPUT_SECONDS = 5.0

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**62, max_value=2**200),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["", " ", "\ufeff", "NaN", "Infinity", "-Infinity", "9" * 40, "\x00"]),
    st.sampled_from(["Message", "message", "tool", "system", "user", "assistant", "text"]),
    st.sampled_from(
        ["2024-06-01T09:30:00Z", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00"]
    ),
)
json_trees = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(st.text(max_size=12), children, max_size=5),
    ),
    max_leaves=25,
)


def check_target(name: str, data: bytes) -> None:
    """Run one input: only a CupelError with a message may escape, and quickly."""
    target: Callable[[bytes], None] = TARGETS[name]
    started = time.perf_counter()
    message = "loaded"
    try:
        target(data)
    except CupelError as exc:
        message = str(exc)
    assert message.strip(), "a CupelError without a message"
    elapsed = time.perf_counter() - started
    assert elapsed < SLOW_INPUT_SECONDS, f"{name} took {elapsed:.1f}s on {len(data)} bytes"


def _paths(tree: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(tree, dict):
        for key, value in tree.items():
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            found.extend(_paths(value, (*prefix, index)))
    return found


def _graft(tree: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        return {**tree, head: _graft(tree[head], rest, value)}
    copy = list(tree)
    copy[head] = _graft(copy[head], rest, value)
    return copy


def _decode(name: str, seed: bytes) -> Any:
    text = seed.decode("utf-8-sig")
    return tomli.loads(text) if name in TOML_TARGETS else json.loads(text)


def _encode(name: str, tree: Any) -> bytes | None:
    try:
        if name in TOML_TARGETS:
            return tomli_w.dumps(tree).encode("utf-8", "surrogatepass")
        return json.dumps(tree, allow_nan=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError, AttributeError):
        return None  # not representable in this format (e.g. null in TOML, a non-table root)


@st.composite
def byte_mutations(draw: st.DrawFn, name: str) -> bytes:
    data = bytearray(draw(st.sampled_from(seeds(name))))
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["insert", "delete", "replace", "repeat", "bom", "bad"]))
        at = draw(st.integers(0, len(data)))
        if action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif action == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        elif action == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif action == "repeat":
            span = bytes(data[at : at + draw(st.integers(1, 40))])
            data[at:at] = span * draw(st.integers(1, 50))
        elif action == "bom":
            data[0:0] = b"\xef\xbb\xbf" * draw(st.integers(1, 2))
        else:
            data[at:at] = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"]))
    return bytes(data)


@st.composite
def tree_mutations(draw: st.DrawFn, name: str) -> bytes:
    # The JSON Lines seed of "items" is not one tree: mutate the array and maybe split it.
    documents = [seed for seed in seeds(name) if seed.lstrip().startswith((b"[", b'{"system'))]
    documents = documents or list(seeds(name))
    tree = _decode(name, draw(st.sampled_from(documents)))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(tree)))
        replacement = draw(
            st.one_of(
                json_trees,
                st.integers(min_value=-(2**70), max_value=2**70),
                st.text(min_size=1000, max_size=5000),
                st.integers(1, 120).map(_nest),
            )
        )
        tree = _graft(tree, path, replacement)
    if name == "items" and isinstance(tree, list) and draw(st.booleans()):
        lines = [_encode(name, entry) for entry in tree]
        assume(all(line is not None for line in lines))
        return b"\n".join(line for line in lines if line is not None)
    data = _encode(name, tree)
    assume(data is not None)
    assert data is not None
    return data


def _nest(depth: int) -> Any:
    value: Any = 0
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.parametrize("name", TARGET_NAMES)
@settings(max_examples=reliability_examples(60))
@given(data=st.binary(max_size=600))
def test_random_bytes(name: str, data: bytes) -> None:
    check_target(name, data)


@pytest.mark.parametrize("name", TARGET_NAMES)
@settings(max_examples=reliability_examples(60))
@given(tree=json_trees)
def test_random_json_trees(name: str, tree: Any) -> None:
    check_target(name, json.dumps(tree, allow_nan=True).encode())


@pytest.mark.parametrize("name", TARGET_NAMES)
@settings(max_examples=reliability_examples(80))
@given(data=st.data())
def test_byte_mutations_of_valid_documents(name: str, data: st.DataObject) -> None:
    check_target(name, data.draw(byte_mutations(name)))


@pytest.mark.parametrize("name", TARGET_NAMES)
@settings(max_examples=reliability_examples(80))
@given(data=st.data())
def test_structural_mutations_of_valid_documents(name: str, data: st.DataObject) -> None:
    check_target(name, data.draw(tree_mutations(name)))


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_seeds_load(name: str) -> None:
    for seed in seeds(name):
        TARGETS[name](seed)


# --------------------------------------------------------------------------- found by fuzzing

HOSTILE_INPUTS = {
    "deep-array": b"[" * 100_000 + b"]" * 100_000,
    "deep-object": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "deep-toml-array": b"a = " + b"[" * 100_000 + b"]" * 100_000,
    "deep-toml-inline-table": b"a = " + b"{b=" * 5_000 + b"1" + b"}" * 5_000,
    "huge-int-json": b'[{"content": "a", "tokens": ' + b"9" * 5000 + b"}]",
    "huge-int-toml": b"[test]\nname = 'x'\nstage = 'scoring'\nn = " + b"9" * 5000,
    "nan-literal": b'[{"content": "a", "tokens": 1, "futureRelevanceHint": NaN}]',
    "duplicate-keys": b'{"content": "a", "content": "b", "tokens": 1}',
    "bom-only": b"\xef\xbb\xbf",
    "double-bom": b"\xef\xbb\xbf\xef\xbb\xbf[]",
    "invalid-utf8": b'[{"content": "\xff", "tokens": 1}]',
    "lone-surrogate": b'[{"content": "\\ud800", "tokens": 1}]',
    "empty": b"",
    "nul": b"\x00",
}


@pytest.mark.parametrize("name", TARGET_NAMES)
@pytest.mark.parametrize("case", sorted(HOSTILE_INPUTS))
def test_hostile_inputs(name: str, case: str) -> None:
    check_target(name, HOSTILE_INPUTS[case])


# Inputs the fuzzers found crashing a parser, kept as regression tests (target, input).
FOUND_BY_FUZZING = [
    pytest.param("items", b"[" * 100_000 + b"]" * 100_000, id="items-deep-nesting-recursion"),
    pytest.param("report", b'{"a":' * 5_000 + b"1" + b"}" * 5_000, id="report-deep-recursion"),
    pytest.param("items", b"[" * 70 + b"]" * 70, id="items-nesting-over-max-depth"),
    pytest.param("vector", b"a = " + b"[" * 1_000 + b"]" * 1_000, id="vector-toml-deep"),
    pytest.param(
        "vector", b"[test]\nname = 'x'\nstage = 'scoring'\nn = " + b"9" * 5000, id="vector-huge-int"
    ),
    pytest.param(
        "messages_openai",
        b'[{"role": {"k": 0}, "content": "You are terse."}]',
        id="openai-unhashable-role",
    ),
    pytest.param(
        "messages_openai", b'[{"role": ["user"], "content": "hi"}]', id="openai-list-role"
    ),
    pytest.param(
        "candidates_file", b'[{"role": {"k": 0}, "content": "x"}]', id="cli-detect-object-role"
    ),
    pytest.param(
        "candidates_file",
        b'[{"role": "user", "content": [{"type": ["text"], "text": "x"}]}]',
        id="cli-detect-list-part-type",
    ),
]


@pytest.mark.parametrize(("name", "data"), FOUND_BY_FUZZING)
def test_found_by_fuzzing(name: str, data: bytes) -> None:
    with pytest.raises(CupelError) as caught:
        TARGETS[name](data)
    assert str(caught.value)


def test_items_parser_refuses_non_text() -> None:
    from pycupel.errors import PipelineConfigError
    from pycupel.itemio import parse_items

    with pytest.raises(PipelineConfigError, match="text"):
        parse_items(123)  # type: ignore[arg-type]
