"""The shorter versions a session's compaction keeps: placeholders and truncations in the window.

With ``shrink=`` a compaction selects as ``fit_messages`` does
(:mod:`pycupel.conversation.versions`): a unit it would drop may stay as a shorter version (a
tool result cleared to ``[result cleared: N tokens]`` after its call, a head + tail
truncation), chosen by value under the compaction's limit. :class:`ShownVersions` holds what
the window shows until the next compaction:

* **The same objects every turn.** The versions' messages are made once, at the compaction,
  and reused on every turn until the next one, so the stable prefix is byte-identical between
  compactions (no re-rendering can change it). They keep every call id, so the window stays
  valid in every format.
* **Counted in the provider's count.** The selection compares versions with whole units whose
  tokens are the provider's (learned, or the estimate times the calibration's upper ratio):
  :func:`scaled_editor` and :class:`ScaledCounter` give the versions the same scale. The
  window's own tokens use each version's plain estimate (:meth:`ShownVersions.estimate`).
* **Forgetting.** A unit whose shown version changes at a compaction is reported to the
  session, which forgets what usage taught it about that unit (it was learned for the other
  version); an edit forgets the versions of the re-read units.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from pycupel.conversation.parsed import ParsedMessage, message_tokens
from pycupel.conversation.units import MessageUnit
from pycupel.conversation.versions import Editor, Shrink, Variant
from pycupel.errors import SessionConfigError
from pycupel.tokens import TokenCounter
from pycupel.tokens.base import checked_counts

__all__ = ["ScaledCounter", "ShownVersions", "resolve_session_shrink", "scaled_editor"]

M = TypeVar("M")


def resolve_session_shrink(shrink: object, policy: object) -> Shrink | None:
    """The ``shrink=`` option of a session: ``None`` follows a given
    :class:`~pycupel.policy.Policy`'s ``shrink`` (off without one: the shorter versions sit
    in the stable prefix, where the recall zone cannot bring the whole result back),
    ``False`` off, ``True`` the default :class:`~pycupel.adapters.Shrink`, a ``Shrink`` as
    given."""
    if shrink is None:
        carried = getattr(policy, "shrink", None)  # a Policy's; a Pipeline has none
        return carried if isinstance(carried, Shrink) else None
    if shrink is False:
        return None
    if shrink is True:
        return Shrink()
    if isinstance(shrink, Shrink):
        return shrink
    raise SessionConfigError("shrink", shrink, "must be a pycupel.adapters.Shrink, a bool or None")


class ScaledCounter:
    """A counter giving ``ceil(count x ratio)``: the versions in the provider's count."""

    __slots__ = ("_counter", "_ratio")

    def __init__(self, counter: TokenCounter, ratio: float) -> None:
        self._counter = counter
        self._ratio = ratio

    def count(self, text: str) -> int:
        return self.count_batch([text])[0]

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        counts = checked_counts(self._counter, self._counter.count_batch(list(texts)), len(texts))
        ratio = self._ratio
        return [math.ceil(count * ratio - 1e-9) for count in counts]


def scaled_editor(editor: Editor[M], ratio: float) -> Editor[M]:
    """``editor`` whose parsed messages carry their fixed costs times ``ratio`` (rounded up),
    so that with a :class:`ScaledCounter` a version is never counted below ``ratio`` times its
    estimate."""
    if ratio == 1.0:
        return editor

    def parse(messages: Sequence[M]) -> list[ParsedMessage]:
        return [
            dataclasses.replace(
                message, fixed_tokens=math.ceil(message.fixed_tokens * ratio - 1e-9)
            )
            for message in editor.parse(messages)
        ]

    return dataclasses.replace(editor, parse=parse)


class ShownVersions(Generic[M]):
    """The units a session's window shows in a shorter version, until the next compaction.

    Not thread-safe on its own: the session guards it with its lock.
    """

    __slots__ = ("_editor", "estimates", "overrides", "ratio", "variants")

    def __init__(self, editor: Editor[M]) -> None:
        self._editor = editor
        self.ratio = 1.0
        """The calibration's upper ratio the versions were made with (their counts are in
        the provider's count: placeholders name them), kept to make them again."""
        self.variants: Mapping[int, Variant[M]] = MappingProxyType({})
        """Unit position -> the version the window shows."""
        self.estimates: Mapping[int, int] = MappingProxyType({})
        """Unit position -> its shown version's tokens by the session's counter."""
        self.overrides: Mapping[int, Any] = MappingProxyType({})
        """Message position in the history -> the message the window shows instead (replaced,
        never mutated, so a window handed out earlier keeps its own)."""

    def estimate(self, unit: int, whole: int) -> int:
        """The unit's tokens as the window shows it (``whole`` when it is shown whole)."""
        return self.estimates.get(unit, whole)

    def replace(
        self,
        chosen: Mapping[int, Variant[M]],
        units: Sequence[MessageUnit],
        counter: TokenCounter,
        *,
        ratio: float = 1.0,
    ) -> set[int]:
        """Show ``chosen`` (made with the calibration's upper ``ratio``) from now on; returns
        the units whose shown version changed."""
        before = self.variants
        changed = {u for u in before if u not in chosen or chosen[u] is not before[u]}
        changed.update(u for u in chosen if u not in before)
        estimates = dict(self.estimates)
        for u in changed:
            estimates.pop(u, None)
        for u, variant in chosen.items():
            if u not in estimates:
                estimates[u] = sum(message_tokens(self._editor.parse(variant.messages), counter))
        overrides: dict[int, Any] = {}
        for u, variant in chosen.items():
            overrides.update(zip(units[u].message_indices, variant.messages, strict=True))
        self.variants = MappingProxyType(dict(chosen))
        self.estimates = MappingProxyType(estimates)
        self.overrides = MappingProxyType(overrides)
        self.ratio = ratio
        return changed

    def forget_from(self, unit: int, units: Sequence[MessageUnit]) -> None:
        """Forget the versions of the units from ``unit`` on (they are re-read after an edit)."""
        if any(u >= unit for u in self.variants):
            kept = {u: v for u, v in self.variants.items() if u < unit}
            self.variants = MappingProxyType(kept)
            self.estimates = MappingProxyType({u: t for u, t in self.estimates.items() if u < unit})
            self.overrides = MappingProxyType(
                {
                    index: message
                    for u, variant in kept.items()
                    for index, message in zip(
                        units[u].message_indices, variant.messages, strict=True
                    )
                }
            )

    def originals_shown(
        self, units: Sequence[MessageUnit], kept: Sequence[int], messages: Sequence[M]
    ) -> set[int]:
        """Message positions of ``kept`` units the window shows as the caller's own message
        (the messages of a version that are not rewritten, a tool call, count as shown)."""
        shown: set[int] = set()
        for u in kept:
            variant = self.variants.get(u)
            indices = units[u].message_indices
            if variant is None:
                shown.update(indices)
            else:
                shown.update(
                    index
                    for index, message in zip(indices, variant.messages, strict=True)
                    if message is messages[index]
                )
        return shown
