"""Package attributes imported on first use (PEP 562), so importing a package stays cheap.

A package lists the names it re-exports lazily and the module each comes from, and binds the
two functions :func:`lazy_attributes` returns as its module-level ``__getattr__`` and
``__dir__``. Type checkers see the same names through ``if TYPE_CHECKING:`` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, names: Mapping[str, str], exported: Iterable[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``.

    ``names`` maps each lazy attribute to the module that defines it; an attribute whose module
    is the name itself (``"presets": "pycupel.presets"``) is that module.
    """
    table = dict(names)
    listed = sorted(set(exported))

    def get_attribute(name: str) -> object:
        module_name = table.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(module_name)
        value: object = module if module_name == f"{package}.{name}" else getattr(module, name)
        # Bind it on the package: later lookups no longer come here.
        setattr(sys.modules[package], name, value)
        return value

    def list_attributes() -> list[str]:
        return sorted({*vars(sys.modules[package]), *listed})

    return get_attribute, list_attributes
