"""The keyword options of the formats' public functions, spelled once.

Every format module exposes ``from_messages``, ``count_tokens``, ``fit_messages`` and
``afit_messages`` with the same options. They are declared here as typed dictionaries, so
each format's function takes them as ``**options: Unpack[FitOptions]`` and type checkers and
IDEs check and complete every keyword. :func:`documented` gives such a function its full
signature (``inspect.signature`` and ``help()`` list every option with its default) and
appends each option's description to its docstring; :func:`read_options` checks the options
at run time (an unknown or missing keyword is an :class:`~pycupel.errors.UnknownOptionError`)
and fills in the defaults. A new option is one line in a typed dictionary, one default and
one description, and every format has it.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ForwardRef, Literal, TypedDict, TypeVar

from pycupel.conversation.overhead import MessageOverhead
from pycupel.conversation.recall import Recall
from pycupel.conversation.structure import Structure
from pycupel.conversation.summary import OnSummaryError, Summarize
from pycupel.conversation.versions import Shrink
from pycupel.errors import UnknownOptionError
from pycupel.model import ContextBudget
from pycupel.pipeline import Pipeline
from pycupel.tokens import TokenCounter

if TYPE_CHECKING:
    from pycupel.policy import Policy

__all__ = [
    "FIT_RAISES",
    "UNITS_RAISES",
    "AlternatingFitOptions",
    "CountOptions",
    "FitOptions",
    "UnitOptions",
    "documented",
    "read_options",
]

F = TypeVar("F", bound=Callable[..., Any])


class CountOptions(TypedDict, total=False):
    """How a request is counted: ``count_tokens``' options."""

    counter: TokenCounter | None
    tools: Sequence[Any] | None
    overhead: MessageOverhead | None


class UnitOptions(CountOptions, total=False):
    """How a history is split into units: ``from_messages``' options."""

    pin_system: bool
    pin_latest_user: bool
    timestamps: Sequence[datetime] | None
    allow_unanswered: bool
    repair: bool


class _Required(TypedDict):
    # A base class of its own rather than ``Required[...]``: with postponed annotations the
    # marker is a string that TypedDict cannot see, and the key would count as optional.
    budget: int | ContextBudget


class FitOptions(_Required, total=False):
    """``fit_messages``' options (all but ``counter``, which ``afit_messages`` takes as an
    asynchronous counter); ``budget`` is the one that is required."""

    policy: Policy | Pipeline | None
    tools: Sequence[Any] | None
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
    recall: Recall | None
    summarize: Summarize | None
    on_summary_error: OnSummaryError


class AlternatingFitOptions(FitOptions, total=False):
    """The options of formats whose roles must alternate and open with the user
    (Anthropic, Gemini)."""

    start_with_user: bool
    merge_consecutive: bool


DEFAULTS: Mapping[str, object] = MappingProxyType(
    {
        "counter": None,
        "tools": None,
        "overhead": None,
        "policy": None,
        "pin_system": True,
        "pin_latest_user": True,
        "timestamps": None,
        "allow_unanswered": False,
        "deduplicate": False,
        "unanswered_tool_calls": "error",
        "repair": False,
        "query": None,
        "keep_recent": None,
        "structure": None,
        "shrink": None,
        "recall": None,
        "summarize": None,
        "on_summary_error": "raise",
        "start_with_user": True,
        "merge_consecutive": False,
        "image_pricing": "openai",
    }
)
"""Each option's value when it is not given."""

