"""Running conformance vectors and comparing what the library does with what they expect.

Every vector yields exactly one :class:`VectorResult`; nothing a vector contains (a malformed
file, an unknown type, a missing component, an exception from the code under test) stops the
run. Comparison modes follow the spec's *Running the Suite* chapter: scores within an epsilon
(``abs(actual - expected) < epsilon``), slicer selections as sets, placer and pipeline output in
order. Failure messages show the difference, not just the fact of it.
"""

from __future__ import annotations

import enum
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

from pycupel.conformance.build import (
    ComponentUnavailableError,
    build_budget,
    build_pipeline,
    build_placer,
    build_scorer,
    build_slicer,
)
from pycupel.conformance.vectors import (
    DiagnosticsExpectation,
    PipelineVector,
    PlacingVector,
    ScoringVector,
    SlicingVector,
    Vector,
    parse_vector,
    read_document,
    read_header,
)
from pycupel.errors import ConformanceVectorError, CupelError
from pycupel.model import ContextItem, ScoredItem

__all__ = ["VectorResult", "discover_vectors", "run_file", "run_paths", "run_vector"]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class VectorResult:
    """The outcome of one vector file.

    Attributes:
        path: the file, as discovered (a string, so results serialise as they are).
        name: the vector's ``[test].name``, or the file name when the file could not be read.
        stage: ``scoring``, ``slicing``, ``placing``, ``pipeline``, or ``""`` when unknown.
        passed: whether every expectation held.
        message: for a failure, what differed (may span several lines); for a pass, an
            optional note (e.g. the construction error that was expected), else ``""``.
    """

    path: str
    name: str
    stage: str
    passed: bool
    message: str

    def to_dict(self) -> dict[str, object]:
        """The result as a JSON-ready dictionary."""
        return {
            "path": self.path,
            "name": self.name,
            "stage": self.stage,
            "passed": self.passed,
            "message": self.message,
        }


# =========================================================================== discovery


def discover_vectors(paths: Iterable[str | PathLike[str]]) -> list[Path]:
    """The vector files named by ``paths``: files as given, folders searched for ``**/*.toml``.

    Each folder's files are sorted so runs are deterministic; a file reached twice is listed
    once. A path that does not exist raises :class:`~pycupel.errors.ConformanceVectorError`.
    """
    found: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            candidates = sorted(p for p in path.rglob("*.toml") if p.is_file())
        elif path.is_file():
            candidates = [path]
        else:
            raise ConformanceVectorError(str(path), "", "no such file or directory")
        for candidate in candidates:
            key = candidate.resolve()
            if key not in seen:
                seen.add(key)
                found.append(candidate)
    return found


def run_paths(paths: Iterable[str | PathLike[str]]) -> list[VectorResult]:
    """Run every vector under ``paths`` (see :func:`discover_vectors`), one result per file."""
    return [run_file(path) for path in discover_vectors(paths)]


def run_file(path: str | PathLike[str]) -> VectorResult:
    """Read, validate and run one vector file. Never raises for anything the file contains."""
    path = Path(path)
    label = str(path)
    try:
        document = read_document(path)
    except ConformanceVectorError as exc:
        return VectorResult(label, path.name, "", False, _malformed(exc))
    name, stage = read_header(document)
    name = name or path.name
    try:
        vector = parse_vector(document, path)
    except ConformanceVectorError as exc:
        return VectorResult(label, name, stage or "", False, _malformed(exc))
    except Exception as exc:  # a loader bug must cost one vector, not the run
        return VectorResult(
            label, name, stage or "", False, f"could not load vector: {_describe(exc)}"
        )
    return run_vector(vector)


def run_vector(vector: Vector) -> VectorResult:
    """Run an already-loaded vector."""
    match vector:
        case ScoringVector():
            return _run(vector, lambda: build_scorer(vector.scorer), _check_scoring(vector))
        case SlicingVector():
            return _run(vector, lambda: _build_slicing(vector), _check_slicing(vector))
        case PlacingVector():
            return _run(vector, lambda: build_placer(vector.placer), _check_placing(vector))
        case PipelineVector():
            return _run(vector, lambda: build_pipeline(vector), _check_pipeline(vector))


