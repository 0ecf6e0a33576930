"""The JSON wire format of the diagnostics (the specification's shape).

* Reasons: ``{"reason": "BudgetExceeded", "item_tokens": 2048, "available_tokens": 512}``;
  inclusion reasons carry only ``{"reason": "Scored"}``.
* Events: ``{"stage": "Score", "duration_ms": 12.4, "item_count": 47}`` (``message`` only when
  set).
* Items: objects with ``content``, ``tokens``, ``kind`` and the other fields only when set (see
  :mod:`pycupel.itemio`); timestamps are ISO 8601 UTC.
* Overflow event: ``tokens_over_budget``, ``overflowing_items``, and ``budget`` with
  ``maxTokens``/``targetTokens`` (other budget fields only when not at their default).
* A chat fit's why (:mod:`pycupel.diagnostics.why`): in the entry's item ``metadata`` under
  ``"why"``, ``{"cause": "relevant", "text": "relevant to the query (score 1.572)"}`` with
  the why's other fields when set (``beside``, ``version``, ``whole_tokens``,
  ``free_tokens``); the entry itself keeps the specification's three fields. Reading takes
  it back out of the metadata into :attr:`SelectionReport.why
  <pycupel.diagnostics.SelectionReport.why>` (``text`` is recomputed, not read).

Absent fields are omitted, never written as null. Non-finite floats (a NaN score) are written
as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``. Reading is strict about shape and
types (an :class:`~pycupel.errors.InputFormatError` names the place), but tolerant where the
specification asks: an unknown exclusion reason becomes an
:class:`~pycupel.diagnostics.UnknownExclusionReason` keeping its name and fields, and an unknown
stage is kept as its string.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NoReturn, TypeVar

from pycupel._checks import check_int
from pycupel.diagnostics.events import OverflowEvent, PipelineStage, TraceEvent
from pycupel.diagnostics.reasons import (
    BudgetExceeded,
    Deduplicated,
    ExclusionReason,
    Filtered,
    InclusionReason,
    NegativeTokens,
    PinnedOverride,
    QuotaCapExceeded,
    QuotaRequireDisplaced,
    ScoredTooLow,
    UnknownExclusionReason,
)
from pycupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport
from pycupel.diagnostics.why import WHY_KEY, Why
from pycupel.errors import InputFormatError, InvalidValueError, PipelineConfigError
from pycupel.itemio import (
    DEFAULT_MAX_BYTES,
    decode_float,
    dumps_json,
    encode_float,
    item_from_dict,
    item_to_dict,
    loads_json,
    rule_and_value,
)
from pycupel.model import ContextBudget, ContextItem, ContextKind
from pycupel.slicers.base import (
    CountRequirementShortfall,
    PackingStats,
    SolverStats,
    TokenRequirementShortfall,
)

__all__ = [
    "budget_from_dict",
    "budget_to_dict",
    "dumps",
    "event_from_dict",
    "event_to_dict",
    "excluded_from_dict",
    "excluded_to_dict",
    "exclusion_reason_from_dict",
    "exclusion_reason_to_dict",
    "included_from_dict",
    "included_to_dict",
    "loads",
    "overflow_from_dict",
    "overflow_to_dict",
    "report_from_dict",
    "report_to_dict",
]

# Field names and JSON types of each known exclusion reason, in wire order.
_REASON_FIELDS: Mapping[str, tuple[type[ExclusionReason], tuple[tuple[str, type], ...]]] = (
    MappingProxyType(
        {
            "BudgetExceeded": (BudgetExceeded, (("item_tokens", int), ("available_tokens", int))),
            "ScoredTooLow": (ScoredTooLow, (("score", float), ("threshold", float))),
            "Deduplicated": (Deduplicated, (("deduplicated_against", str),)),
            "QuotaCapExceeded": (QuotaCapExceeded, (("kind", str), ("cap", int), ("actual", int))),
            "QuotaRequireDisplaced": (QuotaRequireDisplaced, (("displaced_by_kind", str),)),
            "NegativeTokens": (NegativeTokens, (("tokens", int),)),
            "PinnedOverride": (PinnedOverride, (("displaced_by", str),)),
            "Filtered": (Filtered, (("filter_name", str),)),
        }
    )
)
_STAGES = MappingProxyType({stage.value: stage for stage in PipelineStage})
_INCLUSION = MappingProxyType({reason.value: reason for reason in InclusionReason})


def dumps(value: object, *, indent: int | None = None) -> str:
    """Serialise a wire dict to strict JSON text."""
    return dumps_json(value, indent=indent)


def loads(
    text: str | bytes, *, source: str = "<report>", max_bytes: int = DEFAULT_MAX_BYTES
) -> Any:
    """Parse strict JSON text (duplicate keys and NaN literals are errors).

    At most ``max_bytes`` bytes (UTF-8; default 256 MiB) and 64 levels of nesting are read.

    Raises:
        InputFormatError: not JSON, over a limit.
        PipelineConfigError: ``text`` is not a str or bytes, or ``max_bytes`` is not positive.
    """
    limit = check_int(PipelineConfigError, "max_bytes", max_bytes, minimum=1)
    if isinstance(text, str):
        too_large = len(text) > limit or len(text.encode("utf-8", "surrogatepass")) > limit
    elif isinstance(text, bytes):
        too_large = len(text) > limit
    else:
        raise PipelineConfigError("text", text, "must be a str or bytes")
    if too_large:
        raise InputFormatError(
            source, "", f"the input is larger than {limit} bytes (the max_bytes limit)"
        )
    return loads_json(text, source=source)


# --------------------------------------------------------------------------- writing


def exclusion_reason_to_dict(reason: ExclusionReason) -> dict[str, Any]:
    """``{"reason": name, **fields}``."""
    if isinstance(reason, UnknownExclusionReason):
        return {"reason": reason.name, **reason.fields}
    _, fields = _REASON_FIELDS[reason.name]
    data: dict[str, Any] = {"reason": reason.name}
    for name, kind in fields:
        value = getattr(reason, name)
        data[name] = encode_float(value) if kind is float else value
    return data


def event_to_dict(event: TraceEvent) -> dict[str, Any]:
    data: dict[str, Any] = {
        "stage": str(event.stage),
        "duration_ms": encode_float(event.duration_ms),
        "item_count": event.item_count,
    }
    if event.message is not None:
        data["message"] = event.message
    return data


def included_to_dict(entry: IncludedItem, why: Why | None = None) -> dict[str, Any]:
    """The entry's JSON; a ``why`` goes in its item's metadata (see the module docs)."""
    return {
        "item": _item_with_why(entry.item, entry.score, why),
        "score": encode_float(entry.score),
        "reason": {"reason": entry.reason.value},
    }


def excluded_to_dict(entry: ExcludedItem, why: Why | None = None) -> dict[str, Any]:
    """The entry's JSON; a ``why`` goes in its item's metadata (see the module docs)."""
    return {
        "item": _item_with_why(entry.item, entry.score, why),
        "score": encode_float(entry.score),
        "reason": exclusion_reason_to_dict(entry.reason),
    }


def _item_with_why(item: ContextItem, score: float, why: Why | None) -> dict[str, Any]:
    data = item_to_dict(item)
    if why is not None:
        told = {**why.to_dict(), "text": why.describe(item, score)}
        data["metadata"] = {**data.get("metadata", {}), WHY_KEY: told}
    return data


def budget_to_dict(budget: ContextBudget) -> dict[str, Any]:
    """``maxTokens`` and ``targetTokens``, plus the other fields when not at their default."""
    data: dict[str, Any] = {"maxTokens": budget.max_tokens, "targetTokens": budget.target_tokens}
    if budget.output_reserve:
        data["outputReserve"] = budget.output_reserve
    if budget.reserved_slots:
        data["reservedSlots"] = {kind.value: n for kind, n in budget.reserved_slots.items()}
    if budget.estimation_safety_margin_percent:
        data["estimationSafetyMarginPercent"] = budget.estimation_safety_margin_percent
    return data


def overflow_to_dict(event: OverflowEvent) -> dict[str, Any]:
    return {
        "tokens_over_budget": event.tokens_over_budget,
        "overflowing_items": [item_to_dict(item) for item in event.overflowing_items],
        "budget": budget_to_dict(event.budget),
    }


def _shortfall_to_dict(shortfall: CountRequirementShortfall) -> dict[str, Any]:
    return {
        "kind": shortfall.kind.value,
        "required_count": shortfall.required_count,
        "satisfied_count": shortfall.satisfied_count,
    }


def _token_shortfall_to_dict(shortfall: TokenRequirementShortfall) -> dict[str, Any]:
    return {
        "kind": shortfall.kind.value,
        "required_tokens": shortfall.required_tokens,
        "satisfied_tokens": shortfall.satisfied_tokens,
    }


def _packing_to_dict(stats: PackingStats) -> dict[str, Any]:
    return {
        "selected_count": stats.selected_count,
        "total_tokens": stats.total_tokens,
        "total_score": encode_float(stats.total_score),
        "skipped_count": stats.skipped_count,
        "budget_reached": stats.budget_reached,
        "stopped_early": stats.stopped_early,
    }


def _solver_to_dict(stats: SolverStats) -> dict[str, Any]:
    data: dict[str, Any] = {"status": stats.status, "objective": encode_float(stats.objective)}
    if stats.bound is not None:
        data["bound"] = encode_float(stats.bound)
    if stats.gap is not None:
        data["gap"] = encode_float(stats.gap)
    data["seconds"] = encode_float(stats.seconds)
    if stats.message:
        data["message"] = stats.message
    return data


def report_to_dict(report: SelectionReport) -> dict[str, Any]:
    """The report in the specification's JSON shape; empty optional parts are omitted."""
    why = report.why
    data: dict[str, Any] = {
        "events": [event_to_dict(event) for event in report.events],
        "included": [included_to_dict(entry, why.get(entry.item)) for entry in report.included],
        "excluded": [excluded_to_dict(entry, why.get(entry.item)) for entry in report.excluded],
        "total_candidates": report.total_candidates,
        "total_tokens_considered": report.total_tokens_considered,
    }
    if report.count_requirement_shortfalls:
        data["count_requirement_shortfalls"] = [
            _shortfall_to_dict(s) for s in report.count_requirement_shortfalls
        ]
    if report.token_requirement_shortfalls:
        data["token_requirement_shortfalls"] = [
            _token_shortfall_to_dict(s) for s in report.token_requirement_shortfalls
        ]
    if report.packing is not None:
        data["packing"] = _packing_to_dict(report.packing)
    if report.solver is not None:
        data["solver"] = _solver_to_dict(report.solver)
    return data


