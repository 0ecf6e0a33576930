"""What the pipeline commands share: the budget and input options, the pipeline they run,
error reporting and the progress display (reading the input is :mod:`pycupel.cli._input`).

Errors: every expected failure (a :class:`~pycupel.errors.CupelError`, an unreadable or
unwritable file) becomes one line on stderr and exit status 1; usage errors exit with 2
(click's convention). Anything else is a bug and shows its traceback.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console

from pycupel._checks import MAX_BUDGET
from pycupel.cli._input import FORMATS
from pycupel.errors import CupelError, InvalidValueError
from pycupel.model import ContextBudget, ContextItem
from pycupel.pipeline import DryRunResult, Pipeline
from pycupel.placers import ChronologicalPlacer, Placer, SystemFirstPlacer, UShapedPlacer
from pycupel.scorers import (
    CompositeScorer,
    FrequencyScorer,
    KindScorer,
    PriorityScorer,
    RecencyScorer,
    Scorer,
)
from pycupel.slicers import GreedySlice

if TYPE_CHECKING:
    from rich.progress import Progress

    from pycupel.policy import Policy

__all__ = [
    "PLACERS",
    "PROGRESS_THRESHOLD",
    "ProgressDisplay",
    "budget_options",
    "build_pipeline",
    "check_history_options",
    "check_not_an_input",
    "cli_errors",
    "default_scorer",
    "describe_scorer",
    "format_option",
    "items_argument",
    "make_budget",
    "placer_option",
    "policy_options",
    "progress_option",
    "query_option",
    "reads_query",
    "resolve_policy",
    "run_items",
    "stderr_console",
    "wants_progress",
    "write_text",
]

F = TypeVar("F", bound=Callable[..., Any])

PLACERS: Mapping[str, type[ChronologicalPlacer] | type[UShapedPlacer]] = MappingProxyType(
    {
        "chronological": ChronologicalPlacer,
        "u-shaped": UShapedPlacer,
    }
)

PROGRESS_THRESHOLD = 50_000
"""Show progress (on a terminal) when items x pipeline runs exceeds this."""


def default_scorer() -> Scorer:
    """The commands' scorer: recency 3, priority 2, kind 1, frequency 1 (weights normalised)."""
    return CompositeScorer(
        [
            (RecencyScorer(), 3.0),
            (PriorityScorer(), 2.0),
            (KindScorer(), 1.0),
            (FrequencyScorer(), 1.0),
        ]
    )


def build_pipeline(
    budget: ContextBudget,
    placer: str | None = None,
    *,
    deduplicate: bool = True,
    policy: Policy | None = None,
    system_first: bool = True,
) -> Pipeline:
    """The pipeline the commands run.

    Without a policy: the default scorer (:func:`default_scorer`), greedy slicing and the chosen
    placer (chronological by default). With a policy (``--preset``/``--policy``): the policy's
    pipeline, with ``placer`` overriding the policy's placer when given. Message histories run
    without deduplication (the adapters' rule: two "ok" turns at different points of a chat
    are not duplicates), whatever the policy says. With ``system_first`` (``--system-first``,
    the default) the placer is wrapped in a :class:`~pycupel.placers.SystemFirstPlacer`.
    """
    if policy is not None:
        changed = dataclasses.replace(
            policy,
            placer=placer or policy.placer,
            deduplicate=policy.deduplicate and deduplicate,
        )
        return changed.build(budget, system_first=system_first)
    chosen: Placer = PLACERS[placer or "chronological"]()
    if system_first:
        chosen = SystemFirstPlacer(chosen)
    return Pipeline(
        budget=budget,
        scorer=default_scorer(),
        slicer=GreedySlice(),
        placer=chosen,
        deduplicate=deduplicate,
    )


def describe_scorer(policy: Policy | None) -> str:
    """One line naming the scorer a command runs (for reports)."""
    if policy is None:
        return "composite: recency ×3, priority ×2, kind ×1, frequency ×1"
    parts = ", ".join(f"{spec.type} ×{spec.weight:g}" for spec in policy.scorers)
    return f"{policy.name}: {parts}"


def resolve_policy(preset: str | None, policy_path: str | None) -> Policy | None:
    """The policy chosen with ``--preset`` or ``--policy`` (at most one), or None.

    Raises:
        click.BadParameter: both options were given, or the preset name is unknown.
        CupelError: an invalid policy file (every problem listed).
    """
    if preset is not None and policy_path is not None:
        raise click.BadParameter("give --preset or --policy, not both", param_hint="--preset")
    if preset is not None:
        from pycupel import presets  # noqa: PLC0415 (only when asked for)

        try:
            return presets.by_name(preset)
        except InvalidValueError as exc:
            # A name on the command line, not a file's content: a usage error.
            raise click.BadParameter(
                f"{exc.rule}, got {exc.value!r}", param_hint="--preset"
            ) from None
    if policy_path is not None:
        from pycupel.policy import load_policy  # noqa: PLC0415 (only when asked for)

        return load_policy(policy_path)
    return None