def _malformed(exc: ConformanceVectorError) -> str:
    where = f"{exc.location}: " if exc.location else ""
    return f"malformed vector: {where}{exc.detail}"


# =========================================================================== the two phases


def _run(
    vector: Vector, construct: Callable[[], _T], check: Callable[[_T], list[str]]
) -> VectorResult:
    """Construct the objects under test, then check them, turning every outcome into a result."""
    header = vector.header

    def result(passed: bool, message: str) -> VectorResult:
        return VectorResult(str(vector.path), header.name, vector.stage, passed, message)

    try:
        built = construct()
    except ComponentUnavailableError as exc:
        return result(False, str(exc))
    except ConformanceVectorError as exc:
        return result(False, _malformed(exc))
    except CupelError as exc:
        if header.expect_construction_error:
            return result(True, f"construction rejected as expected: {_describe(exc)}")
        return result(False, f"construction failed: {_describe(exc)}")
    except Exception as exc:
        return result(False, f"construction raised {_describe(exc)} (not a CupelError)")
    if header.expect_construction_error:
        return result(
            False,
            f"expected a construction error (expect_construction_error = true), but "
            f"construction succeeded: {built!r}",
        )
    try:
        problems = check(built)
    except ComponentUnavailableError as exc:
        return result(False, str(exc))
    except Exception as exc:
        return result(False, f"{vector.stage} raised {_describe(exc)}")
    if problems:
        return result(False, "\n".join(problems))
    return result(True, "")


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


# =========================================================================== scoring


def _check_scoring(vector: ScoringVector) -> Callable[[Any], list[str]]:
    def check(scorer: Any) -> list[str]:
        items = list(vector.items)
        scores = list(scorer.score_all(items))
        if len(scores) != len(items):
            return [f"score_all returned {len(scores)} scores for {len(items)} items"]
        by_content = dict(zip((item.content for item in items), scores, strict=True))
        epsilon = vector.epsilon
        lines: list[str] = []
        for expected in vector.expected:
            actual = by_content[expected.content]
            if not _is_number(actual):
                lines.append(f"  {expected.content!r}: expected {expected.score!r}, got {actual!r}")
            elif not _close(float(actual), expected.score, epsilon):
                lines.append(
                    f"  {expected.content!r}: expected {expected.score!r}, got {actual!r} "
                    f"(|diff| = {_diff(float(actual), expected.score)})"
                )
        if lines:
            return [f"scores differ (epsilon = {epsilon!r}):", *lines]
        return []

    return check


# =========================================================================== slicing


def _build_slicing(vector: SlicingVector) -> tuple[Any, Any]:
    slicer = build_slicer(vector.slicer)
    # A slicing vector usually gives only the target; it then doubles as the ceiling.
    budget = None if vector.budget is None else build_budget(vector.budget)
    return slicer, budget


def _check_slicing(vector: SlicingVector) -> Callable[[tuple[Any, Any]], list[str]]:
    def check(built: tuple[Any, Any]) -> list[str]:
        slicer, budget = built
        expected = vector.expected
        if expected is None or budget is None:  # pragma: no cover - parse guarantees both
            return ["vector has no [budget] or [expected] to check"]
        inputs = list(vector.scored_items)
        result = slicer.slice(inputs, budget)
        selected = getattr(result, "selected", None)
        if selected is None:
            return [f"slice() returned {type(result).__name__}, not a SliceResult"]
        problems = _foreign_items("slicer", selected, (s.item for s in inputs))
        problems += _set_diff(
            "selection", expected.selected_contents, [item.content for item in selected]
        )
        if expected.shortfall_count is not None:
            actual = len(result.shortfalls)
            if actual != expected.shortfall_count:
                problems.append(
                    f"shortfall_count: expected {expected.shortfall_count}, got {actual} "
                    f"({_show_list(result.shortfalls)})"
                )
        if expected.cap_excluded_count is not None:
            actual = len(result.cap_exclusions)
            if actual != expected.cap_excluded_count:
                excluded = [record.item.content for record in result.cap_exclusions]
                problems.append(
                    f"cap_excluded_count: expected {expected.cap_excluded_count}, got {actual} "
                    f"({_show_list(excluded)})"
                )
        return problems

    return check


