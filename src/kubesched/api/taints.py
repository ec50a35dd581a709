"""Taints and tolerations, per upstream ``staging/src/k8s.io/api/core/v1/toleration.go``
(``Toleration.ToleratesTaint``) and ``component-helpers/scheduling/corev1/helpers.go``
(``TolerationsTolerateTaint``, ``FindMatchingUntoleratedTaint``).

``comparison_operators`` is the gate TaintTolerationComparisonOperators (alpha, off, 1.35+):
with it, operators ``Lt``/``Gt`` compare the values as decimal int64 (k8s.io/api v0.37.2
toleration.go L52-118); without it they tolerate nothing, like any unknown operator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubesched.api.objects import Taint, Toleration

__all__ = [
    "TAINT_EFFECT_NO_EXECUTE",
    "TAINT_EFFECT_NO_SCHEDULE",
    "TAINT_EFFECT_PREFER_NO_SCHEDULE",
    "find_matching_untolerated_taint",
    "tolerates",
    "tolerations_tolerate_taint",
]

TAINT_EFFECT_NO_SCHEDULE = "NoSchedule"
TAINT_EFFECT_PREFER_NO_SCHEDULE = "PreferNoSchedule"
TAINT_EFFECT_NO_EXECUTE = "NoExecute"


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _decimal_int64(value: str) -> int | None:
    """apimachinery ``content.IsDecimalInteger`` + ``strconv.ParseInt(v, 10, 64)``: an optional
    ``-``, no ``+``, no leading zeros (``0`` alone is fine, ``-0`` is not), within int64."""
    digits = value[1:] if value.startswith("-") else value
    if not digits or not all("0" <= ch <= "9" for ch in digits):
        return None
    if digits[0] == "0" and (len(digits) > 1 or value.startswith("-")):
        return None
    v = int(value)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


def _compare_numeric_values(toleration_value: str, taint_value: str, op: str) -> bool:
    """Upstream ``compareNumericValues``: Lt tolerates ``taint < toleration``, Gt ``taint >
    toleration``; a value that is not a decimal int64 → no match."""
    t = _decimal_int64(toleration_value)
    n = _decimal_int64(taint_value)
    if t is None or n is None:
        return False
    return n < t if op == "Lt" else n > t


def tolerates(tol: Toleration, taint: Taint, comparison_operators: bool = False) -> bool:
    """Whether ``tol`` tolerates ``taint`` (upstream ``Toleration.ToleratesTaint``).

    An empty toleration effect matches every effect; an empty key matches every key
    (so ``operator: Exists`` with no key tolerates everything); operator ``""`` means
    ``Equal``, which compares values; ``Exists`` ignores values; any other operator
    tolerates nothing.
    """
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    op = tol.operator
    if op == "" or op == "Equal":
        return tol.value == taint.value
    if op in ("Lt", "Gt"):
        return comparison_operators and _compare_numeric_values(tol.value, taint.value, op)
    return op == "Exists"


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint,
                               comparison_operators: bool = False) -> bool:
    """True when any toleration tolerates ``taint``."""
    for tol in tolerations:
        if tolerates(tol, taint, comparison_operators):
            return True
    return False


def find_matching_untolerated_taint(
    taints: Sequence[Taint],
    tolerations: Sequence[Toleration],
    inclusion: Callable[[Taint], bool] | None = None,
    comparison_operators: bool = False,
) -> Taint | None:
    """The first taint (in node order) passing ``inclusion`` (all taints when None) that no
    toleration tolerates, or None (upstream ``FindMatchingUntoleratedTaint``).
    """
    for taint in taints:
        if inclusion is not None and not inclusion(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint, comparison_operators):
            return taint
    return None
