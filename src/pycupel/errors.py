"""The one exception hierarchy of pycupel.

Every error the package raises derives from :class:`CupelError`. Each class carries the
facts of the failure as attributes (not only as text), so callers can react to them
programmatically; the message always names the field, the offending value and the rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "AdapterUnavailableError",
    "BudgetOverflowError",
    "BudgetSimulationError",
    "BudgetValidationError",
    "CollectorStateError",
    "ConformanceVectorError",
    "CountRequirementError",
    "CupelError",
    "CupelWarning",
    "InputFormatError",
    "IntegrationUnavailableError",
    "InvalidValueError",
    "ItemValidationError",
    "KindNameWarning",
    "MessageFormatError",
    "MissingDependencyError",
    "MissingQueryError",
    "NonFiniteScoreError",
    "NonMonotonicSlicerError",
    "PinnedBudgetError",
    "PipelineConfigError",
    "PlacerConfigError",
    "PlacerInputError",
    "PolicyError",
    "PolicyProblem",
    "ProviderUsageError",
    "RecallRefError",
    "ReplayLogError",
    "ReportAssertionError",
    "RequirementUnreachableError",
    "ScorerConfigError",
    "SessionConfigError",
    "SessionConflictError",
    "SessionStateError",
    "SessionStoreError",
    "SliceInputError",
    "SlicerConfigError",
    "SolverUnavailableError",
    "StreamSourceError",
    "SummarizerError",
    "TableTooLargeError",
    "TelemetryUnavailableError",
    "TokenizerError",
    "UnknownOptionError",
]


class CupelError(Exception):
    """Base class of every error raised by pycupel."""


class CupelWarning(UserWarning):
    """Base class of every warning pycupel issues (``warnings.simplefilter("error",
    CupelWarning)`` turns them all into exceptions)."""


class KindNameWarning(CupelWarning):
    """A :class:`~pycupel.ContextKind` or :class:`~pycupel.ContextSource` was named with a near
    miss of a well-known name (``"Documnet"``, ``"Memroy"``, ``"Tol"``).

    Kinds and sources are open (the specification accepts any non-blank name), so the name is
    kept as a custom one, and the warning says which well-known name is close. Build a custom
    name you mean with ``ContextKind.custom(name)`` (``ContextSource.custom``): it never
    warns. ``warnings.simplefilter("error", KindNameWarning)`` refuses near misses instead.

    Attributes:
        field: ``"kind"`` or ``"source"``.
        value: the name as given.
        suggestion: the well-known name it is close to.
    """

    def __init__(self, field: str, value: str, suggestion: str) -> None:
        self.field = field
        self.value = value
        self.suggestion = suggestion
        cls = "ContextKind" if field == "kind" else "ContextSource"
        super().__init__(
            f"{field} {value!r} is not a well-known {field}; did you mean {suggestion!r}? "
            f"(kept as a custom {field}; write {cls}.custom({value!r}) to mean it)"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.field, self.value, self.suggestion))


# --------------------------------------------------------------------------- invalid values


class InvalidValueError(CupelError, ValueError):
    """A value broke a validation rule.

    Attributes:
        field: dotted name of the offending field or argument (``"budget.target_tokens"``).
        value: the value that was rejected.
        rule: the rule it broke, phrased as the requirement (``"must be <= max_tokens (1000)"``).
    """

    def __init__(self, field: str, value: object, rule: str) -> None:
        self.field = field
        self.value = value
        self.rule = rule
        super().__init__(f"{field}: {rule}, got {_show(value)}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.field, self.value, self.rule))


class ItemValidationError(InvalidValueError):
    """A :class:`~pycupel.ContextItem` field (or a ContextKind/ContextSource name) is invalid."""


class BudgetValidationError(InvalidValueError):
    """A :class:`~pycupel.ContextBudget` field is invalid."""


class ScorerConfigError(InvalidValueError):
    """A scorer was configured with an invalid value (weight, curve, boost, cycle...)."""


class SlicerConfigError(InvalidValueError):
    """A slicer was configured with an invalid value (quota, bucket size, inner slicer...)."""


class PlacerConfigError(InvalidValueError):
    """A placer was configured with an invalid value."""


class PlacerInputError(InvalidValueError):
    """A placer's ``place`` was called with input it cannot order: not a sequence of
    :class:`~pycupel.ScoredItem`, an entry that is not one (a plain item), or a score that
    is not a real number."""


class PipelineConfigError(InvalidValueError):
    """A pipeline or one of its call arguments is invalid."""


class UnknownOptionError(PipelineConfigError, TypeError):
    """A keyword option a function does not take, or a required one left out (also a
    ``TypeError``, as Python raises for a wrong keyword)."""


class MissingQueryError(PipelineConfigError):
    """A query-aware scorer (relevance, embeddings) ran without the run's query."""


