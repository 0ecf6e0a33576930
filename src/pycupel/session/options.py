"""The keyword options every adapter's ``Session`` passes on to the session engine.

Each adapter's ``Session`` takes ``budget``, its format's ``overhead`` and its own options
(Anthropic's ``cache_ttl``, say) by name, and the rest as :class:`SessionOptions`: spelled
once here, so that a new engine option reaches all five formats, and type checkers still
check every keyword. What each option means is documented on
:class:`pycupel.adapters.openai.Session`.

:class:`EngineOptions` are the engine's own (:class:`~pycupel.session.core.SessionCore`'s
keywords); :class:`SessionOptions` adds where the session's state is kept between turns
(:mod:`pycupel.session.durable`), which :class:`~pycupel.session.ChatSession` handles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict

from pycupel.pipeline import Pipeline
from pycupel.session.fresh import Prefer
from pycupel.session.stores.base import SessionStore
from pycupel.tokens import TokenCounter

if TYPE_CHECKING:
    from pycupel.conversation.recall import Recall
    from pycupel.conversation.summary import OnSummaryError, Summarize
    from pycupel.conversation.versions import Shrink
    from pycupel.policy import Policy

__all__ = ["STORE_OPTIONS", "EngineOptions", "SessionOptions"]


class EngineOptions(TypedDict, total=False):
    """:class:`~pycupel.session.core.SessionCore`'s keyword options other than ``budget``;
    an option left out takes the engine's default."""

    policy: Policy | Pipeline | None
    counter: TokenCounter | None
    compact_at: float
    compact_to: float
    grid: int
    recall_share: float
    compact_for_recall: bool
    recall_every_turn: bool
    prefer: Prefer
    pin_system: bool
    shrink: Shrink | bool | None
    summarize: Summarize | None
    on_summary_error: OnSummaryError
    recall: Recall | None


class SessionOptions(EngineOptions, total=False):
    """Every option of a format's ``Session`` other than ``budget`` and its own: the
    engine's, and where its state is kept between turns."""

    store: SessionStore | None
    key: str | None
    on_conflict: Literal["retry", "raise"]


STORE_OPTIONS = frozenset({"store", "key", "on_conflict"})
"""The options of :class:`SessionOptions` that are not the engine's."""