# --------------------------------------------------------------------------- reading


class _Reader:
    """Typed field access on one JSON object, raising errors that name the place."""

    __slots__ = ("data", "location", "source")

    def __init__(
        self,
        data: object,
        *,
        source: str,
        location: str,
        required: tuple[str, ...],
        optional: tuple[str, ...] = (),
        open_ended: bool = False,
    ) -> None:
        self.source = source
        self.location = location
        if not isinstance(data, Mapping):
            self.fail("", f"must be a JSON object, got {type(data).__name__}")
        self.data: Mapping[str, Any] = data
        for key in required:
            if key not in data:
                self.fail(key, "is required")
        if not open_ended:
            allowed = set(required) | set(optional)
            for key in data:
                if key not in allowed:
                    self.fail(str(key), f"unknown field (expected: {', '.join(allowed)})")

    def where(self, key: str) -> str:
        if not key:
            return self.location
        return f"{self.location}.{key}" if self.location else key

    def fail(self, key: str, detail: str) -> NoReturn:
        raise InputFormatError(self.source, self.where(key), detail)

    def has(self, key: str) -> bool:
        return key in self.data

    def get_int(self, key: str) -> int:
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"must be an integer, got {value!r}")
        return value

    def get_float(self, key: str) -> float:
        try:
            return decode_float(self.data[key], key)
        except InvalidValueError as exc:
            self.fail(key, rule_and_value(exc))

    def get_str(self, key: str) -> str:
        value = self.data[key]
        if not isinstance(value, str):
            self.fail(key, f"must be a string, got {value!r}")
        return value

    def get_bool(self, key: str) -> bool:
        value = self.data[key]
        if not isinstance(value, bool):
            self.fail(key, f"must be true or false, got {value!r}")
        return value

    def get_list(self, key: str) -> list[Any]:
        value = self.data[key]
        if not isinstance(value, list):
            self.fail(key, f"must be an array, got {type(value).__name__}")
        return value

    def get_item(self, key: str) -> ContextItem:
        return item_from_dict(self.data[key], source=self.source, location=self.where(key))


