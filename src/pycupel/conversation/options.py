"""The keyword options every adapter's ``fit_messages`` takes, as a typed dictionary.

``afit_messages`` takes the same options as its ``fit_messages`` and passes them on unchanged;
spelling them once here (each adapter adds its own, such as Anthropic's ``system``) keeps the
two signatures from drifting apart while type checkers still check every keyword.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal, TypedDict

from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.structure import Structure
from pycupel.conversation.summary import OnSummaryError, Summarize
from pycupel.conversation.versions import Shrink
from pycupel.model import ContextBudget
from pycupel.pipeline import Pipeline

if TYPE_CHECKING:
    from pycupel.policy import Policy

__all__ = ["AlternatingFitOptions", "FitOptions"]


class _Required(TypedDict):
    # A base class of its own rather than ``Required[...]``: with postponed annotations the
    # marker is a string that TypedDict cannot see, and the key would count as optional.
    budget: int | ContextBudget


class FitOptions(_Required, total=False):
    """``fit_messages``' options shared by every message format (see each adapter's
    ``fit_messages`` for what they mean); ``budget`` is the one that is required."""

    policy: Policy | Pipeline | None
    overhead: MessageOverhead | None
    pin_system: bool
    pin_latest_user: bool
    timestamps: Sequence[datetime] | None
    deduplicate: bool
    unanswered_tool_calls: Literal["error", "drop"]
    repair: bool
    query: str | None
    keep_recent: int | None
    structure: Structure | None
    shrink: Shrink | bool | None
    summarize: Summarize | None
    on_summary_error: OnSummaryError


class AlternatingFitOptions(FitOptions, total=False):
    """The options of formats whose roles must alternate and open with the user
    (Anthropic, Gemini)."""

    start_with_user: bool
    merge_consecutive: bool
