"""Data model: validation rules, immutability, identity semantics, effective budget."""

from __future__ import annotations

import copy
import math
import pickle
import warnings
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pycupel import (
    ContextBudget,
    ContextItem,
    ContextKind,
    ContextSource,
    OverflowStrategy,
    ScoredItem,
    compute_effective_budget,
)
from pycupel.errors import (
    BudgetValidationError,
    CupelError,
    InvalidValueError,
    ItemValidationError,
    KindNameWarning,
    PipelineConfigError,
)
from pycupel.model import ascii_fold

OWN_VECTORS_DIR = Path(__file__).resolve().parent / "vectors"

# --------------------------------------------------------------------------- ContextKind/Source


@pytest.mark.parametrize("spelling", ["Message", "message", "MESSAGE", "mEsSaGe"])
def test_kind_equality_folds_ascii_case(spelling: str) -> None:
    kind = ContextKind(spelling)
    assert kind == ContextKind.MESSAGE
    assert hash(kind) == hash(ContextKind.MESSAGE)
    assert kind.key == "message"
    # Never equal to a plain str: no hash could agree with a case-insensitive str equality.
    assert kind != "message"
    assert kind != spelling
    assert kind.value == spelling
    assert str(kind) == spelling


class _Text(str):
    """A str subclass: equality and hashing are those of str."""

    __slots__ = ()


_NAMES = st.text(alphabet="MemoryDcuntÄä _-", min_size=1, max_size=8).filter(str.strip)


@given(st.lists(_NAMES, min_size=1, max_size=6))
def test_equal_names_hash_equal_whatever_they_are_compared_with(names: list[str]) -> None:
    values: list[object] = []
    for name in names:
        values += [ContextKind(name), ContextSource(name), name, name.lower(), _Text(name)]
    for a in values:
        for b in values:
            assert (a == b) == (b == a)  # symmetric, whichever side starts
            if a == b:
                assert hash(a) == hash(b)
            if isinstance(a, ContextKind) and not isinstance(b, ContextKind):
                assert a != b  # a kind equals kinds only


@pytest.mark.parametrize("name", ["Memory", "memory", "MEMORY"])
def test_kinds_and_strings_never_meet_in_sets_and_dicts(name: str) -> None:
    kind = ContextKind(name)
    assert name not in {kind}
    assert kind not in {name}
    assert kind not in {name: 1}
    assert name not in {kind: 1}
    assert {kind, name, ContextKind.MEMORY, ContextSource(name)} == {
        kind,
        name,
        ContextSource("memory"),
    }
    assert len({kind: 1, name: 2, ContextKind.MEMORY: 3}) == 2
    assert {kind: 1}[ContextKind.MEMORY] == 1
    with pytest.raises(KeyError):
        _ = {kind: 1}[name]
    with pytest.raises(KeyError):
        _ = {name: 1}[kind]  # type: ignore[index]


@pytest.mark.parametrize(
    ("cls", "name", "suggestion"),
    [
        (ContextKind, "Documnet", "Document"),
        (ContextKind, "memroy", "Memory"),
        (ContextKind, "Messages", "Message"),
        (ContextKind, "TOOLOUTPT", "ToolOutput"),
        (ContextKind, "System_Prompt", "SystemPrompt"),
        (ContextSource, "Tol", "Tool"),
        (ContextSource, "chats", "Chat"),
    ],
)
def test_a_near_miss_of_a_well_known_name_warns_and_is_kept(
    cls: type[ContextKind] | type[ContextSource], name: str, suggestion: str
) -> None:
    with pytest.warns(KindNameWarning) as caught:
        made = cls(name)
    assert len(caught) == 1
    warning = caught[0].message
    assert isinstance(warning, KindNameWarning)
    assert (warning.field, warning.value, warning.suggestion) == (cls._field, name, suggestion)
    assert str(warning) == (
        f"{cls._field} {name!r} is not a well-known {cls._field}; did you mean {suggestion!r}? "
        f"(kept as a custom {cls._field}; write {cls.__name__}.custom({name!r}) to mean it)"
    )
    assert caught[0].filename == __file__  # points at the caller
    assert made.value == name
    assert made != cls(suggestion)
    assert cls.closest_well_known(name) == suggestion


