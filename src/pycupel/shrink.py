"""How tool results and long messages may be shortened instead of dropped.

:class:`Shrink` holds the options; the conversation engine
(:mod:`pycupel.conversation.versions`) and
sessions (:mod:`pycupel.session.shrink`) make the shorter versions, and a
:class:`~pycupel.policy.Policy` may carry a ``Shrink`` (the conversation preset does), so that
fitting with that policy shortens without ``shrink=True``. It is plain validated data, with no
dependency, so both layers can hold it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from pycupel._checks import check_bool, check_float, check_int
from pycupel.errors import PipelineConfigError

__all__ = ["Shrink"]


@dataclass(frozen=True, slots=True)
class Shrink:
    """How tool results (and long messages) may be shortened instead of dropped.

    Attributes:
        placeholders: an older tool result may be replaced by a placeholder naming the tool
            and the tokens cleared; its call stays whole.
        excerpts: a long tool result or message may be kept as an excerpt: the segments a
            reader would cut it into (log lines, JSON items, code lines, paragraphs, table
            rows) that the next answer needs most, sized to the room the budget leaves, every
            gap marked (:mod:`pycupel.conversation.excerpts`).
        excerpt_above: only a text of more than this many tokens is cut into an excerpt.
        truncate: a long tool result or message may be kept as its head and tail around a
            ``[... N tokens elided ...]`` marker (off by default: an excerpt keeps what
            matters wherever it is, and its first and last lines too).
        keep_whole: the newest this many tool-result units are never shortened: kept whole
            or, when the selection does not keep them, dropped (0: every tool result may be
            shortened, the selection decides by value; the recent tail is whole anyway).
        exclude_tools: names of tools whose results are never shortened.
        truncate_to: tokens a truncation keeps (head and tail together); only texts of more
            than twice this many tokens get a truncated version. Excerpts are not bound by it:
            their size is chosen under the budget.
        long_message: a plain message of more than this many tokens gets a truncated
            version (0: never).
        placeholder_share: the largest share of the room (after pinned units) the floors
            (the kept-whole newest results and the placeholders) may take; placeholders
            beyond it, the oldest, are not reserved.
    """

    placeholders: bool = True
    excerpts: bool = True
    excerpt_above: int = 400
    truncate: bool = False
    keep_whole: int = 0
    exclude_tools: Collection[str] = frozenset()
    truncate_to: int = 200
    long_message: int = 2_000
    placeholder_share: float = 0.9

    def __post_init__(self) -> None:
        err = PipelineConfigError
        check_bool(err, "shrink.placeholders", self.placeholders)
        check_bool(err, "shrink.excerpts", self.excerpts)
        check_int(err, "shrink.excerpt_above", self.excerpt_above, minimum=1)
        check_bool(err, "shrink.truncate", self.truncate)
        check_int(err, "shrink.keep_whole", self.keep_whole, minimum=0)
        check_int(err, "shrink.truncate_to", self.truncate_to, minimum=1)
        check_int(err, "shrink.long_message", self.long_message, minimum=0)
        share = check_float(err, "shrink.placeholder_share", self.placeholder_share)
        if not 0.0 <= share <= 1.0:
            raise PipelineConfigError(
                "shrink.placeholder_share", self.placeholder_share, "must be between 0 and 1"
            )
        names = self.exclude_tools
        if isinstance(names, str) or not isinstance(names, Collection):
            raise PipelineConfigError(
                "shrink.exclude_tools", names, "must be a collection of tool names (strings)"
            )
        for name in names:
            if not isinstance(name, str) or not name:
                raise PipelineConfigError(
                    "shrink.exclude_tools", names, f"must hold non-empty strings, not {name!r}"
                )
        object.__setattr__(self, "exclude_tools", frozenset(names))
