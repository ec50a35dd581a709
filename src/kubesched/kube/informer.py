"""Shared informers, the informer factory and the live lister (client-go ``tools/cache``
``shared_informer.go``, ``informers/factory.go``; kube-scheduler ``pkg/scheduler/scheduler.go``
``NewInformerFactory`` / ``newPodInformer``).

An :class:`Informer` is one :class:`~kubesched.kube.reflector.Reflector` and its store plus
an ordered list of handlers; every change is delivered to each handler in arrival order (the
``InOrderInformers`` RealFIFO behaviour of v1.33+). A handler is any object with
``on_add(obj, is_in_initial_list)``, ``on_update(old, new)`` and ``on_delete(obj)`` (``obj`` may
be a :class:`~kubesched.kube.reflector.DeletedFinalStateUnknown`), and optionally
``on_adds(objs, is_in_initial_list)``: the initial LIST as one batch when it is the informer's
only handler (the node handler: the node table filled in bulk). A handler registered after
the informer synced gets synthetic adds for the current content first (as upstream).
A handler that raises is logged and the next handler still runs.

:class:`InformerFactory` creates informers lazily by kind (``RESOURCES``), starts them and waits
for their sync; :class:`InformerLister` serves the engine's
:class:`~kubesched.framework.handle.ClusterLister` from their stores (kinds never started
answer empty, as the simulator's store does for kinds it was not given).

The pod informer watches all namespaces with ``status.phase!=Succeeded,status.phase!=Failed``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from kubesched.api import objects as api
from kubesched.kube.client import APIClient, APIError
from kubesched.kube.reflector import (
    DeletedFinalStateUnknown,
    Reflector,
    ResourceSpec,
    Store,
)

__all__ = [
    "POD_FIELD_SELECTOR",
    "RESOURCES",
    "Informer",
    "InformerFactory",
    "InformerLister",
]

log = logging.getLogger("kubesched.kube.informer")

POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"

#: kind → what to watch. Typed views for the kinds the engine reads as Structs; dicts otherwise.
RESOURCES: dict[str, ResourceSpec] = {
    "Pod": ResourceSpec("Pod", "v1", "pods", api.Pod, field_selector=POD_FIELD_SELECTOR),
    "Node": ResourceSpec("Node", "v1", "nodes", api.Node),
    "Namespace": ResourceSpec("Namespace", "v1", "namespaces", api.Namespace),
    "Service": ResourceSpec("Service", "v1", "services", api.Service),
    "ReplicationController": ResourceSpec("ReplicationController", "v1", "replicationcontrollers",
                                          api.ReplicationController),
    "ReplicaSet": ResourceSpec("ReplicaSet", "apps/v1", "replicasets", api.ReplicaSet),
    "StatefulSet": ResourceSpec("StatefulSet", "apps/v1", "statefulsets", api.StatefulSet),
    "PodDisruptionBudget": ResourceSpec("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets",
                                        api.PodDisruptionBudget),
    "PriorityClass": ResourceSpec("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", api.PriorityClass),
    "PersistentVolume": ResourceSpec("PersistentVolume", "v1", "persistentvolumes"),
    "PersistentVolumeClaim": ResourceSpec("PersistentVolumeClaim", "v1", "persistentvolumeclaims"),
    "StorageClass": ResourceSpec("StorageClass", "storage.k8s.io/v1", "storageclasses"),
    "CSINode": ResourceSpec("CSINode", "storage.k8s.io/v1", "csinodes"),
    "CSIDriver": ResourceSpec("CSIDriver", "storage.k8s.io/v1", "csidrivers"),
    "CSIStorageCapacity": ResourceSpec("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities"),
    "VolumeAttachment": ResourceSpec("VolumeAttachment", "storage.k8s.io/v1", "volumeattachments"),
    "ResourceClaim": ResourceSpec("ResourceClaim", "resource.k8s.io/v1", "resourceclaims"),
    "ResourceSlice": ResourceSpec("ResourceSlice", "resource.k8s.io/v1", "resourceslices"),
    "DeviceClass": ResourceSpec("DeviceClass", "resource.k8s.io/v1", "deviceclasses"),
    # the workload API (GenericWorkload; CompositePodGroup): raw dicts, as the engine reads them
    "PodGroup": ResourceSpec("PodGroup", "scheduling.k8s.io/v1beta1", "podgroups"),
    "CompositePodGroup": ResourceSpec("CompositePodGroup", "scheduling.k8s.io/v1alpha3", "compositepodgroups"),
}


class Informer:
    """One resource's reflector, store and handlers. ``has_synced``: the initial list was
    delivered to every handler registered so far."""

    def __init__(self, client: APIClient, spec: ResourceSpec, *, page_size: int = 500) -> None:
        self.spec = spec
        self.store = Store()
        self.handlers: list[Any] = []
        self.reflector = Reflector(client, spec, self, store=self.store, page_size=page_size)
        self._task: asyncio.Task[None] | None = None
        self._synced = asyncio.Event()
        self.disabled = False  # the server does not serve this resource: empty and synced

    # ── handlers ──

    def add_event_handler(self, handler: Any) -> None:
        """Register a handler; after the sync it first receives adds for the current content."""
        self.handlers.append(handler)
        if self.has_synced:
            for obj in self.store:
                _call(handler.on_add, obj, True)

    # ── DeltaSink ──

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        for h in self.handlers:
            _call(h.on_add, obj, is_in_initial_list)

    def on_adds(self, objs: list[Any], is_in_initial_list: bool) -> None:
        """The adds of a list into an empty store. A sole handler with ``on_adds`` gets them as
        one batch (it must leave what ``on_add`` per object leaves and log its own failures);
        otherwise each object goes to every handler in turn, as :meth:`on_add`."""
        hs = self.handlers
        batch = getattr(hs[0], "on_adds", None) if len(hs) == 1 else None
        if batch is not None:
            _call(batch, objs, is_in_initial_list)
            return
        for obj in objs:
            for h in hs:
                _call(h.on_add, obj, is_in_initial_list)

    def on_update(self, old: Any, new: Any) -> None:
        for h in self.handlers:
            _call(h.on_update, old, new)

    def on_delete(self, obj: Any) -> None:
        for h in self.handlers:
            _call(h.on_delete, obj)

    def on_synced(self) -> None:
        self._synced.set()

    # ── lifecycle ──

    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    def start(self) -> None:
        if self._task is None and not self.disabled:
            self._task = asyncio.get_running_loop().create_task(self.reflector.run(),
                                                                name=f"reflector-{self.spec.kind}")

    def disable(self) -> None:
        """Mark the resource as not served: the store stays empty and counts as synced."""
        self.disabled = True
        self._synced.set()

    async def wait_synced(self) -> None:
        await self._synced.wait()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None


def _call(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:
        log.exception("informer event handler %s failed", getattr(fn, "__qualname__", fn))


class InformerFactory:
    """Informers by kind, created on first use (``informer(kind)``), started together.

    ``start()`` starts every informer created so far (and is safe to call again);
    ``wait_for_cache_sync(timeout_s)`` returns True once all have synced (False on timeout).
    ``probe_served()`` asks discovery which group-versions the server serves and disables the
    informers of resources it does not (logged), so a server without e.g. ``resource.k8s.io``
    does not block the start-up sync.
    """

    def __init__(self, client: APIClient, *, page_size: int = 500,
                 resources: dict[str, ResourceSpec] | None = None) -> None:
        self.client = client
        self.page_size = page_size
        self.resources = resources if resources is not None else RESOURCES
        self.informers: dict[str, Informer] = {}

    def informer(self, kind: str) -> Informer:
        inf = self.informers.get(kind)
        if inf is None:
            spec = self.resources.get(kind)
            if spec is None:
                raise KeyError(f"no informer for kind {kind!r}")
            inf = self.informers[kind] = Informer(self.client, spec, page_size=self.page_size)
        return inf

    def informers_for(self, kinds: Iterable[str]) -> list[Informer]:
        return [self.informer(k) for k in kinds]

    async def probe_served(self) -> list[str]:
        """Disable informers whose resource discovery does not list; returns their kinds."""
        by_gv: dict[str, set[str] | None] = {}
        skipped: list[str] = []
        for kind, inf in self.informers.items():
            gv = inf.spec.group_version
            if gv not in by_gv:
                path = "/api/v1" if gv == "v1" else f"/apis/{gv}"
                try:
                    doc = await self.client.get(path)
                    by_gv[gv] = {str(r.get("name")) for r in doc.get("resources") or [] if isinstance(r, dict)}
                except APIError as e:
                    if e.status != 404:
                        raise
                    by_gv[gv] = None
            served = by_gv[gv]
            if served is None or inf.spec.resource not in served:
                log.warning("the API server does not serve %s (%s); its informer is not started",
                            inf.spec.resource, gv)
                inf.disable()
                skipped.append(kind)
        return skipped

    def start(self) -> None:
        for inf in self.informers.values():
            inf.start()

    @property
    def has_synced(self) -> bool:
        return all(inf.has_synced for inf in self.informers.values())

    async def wait_for_cache_sync(self, timeout_s: float | None = None) -> bool:
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for can drop a cancellation of the caller
            async with asyncio.timeout(timeout_s):
                await asyncio.gather(*(i.wait_synced() for i in self.informers.values()))
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        await asyncio.gather(*(inf.stop() for inf in self.informers.values()))


class InformerLister:
    """:class:`~kubesched.framework.handle.ClusterLister` over the factory's stores.

    ``list(kind, namespace=None)``, ``get(kind, namespace, name)``, ``revision(kind)``; kinds
    without an informer answer ``[]`` / ``None`` / 0.
    """

    def __init__(self, factory: InformerFactory) -> None:
        self.factory = factory

    def _store(self, kind: str) -> Store | None:
        inf = self.factory.informers.get(kind)
        return inf.store if inf is not None else None

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        store = self._store(kind)
        if store is None:
            return []
        if namespace is None:
            return store.list()
        # a snapshot first: with extenders, scheduling cycles read listers from a worker thread
        return [o for o in store.list() if _namespace(o) == namespace]

    def get(self, kind: str, namespace: str, name: str) -> Any | None:
        store = self._store(kind)
        if store is None:
            return None
        return store.get_by(namespace or "", name)

    def revision(self, kind: str) -> int:
        """The change counter of ``kind``'s store (0 without an informer)."""
        store = self._store(kind)
        return store.revision if store is not None else 0


def _namespace(obj: Any) -> str:
    if isinstance(obj, dict):
        return (obj.get("metadata") or {}).get("namespace") or ""
    return obj.metadata.namespace


def tombstone_object(obj: Any) -> Any:
    """The object inside a :class:`DeletedFinalStateUnknown`, or ``obj`` itself."""
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
