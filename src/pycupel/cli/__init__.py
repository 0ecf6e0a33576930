"""The ``pycupel`` command line. Each command lives in its own module of this package.

The group knows its commands by name and imports a command's module only when that command
runs (or when ``--help`` lists them all), so ``pycupel select`` never loads what
``pycupel conformance`` or ``pycupel explain --html`` need.

Errors take one form and two exit codes (2: usage, 1: input); see :mod:`pycupel.cli._errors`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import MappingProxyType

import click

from pycupel import __version__
from pycupel.cli._errors import ReportingGroup

__all__ = ["COMMANDS", "main"]

COMMANDS: Mapping[str, str] = MappingProxyType(
    {
        "conformance": "pycupel.cli.conformance",
        "cost": "pycupel.cli.cost",
        "explain": "pycupel.cli.explain",
        "policy": "pycupel.cli.policy",
        "replay": "pycupel.cli.replay",
        "select": "pycupel.cli.select",
        "simulate": "pycupel.cli.simulate",
    }
)
"""Each command's name and the module that defines it (as an attribute of the same name)."""


class _LazyGroup(ReportingGroup):
    """A group whose commands are imported from :data:`COMMANDS` on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *super().list_commands(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return super().get_command(ctx, cmd_name)
        command = getattr(importlib.import_module(module), cmd_name)
        assert isinstance(command, click.Command), f"{module}.{cmd_name} is not a command"
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pycupel")
def main() -> None:
    """Select what goes into a language model's context window, and explain why."""
