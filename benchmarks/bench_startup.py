"""Start-up: the wall time of ``import pycupel`` and of ``pycupel select`` on the bundled example.

Usage:
    python benchmarks/bench_startup.py [--repeat 15]

Each case runs in a fresh interpreter (``sys.executable``), the cases taking turns so that a
change in machine load hits them alike; a bare interpreter (``python -c pass``) runs among them
as the floor no program can go below. The table gives the median and the minimum wall time of
each, and how many modules each loads (and whether numpy, rich or click is among them).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from _harness import format_table, machine_summary  # noqa: E402

EXAMPLE = ROOT / "examples" / "support-chat.json"
SELECT = (
    "import sys\n"
    "from pycupel.cli import main\n"
    f"sys.argv = ['pycupel', 'select', {str(EXAMPLE)!r}, '--budget', '1200']\n"
    "main()\n"
)
CASES = {
    "python -c pass": "pass",
    "import pycupel": "import pycupel",
    "pycupel select examples/support-chat.json --budget 1200": SELECT,
}
HEAVY = ("numpy", "rich", "click", "scipy")


def _modules(code: str) -> list[str]:
    probe = (
        "import atexit, json, sys\n"
        "def report():\n"
        "    sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n"
        "atexit.register(report)\n" + code
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    marker = completed.stderr.rsplit("MODULES ", 1)[1]
    names: list[str] = json.loads(marker)
    return names


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    print(machine_summary())
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.repeat + 1):  # the first round warms the file cache, untimed
        for name, code in CASES.items():
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - started)
    rows = []
    for name, code in CASES.items():
        timed = times[name][1:]
        modules = _modules(code)
        heavy = [package for package in HEAVY if package in modules]
        rows.append(
            [
                name,
                f"{statistics.median(timed) * 1000:.0f}",
                f"{min(timed) * 1000:.0f}",
                f"{len(modules)}",
                ", ".join(heavy) or "none",
            ]
        )
    header = ["command", "median ms", "min ms", "modules", "of numpy, rich, click, scipy"]
    print(format_table(header, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
