"""Shorter versions of message units: tool-result placeholders and head + tail truncations.

An item used to be kept whole or dropped. For a tool result there is a third choice: keep the
call and replace the result by a short placeholder (``[result of read_file cleared: 5,400
tokens]``), so the model still sees what it did and does not call the tool again; or keep the
result's head and tail around a ``[... N tokens elided ...]`` marker. Long plain messages get
the truncated version too.

* **Versions.** :func:`unit_versions` builds, for each unit, its placeholder and truncated
  versions (:class:`Variant`): the unit's messages rewritten by the provider adapter (an
  :class:`Editor`), counted exactly as ``count_tokens`` counts them. A placeholder keeps the
  result's id (``tool_call_id``, ``tool_use_id``, ``call_id``, a Gemini
  ``functionResponse``'s name and id), so the history stays valid in every format.
* **Choice.** :func:`select_with_variants` wraps the structure-aware selection: it runs on
  the whole budget first; then a placeholder is reserved for every tool result (within
  ``placeholder_share`` of the room, as many calls as fit: bare first, without the
  assistant's words before the call, then with them, newest first), and of what the
  selection took the recent tail, then its strongest matches (:data:`STRONG_MATCH` of the
  best score: the oldest placeholders shed their words, then give way), then the other
  best-scored units are kept whole while they fit beside those placeholders; every other
  tool result falls back to its placeholder; the room left upgrades units by value density
  (score per token, the structure's exponent) to the largest version that fits. At most
  one version of a unit is ever kept.
* **Report.** A unit kept in a shorter version is reported included (reason ``Scored``, its
  score) with the version's item: its ``metadata["variant"]`` names the version and
  ``metadata["cupel:variant-of"]`` the unit. :func:`variant_name` reads it back (``"full"``
  for any other item). The wire format is unchanged: the versions are ordinary items.
* **The pipeline path.** With a given policy, :func:`pipeline_candidates` offers every
  version as a candidate sharing a ``cupel:variant-of`` key, which
  :class:`~pycupel.slicers.OptimalSlice` reads (at most one version per unit, chosen
  exactly); for any other slicer :func:`resolve_versions` keeps the largest version chosen of
  each unit and reports the others ``Deduplicated`` against it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Generic, Literal, TypeVar

from pycupel.conversation.parsed import ParsedMessage, message_tokens
from pycupel.conversation.units import MessageUnit
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextItem
from pycupel.shrink import Shrink
from pycupel.tokens import TokenCounter
from pycupel.tokens.base import checked_counts

__all__ = [
    "VARIANT_KEY",
    "VARIANT_NAME_KEY",
    "Editor",
    "Remembering",
    "Replace",
    "Shrink",
    "Variant",
    "VariantName",
    "Versions",
    "make_variant",
    "remembering",
    "resolve_shrink",
    "unit_key",
    "unit_versions",
    "variant_name",
]

M = TypeVar("M")

VariantName = Literal["full", "excerpt", "truncated", "placeholder"]
"""The versions of a unit: whole, an excerpt of its long texts, head + tail, or a
placeholder for its tool results."""

VARIANT_KEY: Final = "cupel:variant-of"
"""The specification's metadata key for versions of one thing (read by OptimalSlice)."""
VARIANT_NAME_KEY: Final = "variant"
"""Item metadata naming the version a shorter item stands for."""

Replace = Callable[[str | None, str], str | None]
"""``replace(tool, text)``: the new text of a tool result (``tool`` is the tool's name, ``""``
when unknown) or of a plain message (``tool`` is ``None``), or ``None`` to leave it."""


@dataclass(frozen=True, slots=True)
class Editor(Generic[M]):
    """What a provider adapter gives the versions: a way to rewrite and to re-read messages.

    Attributes:
        rewrite: ``rewrite(messages, replace)`` returns the unit's messages with each tool
            result's text (and each plain string message) replaced as ``replace`` says,
            keeping every id; ``None`` when nothing changed.
        parse: parses a run of messages of the format (a unit, rewritten or not) so that
            they are counted and rendered exactly as ``count_tokens`` would.
        unnarrated: ``unnarrated(messages)`` returns the unit's messages without the words
            an assistant message says beside its tool calls; ``None`` when there are none.
    """

    rewrite: Callable[[Sequence[M], Replace], list[M] | None]
    parse: Callable[[Sequence[M]], list[ParsedMessage]]
    unnarrated: Callable[[Sequence[M]], list[M] | None] = lambda messages: None


