"""Coverage-guided fuzzing of pycupel's file parsers with atheris (libFuzzer).

Usage (from the repository root, with ``pip install atheris``)::

    python fuzz/fuzz_parsers.py TARGET [CORPUS_DIR] [libFuzzer flags...]
    python fuzz/fuzz_parsers.py items /tmp/corpus-items -max_total_time=600 -timeout=10

TARGET is one of: policy_json, policy_toml, items, report, vector, messages_openai,
messages_anthropic, candidates_file (see ``tests/fuzz/fuzz_targets.py``). The corpus folder is
created and seeded with valid documents when it is empty. Any exception that is not a ``CupelError``
(or a ``CupelError`` with an empty message) is a crash; libFuzzer writes the input to
``crash-*`` and stops. ``-timeout`` turns a hang into a crash too.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "fuzz")]

with atheris.instrument_imports(include=["pycupel", "tomli", "fuzz_targets"]):
    import fuzz_targets

    from pycupel.errors import CupelError


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in fuzz_targets.TARGETS:
        names = ", ".join(fuzz_targets.TARGETS)
        raise SystemExit(f"usage: fuzz_parsers.py TARGET [CORPUS_DIR] [flags]; TARGET: {names}")
    name = sys.argv[1]
    target = fuzz_targets.TARGETS[name]
    rest = sys.argv[2:]
    if rest and not rest[0].startswith("-"):
        corpus = Path(rest[0])
        corpus.mkdir(parents=True, exist_ok=True)
        if not any(corpus.iterdir()):
            for seed in fuzz_targets.seeds(name):
                (corpus / hashlib.sha1(seed).hexdigest()).write_bytes(seed)

    def test_one_input(data: bytes) -> None:
        try:
            target(data)
        except CupelError as exc:
            if not str(exc):
                raise AssertionError(f"{type(exc).__name__} without a message") from exc

    atheris.Setup([sys.argv[0], *rest], test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
