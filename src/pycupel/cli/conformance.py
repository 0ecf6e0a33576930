"""``pycupel conformance run``: evaluate Cupel conformance vectors against this library."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NoReturn

import click

from pycupel.conformance import VectorResult, discover_vectors, run_file

__all__ = ["conformance"]

# Exit codes: 0 all passed, 1 some vector failed, 2 the command itself was misused.
_EXIT_FAILED = 1
_EXIT_USAGE = 2


@click.group("conformance")
def conformance() -> None:
    """Run Cupel conformance test vectors."""


@conformance.command("run")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON list of {path, name, stage, passed, message} objects instead.",
)
@click.option("-v", "--verbose", is_flag=True, help="List passing vectors too.")
@click.pass_context
def run(ctx: click.Context, paths: tuple[Path, ...], as_json: bool, verbose: bool) -> None:
    """Run the vector files in PATHS (folders are searched for **/*.toml).

    Prints every failure with the vector's name and what differed, then a closing
    "N passed, M failed" line. Exits 1 when any vector failed, 2 on a usage error.
    """
    for path in paths:
        if not path.exists():
            _usage_error(ctx, f"{path}: no such file or directory")
        if path.is_dir() and not discover_vectors([path]):
            _usage_error(ctx, f"{path}: no .toml vector files found")
    # Overlapping paths (a folder and a file inside it) run each file once.
    results = [run_file(path) for path in discover_vectors(paths)]
    failed = sum(not result.passed for result in results)
    if as_json:
        click.echo(json.dumps([result.to_dict() for result in results], indent=2))
    else:
        for result in results:
            if not result.passed or verbose:
                _echo_result(result)
        click.echo(f"{len(results) - failed} passed, {failed} failed")
    ctx.exit(_EXIT_FAILED if failed else 0)


def _usage_error(ctx: click.Context, message: str) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    ctx.exit(_EXIT_USAGE)


def _echo_result(result: VectorResult) -> None:
    status = click.style("PASS", fg="green") if result.passed else click.style("FAIL", fg="red")
    stage = f" [{result.stage}]" if result.stage else ""
    click.echo(f"{status} {result.path}{stage}: {result.name}")
    for line in result.message.splitlines():
        click.echo(f"    {line}")