class BudgetSimulationError(InvalidValueError):
    """A budget-simulation call was given bad arguments or an unsupported slicer."""


class SliceInputError(InvalidValueError):
    """A slicer was called with input it cannot use: an item with a negative token count, a
    score the knapsack cannot scale to an integer, a token counter returning a non-integer."""


class SessionConfigError(InvalidValueError):
    """A session (``pycupel.session``, ``adapters.*.Session``) was configured with an invalid
    value: a budget, a watermark, a grid or a recall share."""


class ProviderUsageError(InvalidValueError):
    """The usage given to ``Session.record_usage`` is not a provider usage object: a missing
    prompt count, a negative or non-integer count, cached tokens above the prompt tokens."""


class NonFiniteScoreError(ScorerConfigError):
    """A scorer gave an item NaN or an infinite score; the pipeline refuses to sort, slice or
    place such scores.

    Attributes:
        scorer: the scorer's class name.
        index: the item's position in the list the scorer was given (the pipeline passes the
            non-pinned, non-negative candidates in input order).
        score: the non-finite score.
        content: the item's content, to tell which item it was.
    """

    def __init__(self, scorer: str, index: int, score: float, content: str) -> None:
        super().__init__(
            f"{scorer}.score_all(items)[{index}]",
            score,
            f"must be a finite number (the score of item {_show(content)})",
        )
        self.scorer = scorer
        self.index = index
        self.score = score
        self.content = content

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.scorer, self.index, self.score, self.content))


# --------------------------------------------------------------------------- run-time failures


class PinnedBudgetError(CupelError):
    """Pinned items alone need more tokens than ``max_tokens - output_reserve``."""

    def __init__(self, pinned_tokens: int, available_tokens: int) -> None:
        self.pinned_tokens = pinned_tokens
        self.available_tokens = available_tokens
        super().__init__(
            f"pinned items require {pinned_tokens} tokens, but only {available_tokens} are "
            f"available (max_tokens - output_reserve); unpin items or raise the budget"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.pinned_tokens, self.available_tokens))


class BudgetOverflowError(CupelError):
    """The selected items exceed ``target_tokens`` and the overflow strategy is THROW.

    ``ceiling_tokens`` is set when the limit broken is the hard ceiling
    ``max_tokens - output_reserve``, which lies below a ``target_tokens`` the budget allows
    to be higher; it is None when the target itself is the limit.
    """

    def __init__(
        self, merged_tokens: int, target_tokens: int, ceiling_tokens: int | None = None
    ) -> None:
        self.merged_tokens = merged_tokens
        self.target_tokens = target_tokens
        self.ceiling_tokens = ceiling_tokens
        limit = (
            f"target budget of {target_tokens}"
            if ceiling_tokens is None
            else f"the hard ceiling max_tokens - output_reserve = {ceiling_tokens} "
            f"(target_tokens {target_tokens} lies above it)"
        )
        super().__init__(
            f"selected items require {merged_tokens} tokens, exceeding {limit} "
            "(overflow strategy THROW; use TRUNCATE or PROCEED to allow it)"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.merged_tokens, self.target_tokens, self.ceiling_tokens))


