"""Reading, validating, writing and describing policy specs.

One reader serves both doors into the model: :meth:`Policy.from_dict` (file data) and the
spec constructors (Python values; ``__post_init__`` calls :func:`validate_component` and
friends). Both walk the declarations of :mod:`pycupel.policy.registry`, collect every problem
with its path, and only then raise one :class:`~pycupel.errors.PolicyError`.

Specs produced by the reader are created without re-running their own validation (it has
just been done), through :func:`_trusted`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pycupel.errors import PolicyError
from pycupel.model import OverflowStrategy
from pycupel.policy import registry
from pycupel.policy._values import (
    INVALID,
    FrozenMap,
    Invalid,
    Problems,
    SchemaDefs,
    Text,
    ValueType,
    key_path,
)
from pycupel.policy.model import (
    CountQuotaSpec,
    CurveSpec,
    Policy,
    QuotaSpec,
    ScorerSpec,
    SlicerSpec,
    StepWindowSpec,
)

_T = TypeVar("_T")

Spec = ScorerSpec | SlicerSpec | CurveSpec


_NO_WEIGHT_MESSAGE = "is not allowed here: an inner scorer has no weight"


class _NoWeight(ValueType):
    """The ``weight`` key where a scorer has no weight (the inner scorer of ``scaled``)."""

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> Invalid:
        return problems.add(path, _NO_WEIGHT_MESSAGE)

    def dump(self, value: Any) -> Any:  # pragma: no cover - never stored
        raise AssertionError("an inner scorer has no weight")

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:  # pragma: no cover - not in schema
        return {"not": {}}


_NO_WEIGHT = _NoWeight()


def _set_fields(instance: object, values: Mapping[str, Any]) -> None:
    """Set fields of a frozen dataclass (during its own validation, or when building one)."""
    for name, value in values.items():
        object.__setattr__(instance, name, value)


def _trusted(cls: type[_T], **values: Any) -> _T:
    """An instance of a frozen spec dataclass built from already-validated values."""
    instance = object.__new__(cls)
    _set_fields(instance, values)
    return instance


# --------------------------------------------------------------------------- depth


def spec_depth(spec: object) -> int:
    """Nesting depth of scorer/slicer specs (a spec with no nested spec has depth 1)."""
    if not isinstance(spec, ScorerSpec | SlicerSpec):
        return 0
    deepest = 0
    for value in spec.options.values():
        if isinstance(value, tuple):
            for element in value:
                deepest = max(deepest, spec_depth(element))
        else:
            deepest = max(deepest, spec_depth(value))
    return 1 + deepest


def _accept_built(spec: Spec, path: str, problems: Problems, depth: int) -> bool:
    """Whether an already-validated spec may sit at ``depth``; records the problem if not."""
    if depth + spec_depth(spec) - 1 > registry.MAX_NESTING_DEPTH:
        problems.add(path, f"nesting is deeper than {registry.MAX_NESTING_DEPTH} levels")
        return False
    return True


# --------------------------------------------------------------------------- components


def _resolve(
    category: registry.Category,
    raw: object,
    path: str,
    problems: Problems,
    *,
    allowed: tuple[str, ...] | None = None,
    hint: str = "",
) -> registry.ComponentDef | None:
    if not isinstance(raw, str):
        problems.bad(path, f"must be a string naming a {category.label}", raw)
        return None
    component = category.find(raw) if len(raw) <= 200 else None
    if component is None:
        problems.add(path, category.unknown_message(raw[:200]))
        return None
    if allowed is not None and component.name not in allowed:
        message = (
            f"{category.label} '{component.name}' is not allowed here "
            f"(allowed: {', '.join(allowed)})"
        )
        problems.add(path, f"{message}; {hint}" if hint else message)
        return None
    return component


def _read_component(
    category: registry.Category,
    raw: object,
    path: str,
    problems: Problems,
    depth: int,
    *,
    reserved: Mapping[str, ValueType] | None = None,
    allowed: tuple[str, ...] | None = None,
    hint: str = "",
) -> tuple[registry.ComponentDef, dict[str, Any], dict[str, Any]] | None:
    """Read ``{"type": ..., <reserved keys>, <options>}`` (or a bare type name).

    Returns the component, its option values and the reserved values, or None when any
    problem was found (all of them recorded).
    """
    reserved = reserved or {}
    if depth > registry.MAX_NESTING_DEPTH:
        problems.add(path, f"nesting is deeper than {registry.MAX_NESTING_DEPTH} levels")
        return None
    table: Mapping[Any, Any]
    if isinstance(raw, str):
        table = {"type": raw}
        type_path = path
    elif isinstance(raw, Mapping):
        table = raw
        type_path = key_path(path, "type")
    else:
        problems.bad(path, f"must be a {category.label} name or a table with a 'type' key", raw)
        return None

    ok = True
    component: registry.ComponentDef | None = None
    if "type" in table:
        component = _resolve(
            category, table["type"], type_path, problems, allowed=allowed, hint=hint
        )
        ok = component is not None
    else:
        problems.add(type_path, f"is required (the {category.label} type)")
        ok = False

    options: dict[str, Any] = {}
    extras: dict[str, Any] = {}
    for key, value in table.items():
        if not isinstance(key, str):
            problems.bad(path, "keys must be strings", key)
            ok = False
            continue
        if key == "type":
            continue
        entry_path = key_path(path, key)
        if key in reserved:
            read = reserved[key].read(value, entry_path, problems, depth)
            if isinstance(read, Invalid):
                ok = False
            else:
                extras[key] = read
            continue
        if component is None:
            continue  # the options of an unknown type cannot be judged
        option = component.option(key)
        if option is None:
            allowed_keys = ["type", *reserved, *(o.name for o in component.options)]
            problems.add(
                entry_path,
                f"unknown key for {category.label} '{component.name}' "
                f"({registry.suggest(key, allowed_keys)})",
            )
            ok = False
            continue
        read = option.type.read(value, entry_path, problems, depth)
        if isinstance(read, Invalid):
            ok = False
        else:
            options[key] = read

    if component is not None:
        for name in component.required_options:
            if name not in table:
                problems.add(
                    key_path(path, name), f"is required for {category.label} '{component.name}'"
                )
                ok = False
        if ok and component.check is not None:
            before = len(problems)
            component.check(options, path, problems)
            ok = len(problems) == before
    if not ok or component is None:
        return None
    return component, options, extras


def _ordered(component: registry.ComponentDef, options: Mapping[str, Any]) -> FrozenMap[Any]:
    """Options in declaration order (so saved files and reprs are stable)."""
    return FrozenMap({o.name: options[o.name] for o in component.options if o.name in options})


def read_scorer(
    raw: object, path: str, problems: Problems, depth: int, *, weighted: bool
) -> ScorerSpec | Invalid:
    """A scorer spec from a table, a bare type name, or an existing :class:`ScorerSpec`."""
    if isinstance(raw, ScorerSpec):
        if not weighted and raw.weight != 1.0:
            return problems.add(key_path(path, "weight"), _NO_WEIGHT_MESSAGE)
        return raw if _accept_built(raw, path, problems, depth) else INVALID
    result = _read_component(
        registry.SCORERS,
        raw,
        path,
        problems,
        depth,
        reserved={"weight": registry.WEIGHT if weighted else _NO_WEIGHT},
    )
    if result is None:
        return INVALID
    component, options, extras = result
    return _trusted(
        ScorerSpec,
        type=component.name,
        weight=extras.get("weight", 1.0),
        options=_ordered(component, options),
    )


def read_slicer(
    raw: object,
    path: str,
    problems: Problems,
    depth: int,
    *,
    allowed: tuple[str, ...] | None = None,
    hint: str = "",
) -> SlicerSpec | Invalid:
    """A slicer spec from a table, a bare type name, or an existing :class:`SlicerSpec`."""
    if isinstance(raw, SlicerSpec):
        if allowed is not None and raw.type not in allowed:
            _resolve(
                registry.SLICERS,
                raw.type,
                key_path(path, "type"),
                problems,
                allowed=allowed,
                hint=hint,
            )
            return INVALID
        return raw if _accept_built(raw, path, problems, depth) else INVALID
    result = _read_component(
        registry.SLICERS, raw, path, problems, depth, allowed=allowed, hint=hint
    )
    if result is None:
        return INVALID
    component, options, _ = result
    return _trusted(SlicerSpec, type=component.name, options=_ordered(component, options))


def read_curve(raw: object, path: str, problems: Problems, depth: int) -> CurveSpec | Invalid:
    """A decay curve spec from a table or an existing :class:`CurveSpec`."""
    if isinstance(raw, CurveSpec):
        return raw
    result = _read_component(registry.CURVES, raw, path, problems, depth)
    if result is None:
        return INVALID
    component, options, _ = result
    return _trusted(CurveSpec, type=component.name, options=_ordered(component, options))


def read_record(record: registry.RecordDef, raw: object, path: str, problems: Problems) -> Any:
    """One record (quota entry, count entry, step window) from a table or an instance."""
    if isinstance(raw, record.cls):
        return raw
    if not isinstance(raw, Mapping):
        return problems.bad(path, f"must be a table ({record.label})", raw)
    values = _read_record_values(record, raw, path, problems)
    if values is None:
        return INVALID
    return _trusted(record.cls, **values)


def _read_record_values(
    record: registry.RecordDef, raw: Mapping[Any, Any], path: str, problems: Problems
) -> dict[str, Any] | None:
    ok = True
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            problems.bad(path, "keys must be strings", key)
            ok = False
            continue
        definition = record.field_def(key)
        entry_path = key_path(path, key)
        if definition is None:
            names = [f.name for f in record.fields]
            problems.add(
                entry_path, f"unknown key for a {record.label} ({registry.suggest(key, names)})"
            )
            ok = False
            continue
        read = definition.type.read(value, entry_path, problems, 0)
        if isinstance(read, Invalid):
            ok = False
        else:
            values[key] = read
    for definition in record.fields:
        if definition.required and definition.name not in raw:
            problems.add(key_path(path, definition.name), f"is required for a {record.label}")
            ok = False
    if ok and record.check is not None:
        before = len(problems)
        record.check(values, path, problems)
        ok = len(problems) == before
    if not ok:
        return None
    return {f.name: values.get(f.name, f.default) for f in record.fields}


# --------------------------------------------------------------------------- policies


def _read_policy_fields(data: object, problems: Problems) -> dict[str, Any] | None:
    if not isinstance(data, Mapping):
        problems.bad("", "a policy must be a table (a JSON object)", data)
        return None
    by_name = {f.name: f for f in registry.POLICY_FIELDS}
    values: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str):
            problems.bad("", "keys must be strings", key)
            continue
        if key == registry.SCHEMA_KEY:
            Text(max_length=2000).read(value, key, problems, 0)
            continue
        definition = by_name.get(key)
        if definition is None:
            problems.add(key_path("", key), f"unknown key ({registry.suggest(key, list(by_name))})")
            continue
        read = definition.type.read(value, key, problems, 0)
        if not isinstance(read, Invalid):
            values[key] = read
    for definition in registry.POLICY_FIELDS:
        if definition.required and definition.name not in data:
            problems.add(definition.name, "is required")
    if problems:
        return None
    return {
        "name": values["name"],
        "description": values.get("description", ""),
        "scorers": values["scorers"],
        "slicer": values.get("slicer") or _trusted(SlicerSpec, type="greedy", options=FrozenMap()),
        "placer": values.get("placer", "chronological"),
        "deduplicate": values.get("deduplicate", True),
        "overflow_strategy": OverflowStrategy(values.get("overflow_strategy", "throw")),
        "shrink": values.get("shrink"),
    }


def read_policy(data: object, source: str) -> Policy:
    """A validated :class:`Policy` from file data; :class:`PolicyError` lists every problem."""
    problems = Problems()
    values = _read_policy_fields(data, problems)
    if values is None:
        raise PolicyError(source, problems.items)
    return _trusted(Policy, **values)


def validate_policy(policy: Policy) -> None:
    """Validate (and normalise in place) a :class:`Policy` built in Python."""
    problems = Problems()
    raw: dict[str, Any] = {
        "name": policy.name,
        "description": policy.description,
        "scorers": policy.scorers,
        "slicer": policy.slicer,
        "placer": policy.placer,
        "deduplicate": policy.deduplicate,
        "overflow_strategy": policy.overflow_strategy,
    }
    if policy.shrink is not None:
        raw["shrink"] = policy.shrink
    values = _read_policy_fields(raw, problems)
    if values is None:
        raise PolicyError("Policy", problems.items)
    _set_fields(policy, values)


def validate_component(spec: Spec) -> None:
    """Validate (and normalise in place) a scorer/slicer/curve spec built in Python."""
    problems = Problems()
    options: object = spec.options  # whatever the caller passed
    label = type(spec).__name__
    if not isinstance(options, Mapping):
        problems.bad("options", "must be a mapping of option name to value", options)
        raise PolicyError(label, problems.items)
    category = registry.SCORERS if isinstance(spec, ScorerSpec) else registry.SLICERS
    if isinstance(spec, CurveSpec):
        category = registry.CURVES
    table: dict[Any, Any] = {"type": spec.type}
    reserved: dict[str, ValueType] = {}
    if isinstance(spec, ScorerSpec):
        table["weight"] = spec.weight
        reserved["weight"] = registry.WEIGHT
    for key, value in options.items():
        if key in ("type", "weight"):
            problems.add(key_path("options", str(key)), "is not an option (it is a spec field)")
        else:
            table[key] = value
    if problems:
        raise PolicyError(label, problems.items)
    result = _read_component(category, table, "", problems, 1, reserved=reserved)
    if result is None:
        raise PolicyError(label, problems.items)
    component, values, extras = result
    _set_fields(spec, {"type": component.name, "options": _ordered(component, values)})
    if "weight" in extras:
        _set_fields(spec, {"weight": extras["weight"]})


def _record_def(instance: object) -> registry.RecordDef:
    if isinstance(instance, QuotaSpec):
        return registry.QUOTA_ENTRY
    if isinstance(instance, CountQuotaSpec):
        return registry.COUNT_ENTRY
    return registry.STEP_WINDOW


def validate_record(instance: QuotaSpec | CountQuotaSpec | StepWindowSpec) -> None:
    """Validate (and normalise in place) a record built in Python."""
    record = _record_def(instance)
    raw: dict[str, Any] = {}
    for definition in record.fields:
        value = getattr(instance, definition.name)
        if value is not None or definition.required:
            raw[definition.name] = value
    problems = Problems()
    values = _read_record_values(record, raw, "", problems)
    if values is None:
        raise PolicyError(record.cls.__name__, problems.items)
    _set_fields(instance, values)


# --------------------------------------------------------------------------- writing


def dump_policy(policy: Policy) -> dict[str, Any]:
    """The canonical file form of a policy (see :meth:`Policy.to_dict`)."""
    by_name = {f.name: f for f in registry.POLICY_FIELDS}
    return {
        "name": policy.name,
        "description": policy.description,
        "scorers": by_name["scorers"].type.dump(policy.scorers),
        "slicer": dump_component(policy.slicer),
        "placer": policy.placer,
        "deduplicate": policy.deduplicate,
        "overflow_strategy": policy.overflow_strategy.value,
        **({"shrink": by_name["shrink"].type.dump(policy.shrink)} if policy.shrink else {}),
    }


def _component_of(spec: Spec) -> registry.ComponentDef:
    if isinstance(spec, ScorerSpec):
        return registry.SCORERS.get(spec.type)
    if isinstance(spec, SlicerSpec):
        return registry.SLICERS.get(spec.type)
    return registry.CURVES.get(spec.type)


def _dump_options(component: registry.ComponentDef, options: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for option in component.options:
        if option.name in options:
            out[option.name] = option.type.dump(options[option.name])
    return out


def dump_scorer(spec: ScorerSpec, *, weighted: bool) -> Any:
    """A scorer's file form: a table (always, when weighted) or its bare type name."""
    options = _dump_options(registry.SCORERS.get(spec.type), spec.options)
    if not weighted and not options:
        return spec.type
    table: dict[str, Any] = {"type": spec.type}
    if weighted:
        table["weight"] = float(spec.weight)
    table.update(options)
    return table


