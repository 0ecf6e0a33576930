"""The Cupel conformance-vector runner.

Reads the spec's TOML test vectors (scoring, slicing, placing and pipeline stages), runs them
against this library and reports, per vector, whether every expectation held and, if not, what
differed::

    from pycupel.conformance import run_paths

    results = run_paths(["../shared/cupel-conformance"])
    failed = [r for r in results if not r.passed]

The same runner backs the ``pycupel conformance run`` command.
"""

from pycupel.conformance.build import ComponentUnavailableError
from pycupel.conformance.run import (
    VectorResult,
    discover_vectors,
    run_file,
    run_paths,
    run_vector,
)
from pycupel.conformance.vectors import Vector, load_vector

__all__ = [
    "ComponentUnavailableError",
    "Vector",
    "VectorResult",
    "discover_vectors",
    "load_vector",
    "run_file",
    "run_paths",
    "run_vector",
]
