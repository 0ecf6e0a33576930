"""What every report renderer shows, computed once from a report and its budget.

The console and HTML renderers differ only in presentation; the facts they print (rows, totals,
tokens per kind, exclusion counts, reason texts) come from here, so both always agree.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from pycupel.diagnostics import (
    BudgetExceeded,
    Deduplicated,
    ExcerptPart,
    ExclusionReason,
    Filtered,
    InclusionReason,
    NegativeTokens,
    PinnedOverride,
    QuotaCapExceeded,
    QuotaRequireDisplaced,
    ScoredTooLow,
    SelectionReport,
)
from pycupel.diagnostics.why import messages_label
from pycupel.model import ContextBudget, ContextItem, ContextKind

__all__ = [
    "ItemRow",
    "KindUsage",
    "ReasonCount",
    "ReportView",
    "allocate",
    "format_score",
    "kind_color",
    "message_label",
    "preview",
    "reason_detail",
    "view_report",
]

# Colours for the well-known kinds (keyed by the folded name), then a fallback palette for
# custom kinds. Each colour reads on white and holds white text; one palette serves the
# terminal (as truecolor styles) and the HTML page.
_KIND_COLORS = MappingProxyType(
    {
        "message": "#4e79a7",
        "document": "#59a14f",
        "tooloutput": "#e8822a",
        "memory": "#a0629b",
        "systemprompt": "#5f6b7a",
    }
)
# The metadata key naming the shorter version a chat adapter kept of a unit (see
# pycupel.adapters.variant_name), and the versions shown beside a row's messages.
_VARIANT_NAME_KEY = "variant"
_SHORTER_VERSIONS = ("excerpt", "placeholder", "truncated")
_FALLBACK_COLORS = ("#d4574e", "#b8860b", "#2a9d8f", "#9c755f", "#7b68ee", "#c2185b", "#5d8aa8")


def kind_color(kind: ContextKind) -> str:
    """A stable colour (``#rrggbb``) for a kind: fixed for the well-known kinds, and for
    custom kinds chosen by a checksum of the folded name (the same in every run)."""
    known = _KIND_COLORS.get(kind.key)
    if known is not None:
        return known
    return _FALLBACK_COLORS[zlib.crc32(kind.key.encode("utf-8")) % len(_FALLBACK_COLORS)]


def preview(text: str, limit: int) -> str:
    """The text on one line (whitespace runs collapsed), clipped to ``limit`` characters with
    an ellipsis."""
    # Clip before collapsing so a huge item costs no more than a small one.
    flat = " ".join(text[: limit * 4 + 64].split())
    if len(flat) <= limit:
        return flat
    return flat[: max(limit - 1, 0)] + "…"


def message_label(item: ContextItem) -> str:
    """Which messages of a history an adapter's item holds (``msg 3``, ``msgs 4-6``,
    ``msgs 2,5``), from its ``message_indices`` metadata, followed by the shorter version
    it stands for when the fit kept one (``msgs 4-5 (placeholder)``, ``msg 7
    (excerpt)``); empty for other items."""
    indices = item.metadata.get("message_indices")
    if not isinstance(indices, tuple | list) or not indices:
        return ""
    if not all(isinstance(index, int) for index in indices):
        return ""
    label = messages_label(indices)
    version = item.metadata.get(_VARIANT_NAME_KEY)
    if version in _SHORTER_VERSIONS:
        label += f" ({version})"
    return label


def format_score(score: float) -> str:
    """A score with three decimals (``nan``/``inf`` spelled out)."""
    if math.isfinite(score):
        return f"{score:.3f}"
    return str(score)


def reason_detail(reason: ExclusionReason | InclusionReason, item: ContextItem) -> str:
    """The facts of a decision in a few words, without the variant name:
    ``"900 tokens, 120 available"`` for a :class:`BudgetExceeded`. Empty for inclusions."""
    if isinstance(reason, InclusionReason):
        return ""
    if isinstance(reason, BudgetExceeded):
        return f"{reason.item_tokens:,} tokens, {reason.available_tokens:,} available"
    if isinstance(reason, Deduplicated):
        # In this pipeline the kept item's content is the excluded one's (byte-exact); reports
        # from elsewhere may name the kept item by another identifier.
        if reason.deduplicated_against == item.content:
            return "identical to a kept item"
        return f"duplicate of “{preview(reason.deduplicated_against, 40)}”"
    if isinstance(reason, NegativeTokens):
        return f"{reason.tokens:,} tokens"
    if isinstance(reason, PinnedOverride):
        return f"displaced by “{preview(reason.displaced_by, 20)}”"
    if isinstance(reason, QuotaCapExceeded):
        return f"{reason.kind} at its cap of {reason.cap} ({reason.actual} wanted)"
    if isinstance(reason, QuotaRequireDisplaced):
        return f"displaced by the {reason.displaced_by_kind} requirement"
    if isinstance(reason, ScoredTooLow):
        return f"score {format_score(reason.score)} below {format_score(reason.threshold)}"
    if isinstance(reason, Filtered):
        return f"filter {reason.filter_name}"
    try:
        return reason.describe()
    except NotImplementedError:  # a custom reason without a description
        return ""


@dataclass(frozen=True, slots=True)
class ItemRow:
    """One candidate as the reports show it.

    Attributes:
        included: whether the item is in the context window.
        position: its 1-based place in the window (included items), or None.
        item: the item itself.
        score: its score at the decision.
        reason: the variant name (``"Scored"``, ``"BudgetExceeded"``...).
        detail: the reason's facts (:func:`reason_detail`); empty for inclusions.
        why: a chat fit's account in words (the report's
            :class:`~pycupel.diagnostics.Why`: ``"part of the recent tail"``); empty when
            the run recorded none.
        parts: an excerpt's kept runs and elided gaps (empty for any other row).
    """

    included: bool
    position: int | None
    item: ContextItem
    score: float
    reason: str
    detail: str
    why: str = ""
    parts: tuple[ExcerptPart, ...] = ()

    @property
    def reason_text(self) -> str:
        """What the row says of its fate: the why when the run recorded one, else
        ``"BudgetExceeded: 900 tokens, 120 available"`` (or just the name without details)."""
        if self.why:
            return self.why
        return f"{self.reason}: {self.detail}" if self.detail else self.reason


@dataclass(frozen=True, slots=True)
class KindUsage:
    """Tokens the included items of one kind take."""

    kind: ContextKind
    tokens: int
    items: int
    color: str


@dataclass(frozen=True, slots=True)
class ReasonCount:
    """How many items (and tokens) one exclusion reason removed."""

    reason: str
    items: int
    tokens: int


@dataclass(frozen=True, slots=True)
class ReportView:
    """The facts a rendered report shows.

    Attributes:
        budget: the run's budget.
        used_tokens: tokens of the included items.
        included: rows of the included items, in placed order.
        excluded: rows of the excluded items, highest score first (the report's order).
        kinds: tokens per kind among the included items, largest first (ties by name).
        reasons: exclusions per reason, most items first (ties by name).
        total_candidates: every input item.
        total_tokens_considered: tokens of every input item.
        excluded_tokens: tokens of the excluded items.
        shortfalls: unmet count requirements, as sentences.
        token_shortfalls: unmet token requirements, as sentences.
    """

    budget: ContextBudget
    used_tokens: int
    included: tuple[ItemRow, ...]
    excluded: tuple[ItemRow, ...]
    kinds: tuple[KindUsage, ...]
    reasons: tuple[ReasonCount, ...]
    total_candidates: int
    total_tokens_considered: int
    excluded_tokens: int
    shortfalls: tuple[str, ...]
    token_shortfalls: tuple[str, ...]

    @property
    def target_share(self) -> float | None:
        """``used_tokens / target_tokens``, or None for a zero target."""
        target = self.budget.target_tokens
        return self.used_tokens / target if target else None

    @property
    def rows(self) -> tuple[ItemRow, ...]:
        """Included rows, then excluded rows."""
        return self.included + self.excluded


def view_report(report: SelectionReport, budget: ContextBudget) -> ReportView:
    """Compute what the renderers show for ``report``, a run at ``budget``."""
    why = report.why

    def told(item: ContextItem, score: float) -> tuple[str, tuple[ExcerptPart, ...]]:
        found = why.get(item)
        if found is None:
            return "", ()
        return found.describe(item, score), found.parts(item)

    included = tuple(
        ItemRow(
            True,
            position,
            entry.item,
            entry.score,
            str(entry.reason),
            "",
            *told(entry.item, entry.score),
        )
        for position, entry in enumerate(report.included, start=1)
    )
    excluded = tuple(
        ItemRow(
            False,
            None,
            entry.item,
            entry.score,
            entry.reason.name,
            reason_detail(entry.reason, entry.item),
            *told(entry.item, entry.score),
        )
        for entry in report.excluded
    )
    used = sum(row.item.tokens for row in included)
    excluded_tokens = sum(row.item.tokens for row in excluded)
    shortfalls = tuple(
        f"{shortfall.kind}: {shortfall.satisfied_count} of {shortfall.required_count} required"
        for shortfall in report.count_requirement_shortfalls
    )
    token_shortfalls = tuple(
        f"{shortfall.kind}: {shortfall.satisfied_tokens:,} of "
        f"{shortfall.required_tokens:,} tokens required"
        for shortfall in report.token_requirement_shortfalls
    )
    return ReportView(
        budget=budget,
        used_tokens=used,
        included=included,
        excluded=excluded,
        kinds=_kind_usage(included),
        reasons=_reason_counts(excluded),
        total_candidates=report.total_candidates,
        total_tokens_considered=report.total_tokens_considered,
        excluded_tokens=excluded_tokens,
        shortfalls=shortfalls,
        token_shortfalls=token_shortfalls,
    )


def _kind_usage(rows: Iterable[ItemRow]) -> tuple[KindUsage, ...]:
    tokens: dict[ContextKind, int] = {}
    counts: dict[ContextKind, int] = {}
    for row in rows:
        kind = row.item.kind
        tokens[kind] = tokens.get(kind, 0) + row.item.tokens
        counts[kind] = counts.get(kind, 0) + 1
    ordered = sorted(tokens, key=lambda kind: (-tokens[kind], kind.key))
    return tuple(KindUsage(kind, tokens[kind], counts[kind], kind_color(kind)) for kind in ordered)


def _reason_counts(rows: Iterable[ItemRow]) -> tuple[ReasonCount, ...]:
    items: dict[str, int] = {}
    tokens: dict[str, int] = {}
    for row in rows:
        items[row.reason] = items.get(row.reason, 0) + 1
        tokens[row.reason] = tokens.get(row.reason, 0) + row.item.tokens
    ordered = sorted(items, key=lambda name: (-items[name], name))
    return tuple(ReasonCount(name, items[name], tokens[name]) for name in ordered)


def allocate(values: Sequence[int], total: int, cells: int) -> list[int]:
    """Split ``cells`` units among ``values`` in proportion to ``value / total``
    (largest-remainder rounding, so the parts add up to the rounded share of the whole).

    Used for bar segments: a kind's segment is as wide as its share of the bar's scale.
    """
    if total <= 0 or cells <= 0:
        return [0] * len(values)
    exact = [max(value, 0) * cells / total for value in values]
    parts = [math.floor(share) for share in exact]
    wanted = min(cells, round(sum(exact)))
    # Hand the remaining cells to the largest remainders (earlier values first on ties).
    order = sorted(range(len(values)), key=lambda i: (-(exact[i] - parts[i]), i))
    for index in order[: max(wanted - sum(parts), 0)]:
        parts[index] += 1
    return parts
