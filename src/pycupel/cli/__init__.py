"""The ``pycupel`` command line. Each command lives in its own module of this package."""

from __future__ import annotations

import click

from pycupel import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pycupel")
def main() -> None:
    """Select what goes into a language model's context window, and explain why."""


__all__ = ["main"]

from pycupel.cli.select import select  # noqa: E402  (commands register after the group exists)

main.add_command(select)
from pycupel.cli.conformance import conformance  # noqa: E402

main.add_command(conformance)
from pycupel.cli.explain import explain  # noqa: E402
from pycupel.cli.simulate import simulate  # noqa: E402

main.add_command(explain)
main.add_command(simulate)
from pycupel.cli.policy import policy  # noqa: E402

main.add_command(policy)
