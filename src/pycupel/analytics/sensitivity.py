"""Policy sensitivity: run several policies (or pipelines) on the same items and budget and
list the items whose fate differs.

Example::

    from pycupel import presets
    from pycupel.analytics import policy_sensitivity

    result = policy_sensitivity(items, budget, [("chat", presets.chat()), ("rag", presets.rag())])
    for diff in result.diffs:
        print(diff.content, dict(diff.statuses))   # {'chat': 'Included', 'rag': 'Excluded'}

Unlike the specification, which matches items across runs by their content string, items are
matched here by identity: every variant runs on the very same item objects, so identity is
exact even when two items share a content (which deduplication then treats differently).
Each diff entry still carries the item's content for display. Diffs are listed in the order
the items appear in ``items``; a policy variant and a pipeline variant can be mixed; every
variant runs with the one explicit ``budget`` (a policy carries none, and a pipeline's own
budget is deliberately not used, so all variants are compared on the same baseline).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pycupel._checks import check_str
from pycupel.diagnostics import SelectionReport
from pycupel.errors import PipelineConfigError
from pycupel.model import ContextBudget, ContextItem
from pycupel.pipeline import Pipeline
from pycupel.policy import Policy
from pycupel.scorers import Clock

__all__ = ["ItemStatus", "SensitivityDiff", "SensitivityReport", "policy_sensitivity"]


class ItemStatus(enum.StrEnum):
    """Whether a variant put the item in the context window."""

    INCLUDED = "Included"
    EXCLUDED = "Excluded"


@dataclass(frozen=True, slots=True)
class SensitivityDiff:
    """An item at least two variants disagree on.

    Attributes:
        item: the item (compare with ``is``).
        content: its content, for display.
        statuses: ``(label, status)`` for every variant, in variant order.
    """

    item: ContextItem
    content: str
    statuses: tuple[tuple[str, ItemStatus], ...]


@dataclass(frozen=True, slots=True)
class SensitivityReport:
    """Every variant's selection report, and the items whose inclusion differs.

    Attributes:
        variants: ``(label, report)`` in the order given.
        diffs: one entry per swinging item, in the order of ``items``.
    """

    variants: tuple[tuple[str, SelectionReport], ...]
    diffs: tuple[SensitivityDiff, ...]

    def report(self, label: str) -> SelectionReport:
        """The report of the variant called ``label``."""
        for name, report in self.variants:
            if name == label:
                return report
        raise PipelineConfigError("label", label, "must be the label of one of the variants")


Variant = tuple[str, Policy | Pipeline]


def _check_variants(variants: object) -> list[Variant]:
    pairs: list[object]
    if isinstance(variants, Mapping):
        pairs = list(variants.items())
    elif isinstance(variants, str | bytes) or not isinstance(variants, Iterable):
        raise PipelineConfigError(
            "variants", variants, "must be (label, policy-or-pipeline) pairs or a mapping"
        )
    else:
        pairs = list(variants)
    if len(pairs) < 2:
        raise PipelineConfigError(
            "variants",
            len(pairs),
            "must hold at least two variants: a sensitivity comparison needs two",
        )
    checked: list[Variant] = []
    seen: set[str] = set()
    for index, pair in enumerate(pairs):
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise PipelineConfigError(
                f"variants[{index}]", pair, "must be a (label, policy-or-pipeline) pair"
            )
        label = check_str(PipelineConfigError, f"variants[{index}].label", pair[0], non_blank=True)
        if label in seen:
            raise PipelineConfigError(f"variants[{index}].label", label, "must be unique")
        seen.add(label)
        subject = pair[1]
        if not isinstance(subject, Policy | Pipeline):
            raise PipelineConfigError(
                f"variants[{index}]", subject, "must be a Policy or a Pipeline"
            )
        checked.append((label, subject))
    return checked


def policy_sensitivity(
    items: Sequence[ContextItem],
    budget: ContextBudget,
    variants: Iterable[tuple[str, Policy | Pipeline]] | Mapping[str, Policy | Pipeline],
    *,
    clock: Clock | None = None,
) -> SensitivityReport:
    """Dry-run every variant on ``items`` with ``budget`` and diff the selections.

    Args:
        items: the candidates, shared by every variant.
        budget: the budget of every run.
        variants: ``(label, Policy | Pipeline)`` pairs, or a mapping of label to either; at
            least two, with unique non-blank labels.
        clock: passed to :meth:`Policy.build` (replaces the system clock of decay scorers).

    Raises:
        PipelineConfigError: fewer than two variants, a duplicate or blank label, a variant
            that is neither a Policy nor a Pipeline, or a bad ``items``/``budget``.
    """
    given: object = items
    if isinstance(given, str | bytes) or not isinstance(given, Sequence):
        raise PipelineConfigError("items", given, "must be a sequence of ContextItem")
    if not isinstance(budget, ContextBudget):
        raise PipelineConfigError("budget", budget, "must be a ContextBudget")
    checked = _check_variants(variants)

    reports: list[tuple[str, SelectionReport]] = []
    included_sets: list[set[ContextItem]] = []
    for label, subject in checked:
        pipeline = subject.build(budget, clock=clock) if isinstance(subject, Policy) else subject
        report = pipeline.dry_run(items, budget=budget).report
        reports.append((label, report))
        included_sets.append({entry.item for entry in report.included})

    diffs: list[SensitivityDiff] = []
    seen: set[ContextItem] = set()
    for item in items:
        if item in seen:
            continue
        seen.add(item)
        flags = [item in included for included in included_sets]
        if all(flags) or not any(flags):
            continue
        statuses = tuple(
            (label, ItemStatus.INCLUDED if flag else ItemStatus.EXCLUDED)
            for (label, _), flag in zip(checked, flags, strict=True)
        )
        diffs.append(SensitivityDiff(item, item.content, statuses))
    return SensitivityReport(tuple(reports), tuple(diffs))
