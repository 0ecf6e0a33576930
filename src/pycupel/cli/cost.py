"""``pycupel cost``: the input cost of a conversation's requests with prompt caching."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from pycupel.analytics.cost import (
    DEFAULT_PRICES,
    PRICES_CHECKED,
    CostReport,
    RenderedRequest,
    render_request,
    replay_cost,
)
from pycupel.cli._common import cli_errors
from pycupel.cli._input import check_json_lines
from pycupel.errors import InputFormatError
from pycupel.itemio import loads_json

__all__ = ["cost"]


@click.command("cost")
@click.argument("requests", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--model",
    required=True,
    type=click.Choice(sorted(DEFAULT_PRICES)),
    help=f"Whose prices and caching rules to apply (list prices as of {PRICES_CHECKED}; "
    "'@1h' is Anthropic's one-hour cache lifetime).",
)
@click.option(
    "--format",
    "message_format",
    type=click.Choice(["openai", "anthropic"]),
    default=None,
    help="Message format of the requests (default: anthropic for claude models, else openai).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def cost(requests: Path, model: str, message_format: str | None, as_json: bool) -> None:
    """Replay the requests in REQUESTS turn by turn and price their input.

    REQUESTS is a JSON Lines file, one request per line, in sending order: either the
    message list, or an object with "messages" (and, for Anthropic, "system"). The cached
    prefix of each request is measured from the requests themselves: the longest run of
    leading messages an earlier request left in the provider's cache.
    """
    chosen = message_format or ("anthropic" if model.startswith("claude") else "openai")
    with cli_errors():
        check_json_lines(requests, record="request")
        rendered = _read(requests, chosen)
        report = replay_cost(rendered, price=model)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
        return
    _print(report)


def _read(path: Path, message_format: str) -> list[RenderedRequest]:
    source = str(path)
    rendered = []
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputFormatError(
                    source, f"line {number}", f"not UTF-8 text: {exc.reason}"
                ) from None
            if not line.strip():
                continue
            value: Any = loads_json(line, source=source, first_line=number)
            system = None
            if isinstance(value, dict):
                system = value.get("system")
                value = value.get("messages")
            if not isinstance(value, list):
                raise InputFormatError(
                    source,
                    f"line {number}",
                    'must be a list of messages or an object with "messages"',
                )
            rendered.append(
                render_request(value, format=message_format, system=system)  # type: ignore[arg-type]
            )
    if not rendered:
        raise InputFormatError(source, "", "holds no request")
    return rendered


def _print(report: CostReport) -> None:
    table = Table(title=f"input cost at {report.price.model} prices")
    for header in ("turn", "prompt", "cache read", "cache write", "uncached", "USD"):
        table.add_column(header, justify="right")
    for turn in report.turns:
        table.add_row(
            str(turn.turn),
            f"{turn.prompt_tokens:,}",
            f"{turn.cache_read_tokens:,}",
            f"{turn.cache_write_tokens:,}",
            f"{turn.uncached_tokens:,}",
            f"{turn.cost_usd:.6f}",
        )
    console = Console()
    console.print(table)
    console.print(
        f"total ${report.total_cost_usd:.6f} for {report.prompt_tokens:,} input tokens; "
        f"{report.cached_share:.0%} read from the cache; {report.compactions} cache breaks"
    )
