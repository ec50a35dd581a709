"""Export a live cluster as the scheduler sees it, for ``kubesched simulate`` to read back.

:func:`take_snapshot` lists every kind the scheduler reads — through the live adapter's
machinery (:class:`~kubesched.kube.informer.InformerFactory`: paginated lists, retries, the
pod informer's ``status.phase!=Succeeded,status.phase!=Failed`` field selector) but with raw
mappings instead of the engine's slim typed views, so nothing the simulator may read is lost —
plus the workloads whose controllers ``simulate`` runs (Deployments, ReplicaSets,
ReplicationControllers, StatefulSets, DaemonSets, Jobs, CronJobs). Kinds the server does not
serve (e.g. ``resource.k8s.io`` on an older cluster) are skipped and listed in
:attr:`Snapshot.skipped`. ``managedFields`` are dropped (as the reflector does); each item gets
the ``kind``/``apiVersion`` list items omit.

Each kind is listed at its own resourceVersion (as the scheduler's informers are), so a
snapshot of a cluster that changes while it is taken is as consistent as the scheduler's own
cache at start-up, not a point-in-time cut.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from kubesched.errors import KubeschedError
from kubesched.kube.client import APIClient
from kubesched.kube.informer import POD_FIELD_SELECTOR, InformerFactory
from kubesched.kube.reflector import ResourceSpec

__all__ = ["SNAPSHOT_RESOURCES", "Snapshot", "take_snapshot"]


def _spec(kind: str, gv: str, resource: str, field_selector: str | None = None) -> ResourceSpec:
    return ResourceSpec(kind, gv, resource, dict, field_selector=field_selector)


#: What a snapshot holds, in the order files are written: cluster-scoped basics first, pods last.
SNAPSHOT_RESOURCES: dict[str, ResourceSpec] = {s.kind: s for s in (
    _spec("Namespace", "v1", "namespaces"),
    _spec("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses"),
    _spec("Node", "v1", "nodes"),
    _spec("StorageClass", "storage.k8s.io/v1", "storageclasses"),
    _spec("CSIDriver", "storage.k8s.io/v1", "csidrivers"),
    _spec("CSINode", "storage.k8s.io/v1", "csinodes"),
    _spec("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities"),
    _spec("VolumeAttachment", "storage.k8s.io/v1", "volumeattachments"),
    _spec("PersistentVolume", "v1", "persistentvolumes"),
    _spec("PersistentVolumeClaim", "v1", "persistentvolumeclaims"),
    _spec("DeviceClass", "resource.k8s.io/v1", "deviceclasses"),
    _spec("ResourceSlice", "resource.k8s.io/v1", "resourceslices"),
    _spec("ResourceClaim", "resource.k8s.io/v1", "resourceclaims"),
    _spec("Service", "v1", "services"),
    _spec("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets"),
    _spec("Deployment", "apps/v1", "deployments"),
    _spec("ReplicaSet", "apps/v1", "replicasets"),
    _spec("ReplicationController", "v1", "replicationcontrollers"),
    _spec("StatefulSet", "apps/v1", "statefulsets"),
    _spec("DaemonSet", "apps/v1", "daemonsets"),
    _spec("Job", "batch/v1", "jobs"),
    _spec("CronJob", "batch/v1", "cronjobs"),
    _spec("Pod", "v1", "pods", POD_FIELD_SELECTOR),
)}


@dataclass
class Snapshot:
    """``objects``: kind → items (sorted by namespace, name), in :data:`SNAPSHOT_RESOURCES` order;
    ``skipped``: kinds the server does not serve."""

    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def count(self) -> int:
        return sum(len(v) for v in self.objects.values())


def _sort_key(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


async def take_snapshot(client: APIClient, *, timeout_s: float = 60.0, page_size: int = 500,
                        kinds: list[str] | None = None) -> Snapshot:
    """List every kind of :data:`SNAPSHOT_RESOURCES` (or ``kinds``) through informers; stop them.

    Raises :class:`~kubesched.errors.KubeschedError` when discovery and the lists do not
    complete within ``timeout_s`` (the server is unreachable, hangs or keeps failing; the
    reflectors retry with backoff until then) and :class:`~kubesched.kube.client.APIError` when
    discovery answers with an error.
    """
    wanted = list(SNAPSHOT_RESOURCES) if kinds is None else kinds
    factory = InformerFactory(client, page_size=page_size, resources=SNAPSHOT_RESOURCES)
    factory.informers_for(wanted)
    snap = Snapshot()
    try:
        try:
            async with asyncio.timeout(timeout_s):
                snap.skipped = await factory.probe_served()
                factory.start()
                await factory.wait_for_cache_sync()
        except TimeoutError:
            waiting = sorted(k for k, inf in factory.informers.items() if not inf.has_synced)
            raise KubeschedError(f"snapshot: could not list {', '.join(waiting) or 'discovery'} from "
                                 f"{client.config.server} within {timeout_s:g}s") from None
        for kind in wanted:
            if kind in snap.skipped:
                continue
            spec = SNAPSHOT_RESOURCES[kind]
            items = []
            for obj in factory.informers[kind].store.list():
                # the store holds the reflector's decoded mapping; list items omit kind/apiVersion
                items.append({"apiVersion": spec.group_version, "kind": kind,
                              **{k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}})
            snap.objects[kind] = sorted(items, key=_sort_key)
    finally:
        await factory.stop()
    return snap