def exclusion_reason_from_dict(
    data: object, *, source: str = "<report>", location: str = "reason"
) -> ExclusionReason:
    """Read an exclusion reason; an unknown variant becomes an UnknownExclusionReason."""
    head = _Reader(data, source=source, location=location, required=("reason",), open_ended=True)
    name = head.get_str("reason")
    known = _REASON_FIELDS.get(name)
    if known is None:
        extra = {key: value for key, value in head.data.items() if key != "reason"}
        return UnknownExclusionReason(name, extra)
    cls, fields = known
    reader = _Reader(
        data, source=source, location=location, required=("reason", *(f for f, _ in fields))
    )
    readers: dict[type, Callable[[str], object]] = {
        int: reader.get_int,
        float: reader.get_float,
        str: reader.get_str,
    }
    values = [readers[kind](field) for field, kind in fields]
    return cls(*values)


def event_from_dict(
    data: object, *, source: str = "<report>", location: str = "event"
) -> TraceEvent:
    """Read a trace event; an unknown stage name is kept as a plain string."""
    reader = _Reader(
        data,
        source=source,
        location=location,
        required=("stage", "duration_ms", "item_count"),
        optional=("message",),
    )
    stage_name = reader.get_str("stage")
    stage: PipelineStage | str = _STAGES.get(stage_name, stage_name)
    message = reader.get_str("message") if reader.has("message") else None
    return TraceEvent(stage, reader.get_float("duration_ms"), reader.get_int("item_count"), message)


