"""Why a chat fit kept, shortened or dropped each unit, in words a person reads.

The specification's reasons say *what kind* of decision an entry of a report is (``Scored``,
``Pinned``, ``BudgetExceeded``...). A chat fit knows more: that a turn is part of the recent
tail, that it was taken for its relevance to the query or as the neighbour of a turn that
was, that a tool result was kept as an excerpt and which of its lines were elided, that a
dropped unit simply did not fit in what was left. The selection records that once, when it
decides, as a :class:`Why` per unit (:attr:`SelectionReport.why
<pycupel.diagnostics.SelectionReport.why>`); the terminal table, the HTML page and
:meth:`SelectionReport.explain <pycupel.diagnostics.SelectionReport.explain>` all put it in
words from there.

A :class:`Why` is an addition beside the specification's reason, never a replacement: the
report's entries keep their three fields (item, score, reason), and in JSON the why travels in
the item's ``metadata`` under :data:`WHY_KEY` (metadata is the specification's opaque,
preserved field), which :meth:`SelectionReport.from_json
<pycupel.diagnostics.SelectionReport.from_json>` reads back.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from pycupel.model import ContextItem

__all__ = [
    "EXCERPT_KEY",
    "WHY_KEY",
    "Cause",
    "ExcerptPart",
    "Why",
    "excerpt_parts",
    "messages_label",
]

WHY_KEY: Final = "why"
"""Item metadata key of a report entry's why in the report's JSON form."""
EXCERPT_KEY: Final = "excerpt"
"""Item metadata key of an excerpt version's kept runs and elided gaps (written by the chat
fit): ``{"kept": [[first_line, last_line, tokens], ...], "elided": [[first_line, last_line,
tokens, ref_or_null], ...]}``, or a list of those for a unit with several texts."""


class Cause(enum.StrEnum):
    """What put a unit in the window, or kept it out (the value is the JSON name)."""

    SYSTEM_PROMPT = "system-prompt"
    """Pinned: a system prompt is always kept."""
    LATEST_TURN = "latest-turn"
    """Pinned: the latest user turn, the question the next answer is for."""
    PINNED = "pinned"
    """Pinned by the caller."""
    RECENT = "recent"
    """Part of the recent tail: the newest units, kept as an unbroken run."""
    RELEVANT = "relevant"
    """Taken for its relevance to the query (its score is the entry's)."""
    NEIGHBOUR = "neighbour"
    """The unit just before or after a relevant one (the question it answers, the answer it
    got); :attr:`Why.beside` names the relevant unit's messages."""
    SESSION_HEADER = "session-header"
    """The dated header of a relevant unit's session; :attr:`Why.beside` names that unit's
    messages."""
    ROOM_LEFT = "room-left"
    """Room was left once the tail and the relevant turns were in: it went to this unit."""
    OPENING = "opening"
    """Kept so that the history opens with a turn its format accepts before the tool
    results kept as placeholders."""
    TOOL_CALL = "tool-call"
    """An older tool call, kept with its result as a placeholder so the model still sees what
    it did (and does not call the tool again)."""
    SCORED = "scored"
    """Taken by the policy's own selection on its score."""
    NO_ROOM = "no-room"
    """Dropped: it did not fit in what the budget had left when it was decided
    (:attr:`Why.free_tokens` says what was still free when the fit ended)."""
    DUPLICATE = "duplicate"
    """Dropped: the same text is kept elsewhere in the window."""
    OTHER_VERSION = "other-version"
    """Dropped: another version of the same unit is kept (a policy offered them all)."""


_CAUSES: Final[Mapping[object, Cause]] = MappingProxyType({cause.value: cause for cause in Cause})

_KEPT_WORDS: Final[Mapping[Cause, str]] = MappingProxyType(
    {
        Cause.SYSTEM_PROMPT: "pinned: the system prompt",
        Cause.LATEST_TURN: "pinned: the latest user turn",
        Cause.PINNED: "pinned",
        Cause.RECENT: "part of the recent tail",
        Cause.ROOM_LEFT: "room was left for it",
        Cause.OPENING: "opens the history (its format needs a turn before the placeholders)",
        Cause.TOOL_CALL: "an older tool call",
        Cause.DUPLICATE: "the same text is kept elsewhere",
        Cause.OTHER_VERSION: "another version of this unit is kept",
    }
)


@dataclass(frozen=True, slots=True)
class ExcerptPart:
    """One kept run or elided gap of an excerpt (lines are 1-based, inclusive).

    Attributes:
        kept: True for a kept run, False for an elided gap.
        first_line: the first line it spans in the original text.
        last_line: the last line it spans.
        tokens: its tokens in the original text.
        ref: the recall ref of an elided gap (when the fit was given a recall), else None.
        text: which of the unit's texts it belongs to (0 for a unit with one text).
    """

    kept: bool
    first_line: int
    last_line: int
    tokens: int
    ref: str | None = None
    text: int = 0

    def describe(self) -> str:
        """``"kept lines 1-12 (300 tokens)"``, ``"elided line 13 (40 tokens), ref 3f9a…"``
        (led by ``"text 2: "`` and so on past a unit's first text)."""
        lines = (
            f"line {self.first_line:,}"
            if self.first_line == self.last_line
            else f"lines {self.first_line:,}-{self.last_line:,}"
        )
        ref = f", ref {self.ref}" if self.ref else ""
        which = f"text {self.text + 1}: " if self.text else ""
        return f"{which}{'kept' if self.kept else 'elided'} {lines} ({self.tokens:,} tokens){ref}"


def excerpt_parts(item: ContextItem) -> tuple[ExcerptPart, ...]:
    """The kept runs and elided gaps of an excerpt version's item, in line order per text
    (empty for any other item, or when its metadata is not an excerpt's)."""
    described = item.metadata.get(EXCERPT_KEY)
    if isinstance(described, Mapping):
        texts: Sequence[object] = (described,)
    elif isinstance(described, Sequence) and not isinstance(described, str):
        texts = described
    else:
        return ()
    return tuple(part for number, text in enumerate(texts) for part in _parts(text, number))


def _parts(text: object, number: int) -> Iterator[ExcerptPart]:
    if not isinstance(text, Mapping):
        return
    found: list[ExcerptPart] = []
    for entry in _rows(text.get("kept")):
        if len(entry) >= 3 and _ints(entry[:3]):
            found.append(ExcerptPart(True, entry[0], entry[1], entry[2], None, number))
    for entry in _rows(text.get("elided")):
        if len(entry) >= 3 and _ints(entry[:3]):
            ref = entry[3] if len(entry) > 3 and isinstance(entry[3], str) else None
            found.append(ExcerptPart(False, entry[0], entry[1], entry[2], ref, number))
    found.sort(key=lambda part: part.first_line)
    yield from found


def _rows(value: object) -> list[Sequence[Any]]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [row for row in value if isinstance(row, Sequence) and not isinstance(row, str)]


def _ints(values: Sequence[object]) -> bool:
    return all(isinstance(value, int) and not isinstance(value, bool) for value in values)


def messages_label(indices: Sequence[int]) -> str:
    """``msg 3``, ``msgs 4-6`` (contiguous) or ``msgs 2,5``; empty for no messages."""
    if not indices:
        return ""
    if len(indices) == 1:
        return f"msg {indices[0]}"
    contiguous = list(indices) == list(range(indices[0], indices[0] + len(indices)))
    joined = f"{indices[0]}-{indices[-1]}" if contiguous else ",".join(map(str, indices))
    return f"msgs {joined}"


@dataclass(frozen=True, slots=True)
class Why:
    """Why one unit of a chat fit is in the window, in a shorter version, or out.

    The selection builds one per unit as it decides (units with the same facts share one);
    :meth:`describe` puts it in words with the entry's item and score.

    Attributes:
        cause: what put the unit in, or kept it out.
        beside: for :attr:`Cause.NEIGHBOUR` and :attr:`Cause.SESSION_HEADER`, the message
            indices of the relevant unit it came with.
        version: the shorter version kept (``"placeholder"``, ``"excerpt"``,
            ``"truncated"``), or None when the unit is whole (or out).
        whole_tokens: for a shorter version, the whole unit's tokens.
        free_tokens: for :attr:`Cause.NO_ROOM`, the tokens left free when the fit ended
            (the dropped unit needed its item's ``tokens``).
    """

    cause: Cause
    beside: tuple[int, ...] = ()
    version: str | None = None
    whole_tokens: int | None = None
    free_tokens: int | None = None

    def describe(self, item: ContextItem, score: float) -> str:
        """The decision in a few words, for the report entry of ``item`` scored ``score``.

        ``"relevant to the query (score 1.572)"``; ``"part of the recent tail; shortened to
        an excerpt (1,020 of 3,933 tokens; 2 gaps of 2,913 tokens elided)"``; ``"the budget
        ran out: it needs 3,933 tokens, 199 were free"``.
        """
        words = self._cause_words(item, score)
        if self.version is None:
            return words
        return f"{words}; {self._version_words(item)}"

    def parts(self, item: ContextItem) -> tuple[ExcerptPart, ...]:
        """An excerpt's kept runs and elided gaps (with their refs); empty otherwise."""
        return excerpt_parts(item) if self.version == "excerpt" else ()

    def _cause_words(self, item: ContextItem, score: float) -> str:
        cause = self.cause
        if cause is Cause.RELEVANT:
            return f"relevant to the query (score {_score(score)})"
        if cause is Cause.SCORED:
            return f"taken by the policy on its score ({_score(score)})"
        if cause is Cause.NEIGHBOUR:
            return f"next to a relevant turn ({messages_label(self.beside) or 'unknown'})"
        if cause is Cause.SESSION_HEADER:
            label = messages_label(self.beside) or "a relevant turn"
            return f"the dated header of the session of {label}"
        if cause is Cause.ROOM_LEFT and self.version == "excerpt":
            return "the room left went to its most valuable lines"
        if cause is Cause.NO_ROOM:
            free = self.free_tokens
            if free is None:
                return f"the budget ran out: it needs {item.tokens:,} tokens"
            if item.tokens > free:
                return f"the budget ran out: it needs {item.tokens:,} tokens, {free:,} were free"
            # The room was spoken for when it was decided; shortened units counted exactly
            # at the end can leave some over.
            return (
                f"left out when the room was shared out: it needs {item.tokens:,} tokens "
                f"({free:,} were left over at the end)"
            )
        return _KEPT_WORDS[cause]

    def _version_words(self, item: ContextItem) -> str:
        of = "" if self.whole_tokens is None else f" of {self.whole_tokens:,}"
        size = f"{item.tokens:,}{of} tokens"
        if self.version == "placeholder":
            return f"shortened to a placeholder ({size})"
        if self.version == "truncated":
            return f"shortened to its head and tail ({size})"
        if self.version != "excerpt":
            return f"shortened to its {self.version} version ({size})"
        gaps = [part for part in excerpt_parts(item) if not part.kept]
        if not gaps:
            return f"shortened to an excerpt ({size})"
        elided = sum(part.tokens for part in gaps)
        noun = "gap" if len(gaps) == 1 else "gaps"
        refs = sum(1 for part in gaps if part.ref)
        recall = (
            "" if not refs else " with recall refs" if refs == len(gaps) else f", {refs} with refs"
        )
        return (
            f"shortened to an excerpt ({size}; {len(gaps):,} {noun} of {elided:,} tokens "
            f"elided{recall})"
        )

    def to_dict(self) -> dict[str, Any]:
        """The why as JSON: ``cause`` and the fields that are set."""
        data: dict[str, Any] = {"cause": self.cause.value}
        if self.beside:
            data["beside"] = list(self.beside)
        if self.version is not None:
            data["version"] = self.version
        if self.whole_tokens is not None:
            data["whole_tokens"] = self.whole_tokens
        if self.free_tokens is not None:
            data["free_tokens"] = self.free_tokens
        return data

    @classmethod
    def from_dict(cls, data: object) -> Why | None:
        """The why written by :meth:`to_dict` (a ``text`` beside it is ignored), or None
        when ``data`` is not one (another program's metadata under the same key)."""
        if not isinstance(data, Mapping) or data.get("cause") not in _CAUSES:
            return None
        cause = _CAUSES[data["cause"]]
        beside = data.get("beside", [])
        version = data.get("version")
        whole = data.get("whole_tokens")
        free = data.get("free_tokens")
        if (
            not isinstance(beside, list)
            or not _ints(beside)
            or not (version is None or isinstance(version, str))
            or not (whole is None or _ints([whole]))
            or not (free is None or _ints([free]))
        ):
            return None
        return cls(cause, tuple(beside), version, whole, free)


def _score(score: float) -> str:
    return f"{score:.3f}"  # nan and inf as Python spells them
