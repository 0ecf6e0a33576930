"""Mutation testing of the core, one module at a time, with a fast targeted test selection.

    python benchmarks/mutation/run.py [MODULE ...] [--children N] [--timeout SECONDS]
                                      [--keep DIR] [--list]

Each MODULE is a key of ``TARGETS`` below (``placers``, ``slicers/greedy``...); none means all
of them. For each module the script:

1. copies the committed tree (``git archive HEAD``) to a scratch directory, so the working
   tree is never touched and the run measures what is committed;
2. writes a ``[tool.mutmut]`` section that mutates only that module and runs only the tests
   that exercise it (``-x``: the first failing test kills the mutant);
3. runs ``mutmut run`` with an interpreter that sees the project's dependencies but not its
   editable install (otherwise the tests would import the unmutated source);
4. prints killed / survived / timeout / no-tests counts and the killed share, and appends
   them to ``benchmarks/mutation/scores.jsonl`` unless ``--no-record``.

Needs ``pip install mutmut`` (not a project dependency); it is not part of CI: a full run takes
a long time on a small machine, so run modules separately and time-box them (``--timeout``).
The killed share counts every mutant mutmut generated for the module (survivors, timeouts and
mutants no selected test reaches all count as not killed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCORES = Path(__file__).with_name("scores.jsonl")

# the pipeline's own tests (the CLI and item-file tests there read example files mutmut does
# not copy, and exercise other modules)
PIPELINE_TESTS = [
    "tests/pipeline/test_classify_stage.py",
    "tests/pipeline/test_score_stage.py",
    "tests/pipeline/test_pipeline_stages.py",
    "tests/pipeline/test_pipeline_promises.py",
    "tests/pipeline/test_pipeline_vectors.py",
    "tests/pipeline/test_pipeline_config.py",
    "tests/pipeline/test_small_batches.py",
]

# module -> the tests that exercise it (kept small: every mutant runs them until one fails)
TARGETS: dict[str, list[str]] = {
    "model": ["tests/test_model.py", "tests/test_hostile_inputs.py"],
    "placers": ["tests/placers"],
    "scorers/base": [
        "tests/scorers/test_base.py",
        "tests/scorers/test_common.py",
        "tests/test_hostile_inputs.py",
    ],
    "scorers/composite": ["tests/scorers/test_composite.py", "tests/test_hostile_inputs.py"],
    "scorers/scaled": ["tests/scorers/test_scaled.py"],
    "scorers/kind": ["tests/scorers/test_kind.py", "tests/scorers/test_item_scorer_forms.py"],
    "scorers/tag": ["tests/scorers/test_tag.py", "tests/scorers/test_item_scorer_forms.py"],
    "scorers/priority": ["tests/scorers/test_rank_scorers.py"],
    "scorers/recency": ["tests/scorers/test_rank_scorers.py"],
    "scorers/reflexive": [
        "tests/scorers/test_reflexive.py",
        "tests/scorers/test_item_scorer_forms.py",
    ],
    "scorers/frequency": ["tests/scorers/test_frequency.py"],
    "scorers/decay": ["tests/scorers/test_decay.py", "tests/test_hostile_inputs.py"],
    "scorers/metadata": [
        "tests/scorers/test_metadata.py",
        "tests/scorers/test_item_scorer_forms.py",
    ],
    "slicers/greedy": ["tests/slicers/test_greedy.py"],
    "slicers/knapsack": ["tests/slicers/test_knapsack.py"],
    "slicers/quota": ["tests/slicers/test_quota.py"],
    "slicers/count_quota": ["tests/slicers/test_count_quota.py"],
    "slicers/count_constrained_knapsack": ["tests/slicers/test_count_constrained_knapsack.py"],
    "slicers/_count_phases": [
        "tests/slicers/test_count_quota.py",
        "tests/slicers/test_count_constrained_knapsack.py",
    ],
    "slicers/_common": ["tests/slicers", "tests/test_hostile_inputs.py"],
    "slicers/packer": ["tests/slicers/test_packer.py"],
    "pipeline/classify": PIPELINE_TESTS,
    "pipeline/score": PIPELINE_TESTS,
    "pipeline/deduplicate": PIPELINE_TESTS,
    "pipeline/sort": PIPELINE_TESTS,
    "pipeline/slice": PIPELINE_TESTS,
    "pipeline/place": PIPELINE_TESTS,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="keys of TARGETS (default: all)")
    parser.add_argument("--children", type=int, default=2, help="parallel mutant workers")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per module")
    parser.add_argument("--keep", type=Path, help="keep the scratch tree in this directory")
    parser.add_argument("--list", action="store_true", help="list the modules and exit")
    parser.add_argument("--no-record", action="store_true", help="do not append to scores")
    parser.add_argument(
        "--table", action="store_true", help="print the latest recorded row of each module"
    )
    args = parser.parse_args(argv)
    if args.table:
        print(_table())
        return 0
    if args.list:
        for name, tests in TARGETS.items():
            print(f"{name:40} {' '.join(tests)}")
        return 0
    unknown = [m for m in args.modules if m not in TARGETS]
    if unknown:
        parser.error(f"unknown module(s) {unknown}; see --list")
    modules = args.modules or list(TARGETS)
    commit = _git("rev-parse", "--short", "HEAD")
    python = _shim_interpreter()
    rows: list[dict[str, Any]] = []
    for module in modules:
        row = _run_module(module, python, args.children, args.timeout, args.keep)
        row["commit"] = commit
        rows.append(row)
        print(_format(row), flush=True)
        if not args.no_record:
            with SCORES.open("a", encoding="utf-8") as out:
                out.write(json.dumps(row) + "\n")
    killed = sum(r["killed"] for r in rows)
    total = sum(r["total"] for r in rows)
    if total:
        print(f"all: {killed}/{total} killed ({100 * killed / total:.1f} %)")
    return 0


def _run_module(
    module: str, python: Path, children: int, timeout: float, keep: Path | None
) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="pycupel-mutation-")) if keep is None else keep
    if keep is not None and keep.exists():
        shutil.rmtree(keep)
    scratch.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "HEAD"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(scratch)], input=archive, check=True)
    tests = TARGETS[module]
    section = (
        "\n[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f'only_mutate = ["src/pycupel/{module}.py"]\n'
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}\n"
        'pytest_add_cli_args = ["-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]\n'
    )
    with (scratch / "pyproject.toml").open("a", encoding="utf-8") as config:
        config.write(section)
    # mutmut copies the sources into mutants/src; it must exist before the interpreter starts
    # or the import system caches it as absent.
    (scratch / "mutants" / "src").mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(scratch / "mutants" / "src"))
    env.pop("PYCUPEL_CONFORMANCE_DIR", None)
    started = time.monotonic()
    try:
        with (scratch / "mutmut.log").open("wb") as log:
            subprocess.run(
                [str(python), "-m", "mutmut", "run", "--max-children", str(children)],
                cwd=scratch,
                env=env,
                timeout=timeout,
                stdout=log,
                stderr=subprocess.STDOUT,
                check=False,
            )
        finished = True
    except subprocess.TimeoutExpired:
        finished = False
    results = subprocess.run(
        [str(python), "-m", "mutmut", "results", "--all", "true"],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    counts: dict[str, int] = {}
    for line in results.splitlines():
        match = re.match(r"\s*\S+:\s*(\w[\w ]*)$", line)
        if match:
            counts[match.group(1).strip()] = counts.get(match.group(1).strip(), 0) + 1
    if keep is None:
        shutil.rmtree(scratch, ignore_errors=True)
    total = sum(counts.values())
    killed = counts.get("killed", 0)
    return {
        "module": module,
        "tests": tests,
        "killed": killed,
        "total": total,
        "counts": counts,
        "share": round(100 * killed / total, 1) if total else None,
        "seconds": round(time.monotonic() - started),
        "finished": finished,
    }


def _format(row: dict[str, object]) -> str:
    share = "n/a" if row["share"] is None else f"{row['share']} %"
    done = "" if row["finished"] else " (time-boxed: not finished)"
    return (
        f"{row['module']:36} {row['killed']}/{row['total']} killed ({share}) "
        f"{row['counts']} in {row['seconds']} s{done}"
    )


def _table() -> str:
    """The table of docs/benchmarks/mutation.md: the latest recorded row of each module, in
    ``TARGETS`` order."""
    latest: dict[str, dict[str, Any]] = {}
    for line in SCORES.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        latest[row["module"]] = row
    lines = ["| module | killed | share | revision |", "| --- | --- | --- | --- |"]
    killed = total = 0
    for module in TARGETS:
        row = latest.get(module)
        if row is None:
            lines.append(f"| `{module}` | not measured | | |")
            continue
        note = "" if row["finished"] else " (time-boxed: not finished)"
        lines.append(
            f"| `{module}`{note} | {row['killed']} of {row['total']} | {row['share']} % "
            f"| `{row['commit']}` |"
        )
        killed += row["killed"]
        total += row["total"]
    share = f"{100 * killed / total:.1f} %" if total else "n/a"
    lines.append(
        f"| these {sum(m in latest for m in TARGETS)} together | {killed} of {total} | {share} | |"
    )
    return "\n".join(lines)


def _shim_interpreter() -> Path:
    """A virtualenv that sees this environment's packages but not pycupel's editable install.

    An editable install puts a finder ahead of ``sys.path``, so the tests would import the
    working tree instead of mutmut's mutated copy. A ``.pth`` line naming a directory adds it
    to ``sys.path`` without running the ``.pth`` files inside it, which is what is needed.
    """
    shim = Path(tempfile.gettempdir()) / "pycupel-mutation-venv"
    python = shim / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(shim)], check=True)
    purelib = sysconfig.get_paths()["purelib"]
    target = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(target, "pycupel-deps.pth").write_text(purelib + "\n", encoding="utf-8")
    return python


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