def test_an_item_naming_a_near_miss_kind_warns_at_the_callers_line() -> None:
    with pytest.warns(KindNameWarning, match="did you mean 'Document'") as caught:
        item = ContextItem("x", tokens=1, kind="Documnet")
    assert caught[0].filename == __file__
    assert item.kind.value == "Documnet"


@pytest.mark.parametrize(
    "name",
    ["Document", "document", "SYSTEMPROMPT", "tool", "msg", "critical", "urgent", "CustomKind",
     "Invoice", "Email", "Tool", "ToolCall"],
)  # fmt: skip
def test_well_known_and_distinct_custom_names_do_not_warn(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ContextKind(name)
        ContextSource(name)
        ContextItem("x", tokens=1, kind=name, source=name)
    assert ContextKind.closest_well_known(name) is None


def test_a_custom_name_meant_as_given_never_warns() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        memo = ContextKind.custom("Memo")
        tol = ContextSource.custom("Tol")
        ContextItem("x", tokens=1, kind=memo, source=tol)
        assert pickle.loads(pickle.dumps(memo)) == memo
        assert copy.deepcopy(memo) == memo
    assert memo == ContextKind.custom("memo")
    assert type(memo) is ContextKind
    assert type(tol) is ContextSource
    with pytest.raises(ItemValidationError, match="kind: must not be empty"):
        ContextKind.custom(" ")


def test_near_misses_can_be_refused_with_a_warnings_filter() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", KindNameWarning)
        with pytest.raises(KindNameWarning):
            ContextItem("x", tokens=1, kind="Documnet")


def test_no_kind_or_source_of_the_conformance_vectors_is_a_near_miss(
    conformance_dir: Path,
) -> None:
    """The specification allows any name; the warning must never fire on a vector."""
    import tomli

    names: set[tuple[str, str]] = set()
    for path in [*conformance_dir.rglob("*.toml"), *OWN_VECTORS_DIR.rglob("*.toml")]:
        stack: list[object] = [tomli.loads(path.read_text(encoding="utf-8"))]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                for key in ("kind", "source"):
                    if isinstance(node.get(key), str):
                        names.add((key, node[key]))
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    assert len(names) > 5
    near = [
        (key, name)
        for key, name in names
        if (ContextKind if key == "kind" else ContextSource).closest_well_known(name)
    ]
    assert near == []


def test_kind_folding_is_ascii_only() -> None:
    # Non-ASCII letters are not folded: only A-Z map to a-z.
    assert ascii_fold("ÄBC") == "Äbc"
    assert ContextKind("Ä") != ContextKind("ä")


def test_kind_and_source_are_distinct_types() -> None:
    assert ContextKind("Chat") != ContextSource("Chat")


@pytest.mark.parametrize("bad", ["", " ", "\t\n"])
def test_blank_kind_and_source_rejected(bad: str) -> None:
    with pytest.raises(ItemValidationError, match="kind: must not be empty"):
        ContextKind(bad)
    with pytest.raises(ItemValidationError, match="source: must not be empty"):
        ContextSource(bad)


def test_kind_rejects_non_string() -> None:
    with pytest.raises(ItemValidationError, match="kind: must be a string, got 3"):
        ContextKind(3)  # type: ignore[arg-type]


def test_well_known_constants() -> None:
    assert [
        k.value
        for k in (
            ContextKind.MESSAGE,
            ContextKind.DOCUMENT,
            ContextKind.TOOL_OUTPUT,
            ContextKind.MEMORY,
            ContextKind.SYSTEM_PROMPT,
        )
    ] == ["Message", "Document", "ToolOutput", "Memory", "SystemPrompt"]
    assert [s.value for s in (ContextSource.CHAT, ContextSource.TOOL, ContextSource.RAG)] == [
        "Chat",
        "Tool",
        "Rag",
    ]


def test_kind_is_immutable_and_picklable() -> None:
    kind = ContextKind("Memory")
    with pytest.raises(AttributeError):
        kind._value = "x"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(kind)) == kind


# --------------------------------------------------------------------------- ContextItem


def test_item_defaults() -> None:
    item = ContextItem("hello", tokens=3)
    assert item.kind == ContextKind.MESSAGE
    assert item.source == ContextSource.CHAT
    assert item.priority is None
    assert item.tags == ()
    assert dict(item.metadata) == {}
    assert item.timestamp is None
    assert item.timestamp_micros is None
    assert item.future_relevance_hint is None
    assert item.pinned is False
    assert item.original_tokens is None


