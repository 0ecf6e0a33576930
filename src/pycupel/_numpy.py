"""numpy, imported on first use, and the array types the package annotates with.

Importing numpy costs more than a small pipeline run, and small runs (and the command line on
small inputs) never touch it: their scores and columns stay plain lists. Modules on that path
bind ``np`` to :data:`numpy` at run time (type checkers see the real module through an ``if
TYPE_CHECKING:`` import). The first attribute read imports numpy and copies its namespace
onto the proxy, so later reads are plain attribute lookups.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, TypeAlias

__all__ = ["FloatArray", "IndexArray", "IntArray", "numpy"]

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray: TypeAlias = npt.NDArray[np.float64]
    IntArray: TypeAlias = npt.NDArray[np.int64]
    IndexArray: TypeAlias = npt.NDArray[np.intp]
else:
    # Annotations only (they are never evaluated at run time); names to import.
    FloatArray = IntArray = IndexArray = Any


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
