"""``pycupel explain``: every item's fate, score, tokens and reason, and the budget it used."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from pycupel.cli._common import (
    ProgressDisplay,
    budget_options,
    build_pipeline,
    check_history_options,
    check_not_an_input,
    cli_errors,
    describe_scorer,
    format_option,
    items_argument,
    make_budget,
    placer_option,
    policy_options,
    progress_option,
    query_option,
    resolve_policy,
    run_items,
    stderr_console,
    wants_progress,
    write_text,
)
from pycupel.cli._history import fit_history, window_report
from pycupel.cli._input import Candidates, read_candidates
from pycupel.cli.select import history_json
from pycupel.itemio import item_to_dict
from pycupel.model import ContextBudget
from pycupel.pipeline import DryRunResult, Pipeline
from pycupel.render.console import render_report

if TYPE_CHECKING:
    from pycupel.policy import Policy

__all__ = ["explain", "run_settings"]

_FORMAT_NAMES = MappingProxyType(
    {
        "items": "items",
        "openai": "OpenAI chat messages",
        "anthropic": "Anthropic messages",
        "responses": "OpenAI Responses input",
        "gemini": "Gemini contents",
        "langchain": "LangChain messages",
    }
)


def run_settings(
    items_path: str,
    budget: ContextBudget,
    pipeline: Pipeline | None,
    input_format: str,
    policy: Policy | None = None,
) -> dict[str, str]:
    """How the run was configured, for the HTML page's "Run" list (``pipeline`` None: a
    message history fitted as ``fit_messages`` fits it)."""
    text = (
        f"max {budget.max_tokens:,}, target {budget.target_tokens:,}, "
        f"output reserve {budget.output_reserve:,}"
    )
    settings = {
        "items": "standard input" if items_path == "-" else items_path,
        "format": _FORMAT_NAMES[input_format],
        "budget": text,
    }
    if pipeline is None:
        from pycupel.cli._history import describe_fit  # noqa: PLC0415

        return {**settings, **describe_fit(policy)}
    return {
        **settings,
        "scorer": describe_scorer(policy),
        "slicer": type(pipeline.slicer).__name__,
        "placer": type(pipeline.placer).__name__,
        "deduplicate": "on" if pipeline.deduplicate else "off",
        "overflow strategy": pipeline.overflow_strategy.value,
    }


@click.command("explain")
@items_argument
@budget_options
@placer_option
@policy_options
@format_option
@query_option
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Also write the report as a self-contained HTML page to this file.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result and report as JSON.")
@click.option(
    "--rows",
    type=click.IntRange(min=0),
    default=100,
    show_default=True,
    help="Show at most this many included and this many excluded items (0: all).",
)
@progress_option
def explain(
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
    html_path: str | None,
    as_json: bool,
    rows: int,
    progress: bool | None,
) -> None:
    """Explain a selection: which parts of ITEMS go in, which stay out, and why.

    ITEMS is a message history (OpenAI Chat Completions, OpenAI Responses, Anthropic,
    Gemini or LangChain JSON, see --format) or items (a JSON array or JSON Lines file); -
    reads stdin. A history is fitted exactly as the format's fit_messages fits it (see
    'pycupel select --help'); each row then names the messages it holds. Prints a table of
    the included parts (in window order) and the excluded ones (highest score first) with
    kind, tokens, score and reason, and a bar of the budget used per kind.
    """
    budget = make_budget(max_tokens, target, output_reserve)
    check_not_an_input(html_path, [items_path], "--html")
    errors = stderr_console()
    with cli_errors():
        policy = resolve_policy(preset, policy_path)
        candidates = read_candidates(items_path, input_format)
        items = candidates.items
        pipeline: Pipeline | None = None
        show = wants_progress(progress, work=len(items), as_json=as_json, console=errors)
        with ProgressDisplay(show, errors) as display:
            display.task(f"Selecting from {len(items):,} items", None)
            if candidates.is_history:
                check_history_options(placer, system_first)
                fit = fit_history(
                    candidates,
                    budget,
                    policy=policy,
                    query=query,
                    policy_flag="--preset" if preset is not None else "--policy",
                )
                report, used = window_report(fit.report), fit.total_tokens
            else:
                pipeline = build_pipeline(
                    budget, placer, policy=policy, system_first=system_first is not False
                )
                result = run_items(pipeline, items, policy=policy, query=query)
                report, used = result.report, result.total_tokens
            if html_path is not None:
                from pycupel.render.html import report_html  # noqa: PLC0415 (--html only)

                display.task("Writing the HTML report", None)
                page = report_html(
                    report,
                    budget,
                    title=f"Selection report: {_name(items_path)}",
                    subtitle=_subtitle(candidates, budget),
                    settings=run_settings(items_path, budget, pipeline, candidates.format, policy),
                )
                write_text(html_path, page)

    if as_json:
        if candidates.is_history:
            data = {"budget": budget_json(budget), **history_json(fit)}
        else:
            data = _as_json(result, budget)
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    console = Console(highlight=False)
    console.print(render_report(report, budget, max_rows=rows or None))
    if candidates.is_history:
        console.print(
            f"The fitted request: {used:,} tokens (the format's per-request overhead "
            f"included) of a {budget.max_tokens:,}-token budget."
        )
    if html_path is not None:
        click.echo(f"HTML report written to {html_path}")


def _subtitle(candidates: Candidates, budget: ContextBudget) -> str:
    if candidates.is_history:
        count = len(candidates.units.messages) if candidates.units is not None else 0
        what = f"{_FORMAT_NAMES[candidates.format]}: {count:,} messages"
        return f"{what} in {len(candidates.items):,} units, budget {budget.max_tokens:,} tokens"
    return f"{len(candidates.items):,} candidate items, budget {budget.max_tokens:,} tokens"


def budget_json(budget: ContextBudget) -> dict[str, Any]:
    """The budget under the command line's own snake_case keys (the ``report`` beside it keeps
    the specification's wire format)."""
    data: dict[str, Any] = {
        "max_tokens": budget.max_tokens,
        "target_tokens": budget.target_tokens,
        "output_reserve": budget.output_reserve,
    }
    if budget.reserved_slots:
        data["reserved_slots"] = {kind.value: n for kind, n in budget.reserved_slots.items()}
    if budget.estimation_safety_margin_percent:
        data["estimation_safety_margin_percent"] = budget.estimation_safety_margin_percent
    return data


def _name(items_path: str) -> str:
    return "standard input" if items_path == "-" else Path(items_path).name


def _as_json(result: DryRunResult, budget: ContextBudget) -> dict[str, Any]:
    return {
        "budget": budget_json(budget),
        "total_tokens": result.total_tokens,
        "items": [item_to_dict(item) for item in result.items],
        "report": result.report.to_dict(),
    }
