"""Go's ``math.Log`` and ``math.Round``, bit for bit, for the score formula.

PodTopologySpread weighs each constraint by ``math.Log(size + 2)`` and rounds the node
score with ``math.Round``. Go's ``Log`` (``math/log.go``, the FreeBSD ``e_log.c`` algorithm;
the amd64 assembly follows the same steps) is not guaranteed to agree with the C library's
``log`` in the last bit, and one ulp can flip a rounding, so the algorithm is ported here.
``math.Round`` rounds half away from zero (Python's ``round`` rounds half to even).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["go_log", "go_round"]

_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_L1 = 6.666666666666735130e-01
_L2 = 3.999999999940941908e-01
_L3 = 2.857142874366239149e-01
_L4 = 2.222219843214978396e-01
_L5 = 1.818357216161805012e-01
_L6 = 1.531383769920937332e-01
_L7 = 1.479819860511658591e-01
_SQRT2_2 = math.sqrt(2) / 2


def go_log(x: float) -> float:
    """Natural logarithm as Go's ``math.Log`` computes it."""
    if math.isnan(x) or x == math.inf:
        return x
    if x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    f1, ki = math.frexp(x)
    if f1 < _SQRT2_2:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def go_round(x: np.ndarray) -> np.ndarray:
    """``math.Round`` element-wise for non-negative finite ``float64``, as ``int64``."""
    fl = np.floor(x)
    return (fl + ((x - fl) >= 0.5)).astype(np.int64)