class CountRequirementError(CupelError):
    """A count requirement could not be met and the scarcity behaviour is THROW."""

    def __init__(self, slicer: str, kind: str, satisfied: int, required: int) -> None:
        self.slicer = slicer
        self.kind = kind
        self.satisfied = satisfied
        self.required = required
        super().__init__(
            f"{slicer}: candidate pool for kind '{kind}' has {satisfied} items "
            f"but RequireCount is {required}."
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.slicer, self.kind, self.satisfied, self.required))


class TableTooLargeError(CupelError):
    """A dynamic-programming table would exceed the configured memory cap."""

    def __init__(self, items: int, capacity: int, table_bytes: int, limit_bytes: int) -> None:
        self.items = items
        self.capacity = capacity
        self.table_bytes = table_bytes
        self.limit_bytes = limit_bytes
        super().__init__(
            f"knapsack table for {items} items x {capacity + 1} capacity cells needs "
            f"{table_bytes:,} bytes, over the limit of {limit_bytes:,} bytes; raise bucket_size, "
            f"lower the budget, or raise max_table_bytes"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.items, self.capacity, self.table_bytes, self.limit_bytes))


class MissingDependencyError(CupelError, ImportError):
    """A feature needs an optional package that is not installed.

    Also an :class:`ImportError`, so ``except ImportError`` guards keep working.

    Attributes:
        feature: what was asked for (``"OptimalSlice"``, ``"tracing"``...).
        package: the missing distribution (``"scipy"``).
        extra: the pycupel extra that installs it (``pip install 'pycupel[extra]'``).
    """

    def __init__(self, feature: str, package: str, extra: str) -> None:
        self.feature = feature
        self.package = package
        self.extra = extra
        super().__init__(self._message())

    def _message(self) -> str:
        return (
            f"{self.feature} needs the '{self.package}' package; install it with "
            f"pip install 'pycupel[{self.extra}]'"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.feature, self.package, self.extra))


class SolverUnavailableError(MissingDependencyError):
    """An optional solver dependency (e.g. SciPy for OptimalSlice) is not installed."""


