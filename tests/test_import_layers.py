"""The layers import downwards only: model <- tokens, model <- pipeline <- policy, and for
messages conversation <- session <- adapters.

The data model knows no tokenizer, the pipeline knows no policy files. The conversation
engine knows no message format and no session; sessions know no message format; the formats
know nothing of the command line, replay or the framework integrations. Every ``import`` in the
package counts, wherever it sits (module top, function body, ``TYPE_CHECKING`` block): a lazy
import still ties the layers together. Paths through other modules count too, so a layer that
reaches a higher one through, say, ``pycupel.scorers`` fails as well.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "pycupel"

# Each layer, and the layers it must never reach (directly or through other modules).
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "pycupel.model": ("pycupel.tokens", "pycupel.pipeline", "pycupel.policy"),
    "pycupel.tokens": ("pycupel.pipeline", "pycupel.policy"),
    "pycupel.pipeline": ("pycupel.tokens", "pycupel.policy"),
    "pycupel.conversation": (
        "pycupel.adapters",
        "pycupel.session",
        "pycupel.cli",
        "pycupel.replay",
        "pycupel.integrations",
    ),
    "pycupel.session": (
        "pycupel.adapters",
        "pycupel.cli",
        "pycupel.replay",
        "pycupel.integrations",
    ),
    "pycupel.adapters": ("pycupel.cli", "pycupel.replay", "pycupel.integrations"),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The package modules that ``name`` (at ``path``) imports, anywhere in its body."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from package import submodule`` imports the submodule.
            targets = [f"{base}.{alias.name}" for alias in node.names]
            targets = [target if target in known else base for target in targets]
        else:
            continue
        for target in targets:
            # ``import pycupel.a.b`` reaches pycupel.a.b; keep the longest known prefix.
            parts = target.split(".")
            while parts and ".".join(parts) not in known:
                parts.pop()
            if parts and ".".join(parts) != name:
                yield ".".join(parts)


def _graph() -> dict[str, set[str]]:
    known = _modules()
    return {name: set(_imported(name, path, known)) for name, path in known.items()}


def _in_layer(module: str, layer: str) -> bool:
    return module == layer or module.startswith(layer + ".")


def _path_to(graph: dict[str, set[str]], start: str, layer: str) -> list[str] | None:
    """The shortest import chain from ``start`` to a module of ``layer``, or None.

    Package ``__init__`` modules of the root are not followed: importing ``pycupel`` itself
    from inside the package would be its own error, caught by the direct-edge check below.
    """
    seen = {start}
    frontier: list[list[str]] = [[start]]
    while frontier:
        chains: list[list[str]] = []
        for chain in frontier:
            for nxt in sorted(graph.get(chain[-1], ())):
                if _in_layer(nxt, layer):
                    return [*chain, nxt]
                if nxt not in seen and nxt != "pycupel":
                    seen.add(nxt)
                    chains.append([*chain, nxt])
        frontier = chains
    return None


def test_the_graph_sees_the_known_edges() -> None:
    # The checker itself can fail: these edges exist and must be found.
    graph = _graph()
    assert "pycupel.model" in graph["pycupel.tokens.items"]
    assert "pycupel.pipeline" in graph["pycupel.policy.build"]
    assert "pycupel.pipeline.classify" in graph["pycupel.pipeline.run"]
    assert _path_to(graph, "pycupel.policy.build", "pycupel.pipeline") is not None
    assert "pycupel.conversation.api" in graph["pycupel.adapters.openai"]
    assert "pycupel.session.chat" in graph["pycupel.adapters.anthropic"]
    assert _path_to(graph, "pycupel.adapters.gemini", "pycupel.conversation") is not None


@pytest.mark.parametrize(("layer", "forbidden"), sorted(FORBIDDEN.items()))
def test_layers_import_downwards_only(layer: str, forbidden: tuple[str, ...]) -> None:
    graph = _graph()
    for module in sorted(m for m in graph if _in_layer(m, layer)):
        for target in forbidden:
            chain = _path_to(graph, module, target)
            assert chain is None, " -> ".join(chain or [])


def test_no_layer_imports_the_package_root() -> None:
    # ``pycupel/__init__`` imports every layer: importing it from a layer would tie them all.
    graph = _graph()
    layers = (*FORBIDDEN, "pycupel.policy")
    offenders = sorted(
        module
        for module, targets in graph.items()
        if "pycupel" in targets and any(_in_layer(module, layer) for layer in layers)
    )
    assert offenders == []
