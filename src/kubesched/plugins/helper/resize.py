"""Deferred in-place resize (component-helpers v0.37.2 ``resource/helpers.go`` L345-352).

Plugins that skip a pod whose resize the kubelet deferred (gate
InPlacePodVerticalScalingSchedulerPreemption, alpha in 1.37) ask :func:`is_pod_resize_deferred`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.features import FeatureGate

__all__ = ["deferred_resize_enabled", "is_pod_resize_deferred"]


def is_pod_resize_deferred(pod: Pod) -> bool:
    """``resource.IsPodResizeDeferred``: the first ``PodResizePending`` condition has reason ``Deferred``."""
    for c in pod.status.conditions:
        if c.type == "PodResizePending":
            return c.reason == "Deferred"
    return False


def deferred_resize_enabled(fg: FeatureGate) -> bool:
    """``feature.Features.EnableInPlacePodVerticalScalingSchedulerPreemption`` (the gate exists since 1.37)."""
    return fg.at_least(1, 37) and fg.enabled("InPlacePodVerticalScalingSchedulerPreemption")