def test_item_identity_semantics() -> None:
    a = ContextItem("same", tokens=1)
    b = ContextItem("same", tokens=1)
    assert a != b
    assert a == a  # noqa: PLR0124
    assert len({a, b}) == 2


def test_item_is_immutable() -> None:
    item = ContextItem("x", tokens=1)
    with pytest.raises(AttributeError, match="immutable"):
        item.tokens = 5  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del item.content  # type: ignore[misc]


def test_item_copies_tags_and_metadata() -> None:
    tags = ["a", "b"]
    metadata = {"cupel:trust": "0.5"}
    item = ContextItem("x", tokens=1, tags=tags, metadata=metadata)
    tags.append("c")
    metadata["other"] = "y"
    assert item.tags == ("a", "b")
    assert dict(item.metadata) == {"cupel:trust": "0.5"}
    with pytest.raises(TypeError):
        item.metadata["z"] = 1  # type: ignore[index]


def test_negative_and_huge_tokens_are_allowed() -> None:
    assert ContextItem("x", tokens=-5).tokens == -5
    assert ContextItem("x", tokens=2**62).tokens == 2**62


def test_timestamp_is_stored_as_utc() -> None:
    local = datetime(2024, 6, 1, 12, 0, tzinfo=timezone(timedelta(hours=5)))
    item = ContextItem("x", tokens=1, timestamp=local)
    assert item.timestamp == local
    assert item.timestamp is not None
    assert item.timestamp.tzinfo is UTC
    assert item.timestamp.hour == 7
    assert item.timestamp_micros == int(local.timestamp()) * 1_000_000


def test_timestamp_limits() -> None:
    low = ContextItem("x", tokens=1, timestamp=datetime.min.replace(tzinfo=UTC))
    high = ContextItem("y", tokens=1, timestamp=datetime.max.replace(tzinfo=UTC))
    assert low.timestamp_micros is not None
    assert high.timestamp_micros is not None
    assert low.timestamp_micros < 0 < high.timestamp_micros


def test_timestamp_out_of_utc_range_is_rejected() -> None:
    edge = datetime.max.replace(tzinfo=timezone(timedelta(hours=-1)))
    with pytest.raises(ItemValidationError, match="timestamp: must be representable"):
        ContextItem("x", tokens=1, timestamp=edge)


@pytest.mark.parametrize("hint", [math.nan, math.inf, -math.inf, -3.0, 7])
def test_any_float_hint_is_accepted(hint: float) -> None:
    item = ContextItem("x", tokens=1, future_relevance_hint=hint)
    assert isinstance(item.future_relevance_hint, float)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"content": ""}, "content: must be a non-empty string, got ''"),
        ({"content": None}, "content: must be a string, got None"),
        ({"tokens": 1.0}, "tokens: must be an integer, got 1.0"),
        ({"tokens": True}, "tokens: must be an integer, got True"),
        ({"tokens": "5"}, "tokens: must be an integer, got '5'"),
        ({"priority": 2.5}, "priority: must be an integer, got 2.5"),
        ({"tags": "urgent"}, "tags: must be an iterable of strings"),
        ({"tags": ["ok", 3]}, r"tags\[1\]: must be a string, got 3"),
        ({"metadata": [("a", 1)]}, "metadata: must be a mapping"),
        ({"metadata": {1: "a"}}, "metadata: keys must be strings, got 1"),
        ({"timestamp": datetime(2024, 1, 1)}, "timestamp: must be timezone-aware"),
        ({"timestamp": "2024-01-01"}, "timestamp: must be a datetime"),
        ({"future_relevance_hint": "high"}, "future_relevance_hint: must be a number"),
        ({"pinned": 1}, "pinned: must be a boolean, got 1"),
        ({"original_tokens": -1}, "original_tokens: must be >= 0, got -1"),
        ({"kind": ""}, "kind: must not be empty"),
        ({"source": "   "}, "source: must not be empty"),
    ],
)
def test_item_validation(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"content": "text", "tokens": 1}
    arguments.update(kwargs)
    content = arguments.pop("content")
    with pytest.raises(ItemValidationError, match=message) as info:
        ContextItem(content, **arguments)  # type: ignore[arg-type]
    assert isinstance(info.value, CupelError)
    assert isinstance(info.value, ValueError)
    assert info.value.field


