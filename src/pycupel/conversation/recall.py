"""Getting elided text back: refs, the store of originals, and the recall tool's lookup.

An excerpt marks each gap with a ref (``[... 1,240 lines (9,876 tokens) elided: ref
3f9a2c5d0e1b7a44 ...]``) when the fit is given a :class:`Recall`. The elided text is kept in
a :class:`RecallStore` under the conversation's ``scope`` and the ref; the recall tool (each
format module's ``recall_tool`` and ``answer_recall``) gives it back to the model, whole or
the part that matches a query, within a size limit.

* **Scoped and unguessable.** A ref is an HMAC of the scope and the text with the recall's
  secret key, so it cannot be guessed from the text, and the same text in the same scope
  always gets the same ref (the window stays deterministic). A lookup reads only its own
  scope: a ref from another conversation, or a guessed one, is refused exactly like an
  unknown ref, whatever a prompt-injected model asks for. One store may serve many users.
* **Pluggable store.** :class:`MemoryRecallStore` keeps the originals in this process; a
  durable session store can keep them instead (anything with ``put`` and ``get``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import re
import secrets
import threading
from dataclasses import dataclass, field
from typing import Final, Protocol, runtime_checkable

from pycupel.conversation.excerpts.excerpt import render
from pycupel.conversation.excerpts.relevance import segment_values
from pycupel.conversation.excerpts.segments import segment
from pycupel.errors import PipelineConfigError, RecallRefError
from pycupel.tokens import HeuristicCounter, TokenCounter
from pycupel.tokens.base import checked_counts

__all__ = [
    "DEFAULT_RECALL_TOKENS",
    "RECALL_TOOL_NAME",
    "MemoryRecallStore",
    "Recall",
    "RecallStore",
    "checked_recall",
]

RECALL_TOOL_NAME: Final = "recall"
"""The recall tool's name, as the model sees it."""
DEFAULT_RECALL_TOKENS: Final = 2_000
"""The most tokens one lookup returns unless the recall says otherwise."""
REF_LENGTH: Final = 16
"""Hexadecimal digits of a ref (64 bits)."""
_REF: Final = re.compile(rf"[0-9a-f]{{{REF_LENGTH}}}")
_TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")


@runtime_checkable
class RecallStore(Protocol):
    """Where elided originals are kept: two methods, safe to call from several threads.

    ``put(scope, ref, text)`` stores ``text`` under ``ref`` in ``scope`` (storing the same
    pair again is harmless); ``get(scope, ref)`` returns it, or ``None`` when that scope holds
    no such ref. A store never answers a ref from another scope.
    """

    def put(self, scope: str, ref: str, text: str) -> None: ...

    def get(self, scope: str, ref: str) -> str | None: ...


class MemoryRecallStore:
    """A :class:`RecallStore` in this process's memory (lost when it exits)."""

    __slots__ = ("_lock", "_texts")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._texts: dict[tuple[str, str], str] = {}

    def put(self, scope: str, ref: str, text: str) -> None:
        with self._lock:
            self._texts[(scope, ref)] = text

    def get(self, scope: str, ref: str) -> str | None:
        with self._lock:
            return self._texts.get((scope, ref))

    def __len__(self) -> int:
        with self._lock:
            return len(self._texts)


