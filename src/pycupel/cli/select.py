"""``pycupel select``: run the pipeline on an items file and show what was chosen and why."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pycupel.cli._common import (
    budget_options,
    build_pipeline,
    cli_errors,
    default_scorer,
    format_option,
    history_defaults,
    items_argument,
    make_budget,
    placer_option,
    policy_options,
    query_option,
    resolve_policy,
)
from pycupel.cli._input import Candidates, read_candidates
from pycupel.diagnostics import (
    Deduplicated,
    ExclusionReason,
    InclusionReason,
    PinnedOverride,
    SelectionReport,
)
from pycupel.itemio import item_to_dict
from pycupel.model import ContextBudget
from pycupel.pipeline import DryRunResult

__all__ = ["build_pipeline", "default_scorer", "select"]

_MIN_CONTENT = 16
_OTHER_COLUMNS = 50  # widths of #, kind, tokens, score and why, with the table's borders
_WHY = MappingProxyType(
    {
        InclusionReason.PINNED: "pinned",
        InclusionReason.SCORED: "scored",
        InclusionReason.ZERO_TOKEN: "free",
    }
)
_SHOWN_EXCLUSIONS = 5


@click.command("select")
@items_argument
@budget_options
@placer_option
@policy_options
@format_option
@query_option
@click.option("--json", "as_json", is_flag=True, help="Print the selection and report as JSON.")
def select(
    *,
    items_path: str,
    max_tokens: int,
    target: int | None,
    output_reserve: int,
    placer: str | None,
    system_first: bool,
    preset: str | None,
    policy_path: str | None,
    input_format: str,
    query: str | None,
    as_json: bool,
) -> None:
    """Select items from ITEMS (a JSON array or JSON Lines file, or an OpenAI or Anthropic
    message history, see --format; - for stdin) for a budget.

    Prints the selected items in context-window order with their scores, then a summary of
    what was left out and why.
    """
    budget = make_budget(max_tokens, target, output_reserve)
    with cli_errors():
        policy = resolve_policy(preset, policy_path)
        candidates = read_candidates(items_path, input_format)
        policy, query = history_defaults(policy, candidates, query)
        pipeline = build_pipeline(
            budget,
            placer,
            deduplicate=not candidates.is_history,
            policy=policy,
            system_first=system_first,
        )
        result = pipeline.dry_run(candidates.items, query=query)

    if as_json:
        click.echo(json.dumps(_as_json(result, candidates), indent=2, ensure_ascii=False))
    else:
        _print(result, budget, Console(highlight=False, soft_wrap=False))


def _as_json(result: DryRunResult, candidates: Candidates) -> dict[str, Any]:
    data: dict[str, Any] = {
        "items": [item_to_dict(item) for item in result.items],
        "total_tokens": result.total_tokens,
        "report": result.report.to_dict(),
    }
    if candidates.is_history:
        # The kept part of the history, as the provider's messages, ready to send.
        data["history"] = candidates.fitted(result.items)
    return data


def _preview(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _reason_text(reason: ExclusionReason) -> str:
    # The reasons' own texts quote whole contents; keep each summary line short.
    if isinstance(reason, Deduplicated):
        return "Deduplicated: identical to a kept item"
    if isinstance(reason, PinnedOverride):
        return "PinnedOverride: the pinned items leave too little room"
    return str(reason)


def _print(result: DryRunResult, budget: ContextBudget, console: Console) -> None:
    report = result.report
    table = Table(title="Context window", title_justify="left")
    table.add_column("#", justify="right", style="dim", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("tokens", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("why", no_wrap=True)
    # The content column takes what the others leave of the terminal's width.
    content_width = max(_MIN_CONTENT, console.width - _OTHER_COLUMNS)
    table.add_column("content", overflow="ellipsis", no_wrap=True, max_width=content_width)
    for position, entry in enumerate(report.included, start=1):
        table.add_row(
            str(position),
            entry.item.kind.value,
            str(entry.item.tokens),
            f"{entry.score:.3f}",
            _WHY[entry.reason],
            _preview(entry.item.content, content_width),
        )
    console.print(table)
    _print_summary(report, result.total_tokens, budget, console)


def _print_summary(
    report: SelectionReport, used: int, budget: ContextBudget, console: Console
) -> None:
    target = budget.target_tokens
    share = f" ({used / target:.0%})" if target else ""
    console.print(
        f"Selected {len(report.included)} of {report.total_candidates} items: "
        f"{used:,} of {target:,} target tokens{share}."
    )
    if not report.excluded:
        console.print("Nothing was excluded.")
        return
    counts = ", ".join(f"{name} {n}" for name, n in report.exclusion_counts().items())
    console.print(f"Excluded {len(report.excluded)}: {counts}.")
    console.print("Highest-scored exclusions:")
    for entry in report.excluded[:_SHOWN_EXCLUSIONS]:
        line = Text("  ")
        line.append(f"{entry.score:.3f}  ", style="dim")
        line.append(_reason_text(entry.reason), style="yellow")
        line.append(f"  {_preview(entry.item.content, console.width)}")
        console.print(line, no_wrap=True, overflow="ellipsis")
