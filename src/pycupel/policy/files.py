"""Policy files: JSON and TOML, read and written.

Reading turns *any* input into either a :class:`~pycupel.policy.Policy` or one of two
project errors, never a traceback:

* :class:`~pycupel.errors.InputFormatError` — the bytes are not a document at all: over the
  size limit, not UTF-8, not valid JSON/TOML, nested too deeply for the parser, a JSON key
  given twice;
* :class:`~pycupel.errors.PolicyError` — the document parsed but describes no valid policy;
  it lists every problem with its path.

Inputs are capped at :data:`DEFAULT_MAX_BYTES` (1 MiB) unless the caller passes another
``max_bytes``: a policy is a few hundred bytes, so anything near the limit is a mistake or an
attack. TOML is read with ``tomli`` (TOML 1.1) and written with ``tomli_w``; JSON ``NaN`` and
``Infinity`` literals are read (so the message can name the field) and then refused as
non-finite numbers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal

import tomli
import tomli_w

from pycupel._checks import check_int
from pycupel.errors import InputFormatError, PipelineConfigError
from pycupel.policy.model import Policy

__all__ = [
    "DEFAULT_MAX_BYTES",
    "PolicyFormat",
    "dumps_policy",
    "format_for_path",
    "load_policy",
    "loads_policy",
    "save_policy",
]

DEFAULT_MAX_BYTES: Final = 1024 * 1024
"""Largest policy document read by default (1 MiB); pass ``max_bytes`` to change it."""

PolicyFormat = Literal["json", "toml"]

_SUFFIXES: Final[Mapping[str, PolicyFormat]] = MappingProxyType({".json": "json", ".toml": "toml"})


def format_for_path(path: str | os.PathLike[str]) -> PolicyFormat:
    """``"json"`` or ``"toml"`` from the file name's suffix (case-insensitive)."""
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIXES:
        raise InputFormatError(
            str(path), "", "cannot tell the format: the file name must end in .json or .toml"
        )
    return _SUFFIXES[suffix]


def _check_format(value: object) -> PolicyFormat:
    if value == "json":
        return "json"
    if value == "toml":
        return "toml"
    raise PipelineConfigError("format", value, "must be 'json' or 'toml'")


def _check_max_bytes(max_bytes: object) -> int:
    return check_int(PipelineConfigError, "max_bytes", max_bytes, minimum=1)


# --------------------------------------------------------------------------- reading


def load_policy(
    path: str | os.PathLike[str],
    *,
    format: PolicyFormat | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Policy:
    """Read a policy file (format from the suffix unless ``format`` is given).

    Raises:
        InputFormatError: unreadable, too large, or not valid JSON/TOML.
        PolicyError: every problem in the policy, with paths.
    """
    source = str(path)
    kind = _check_format(format) if format is not None else format_for_path(path)
    limit = _check_max_bytes(max_bytes)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise InputFormatError(source, "", f"cannot read the file: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise _too_large(source, limit)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFormatError(
            source, f"byte {exc.start}", "the file is not valid UTF-8 text"
        ) from exc
    return _parse(text, kind, source)


def loads_policy(
    text: str | bytes,
    format: PolicyFormat = "json",
    *,
    source: str = "<string>",
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Policy:
    """Read a policy from a JSON or TOML string (or UTF-8 bytes).

    Raises:
        InputFormatError: too large, not UTF-8, or not valid JSON/TOML.
        PolicyError: every problem in the policy, with paths.
    """
    kind = _check_format(format)
    limit = _check_max_bytes(max_bytes)
    if isinstance(text, bytes):
        if len(text) > limit:
            raise _too_large(source, limit)
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputFormatError(
                source, f"byte {exc.start}", "the input is not valid UTF-8 text"
            ) from exc
    elif not isinstance(text, str):
        raise PipelineConfigError("text", text, "must be a str or bytes")
    elif len(text) > limit or len(text.encode("utf-8", "surrogatepass")) > limit:
        raise _too_large(source, limit)
    return _parse(text, kind, source)


def _too_large(source: str, limit: int) -> InputFormatError:
    return InputFormatError(
        source, "", f"the policy is larger than {limit} bytes (the max_bytes limit)"
    )


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for key, value in pairs:
        if key in table:
            raise _DuplicateKeyError(key)
        table[key] = value
    return table


def _parse_json(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_pairs_without_duplicates)


_PARSERS: Final[Mapping[PolicyFormat, Callable[[str], Any]]] = MappingProxyType(
    {
        "json": _parse_json,
        "toml": tomli.loads,
    }
)


def _parse(text: str, kind: PolicyFormat, source: str) -> Policy:
    try:
        data = _PARSERS[kind](text)
    except _DuplicateKeyError as exc:
        raise InputFormatError(
            source, "", f"the key {exc.key!r} appears twice in one JSON object"
        ) from None
    except json.JSONDecodeError as exc:
        raise InputFormatError(
            source, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}"
        ) from None
    except tomli.TOMLDecodeError as exc:
        raise InputFormatError(source, "", f"invalid TOML: {exc}") from None
    except RecursionError:
        raise InputFormatError(source, "", "the document is nested too deeply") from None
    except ValueError as exc:  # e.g. an integer literal with thousands of digits
        raise InputFormatError(source, "", f"invalid {kind.upper()}: {exc}") from None
    try:
        return Policy.from_dict(data, source=source)
    except RecursionError:
        raise InputFormatError(source, "", "the document is nested too deeply") from None


# --------------------------------------------------------------------------- writing


def dumps_policy(policy: Policy, format: PolicyFormat = "json") -> str:
    """The canonical text of ``policy`` in JSON (2-space indent) or TOML."""
    kind = _check_format(format)
    if not isinstance(policy, Policy):
        raise PipelineConfigError("policy", policy, "must be a Policy")
    data = policy.to_dict()
    if kind == "json":
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return tomli_w.dumps(data)


def save_policy(
    policy: Policy,
    path: str | os.PathLike[str],
    *,
    format: PolicyFormat | None = None,
) -> None:
    """Write ``policy`` to ``path`` (format from the suffix unless ``format`` is given).

    Round trip: ``load_policy(path) == policy``.
    """
    kind = _check_format(format) if format is not None else format_for_path(path)
    text = dumps_policy(policy, kind)
    # Write errors (permissions, missing directory) surface as the usual OSError.
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
