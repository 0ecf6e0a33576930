"""A stable sort order of float keys, at the speed of numpy's unstable sort when it can.

numpy's default sort of float64 keys is vectorised and several times faster than its stable
sort, but it may order equal keys either way. When the sorted keys hold no two equal values
and no NaN, every order is the same order, so the fast one is the stable one; otherwise the
stable sort runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pycupel._numpy import FloatArray, IndexArray

if TYPE_CHECKING:
    import numpy as np
else:
    from pycupel._numpy import numpy as np

__all__ = ["stable_argsort"]


def stable_argsort(keys: FloatArray) -> IndexArray:
    """``np.argsort(keys, kind="stable")``: ascending, input order among equal keys, NaN last."""
    order: IndexArray = np.argsort(keys)
    if keys.size > 1:
        ordered = keys[order]
        # NaNs sort last (unordered among themselves); 0.0 and -0.0 compare equal.
        if np.isnan(ordered[-1]) or bool((ordered[1:] == ordered[:-1]).any()):
            stable: IndexArray = np.argsort(keys, kind="stable")
            return stable
    return order
