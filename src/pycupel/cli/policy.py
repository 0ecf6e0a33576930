"""``pycupel policy``: validate, show and describe policy files.

* ``pycupel policy validate FILE...`` — every problem of every file, one per line
  (``FILE: path: message``), or ``FILE: ok``; exit status 1 when any file has a problem.
* ``pycupel policy show NAME|FILE`` — a readable rendering of a preset or a policy file
  (scorers with their normalised weights, slicer, placer...), or its canonical ``--json`` /
  ``--toml`` text.
* ``pycupel policy schema`` — the JSON Schema of the policy file format.

Errors are one clear line and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pycupel import presets
from pycupel.errors import CupelError, InputFormatError, InvalidValueError, PolicyError
from pycupel.policy import Policy, dumps_policy, load_policy, policy_json_schema, registry

__all__ = ["policy"]


@click.group("policy")
def policy() -> None:
    """Validate, show and describe pipeline policies (JSON or TOML files, or presets)."""


@policy.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def validate(files: tuple[str, ...]) -> None:
    """Check policy FILES; print every problem (one per line) or 'ok' per file."""
    failed = False
    for path in files:
        try:
            load_policy(path)
        except PolicyError as exc:
            failed = True
            for problem in exc.problems:
                click.echo(f"{path}: {problem}")
        except InputFormatError as exc:
            failed = True
            click.echo(str(exc))
        else:
            click.echo(f"{path}: ok")
    if failed:
        raise SystemExit(1)


def _resolve(name_or_file: str) -> Policy:
    """A policy file when the argument names an existing file, else a preset."""
    if Path(name_or_file).is_file():
        return load_policy(name_or_file)
    try:
        return presets.by_name(name_or_file)
    except InvalidValueError as exc:
        # The rule lists every preset, the query-aware ones included, and the closest name.
        raise click.ClickException(
            f"no policy file or preset named {name_or_file!r}: a preset name {exc.rule}"
        ) from None


@policy.command("show")
@click.argument("name_or_file", metavar="NAME|FILE")
@click.option("--json", "as_json", is_flag=True, help="Print the canonical JSON instead.")
@click.option("--toml", "as_toml", is_flag=True, help="Print the canonical TOML instead.")
def show(name_or_file: str, as_json: bool, as_toml: bool) -> None:
    """Show a preset (Chat, CodeReview, ...) or a policy file."""
    if as_json and as_toml:
        raise click.UsageError("--json and --toml cannot be used together")
    try:
        chosen = _resolve(name_or_file)
    except CupelError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json or as_toml:
        click.echo(dumps_policy(chosen, "json" if as_json else "toml"), nl=False)
        return
    Console(highlight=False).print(render(chosen))


def render(chosen: Policy) -> Table:
    """A rich table describing ``chosen``: its scorers (weight and normalised share), slicer,
    placer, deduplication and overflow strategy."""
    table = Table(
        title=f"[bold]{chosen.name}[/bold]",
        caption=chosen.description or None,
        show_header=True,
        header_style="bold",
    )
    table.add_column("scorer")
    table.add_column("weight", justify="right")
    table.add_column("share", justify="right")
    table.add_column("options")
    for spec, share in zip(chosen.scorers, chosen.normalized_weights, strict=True):
        component = registry.SCORERS.get(spec.type)
        options = ", ".join(
            f"{option.name}={option.type.describe(spec.options[option.name])}"
            for option in component.options
            if option.name in spec.options
        )
        # Plain Text cells: a description's "[...]" lists are not rich markup.
        table.add_row(spec.type, f"{spec.weight:g}", f"{share:.1%}", Text(options or "-"))
    table.add_section()
    table.add_row("slicer", "", "", Text(chosen.slicer.describe()))
    table.add_row("placer", "", "", chosen.placer)
    table.add_row("deduplicate", "", "", "yes" if chosen.deduplicate else "no")
    table.add_row("overflow", "", "", chosen.overflow_strategy.value)
    return table


@policy.command("schema")
def schema() -> None:
    """Print the JSON Schema of the policy file format."""
    click.echo(json.dumps(policy_json_schema(), indent=2, ensure_ascii=False))
