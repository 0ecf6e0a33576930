"""How the command line reports errors: one form, and two exit codes.

Every error goes to stderr as one line, ``Error: <message>``. An error with several problems
(a policy file, an item file) prints that line as a header, then one indented line per
problem::

    Error: policy.toml: 2 problems in policy
      scorers[0].weight: must be > 0, got -1
      placer: unknown placer 'sideways' (expected one of: chronological, u-shaped)

The exit status says whose mistake it is, whether click or pycupel found it:

* :data:`EXIT_USAGE` (2): the command line itself is wrong (an unknown or missing option, an
  option value out of range, options that conflict, an unknown preset name). The line ends
  with where to read the command's help.
* :data:`EXIT_INPUT` (1): an input is wrong (a file that cannot be read or written, or whose
  content is invalid), or a check the command ran failed.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import click

__all__ = ["EXIT_INPUT", "EXIT_USAGE", "ReportingGroup"]

EXIT_INPUT = 1
EXIT_USAGE = 2


class ReportingGroup(click.Group):
    """A click group that reports every error in the one form above, with its exit status."""

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> NoReturn:
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            _report(exc.format_message(), _help_hint(exc.ctx))
            sys.exit(EXIT_USAGE)
        except click.ClickException as exc:
            _report(exc.format_message())
            sys.exit(EXIT_INPUT)
        except click.Abort:
            _report("aborted")
            sys.exit(EXIT_INPUT)
        sys.exit(code if isinstance(code, int) else 0)


def _help_hint(ctx: click.Context | None) -> str:
    path = ctx.command_path if ctx is not None else "pycupel"
    return f" (see '{path} --help')"


def _report(message: str, suffix: str = "") -> None:
    # A multi-line message is a header and its problems: the suffix belongs to the header.
    header, _, rest = message.partition("\n")
    click.echo(f"Error: {header}{suffix}" + (f"\n{rest}" if rest else ""), err=True)
