"""The JSON Schema of the policy file format, generated from the registry.

:func:`policy_json_schema` walks the same declarations the reader uses
(:mod:`pycupel.policy.registry`), so the schema cannot drift from the code. The copy shipped
in ``pycupel/schemas/policy.schema.json`` (for editors and other tools) is checked against it
by the test suite; regenerate it with
``pycupel policy schema > src/pycupel/schemas/policy.schema.json``.

What the schema cannot say, the reader still checks: finiteness of numbers (JSON has no NaN,
but some parsers accept it), cross-field rules (``require <= cap``, sum of requires <= 100,
unique kinds, increasing step windows, ``clock`` xor ``reference_time``), positive durations
given as strings, the nesting limit, and that an integer is written without a fraction
(JSON Schema counts ``1.0`` as an integer; the reader refuses it, as TOML would).
"""

from __future__ import annotations

from typing import Any

from pycupel.policy import registry
from pycupel.policy._values import SchemaDefs

__all__ = [
    "SCHEMA_DIALECT",
    "curve_ref",
    "policy_json_schema",
    "record_ref",
    "scorer_ref",
    "slicer_ref",
]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def policy_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a policy file, as a fresh dict."""
    defs: SchemaDefs = {}
    properties: dict[str, Any] = {
        registry.SCHEMA_KEY: {"type": "string", "description": "Optional schema URL for editors."}
    }
    for definition in registry.POLICY_FIELDS:
        properties[definition.name] = _property(definition, defs)
    return {
        "$schema": SCHEMA_DIALECT,
        "title": "pycupel policy",
        "description": (
            "A pycupel pipeline policy: scorers, slicer, placer, deduplication and overflow "
            "strategy. Type names are case-insensitive, with optional '-' or '_' between words."
        ),
        "type": "object",
        "required": [d.name for d in registry.POLICY_FIELDS if d.required],
        "properties": properties,
        "additionalProperties": False,
        "$defs": defs,
    }


def _property(definition: registry.OptionDef, defs: SchemaDefs) -> dict[str, Any]:
    out = dict(definition.type.schema(defs))
    out["description"] = definition.description
    if definition.default is not None:
        out["default"] = definition.type.dump(definition.default)
    return out


def _register(defs: SchemaDefs, name: str, build: Any) -> dict[str, Any]:
    """Add ``defs[name]`` (built once; the placeholder stops recursive definitions looping)."""
    if name not in defs:
        defs[name] = {}
        defs[name] = build()
    return {"$ref": f"#/$defs/{name}"}


def _component_schema(
    category: registry.Category,
    defs: SchemaDefs,
    *,
    reserved: dict[str, dict[str, Any]],
    allowed: tuple[str, ...] | None,
) -> dict[str, Any]:
    components = [c for c in category.components if allowed is None or c.name in allowed]
    branches = []
    for component in components:
        pattern = category.patterns[component.name]
        properties: dict[str, Any] = {"type": {"type": "string"}, **reserved}
        for option in component.options:
            properties[option.name] = _property(option, defs)
        branches.append(
            {
                "if": {"properties": {"type": {"pattern": pattern}}},
                "then": {
                    "description": component.description,
                    "properties": properties,
                    "required": ["type", *component.required_options],
                    "additionalProperties": False,
                },
            }
        )
    table = {
        "type": "object",
        "required": ["type"],
        "properties": {
            "type": {
                "type": "string",
                "anyOf": [{"pattern": category.patterns[c.name]} for c in components],
            }
        },
        "allOf": branches,
    }
    bare = [{"pattern": category.patterns[c.name]} for c in components if not c.required_options]
    if not bare:
        return table
    return {"anyOf": [{"type": "string", "anyOf": bare}, table]}


def scorer_ref(defs: SchemaDefs, *, weighted: bool) -> dict[str, Any]:
    """``$ref`` to the scorer definition (with or without a ``weight`` key)."""
    if weighted:
        return _register(
            defs,
            "weighted_scorer",
            lambda: _component_schema(
                registry.SCORERS,
                defs,
                reserved={
                    "weight": {
                        **registry.WEIGHT.schema(defs),
                        "description": "Relative weight (> 0).",
                        "default": 1.0,
                    }
                },
                allowed=None,
            ),
        )
    return _register(
        defs, "scorer", lambda: _component_schema(registry.SCORERS, defs, reserved={}, allowed=None)
    )


def slicer_ref(defs: SchemaDefs, name: str, allowed: tuple[str, ...] | None) -> dict[str, Any]:
    """``$ref`` to a slicer definition (limited to ``allowed`` types when given)."""
    return _register(
        defs, name, lambda: _component_schema(registry.SLICERS, defs, reserved={}, allowed=allowed)
    )


def curve_ref(defs: SchemaDefs) -> dict[str, Any]:
    """``$ref`` to the decay-curve definition."""
    return _register(
        defs, "curve", lambda: _component_schema(registry.CURVES, defs, reserved={}, allowed=None)
    )


def record_ref(defs: SchemaDefs, record: registry.RecordDef) -> dict[str, Any]:
    """``$ref`` to a record definition (quota entry, count entry, step window)."""

    def build() -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {f.name: _property(f, defs) for f in record.fields},
            "required": [f.name for f in record.fields if f.required],
            "additionalProperties": False,
        }

    return _register(defs, record.label.replace(" ", "_"), build)
