"""The box's controller manager: starts the simulated cluster's controllers with the server.

As kube-controller-manager (``cmd/kube-controller-manager/app/controllermanager.go``
``StartControllers``) runs each controller against the API, :func:`attach_controllers` starts
them once the server serves (its ``on_started`` hooks), each writing through the
:class:`~kubesched.apiserver.registry.Registry`: the disruption, workload (Deployment,
ReplicaSet, StatefulSet, DaemonSet, Job, CronJob), volume, resource-claim, pod-group protection
and service-account controllers (:mod:`~kubesched.apiserver.controllers`,
:mod:`~kubesched.apiserver.workloadcontrollers`), then the garbage collector and pod GC
(:mod:`~kubesched.apiserver.gc`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesched.apiserver.controllers import (
    DisruptionController,
    PodGroupProtectionController,
    ResourceClaimController,
    ServiceAccountController,
    VolumeController,
)
from kubesched.apiserver.gc import attach_gc
from kubesched.apiserver.workloadcontrollers import WorkloadController

if TYPE_CHECKING:
    from kubesched.apiserver.registry import Registry

__all__ = ["attach_controllers"]


def attach_controllers(server: Registry) -> None:
    """Run the simulated cluster's controllers with ``server`` (started after it serves; each is
    kept as an attribute of the server, e.g. ``server.workload_controller``)."""

    async def start(srv: Registry) -> None:
        for attr, cls in (("disruption_controller", DisruptionController),
                          ("workload_controller", WorkloadController),
                          ("volume_controller", VolumeController),
                          ("resourceclaim_controller", ResourceClaimController),
                          ("podgroup_protection_controller", PodGroupProtectionController),
                          ("serviceaccount_controller", ServiceAccountController)):
            ctl = cls(srv)
            setattr(srv, attr, ctl)
            await ctl.start()

    attach_gc(server)
    server.on_started.append(start)
