"""``pycupel replay``: replay logged requests under one or more policies.

Everything heavy (the replay package, pyarrow, Ray) is imported when the command runs, never
when the command line starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from pycupel._checks import MAX_BUDGET
from pycupel.cli._common import check_not_an_input, cli_errors
from pycupel.cli._input import check_json_lines

if TYPE_CHECKING:
    from pycupel.replay import ReplayPolicy

__all__ = ["replay"]

_SHOWN_SKIPS = 3
_SESSION_PREFIX = "session:"


def _policy(spec: str) -> ReplayPolicy:
    """``--policy [session:]NAME|FILE``: an existing file is a policy file, anything else a
    preset name; ``session:`` replays sessions through the adapter's Session."""
    from pycupel import presets  # noqa: PLC0415
    from pycupel.policy import load_policy  # noqa: PLC0415
    from pycupel.replay import ReplayPolicy  # noqa: PLC0415

    session = spec.startswith(_SESSION_PREFIX)
    prefix = _SESSION_PREFIX if session else ""
    spec = spec.removeprefix(_SESSION_PREFIX)
    path = Path(spec)
    if path.is_file():
        return ReplayPolicy(prefix + path.stem, load_policy(path), session=session)
    if path.suffix.lower() in (".json", ".toml") or path.parent != Path():
        raise click.BadParameter(f"no policy file at {spec!r}", param_hint="--policy")
    preset = presets.by_name(spec)
    return ReplayPolicy(prefix + preset.name, preset, session=session)


@click.command("replay")
@click.argument("logs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--policy",
    "policies",
    multiple=True,
    required=True,
    metavar="NAME|FILE",
    help="A preset name or a policy file (JSON or TOML); repeat to compare policies. "
    "Prefix session: to fit each session's requests with the adapter's Session.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1, max=MAX_BUDGET),
    required=True,
    help="Tokens for the whole prompt of every request.",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: a process pool on this machine; ray: Ray Data (RAY_ADDRESS, else a local "
    "Ray instance).",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False),
    help="The Parquet file to write: one row per request and policy.",
)
@click.option(
    "--on-error",
    type=click.Choice(["fail", "skip"]),
    default="fail",
    show_default=True,
    help="A malformed record: stop (fail), or skip it and count it (skip).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="local: worker processes (default: one per core); ray: CPUs of a local Ray instance.",
)
@click.option(
    "--html",
    "html_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="Also write an HTML report: the policies compared, distributions, worst cases.",
)
def replay(
    *,
    logs: tuple[str, ...],
    policies: tuple[str, ...],
    budget: int,
    engine: str,
    out: str,
    on_error: str,
    workers: int | None,
    html_path: str | None,
) -> None:
    """Replay the logged requests of LOGS (JSON Lines or Parquet files, one request per line
    or row) under each --policy, and write one row per request and policy to --out.

    Prints a per-policy summary: tokens before and after, valid histories, dropped messages,
    predicted input cost with prompt caching, evidence recall, fit time.
    """
    from rich.console import Console  # noqa: PLC0415

    check_not_an_input(out, logs, "--out")
    check_not_an_input(html_path, logs, "--html")
    with cli_errors():
        from pycupel.replay import ReplayConfig, replay_logs  # noqa: PLC0415
        from pycupel.replay.reader import input_kind  # noqa: PLC0415
        from pycupel.replay.summary import skipped_details, summarize, summary_table  # noqa: PLC0415

        for log in logs:
            if input_kind(log) == "jsonl":
                check_json_lines(log, record="logged request")

        config = ReplayConfig(
            policies=tuple(_policy(spec) for spec in policies),
            budget=budget,
            on_error="skip" if on_error == "skip" else "fail",
        )
        result = replay_logs(
            list(logs),
            config,
            engine="ray" if engine == "ray" else "local",
            out=out,
            workers=workers,
        )
        summaries = summarize(result.table)
        if html_path is not None:
            from pycupel.replay.report import replay_html  # noqa: PLC0415

            page = replay_html(result.table, summaries, sources=list(logs), config=config)
            Path(html_path).write_text(page, encoding="utf-8")

    console = Console(highlight=False)
    console.print(summary_table(summaries))
    console.print(
        f"Replayed {result.records - result.skipped:,} requests "
        f"({result.sessions:,} sessions) under {len(config.policies)} "
        f"{'policy' if len(config.policies) == 1 else 'policies'} on the {engine} engine; "
        f"wrote {result.table.num_rows:,} rows to {out}.",
        soft_wrap=True,
    )
    if result.skipped:
        console.print(f"Skipped {result.skipped:,} malformed records:", soft_wrap=True)
        details = skipped_details(result.table)
        for detail in details[:_SHOWN_SKIPS]:
            console.print(f"  {detail}", soft_wrap=True)
        if len(details) > _SHOWN_SKIPS:
            console.print(f"  ... and {len(details) - _SHOWN_SKIPS:,} more (status 'skipped').")
