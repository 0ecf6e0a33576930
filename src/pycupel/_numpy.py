"""numpy, imported on first use.

Importing numpy costs more than a small pipeline run, and small runs (and the command line on
small inputs) never touch it: their scores and columns stay plain lists. Modules on that path
bind ``np`` to :data:`numpy` at run time (type checkers see the real module through an ``if
TYPE_CHECKING:`` import). The first attribute read imports numpy and copies its namespace
onto the proxy, so later reads are plain attribute lookups.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["numpy"]


class _LazyNumpy:
    """Stands in for the ``numpy`` module until an attribute of it is read."""

    def __getattr__(self, name: str) -> Any:
        module = importlib.import_module("numpy")
        # Every later read of a public name finds it on the instance (no __getattr__ call);
        # names numpy itself resolves on demand keep coming through here.
        self.__dict__.update(vars(module))
        return getattr(module, name)

    def __repr__(self) -> str:
        return "<numpy, imported on first use>"


numpy: Any = _LazyNumpy()