# =========================================================================== placing


def _check_placing(vector: PlacingVector) -> Callable[[Any], list[str]]:
    def check(placer: Any) -> list[str]:
        inputs: list[ScoredItem] = list(vector.scored_items)
        placed = list(placer.place(inputs))
        problems = _permutation_problems(placed, [s.item for s in inputs])
        assert vector.expected_order is not None  # parse guarantees it without construction
        problems += _ordered_diff(
            "placement order", vector.expected_order, [item.content for item in placed]
        )
        return problems

    return check


def _permutation_problems(
    placed: Sequence[ContextItem], inputs: Sequence[ContextItem]
) -> list[str]:
    """A placer must return exactly its input items (by identity), each once."""
    expected_ids = Counter(id(item) for item in inputs)
    actual_ids = Counter(id(item) for item in placed)
    if expected_ids == actual_ids:
        return []
    return [
        f"placer did not return a permutation of its input: got {len(placed)} items for "
        f"{len(inputs)} inputs, {len(actual_ids - expected_ids)} foreign or duplicated, "
        f"{len(expected_ids - actual_ids)} missing"
    ]


# =========================================================================== pipeline


def _check_pipeline(vector: PipelineVector) -> Callable[[Any], list[str]]:
    def check(pipeline: Any) -> list[str]:
        items = list(vector.items)
        if vector.diagnostics is None:
            output = list(pipeline.run(items).items)
            report = None
        else:
            dry = pipeline.dry_run(items)
            output = list(dry.items)
            report = dry.report
        problems = _foreign_items("pipeline", output, items)
        problems += _ordered_diff(
            "output", vector.expected_output, [item.content for item in output]
        )
        if vector.diagnostics is not None:
            problems += _diagnostics_diff(report, vector.diagnostics, vector.epsilon)
        return problems

    return check


def _diagnostics_diff(report: Any, expected: DiagnosticsExpectation, epsilon: float) -> list[str]:
    problems: list[str] = []
    if expected.summary is not None:
        for key, value in expected.summary:
            if not hasattr(report, key):
                problems.append(f"diagnostics.summary.{key}: the report has no field {key!r}")
                continue
            actual = getattr(report, key)
            if not _values_match(value, actual, epsilon):
                problems.append(
                    f"diagnostics.summary.{key}: expected {value!r}, got {_plain(actual)!r}"
                )
    if expected.included is not None:
        included = list(report.included)
        problems += _ordered_diff(
            "diagnostics.included",
            [e.content for e in expected.included],
            [entry.item.content for entry in included],
        )
        for index, (want, got) in enumerate(zip(expected.included, included, strict=False)):
            where = f"diagnostics.included[{index}] ({want.content!r})"
            problems += _entry_diff(where, want.score, want.reason, got, epsilon)
    if expected.excluded is not None:
        excluded = list(report.excluded)
        problems += _ordered_diff(
            "diagnostics.excluded",
            [e.content for e in expected.excluded],
            [entry.item.content for entry in excluded],
        )
        for index, (want_x, got) in enumerate(zip(expected.excluded, excluded, strict=False)):
            where = f"diagnostics.excluded[{index}] ({want_x.content!r})"
            entry_problems = _entry_diff(where, want_x.score, want_x.reason, got, epsilon)
            if not entry_problems:
                # Only compare the reason's own fields once the reason itself is the right one.
                for key, value in want_x.fields:
                    if not hasattr(got.reason, key):
                        entry_problems.append(
                            f"{where}: reason {want_x.reason} has no field {key!r}"
                        )
                        continue
                    actual = getattr(got.reason, key)
                    if not _values_match(value, actual, epsilon):
                        entry_problems.append(
                            f"{where}: {key}: expected {value!r}, got {_plain(actual)!r}"
                        )
            problems += entry_problems
    return problems


