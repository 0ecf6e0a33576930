"""``pycupel select``: what fits a budget, and why.

A message history is fitted as its format's ``fit_messages`` fits it (see
:mod:`pycupel.cli._history`): the output is the fitted history, ready to send. An items file
runs the pipeline: the output is the window's items.
"""

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
    check_history_options,
    cli_errors,
    default_scorer,
    format_option,
    items_argument,
    make_budget,
    placer_option,
    policy_options,
    query_option,
    resolve_policy,
    run_items,
)
from pycupel.cli._history import HistoryFit, fit_history, window_report
from pycupel.cli._input import read_candidates
from pycupel.diagnostics import (
    Deduplicated,
    ExclusionReason,
    InclusionReason,
    PinnedOverride,
    SelectionReport,
)
from pycupel.itemio import item_to_dict
from pycupel.model import ContextBudget, ContextItem
from pycupel.pipeline import DryRunResult

__all__ = ["build_pipeline", "default_scorer", "history_json", "select"]

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
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result as JSON: for a message history the fitted history (ready to "
    "send), its tokens and the report; for items the selected items, their tokens and the "
    "report.",
)
def select(
    *,
    items_path: str,
    max_tokens: int,
    target: int | None,
    output_reserve: int,
    placer: str | None,
    system_first: bool | None,
    preset: str | None,
    policy_path: str | None,
    input_format: str,
    query: str | None,
    as_json: bool,
) -> None:
    """Select what fits a budget from ITEMS: a message history (OpenAI Chat Completions,
    OpenAI Responses, Anthropic, Gemini or LangChain JSON, see --format) or items (a JSON
    array or JSON Lines file); - reads stdin.

    A message history is fitted exactly as the format's fit_messages fits it by default
    (structure-aware: system prompt and latest user turn pinned, recent tail, the turns the
    latest question needs, long tool results as excerpts, older ones as placeholders);
    --preset or --policy runs that policy's pipeline instead, as fit_messages(policy=...)
    does. Items run the pipeline.

    Prints the window in order with scores, then what was left out and why.
    """
    budget = make_budget(max_tokens, target, output_reserve)
    with cli_errors():
        policy = resolve_policy(preset, policy_path)
        candidates = read_candidates(items_path, input_format)
        if candidates.is_history:
            check_history_options(placer, system_first)
            fit = fit_history(
                candidates,
                budget,
                policy=policy,
                query=query,
                policy_flag="--preset" if preset is not None else "--policy",
            )
        else:
            pipeline = build_pipeline(
                budget, placer, policy=policy, system_first=system_first is not False
            )
            result = run_items(pipeline, candidates.items, policy=policy, query=query)

    console = Console(highlight=False, soft_wrap=False)
    if candidates.is_history:
        if as_json:
            data = history_json(fit)
            click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            _print_report(
                window_report(fit.report), fit.total_tokens, budget, console, history=True
            )
        return
    if as_json:
        click.echo(json.dumps(_as_json(result), indent=2, ensure_ascii=False))
    else:
        _print_report(result.report, result.total_tokens, budget, console, history=False)


def history_json(fit: HistoryFit) -> dict[str, Any]:
    """The JSON of a fitted history: the history ready to send, its tokens, the report."""
    return {
        "history": fit.history,
        "total_tokens": fit.total_tokens,
        "report": fit.report.to_dict(),
    }


def _as_json(result: DryRunResult) -> dict[str, Any]:
    return {
        "items": [item_to_dict(item) for item in result.items],
        "total_tokens": result.total_tokens,
        "report": result.report.to_dict(),
    }


def _preview(text: str, limit: int) -> str:
    # Clip before collapsing so that a huge item costs no more than a small one.
    flat = " ".join(text[: limit * 4 + 64].split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _reason_text(reason: ExclusionReason) -> str:
    # The reasons' own texts quote whole contents; keep each summary line short.
    if isinstance(reason, Deduplicated):
        return "Deduplicated: identical to a kept item"
    if isinstance(reason, PinnedOverride):
        return "PinnedOverride: the pinned items leave too little room"
    return str(reason)


def _print_report(
    report: SelectionReport, used: int, budget: ContextBudget, console: Console, *, history: bool
) -> None:
    label_of = _no_label
    if history:
        # Which messages each row holds (the renderers' labels: "msgs 4-5 (placeholder)").
        from pycupel.render._view import message_label  # noqa: PLC0415 (histories only)

        label_of = message_label
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
        label = label_of(entry.item)
        content = _preview(entry.item.content, content_width)
        table.add_row(
            str(position),
            entry.item.kind.value,
            str(entry.item.tokens),
            f"{entry.score:.3f}",
            _WHY[entry.reason],
            f"{label} {content}" if label else content,
        )
    console.print(table)
    _print_summary(report, used, budget, console, noun="units" if history else "items")


def _no_label(item: ContextItem) -> str:
    return ""


def _print_summary(
    report: SelectionReport, used: int, budget: ContextBudget, console: Console, *, noun: str
) -> None:
    target = budget.target_tokens
    share = f" ({used / target:.0%})" if target else ""
    console.print(
        f"Selected {len(report.included)} of {report.total_candidates} {noun}: "
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
        # A chat fit says why in words; a pipeline's reason speaks for itself.
        told = report.explain(entry) if entry.item in report.why else _reason_text(entry.reason)
        line.append(told, style="yellow")
        line.append(f"  {_preview(entry.item.content, console.width)}")
        console.print(line, no_wrap=True, overflow="ellipsis")