def test_replace_builds_a_new_validated_item() -> None:
    item = ContextItem("x", tokens=1, kind="Memory")
    changed = item.replace(tokens=9)
    assert changed is not item
    assert (changed.tokens, changed.kind, changed.content) == (9, ContextKind.MEMORY, "x")
    with pytest.raises(ItemValidationError, match="tokens: must be an integer"):
        item.replace(tokens="9")
    with pytest.raises(ItemValidationError, match="colour: is not a ContextItem field"):
        item.replace(colour="red")


def test_item_copy_and_pickle_preserve_fields() -> None:
    item = ContextItem(
        "x",
        tokens=4,
        kind="Document",
        source="Rag",
        priority=3,
        tags=("a",),
        metadata={"k": "v"},
        timestamp=datetime(2024, 1, 1, tzinfo=UTC),
        future_relevance_hint=0.4,
        pinned=True,
        original_tokens=10,
    )
    for clone in (copy.deepcopy(item), pickle.loads(pickle.dumps(item))):
        assert clone is not item
        assert repr(clone) == repr(item)
        assert dict(clone.metadata) == {"k": "v"}
        assert clone.original_tokens == 10


# --------------------------------------------------------------------------- ContextBudget


def test_budget_defaults() -> None:
    budget = ContextBudget(max_tokens=100, target_tokens=80)
    assert budget.output_reserve == 0
    assert dict(budget.reserved_slots) == {}
    assert budget.estimation_safety_margin_percent == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_tokens": -1, "target_tokens": 0}, "max_tokens: must be >= 0, got -1"),
        ({"max_tokens": 10, "target_tokens": -1}, "target_tokens: must be >= 0, got -1"),
        ({"max_tokens": 10, "target_tokens": 11}, r"target_tokens: must be <= max_tokens \(10\)"),
        (
            {"max_tokens": 10, "target_tokens": 5, "output_reserve": -1},
            "output_reserve: must be >= 0, got -1",
        ),
        (
            {"max_tokens": 10, "target_tokens": 5, "output_reserve": 11},
            r"output_reserve: must be <= max_tokens \(10\), got 11",
        ),
        (
            {"max_tokens": 10, "target_tokens": 5, "estimation_safety_margin_percent": -0.1},
            "estimation_safety_margin_percent: must be >= 0.0",
        ),
        (
            {"max_tokens": 10, "target_tokens": 5, "estimation_safety_margin_percent": 100.5},
            "estimation_safety_margin_percent: must be <= 100.0",
        ),
        (
            {"max_tokens": 10, "target_tokens": 5, "estimation_safety_margin_percent": math.nan},
            "estimation_safety_margin_percent: must be finite",
        ),
        (
            {"max_tokens": 10, "target_tokens": 5, "reserved_slots": {"Message": -1}},
            r"reserved_slots\['Message'\]: must be >= 0, got -1",
        ),
        (
            {"max_tokens": 10, "target_tokens": 5, "reserved_slots": {"Message": 1, "message": 2}},
            "must not name the same kind twice",
        ),
        ({"max_tokens": 10.0, "target_tokens": 5}, "max_tokens: must be an integer"),
    ],
)
def test_budget_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(BudgetValidationError, match=message):
        ContextBudget(**kwargs)  # type: ignore[arg-type]


def test_budget_edges_are_valid() -> None:
    ContextBudget(max_tokens=0, target_tokens=0)
    ContextBudget(max_tokens=10, target_tokens=10, output_reserve=10)
    ContextBudget(max_tokens=10, target_tokens=1, estimation_safety_margin_percent=100)


def test_budget_value_semantics() -> None:
    a = ContextBudget(max_tokens=10, target_tokens=5, reserved_slots={"message": 1})
    b = ContextBudget(max_tokens=10, target_tokens=5, reserved_slots={"Message": 1})
    assert a == b
    assert hash(a) == hash(b)
    assert pickle.loads(pickle.dumps(a)) == a
    assert a.replace(target_tokens=6).target_tokens == 6
    with pytest.raises(AttributeError):
        a.max_tokens = 3  # type: ignore[misc]


# --------------------------------------------------------------------------- effective budget


