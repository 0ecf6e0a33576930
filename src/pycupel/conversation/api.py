"""The formats' public functions, written once over a :class:`~pycupel.conversation.codec.Codec`.

Each format module (:mod:`pycupel.adapters.openai` and the others) exposes
``from_messages``, ``to_messages``, ``count_tokens``, ``fit_messages`` and ``afit_messages``
with its own types and docstrings; their bodies are one call to a function here:

* :func:`read_units`: the history parsed by the codec and grouped into units;
* :func:`selected`: a selection of those units' items back to messages;
* :func:`count`: a request counted exactly as a fit counts it;
* :func:`fit` and :func:`afit`: the whole fit (units, selection, shorter versions, the
  leading-turn rule, merging, the summary), with a synchronous or an awaited counter.

A fit's outcome is a :class:`Fitting`: the messages to send, the system prompt passed
beside them when it was kept, and the report; the format wraps it in its own result type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pycupel._checks import check_bool
from pycupel.conversation.afit import afit as _afit
from pycupel.conversation.arguments import allows_unanswered, resolve_counter, resolve_structure
from pycupel.conversation.codec import Codec
from pycupel.conversation.fit import LeadingFilter, fit_units, fitted_entries
from pycupel.conversation.options import (
    AlternatingFitOptions,
    CountOptions,
    FitOptions,
    UnitOptions,
    read_options,
)
from pycupel.conversation.parsed import count_parsed
from pycupel.conversation.recall import checked_recall
from pycupel.conversation.repair import group_units
from pycupel.conversation.summary import Summary, dropped_messages, insert_after_system
from pycupel.conversation.units import MessageUnits
from pycupel.conversation.versions import remembering, resolve_shrink
from pycupel.diagnostics import SelectionReport
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextItem
from pycupel.tokens import TokenCounter
from pycupel.tokens.asynchronous import AsyncTokenCounter

__all__ = [
    "START_WITH_USER_FILTER",
    "Fitting",
    "afit",
    "count",
    "fit",
    "read_units",
    "selected",
]

M = TypeVar("M")
S = TypeVar("S")

START_WITH_USER_FILTER = "start-with-user"
"""``Filtered.filter_name`` of leading units dropped because the format needs a user turn
first (``start_with_user``)."""


@dataclass(frozen=True, slots=True)
class Fitting(Generic[M, S]):
    """A fit's outcome, before the format wraps it in its result type.

    Attributes:
        messages: the messages to send, in conversation order (the caller's objects, new
            ones where shortened, merged or added).
        system: the system prompt passed beside the list, as given, when it is in the
            window; ``None`` when there was none or it was dropped.
        report: why every unit was included or excluded.
    """

    messages: list[M]
    system: S | None
    report: SelectionReport


def read_units(
    codec: Codec[M], messages: object, system: object, options: Mapping[str, object]
) -> MessageUnits[M]:
    """The history (and the system prompt beside it) as units: ``from_messages``' body.

    ``options`` are :class:`~pycupel.conversation.options.UnitOptions`, checked here.
    """
    read = read_options(options, UnitOptions, call="from_messages")
    check_bool(PipelineConfigError, "pin_system", read["pin_system"])
    check_bool(PipelineConfigError, "pin_latest_user", read["pin_latest_user"])
    counter = resolve_counter(read["counter"])
    overhead = codec.with_tools(read["overhead"] or codec.default_overhead, read["tools"], counter)
    listed = codec.messages(messages)
    parsed = codec.parse_all(listed, system, overhead)
    units, repairs = group_units(
        parsed,
        repair=read["repair"],
        source=codec.source,
        counter=counter,
        message_count=len(listed),
        pin_system=read["pin_system"],
        pin_latest_user=read["pin_latest_user"],
        timestamps=read["timestamps"],
        allow_unanswered=read["allow_unanswered"],
    )
    return MessageUnits(
        codec.provider,
        tuple(listed),
        units,
        overhead,
        system=codec.origin(messages, system),
        repairs=repairs,
    )


def selected(
    codec: Codec[M],
    selection: Iterable[ContextItem],
    units: MessageUnits[M],
    *,
    merge_consecutive: bool = False,
) -> tuple[bool, list[M]]:
    """``to_messages``' body: whether the system prompt is selected, and the messages of
    the selected units in conversation order (merged when asked)."""
    check_bool(PipelineConfigError, "merge_consecutive", merge_consecutive)
    chosen = units.select(selection)
    kept = [(index, units.messages[index]) for unit in chosen for index in unit.message_indices]
    messages = codec.merge(kept) if merge_consecutive else [message for _, message in kept]
    return any(unit.system_parameter for unit in chosen), messages


def count(codec: Codec[M], messages: object, system: object, options: Mapping[str, object]) -> int:
    """``count_tokens``' body: the request's tokens as a fit counts them, the per-request
    overhead (and the tool definitions) included. ``options`` are
    :class:`~pycupel.conversation.options.CountOptions`, checked here."""
    read = read_options(options, CountOptions, call="count_tokens")
    resolved = resolve_counter(read["counter"])
    chosen = codec.with_tools(read["overhead"] or codec.default_overhead, read["tools"], resolved)
    return count_parsed(codec.parse_all(messages, system, chosen), resolved) + chosen.per_request


def fit(
    codec: Codec[M],
    messages: object,
    system: S,
    counter: TokenCounter | None,
    options: Mapping[str, object],
) -> Fitting[M, S]:
    """``fit_messages``' body; ``options`` are the format's ``FitOptions``, checked here."""
    read = _fit_options(codec, options, call="fit_messages")
    return _fit(codec, messages, system, counter, read)


async def afit(
    codec: Codec[M],
    messages: object,
    system: S,
    counter: AsyncTokenCounter,
    options: Mapping[str, object],
) -> Fitting[M, S]:
    """``afit_messages``' body: :func:`fit` with every text counted by one awaited call of
    ``counter`` (a coroutine ``summarize`` callback awaited once)."""
    read = _fit_options(codec, options, call="afit_messages")

    def run(sync_counter: TokenCounter, chosen: Mapping[str, Any]) -> Fitting[M, S]:
        return _fit(codec, messages, system, sync_counter, chosen)

    return await _afit(run, counter, read)


def _fit_options(codec: Codec[M], options: Mapping[str, object], *, call: str) -> dict[str, Any]:
    alternating = codec.leading_role is not None
    read = read_options(options, AlternatingFitOptions if alternating else FitOptions, call=call)
    if alternating:
        check_bool(PipelineConfigError, "start_with_user", read["start_with_user"])
        check_bool(PipelineConfigError, "merge_consecutive", read["merge_consecutive"])
    return read


def _fit(
    codec: Codec[M],
    messages: object,
    system: S,
    counter: TokenCounter | None,
    read: Mapping[str, Any],
) -> Fitting[M, S]:
    repair = read["repair"]
    # A tool result's text is counted when the history is read, and again for its versions
    # and excerpts: one remembering counter serves the whole fit.
    counting = _counting_once(counter)
    units = read_units(
        codec,
        messages,
        system,
        {
            "counter": counting,
            "tools": read["tools"],
            "overhead": read["overhead"],
            "pin_system": read["pin_system"],
            "pin_latest_user": read["pin_latest_user"],
            "timestamps": read["timestamps"],
            "allow_unanswered": allows_unanswered(read["unanswered_tool_calls"]),
            "repair": repair,
        },
    )
    policy = read["policy"]
    summary = Summary.start(read["summarize"], read["on_summary_error"], read["budget"])
    leading = codec.leading_role is not None and (read["start_with_user"] or repair)
    fitted = fit_units(
        units,
        budget=summary.budget if summary is not None else read["budget"],
        policy=policy,
        deduplicate=read["deduplicate"],
        unanswered_tool_calls="drop" if repair else read["unanswered_tool_calls"],
        query=read["query"],
        structure=resolve_structure(policy, read["structure"], read["keep_recent"]),
        shrink=resolve_shrink(read["shrink"], policy=policy),
        editor=codec.editor(units.overhead),
        counter=counting,
        recall=checked_recall(read["recall"]),
        leading_filter=(
            LeadingFilter(START_WITH_USER_FILTER, codec.opens_wrongly) if leading else None
        ),
    )
    kept = fitted_entries(units, fitted)
    merge = read.get("merge_consecutive", False) or (repair and codec.merges_on_repair)
    fitted_messages = codec.merge(kept) if merge else [message for _, message in kept]
    if summary is not None:
        dropped = dropped_messages(units, fitted)
        text = summary.text(dropped, None)
        if text is not None:
            message = codec.summary_message(text)
            parsed = codec.parse_all([message], None, units.overhead)
            if summary.fits(count_parsed(parsed, resolve_counter(counter)), len(dropped)):
                fitted_messages = insert_after_system(
                    fitted_messages, message, is_system=codec.is_system
                )
    system_kept = any(unit.system_parameter for unit in fitted.units)
    return Fitting(fitted_messages, system if system_kept else None, fitted.report)


def _counting_once(counter: TokenCounter | None) -> TokenCounter | None:
    """``counter`` (the default one when ``None``) counting each distinct text once; an
    invalid counter is returned as given, for :func:`read_units` to report."""
    if counter is not None and not callable(getattr(counter, "count_batch", None)):
        return counter
    return remembering(resolve_counter(counter))
