"""The keyword options every adapter's ``Session`` passes on to the session engine.

Each adapter's ``Session`` takes ``budget``, its format's ``overhead`` and its own options
(Anthropic's ``cache_ttl``, say) by name, and the rest as :class:`SessionOptions`: spelled
once here, so that a new engine option reaches all five formats, and type checkers still
check every keyword. What each option means is documented on
:class:`pycupel.adapters.openai.Session`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from pycupel.pipeline import Pipeline
from pycupel.session.fresh import Prefer
from pycupel.tokens import TokenCounter

if TYPE_CHECKING:
    from pycupel.conversation.summary import OnSummaryError, Summarize
    from pycupel.conversation.versions import Shrink
    from pycupel.policy import Policy

__all__ = ["SessionOptions"]


class SessionOptions(TypedDict, total=False):
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