@pytest.mark.parametrize(
    ("budget", "pinned", "expected"),
    [
        (ContextBudget(max_tokens=1000, target_tokens=500), 0, (1000, 500)),
        (ContextBudget(max_tokens=1000, target_tokens=150), 120, (880, 30)),
        (ContextBudget(max_tokens=1000, target_tokens=500, output_reserve=700), 0, (300, 300)),
        (ContextBudget(max_tokens=1000, target_tokens=100), 300, (700, 0)),
        (
            ContextBudget(max_tokens=1000, target_tokens=900, reserved_slots={"Memory": 2000}),
            0,
            (0, 0),
        ),
        (
            ContextBudget(
                max_tokens=1000,
                target_tokens=500,
                output_reserve=100,
                reserved_slots={"Message": 10},
                estimation_safety_margin_percent=10,
            ),
            120,
            (693, 333),
        ),
        (
            ContextBudget(max_tokens=1000, target_tokens=999, estimation_safety_margin_percent=100),
            0,
            (0, 0),
        ),
    ],
)
def test_effective_budget(budget: ContextBudget, pinned: int, expected: tuple[int, int]) -> None:
    effective = compute_effective_budget(budget, pinned)
    assert (effective.max_tokens, effective.target_tokens) == expected
    assert effective == budget.effective(pinned)
    assert effective.output_reserve == 0
    assert dict(effective.reserved_slots) == {}
    assert effective.estimation_safety_margin_percent == 0.0


def test_effective_budget_rejects_negative_pinned() -> None:
    with pytest.raises(BudgetValidationError, match="pinned_tokens: must be >= 0"):
        compute_effective_budget(ContextBudget(max_tokens=1, target_tokens=1), -1)


# --------------------------------------------------------------------------- small types


def test_scored_item_is_a_pair() -> None:
    item = ContextItem("x", tokens=1)
    scored = ScoredItem(item, 0.5)
    assert scored.item is item
    assert scored.score == 0.5
    it, score = scored
    assert score == 0.5
    assert it is item


@pytest.mark.parametrize(
    ("text", "member"),
    [
        ("throw", OverflowStrategy.THROW),
        ("Truncate", OverflowStrategy.TRUNCATE),
        (" PROCEED ", OverflowStrategy.PROCEED),
    ],
)
def test_overflow_strategy_parse(text: str, member: OverflowStrategy) -> None:
    assert OverflowStrategy.parse(text) is member
    assert OverflowStrategy.parse(member) is member


def test_overflow_strategy_parse_rejects_unknown() -> None:
    with pytest.raises(PipelineConfigError, match="overflow_strategy: must be one of"):
        OverflowStrategy.parse("explode")


def test_error_messages_name_field_value_rule() -> None:
    err = InvalidValueError("weights[2]", -1, "must be > 0")
    assert str(err) == "weights[2]: must be > 0, got -1"
    assert (err.field, err.value, err.rule) == ("weights[2]", -1, "must be > 0")
    assert pickle.loads(pickle.dumps(err)).field == "weights[2]"


# --------------------------------------------------------------------------- what errors carry


def test_item_errors_carry_the_rejected_value() -> None:
    naive = datetime(2024, 1, 1)
    far = datetime.max.replace(tzinfo=timezone(timedelta(hours=-1)))
    cases: list[tuple[dict[str, object], str, object, str]] = [
        ({"tags": "urgent"}, "tags", "urgent", "must be an iterable of strings (not a string)"),
        ({"metadata": [1]}, "metadata", [1], "must be a mapping of str to any value"),
        ({"timestamp": "2024"}, "timestamp", "2024", "must be a datetime"),
        (
            {"timestamp": naive},
            "timestamp",
            naive,
            "must be timezone-aware (naive datetimes are ambiguous)",
        ),
        (
            {"timestamp": far},
            "timestamp",
            far,
            "must be representable in UTC (within year 1..9999)",
        ),
    ]
    for kwargs, field, value, rule in cases:
        with pytest.raises(ItemValidationError) as info:
            ContextItem("x", tokens=1, **kwargs)  # type: ignore[arg-type]
        assert (info.value.field, info.value.value, info.value.rule) == (field, value, rule)


def test_a_tzinfo_with_a_bad_offset_is_named_with_the_timestamp() -> None:
    class Broken(tzinfo):
        def utcoffset(self, dt: datetime | None) -> timedelta:
            return timedelta(days=2)

    stamp = datetime(2024, 1, 1, tzinfo=Broken())
    with pytest.raises(ItemValidationError) as info:
        ContextItem("x", tokens=1, timestamp=stamp)
    assert (info.value.field, info.value.value) == ("timestamp", stamp)
    assert info.value.rule.startswith("must have a tzinfo whose utcoffset() is a timedelta")


