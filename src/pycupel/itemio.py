"""Items as JSON: read candidate items from a JSON array or JSON Lines, and write them back.

The item object uses the specification's field names::

    {"content": "...", "tokens": 120, "kind": "Message", "source": "Chat", "priority": 3,
     "tags": ["billing"], "metadata": {...}, "timestamp": "2024-06-01T09:30:00Z",
     "futureRelevanceHint": 0.8, "pinned": false, "originalTokens": 400}

Only ``content`` and ``tokens`` are required. ``futureRelevanceHint`` and ``originalTokens`` are
also accepted in snake case. Reading is strict: an unknown or duplicated field, a wrong type or a
timestamp without a UTC offset is an :class:`~pycupel.errors.InputFormatError` that names the
place (``items[3].tokens``, or ``line 4: items[3].tokens`` in JSON Lines). Reading is also
bounded: at most :data:`DEFAULT_MAX_BYTES` of input, :data:`DEFAULT_MAX_ITEMS` items and
:data:`DEFAULT_MAX_DEPTH` levels of JSON nesting unless the caller passes other limits (an
input over a limit is an InputFormatError, never a slow parse or a ``RecursionError``).

Writing omits fields that are unset (never null), writes timestamps as ISO 8601 UTC (``...Z``)
and non-finite floats as the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` (JSON has no
such numbers).
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Final, NoReturn

from pycupel._checks import check_int
from pycupel.errors import (
    InputFormatError,
    InvalidValueError,
    ItemValidationError,
    PipelineConfigError,
)
from pycupel.model import ContextItem, ContextSource

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_ITEMS",
    "build_item",
    "decode_float",
    "encode_float",
    "format_timestamp",
    "item_from_dict",
    "item_to_dict",
    "items_error",
    "items_to_json",
    "items_to_jsonl",
    "loads_json",
    "near_misses",
    "parse_items",
    "parse_timestamp",
    "read_items",
]

_FIELDS = (
    "content",
    "tokens",
    "kind",
    "source",
    "priority",
    "tags",
    "metadata",
    "timestamp",
    "futureRelevanceHint",
    "pinned",
    "originalTokens",
)
_ALIASES = MappingProxyType(
    {
        "future_relevance_hint": "futureRelevanceHint",
        "original_tokens": "originalTokens",
    }
)
_NON_FINITE: Final = MappingProxyType(
    {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
)

DEFAULT_MAX_BYTES: Final = 256 * 1024 * 1024
"""Largest items document read by default (256 MiB); pass ``max_bytes`` to change it."""
DEFAULT_MAX_ITEMS: Final = 1_000_000
"""Most items read from one document by default; pass ``max_items`` to change it."""
DEFAULT_MAX_DEPTH: Final = 64
"""Deepest JSON nesting read by default (an item object is level 1 of a JSON Lines record,
level 2 of an array); pass ``max_depth`` to change it."""


# --------------------------------------------------------------------------- writing


def format_timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with a ``Z`` suffix (microseconds only when non-zero)."""
    text = moment.astimezone(UTC).replace(tzinfo=None).isoformat()
    return text + "Z"


def encode_float(value: float) -> float | str:
    """A float for JSON: finite values as numbers, NaN and infinities as strings."""
    if math.isfinite(value):
        return value
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def item_to_dict(item: ContextItem) -> dict[str, Any]:
    """The item as a JSON-ready dict; unset fields (and the default source) are omitted."""
    data: dict[str, Any] = {"content": item.content, "tokens": item.tokens, "kind": item.kind.value}
    if item.source != ContextSource.CHAT:
        data["source"] = item.source.value
    if item.priority is not None:
        data["priority"] = item.priority
    if item.tags:
        data["tags"] = list(item.tags)
    if item.metadata:
        data["metadata"] = dict(item.metadata)
    if item.timestamp is not None:
        data["timestamp"] = format_timestamp(item.timestamp)
    if item.future_relevance_hint is not None:
        data["futureRelevanceHint"] = encode_float(item.future_relevance_hint)
    if item.pinned:
        data["pinned"] = True
    if item.original_tokens is not None:
        data["originalTokens"] = item.original_tokens
    return data


def items_to_json(items: Iterable[ContextItem], *, indent: int | None = 2) -> str:
    """The items as a JSON array."""
    return dumps_json([item_to_dict(item) for item in items], indent=indent)