def resolve_shrink(shrink: object, *, policy: object) -> Shrink | None:
    """The ``shrink=`` option: ``None`` follows the policy (the default selection shrinks, a
    :class:`~pycupel.policy.Policy` as its ``shrink`` says, a Pipeline does not);
    ``True``/``False`` switch the default options on or off, a :class:`Shrink` is used as
    given."""
    if shrink is None:
        if policy is None:
            return Shrink()
        carried = getattr(policy, "shrink", None)  # a Policy's; a Pipeline has none
        return carried if isinstance(carried, Shrink) else None
    if isinstance(shrink, bool):
        return Shrink() if shrink else None
    if isinstance(shrink, Shrink):
        return shrink
    raise PipelineConfigError("shrink", shrink, "must be a pycupel.adapters.Shrink, a bool or None")


@dataclass(frozen=True, slots=True, eq=False)
class Variant(Generic[M]):
    """A shorter version of a unit.

    Attributes:
        name: ``"truncated"`` or ``"placeholder"``.
        item: the version's candidate item (its text, its exact tokens, ``metadata``
            naming the version and the unit).
        messages: the unit's messages in this version (new objects where rewritten, the
            caller's own objects elsewhere).
        bare: a placeholder without the assistant's words before its calls (its name is
            ``"placeholder"`` all the same: a session's saved state tells them apart).
    """

    name: VariantName
    item: ContextItem
    messages: tuple[M, ...]
    bare: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Versions(Generic[M]):
    """The shorter versions of one unit (at least one is set).

    ``bare`` is the placeholder without the assistant's words before its calls (set only
    when it is shorter): a floor short of room sheds those words, and the call stays
    visible.
    """

    truncated: Variant[M] | None = None
    placeholder: Variant[M] | None = None
    bare: Variant[M] | None = None


def variant_name(item: ContextItem) -> VariantName:
    """The version an item of a report stands for: ``"full"`` unless it is a shorter one."""
    name = item.metadata.get(VARIANT_NAME_KEY)
    if name in ("excerpt", "truncated", "placeholder"):
        return name  # type: ignore[no-any-return]  # checked just above
    return "full"


# --------------------------------------------------------------------------- versions


def placeholder_text(tokens: int) -> str:
    """The text standing for a cleared tool result (its call, just before it, names the tool
    and its arguments: repeating them would cost tokens on every placeholder)."""
    return f"[result cleared: {tokens:,} tokens]"


def truncated_text(text: str, tokens: int, keep: int, counter: TokenCounter) -> str:
    """``text`` cut to its head and tail (about ``keep`` tokens together) around a marker
    naming the tokens left out; cuts fall on line ends where the text has them."""
    share = keep / max(tokens, 1)
    head_chars = max(1, int(len(text) * share * 0.6))
    tail_chars = max(1, int(len(text) * share * 0.4))
    head = text[:head_chars]
    tail = text[len(text) - tail_chars :]
    newline = head.rfind("\n")
    if newline > head_chars // 2:
        head = head[:newline]
    newline = tail.find("\n")
    if 0 <= newline < tail_chars // 2:
        tail = tail[newline + 1 :]
    kept = checked_counts(counter, counter.count_batch([head, tail]), 2)
    elided = max(tokens - kept[0] - kept[1], 0)
    return f"{head}\n[... {elided:,} tokens elided ...]\n{tail}"


def unit_versions(
    units: Sequence[MessageUnit],
    messages: Sequence[M],
    *,
    editor: Editor[M],
    counter: TokenCounter,
    shrink: Shrink,
) -> dict[int, Versions[M]]:
    """Position of a unit -> its shorter versions (units without any are left out)."""
    counter = remembering(counter)  # a result's text is counted for several versions
    tool_positions = [
        position
        for position, unit in enumerate(units)
        if unit.call_ids and not unit.item.pinned and not unit.unanswered_call_ids
    ]
    newest = set(tool_positions[len(tool_positions) - shrink.keep_whole :])
    if shrink.keep_whole == 0:
        newest = set()
    truncate, clear = _truncator(shrink, counter), _placeholder(shrink, counter)

    def version(
        unit: MessageUnit, original: Sequence[M], name: VariantName, replace: Replace
    ) -> Variant[M] | None:
        return make_variant(
            unit, original=original, name=name, replace=replace, editor=editor, counter=counter
        )

    found: dict[int, Versions[M]] = {}
    for position, unit in enumerate(units):
        if unit.item.pinned or unit.system_parameter or unit.unanswered_call_ids:
            continue
        if position in newest:
            continue
        is_tool = bool(unit.call_ids)
        if not is_tool and (not shrink.truncate or shrink.long_message == 0):
            continue
        if not is_tool and unit.item.tokens <= shrink.long_message:
            continue
        original = [messages[index] for index in unit.message_indices]
        truncated = placeholder = bare = None
        if shrink.truncate:
            truncated = version(unit, original, "truncated", truncate)
        if is_tool and shrink.placeholders:
            placeholder = version(unit, original, "placeholder", clear)
        if (
            truncated is not None
            and placeholder is not None
            and truncated.item.tokens <= placeholder.item.tokens
        ):
            truncated = None
        if truncated is not None and truncated.item.tokens >= unit.item.tokens:
            truncated = None
        if placeholder is not None and placeholder.item.tokens >= unit.item.tokens:
            placeholder = None
        unnarrated = editor.unnarrated(original) if placeholder is not None else None
        if unnarrated is not None and placeholder is not None:
            made = version(unit, unnarrated, "placeholder", clear)
            if made is not None and made.item.tokens < placeholder.item.tokens:
                bare = Variant(made.name, made.item, made.messages, bare=True)
        if truncated is not None or placeholder is not None:
            found[position] = Versions(truncated, placeholder, bare)
    return found