DOCS: Mapping[str, str] = MappingProxyType(
    {
        "messages": "the history, as the provider's API takes it (never modified).",
        "selection": "the items to keep: some of ``units.items``, in any order.",
        "units": "what :func:`from_messages` returned for the history.",
        "budget": "tokens for the whole prompt (an int: target = max = budget), or a "
        ":class:`~pycupel.ContextBudget` for an output reserve, a margin...",
        "policy": "the selection policy, or a ready :class:`~pycupel.pipeline.Pipeline`. By "
        "default the selection is structure-aware: :func:`pycupel.presets.conversation` "
        "scores units for ``query`` and the conversation's shape is kept (see "
        ":class:`~pycupel.conversation.Structure`). A given policy runs the ordinary "
        "pipeline, unless ``structure`` or ``keep_recent`` is given too.",
        "counter": "counts message text; defaults to :class:`~pycupel.tokens.HeuristicCounter` "
        "(``afit_messages``: an asynchronous counter, every distinct text counted in one "
        "awaited call).",
        "tools": "the request's tool definitions, counted once per request as part of the "
        "prompt (their JSON text plus the provider's framing).",
        "overhead": "the format's fixed costs around the text; defaults to the module's "
        "``DEFAULT_OVERHEAD``.",
        "pin_system": "always keep system prompts (and developer messages).",
        "pin_latest_user": "always keep the latest user turn (and its unit).",
        "timestamps": "one aware datetime per message (a system prompt beside the list takes "
        "the oldest); by default synthetic, strictly increasing ones in message order, "
        "counted from :data:`~pycupel.conversation.SYNTHETIC_EPOCH` (a decay scorer reading "
        "today's clock sees them as very old).",
        "allow_unanswered": "keep a tool call nobody answers as a flagged unit of its own "
        "instead of raising (providers reject a request holding it).",
        "deduplicate": "let the pipeline drop units whose rendered text is byte-identical. "
        'Off by default: two "ok" turns at different points of a chat are not duplicates.',
        "unanswered_tool_calls": '``"error"`` raises for a call nobody answers; ``"drop"`` '
        "leaves its unit out and reports it excluded with reason ``Filtered``.",
        "repair": "fix what the provider rejects instead of raising (orphaned tool results, "
        "unanswered calls, a leading assistant turn), reporting each fix as a ``Filtered`` "
        "exclusion (see :mod:`pycupel.conversation.repair`).",
        "query": "what the next answer is about; defaults to the text of the latest user "
        "message. Read by query-aware scorers (the default preset's relevance).",
        "keep_recent": "tokens of the newest turns always kept, as an unbroken tail "
        "(shorthand for ``structure=Structure(keep_recent=...)``; by default 10% of the "
        "budget).",
        "structure": "structure-aware selection options (a recent tail, neighbours, dated "
        "headers); the default when no policy is given.",
        "shrink": "keep long tool results and messages as excerpts sized to the room (the "
        "segments the question needs, every gap marked) and older results as placeholders "
        "(their calls whole) instead of dropping them (see "
        ":class:`~pycupel.conversation.Shrink`). ``None``: on for the structure-aware "
        "default, as a given policy says otherwise; ``True``/``False``: the default options "
        "on or off; a ``Shrink`` sets them.",
        "recall": "a :class:`~pycupel.conversation.Recall` (the conversation's scope and "
        "store): the text an excerpt elides is kept in its store and each gap's marker shows "
        "a ref, which the format's ``recall_tool`` lets the model fetch back "
        "(``answer_recall`` answers its calls). ``None``: markers without refs.",
        "summarize": "a callback ``(dropped_messages, previous_summary) -> str`` (or a "
        "coroutine function): the fit keeps 10% of the budget for its text, which comes back "
        "as one user message opening with ``[Summary of the earlier conversation]`` right "
        "after the system messages. It receives the messages left out or shortened, as given.",
        "on_summary_error": '``"raise"`` (a failing summarizer raises '
        ':class:`~pycupel.errors.SummarizerError` naming it) or ``"skip"`` (the window comes '
        "back without the summary).",
        "start_with_user": "drop unpinned leading units that start with an assistant (model) "
        'turn, reported as ``Filtered("start-with-user")``.',
        "merge_consecutive": "merge runs of same-role messages in the output into one new "
        "message (a message with keys other than the role and the content cannot be merged "
        "and raises :class:`~pycupel.errors.MessageFormatError`).",
    }
)
"""Each parameter's description, for the docstrings of the functions taking it."""

FIT_RAISES: Mapping[str, str] = MappingProxyType(
    {
        "MessageFormatError": "a malformed message (or system prompt), an orphaned tool result, "
        "a duplicate call id or (unless dropped) an unanswered call; the error names the "
        "location.",
        "PinnedBudgetError": "the pinned messages (system prompt, latest user turn) alone do "
        "not fit in the budget.",
        "UnknownOptionError": "an option the function does not take, or no ``budget``.",
    }
)
"""What a fit raises, for the ``Raises`` sections."""

