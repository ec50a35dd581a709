"""Taints and tolerations, per upstream ``staging/src/k8s.io/api/core/v1/toleration.go``
(``Toleration.ToleratesTaint``) and ``component-helpers/scheduling/corev1/helpers.go``
(``TolerationsTolerateTaint``, ``FindMatchingUntoleratedTaint``).
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


def tolerates(tol: Toleration, taint: Taint) -> bool:
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
    return op == "Exists"


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """True when any toleration tolerates ``taint``."""
    for tol in tolerations:
        if tolerates(tol, taint):
            return True
    return False


def find_matching_untolerated_taint(
    taints: Sequence[Taint],
    tolerations: Sequence[Toleration],
    inclusion: Callable[[Taint], bool] | None = None,
) -> Taint | None:
    """The first taint (in node order) passing ``inclusion`` (all taints when None) that no
    toleration tolerates, or None (upstream ``FindMatchingUntoleratedTaint``).
    """
    for taint in taints:
        if inclusion is not None and not inclusion(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None