def test_timestamp_micros_are_exact_integers() -> None:
    high = ContextItem("x", tokens=1, timestamp=datetime.max.replace(tzinfo=UTC))
    one = ContextItem("y", tokens=1, timestamp=datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC))
    # beyond 2**53: a float division would round it
    assert high.timestamp_micros == 253_402_300_799_999_999
    assert type(high.timestamp_micros) is int
    assert one.timestamp_micros == 1


def test_every_field_given_is_stored() -> None:
    stamp = datetime(2024, 1, 1, tzinfo=UTC)
    item = ContextItem(
        "x",
        tokens=4,
        kind="Document",
        source="Rag",
        priority=3,
        tags=["a"],
        metadata={"k": "v"},
        timestamp=stamp,
        future_relevance_hint=0.4,
        pinned=True,
        original_tokens=10,
    )
    assert (item.content, item.tokens, item.kind, item.source, item.priority) == (
        "x",
        4,
        ContextKind.DOCUMENT,
        ContextSource.RAG,
        3,
    )
    assert (item.tags, dict(item.metadata), item.timestamp) == (("a",), {"k": "v"}, stamp)
    assert (item.future_relevance_hint, item.pinned, item.original_tokens) == (0.4, True, 10)


def test_replace_changes_content_and_names_an_unknown_field_with_its_value() -> None:
    item = ContextItem("x", tokens=1, priority=2)
    changed = item.replace(content="y")
    assert (changed.content, changed.tokens, changed.priority) == ("y", 1, 2)
    with pytest.raises(ItemValidationError) as info:
        item.replace(colour="red")
    assert (info.value.field, info.value.value, info.value.rule) == (
        "colour",
        "red",
        "is not a ContextItem field",
    )


def test_a_prevalidated_item_equals_the_validated_one_field_by_field() -> None:
    # The adapters' hot path builds items without re-checking; it must build the same item.
    stamp = datetime(2024, 1, 1, 8, tzinfo=UTC)
    checked = ContextItem(
        "hello",
        tokens=7,
        kind="ToolOutput",
        source="Tool",
        tags=("t",),
        metadata={"k": 1},
        timestamp=stamp,
        pinned=True,
    )
    fast = ContextItem._prevalidated(
        "hello",
        tokens=7,
        kind=ContextKind.TOOL_OUTPUT,
        source=ContextSource.TOOL,
        tags=("t",),
        metadata=checked.metadata,
        timestamp=stamp,
        timestamp_micros=checked.timestamp_micros,  # type: ignore[arg-type]
        pinned=True,
    )
    fields = ContextItem.__slots__
    assert [getattr(fast, name) for name in fields] == [getattr(checked, name) for name in fields]
    assert repr(fast) == repr(checked)
    assert pickle.loads(pickle.dumps(fast)).timestamp_micros == checked.timestamp_micros


def test_immutability_errors_name_the_class_and_the_attribute() -> None:
    item = ContextItem("x", tokens=1)
    with pytest.raises(
        AttributeError, match=r"^ContextItem is immutable; cannot delete 'content'$"
    ):
        del item.content  # type: ignore[misc]
    budget = ContextBudget(max_tokens=1, target_tokens=1)
    with pytest.raises(
        AttributeError, match=r"^ContextBudget is immutable; cannot set 'max_tokens'$"
    ):
        budget.max_tokens = 2  # type: ignore[misc]


# --------------------------------------------------------------------------- reprs


def test_item_repr_shows_the_fields_that_differ_from_the_defaults() -> None:
    assert repr(ContextItem("hi", tokens=3)) == "ContextItem('hi', tokens=3)"
    full = ContextItem(
        "hi",
        tokens=3,
        kind="Memory",
        source="Rag",
        priority=0,
        tags=["a"],
        timestamp=datetime(2024, 1, 1, tzinfo=UTC),
        future_relevance_hint=0.5,
        pinned=True,
    )
    assert repr(full) == (
        "ContextItem('hi', tokens=3, kind='Memory', source='Rag', priority=0, tags=('a',), "
        "timestamp=2024-01-01T00:00:00+00:00, future_relevance_hint=0.5, pinned=True)"
    )


