"""The replay of one request under every policy: the numbers of one output row each.

For each request the messages are split into units once (the adapter of its format, the
default heuristic token counter, its counts remembered by text for the worker's task); then,
per policy:

* the policy fits the units into the budget with the adapter's rules;
* the fitted history is checked (``valid``): it fits in the budget, keeps every pinned unit
  (system prompt, latest user turn), holds no tool call without its result (a call and its
  results are one unit, kept whole), and its messages parse again with the adapter to the
  token count the fit reported;
* kept and dropped messages are counted by role (system, user, assistant, tool) and by the kind
  of their unit (Message, ToolOutput, SystemPrompt);
* the input cost is predicted with caching (the price tables of :mod:`pycupel.analytics.cost`),
  against the previous request of the same session under the same policy; the original request
  is priced the same way, against the previous original request. The cached prefix is the
  longest run of leading units (rendered text and tokens equal) two requests share; it is
  billed as cached under the model's minimum and step (:meth:`ModelPrice.billable_prefix`),
  and ``cost = (tokens - cached) x input + cached x cache read`` per million tokens. Cache
  lifetimes and cache-write premiums are not modelled;
* evidence recall is the share of the labelled evidence messages that were kept;
* ``fit_ms`` is the wall time of the fit (the only column that differs between runs).

A fit that cannot succeed (the pinned messages alone exceed the budget, a policy's quota
cannot be met...) gives a row with ``status`` naming the error and empty fitted columns; the
session's cache state then stays as it was.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pycupel._checks import check_int
from pycupel.adapters import MessageUnits
from pycupel.analytics.cost import DEFAULT_PRICES, ModelPrice
from pycupel.conversation.arguments import resolve_budget
from pycupel.errors import CupelError, InputFormatError, PipelineConfigError, ReplayLogError
from pycupel.model import ContextKind
from pycupel.pipeline import Pipeline
from pycupel.policy import Policy
from pycupel.replay.formats import FORMATS, ROLE_CATEGORIES, ReplayFormat
from pycupel.replay.schema import LoggedRequest, reported_usage
from pycupel.tokens import CachedCounter, HeuristicCounter, TokenCounter

__all__ = [
    "FORMAT_PRICES",
    "KIND_COLUMNS",
    "NONDETERMINISTIC_COLUMNS",
    "ReplayConfig",
    "ReplayPolicy",
    "Replayer",
    "SessionState",
]

KIND_COLUMNS = (
    (ContextKind.MESSAGE, "message"),
    (ContextKind.TOOL_OUTPUT, "tool_output"),
    (ContextKind.SYSTEM_PROMPT, "system_prompt"),
)
NONDETERMINISTIC_COLUMNS = ("fit_ms",)
"""Columns that change from run to run (timings); every other column is reproducible."""

OnError = Literal["fail", "skip"]

FORMAT_PRICES: tuple[tuple[str, ModelPrice], ...] = (
    ("openai", DEFAULT_PRICES["gpt-4.1"]),
    ("responses", DEFAULT_PRICES["gpt-4.1"]),
    ("langchain", DEFAULT_PRICES["gpt-4.1"]),
    ("anthropic", DEFAULT_PRICES["claude-sonnet-4"]),
    ("gemini", DEFAULT_PRICES["gemini-2.5-flash"]),
)
"""The model priced for each format (format name, price) when none is given."""

_COUNTED_TEXTS = 200_000
"""Message texts whose counts a replayer remembers (an LRU; it bounds the worker's memory)."""


@dataclass(frozen=True, slots=True)
class ReplayPolicy:
    """A policy to replay, with the label its rows carry.

    With ``session=True`` the requests of a session are fitted by the format adapter's
    ``Session`` (one per session id: append-only windows between compactions, recall), using
    this policy for its compactions; requests without a session id are fitted on their own.
    """

    name: str
    policy: Policy
    session: bool = False


@dataclass(frozen=True, slots=True)
class ReplayConfig:
    """Everything a replay needs besides its input; small and picklable (sent to workers).

    Attributes:
        policies: the policies to compare (labels unique).
        budget: tokens for the whole prompt of every request.
        on_error: ``"fail"`` stops at the first malformed record; ``"skip"`` leaves it out
            and counts it.
        prices: ``(format, ModelPrice)`` pairs; formats not listed use :data:`FORMAT_PRICES`.
    """

    policies: tuple[ReplayPolicy, ...]
    budget: int
    on_error: OnError = "fail"
    prices: tuple[tuple[str, ModelPrice], ...] = FORMAT_PRICES

    def __post_init__(self) -> None:
        if not self.policies:
            raise PipelineConfigError("policies", self.policies, "must name at least one policy")
        seen: set[str] = set()
        for index, entry in enumerate(self.policies):
            if not isinstance(entry, ReplayPolicy) or not isinstance(entry.policy, Policy):
                raise PipelineConfigError(
                    f"policies[{index}]", entry, "must be a ReplayPolicy holding a Policy"
                )
            if entry.name in seen:
                raise PipelineConfigError(
                    f"policies[{index}].name", entry.name, "must be unique among the policies"
                )
            seen.add(entry.name)
        check_int(PipelineConfigError, "budget", self.budget, minimum=1)
        if self.on_error not in ("fail", "skip"):
            raise PipelineConfigError("on_error", self.on_error, "must be 'fail' or 'skip'")
        known = dict(FORMAT_PRICES)
        for index, pair in enumerate(self.prices):
            if (
                not isinstance(pair, tuple)
                or len(pair) != 2
                or pair[0] not in known
                or not isinstance(pair[1], ModelPrice)
            ):
                raise PipelineConfigError(
                    f"prices[{index}]",
                    pair,
                    f"must be a (format, ModelPrice) pair, format one of {', '.join(known)}",
                )

    def price(self, format_name: str) -> ModelPrice:
        """The price for requests of ``format_name``."""
        for name, price in self.prices:
            if name == format_name:
                return price
        return dict(FORMAT_PRICES)[format_name]


@dataclass(slots=True)
class SessionState:
    """What a session remembers between its requests: the units of the previous request as
    sent (original, and fitted per policy), for the cached-prefix computation."""

    original: tuple[tuple[str, int], ...] = ()
    fitted: dict[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    sessions: dict[str, Any] = field(default_factory=dict)
    """The adapter ``Session`` of each session-mode policy, by policy label."""


class Replayer:
    """Replays requests under the configured policies; one per worker (not shared)."""

    def __init__(self, config: ReplayConfig, sources: Sequence[str]) -> None:
        self.config = config
        self.sources = tuple(sources)
        self._pipelines = tuple(
            (entry.name, entry.policy.build(resolve_budget(config.budget, 0)))
            for entry in config.policies
        )
        self._session_mode = {entry.name: entry for entry in config.policies if entry.session}
        self._adapters: dict[str, Any] = {}
        # Counts are remembered by text: a session's requests repeat their earlier messages,
        # and the validity check counts the fitted messages again.
        self._counter = CachedCounter(HeuristicCounter(), max_entries=_COUNTED_TEXTS)

    def replay_request(
        self, request: LoggedRequest, state: SessionState | None
    ) -> list[dict[str, Any]]:
        """One row per policy for ``request``; ``state`` carries the session's cache."""
        spec = FORMATS[request.format]
        adapter = self._adapters.get(spec.name)
        if adapter is None:
            adapter = self._adapters[spec.name] = spec.adapter()
        source = self.sources[request.key.file_index]
        try:
            units = spec.units(adapter, request, self._counter)
        except InputFormatError as exc:
            location = f"{request.location}: {exc.location}".rstrip(": ")
            raise ReplayLogError(source, location, exc.detail) from None
        except CupelError as exc:  # an adapter option error (an audio part without estimate)
            raise ReplayLogError(source, request.location, str(exc)) from None

        budget = self.config.budget
        price = self.config.price(request.format)
        original = _signature(units)
        tokens_before = units.total_tokens
        cached_before = 0
        if state is not None:
            cached_before = price.billable_prefix(_prefix_tokens(state.original, original))
            state.original = original
        reported_input, reported_cached = reported_usage(request.usage)
        roles_before = _count_messages(spec, units, units.units)
        base: dict[str, Any] = {
            "file_index": request.key.file_index,
            "line": request.key.line,
            "session_id": request.session_id,
            "turn": request.turn,
            "format": request.format,
            "budget": budget,
            "messages_before": sum(len(unit.roles) for unit in units.units),
            "units_before": len(units.units),
            "tokens_before": tokens_before,
            "cached_tokens_before": cached_before,
            "cost_before_usd": _input_cost(price, tokens_before, cached_before),
            "reported_input_tokens": reported_input,
            "reported_cached_tokens": reported_cached,
            "evidence_total": None if request.evidence is None else len(request.evidence),
        }
        rows = []
        for policy_index, (name, pipeline) in enumerate(self._pipelines):
            row = dict(base)
            row["policy"] = name
            row["policy_index"] = policy_index
            self._fit_row(
                row,
                spec=spec,
                adapter=adapter,
                units=units,
                pipeline=pipeline,
                request=request,
                state=state,
                price=price,
            )
            for category in ROLE_CATEGORIES:
                kept = row.pop(f"_kept_{category}", 0)
                row[f"kept_{category}"] = kept
                row[f"dropped_{category}"] = roles_before[category] - kept
            for _, column in KIND_COLUMNS:
                kept = row.pop(f"_kept_kind_{column}", 0)
                row[f"kept_kind_{column}"] = kept
                row[f"dropped_kind_{column}"] = roles_before[f"kind_{column}"] - kept
            rows.append(row)
        return rows

    def _fit_row(
        self,
        row: dict[str, Any],
        *,
        spec: ReplayFormat,
        adapter: Any,
        units: MessageUnits[Any],
        pipeline: Pipeline,
        request: LoggedRequest,
        state: SessionState | None,
        price: ModelPrice,
    ) -> None:
        budget = self.config.budget
        mode = self._session_mode.get(row["policy"])
        if mode is not None and state is not None and hasattr(adapter, "Session"):
            self._session_row(
                row,
                spec=spec,
                adapter=adapter,
                units=units,
                entry=mode,
                request=request,
                state=state,
                price=price,
            )
            return
        started = time.perf_counter()
        try:
            fitted = spec.fit(units, budget=budget, pipeline=pipeline)
        except CupelError as exc:
            row["fit_ms"] = (time.perf_counter() - started) * 1000.0
            row.update(_failed(type(exc).__name__, str(exc)))
            return
        row["fit_ms"] = (time.perf_counter() - started) * 1000.0
        kept_units = fitted.units
        tokens_after = sum(unit.item.tokens for unit in kept_units) + units.overhead.per_request
        signature = _signature_of(kept_units)
        cached = 0
        if state is not None:
            previous = state.fitted.get(row["policy"], ())
            cached = price.billable_prefix(_prefix_tokens(previous, signature))
            state.fitted[row["policy"]] = signature
        kept_indices = {index for unit in kept_units for index in unit.message_indices}
        invalid = _invalid_reason(
            spec,
            units=units,
            fitted=fitted,
            tokens_after=tokens_after,
            budget=budget,
            counter=self._counter,
        )
        _fill(
            row,
            units=units,
            kept_units=kept_units,
            kept_indices=kept_indices,
            tokens_after=tokens_after,
            cached=cached,
            invalid=invalid,
            request=request,
            price=price,
            spec=spec,
        )

    def _session_row(
        self,
        row: dict[str, Any],
        *,
        spec: ReplayFormat,
        adapter: Any,
        units: MessageUnits[Any],
        entry: ReplayPolicy,
        request: LoggedRequest,
        state: SessionState,
        price: ModelPrice,
    ) -> None:
        """The row of a session-mode policy: the adapter's Session fits the request."""
        budget = self.config.budget
        session = state.sessions.get(entry.name)
        if session is None:
            options: dict[str, Any] = {}
            if spec.name == "anthropic":
                options["cache_ttl"] = None  # breakpoints go on copies; keep the originals
            session = adapter.Session(
                budget=budget, policy=entry.policy, counter=self._counter, **options
            )
            state.sessions[entry.name] = session
        messages = units.messages
        started = time.perf_counter()
        try:
            window = session.fit(messages, **spec.system_argument(request.system))
        except CupelError as exc:
            row["fit_ms"] = (time.perf_counter() - started) * 1000.0
            row.update(_failed(type(exc).__name__, str(exc)))
            return
        row["fit_ms"] = (time.perf_counter() - started) * 1000.0
        positions = {id(message): index for index, message in enumerate(messages)}
        kept_indices = {positions[id(message)] for message in window.messages}
        system_kept = window.system is not None
        kept_units = [
            unit
            for unit in units.units
            if (unit.system_parameter and system_kept)
            or (unit.message_indices and unit.message_indices[0] in kept_indices)
        ]
        invalid: str | None = None
        try:
            tokens_after = spec.count_tokens(adapter, window.messages, window.system, self._counter)
        except CupelError as exc:
            tokens_after = sum(unit.item.tokens for unit in kept_units)
            invalid = f"the session's window does not parse: {exc}"
        if invalid is None:
            invalid = _unit_problem(units, set(kept_units), tokens_after, budget)
        cached = price.billable_prefix(window.cached_tokens)
        state.fitted[entry.name] = _signature_of(kept_units)
        _fill(
            row,
            units=units,
            kept_units=kept_units,
            kept_indices=kept_indices,
            tokens_after=tokens_after,
            cached=cached,
            invalid=invalid,
            request=request,
            price=price,
            spec=spec,
        )


def _fill(
    row: dict[str, Any],
    *,
    units: MessageUnits[Any],
    kept_units: Sequence[Any],
    kept_indices: set[int],
    tokens_after: int,
    cached: int,
    invalid: str | None,
    request: LoggedRequest,
    price: ModelPrice,
    spec: ReplayFormat,
) -> None:
    """The fitted columns of a successful fit."""
    evidence = request.evidence
    evidence_kept: int | None = None
    recall: float | None = None
    if evidence is not None:
        evidence_kept = sum(index in kept_indices for index in evidence)
        recall = evidence_kept / len(evidence) if evidence else None
    row.update(
        {
            "status": "ok",
            "detail": None,
            "messages_after": sum(len(unit.roles) for unit in kept_units),
            "units_after": len(kept_units),
            "tokens_after": tokens_after,
            "valid": invalid is None,
            "invalid_reason": invalid,
            "cached_tokens_after": cached,
            "cost_after_usd": _input_cost(price, tokens_after, cached),
            "evidence_kept": evidence_kept,
            "evidence_recall": recall,
        }
    )
    for key, value in _count_messages(spec, units, kept_units).items():
        row[f"_kept_{key}"] = value


def _unit_problem(
    units: MessageUnits[Any], kept: set[Any], tokens_after: int, budget: int
) -> str | None:
    """Budget, pinned units and unanswered calls of a selection of whole units."""
    if tokens_after > budget:
        return f"{tokens_after} tokens exceed the budget of {budget}"
    for unit in units.units:
        if unit in kept:
            if unit.unanswered_call_ids:
                return f"tool call {unit.unanswered_call_ids[0]!r} is kept without its result"
        elif unit.item.pinned:
            return "a pinned unit (system prompt or latest user turn) was dropped"
    return None


def _input_cost(price: ModelPrice, tokens: int, cached: int) -> float:
    """USD for ``tokens`` input tokens of which ``cached`` are read from the cache."""
    return ((tokens - cached) * price.input_per_mtok + cached * price.cache_read_per_mtok) / 1e6


def _failed(status: str, detail: str) -> dict[str, Any]:
    return {
        "status": status,
        "detail": detail,
        "messages_after": None,
        "units_after": None,
        "tokens_after": None,
        "valid": None,
        "invalid_reason": None,
        "cached_tokens_after": None,
        "cost_after_usd": None,
        "evidence_kept": None,
        "evidence_recall": None,
    }


def _signature(units: MessageUnits[Any]) -> tuple[tuple[str, int], ...]:
    return _signature_of(units.units)


def _signature_of(units: Iterable[Any]) -> tuple[tuple[str, int], ...]:
    """Each unit as the provider sees it: its rendered text and its tokens."""
    return tuple((unit.item.content, unit.item.tokens) for unit in units)


def _prefix_tokens(previous: Sequence[tuple[str, int]], current: Sequence[tuple[str, int]]) -> int:
    """Tokens of the longest run of leading units two requests share."""
    tokens = 0
    for before, now in zip(previous, current, strict=False):
        if before != now:
            break
        tokens += now[1]
    return tokens


def _count_messages(
    spec: ReplayFormat, units: MessageUnits[Any], selected: Iterable[Any]
) -> Mapping[str, int]:
    """Messages of ``selected`` units by role category and by the kind of their unit."""
    counts = dict.fromkeys(ROLE_CATEGORIES, 0)
    for _, column in KIND_COLUMNS:
        counts[f"kind_{column}"] = 0
    kinds = {kind: f"kind_{column}" for kind, column in KIND_COLUMNS}
    for unit in selected:
        kind_key = kinds.get(unit.item.kind)
        for role in unit.roles:
            counts[spec.role_category(role)] += 1
        if kind_key is not None:
            counts[kind_key] += len(unit.roles)
    return counts


def _invalid_reason(
    spec: ReplayFormat,
    *,
    units: MessageUnits[Any],
    fitted: Any,
    tokens_after: int,
    budget: int,
    counter: TokenCounter,
) -> str | None:
    """Why the fitted history would not be a valid request, or None when it is.

    Tool calls and their results are grouped into units by the adapter, and a fit keeps whole
    units, so a kept unit never holds an unanswered call: that is checked on the units. The
    fitted messages themselves are parsed again by the adapter's counter and must count the
    tokens the fit reported.
    """
    kept = set(fitted.units)
    problem = _unit_problem(units, kept, tokens_after, budget)
    if problem is not None:
        return problem
    if len(kept) == len(units.units):
        return None  # the original request, which the adapter has just read
    adapter = spec.adapter()
    messages, system = spec.fitted_messages(adapter, fitted, units)
    try:
        counted = spec.count_tokens(adapter, messages, system, counter)
    except CupelError as exc:
        return f"the fitted history does not parse: {exc}"
    if counted != tokens_after:
        return f"the fitted history counts {counted} tokens, not {tokens_after}"
    return None