UNITS_RAISES: Mapping[str, str] = MappingProxyType(
    {
        "MessageFormatError": FIT_RAISES["MessageFormatError"],
        "UnknownOptionError": "an option the function does not take.",
    }
)
"""What ``from_messages`` raises."""


def _keys(options: type) -> dict[str, str]:
    """A typed dictionary's keys, in declaration order, with their annotations as text."""
    annotations: dict[str, str] = {}
    for klass in reversed(options.__mro__):
        for name, declared in vars(klass).get("__annotations__", {}).items():
            text = declared.__forward_arg__ if isinstance(declared, ForwardRef) else declared
            annotations[name] = text if isinstance(text, str) else repr(text)
    return annotations


def documented(
    options: type,
    *,
    docs: Mapping[str, str] = DOCS,
    defaults: Mapping[str, object] = DEFAULTS,
    raises: Mapping[str, str] | None = None,
    first: Sequence[str] = (),
) -> Callable[[F], F]:
    """Give a function taking ``**options: Unpack[<options>]`` its full signature and its
    ``Args`` and ``Raises`` sections.

    Every parameter, named or taken as an option, is listed with its description: from
    ``docs`` (a format's own words, for its own parameters), else the shared :data:`DOCS`.
    ``raises`` (error class name -> when) becomes the ``Raises`` section; by default it is
    what every format's function taking such options raises: :data:`FIT_RAISES` for a fit's
    options (those with a ``budget``), :data:`UNITS_RAISES` for ``from_messages``' (those
    that pin) and nothing for ``count_tokens``'. Options are listed in their declared order,
    the required ones and then those named in ``first`` leading. The function's own docstring
    keeps its summary and its ``Returns`` section.
    """
    keys = _keys(options)
    required: frozenset[str] = getattr(options, "__required_keys__", frozenset())
    if raises is None:
        raises = FIT_RAISES if "budget" in keys else UNITS_RAISES if "pin_system" in keys else {}

    def apply(function: F) -> F:
        signature = inspect.signature(function)
        named = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        taken = {p.name for p in named}
        expanded = [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=(
                    inspect.Parameter.empty
                    if name in required
                    else defaults.get(name, DEFAULTS.get(name))
                ),
                annotation=annotation,
            )
            for name, annotation in keys.items()
            if name not in taken
        ]
        expanded.sort(
            key=lambda parameter: (
                parameter.default is not inspect.Parameter.empty,
                parameter.name not in first,
            )
        )
        function.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*named, *expanded]
        )
        described = [p.name for p in (*named, *expanded) if p.name != "self"]
        args = [f"{name}: {docs.get(name, DOCS.get(name, ''))}" for name in described]
        summary, _, returns = inspect.cleandoc(function.__doc__ or "").partition("\nReturns:")
        sections = [summary.rstrip(), "Args:\n" + "\n".join(_wrapped(args))]
        if returns:
            sections.append("Returns:" + returns.rstrip())
        if raises:
            errors = [f"{name}: {when}" for name, when in raises.items()]
            sections.append("Raises:\n" + "\n".join(_wrapped(errors)))
        function.__doc__ = "\n\n".join(sections)
        return function

    return apply


def _wrapped(lines: Sequence[str], width: int = 96) -> list[str]:
    """Each description wrapped, its continuation lines indented under it."""
    out: list[str] = []
    for line in lines:
        out.extend(
            textwrap.wrap(
                line,
                width=width,
                initial_indent="    ",
                subsequent_indent="        ",
                break_on_hyphens=False,
            )
        )
    return out


def read_options(given: Mapping[str, object], options: type, *, call: str) -> dict[str, Any]:
    """``given`` checked against the typed dictionary ``options`` (an unknown keyword or a
    missing required one raises :class:`~pycupel.errors.UnknownOptionError` naming it and
    the function ``call``), with every option left out set to its default."""
    keys = _keys(options)
    for name, value in given.items():
        if name not in keys:
            raise UnknownOptionError(
                name,
                value,
                f"is not an option of {call}() (its options: {', '.join(sorted(keys))})",
            )
    for name in getattr(options, "__required_keys__", ()):
        if name not in given:
            raise UnknownOptionError(name, None, f"is required by {call}()")
    resolved = {name: DEFAULTS.get(name) for name in keys}
    resolved.update(given)
    return resolved