class TokenizerError(CupelError):
    """A token counter could not be created or used (missing package, unreadable file...)."""

    def __init__(self, counter: str, detail: str) -> None:
        self.counter = counter
        self.detail = detail
        super().__init__(f"{counter}: {detail}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.counter, self.detail))


class RequirementUnreachableError(CupelError):
    """A requirement cannot be met within the budget and the other constraints, although
    there are enough candidates, and the scarcity behaviour is THROW.

    Attributes:
        slicer: the slicer that gave up (``"OptimalSlice"``).
        kind: the kind whose requirement is short.
        unit: ``"items"`` for a count requirement, ``"tokens"`` for a token requirement.
        achievable: the most the slicer could select while meeting everything else.
        required: what the requirement asks for.
    """

    def __init__(self, slicer: str, kind: str, unit: str, achievable: int, required: int) -> None:
        self.slicer = slicer
        self.kind = kind
        self.unit = unit
        self.achievable = achievable
        self.required = required
        super().__init__(
            f"{slicer}: kind '{kind}' requires at least {required} {unit}, but at most "
            f"{achievable} can be selected within the budget and the other constraints"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (
            type(self),
            (self.slicer, self.kind, self.unit, self.achievable, self.required),
        )


class RecallRefError(CupelError, LookupError):
    """A recall lookup for a ref its conversation does not hold: unknown, from another
    conversation, or not a ref at all (the recall tool answers the model with this message).

    Attributes:
        ref: the ref asked for.
        detail: what is wrong with it.
    """

    def __init__(self, ref: object, detail: str) -> None:
        self.ref = ref
        self.detail = detail
        super().__init__(f"recall ref {_show(ref)}: {detail}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.ref, self.detail))


class StreamSourceError(CupelError):
    """An asynchronous item source raised while a streaming stage was reading it.

    Nothing from that run is returned; the source's own exception is the ``__cause__``.

    Attributes:
        stage: the pipeline stage that was reading (``"Slice"`` for :class:`StreamSlice`).
        consumed: items read from the source before it failed.
        detail: the source's exception, as ``"Type: message"``.
    """

    def __init__(self, stage: str, consumed: int, detail: str) -> None:
        self.stage = stage
        self.consumed = consumed
        self.detail = detail
        super().__init__(
            f"{stage} stage: the item source failed after {consumed} items ({detail}); "
            "nothing was selected"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.stage, self.consumed, self.detail))


class SummarizerError(CupelError):
    """A ``summarize=`` callback raised, or returned something other than a string.

    The callback's own exception, if any, is the ``__cause__``.

    Attributes:
        summarizer: the callback's qualified name.
        dropped: how many messages it was asked to summarise.
        detail: what went wrong (``"Type: message"`` for an exception it raised).
    """

    def __init__(self, summarizer: str, dropped: int, detail: str) -> None:
        self.summarizer = summarizer
        self.dropped = dropped
        self.detail = detail
        super().__init__(
            f"summarize={summarizer} failed on {dropped} dropped messages: {detail} "
            "(pass on_summary_error='skip' to fit without the summary)"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.summarizer, self.dropped, self.detail))


class SessionConflictError(CupelError):
    """Another worker saved a conversation's state while this one was fitting a turn of it
    (two turns of one conversation at once), and the session was built with
    ``on_conflict="raise"`` or its bounded retries ran out.

    The state in the store is intact (the other worker's turn); this worker's turn was not
    saved. Fit the turn again, or build the session with ``on_conflict="retry"``.

    Attributes:
        key: the conversation's key in the store.
        loaded: the state version the turn started from (None: there was no state yet).
        found: the version the store held when the turn was saved (None: the state was
            deleted).
        attempts: how many times the turn was fitted.
    """

    def __init__(self, key: str, loaded: int | None, found: int | None, attempts: int) -> None:
        self.key = key
        self.loaded = loaded
        self.found = found
        self.attempts = attempts
        before = "no state" if loaded is None else f"version {loaded}"
        after = "no state" if found is None else f"version {found}"
        super().__init__(
            f"session key {key!r}: the stored state changed from {before} to {after} while "
            f"the turn was fitted ({attempts} attempt{'s' if attempts != 1 else ''}); a turn "
            f"is saved only over the version it started from (another worker fitted a turn "
            f"of this conversation at the same time)"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.key, self.loaded, self.found, self.attempts))


