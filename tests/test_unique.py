"""unique_ints gives numpy.unique's result (the distinct values, ascending)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from pycupel._unique import unique_ints


@given(st.lists(st.integers(min_value=-(2**62), max_value=2**62), max_size=200))
def test_same_as_numpy_unique(values: list[int]) -> None:
    array = np.array(values, dtype=np.int64)
    got = unique_ints(array)
    assert got.dtype == np.int64
    assert got.tolist() == np.unique(array).tolist()


@given(st.lists(st.integers(min_value=0, max_value=50), max_size=300))
def test_many_repeats(values: list[int]) -> None:
    array = np.array(values, dtype=np.intp)
    assert unique_ints(array).tolist() == sorted(set(values))
