"""The policy data model: an immutable, validated description of a pipeline.

A :class:`Policy` names its scorers (each a :class:`ScorerSpec`: type, weight, options), its
slicer (:class:`SlicerSpec`), its placer, whether to deduplicate and the overflow strategy. It
holds no live objects — no scorer instances, no clock — so it can be compared, hashed, saved to
JSON or TOML and loaded back unchanged. :meth:`Policy.build` turns it into a
:class:`~pycupel.pipeline.Pipeline` for a given budget.

Every spec validates itself completely when created, against the same option declarations the
file reader uses (:mod:`pycupel.policy.registry`), and reports *every* problem at once in one
:class:`~pycupel.errors.PolicyError` — so a policy that exists is a policy that builds.

Type names are read case-insensitively, with optional ``-``/``_`` between words and an optional
``Scorer``/``Slice``/``Placer`` suffix (``u-shaped``, ``u_shaped``, ``UShaped``, ``UShapedPlacer``
are one placer). They are stored and saved in one canonical spelling: snake_case for scorers,
slicers and curves (``metadata_trust``, ``count_quota``), and ``chronological`` / ``u-shaped``
for placers — the spellings of the conformance-vector format.

Examples:
    >>> from pycupel.policy import Policy, ScorerSpec, SlicerSpec
    >>> policy = Policy(
    ...     name="triage",
    ...     scorers=[ScorerSpec("recency", 2), ScorerSpec.of("kind", weights={"Memory": 1.0})],
    ...     slicer=SlicerSpec.of("knapsack", bucket_size=50),
    ...     placer="UShaped",
    ... )
    >>> policy.placer
    'u-shaped'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from pycupel.model import ContextBudget, OverflowStrategy
from pycupel.policy._values import FrozenMap
from pycupel.shrink import Shrink

if TYPE_CHECKING:
    from pycupel.pipeline import Pipeline
    from pycupel.scorers import Clock

__all__ = [
    "CountQuotaSpec",
    "CurveSpec",
    "Policy",
    "QuotaSpec",
    "ScorerSpec",
    "SlicerSpec",
    "StepWindowSpec",
]

_NO_OPTIONS: FrozenMap[Any] = FrozenMap()


@dataclass(frozen=True, slots=True)
class QuotaSpec:
    """One :class:`~pycupel.slicers.QuotaSlice` entry: percentages of the target budget.

    Args:
        kind: the context kind (compared case-insensitively).
        require: minimum share, percent in [0, 100] (default 0).
        cap: maximum share, percent in [0, 100], >= ``require`` (default 100).
    """

    kind: str
    require: float = 0.0
    cap: float = 100.0

    def __post_init__(self) -> None:
        _codec.validate_record(self)


@dataclass(frozen=True, slots=True)
class CountQuotaSpec:
    """One count entry of :class:`~pycupel.slicers.CountQuotaSlice` /
    :class:`~pycupel.slicers.CountConstrainedKnapsackSlice`.

    Args:
        kind: the context kind (compared case-insensitively).
        require_count: items of this kind to commit first (>= 0, default 0).
        cap_count: most items of this kind in the result (>= ``require_count``); ``None``
            (the default, and an absent key in a file) means uncapped.
    """

    kind: str
    require_count: int = 0
    cap_count: int | None = None

    def __post_init__(self) -> None:
        _codec.validate_record(self)


@dataclass(frozen=True, slots=True)
class StepWindowSpec:
    """One window of a step decay curve: items younger than ``max_age`` score ``score``."""

    max_age: timedelta
    score: float

    def __post_init__(self) -> None:
        _codec.validate_record(self)


@dataclass(frozen=True, slots=True)
class CurveSpec:
    """A decay curve: ``exponential`` (``half_life``), ``step`` (``windows``) or ``window``
    (``max_age``). Durations are :class:`~datetime.timedelta` values (or, as in files, seconds
    or strings like ``"24h"``)."""

    type: str
    options: Mapping[str, Any] = _NO_OPTIONS

    def __post_init__(self) -> None:
        _codec.validate_component(self)

    @classmethod
    def of(cls, type: str, **options: Any) -> CurveSpec:
        """``CurveSpec.of("exponential", half_life=timedelta(hours=24))``."""
        return cls(type, options)

    def describe(self) -> str:
        """One line of text: ``exponential(half_life=1d)``."""
        return _codec.describe_component(self)


@dataclass(frozen=True, slots=True)
class ScorerSpec:
    """One scorer of a policy.

    Args:
        type: the scorer type (``recency``, ``priority``, ``kind``, ``tag``, ``frequency``,
            ``reflexive``, ``relevance``, ``retrieval_score``, ``scaled``, ``composite``,
            ``decay``, ``metadata_trust``, ``metadata_key``); see :mod:`pycupel.policy.registry`
            for each type's options.
        weight: relative weight among its siblings (finite, > 0). Weights are normalised to
            sum to 1 when the scorers are combined. An inner scorer (``scaled.inner``) has no
            weight and must keep the default.
        options: the type's options, e.g. ``{"weights": {"Memory": 1.0}}`` for ``kind``.
            Nested scorers may be given as ScorerSpec objects or as file-style tables.
    """

    type: str
    weight: float = 1.0
    options: Mapping[str, Any] = _NO_OPTIONS

    def __post_init__(self) -> None:
        _codec.validate_component(self)

    @classmethod
    def of(cls, type: str, weight: float = 1.0, **options: Any) -> ScorerSpec:
        """``ScorerSpec.of("tag", 2, weights={"urgent": 1.0})``."""
        return cls(type, weight, options)

    def describe(self) -> str:
        """One line of text (without the weight): ``tag(weights=urgent=1)``."""
        return _codec.describe_component(self)


@dataclass(frozen=True, slots=True)
class SlicerSpec:
    """The slicer of a policy: ``greedy``, ``knapsack``, ``quota``, ``count_quota``,
    ``count_constrained_knapsack``, ``optimal`` or ``packer`` (see
    :mod:`pycupel.policy.registry` for the options of each)."""

    type: str
    options: Mapping[str, Any] = _NO_OPTIONS

    def __post_init__(self) -> None:
        _codec.validate_component(self)

    @classmethod
    def of(cls, type: str, **options: Any) -> SlicerSpec:
        """``SlicerSpec.of("knapsack", bucket_size=50)``."""
        return cls(type, options)

    def describe(self) -> str:
        """One line of text: ``knapsack(bucket_size=50)``."""
        return _codec.describe_component(self)


def _greedy() -> SlicerSpec:
    return SlicerSpec("greedy")


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """A complete, immutable pipeline description (everything but the budget).

    Args:
        name: a non-blank name.
        scorers: one or more scorer specs; with several, the pipeline scores with their
            weighted average (a composite with the weights normalised to sum to 1).
        description: free text.
        slicer: default ``greedy``.
        placer: ``chronological`` (default) or ``u-shaped``.
        deduplicate: drop byte-identical duplicates (default True).
        overflow_strategy: ``throw`` (default), ``truncate`` or ``proceed``.
        shrink: for chat histories, how tool results and long messages may be shortened
            instead of dropped (a :class:`~pycupel.shrink.Shrink`; the file's ``shrink``
            table); ``fit_messages`` and a ``Session`` given this policy use it when their
            own ``shrink=`` is not given. ``None`` (the default): never shorten.

    Raises:
        PolicyError: listing every problem found, each with its path.
    """

    name: str
    scorers: Sequence[ScorerSpec]
    description: str = ""
    slicer: SlicerSpec = field(default_factory=_greedy)
    placer: str = "chronological"
    deduplicate: bool = True
    overflow_strategy: OverflowStrategy = OverflowStrategy.THROW
    shrink: Shrink | None = None

    def __post_init__(self) -> None:
        _codec.validate_policy(self)

    # ------------------------------------------------------------------ derived views

    @property
    def normalized_weights(self) -> tuple[float, ...]:
        """The scorer weights divided by their sum (what the composite actually uses)."""
        total = sum(spec.weight for spec in self.scorers)
        return tuple(spec.weight / total for spec in self.scorers)

    # ------------------------------------------------------------------ conversions

    def build(
        self, budget: ContextBudget, *, clock: Clock | None = None, system_first: bool = False
    ) -> Pipeline:
        """A :class:`~pycupel.pipeline.Pipeline` running this policy with ``budget``.

        ``clock`` replaces the system clock of every ``decay`` scorer whose policy says
        ``clock = "system"`` (or gives no clock); scorers with a fixed ``reference_time`` keep
        it. ``system_first=True`` wraps the policy's placer in a
        :class:`~pycupel.placers.SystemFirstPlacer`, so pinned system prompts open the window
        (the specification's placers put an undated system prompt where its order says).
        Building a validated policy does not fail.
        """
        return _build.build_pipeline(self, budget, clock=clock, system_first=system_first)

    def to_dict(self) -> dict[str, Any]:
        """The canonical file form: plain dicts, lists, strings, numbers and booleans (no
        ``None``), safe for both JSON and TOML; :meth:`from_dict` reads it back equal."""
        return _codec.dump_policy(self)

    @classmethod
    def from_dict(cls, data: object, *, source: str = "<dict>") -> Policy:
        """Read a policy from its file form (the result of parsing JSON or TOML).

        Raises:
            PolicyError: every problem found, each with its path (``source`` names the input).
        """
        return _codec.read_policy(data, source)


# The codec reads and validates into the classes above, and the builder turns them into
# components; both import this module, so they are imported last (an import cycle by design).
from pycupel.policy import _codec  # noqa: E402
from pycupel.policy import build as _build  # noqa: E402
