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

import functools
import sys
import warnings
from collections.abc import Callable
from typing import Any, NoReturn, TextIO

import click

from pycupel.errors import CupelWarning, KindNameWarning

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
            with warnings.catch_warnings():
                shown = warnings.showwarning
                warnings.showwarning = functools.partial(_show_warning, shown)
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


def _show_warning(  # noqa: PLR0917 (warnings.showwarning's own signature)
    fallback: Callable[..., None],
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Print pycupel's own warnings as ``Warning: <message>`` lines on stderr (a near-miss
    kind in a policy file, say); any other warning as Python prints it."""
    if isinstance(message, KindNameWarning):
        # The model's advice names a Python method; on the command line the name is data.
        click.echo(
            f"Warning: {message.field} {message.value!r} is not a well-known {message.field}; "
            f"did you mean {message.suggestion!r}? (kept as a custom {message.field})",
            err=True,
        )
    elif issubclass(category, CupelWarning):
        click.echo(f"Warning: {message}", err=True)
    else:
        fallback(message, category, filename, lineno, file, line)


def _help_hint(ctx: click.Context | None) -> str:
    path = ctx.command_path if ctx is not None else "pycupel"
    return f" (see '{path} --help')"


def _report(message: str, suffix: str = "") -> None:
    # A multi-line message is a header and its problems: the suffix belongs to the header.
    header, _, rest = message.partition("\n")
    click.echo(f"Error: {header}{suffix}" + (f"\n{rest}" if rest else ""), err=True)