@dataclass(frozen=True, slots=True)
class Recall:
    """One conversation's recall: its store, its scope and the key its refs are made with.

    Attributes:
        store: where the originals are kept (a :class:`MemoryRecallStore` by default).
        scope: the conversation's id (a session key, a thread id): lookups read only it.
        secret: the key of the refs' HMAC; random by default. Workers sharing a store must
            share it too (the same text then gets the same ref everywhere).
        max_tokens: the most tokens one lookup returns.
        counter: counts a lookup's answer (the heuristic estimate by default).
        tool_name: the recall tool's name, as the model sees it (``"recall"``; another one
            when the agent already has a tool of that name).

    Raises:
        PipelineConfigError: an empty scope, a secret shorter than 16 bytes, a store without
            ``put``/``get``, a size limit under 50 tokens, or a tool name providers reject.
    """

    scope: str
    store: RecallStore = field(default_factory=MemoryRecallStore)
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    max_tokens: int = DEFAULT_RECALL_TOKENS
    counter: TokenCounter = field(default_factory=HeuristicCounter)
    tool_name: str = RECALL_TOOL_NAME

    def __post_init__(self) -> None:
        if not isinstance(self.scope, str) or not self.scope.strip():
            raise PipelineConfigError("recall.scope", self.scope, "must be a non-empty string")
        if not isinstance(self.secret, bytes) or len(self.secret) < 16:
            raise PipelineConfigError(
                "recall.secret", "<hidden>", "must be at least 16 random bytes"
            )
        if not isinstance(self.store, RecallStore):
            raise PipelineConfigError(
                "recall.store", self.store, "must have put(scope, ref, text) and get(scope, ref)"
            )
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int):
            raise PipelineConfigError("recall.max_tokens", self.max_tokens, "must be an int")
        if self.max_tokens < 50:
            raise PipelineConfigError("recall.max_tokens", self.max_tokens, "must be >= 50")
        if not isinstance(self.tool_name, str) or not _TOOL_NAME.fullmatch(self.tool_name):
            raise PipelineConfigError(
                "recall.tool_name",
                self.tool_name,
                "must be 1 to 64 letters, digits, underscores or hyphens",
            )
        if not isinstance(self.counter, TokenCounter):
            raise PipelineConfigError("recall.counter", self.counter, "must be a TokenCounter")

    def scoped(self, name: str) -> Recall:
        """The recall of one conversation under this one: the same store, key and limits,
        the scope ``<scope>/<name>`` (an integration serving many threads gives each its
        own, from the thread's id).

        Raises:
            PipelineConfigError: ``name`` is not a non-empty string.
        """
        if not isinstance(name, str) or not name:
            raise PipelineConfigError("recall scope name", name, "must be a non-empty string")
        return dataclasses.replace(self, scope=f"{self.scope}/{name}")

    def ref_of(self, text: str) -> str:
        """The ref ``text`` gets in this scope."""
        if not isinstance(text, str):
            raise PipelineConfigError("text", text, "must be a string")
        message = self.scope.encode("utf-8", "surrogatepass") + b"\0"
        message += text.encode("utf-8", "surrogatepass")
        return hmac.new(self.secret, message, hashlib.sha256).hexdigest()[:REF_LENGTH]

    def remember(self, text: str) -> str:
        """Store ``text`` and return its ref."""
        ref = self.ref_of(text)
        self.store.put(self.scope, ref, text)
        return ref

    def lookup(self, ref: object, query: object = None) -> str:
        """The text stored under ``ref`` in this scope, or (when it is longer than
        :attr:`max_tokens`) its part that best matches ``query`` (its beginning without a
        query), gaps marked as in an excerpt.

        Raises:
            RecallRefError: ``ref`` is not a ref of this scope (unknown, from another
                conversation, or malformed); ``query`` is not a string.
        """
        if not isinstance(ref, str) or not _REF.fullmatch(ref.strip()):
            raise RecallRefError(ref, "is not a recall ref (16 hexadecimal digits)")
        if query is not None and not isinstance(query, str):
            raise RecallRefError(ref, f"query must be a string, got {type(query).__name__}")
        text = self.store.get(self.scope, ref.strip())
        if text is None:
            raise RecallRefError(ref, "is not a ref of this conversation")
        return self._fitted(text, query or "")

    def _fitted(self, text: str, query: str) -> str:
        """``text`` within :attr:`max_tokens`: its best part for ``query``."""
        counter = self.counter
        if checked_counts(counter, counter.count_batch([text]), 1)[0] <= self.max_tokens:
            return text
        segments = segment(text)
        tokens = checked_counts(counter, counter.count_batch(segments.texts()), len(segments))
        if query:
            values = segment_values([segments], query)[0]
            order = sorted(range(len(segments)), key=lambda p: (-values[p], p))
        else:
            order = list(range(len(segments)))
        keep: set[int] = set()
        used = 0
        room = self.max_tokens - 40  # the markers
        for position in order:
            if used + tokens[position] > room:
                continue
            keep.add(position)
            used += tokens[position]
        return render(segments, keep, tokens).text


def checked_recall(value: object) -> Recall | None:
    """A ``recall=`` option: a :class:`Recall` or ``None``.

    Raises:
        PipelineConfigError: anything else.
    """
    if value is None or isinstance(value, Recall):
        return value
    raise PipelineConfigError(
        "recall", value, "must be a pycupel.conversation.Recall (its scope and store) or None"
    )