def included_from_dict(
    data: object, *, source: str = "<report>", location: str = "included"
) -> IncludedItem:
    """An included entry (a why in its item's metadata stays there: see
    :func:`report_from_dict`)."""
    reader = _Reader(data, source=source, location=location, required=("item", "score", "reason"))
    reason_reader = _Reader(
        reader.data["reason"], source=source, location=reader.where("reason"), required=("reason",)
    )
    name = reason_reader.get_str("reason")
    reason = _INCLUSION.get(name)
    if reason is None:
        known = ", ".join(_INCLUSION)
        reason_reader.fail("reason", f"unknown inclusion reason {name!r} (known: {known})")
    return IncludedItem(reader.get_item("item"), reader.get_float("score"), reason)


def excluded_from_dict(
    data: object, *, source: str = "<report>", location: str = "excluded"
) -> ExcludedItem:
    """An excluded entry (a why in its item's metadata stays there: see
    :func:`report_from_dict`)."""
    reader = _Reader(data, source=source, location=location, required=("item", "score", "reason"))
    reason = exclusion_reason_from_dict(
        reader.data["reason"], source=source, location=reader.where("reason")
    )
    return ExcludedItem(reader.get_item("item"), reader.get_float("score"), reason)


def budget_from_dict(
    data: object, *, source: str = "<report>", location: str = "budget"
) -> ContextBudget:
    reader = _Reader(
        data,
        source=source,
        location=location,
        required=("maxTokens", "targetTokens"),
        optional=("outputReserve", "reservedSlots", "estimationSafetyMarginPercent"),
    )
    kwargs: dict[str, Any] = {
        "max_tokens": reader.get_int("maxTokens"),
        "target_tokens": reader.get_int("targetTokens"),
    }
    if reader.has("outputReserve"):
        kwargs["output_reserve"] = reader.get_int("outputReserve")
    if reader.has("reservedSlots"):
        slots = reader.data["reservedSlots"]
        if not isinstance(slots, Mapping):
            reader.fail("reservedSlots", "must be an object of kind to integer")
        kwargs["reserved_slots"] = slots
    if reader.has("estimationSafetyMarginPercent"):
        kwargs["estimation_safety_margin_percent"] = reader.get_float(
            "estimationSafetyMarginPercent"
        )
    try:
        return ContextBudget(**kwargs)
    except InvalidValueError as exc:
        reader.fail("", f"{exc}")


