"""The ``shrink`` table of a policy file: how tool results and long messages may be shortened.

Read into a :class:`~pycupel.shrink.Shrink` (a ``Shrink`` built in Python is accepted as
is); every key is optional and defaults as ``Shrink`` does::

    [shrink]
    placeholders = true        # older tool results as placeholders after their calls
    excerpts = true            # long results and messages as excerpts sized to the room
    excerpt_above = 400        # only texts of more tokens are cut into excerpts
    truncate = false           # long results and messages as head + tail
    keep_whole = 0             # the newest N tool results are never shortened
    exclude_tools = ["read_file"]
    truncate_to = 200
    long_message = 2000
    placeholder_share = 0.9
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from types import MappingProxyType
from typing import Any, Final

from pycupel.errors import PipelineConfigError
from pycupel.policy._values import (
    INVALID,
    Boolean,
    Integer,
    Invalid,
    Number,
    Problems,
    SchemaDefs,
    Text,
    ValueType,
    key_path,
)
from pycupel.shrink import Shrink

__all__ = ["ShrinkTable"]

_TOOL_NAME = Text(non_blank=True, max_length=200)
_KEYS: Final[Mapping[str, ValueType]] = MappingProxyType(
    {
        "placeholders": Boolean(),
        "excerpts": Boolean(),
        "excerpt_above": Integer(minimum=1),
        "truncate": Boolean(),
        "keep_whole": Integer(minimum=0),
        "truncate_to": Integer(minimum=1),
        "long_message": Integer(minimum=0),
        "placeholder_share": Number(minimum=0.0, maximum=1.0),
    }
)
_MAX_TOOLS = 1_000


class ShrinkTable(ValueType):
    """The ``shrink`` table (see the module docs)."""

    def read(self, raw: object, path: str, problems: Problems, depth: int) -> Shrink | Invalid:
        if isinstance(raw, Shrink):
            return raw
        if not isinstance(raw, Mapping):
            return problems.bad(path, "must be a table of shrink options", raw)
        before = len(problems)
        values: dict[str, Any] = {}
        for key, value in raw.items():
            where = key_path(path, str(key))
            if key == "exclude_tools":
                tools = self._tools(value, where, problems)
                if not isinstance(tools, Invalid):
                    values[key] = tools
                continue
            reader = _KEYS.get(key) if isinstance(key, str) else None
            if reader is None:
                known = ", ".join([*_KEYS, "exclude_tools"])
                problems.add(where, f"unknown key (known: {known})")
                continue
            read = reader.read(value, where, problems, depth)
            if not isinstance(read, Invalid):
                values[key] = read
        if len(problems) != before:
            return INVALID
        try:
            return Shrink(**values)
        except PipelineConfigError as exc:  # a rule between keys
            return problems.bad(path, exc.rule, exc.value)

    @staticmethod
    def _tools(value: object, path: str, problems: Problems) -> frozenset[str] | Invalid:
        if not isinstance(value, list | tuple | set | frozenset):
            return problems.bad(path, "must be a list of tool names", value)
        if len(value) > _MAX_TOOLS:
            return problems.bad(path, f"must hold at most {_MAX_TOOLS} tool names", value)
        names: set[str] = set()
        ok = True
        for position, name in enumerate(value):
            read = _TOOL_NAME.read(name, f"{path}[{position}]", problems, 0)
            if isinstance(read, Invalid):
                ok = False
            else:
                names.add(read)
        return frozenset(names) if ok else INVALID

    def dump(self, value: Any) -> Any:
        assert isinstance(value, Shrink)
        dumped: dict[str, Any] = {}
        for field in fields(Shrink):
            item = getattr(value, field.name)
            if field.name == "exclude_tools":
                dumped[field.name] = sorted(item)
            else:
                dumped[field.name] = _KEYS[field.name].dump(item)
        return dumped

    def schema(self, defs: SchemaDefs) -> dict[str, Any]:
        properties = {key: reader.schema(defs) for key, reader in _KEYS.items()}
        properties["exclude_tools"] = {
            "type": "array",
            "items": _TOOL_NAME.schema(defs),
            "maxItems": _MAX_TOOLS,
        }
        return {"type": "object", "properties": properties, "additionalProperties": False}

    def describe(self, value: Any) -> str:
        assert isinstance(value, Shrink)
        parts = []
        if value.placeholders:
            parts.append("placeholders")
        if value.excerpts:
            parts.append(f"excerpts of texts over {value.excerpt_above} tokens")
        if value.truncate:
            parts.append(f"truncations to {value.truncate_to} tokens")
        if value.keep_whole:
            parts.append(f"newest {value.keep_whole} tool results whole")
        if value.exclude_tools:
            parts.append(f"never {', '.join(sorted(value.exclude_tools))}")
        return ", ".join(parts) or "off"