class Remembering:
    """A counter that counts each distinct text once (for one fit's versions: a result's
    text is counted for its placeholder, its truncation and its excerpt)."""

    __slots__ = ("_counter", "_known")

    def __init__(self, counter: TokenCounter) -> None:
        self._counter = counter
        self._known: dict[str, int] = {}

    def count(self, text: str) -> int:
        known = self._known.get(text)
        return self.count_batch([text])[0] if known is None else known

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        known = self._known
        missing = [text for text in dict.fromkeys(texts) if text not in known]
        if missing:
            counts = checked_counts(self._counter, self._counter.count_batch(missing), len(missing))
            known.update(zip(missing, counts, strict=True))
        return list(map(known.__getitem__, texts))


def remembering(counter: TokenCounter) -> Remembering:
    """``counter`` counting each distinct text once (itself when it already does)."""
    return counter if isinstance(counter, Remembering) else Remembering(counter)


def _placeholder(shrink: Shrink, counter: TokenCounter) -> Replace:
    def replace(tool: str | None, text: str) -> str | None:
        if tool is None or tool in shrink.exclude_tools:
            return None
        return placeholder_text(counter.count(text))

    return replace


def _truncator(shrink: Shrink, counter: TokenCounter) -> Replace:
    def replace(tool: str | None, text: str) -> str | None:
        if tool is not None and tool in shrink.exclude_tools:
            return None
        tokens = counter.count(text)
        if tokens <= 2 * shrink.truncate_to:
            return None
        return truncated_text(text, tokens, shrink.truncate_to, counter)

    return replace


def make_variant(
    unit: MessageUnit,
    *,
    original: Sequence[M],
    name: VariantName,
    replace: Replace,
    editor: Editor[M],
    counter: TokenCounter,
    metadata: Mapping[str, object] | None = None,
) -> Variant[M] | None:
    """The version ``name`` of ``unit``: its messages rewritten by ``editor`` as ``replace``
    says, counted exactly as ``count_tokens`` counts them (``None`` when nothing changed);
    ``metadata`` is added to its item's."""
    rewritten = editor.rewrite(original, replace)
    if rewritten is None:
        return None
    parsed = editor.parse(rewritten)
    tokens = sum(message_tokens(parsed, counter))
    metadata = {
        **unit.item.metadata,
        **(metadata or {}),
        VARIANT_KEY: unit_key(unit),
        VARIANT_NAME_KEY: name,
    }
    content = "\n\n".join(message.rendered() for message in parsed)
    whole = unit.item
    if (
        whole.timestamp is not None
        and whole.timestamp_micros is not None
        and whole.priority is None
        and whole.future_relevance_hint is None
        and whole.original_tokens is None
        and content
    ):
        # What whole.replace(...) builds, from values valid by construction (the unit's
        # checked fields, a rendered text, counted tokens), without checking them again.
        item = ContextItem._prevalidated(
            content,
            tokens=tokens,
            kind=whole.kind,
            source=whole.source,
            tags=whole.tags,
            metadata=MappingProxyType(metadata),
            timestamp=whole.timestamp,
            timestamp_micros=whole.timestamp_micros,
            pinned=False,
        )
    else:
        item = whole.replace(content=content, tokens=tokens, metadata=metadata, pinned=False)
    return Variant(name, item, tuple(rewritten))


def unit_key(unit: MessageUnit) -> str:
    first = unit.message_indices[0] if unit.message_indices else -1
    return f"message-unit:{first}"