def overflow_from_dict(
    data: object, *, source: str = "<report>", location: str = "overflow"
) -> OverflowEvent:
    reader = _Reader(
        data,
        source=source,
        location=location,
        required=("tokens_over_budget", "overflowing_items", "budget"),
    )
    items = tuple(
        item_from_dict(entry, source=source, location=reader.where(f"overflowing_items[{i}]"))
        for i, entry in enumerate(reader.get_list("overflowing_items"))
    )
    budget = budget_from_dict(reader.data["budget"], source=source, location=reader.where("budget"))
    return OverflowEvent(reader.get_int("tokens_over_budget"), items, budget)


def _shortfall_from_dict(data: object, source: str, location: str) -> CountRequirementShortfall:
    reader = _Reader(
        data,
        source=source,
        location=location,
        required=("kind", "required_count", "satisfied_count"),
    )
    kind_name = reader.get_str("kind")
    if not kind_name.strip():
        reader.fail("kind", "must be a non-blank string")
    return CountRequirementShortfall(
        ContextKind(kind_name), reader.get_int("required_count"), reader.get_int("satisfied_count")
    )


def _token_shortfall_from_dict(
    data: object, source: str, location: str
) -> TokenRequirementShortfall:
    reader = _Reader(
        data,
        source=source,
        location=location,
        required=("kind", "required_tokens", "satisfied_tokens"),
    )
    kind_name = reader.get_str("kind")
    if not kind_name.strip():
        reader.fail("kind", "must be a non-blank string")
    return TokenRequirementShortfall(
        ContextKind(kind_name),
        reader.get_int("required_tokens"),
        reader.get_int("satisfied_tokens"),
    )


def _packing_from_dict(data: object, source: str, location: str) -> PackingStats:
    reader = _Reader(
        data,
        source=source,
        location=location,
        required=(
            "selected_count",
            "total_tokens",
            "total_score",
            "skipped_count",
            "budget_reached",
            "stopped_early",
        ),
    )
    return PackingStats(
        selected_count=reader.get_int("selected_count"),
        total_tokens=reader.get_int("total_tokens"),
        total_score=reader.get_float("total_score"),
        skipped_count=reader.get_int("skipped_count"),
        budget_reached=reader.get_bool("budget_reached"),
        stopped_early=reader.get_bool("stopped_early"),
    )


def _solver_from_dict(data: object, source: str, location: str) -> SolverStats:
    reader = _Reader(
        data,
        source=source,
        location=location,
        required=("status", "objective", "seconds"),
        optional=("bound", "gap", "message"),
    )
    return SolverStats(
        status=reader.get_str("status"),
        objective=reader.get_float("objective"),
        bound=reader.get_float("bound") if reader.has("bound") else None,
        gap=reader.get_float("gap") if reader.has("gap") else None,
        seconds=reader.get_float("seconds"),
        message=reader.get_str("message") if reader.has("message") else "",
    )