def make_budget(max_tokens: int, target: int | None, output_reserve: int) -> ContextBudget:
    """The budget of ``--budget``/``--target``/``--output-reserve`` (target defaults to max).

    Raises:
        click.BadParameter: the target or the reserve exceeds the budget.
    """
    if target is not None and target > max_tokens:
        raise click.BadParameter(
            f"must be <= --budget ({max_tokens}), got {target}", param_hint="--target"
        )
    if output_reserve > max_tokens:
        raise click.BadParameter(
            f"must be <= --budget ({max_tokens}), got {output_reserve}",
            param_hint="--output-reserve",
        )
    return ContextBudget(
        max_tokens=max_tokens,
        target_tokens=max_tokens if target is None else target,
        output_reserve=output_reserve,
    )


def items_argument(function: F) -> F:
    """The ``ITEMS`` argument: a file path, or ``-`` for standard input."""
    return click.argument(
        "items_path", metavar="ITEMS", type=click.Path(dir_okay=False, allow_dash=True)
    )(function)


def budget_options(function: F) -> F:
    """``--budget`` (required), ``--target`` and ``--output-reserve``."""
    function = click.option(
        "--output-reserve",
        type=click.IntRange(min=0),
        default=0,
        show_default=True,
        help="Tokens kept free for the model's answer.",
    )(function)
    function = click.option(
        "--target",
        type=click.IntRange(min=0),
        default=None,
        help="Tokens to aim for (target_tokens); defaults to --budget.",
    )(function)
    return click.option(
        "--budget",
        "max_tokens",
        type=click.IntRange(min=0, max=MAX_BUDGET),
        required=True,
        help="Context window size in tokens (max_tokens).",
    )(function)


class PlacerName(click.ParamType[str, Any]):
    """A placer name in any spelling a policy file accepts (``u-shaped``, ``UShaped``,
    ``ushaped``...), converted to the canonical one."""

    name = "placer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from pycupel.policy import registry  # noqa: PLC0415 (the policy format's spellings)

        component = registry.PLACERS.find(value) if isinstance(value, str) else None
        if component is None or component.name not in PLACERS:
            self.fail(registry.PLACERS.unknown_message(str(value)), param, ctx)
        return component.name

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(sorted(PLACERS)) + "]"


def placer_option(function: F) -> F:
    """``--placer`` (the order of the selected items in the window) and ``--system-first``."""
    function = click.option(
        "--system-first/--no-system-first",
        default=None,
        help="Items files: keep pinned system prompts at the top of the window, whatever the "
        "placer (the default); --no-system-first leaves them where the placer puts them "
        "(chronological: undated items last). A message history keeps its conversation "
        "order.",
    )(function)
    return click.option(
        "--placer",
        type=PlacerName(),
        default=None,
        help="Items files: the order of the selected items in the window (default: the "
        "policy's placer, else chronological). A message history keeps its conversation "
        "order.",
    )(function)


def policy_options(function: F) -> F:
    """``--preset NAME`` and ``--policy FILE``: run a named preset or a policy file."""
    function = click.option(
        "--policy",
        "policy_path",
        # Not exists=True: an unreadable policy file is an input error, as for ITEMS.
        type=click.Path(dir_okay=False),
        default=None,
        help="Run the pipeline a policy file (JSON or TOML) describes (on a message "
        "history: as fit_messages(policy=...) runs it).",
    )(function)
    return click.option(
        "--preset",
        default=None,
        metavar="NAME",
        help="Run a named preset: Chat, CodeReview, Rag, DocumentQa, ToolUse, LongRunning, "
        "Debugging, Conversation, Retrieval, Memory (case and - or _ do not matter); on a "
        "message history as fit_messages(policy=...) runs it. Default: a message history is "
        "fitted as fit_messages fits it (structure-aware, scored by Conversation); items run "
        "recency ×3, priority ×2, kind ×1, frequency ×1 with greedy slicing.",
    )(function)