def _entry_diff(where: str, score: float, reason: str, entry: Any, epsilon: float) -> list[str]:
    problems: list[str] = []
    actual_score = entry.score
    if not _is_number(actual_score) or not _close(float(actual_score), score, epsilon):
        problems.append(f"{where}: score expected {score!r}, got {actual_score!r}")
    actual_reason = _wire_name(entry.reason)
    if actual_reason != reason:
        problems.append(f"{where}: reason expected {reason!r}, got {actual_reason!r}")
    return problems


def _wire_name(reason: object) -> str:
    """The wire name of an inclusion/exclusion reason (``"Scored"``, ``"Deduplicated"``)."""
    if isinstance(reason, enum.Enum):
        return str(reason.value)
    name = getattr(reason, "name", None)
    if isinstance(name, str):
        return name
    return type(reason).__name__


# =========================================================================== comparison helpers


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _close(actual: float, expected: float, epsilon: float) -> bool:
    if math.isnan(expected) or math.isnan(actual):
        return math.isnan(expected) and math.isnan(actual)
    if math.isinf(expected) or math.isinf(actual):
        return actual == expected
    return abs(actual - expected) < epsilon


def _diff(actual: float, expected: float) -> str:
    try:
        return f"{abs(actual - expected):.3g}"
    except (OverflowError, ValueError):  # pragma: no cover - inf/nan arithmetic
        return "n/a"


def _plain(value: object) -> object:
    """Reduce an item to its content and a kind/source to its name, for comparison and display."""
    if isinstance(value, ContextItem):
        return value.content
    if isinstance(value, enum.Enum):
        return value.value
    key = getattr(value, "value", None)
    if isinstance(key, str) and not isinstance(value, str):
        return key
    return value


def _values_match(expected: object, actual: object, epsilon: float) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if _is_number(expected) and _is_number(actual):
        if isinstance(expected, int) and isinstance(actual, int):
            return expected == actual
        return _close(float(actual), float(expected), epsilon)
    if isinstance(actual, ContextItem):
        return actual.content == expected
    # Kinds compare case-insensitively with strings through their own __eq__.
    return bool(actual == expected)


def _foreign_items(
    who: str, returned: Iterable[ContextItem], inputs: Iterable[ContextItem]
) -> list[str]:
    known = {id(item) for item in inputs}
    foreign = [item.content for item in returned if id(item) not in known]
    if not foreign:
        return []
    return [f"{who} returned items that are not among its inputs: {_show_list(foreign)}"]


def _set_diff(label: str, expected: Sequence[str], actual: Sequence[str]) -> list[str]:
    want = Counter(expected)
    got = Counter(actual)
    if want == got:
        return []
    lines = [
        f"{label} differs (compared as a set): expected {_show_list(sorted(want.elements()))}, "
        f"got {_show_list(sorted(got.elements()))}"
    ]
    missing = want - got
    extra = got - want
    if missing:
        lines.append(f"  missing: {_show_list(sorted(missing.elements()))}")
    if extra:
        lines.append(f"  unexpected: {_show_list(sorted(extra.elements()))}")
    return lines


def _ordered_diff(label: str, expected: Sequence[str], actual: Sequence[str]) -> list[str]:
    if list(expected) == list(actual):
        return []
    position = next(
        (i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
        min(len(expected), len(actual)),
    )
    want = repr(expected[position]) if position < len(expected) else "<end>"
    got = repr(actual[position]) if position < len(actual) else "<end>"
    return [
        f"{label} differs at position {position}: expected {want}, got {got}",
        f"  expected: {_show_list(expected)}",
        f"  actual:   {_show_list(actual)}",
    ]


def _show_list(values: Iterable[object]) -> str:
    return "[" + ", ".join(repr(_plain(value)) for value in values) + "]"
