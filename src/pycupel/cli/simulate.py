"""``pycupel simulate``: what the pipeline selects at each of several budgets."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from pycupel._checks import MAX_BUDGET
from pycupel.analytics.simulation import sweep_budgets
from pycupel.cli._common import (
    ProgressDisplay,
    build_pipeline,
    check_not_an_input,
    cli_errors,
    describe_scorer,
    format_option,
    items_argument,
    policy_options,
    progress_option,
    reads_query,
    resolve_policy,
    stderr_console,
    wants_progress,
    write_text,
)
from pycupel.cli._history import check_history_policy, describe_fit, sweep_history
from pycupel.cli._input import read_candidates
from pycupel.model import ContextBudget, ContextItem
from pycupel.pipeline import Pipeline
from pycupel.render.sweep import SweepPointLike, SweepRow, sweep_chart, sweep_rows, sweep_table

__all__ = ["parse_budgets", "simulate"]

_MAX_BUDGETS = 10_000


def parse_budgets(text: str) -> list[int]:
    """Budgets from ``--budgets``: comma-separated token counts, each either ``N`` or a range
    ``START:STOP:STEP`` (STOP included when the steps reach it). Returned in increasing
    order.

    Raises:
        click.BadParameter: an entry is not a non-negative integer or a valid range, a budget
            is repeated, or there are more than 10,000 budgets.
    """
    budgets: list[int] = []
    for raw in text.split(","):
        entry = raw.strip()
        if not entry:
            raise click.BadParameter(
                f"empty entry in {text!r}; give token counts separated by commas",
                param_hint="--budgets",
            )
        fields = entry.split(":")
        if len(fields) == 1:
            budgets.append(_count(entry, entry))
        elif len(fields) == 3:
            start, stop, step = (_count(field, entry) for field in fields)
            if step == 0 or stop < start:
                raise click.BadParameter(
                    f"range {entry!r} must have START <= STOP and a STEP > 0",
                    param_hint="--budgets",
                )
            if (stop - start) // step + 1 > _MAX_BUDGETS:
                raise click.BadParameter(
                    f"range {entry!r} has more than {_MAX_BUDGETS:,} budgets",
                    param_hint="--budgets",
                )
            budgets.extend(range(start, stop + 1, step))
        else:
            raise click.BadParameter(
                f"{entry!r} is neither a token count nor a START:STOP:STEP range",
                param_hint="--budgets",
            )
    if len(budgets) > _MAX_BUDGETS:
        raise click.BadParameter(
            f"at most {_MAX_BUDGETS:,} budgets, got {len(budgets):,}", param_hint="--budgets"
        )
    seen: set[int] = set()
    for budget in budgets:
        if budget in seen:
            raise click.BadParameter(f"budget {budget} is given twice", param_hint="--budgets")
        seen.add(budget)
    return sorted(budgets)


def _count(field: str, entry: str) -> int:
    try:
        value = int(field.strip())
    except ValueError:
        raise click.BadParameter(
            f"{field.strip()!r} in {entry!r} is not a whole number of tokens",
            param_hint="--budgets",
        ) from None
    if value < 0:
        raise click.BadParameter(f"budgets must be >= 0, got {value}", param_hint="--budgets")
    if value > MAX_BUDGET:
        raise click.BadParameter(
            f"budgets must be <= {MAX_BUDGET:,}, got {value}", param_hint="--budgets"
        )
    return value


@click.command("simulate")
@items_argument
@click.option(
    "--budgets",
    "budgets_text",
    required=True,
    metavar="LIST",
    help="Budgets to try: comma-separated token counts or START:STOP:STEP ranges "
    "(e.g. 500,1000,2000 or 500:4000:500).",
)
@click.option(
    "--output-reserve",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Tokens kept free for the model's answer, at every budget.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Also write the sweep as a self-contained HTML page (table and charts).",
)
@click.option(
    "--svg",
    "svg_path",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Also write the sweep's line charts as a standalone SVG file.",
)
@policy_options
@format_option
@click.option("--json", "as_json", is_flag=True, help="Print the sweep as JSON.")
@progress_option
def simulate(
    *,
    items_path: str,
    budgets_text: str,
    output_reserve: int,
    html_path: str | None,
    svg_path: str | None,
    preset: str | None,
    policy_path: str | None,
    input_format: str,
    as_json: bool,
    progress: bool | None,
) -> None:
    """Select from ITEMS at each budget and compare the selections.

    ITEMS is a message history (OpenAI Chat Completions, OpenAI Responses, Anthropic,
    Gemini or LangChain JSON, see --format) or items (a JSON array or JSON Lines file); -
    reads stdin. Each budget B runs with max_tokens = target_tokens = B: a history is fitted
    as the format's fit_messages fits it (its units counted, tokens used: the whole request),
    items run the pipeline. The table shows, per budget, what was selected, the tokens it
    uses, the utilisation (tokens used / B), the total score and how many it added to the
    previous budget's selection (and dropped, if any).
    """
    budgets = parse_budgets(budgets_text)
    too_small = [budget for budget in budgets if budget < output_reserve]
    if too_small:
        raise click.BadParameter(
            f"every budget must be >= --output-reserve ({output_reserve}), got {too_small[0]}",
            param_hint="--budgets",
        )
    check_not_an_input(html_path, [items_path], "--html")
    check_not_an_input(svg_path, [items_path], "--svg")
    errors = stderr_console()
    with cli_errors():
        policy = resolve_policy(preset, policy_path)
        candidates = read_candidates(items_path, input_format)
        items = candidates.items
        base = ContextBudget(
            max_tokens=budgets[-1], target_tokens=budgets[-1], output_reserve=output_reserve
        )
        pipeline: Pipeline | None = None
        if candidates.is_history:
            check_history_policy(policy, "--preset" if preset is not None else "--policy")
        else:
            pipeline = build_pipeline(base, policy=policy)
            if reads_query(policy):
                assert policy is not None  # reads_query is False without one
                raise click.UsageError(
                    f"the {policy.name} policy scores each item's relevance to a question; "
                    "simulate takes no --query (use it on a message history, whose latest "
                    "user message is the question, or choose another policy)"
                )
        work = len(items) * len(budgets)
        show = wants_progress(progress, work=work, as_json=as_json, console=errors)
        points: list[SweepPointLike] = []
        with ProgressDisplay(show, errors) as display:
            advance = display.task(f"Sweeping {len(items):,} items", len(budgets))
            for tokens in budgets:
                # One run at a time, so that progress can advance between them.
                if pipeline is None:
                    budget = base.replace(max_tokens=tokens, target_tokens=tokens)
                    points.extend(sweep_history(candidates, [budget], policy=policy))
                else:
                    points.extend(sweep_budgets(pipeline, items, [tokens]))
                advance()
        rows = sweep_rows(points)
        title = f"Budget sweep: {_name(items_path)}"
        if html_path is not None:
            settings = {
                "items": "standard input" if items_path == "-" else items_path,
                "budgets": ", ".join(f"{budget:,}" for budget in budgets),
                "output reserve": f"{output_reserve:,}",
            }
            if pipeline is None:
                settings.update(describe_fit(policy))
            else:
                settings["scorer"] = describe_scorer(policy)
                settings["slicer"] = type(pipeline.slicer).__name__
            subtitle = f"{len(items):,} candidate items, {len(budgets):,} budgets"
            from pycupel.render.html import sweep_html  # noqa: PLC0415 (--html only)

            write_text(
                html_path, sweep_html(rows, title=title, subtitle=subtitle, settings=settings)
            )
        if svg_path is not None:
            write_text(svg_path, sweep_chart(rows, title=title) + "\n")

    if as_json:
        click.echo(json.dumps(_as_json(rows, points, items), indent=2, ensure_ascii=False))
        return
    console = Console(highlight=False)
    console.print(sweep_table(rows))
    for path, what in ((html_path, "HTML page"), (svg_path, "SVG chart")):
        if path is not None:
            click.echo(f"{what} written to {path}")


def _name(items_path: str) -> str:
    return "standard input" if items_path == "-" else Path(items_path).name


def _as_json(
    rows: Sequence[SweepRow], points: Sequence[SweepPointLike], items: Sequence[ContextItem]
) -> dict[str, Any]:
    index_of = {id(item): index for index, item in enumerate(items)}
    budgets = []
    for row, point in zip(rows, points, strict=True):
        entry: dict[str, Any] = {
            "max_tokens": row.budget.max_tokens,
            "target_tokens": row.budget.target_tokens,
            "output_reserve": row.budget.output_reserve,
            "feasible": row.feasible,
            "items_selected": row.items,
            "tokens_used": row.tokens_used,
            "total_score": row.total_score,
            "selected": [index_of[id(item)] for item in point.selected],
        }
        # Absent rather than null: no utilisation at a zero target, no change at the first.
        if row.utilisation is not None:
            entry["utilisation"] = row.utilisation
        if row.added is not None and row.removed is not None:
            entry["added"] = row.added
            entry["removed"] = row.removed
        budgets.append(entry)
    return {"candidates": len(items), "budgets": budgets}