def dump_component(spec: Spec) -> Any:
    """A slicer's or curve's file form: its bare type name when it has no options."""
    if isinstance(spec, ScorerSpec):
        return dump_scorer(spec, weighted=False)
    options = _dump_options(_component_of(spec), spec.options)
    if not options:
        return spec.type
    return {"type": spec.type, **options}


def dump_record(record: registry.RecordDef, instance: Any) -> dict[str, Any]:
    """A record's file form (fields whose value is ``None`` are left out)."""
    out: dict[str, Any] = {}
    for definition in record.fields:
        value = getattr(instance, definition.name)
        if value is not None:
            out[definition.name] = definition.type.dump(value)
    return out


# --------------------------------------------------------------------------- describing


def describe_component(spec: Spec) -> str:
    """``knapsack(bucket_size=100)``, ``scaled(inner=priority)``, ``greedy``."""
    component = _component_of(spec)
    parts = [
        f"{option.name}={option.type.describe(spec.options[option.name])}"
        for option in component.options
        if option.name in spec.options
    ]
    return f"{spec.type}({', '.join(parts)})" if parts else spec.type


def describe_record(record: registry.RecordDef, instance: Any) -> str:
    """``kind=Message, require=30, cap=50``."""
    parts = []
    for definition in record.fields:
        value = getattr(instance, definition.name)
        if value is not None:
            parts.append(f"{definition.name}={definition.type.describe(value)}")
    return ", ".join(parts)