class SessionStoreError(CupelError):
    """A session store could not be read or written: the database file cannot be opened or
    stayed locked beyond the store's timeout, the Redis server cannot be reached...

    The store's own exception is the ``__cause__``. Nothing was saved by the failed call.

    Attributes:
        store: the store (``"SQLiteStore('sessions.db')"``).
        operation: what was attempted (``"load"``, ``"save"``, ``"delete"``, ``"put_blob"``,
            ``"get_blob"``).
        key: the conversation's key.
        detail: what went wrong (``"Type: message"`` of the store's exception).
    """

    def __init__(self, store: str, operation: str, key: str, detail: str) -> None:
        self.store = store
        self.operation = operation
        self.key = key
        self.detail = detail
        super().__init__(f"{store}.{operation}(key={key!r}) failed: {detail}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.store, self.operation, self.key, self.detail))


class CollectorStateError(CupelError):
    """A trace collector was used out of order (report requested before a run, or reused)."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(detail)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.detail,))


class TelemetryUnavailableError(MissingDependencyError):
    """OpenTelemetry tracing was asked for but ``opentelemetry-api`` is not installed."""


class AdapterUnavailableError(MissingDependencyError):
    """A chat-message adapter needs an optional package (e.g. ``langchain-core``) that is missing.

    ``adapter`` names the adapter (the ``feature`` of the base class).
    """

    @property
    def adapter(self) -> str:
        return self.feature

    def _message(self) -> str:
        return (
            f"the {self.feature} adapter needs the '{self.package}' package; install it with "
            f"pip install 'pycupel[{self.extra}]'"
        )


class IntegrationUnavailableError(MissingDependencyError):
    """A framework integration (``pycupel.integrations.*``) needs its framework, which is missing.

    ``integration`` names the integration (the ``feature`` of the base class).
    """

    @property
    def integration(self) -> str:
        return self.feature

    def _message(self) -> str:
        return (
            f"the {self.feature} integration needs the '{self.package}' package; install it "
            f"with pip install 'pycupel[{self.extra}]'"
        )


# --------------------------------------------------------------------------- input files


class InputFormatError(CupelError):
    """An input document (items JSON/JSONL, vector TOML...) could not be read.

    Attributes:
        source: where the input came from (a path, or ``"<string>"``).
        location: where in the input the problem is (``"items[3].tokens"``, ``"line 7"``), or
            an empty string when it concerns the whole input.
        detail: what is wrong.
    """

    def __init__(self, source: str, location: str, detail: str) -> None:
        self.source = source
        self.location = location
        self.detail = detail
        where = f"{source}: {location}" if location else source
        super().__init__(f"{where}: {detail}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.source, self.location, self.detail))


class MessageFormatError(InputFormatError):
    """A chat-message history (OpenAI, Anthropic, LangChain) is malformed."""


class ReplayLogError(InputFormatError):
    """A logged request in a replay log (JSON Lines or Parquet) is malformed; ``source`` is the
    file and ``location`` the line or row, then the field (``"line 7: messages[2].role"``)."""


class SessionStateError(InputFormatError):
    """A session's saved state cannot be read: written by an unknown (newer) format version,
    not a session state at all, or damaged. ``source`` names the store and the key,
    ``location`` the part of the state (``"format version"``, ``"zones.stable"``).

    Nothing is guessed from a state that cannot be read; delete the key
    (``store.delete(key)``) to start the conversation's window afresh.
    """


class ConformanceVectorError(InputFormatError):
    """A conformance vector file is malformed or names an unknown scorer/slicer/placer."""


@dataclass(frozen=True, slots=True)
class PolicyProblem:
    """One problem found in a policy document: where it is and what is wrong."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class PolicyError(CupelError):
    """A policy document has one or more problems; all of them are reported at once."""

    def __init__(self, source: str, problems: Sequence[PolicyProblem]) -> None:
        self.source = source
        self.problems = tuple(problems)
        lines = "\n".join(f"  {p}" for p in self.problems)
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        super().__init__(f"{source}: {count} {noun} in policy\n{lines}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.source, self.problems))


# --------------------------------------------------------------------------- analytics and testing


class NonMonotonicSlicerError(BudgetSimulationError):
    """Budget simulation was asked to run with a slicer whose inclusion is not monotonic in
    the budget (``budget_monotonic`` is False). The message is the specification's text.

    Attributes:
        operation: the simulation that refused (``"marginal_items"``, ``"find_min_budget"``).
        slicer: the refused slicer.
    """

    def __init__(self, operation: str, slicer: object, message: str) -> None:
        super().__init__("pipeline.slicer", slicer, message)
        self.operation = operation
        self.message = message
        self.args = (message,)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.operation, self.value, self.message))


class ReportAssertionError(CupelError, AssertionError):
    """A :mod:`pycupel.testing` assertion about a selection report failed.

    Being an :class:`AssertionError`, it is reported as a test failure (not an error) by
    pytest and unittest. The first line of the message is the vocabulary's failure message;
    the following lines show the part of the report it concerns.

    Attributes:
        assertion: the vocabulary pattern name (``"IncludeItemWithKind"``).
        summary: the first line of the message.
        details: the report excerpt (may be empty).
    """

    def __init__(self, assertion: str, summary: str, details: str = "") -> None:
        self.assertion = assertion
        self.summary = summary
        self.details = details
        super().__init__(f"{summary}\n{details}" if details else summary)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.assertion, self.summary, self.details))


def _show(value: object) -> str:
    """A short, unambiguous rendering of a rejected value for messages."""
    try:
        text = repr(value)
    except ValueError:
        if not isinstance(value, int):
            raise
        # Python refuses to print ints over 4,300 digits; say how big it is instead.
        text = f"<an int of about {int(value.bit_length() * math.log10(2)) + 1} digits>"
    return text if len(text) <= 80 else text[:77] + "..."