def _non_blank_query(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise click.BadParameter(
            "must not be blank (leave --query out: a message history's latest user message is "
            "the question)"
        )
    return value


def query_option(function: F) -> F:
    """``--query TEXT``: what the context is for, read by relevance scorers (never blank)."""
    return click.option(
        "--query",
        default=None,
        metavar="TEXT",
        callback=_non_blank_query,
        help="What the context is for (a question); read by relevance scoring (presets "
        "Conversation, Retrieval, Memory: required with them on an items file). For a "
        "message history it defaults to the latest user message.",
    )(function)


def check_history_options(placer: str | None, system_first: bool | None) -> None:
    """Refuse the options that order an items file's window when the input is a message
    history: its messages always come back in conversation order (as ``fit_messages``
    returns them), so an order asked for could not be honoured.

    Raises:
        click.UsageError: ``--placer`` or ``--no-system-first`` was given.
    """
    if placer is not None:
        raise click.UsageError(
            f"--placer {placer} orders the window of an items file; a message history keeps "
            "its conversation order (leave --placer out)"
        )
    if system_first is False:
        raise click.UsageError(
            "--no-system-first orders the window of an items file; a message history keeps "
            "its conversation order (leave --no-system-first out)"
        )


def reads_query(policy: Policy | None) -> bool:
    """Whether ``policy`` scores relevance to the run's query (a ``relevance`` scorer at any
    depth: a composite's child, a scaled scorer's inner one)."""
    if policy is None:
        return False
    from pycupel.policy import ScorerSpec  # noqa: PLC0415 (a policy is loaded already)

    pending: list[object] = list(policy.scorers)
    while pending:
        value = pending.pop()
        if isinstance(value, ScorerSpec):
            if value.type == "relevance":
                return True
            pending.extend(value.options.values())
        elif isinstance(value, Mapping):
            pending.extend(value.values())
        elif isinstance(value, list | tuple):
            pending.extend(value)
    return False


def run_items(
    pipeline: Pipeline, items: list[ContextItem], *, policy: Policy | None, query: str | None
) -> DryRunResult:
    """The pipeline's dry run over an items file's items.

    Raises:
        click.UsageError: the policy scores relevance to a question and ``--query`` is
            missing.
        CupelError: what the run raises.
    """
    if query is None and reads_query(policy):
        assert policy is not None  # reads_query is False without one
        raise click.UsageError(
            f"--query is required with the {policy.name} policy: it scores each item's "
            "relevance to the question (give it as --query TEXT)"
        )
    return pipeline.dry_run(items, query=query)


def format_option(function: F) -> F:
    """``--format``: items, a message history in one of five formats, or auto-detected."""
    return click.option(
        "--format",
        "input_format",
        type=click.Choice(FORMATS),
        default="auto",
        show_default=True,
        help=(
            "What ITEMS holds: an items file, or an OpenAI Chat Completions, OpenAI Responses, "
            "Anthropic, Gemini or LangChain (messages_to_dict or dumpd JSON) message history "
            "(an array, or a request body with 'messages', 'input' or 'contents'). auto tells "
            "them apart and asks for --format when a history is valid in several formats."
        ),
    )(function)


def progress_option(function: F) -> F:
    """``--progress/--no-progress``; by default shown on a terminal for long runs only."""
    return click.option(
        "--progress/--no-progress",
        "progress",
        default=None,
        help=(
            "Show progress on stderr. Default: only on a terminal, only for large inputs "
            f"(items x runs > {PROGRESS_THRESHOLD:,}), never with --json."
        ),
    )(function)


@contextmanager
def cli_errors() -> Iterator[None]:
    """Turn expected failures into one-line messages and exit status 1."""
    try:
        yield
    except CupelError as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        raise click.ClickException(f"{where}{exc.strerror or exc}") from exc


def check_not_an_input(output: str | None, inputs: Sequence[str], option: str) -> None:
    """Refuse an output file that is one of the command's input files (it would be
    overwritten before, or while, being read).

    Raises:
        click.BadParameter: naming ``option``.
    """
    if output is None:
        return
    target = Path(output)
    for given in inputs:
        if given == "-":
            continue
        source = Path(given)
        same = target.resolve() == source.resolve()
        if not same and target.exists() and source.exists():
            same = os.path.samefile(target, source)
        if same:
            raise click.BadParameter(
                f"{output} is the input file {given}; writing it would destroy the input "
                "(choose another file)",
                param_hint=option,
            )


def write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8); an OSError surfaces through :func:`cli_errors`."""
    Path(path).write_text(text, encoding="utf-8")


def wants_progress(choice: bool | None, *, work: int, as_json: bool, console: Console) -> bool:
    """Whether to show progress: an explicit ``--progress/--no-progress`` wins; otherwise only
    on a terminal, without ``--json``, when ``work`` (items x runs) is large."""
    if choice is not None:
        return choice
    return not as_json and console.is_terminal and work > PROGRESS_THRESHOLD


class ProgressDisplay:
    """A progress bar on stderr, or nothing at all when disabled.

    Use as a context manager; :meth:`task` adds a task and returns a function that advances it.
    """

    def __init__(self, enabled: bool, console: Console) -> None:
        self._progress: Progress | None = None
        if enabled:
            from rich.progress import (  # noqa: PLC0415 (only long runs show progress)
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
            )

            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                console=console,
                transient=True,
            )

    def __enter__(self) -> ProgressDisplay:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def task(self, description: str, total: int | None) -> Callable[[], None]:
        """Start a task of ``total`` steps (None: unknown) and return its advance function."""
        progress = self._progress
        if progress is None:
            return _no_op
        task_id = progress.add_task(description, total=total)
        return lambda: progress.advance(task_id)


def _no_op() -> None:
    return None


def stderr_console() -> Console:
    """The console for progress and diagnostics: stderr, never stdout."""
    return Console(stderr=True)
