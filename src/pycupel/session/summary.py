"""A session's running summary: what compactions dropped, folded into one message.

With ``summarize=`` a session calls your callback **only at a compaction**, with the messages
that compaction leaves out or shortens and that no earlier summary covered (the caller's own
objects, in conversation order), and the previous summary's text (``None`` the first time),
so repeated compactions fold into one text. The text becomes one user message opening with
``[Summary of the earlier conversation]``, placed right after the system prompt, at the head
of the stable prefix:

* **Cache-stable.** The message is made once per compaction and the same object is sent on
  every turn until the next one, so the summary never breaks the cached prefix on its own:
  the prefix changes only when the compaction changes it anyway.
* **Within the budget.** A compaction keeps :data:`~pycupel.conversation.summary.SUMMARY_SHARE`
  of the budget for the summary (it cuts the history that much lower); between compactions
  the summary counts as a fixed part of every request, beside the per-request overhead.
* **Failures.** A callback that raises, returns no string or more tokens than the reserve
  raises :class:`~pycupel.errors.SummarizerError`; with ``on_summary_error="skip"`` the
  previous summary stays and the messages are handed again at the next compaction.
* **Edits.** An edit of a message the summary covers forgets the summary (it would describe
  a history that no longer exists); the next compaction summarises afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Generic, TypeVar

from pycupel.conversation.parsed import message_tokens
from pycupel.conversation.summary import SUMMARY_MARK, SUMMARY_SHARE, Summary
from pycupel.conversation.versions import Editor
from pycupel.errors import SessionConfigError
from pycupel.tokens import TokenCounter

__all__ = ["RunningSummary", "start_summary"]

M = TypeVar("M")


def start_summary(summarize: object, on_summary_error: object, budget: int) -> Summary | None:
    """Check a session's summary options; ``None`` when no summary is asked for."""
    if on_summary_error not in ("raise", "skip"):
        raise SessionConfigError("on_summary_error", on_summary_error, "must be 'raise' or 'skip'")
    if summarize is None:
        return None
    if not callable(summarize):
        raise SessionConfigError(
            "summarize", summarize, "must be a callable (messages, previous) -> str, or None"
        )
    reserve = int(budget * SUMMARY_SHARE)
    return Summary(summarize, on_summary_error, reserve, budget)


class RunningSummary(Generic[M]):
    """The summary a session shows after its system prompt (see the module docs).

    Not thread-safe on its own: the session guards it with its lock.
    """

    __slots__ = (
        "_counter",
        "_editor",
        "_make",
        "_summarized",
        "marked",
        "message",
        "previous",
        "summary",
        "tokens",
    )

    def __init__(
        self,
        summary: Summary,
        *,
        make: Callable[[str], M],
        editor: Editor[M],
        counter: TokenCounter,
    ) -> None:
        self.summary = summary
        self._make = make
        self._editor = editor
        self._counter = counter
        self._summarized: set[int] = set()
        self.previous: str | None = None
        """The callback's latest text (passed back to it as the previous summary)."""
        self.marked: str | None = None
        """The summary message's text (the callback's text after its mark), or None."""
        self.message: M | None = None
        """The summary message the window shows, or None."""
        self.tokens = 0
        """The message's tokens by the session's counter (0 without a message)."""

    @property
    def reserve(self) -> int:
        """Tokens a compaction keeps for the summary message."""
        return self.summary.reserve

    def pending(self, messages: Sequence[M], shown: Collection[int]) -> list[int]:
        """Positions of the messages that the window does not show as given and that no
        summary covers yet, in order."""
        summarized = self._summarized
        return [
            index
            for index in range(len(messages))
            if index not in shown and index not in summarized
        ]

    def install(self, marked: str | None, covered: Sequence[int]) -> None:
        """Show the callback's ``marked`` text (``None``: it failed and failures are skipped,
        the previous summary stays) as the summary of the ``covered`` messages too."""
        if marked is None:
            return
        message = self._make(marked)
        tokens = sum(message_tokens(self._editor.parse([message]), self._counter))
        if not self.summary.fits(tokens, len(covered)):
            return
        self.previous = marked[len(SUMMARY_MARK) + 1 :]
        self.marked = marked
        self.message = message
        self.tokens = tokens
        self._summarized.update(covered)

    def forget_from(self, position: int) -> None:
        """Forget the summary when it covers a message at ``position`` or later (edited)."""
        if any(index >= position for index in self._summarized):
            self._summarized = set()
            self.previous = None
            self.marked = None
            self.message = None
            self.tokens = 0

    @property
    def covered(self) -> frozenset[int]:
        """Positions of the messages the summary covers."""
        return frozenset(self._summarized)

    def restore(self, marked: str, tokens: int, covered: Collection[int]) -> None:
        """Show a saved summary again: its ``marked`` text, counted ``tokens`` and the
        ``covered`` message positions (a restored session's)."""
        self.message = self._make(marked)
        self.marked = marked
        self.previous = marked[len(SUMMARY_MARK) + 1 :]
        self.tokens = tokens
        self._summarized = set(covered)
