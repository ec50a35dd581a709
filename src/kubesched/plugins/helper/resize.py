"""Deferred in-place resize (component-helpers v0.37.2 ``resource/helpers.go`` L345-352).

Plugins that skip a pod whose resize the kubelet deferred (gate
InPlacePodVerticalScalingSchedulerPreemption, alpha in 1.37) ask :func:`is_pod_resize_deferred`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from kubesched.framework.interface import SKIP_STATUS, Status
from kubesched.plugins.helper.gates import features_of

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.features import FeatureGate
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_table import NodeTable

__all__ = ["SkipDeferredResizePreFilter", "deferred_resize_enabled", "is_pod_resize_deferred", "with_deferred_resize"]

_P = TypeVar("_P")


def is_pod_resize_deferred(pod: Pod) -> bool:
    """``resource.IsPodResizeDeferred``: the first ``PodResizePending`` condition has reason ``Deferred``."""
    for c in pod.status.conditions:
        if c.type == "PodResizePending":
            return c.reason == "Deferred"
    return False


def deferred_resize_enabled(fg: FeatureGate) -> bool:
    """``feature.Features.EnableInPlacePodVerticalScalingSchedulerPreemption`` (the gate exists since 1.37)."""
    return fg.at_least(1, 37) and fg.enabled("InPlacePodVerticalScalingSchedulerPreemption")


def with_deferred_resize(plugin: _P, handle: Any) -> _P:
    """``plugin`` with ``deferred_resize`` set from ``handle``'s gates (:func:`deferred_resize_enabled`):
    the v1.37.2 plugins whose PreFilter returns Skip and whose Filter passes for a deferred-resize
    pod (NodeAffinity, NodePorts, VolumeRestrictions, VolumeZone, PodTopologySpread,
    InterPodAffinity, NodeVolumeLimits, VolumeBinding) read it."""
    plugin.deferred_resize = deferred_resize_enabled(features_of(handle))  # type: ignore[attr-defined]
    return plugin


class SkipDeferredResizePreFilter:
    """The PreFilter v1.37 gave NodeUnschedulable and TaintToleration (node_unschedulable.go
    L127-138, taint_toleration.go L104-115): Skip for a pod whose resize was deferred (with the
    alpha gate, ``self.deferred_resize``), nothing otherwise."""

    deferred_resize: bool

    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[None, Status | None]:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None, SKIP_STATUS
        return None, None

    def pre_filter_extensions(self) -> None:
        return None
