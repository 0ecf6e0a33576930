"""Typed access to a vector's TOML tables: every read checks the value's TOML type and fails with
a :class:`~pycupel.errors.ConformanceVectorError` naming the file and the key."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from typing import Any, Final

from pycupel.errors import ConformanceVectorError

__all__ = ["TomlTable"]

# The largest duration a timedelta can hold, in seconds (about 2.7 million years).
_MAX_SECONDS: Final = timedelta.max.total_seconds()


# =========================================================================== typed TOML access


class TomlTable:
    """A TOML table with typed accessors whose errors name the file and the dotted key."""

    __slots__ = ("_data", "_where", "source")

    def __init__(self, data: Mapping[str, Any], where: str, source: str) -> None:
        self._data = data
        self._where = where
        self.source = source

    def empty(self, key: str) -> TomlTable:
        """An empty table standing for the absent sub-table ``key``."""
        return TomlTable({}, self.loc(key), self.source)

    def loc(self, key: str) -> str:
        """The dotted location of ``key`` in the document."""
        return f"{self._where}.{key}" if self._where else key

    def error(self, key: str, detail: str) -> ConformanceVectorError:
        """The error for a problem with ``key`` of this table."""
        return ConformanceVectorError(self.source, self.loc(key), detail)

    def has(self, key: str) -> bool:
        return key in self._data

    def names(self) -> list[str]:
        """The keys of this table, in document order."""
        return list(self._data)

    def raw(self) -> dict[str, Any]:
        return dict(self._data)

    # --- any value

    def req_any(self, key: str) -> object:
        if key not in self._data:
            raise self.error(key, "is required")
        value: object = self._data[key]
        return value

    def req_scalar(self, key: str) -> object:
        value = self.req_any(key)
        if isinstance(value, Mapping | list):
            raise self.error(key, f"must be a string, number or boolean, got {_show(value)}")
        return value

    # --- strings

    def opt_str(self, key: str) -> str | None:
        value = self._data.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.error(key, f"must be a string, got {_show(value)}")
        return value

    def req_str(self, key: str) -> str:
        value = self.opt_str(key)
        if value is None:
            raise self.error(key, "is required (a string)")
        return value

    def opt_str_list(self, key: str) -> tuple[str, ...] | None:
        value = self._data.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.error(key, f"must be an array of strings, got {_show(value)}")
        for index, element in enumerate(value):
            if not isinstance(element, str):
                raise self.error(f"{key}[{index}]", f"must be a string, got {_show(element)}")
        return tuple(value)

    def req_str_list(self, key: str) -> tuple[str, ...]:
        value = self.opt_str_list(key)
        if value is None:
            raise self.error(key, "is required (an array of strings)")
        return value

    # --- numbers and booleans

    def opt_int(self, key: str) -> int | None:
        value = self._data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"must be an integer, got {_show(value)}")
        return value

    def req_int(self, key: str) -> int:
        value = self.opt_int(key)
        if value is None:
            raise self.error(key, "is required (an integer)")
        return value

    def opt_float(self, key: str) -> float | None:
        value = self._data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, f"must be a number, got {_show(value)}")
        return float(value)

    def req_float(self, key: str) -> float:
        value = self.opt_float(key)
        if value is None:
            raise self.error(key, "is required (a number)")
        return value

    def opt_float_alias(self, key: str, alias: str) -> float | None:
        if key in self._data and alias in self._data:
            raise self.error(alias, f"duplicates {key!r}; give only one of them")
        return self.opt_float(key) if key in self._data else self.opt_float(alias)

    def opt_int_alias(self, key: str, alias: str) -> int | None:
        if key in self._data and alias in self._data:
            raise self.error(alias, f"duplicates {key!r}; give only one of them")
        return self.opt_int(key) if key in self._data else self.opt_int(alias)

    def req_seconds(self, key: str) -> timedelta:
        seconds = self.req_float(key)
        if not math.isfinite(seconds) or abs(seconds) > _MAX_SECONDS:
            raise self.error(key, f"must be a finite number of seconds, got {seconds!r}")
        return timedelta(seconds=seconds)

    def opt_bool(self, key: str) -> bool | None:
        value = self._data.get(key)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise self.error(key, f"must be a boolean, got {_show(value)}")
        return value

    # --- date-times

    def opt_datetime(self, key: str) -> datetime | None:
        value = self._data.get(key)
        if value is None:
            return None
        if not isinstance(value, datetime):
            kind = "a date without a time" if isinstance(value, date | time) else _show(value)
            raise self.error(key, f"must be an offset date-time (RFC 3339), got {kind}")
        if value.tzinfo is None or value.utcoffset() is None:
            raise self.error(
                key,
                f"must carry a UTC offset (e.g. 2024-01-01T00:00:00Z), got local date-time "
                f"{value.isoformat()}",
            )
        return value

    def req_datetime(self, key: str) -> datetime:
        value = self.opt_datetime(key)
        if value is None:
            raise self.error(key, "is required (an offset date-time)")
        return value

    # --- tables

    def opt_table(self, key: str) -> TomlTable | None:
        value = self._data.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.error(key, f"must be a table, got {_show(value)}")
        return TomlTable(value, self.loc(key), self.source)

    def req_table(self, key: str) -> TomlTable:
        table = self.opt_table(key)
        if table is None:
            raise self.error(key, f"is required (a [{self.loc(key)}] table)")
        return table

    def tables(self, key: str) -> list[TomlTable]:
        """The array of tables ``key`` (absent means empty)."""
        value = self._data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(
                key, f"must be an array of tables ([[{self.loc(key)}]]), got {_show(value)}"
            )
        result: list[TomlTable] = []
        for index, element in enumerate(value):
            if not isinstance(element, Mapping):
                raise self.error(f"{key}[{index}]", f"must be a table, got {_show(element)}")
            result.append(TomlTable(element, self.loc(f"{key}[{index}]"), self.source))
        return result


def _show(value: object) -> str:
    """A value with its TOML type, for messages (``'abc' (string)``)."""
    type_names = {
        bool: "boolean",
        int: "integer",
        float: "float",
        str: "string",
        list: "array",
        dict: "table",
    }
    type_name = type_names.get(type(value), type(value).__name__)
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type_name})"
