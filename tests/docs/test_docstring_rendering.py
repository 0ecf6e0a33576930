"""The reference's docstring rewriting (``docs/_hooks/docstrings.py``): reStructuredText roles
become cross-references, doctests are fenced, wrapped first sentences are joined, and the text
is otherwise left as written. Needs griffe (the ``docs`` extra)."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest
from docs_pages import DOCS

griffe = pytest.importorskip("griffe", reason="the docs extra is not installed")


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docstrings_hook", DOCS / "_hooks" / "docstrings.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def hook() -> ModuleType:
    return _hook()


@pytest.fixture(scope="module")
def scope() -> griffe.Object:
    package = griffe.load("pycupel.adapters", search_paths=[str(DOCS.parent / "src")])
    return package["openai"]


def test_roles_become_optional_cross_references(hook: ModuleType, scope: griffe.Object) -> None:
    text = hook.rewrite(
        "Returns :class:`~pycupel.diagnostics.SelectionReport`; see :func:`fit_messages`.", scope
    )
    assert '<autoref identifier="pycupel.diagnostics.SelectionReport" optional>' in text
    assert "`SelectionReport`</autoref>" in text  # ~ keeps the last component
    # A bare name resolves where the docstring is written: the module's own function.
    assert (
        '<autoref identifier="pycupel.adapters.openai.fit_messages" optional>`fit_messages()`'
        in text
    )
    assert ":class:" not in text
    assert ":func:" not in text


def test_an_unknown_name_stays_as_written(hook: ModuleType, scope: griffe.Object) -> None:
    text = hook.rewrite("Like :func:`dataclasses.replace`.", scope)
    assert '<autoref identifier="dataclasses.replace" optional>`dataclasses.replace()`' in text


def test_doctests_are_fenced(hook: ModuleType, scope: griffe.Object) -> None:
    text = hook.rewrite("Example:\n    >>> [1, 2]\n    [1, 2]\n\nAfter.", scope)
    assert text == "Example:\n    ```pycon\n    >>> [1, 2]\n    [1, 2]\n    ```\n\nAfter."


def test_literal_block_markers_become_colons(hook: ModuleType, scope: griffe.Object) -> None:
    assert hook.rewrite("Summary.\n\nUsage::\n\n    code()", scope) == (
        "Summary.\n\nUsage:\n\n    code()"
    )


def test_a_wrapped_first_sentence_is_joined(hook: ModuleType, scope: griffe.Object) -> None:
    text = hook.rewrite("The first sentence, wrapped\nover two lines.\n\nArgs:\n    x: y.", scope)
    assert text.startswith("The first sentence, wrapped over two lines.\n\nArgs:\n")
    # Lists and sections are never joined.
    assert hook.rewrite("* one\n* two", scope) == "* one\n* two"
    assert hook.rewrite("Summary.\nArgs:\n    x: y.", scope) == "Summary.\nArgs:\n    x: y."