def test_item_repr_clips_long_content_to_sixty_characters() -> None:
    exact = "a" * 60
    longer = "b" * 61
    assert repr(ContextItem(exact, tokens=1)) == f"ContextItem({exact!r}, tokens=1)"
    assert repr(ContextItem(longer, tokens=1)) == f"ContextItem({'b' * 57 + '...'!r}, tokens=1)"


def test_budget_and_name_reprs() -> None:
    assert repr(ContextBudget(max_tokens=9, target_tokens=5)) == (
        "ContextBudget(max_tokens=9, target_tokens=5)"
    )
    full = ContextBudget(
        max_tokens=9,
        target_tokens=5,
        output_reserve=2,
        reserved_slots={"memory": 1},
        estimation_safety_margin_percent=2.5,
    )
    assert repr(full) == (
        "ContextBudget(max_tokens=9, target_tokens=5, output_reserve=2, "
        "reserved_slots={'memory': 1}, estimation_safety_margin_percent=2.5)"
    )
    assert repr(ContextKind("Memory")) == "ContextKind('Memory')"
    assert repr(ContextSource.RAG) == "ContextSource('Rag')"


# --------------------------------------------------------------------------- budget errors


def test_budget_errors_carry_the_field_value_and_rule() -> None:
    cases: list[tuple[dict[str, object], str, object, str]] = [
        ({"target_tokens": 11}, "target_tokens", 11, "must be <= max_tokens (10)"),
        (
            {"reserved_slots": [("Message", 1)]},
            "reserved_slots",
            [("Message", 1)],
            "must be a mapping of kind to integer",
        ),
        (
            {"reserved_slots": {" ": 1}},
            "reserved_slots",
            " ",
            "must not be empty or whitespace-only",
        ),
        (
            {"reserved_slots": {"Memory": 1, "MEMORY": 2}},
            "reserved_slots",
            "MEMORY",
            "must not name the same kind twice (case-insensitive)",
        ),
    ]
    for kwargs, field, value, rule in cases:
        arguments: dict[str, object] = {"max_tokens": 10, "target_tokens": 5}
        arguments.update(kwargs)
        with pytest.raises(BudgetValidationError) as info:
            ContextBudget(**arguments)  # type: ignore[arg-type]
        assert (info.value.field, info.value.value, info.value.rule) == (field, value, rule)


def test_budget_replace_names_an_unknown_field_with_its_value() -> None:
    budget = ContextBudget(max_tokens=10, target_tokens=5)
    with pytest.raises(BudgetValidationError) as info:
        budget.replace(zeta=1, alpha=2)
    assert (info.value.field, info.value.value, info.value.rule) == (
        "alpha",
        2,
        "is not a ContextBudget field",
    )


def test_budgets_differing_only_in_reserved_slots_are_unequal() -> None:
    plain = ContextBudget(max_tokens=10, target_tokens=5)
    reserved = ContextBudget(max_tokens=10, target_tokens=5, reserved_slots={"Memory": 1})
    assert plain != reserved
    assert reserved != reserved.replace(reserved_slots={"Memory": 2})
    assert reserved != reserved.replace(reserved_slots={"Message": 1})


def test_effective_budget_names_a_non_budget() -> None:
    with pytest.raises(BudgetValidationError) as info:
        compute_effective_budget(None, 5)  # type: ignore[arg-type]
    assert (info.value.field, info.value.value, info.value.rule) == (
        "budget",
        None,
        "must be a ContextBudget",
    )
    with pytest.raises(BudgetValidationError) as info:
        compute_effective_budget(100, 5)  # type: ignore[arg-type]
    assert info.value.value == 100


def test_a_safety_margin_under_one_percent_still_applies() -> None:
    budget = ContextBudget(
        max_tokens=1000, target_tokens=1000, estimation_safety_margin_percent=0.5
    )
    effective = compute_effective_budget(budget, 0)
    assert (effective.max_tokens, effective.target_tokens) == (995, 995)


def test_overflow_strategy_error_lists_the_choices() -> None:
    with pytest.raises(PipelineConfigError) as info:
        OverflowStrategy.parse("explode")
    assert (info.value.field, info.value.value, info.value.rule) == (
        "overflow_strategy",
        "explode",
        "must be one of: throw, truncate, proceed",
    )
