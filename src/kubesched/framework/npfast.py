"""numpy calls without their Python-level wrappers, for the per-pod hot path.

``np.count_nonzero``, ``np.flatnonzero``, ``np.argmin`` and ``ndarray.max`` are Python
functions around C ones (argument dispatch, ``ravel``, ``_wrapfunc``): 2–7 Python calls each,
which a scheduling cycle makes a few dozen times per pod. These are the same C functions called
directly; the results are identical (int counts, int64 positions, the array's own dtype).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["count_nonzero", "flatnonzero", "amax"]

try:  # numpy >= 2: the C function np.count_nonzero wraps (axis=None)
    from numpy._core.multiarray import count_nonzero as _count_nonzero
except ImportError:  # pragma: no cover - older numpy: the public wrapper
    _count_nonzero = np.count_nonzero

count_nonzero: Any = _count_nonzero
"""``np.count_nonzero(a)`` (no axis): the number of non-zero elements of ``a``, an ``int``."""

amax: Any = np.maximum.reduce
"""``a.max()`` of a non-empty 1-D array (``ValueError`` on an empty one, as ``max``)."""


def flatnonzero(a: np.ndarray) -> np.ndarray:
    """``np.flatnonzero(a)`` of a 1-D array: the positions (``int64[M]``) of its non-zero
    elements."""
    return a.nonzero()[0]
