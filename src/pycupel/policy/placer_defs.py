"""The placers a policy can name (:data:`PLACERS`) and the placer-name value type."""

from __future__ import annotations

from typing import Any, Final

from pycupel.policy._values import (
    Invalid,
    Problems,
    SchemaDefs,
    ValueType,
)
from pycupel.policy.registry import (
    Category,
    ComponentDef,
)

__all__ = ["PLACERS", "PlacerName"]


class PlacerName(ValueType):
    """A placer type name (any accepted spelling), stored canonically."""

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> str | Invalid:
        if not isinstance(raw, str):
            return problems.bad(path, "must be a placer name", raw)
        component = PLACERS.find(raw)
        if component is None:
            return problems.add(path, PLACERS.unknown_message(raw))
        return component.name

    def dump(self, value: Any) -> Any:
        return str(value)

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        return {
            "type": "string",
            "anyOf": [{"pattern": pattern} for pattern in PLACERS.patterns.values()],
        }


PLACERS: Final = Category(
    "placer",
    ("placer",),
    (
        ComponentDef("chronological", ("chronological",), "Oldest first (by timestamp)."),
        ComponentDef(
            "u-shaped",
            ("u", "shaped"),
            "Best items at both ends, weakest in the middle.",
        ),
    ),
)
