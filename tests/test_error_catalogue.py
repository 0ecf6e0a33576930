"""The error catalogue (docs/errors.md) matches the code.

* every ``raise`` in the package raises a CupelError subclass, or one of the deliberate
  exceptions listed (with the reason) below and in the catalogue;
* every CupelError subclass is documented with its fields, has those fields as attributes,
  and survives a pickle round trip with them.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import math
import pickle
import pkgutil
import re
from pathlib import Path

import pytest

import pycupel
from pycupel.errors import (
    AdapterUnavailableError,
    BudgetOverflowError,
    BudgetSimulationError,
    BudgetValidationError,
    CollectorStateError,
    ConformanceVectorError,
    CountRequirementError,
    CupelError,
    InputFormatError,
    IntegrationUnavailableError,
    InvalidValueError,
    ItemValidationError,
    MessageFormatError,
    MissingDependencyError,
    MissingQueryError,
    NonFiniteScoreError,
    NonMonotonicSlicerError,
    PinnedBudgetError,
    PipelineConfigError,
    PlacerConfigError,
    PlacerInputError,
    PolicyError,
    PolicyProblem,
    ProviderUsageError,
    RecallRefError,
    ReplayLogError,
    ReportAssertionError,
    RequirementUnreachableError,
    ScorerConfigError,
    SessionConfigError,
    SessionConflictError,
    SessionStateError,
    SessionStoreError,
    SliceInputError,
    SlicerConfigError,
    SolverUnavailableError,
    StreamSourceError,
    SummarizerError,
    TableTooLargeError,
    TelemetryUnavailableError,
    TokenizerError,
    UnknownOptionError,
)

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "pycupel"
CATALOGUE = ROOT / "docs" / "errors.md"

# Exceptions raised on purpose that are not CupelErrors: (name, where it may be raised) ->
# reason. "where" is a path suffix under src/pycupel, or a function name for "any module".
DELIBERATE: dict[str, tuple[tuple[str, ...], str]] = {
    "AttributeError": (
        ("__setattr__", "__delattr__", "_lazy.py"),
        "immutable objects refuse attribute writes the standard way; a package's lazy "
        "__getattr__ reports an unknown name as Python requires",
    ),
    "AssertionError": (("*",), "internal 'unreachable' branches (a broken invariant)"),
    "NotImplementedError": (("diagnostics/reasons.py",), "abstract method of ExclusionReason"),
    "KeyError": (
        ("policy/registry.py",),
        "Category.get: mapping-style lookup of a canonical name; callers pass validated names",
    ),
    "ValueError": (
        ("itemio.py",),
        "the JSON constant hook (NaN/Infinity literals), caught in loads_json and turned into "
        "InputFormatError",
    ),
    "_DuplicateKeyError": (
        ("itemio.py", "policy/files.py"),
        "private ValueError subclass caught in the same module (InputFormatError)",
    ),
    "ToolException": (
        ("adapters/langchain.py",),
        "LangChain's tool-error mechanism: the recall tool's refusal becomes an error ToolMessage",
    ),
    "BadParameter": (("cli/",), "click's usage-error mechanism"),
    "UsageError": (("cli/",), "click's usage-error mechanism"),
    "ClickException": (("cli/",), "click's error-exit mechanism"),
    "SystemExit": (("cli/",), "the command line's exit status"),
}

# Raise sites whose callee is a variable or helper rather than a class: (file suffix, name)
# -> what it evaluates to (checked against the source below where possible).
HELPERS: dict[tuple[str, str], str] = {
    ("_checks.py", "error"): "an InvalidValueError subclass passed by the caller (ErrorType)",
    ("model.py", "err"): "ItemValidationError or BudgetValidationError bound to a local",
    ("_common.py", "error"): "SliceInputError, or PlacerInputError passed by the placers",
}


def _raise_sites() -> list[tuple[str, int, str, str]]:
    """(relative path, line, enclosing function, raised callee name) for every raise."""
    sites = []
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in [tree, *ast.walk(tree)]:
            if not isinstance(function, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            name = getattr(function, "name", "<module>")
            for node in ast.walk(function):
                if not isinstance(node, ast.Raise) or node.exc is None:
                    continue
                target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                callee = (
                    target.attr
                    if isinstance(target, ast.Attribute)
                    else getattr(target, "id", ast.dump(target))
                )
                sites.append((relative, node.lineno, name, callee))
    # A raise inside nested functions is seen once per enclosing function: keep the innermost.
    innermost: dict[tuple[str, int], tuple[str, int, str, str]] = {}
    for site in sites:
        innermost[(site[0], site[1])] = site
    return sorted(innermost.values())


def _module_of(relative: str) -> object:
    dotted = "pycupel." + relative.removesuffix(".py").replace("/", ".")
    return importlib.import_module(dotted.removesuffix(".__init__"))


def _returns_cupel_error(function: object) -> bool:
    annotation = inspect.signature(function).return_annotation  # type: ignore[arg-type]
    name = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    candidate = getattr(importlib.import_module("pycupel.errors"), name, None)
    return isinstance(candidate, type) and issubclass(candidate, CupelError)


def test_every_raise_is_a_cupel_error_or_deliberate() -> None:
    problems = []
    sites = _raise_sites()
    assert len(sites) > 300  # the scan sees the whole package
    for relative, line, function, callee in sites:
        where = f"{relative}:{line} ({function}) raises {callee}"
        if (relative.split("/")[-1], callee) in HELPERS:
            continue
        if callee in DELIBERATE:
            places, _ = DELIBERATE[callee]
            if not any(
                place in ("*", function) or relative.endswith(place) or relative.startswith(place)
                for place in places
            ):
                problems.append(f"{where}: allowed only in {places}")
            continue
        module = _module_of(relative)
        value = getattr(module, callee, None)
        if isinstance(value, type):
            if not issubclass(value, CupelError):
                problems.append(f"{where}: not a CupelError")
        elif callable(value):
            if not _returns_cupel_error(value):
                problems.append(f"{where}: helper not annotated to return a CupelError")
        else:
            # A method (self._fail) or a local: resolve through the module's classes.
            methods = [
                getattr(cls, callee)
                for cls in vars(module).values()
                if isinstance(cls, type) and callable(getattr(cls, callee, None))
            ]
            if not methods or not all(_returns_cupel_error(m) for m in methods):
                problems.append(f"{where}: cannot tell what it raises")
    assert not problems, "\n".join(problems)


# One instance of every error class, with sample arguments.
SAMPLES: list[CupelError] = [
    InvalidValueError("budget.target_tokens", 12, "must be <= max_tokens (10)"),
    ItemValidationError("tokens", "12", "must be an integer"),
    BudgetValidationError("max_tokens", -1, "must be >= 0"),
    ScorerConfigError("weights['x']", math.inf, "must be finite"),
    NonFiniteScoreError("FunctionScorer", 3, math.nan, "the item"),
    SlicerConfigError("bucket_size", 0, "must be > 0"),
    SliceInputError("items[0].item.tokens", -1, "must be >= 0"),
    PlacerConfigError("X.place", "2 items for 3 given", "must return exactly the items"),
    PlacerInputError("items[3].score", "0.5", "must be a real number"),
    PipelineConfigError("items", None, "must be a sequence"),
    MissingQueryError("query", None, "RelevanceScorer needs the run's query"),
    UnknownOptionError("budegt", 5, "is not an option of fit_messages()"),
    SessionConfigError("compact_at", 1.5, "must be <= 1"),
    ProviderUsageError("usage.prompt_tokens", -1, "must be >= 0"),
    BudgetSimulationError("slack_tokens", -1, "must be >= 0"),
    NonMonotonicSlicerError("find_min_budget", "QuotaSlice(...)", "the spec's message"),
    PinnedBudgetError(120, 100),
    BudgetOverflowError(130, 100),
    CountRequirementError("CountQuotaSlice", "Document", 1, 2),
    RequirementUnreachableError("OptimalSlice", "Document", "items", 1, 2),
    RecallRefError("3f9a2c5d0e1b7a44", "is not a ref of this conversation"),
    TableTooLargeError(10, 1000, 2**30, 2**28),
    MissingDependencyError("tokenizer", "tiktoken", "tiktoken"),
    SolverUnavailableError("OptimalSlice", "scipy", "optimal"),
    TelemetryUnavailableError("tracing", "opentelemetry-api", "otel"),
    AdapterUnavailableError("LangChain", "langchain-core", "langchain"),
    IntegrationUnavailableError("LangChain agent middleware", "langchain", "langgraph"),
    TokenizerError("TiktokenCounter", "unknown encoding 'x'"),
    CollectorStateError("no completed pipeline run was recorded"),
    StreamSourceError("Slice", 3, "OSError: connection reset"),
    SummarizerError("summarize_turns", 12, "RuntimeError: rate limited"),
    SessionConflictError("conversation-42", 17, 18, 4),
    SessionStoreError("SQLiteStore('sessions.db')", "save", "conversation-42", "locked"),
    SessionStateError("SQLiteStore('s.db') key 'c'", "format version", "is 9; reads 1"),
    ReportAssertionError("IncludeItemWithKind", "expected an item of kind Memory", "details"),
    InputFormatError("items.json", "items[3].tokens", "must be an integer"),
    MessageFormatError("openai messages", "messages[0].role", "must be one of ..."),
    ConformanceVectorError("v.toml", "", "invalid TOML"),
    ReplayLogError("logs.jsonl", "line 7: format", "must be one of openai, anthropic"),
    PolicyError("p.json", [PolicyProblem("scorers[0].weight", "must be > 0")]),
]


def _component_unavailable() -> CupelError:
    from pycupel.conformance import ComponentUnavailableError

    return ComponentUnavailableError("scorer 'recency'", "cannot import pycupel.scorers")


def _all_error_classes() -> set[type[CupelError]]:
    classes: set[type[CupelError]] = set()
    for info in pkgutil.walk_packages(pycupel.__path__, "pycupel."):
        if info.name.endswith(".__main__"):  # importing it runs the command line
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, CupelError):
                classes.add(value)
    return classes - {CupelError}


def _documented_fields() -> dict[str, list[str]]:
    text = CATALOGUE.read_text(encoding="utf-8")
    sections = re.split(r"^### `(\w+)`\s*$", text, flags=re.M)
    fields: dict[str, list[str]] = {}
    for name, body in zip(sections[1::2], sections[2::2], strict=True):
        line = re.search(r"^Fields: (.+)$", body, flags=re.M)
        assert line, f"{name}: no 'Fields:' line in the catalogue"
        fields[name] = re.findall(r"`(\w+)`", line.group(1))
    return fields


def _samples() -> list[CupelError]:
    return [*SAMPLES, _component_unavailable()]


def test_every_error_class_has_a_sample_and_a_catalogue_entry() -> None:
    documented = _documented_fields()
    classes = _all_error_classes()
    sampled = {type(sample) for sample in _samples()}
    assert classes == sampled, classes ^ sampled
    assert {cls.__name__ for cls in classes} == set(documented)


@pytest.mark.parametrize("error", _samples(), ids=lambda e: type(e).__name__)
def test_documented_fields_are_attributes(error: CupelError) -> None:
    fields = _documented_fields()[type(error).__name__]
    assert fields
    for field in fields:
        assert hasattr(error, field), f"{type(error).__name__}.{field}"
    assert str(error).strip()


@pytest.mark.parametrize("error", _samples(), ids=lambda e: type(e).__name__)
def test_errors_round_trip_through_pickle(error: CupelError) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    for field in _documented_fields()[type(error).__name__]:
        assert repr(getattr(copy, field)) == repr(getattr(error, field)), field


def test_invalid_value_errors_stay_value_errors() -> None:
    for error in _samples():
        if isinstance(error, InvalidValueError):
            assert isinstance(error, ValueError)
