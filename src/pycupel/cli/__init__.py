"""The ``pycupel`` command line. Each command lives in its own module of this package.

Errors take one form and two exit codes (2: usage, 1: input); see :mod:`pycupel.cli._errors`.
"""

from __future__ import annotations

import click

from pycupel import __version__
from pycupel.cli._errors import ReportingGroup


@click.group(cls=ReportingGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pycupel")
def main() -> None:
    """Select what goes into a language model's context window, and explain why."""


__all__ = ["main"]

# Commands register after the group exists.
from pycupel.cli.conformance import conformance  # noqa: E402
from pycupel.cli.cost import cost  # noqa: E402
from pycupel.cli.explain import explain  # noqa: E402
from pycupel.cli.policy import policy  # noqa: E402
from pycupel.cli.replay import replay  # noqa: E402
from pycupel.cli.select import select  # noqa: E402
from pycupel.cli.simulate import simulate  # noqa: E402

for _command in (conformance, cost, explain, policy, replay, select, simulate):
    main.add_command(_command)