def items_to_jsonl(items: Iterable[ContextItem]) -> str:
    """The items as JSON Lines (one object per line, with a final newline when non-empty)."""
    return "".join(dumps_json(item_to_dict(item)) + "\n" for item in items)


def dumps_json(value: object, *, indent: int | None = None) -> str:
    """Serialise to strict JSON (no NaN literals).

    Raises:
        ItemValidationError: item metadata holds a value JSON cannot represent.
    """
    try:
        return json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ItemValidationError(
            "metadata", str(exc), "must hold only JSON values (str, number, bool, None, list, dict)"
        ) from exc


# --------------------------------------------------------------------------- reading


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKeyError(key)
        result[key] = value
    return result


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON (write non-finite numbers as strings)")


def loads_json(
    text: str | bytes,
    *,
    source: str,
    location: str = "",
    first_line: int = 1,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Any:
    """Parse strict JSON: duplicate keys and NaN/Infinity literals are errors.

    ``first_line`` is the line number of the text's first line in its file (for JSON Lines).
    Arrays and objects nested more than ``max_depth`` levels deep are refused.

    Raises:
        InputFormatError: the text is not valid JSON, or is nested too deeply.
    """
    try:
        value = json.loads(
            text, object_pairs_hook=_object_without_duplicates, parse_constant=_reject_constant
        )
    except RecursionError:
        # The C scanner recurses once per level: far deeper input than any limit lands here.
        raise InputFormatError(
            source, location, f"nested more than {max_depth} levels deep (the max_depth limit)"
        ) from None
    except _DuplicateKeyError as exc:
        raise InputFormatError(source, location, f"duplicate key {exc.key!r} in an object") from exc
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno + first_line - 1}, column {exc.colno}"
        raise InputFormatError(source, where, f"invalid JSON: {exc.msg}") from exc
    except UnicodeDecodeError as exc:
        raise InputFormatError(source, location, f"not UTF-8 text: {exc.reason}") from exc
    except ValueError as exc:
        if "integer string conversion" in str(exc):  # Python's digit limit on int parsing
            raise InputFormatError(
                source, location, "holds a number of more than 4,300 digits (no count is that long)"
            ) from exc
        raise InputFormatError(source, location, str(exc)) from exc
    if _deeper_than(value, max_depth):
        raise InputFormatError(
            source, location, f"nested more than {max_depth} levels deep (the max_depth limit)"
        )
    if _may_hold_surrogates(text):
        _reject_lone_surrogates(value, source, location)
    return value


# A \uD800-\uDFFF escape: the only way a lone surrogate gets into parsed JSON from bytes
# (the UTF-8 decoder refuses encoded surrogates), and one of two ways from a str.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def _may_hold_surrogates(text: str | bytes) -> bool:
    """Cheap pre-check: False when no parsed string can hold a lone surrogate."""
    if isinstance(text, bytes):
        return _SURROGATE_ESCAPE_BYTES.search(text) is not None
    return _SURROGATE_ESCAPE.search(text) is not None or not _encodes(text)


def _encodes(text: str) -> bool:
    """Whether ``text`` is valid Unicode (no lone surrogate), i.e. encodes to UTF-8."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _reject_lone_surrogates(value: object, source: str, location: str) -> None:
    """Refuse a string (value or object key) holding a lone surrogate, naming where it is.

    JSON lets ``"\\ud800"`` through, but such a string is not Unicode text: no UTF-8 output
    (a terminal, a report file, a model provider) can carry it. Refusing it here names the
    place, instead of a UnicodeEncodeError when the result is printed.
    """
    stack: list[tuple[object, str]] = [(value, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            bad = node if not _encodes(node) else None
        elif isinstance(node, dict):
            bad = next((key for key in node if not _encodes(key)), None)
            if bad is None:
                stack.extend((child, f"{path}.{key}") for key, child in node.items())
            else:
                path = f"{path} (an object key)"
        elif isinstance(node, list):
            stack.extend((child, f"{path}[{index}]") for index, child in enumerate(node))
            continue
        else:
            continue
        if bad is not None:
            index = next(i for i, char in enumerate(bad) if 0xD800 <= ord(char) <= 0xDFFF)
            inner = path.lstrip(".")
            where = ", ".join(part for part in (location, inner) if part)
            raise InputFormatError(
                source,
                where,
                f"a string holds a lone surrogate (U+{ord(bad[index]):04X} at index {index}) "
                f"in {_show(bad)}; JSON text must encode valid Unicode",
            )


def _deeper_than(value: object, limit: int) -> bool:
    """Whether JSON ``value`` nests arrays/objects more than ``limit`` levels (iteratively)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Iterable[object] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _check_limits(max_bytes: object, max_items: object, max_depth: object) -> tuple[int, int, int]:
    return (
        check_int(PipelineConfigError, "max_bytes", max_bytes, minimum=1),
        check_int(PipelineConfigError, "max_items", max_items, minimum=0),
        check_int(PipelineConfigError, "max_depth", max_depth, minimum=1),
    )


