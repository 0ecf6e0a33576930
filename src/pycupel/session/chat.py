"""The body every format's ``Session`` shares: one conversation, fitted turn after turn.

Each format module (:mod:`pycupel.adapters.openai` and the others) defines ``Session`` as a
subclass of :class:`ChatSession` that names its codec and types ``fit`` and ``afit`` with its
own message type and system parameter. What a format adds to the window is a setting of
:meth:`ChatSession._start`: cache breakpoints (``cache_control``, placed by
:mod:`pycupel.session.breakpoints`) and merged runs of same-role messages (``merge``). The
formats whose cache takes explicit breakpoints on request (OpenAI's Chat Completions and
Responses) share :class:`BreakpointSession`.
"""

from __future__ import annotations

import dataclasses
import inspect
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar, Generic, TypeVar, Unpack, cast

from pycupel._checks import check_bool
from pycupel.conversation.codec import Codec
from pycupel.conversation.options import documented
from pycupel.conversation.overhead import MessageOverhead
from pycupel.errors import PipelineConfigError, SessionConfigError, UnknownOptionError
from pycupel.session.breakpoints import BREAKPOINT_DOCS, mark_breakpoints
from pycupel.session.core import SessionCore
from pycupel.session.durable import StoredCore, check_store_options
from pycupel.session.format import NO_SYSTEM, MessageFormat
from pycupel.session.options import STORE_OPTIONS, EngineOptions, SessionOptions
from pycupel.session.usage import ProviderUsage
from pycupel.session.window import CoreWindow, SessionWindow
from pycupel.tokens.asynchronous import AsyncTokenCounter

__all__ = [
    "SESSION_DEFAULTS",
    "SESSION_DOCS",
    "SESSION_RAISES",
    "BreakpointSession",
    "ChatSession",
    "ListSession",
]

M = TypeVar("M")

SESSION_DOCS: Mapping[str, str] = MappingProxyType(
    {
        "budget": "tokens for the whole prompt, in the provider's count once usage is recorded.",
        "overhead": "the format's fixed costs; defaults to the module's ``DEFAULT_OVERHEAD``.",
        "cache_ttl": "the cache breakpoints' lifetime, ``\"5m\"`` (Anthropic's default; writes "
        'cost 1.25x the input price) or ``"1h"`` (writes cost 2x); ``None`` sets no breakpoint.',
        "start_with_user": "a window never opens with an assistant (model) turn: unpinned "
        "leading units starting with one are left out (Bedrock and older API versions require "
        "a user turn first).",
        "merge_consecutive": "runs of same-role turns left side by side in the window are "
        "merged into one turn (a new mapping holding the run's blocks in order).",
        "policy": "chooses what a compaction keeps (a Policy or Pipeline; by default the "
        "structure-aware selection of ``fit_messages``).",
        "counter": "counts message text; defaults to the heuristic estimate.",
        "compact_at": "high watermark, as a share of ``budget``.",
        "compact_to": "low watermark a compaction cuts down to.",
        "grid": "compaction cut points are rounded up to a multiple of this many messages.",
        "recall_share": "the largest share of ``budget`` the recall zone may take (0 disables it).",
        "compact_for_recall": "compact early, for the latest user message, when its best "
        "match does not fit the recall zone (relevance pressure).",
        "recall_every_turn": "re-decide the recall zone for every new user message. By "
        "default it is re-decided for a message that asks something (holds a question mark) "
        "or whose best match lies outside the window, far above the best inside; other "
        "messages leave the zone in place, so their requests extend the previous one.",
        "prefer": '``"cost"`` (the default: every turn sends the cached window) or '
        '``"recall"``: a new user message the window cannot serve as well as a fresh fit is '
        "served by a one-off request selected as ``fit_messages`` selects it (the next turn "
        "goes back to the cached window; see :mod:`pycupel.session.fresh`).",
        "pin_system": "always keep system prompts.",
        "shrink": "what a compaction may keep shorter instead of dropping: ``True`` (the "
        "default :class:`~pycupel.conversation.Shrink`) or a ``Shrink``; off by default. The "
        "shorter versions are made once per compaction and sent unchanged until the next one "
        "(see :mod:`pycupel.session.shrink`).",
        "summarize": "a callback ``(dropped_messages, previous_summary) -> str`` (or a "
        "coroutine function, awaited by ``afit``), called only at a compaction with the "
        "messages it leaves out or shortens; its text is one user message opening with "
        "``[Summary of the earlier conversation]`` right after the system prompt, and the "
        "previous text is passed back in so repeated compactions fold into one message. A "
        "compaction keeps 10% of the budget for it.",
        "on_summary_error": '``"raise"`` (:class:`~pycupel.errors.SummarizerError`) or '
        '``"skip"`` (the previous summary stays).',
        "recall": "a :class:`~pycupel.conversation.Recall`: the excerpts a compaction keeps "
        "mark their gaps with refs, the elided text is kept in its store, and the model gets it "
        "back with the format's ``recall_tool`` and ``answer_recall`` (the recall's own answers "
        "are never shortened). Turns ``shrink`` on unless it is given. Workers sharing a "
        "``store=`` share the recall's ``secret`` and keep its texts in the same store "
        "(:class:`~pycupel.session.BlobRecallStore`).",
        "store": "where the session's state is kept between turns (a "
        ":class:`~pycupel.session.SessionStore`: :class:`~pycupel.session.SQLiteStore`, "
        ":class:`~pycupel.session.RedisStore`), so that any worker process continues the "
        "conversation exactly; ``None`` keeps it in this object only. Needs ``key``.",
        "key": "the conversation's id in ``store`` (your conversation or thread id).",
        "on_conflict": "when another worker saved a turn of the conversation during this one: "
        '``"retry"`` fits the turn again on its state (at most three times), ``"raise"`` '
        "raises :class:`~pycupel.errors.SessionConflictError`.",
    }
)
"""Each session option's description, appended to the ``Session`` docstrings."""

