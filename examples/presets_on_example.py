"""Run every preset on the bundled example and print what each selects, as a Markdown table.

    python examples/presets_on_example.py [--budget 1200]

The policies guide (docs/guides/policies.md) shows this table; a test keeps the two equal.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from pycupel import ContextBudget, presets
from pycupel.itemio import read_items

EXAMPLE = Path(__file__).resolve().parent / "support-chat.json"


def preset_table(budget_tokens: int = 1200) -> str:
    """The Markdown table: per preset, what it keeps and what it leaves out."""
    items = read_items(EXAMPLE)
    budget = ContextBudget(max_tokens=budget_tokens, target_tokens=budget_tokens)
    lines = [
        "| preset | selected | tokens | kept by kind | left out (highest score first) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name in presets.names():
        report = presets.by_name(name).build(budget).dry_run(items).report
        kept = Counter(entry.item.kind.value for entry in report.included)
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(kept.items()))
        tokens = sum(entry.item.tokens for entry in report.included)
        left_out = "; ".join(
            f"{_title(entry.item.content)} ({entry.reason.name})" for entry in report.excluded[:3]
        )
        more = len(report.excluded) - 3
        if more > 0:
            left_out += f"; +{more} more"
        lines.append(
            f"| {name} | {len(report.included)} of {report.total_candidates} | {tokens:,} "
            f"| {kinds} | {left_out} |"
        )
    return "\n".join(lines)


def _title(content: str, limit: int = 28) -> str:
    flat = " ".join(content.split()).replace("|", "/")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=1200)
    print(preset_table(parser.parse_args().budget))


if __name__ == "__main__":
    main()