def _too_large(source: str, limit: int) -> InputFormatError:
    return InputFormatError(
        source, "", f"the input is larger than {limit} bytes (the max_bytes limit)"
    )


def read_items(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_items: int = DEFAULT_MAX_ITEMS,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> list[ContextItem]:
    """Read items from a file holding a JSON array or JSON Lines.

    The limits are those of :func:`parse_items`; a file over ``max_bytes`` is refused
    without being read whole.

    Raises:
        InputFormatError: the file cannot be read, is over a limit, is not UTF-8 JSON, or an
            item is invalid.
        PipelineConfigError: a limit is not a positive integer.
    """
    source = os.fspath(path)
    byte_limit, _, _ = _check_limits(max_bytes, max_items, max_depth)
    try:
        with open(source, "rb") as handle:
            data = handle.read(byte_limit + 1)
    except OSError as exc:
        raise InputFormatError(source, "", f"cannot read file: {exc.strerror or exc}") from exc
    if len(data) > byte_limit:
        raise _too_large(source, byte_limit)
    return parse_items(
        data, source=source, max_bytes=max_bytes, max_items=max_items, max_depth=max_depth
    )


def parse_items(
    text: str | bytes,
    *,
    source: str = "<string>",
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_items: int = DEFAULT_MAX_ITEMS,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> list[ContextItem]:
    """Parse items from a JSON array of objects or from JSON Lines (one object per line).

    The format is told by the first non-blank character: ``[`` for an array, ``{`` for JSON
    Lines (a single object, even spread over several lines, is one item). Empty input gives
    no items.

    Limits: the input may hold at most ``max_bytes`` bytes (UTF-8), ``max_items`` items and
    ``max_depth`` levels of JSON nesting (defaults :data:`DEFAULT_MAX_BYTES`,
    :data:`DEFAULT_MAX_ITEMS`, :data:`DEFAULT_MAX_DEPTH`).

    Raises:
        InputFormatError: naming the place of every problem found in the items (one line
            each, see :func:`items_error`), or the limit exceeded. Invalid JSON stops the
            reading of an array at the first syntax error; JSON Lines report every bad line.
        PipelineConfigError: ``text`` is not a str or bytes, or a limit is not a positive
            integer.
    """
    byte_limit, item_limit, depth_limit = _check_limits(max_bytes, max_items, max_depth)
    if isinstance(text, bytes):
        if len(text) > byte_limit:
            raise _too_large(source, byte_limit)
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputFormatError(
                source, f"byte {exc.start}", f"not UTF-8 text: {exc.reason}"
            ) from exc
    elif not isinstance(text, str):
        raise PipelineConfigError("text", text, "must be a str or bytes")
    elif len(text) > byte_limit or len(text.encode("utf-8", "surrogatepass")) > byte_limit:
        raise _too_large(source, byte_limit)
    text = text.removeprefix("\ufeff")
    stripped = text.lstrip(" \t\r\n")
    if not stripped:
        return []
    if stripped[0] == "[":
        value = loads_json(stripped, source=source, max_depth=depth_limit)
        if not isinstance(value, list):  # pragma: no cover - '[' always parses to a list
            raise InputFormatError(source, "", "expected a JSON array of item objects")
        if len(value) > item_limit:
            raise _too_many(source, item_limit)
        return _all_or_raise(
            source,
            (build_item(entry, f"items[{index}]") for index, entry in enumerate(value)),
        )
    if stripped[0] == "{":
        return _parse_json_lines(text, source, item_limit, depth_limit)
    raise InputFormatError(
        source,
        "",
        "expected a JSON array of item objects or JSON Lines (one object per line), "
        f"got text starting with {stripped[:20]!r}",
    )


def _too_many(source: str, limit: int) -> InputFormatError:
    return InputFormatError(source, "", f"more than {limit} items (the max_items limit)")


def _all_or_raise(
    source: str, built: Iterable[tuple[ContextItem | None, list[Problem]]]
) -> list[ContextItem]:
    """The items, or one error listing every problem of every item."""
    items: list[ContextItem] = []
    problems: list[Problem] = []
    for item, found in built:
        problems.extend(found)
        if item is not None:
            items.append(item)
    if problems:
        raise items_error(source, problems)
    return items


def _parse_json_lines(
    text: str, source: str, item_limit: int, depth_limit: int
) -> list[ContextItem]:
    built: list[tuple[ContextItem | None, list[Problem]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        location = f"line {number}"
        try:
            value = loads_json(
                line, source=source, location=location, first_line=number, max_depth=depth_limit
            )
        except InputFormatError as error:
            if not built:
                # Perhaps one object spread over several lines: accept it as one item.
                whole = _try_single_object(text, source, depth_limit)
                if whole is not None:
                    return [whole]
            built.append((None, [(error.location, error.detail)]))
            continue
        index = len(built)
        if index >= item_limit:
            raise _too_many(source, item_limit)
        built.append(build_item(value, f"{location}: items[{index}]"))
    return _all_or_raise(source, built)


def _try_single_object(text: str, source: str, depth_limit: int) -> ContextItem | None:
    try:
        value = loads_json(text, source=source, max_depth=depth_limit)
    except InputFormatError:
        return None
    if not isinstance(value, dict):
        return None
    return item_from_dict(value, source=source, location="items[0]")


Problem = tuple[str, str]
"""One problem of an items document: where it is (``items[3].tokens``) and what is wrong."""

_MAX_PROBLEMS = 50
"""Problems listed in one error; the rest are counted."""


def item_from_dict(
    data: object, *, source: str = "<string>", location: str = "item"
) -> ContextItem:
    """Build a validated item from its JSON object.

    Raises:
        InputFormatError: ``data`` is not an object, misses ``content``/``tokens``, has an
            unknown or repeated field, or a field has the wrong type or value. Every problem
            of the item is reported at once (see :func:`items_error`).
    """
    item, problems = build_item(data, location)
    if item is None:
        raise items_error(source, problems)
    return item


def items_error(source: str, problems: list[Problem]) -> InputFormatError:
    """One error for every problem found: one problem reads ``<source>: <where>: <what>``;
    several read ``<source>: N problems in items`` then one indented line per problem."""
    if len(problems) == 1:
        where, detail = problems[0]
        return InputFormatError(source, where, detail)
    lines = [f"  {where}: {detail}" if where else f"  {detail}" for where, detail in problems]
    if len(problems) > _MAX_PROBLEMS:
        lines = [*lines[:_MAX_PROBLEMS], f"  ... and {len(problems) - _MAX_PROBLEMS} more"]
    return InputFormatError(source, "", f"{len(problems)} problems in items\n" + "\n".join(lines))


def build_item(data: object, location: str) -> tuple[ContextItem | None, list[Problem]]:
    """The item of a JSON object, or None and every problem found in it."""
    problems: list[Problem] = []

    def fail(field: str, detail: str) -> None:
        problems.append((f"{location}.{field}" if field else location, detail))

    if not isinstance(data, Mapping):
        fail("", f"must be a JSON object with content and tokens, got {_show(data)}")
        return None, problems
    fields: dict[str, Any] = {}
    for key, value in data.items():
        name = _ALIASES.get(key, key)
        if name not in _FIELDS:
            fail(str(key), _unknown_field(str(key)))
            continue
        if name in fields:
            fail(str(key), f"given twice (as {name!r} and its alias)")
            continue
        fields[name] = value
    for required in ("content", "tokens"):
        if required not in fields:
            fail(required, "is required")

    kwargs: dict[str, Any] = {}
    has_content = "content" in fields
    content = fields.pop("content", None)
    if has_content and (not isinstance(content, str) or not content):
        # null included: an item without text is a mistake, never an item to drop silently.
        fail("content", f"must be a non-empty string, got {_show(content)}")
    if "tokens" in fields:
        kwargs["tokens"] = _int(fields.pop("tokens"), "tokens", fail)
    for name in ("kind", "source"):
        if name in fields:
            value = fields.pop(name)
            if not isinstance(value, str) or not value.strip():
                fail(name, f"must be a non-blank string, got {_show(value)}")
            else:
                kwargs[name] = value
    if "priority" in fields:
        value = fields.pop("priority")
        kwargs["priority"] = None if value is None else _int(value, "priority", fail)
    if "tags" in fields:
        value = fields.pop("tags")
        if not isinstance(value, list):
            fail("tags", f"must be an array of strings, got {_show(value)}")
        else:
            for index, tag in enumerate(value):
                if not isinstance(tag, str):
                    fail(f"tags[{index}]", f"must be a string, got {_show(tag)}")
            kwargs["tags"] = value
    if "metadata" in fields:
        value = fields.pop("metadata")
        if not isinstance(value, dict):
            fail("metadata", f"must be an object, got {_show(value)}")
        else:
            kwargs["metadata"] = value
    if "timestamp" in fields:
        value = fields.pop("timestamp")
        if value is not None:
            try:
                kwargs["timestamp"] = parse_timestamp(value)
            except InvalidValueError as exc:
                fail("timestamp", rule_and_value(exc))
    if "futureRelevanceHint" in fields:
        value = fields.pop("futureRelevanceHint")
        if value is not None:
            try:
                kwargs["future_relevance_hint"] = decode_float(value)
            except InvalidValueError as exc:
                fail("futureRelevanceHint", rule_and_value(exc))
    if "pinned" in fields:
        value = fields.pop("pinned")
        if not isinstance(value, bool):
            fail("pinned", f"must be true or false, got {_show(value)}")
        else:
            kwargs["pinned"] = value
    if "originalTokens" in fields:
        value = fields.pop("originalTokens")
        if value is not None:
            number = _int(value, "originalTokens", fail)
            if number is not None and number < 0:
                fail("originalTokens", f"must be >= 0, got {number}")
            elif number is not None:
                kwargs["original_tokens"] = number
    if problems or not isinstance(content, str):
        return None, problems
    try:
        return ContextItem(content, **kwargs), problems
    except InvalidValueError as exc:
        fail(exc.field, f"{exc.rule}, got {_show(exc.value)}")
        return None, problems


def near_misses(items: Iterable[ContextItem]) -> list[str]:
    """A warning for each item whose kind or source is not a well-known one but is close to
    one (``Documnet``: :meth:`ContextKind.closest_well_known`): kinds and sources are open,
    so these are kept, not refused."""
    warnings: list[str] = []
    for index, item in enumerate(items):
        for field, name in (("kind", item.kind), ("source", item.source)):
            close = type(name).closest_well_known(name.value)
            if close is not None:
                warnings.append(
                    f"items[{index}].{field}: {name.value!r} is not a well-known {field}; did "
                    f"you mean {close!r}? (kept as a custom {field})"
                )
    return warnings


def _unknown_field(key: str) -> str:
    """The unknown-field message, with the closest known field when one is near."""
    known = ", ".join(_FIELDS)
    close = difflib.get_close_matches(key, [*_FIELDS, *_ALIASES], n=1, cutoff=0.75)
    if not close:
        close = difflib.get_close_matches(key.lower(), [f.lower() for f in _FIELDS], n=1)
        close = [next(f for f in _FIELDS if f.lower() == close[0])] if close else []
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown field; {hint}(known fields: {known})"


def parse_timestamp(value: object, field: str = "timestamp") -> datetime:
    """Parse an ISO 8601 timestamp that carries a UTC offset (``Z`` or ``+hh:mm``).

    Raises:
        InvalidValueError: not a string, not ISO 8601, or naive (no offset); ``field`` names it.
    """
    if not isinstance(value, str):
        raise InvalidValueError(field, value, "must be an ISO 8601 string")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidValueError(
            field, value, "must be an ISO 8601 timestamp such as 2024-06-01T09:30:00Z"
        ) from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise InvalidValueError(
            field, value, "must include a UTC offset (Z or +hh:mm); a naive time is ambiguous"
        )
    return moment


def decode_float(value: object, field: str = "value") -> float:
    """A float from JSON: a number, or ``"NaN"``, ``"Infinity"``, ``"-Infinity"``.

    Raises:
        InvalidValueError: anything else (booleans included); ``field`` names it.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InvalidValueError(field, value, "must be a number")
    if isinstance(value, str):
        if value not in _NON_FINITE:
            raise InvalidValueError(
                field, value, 'must be a number (or "NaN", "Infinity", "-Infinity")'
            )
        return _NON_FINITE[value]
    return float(value)


def rule_and_value(error: InvalidValueError) -> str:
    """``"<rule>, got <value>"``: an error's detail without its field (the caller names it)."""
    return f"{error.rule}, got {_show(error.value)}"


def _int(value: object, field: str, fail: Callable[[str, str], None]) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        fail(field, f"must be an integer, got {_show(value)}")
        return None
    return value


def _show(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."