SESSION_DEFAULTS: Mapping[str, object] = MappingProxyType(
    {
        **{
            name: parameter.default
            for name, parameter in inspect.signature(SessionCore.__init__).parameters.items()
            if parameter.default is not inspect.Parameter.empty
        },
        "store": None,
        "key": None,
        "on_conflict": "retry",
    }
)
"""Each session option's default: the engine's own, and no store."""

SESSION_RAISES: Mapping[str, str] = MappingProxyType(
    {
        "SessionConfigError": "an invalid setting (a store without a key, say).",
        "UnknownOptionError": "an option the session does not take.",
    }
)
"""What starting a session raises."""


class ChatSession(ABC, Generic[M]):
    """A conversation's session over one format's codec (see the module documentation).

    Call ``fit`` every turn with the whole history so far and send the window; then pass the
    response's usage to :meth:`record_usage`. See :mod:`pycupel.session.core` for the
    window's zones, compaction and recall. A session holds one conversation; its methods
    hold a lock, so sharing it between threads is safe, but interleaving two conversations
    in it makes every turn an edit.

    With ``store=`` and ``key=`` the state lives in the store between turns
    (:mod:`pycupel.session.durable`): a session built with the same store and key in any
    process continues the conversation exactly. ``fit`` then also raises
    :class:`~pycupel.errors.SessionConflictError` (a turn of the conversation fitted
    elsewhere at the same time, with ``on_conflict="raise"``),
    :class:`~pycupel.errors.SessionStateError` (a stored state that does not read) and
    :class:`~pycupel.errors.SessionStoreError` (the store failed).
    """

    __slots__ = ("_cache_control", "_core", "_merge")

    @documented(SessionOptions, docs=SESSION_DOCS, defaults=SESSION_DEFAULTS, raises=SESSION_RAISES)
    def __init__(
        self,
        *,
        budget: int,
        overhead: MessageOverhead | None = None,
        **options: Unpack[SessionOptions],
    ) -> None:
        """Start a session (nothing is read before the first ``fit``)."""
        self._start(budget, overhead, options)

    def _start(
        self,
        budget: int,
        overhead: MessageOverhead | None,
        options: SessionOptions,
        *,
        start_with_user: bool = False,
        cache_control: object = None,
        merge: bool = False,
    ) -> None:
        """Build the engine (a format whose ``__init__`` takes options of its own calls this
        after checking them). ``cache_control`` is the breakpoint the windows are marked
        with (``None``: no marks); ``merge`` merges runs of same-role messages in them."""
        known = SessionOptions.__optional_keys__ | SessionOptions.__required_keys__
        for name, value in options.items():
            if name not in known:
                raise UnknownOptionError(
                    name,
                    value,
                    f"is not an option of Session() (its options: budget, overhead, "
                    f"{', '.join(sorted(known))})",
                )
        if overhead is not None and not isinstance(overhead, MessageOverhead):
            raise SessionConfigError(
                "overhead", overhead, "must be a pycupel.adapters.MessageOverhead or None"
            )
        self._cache_control = cache_control
        self._merge = merge
        codec = self._codec()
        chosen = overhead if overhead is not None else codec.default_overhead
        fmt = MessageFormat.of(codec, chosen, start_with_user=start_with_user)
        store, key, on_conflict = check_store_options(
            options.get("store"), options.get("key"), options.get("on_conflict", "retry")
        )
        # The engine's own options (SessionOptions less the store's), as the engine types them.
        engine = cast(
            "EngineOptions",
            {name: value for name, value in options.items() if name not in STORE_OPTIONS},
        )

        def build() -> SessionCore[M]:
            return SessionCore(fmt, budget=budget, **engine)

        core = build()  # a bad setting fails here, at construction
        self._core: SessionCore[M] | StoredCore[M] = (
            core
            if store is None or key is None
            else StoredCore(build, store=store, key=key, on_conflict=on_conflict, core=core)
        )

    @abstractmethod
    def _codec(self) -> Codec[M]:
        """The format's codec (each format's ``Session`` names its own)."""

    def record_usage(self, usage: object) -> ProviderUsage:
        """Calibrate with the provider's usage of the latest window (``response.usage``, or
        the format's equivalent; an object or a dict); returns it, read.

        Raises:
            ProviderUsageError: not a usage object, or a negative or non-integer count.
            SessionConfigError: no window was fitted yet, or its usage was already recorded.
        """
        return self._core.record_usage(usage)

    @property
    def calibration_ratio(self) -> float:
        """The current factor from the estimated to the provider's tokens."""
        return self._core.calibration_ratio

    def _fit(self, messages: Sequence[M], system: object = NO_SYSTEM) -> SessionWindow[M]:
        return self._window(messages, system, self._core.fit(messages, system))

    async def _afit(
        self, messages: Sequence[M], counter: AsyncTokenCounter, system: object = NO_SYSTEM
    ) -> SessionWindow[M]:
        window = await self._core.afit(messages, counter, system)
        return self._window(messages, system, window)

    def _window(
        self, messages: Sequence[M], system: object, window: CoreWindow
    ) -> SessionWindow[M]:
        """The window to send: the system prompt when kept, runs merged and breakpoints
        marked as the format's settings say."""
        sent = window.window(messages)
        if system is not NO_SYSTEM:
            kept = any(unit.system_parameter for unit in window.units)
            sent = dataclasses.replace(sent, system=system if kept else None)
        if self._merge:
            sent = dataclasses.replace(sent, messages=self._codec().merge(window.entries(messages)))
        control = self._cache_control
        return sent if control is None else mark_breakpoints(sent, window, self._codec(), control)