def report_from_dict(data: object, *, source: str = "<report>") -> SelectionReport:
    """Read a report from its JSON shape.

    The totals are read as written (a report from elsewhere is not recomputed), and the
    excluded list keeps the order it was written in.
    """
    reader = _Reader(
        data,
        source=source,
        location="",
        required=("events", "included", "excluded", "total_candidates", "total_tokens_considered"),
        optional=(
            "count_requirement_shortfalls",
            "token_requirement_shortfalls",
            "packing",
            "solver",
        ),
    )
    events = tuple(
        event_from_dict(entry, source=source, location=f"events[{i}]")
        for i, entry in enumerate(reader.get_list("events"))
    )
    why: dict[ContextItem, Why] = {}
    included = tuple(
        _with_why(included_from_dict(told, source=source, location=f"included[{i}]"), found, why)
        for i, told, found in map(_take_why, enumerate(reader.get_list("included")))
    )
    excluded = tuple(
        _with_why(excluded_from_dict(told, source=source, location=f"excluded[{i}]"), found, why)
        for i, told, found in map(_take_why, enumerate(reader.get_list("excluded")))
    )
    shortfalls: tuple[CountRequirementShortfall, ...] = ()
    if reader.has("count_requirement_shortfalls"):
        shortfalls = tuple(
            _shortfall_from_dict(entry, source, f"count_requirement_shortfalls[{i}]")
            for i, entry in enumerate(reader.get_list("count_requirement_shortfalls"))
        )
    token_shortfalls: tuple[TokenRequirementShortfall, ...] = ()
    if reader.has("token_requirement_shortfalls"):
        token_shortfalls = tuple(
            _token_shortfall_from_dict(entry, source, f"token_requirement_shortfalls[{i}]")
            for i, entry in enumerate(reader.get_list("token_requirement_shortfalls"))
        )
    packing = (
        _packing_from_dict(reader.data["packing"], source, "packing")
        if reader.has("packing")
        else None
    )
    solver = (
        _solver_from_dict(reader.data["solver"], source, "solver") if reader.has("solver") else None
    )
    return SelectionReport(
        events=events,
        included=included,
        excluded=excluded,
        total_candidates=reader.get_int("total_candidates"),
        total_tokens_considered=reader.get_int("total_tokens_considered"),
        count_requirement_shortfalls=shortfalls,
        token_requirement_shortfalls=token_shortfalls,
        packing=packing,
        solver=solver,
        why=MappingProxyType(why),
    )


def _take_why(numbered: tuple[int, object]) -> tuple[int, object, Why | None]:
    """An entry's JSON without the why in its item's metadata, and that why (or None: the
    entry as it is when its metadata holds no why of ours)."""
    index, data = numbered
    if not isinstance(data, Mapping):
        return index, data, None
    item = data.get("item")
    if not isinstance(item, Mapping):
        return index, data, None
    metadata = item.get("metadata")
    if not isinstance(metadata, Mapping) or WHY_KEY not in metadata:
        return index, data, None
    why = Why.from_dict(metadata[WHY_KEY])
    if why is None:
        return index, data, None
    item_data: dict[str, Any] = {key: value for key, value in item.items() if key != "metadata"}
    rest = {key: value for key, value in metadata.items() if key != WHY_KEY}
    if rest:
        item_data["metadata"] = rest
    return index, {**data, "item": item_data}, why


_Entry = TypeVar("_Entry", IncludedItem, ExcludedItem)


def _with_why(entry: _Entry, why: Why | None, found: dict[ContextItem, Why]) -> _Entry:
    if why is not None:
        found[entry.item] = why
    return entry