class ListSession(ChatSession[M]):
    """The session of a format whose system prompt is one of its messages (OpenAI Chat
    Completions, LangChain): ``fit`` takes the history alone."""

    __slots__ = ()

    def fit(self, messages: Sequence[M]) -> SessionWindow[M]:
        """This turn's window for the whole history so far (the same list grown, or a new
        list with the same leading messages).

        Raises:
            MessageFormatError: a malformed message, or a tool call without its result.
            PinnedBudgetError: the system prompt and latest user turn alone do not fit.
        """
        return self._fit(messages)

    async def afit(self, messages: Sequence[M], *, counter: AsyncTokenCounter) -> SessionWindow[M]:
        """:meth:`fit` with the new messages counted by an asynchronous token counter (a
        wrapped count-tokens endpoint, say): one awaited ``count_batch`` call per turn for
        the texts this turn adds. Raises what :meth:`fit` raises."""
        return await self._afit(messages, counter)


class BreakpointSession(ChatSession[M]):
    """The session of a format whose cache takes explicit breakpoints when asked
    (``cache_breakpoints=True``): OpenAI's ``prompt_cache_breakpoint`` on GPT-5.6 and later,
    for Chat Completions and Responses. The format names its mark in
    :attr:`explicit_breakpoint`."""

    __slots__ = ()

    explicit_breakpoint: ClassVar[Mapping[str, str]]
    """The mark a window carries at each breakpoint."""

    @documented(
        SessionOptions,
        docs={**SESSION_DOCS, **BREAKPOINT_DOCS},
        defaults=SESSION_DEFAULTS,
        raises=SESSION_RAISES,
    )
    def __init__(
        self,
        *,
        budget: int,
        overhead: MessageOverhead | None = None,
        cache_breakpoints: bool = False,
        **options: Unpack[SessionOptions],
    ) -> None:
        check_bool(PipelineConfigError, "cache_breakpoints", cache_breakpoints)
        control = self.explicit_breakpoint if cache_breakpoints else None
        self._start(budget, overhead, options, cache_control=control)
