"""The in-memory cluster: the simulator's API server.

:class:`ClusterStore` holds typed objects (for the engine) and, for objects read from
manifests, the raw mapping (for output: every input object comes back, updated). It implements
:class:`~kubesched.framework.handle.ClusterLister` and
:class:`~kubesched.framework.handle.ClusterClient`.

Like the API server, a write never calls into the scheduler: it changes the object and queues
the informer event it causes (``on_pod_update`` for a bind or a status patch,
``on_pod_delete`` for a delete). Events are delivered in order by :meth:`ClusterStore.flush`,
which the driver calls between scheduling cycles, or — after :meth:`ClusterStore.deliver_via`
— by an :class:`~kubesched.sim.event_heap.Environment` event ``latency_s`` later. So the engine
learns of its own binds as it does live: the assumed pod is confirmed by the watch event.
Writes made by the driver itself (:meth:`add`, :meth:`remove_pod`, :meth:`remove_node`) are
queued behind the pending events and delivered at once.
"""

from __future__ import annotations

import copy
import random
from collections import Counter, deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from kubesched.api import volumes
from kubesched.api.hashing import ALPHANUMS
from kubesched.api.objects import Node, Pod, PodCondition, pod_key
from kubesched.api.strategy import pod_topology_labels
from kubesched.controllers import pvcontroller
from kubesched.errors import BindError

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.scheduler import Scheduler
    from kubesched.sim.event_heap import Environment, Event

__all__ = ["ClusterStore", "Preemption"]


class Preemption(msgspec.Struct, frozen=True):
    """One pod evicted by preemption: ``victim`` (``namespace/name``) was deleted to make room
    for ``preemptor`` on ``node`` (from the ``Preempted`` event the scheduler records on the victim,
    upstream ``prepareCandidate``). ``priority`` values are the pods' ``spec.priority``."""

    victim: str
    preemptor: str
    node: str
    victim_priority: int = 0
    preemptor_priority: int = 0
    message: str = ""


class ClusterStore:
    """Objects by kind; pods by ``namespace/name``; nodes by name.

    ``raw`` maps ``(kind, namespace, name)`` → the input mapping (kept in sync with the typed
    object on bind / condition updates). ``events`` collects ``(type, reason, object key,
    message)`` as the event recorder would emit them; set ``keep_events=False`` to drop them.
    """

    def __init__(self, *, keep_events: bool = True) -> None:
        self.pods: dict[str, Pod] = {}
        self.nodes: dict[str, Node] = {}
        self.objects: dict[str, dict[tuple[str, str], Any]] = {}
        self._revisions: Counter[str] = Counter()
        self.raw: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.events: list[tuple[str, str, str, str]] = []
        self.event_counts: Counter[str] = Counter()
        self.keep_events = keep_events
        self.scheduler: Scheduler | None = None
        self.bind_count = 0
        self.preemptions: list[Preemption] = []
        """Every pod deleted by preemption, in order (kept whatever ``keep_events`` says)."""
        self.writes: Counter[str] = Counter()
        """Client writes by method name (bind, update_pod_condition, delete_pod, …)."""
        self._pending: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self._env: Environment | None = None
        self._latency = 0.0
        self._priority = 0
        self._delivery: Event | None = None
        self._driving = 0
        self._driving_cm = _Driving(self)
        self._rv = 0
        self.pod_delete_hooks: list[Callable[[Pod], None]] = []
        """Simulated controllers reacting to a pod deleted by the scheduler (preemption), e.g. the
        resourceclaim controller releasing its claims."""
        self.on_delivered: Callable[[], None] | None = None
        """Called after an Environment-driven delivery (a driver re-runs its scheduler there)."""

    # ───────────────────────────── informer events ─────────────────────────────

    def deliver_via(self, env: Environment, latency_s: float = 0.0, priority: int = 0) -> None:
        """Deliver queued events through ``env``: an event ``latency_s`` after the first
        undelivered write (priority ``priority``) flushes them. :meth:`flush` still works."""
        self._env = env
        self._latency = latency_s
        self._priority = priority

    def pending_events(self) -> int:
        """Informer events queued and not yet delivered."""
        return len(self._pending)

    def driving(self) -> _Driving:
        """A context manager: while the driver runs the scheduler and flushes by itself, writes
        schedule no Environment delivery; whatever is left undelivered is flushed on exit."""
        return self._driving_cm

    def _emit(self, fn: Callable[..., Any], *args: Any) -> None:
        self._pending.append((fn, args))
        if self._env is not None and self._delivery is None and not self._driving:
            self._delivery = self._env.schedule_in(self._latency, self._on_delivery, self._priority)

    def _on_delivery(self) -> None:
        self._delivery = None
        self.flush()
        if self.on_delivered is not None:
            self.on_delivered()

    def flush(self) -> int:
        """Deliver every queued informer event to the scheduler, in order (events caused while
        delivering are delivered too). Returns how many were delivered."""
        pending = self._pending
        if not pending:
            return 0
        if self._delivery is not None:
            self._delivery.cancel()
            self._delivery = None
        n = 0
        while pending:
            fn, args = pending.popleft()
            fn(*args)
            n += 1
        return n

    def _notify_pod_update(self, old: Pod, new: Pod) -> None:
        if self.scheduler is not None:
            self._emit(self.scheduler.on_pod_update, old, new)

    def _notify_pod_delete(self, pod: Pod) -> None:
        if self.scheduler is not None:
            self._emit(self.scheduler.on_pod_delete, pod)

    # ───────────────────────────── lister ─────────────────────────────

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        if kind == "Pod":
            return [p for p in self.pods.values() if namespace is None or p.metadata.namespace == namespace]
        if kind == "Node":
            return list(self.nodes.values())
        objs = self.objects.get(kind, {})
        if namespace is None:
            return list(objs.values())
        return [o for (ns, _), o in objs.items() if ns == namespace]

    def revision(self, kind: str) -> int:
        """How many times an object of ``kind`` (not Pod/Node) was added, replaced or removed
        (:class:`~kubesched.framework.handle.ClusterLister`'s change counter)."""
        return self._revisions[kind]

    def get(self, kind: str, namespace: str, name: str) -> Any | None:
        if kind == "Pod":
            return self.pods.get(f"{namespace}/{name}")
        if kind == "Node":
            return self.nodes.get(name)
        return self.objects.get(kind, {}).get((namespace or "", name))

    # ───────────────────────────── writes from the driver ─────────────────────────────

    def _deliver_now(self, fn: Callable[..., Any], *args: Any) -> None:
        """A driver write: queued behind the pending events, then everything is delivered."""
        self._pending.append((fn, args))
        self.flush()

    def add(self, kind: str, obj: Any, raw: dict[str, Any] | None = None) -> None:
        """Add an object; pods and nodes are announced to the scheduler (delivered at once,
        after any pending event)."""
        meta = obj.metadata
        if raw is not None:
            self.raw[(kind, meta.namespace or "", meta.name)] = raw
        if kind == "Pod":
            if obj.spec.volumes:
                self._create_ephemeral_claims(obj)
            self.pods[pod_key(obj)] = obj
            if self.scheduler is not None:
                self._deliver_now(self.scheduler.on_pod_add, obj)
        elif kind == "Node":
            self.nodes[meta.name] = obj
            if self.scheduler is not None:
                self._deliver_now(self.scheduler.on_node_add, obj)
        else:
            self._put(kind, obj)
            self.flush()

    def add_nodes(self, nodes: Sequence[tuple[Node, dict[str, Any]]]) -> None:
        """:meth:`add` of each ``(node, raw)`` in order, announced to the scheduler as one initial
        LIST (:meth:`~kubesched.scheduler.Scheduler.on_nodes_add`: the cache filled in bulk)."""
        for node, raw in nodes:
            name = node.metadata.name
            self.raw[("Node", node.metadata.namespace or "", name)] = raw
            self.nodes[name] = node
        if self.scheduler is not None and nodes:
            self._deliver_now(self.scheduler.on_nodes_add, [node for node, _ in nodes])

    def add_raw(self, kind: str, data: dict[str, Any]) -> None:
        """Keep an object of a kind without a typed view, as its raw mapping (the lister returns it)."""
        meta = data.get("metadata") or {}
        self.objects.setdefault(kind, {})[(meta.get("namespace") or "", meta.get("name", ""))] = data
        self._revisions[kind] += 1

    def add_object(self, kind: str, data: dict[str, Any]) -> None:
        """Create or replace an object of a kind without a typed view (a controller's write):
        stored as its raw mapping, the scheduler gets the Add/Update event at once."""
        self._put(kind, data)
        self.flush()

    def announce(self, kind: str) -> None:
        """Deliver an Add event (``on_object_event(kind, None, obj)``) for every stored object of
        ``kind``, as an informer's initial list does (the driver calls it once the scheduler is
        attached: objects added before it were not announced)."""
        if self.scheduler is None:
            return
        for obj in list(self.objects.get(kind, {}).values()):
            self._pending.append((self.scheduler.on_object_event, (kind, None, obj)))
        self.flush()

    def remove_pod(self, key: str) -> Pod | None:
        """The driver deletes a pod (delivered at once, after any pending event)."""
        pod = self.pods.pop(key, None)
        if pod is not None and self.scheduler is not None:
            self._deliver_now(self.scheduler.on_pod_delete, pod)
        return pod

    def remove_node(self, name: str) -> Node | None:
        node = self.nodes.pop(name, None)
        if node is not None and self.scheduler is not None:
            self._deliver_now(self.scheduler.on_node_delete, node)
        return node

    def _replace_pod(self, old: Pod, new: Pod) -> None:
        self.pods[pod_key(new)] = new
        self._notify_pod_update(old, new)

    def _raw_pod(self, pod: Pod) -> dict[str, Any] | None:
        return self.raw.get(("Pod", pod.metadata.namespace or "", pod.metadata.name))

    # ───────────────────────────── client ─────────────────────────────

    async def bind(self, pod: Pod, node_name: str) -> None:
        """``pods/{name}/binding``: 404 for an unknown pod or node, 409 if already assigned."""
        self.writes["bind"] += 1
        key = pod_key(pod)
        cur = self.pods.get(key)
        if cur is None:
            raise BindError(f'pods "{pod.metadata.name}" not found', 404)
        if pod.metadata.uid and cur.metadata.uid and pod.metadata.uid != cur.metadata.uid:
            raise BindError(f'Precondition failed: UID in precondition: {pod.metadata.uid}, '
                            f'UID in object meta: {cur.metadata.uid}', 409)
        if cur.spec.node_name:
            raise BindError(f"pod {key} is already assigned to node \"{cur.spec.node_name}\"", 409)
        if node_name not in self.nodes:
            raise BindError(f'node "{node_name}" not found', 404)
        cond = PodCondition(type="PodScheduled", status="True")
        conds = [c for c in cur.status.conditions if c.type != "PodScheduled"] + [cond]
        st = msgspec.structs.replace(cur.status, conditions=conds)
        # kube-apiserver ClearingNominatedNodeNameAfterBinding (beta, on since v1.35; the
        # cluster is taken to run the emulated version): the binding clears the nomination
        clear_nnn = bool(cur.status.nominated_node_name) and self._clears_nnn_on_binding()
        if clear_nnn:
            st = msgspec.structs.replace(st, nominated_node_name="")
        # kube-apiserver's PodTopologyLabels admission (beta, on since 1.35) copies the node's zone and
        # region labels onto the pod on pods/binding (admission.go admitBinding, storage.go assignPod)
        topo = pod_topology_labels(self.nodes[node_name].metadata.labels,
                                   self.scheduler.features if self.scheduler is not None else None)
        meta = cur.metadata
        if topo:
            meta = msgspec.structs.replace(meta, labels={**(meta.labels or {}), **topo})
        new = msgspec.structs.replace(
            cur, metadata=meta, spec=msgspec.structs.replace(cur.spec, node_name=node_name), status=st)
        raw = self._raw_pod(cur)
        if raw is not None:
            raw.setdefault("spec", {})["nodeName"] = node_name
            if topo:
                raw_meta = raw.setdefault("metadata", {})
                raw_meta["labels"] = {**(raw_meta.get("labels") or {}), **topo}
            _set_condition(raw, {"type": "PodScheduled", "status": "True"})
            if clear_nnn and isinstance(raw.get("status"), dict):
                raw["status"].pop("nominatedNodeName", None)
        self.bind_count += 1
        self._replace_pod(cur, new)

    def _clears_nnn_on_binding(self) -> bool:
        return self.scheduler is not None and self.scheduler.features.enabled("ClearingNominatedNodeNameAfterBinding")

    def update_pod_condition(self, pod: Pod, status: str, reason: str, message: str,
                             nominated_node_name: str | None = None) -> None:
        """Patch the PodScheduled condition (and ``nominatedNodeName`` unless None)."""
        self.writes["update_pod_condition"] += 1
        cur = self.pods.get(pod_key(pod))
        if cur is None:
            return
        old = next((c for c in cur.status.conditions if c.type == "PodScheduled"), None)
        if (old is not None and (old.status, old.reason, old.message) == (status, reason, message)
                and (nominated_node_name is None or nominated_node_name == (cur.status.nominated_node_name or ""))):
            # upstream updatePod: UpdatePodCondition reports no change and the nomination is
            # unchanged → no patch is sent, so no informer update event follows
            return
        gen = cur.metadata.generation
        cond = PodCondition(type="PodScheduled", status=status, reason=reason, message=message,
                            observed_generation=gen)
        conds = [c for c in cur.status.conditions if c.type != "PodScheduled"] + [cond]
        st = msgspec.structs.replace(cur.status, conditions=conds)
        if nominated_node_name is not None:
            st = msgspec.structs.replace(st, nominated_node_name=nominated_node_name)
        new = msgspec.structs.replace(cur, status=st)
        raw = self._raw_pod(cur)
        if raw is not None:
            _set_condition(raw, {"type": "PodScheduled", "status": status, "reason": reason, "message": message,
                                 **({"observedGeneration": gen} if gen else {})})
            if nominated_node_name is not None:
                raw.setdefault("status", {})["nominatedNodeName"] = nominated_node_name
        self._replace_pod(cur, new)

    def clear_nominated_node_name(self, pod: Pod) -> None:
        """Clear ``status.nominatedNodeName`` (no-op when unset or the pod is gone)."""
        self.writes["clear_nominated_node_name"] += 1
        cur = self.pods.get(pod_key(pod))
        if cur is None or not cur.status.nominated_node_name:
            return
        new = msgspec.structs.replace(cur, status=msgspec.structs.replace(cur.status, nominated_node_name=""))
        raw = self._raw_pod(cur)
        if raw is not None and isinstance(raw.get("status"), dict):
            raw["status"].pop("nominatedNodeName", None)
        self._replace_pod(cur, new)

    async def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        """Set ``status.nominatedNodeName`` (no-op when already so or the pod is gone)."""
        self.writes["set_nominated_node_name"] += 1
        cur = self.pods.get(pod_key(pod))
        if cur is None or (cur.status.nominated_node_name or "") == node_name:
            return
        new = msgspec.structs.replace(cur, status=msgspec.structs.replace(cur.status, nominated_node_name=node_name))
        raw = self._raw_pod(cur)
        if raw is not None:
            raw.setdefault("status", {})["nominatedNodeName"] = node_name
        self._replace_pod(cur, new)

    def add_pod_condition(self, pod: Pod, condition: dict[str, Any]) -> None:
        """Add or replace the condition of ``condition["type"]``."""
        self.writes["add_pod_condition"] += 1
        cur = self.pods.get(pod_key(pod))
        if cur is None:
            return
        cond = PodCondition(type=str(condition.get("type", "")), status=str(condition.get("status", "")),
                            reason=str(condition.get("reason", "")), message=str(condition.get("message", "")),
                            observed_generation=int(condition.get("observedGeneration") or 0))
        conds = [c for c in cur.status.conditions if c.type != cond.type] + [cond]
        new = msgspec.structs.replace(cur, status=msgspec.structs.replace(cur.status, conditions=conds))
        raw = self._raw_pod(cur)
        if raw is not None:
            _set_condition(raw, {k: v for k, v in condition.items()
                                 if k in ("type", "status", "reason", "message") or (k == "observedGeneration" and v)})
        self._replace_pod(cur, new)

    def record_event(self, regarding: Any, event_type: str, reason: str, action: str, note: str,
                     related: Any = None) -> None:
        self.event_counts[reason] += 1
        if reason == "Preempted" and related is not None:
            self._note_preemption(regarding, related, note)
        if self.keep_events:
            meta = regarding.metadata
            self.events.append((event_type, reason, f"{meta.namespace}/{meta.name}", note))

    def _note_preemption(self, victim: Pod, preemptor: Any, note: str) -> None:
        node = victim.spec.node_name or ""
        if not node and " on node " in note:
            node = note.rsplit(" on node ", 1)[1]
        if isinstance(preemptor, dict):  # a PodGroup (workload-aware preemption): "podgroup/ns/name"
            meta = preemptor.get("metadata") or {}
            spec = preemptor.get("spec") or {}
            kind = str(preemptor.get("kind") or "PodGroup").lower()
            who = f"{kind}/{meta.get('namespace', '')}/{meta.get('name', '')}"
            p = spec.get("priority")
            prio = p if isinstance(p, int) else 0
        else:
            who, prio = pod_key(preemptor), preemptor.spec.priority or 0
        self.preemptions.append(Preemption(pod_key(victim), who, node, victim.spec.priority or 0, prio, note))

    def delete_pod(self, pod: Pod) -> None:
        """Delete a pod (preemption): the delete event is queued like any other write."""
        self.writes["delete_pod"] += 1
        cur = self.pods.pop(pod_key(pod), None)
        self.raw.pop(("Pod", pod.metadata.namespace or "", pod.metadata.name), None)
        if cur is not None:
            self._notify_pod_delete(cur)
            for hook in self.pod_delete_hooks:
                hook(cur)

    def _put(self, kind: str, obj: Any) -> None:
        if isinstance(obj, dict):
            meta = obj.get("metadata") or {}
            ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        else:
            ns, name = obj.metadata.namespace or "", obj.metadata.name
        objs = self.objects.setdefault(kind, {})
        old = objs.get((ns, name))
        objs[(ns, name)] = obj
        self._revisions[kind] += 1
        if self.scheduler is not None:
            self._emit(self.scheduler.on_object_event, kind, old, obj)

    async def update_persistent_volume(self, pv: Any) -> Any:
        """Replace a PersistentVolume (the lister returns the new object); returns the stored
        object (a mapping gets a new ``metadata.resourceVersion``). The store then acts as the
        PV controller (:meth:`_sync_volume`)."""
        self.writes["update_persistent_volume"] += 1
        pv = self._versioned(pv)
        self._put("PersistentVolume", pv)
        if isinstance(pv, dict):
            self._sync_volume(pv)
        return pv

    async def update_persistent_volume_claim(self, pvc: Any) -> Any:
        """Replace a PersistentVolumeClaim; returns the stored object. The store then acts as
        the provisioner and PV controller (:meth:`_sync_claim`)."""
        self.writes["update_persistent_volume_claim"] += 1
        pvc = self._versioned(pvc)
        self._put("PersistentVolumeClaim", pvc)
        if isinstance(pvc, dict):
            self._sync_claim(pvc)
        return pvc

    # ── the storage controllers of the simulated cluster (kubesched.controllers.pvcontroller) ──

    def _versioned(self, obj: Any) -> Any:
        """A mapping gets the next ``metadata.resourceVersion`` (as the API server sets it)."""
        if isinstance(obj, dict):
            self._rv += 1
            obj = {**obj, "metadata": {**(obj.get("metadata") or {}), "resourceVersion": str(self._rv)}}
        return obj

    def _sync_volume(self, pv: dict[str, Any]) -> None:
        """PV controller: a PV whose ``claimRef`` names an existing, unbound claim binds both."""
        ref = (pv.get("spec") or {}).get("claimRef")
        if not ref or (pv.get("status") or {}).get("phase") == "Bound" and self._claim_bound_to(ref, pv):
            return
        pvc = self.get("PersistentVolumeClaim", ref.get("namespace") or "", ref.get("name") or "")
        if not isinstance(pvc, dict) or not volumes.claim_ref_matches(pv, pvc):
            return
        vname = (pvc.get("spec") or {}).get("volumeName")
        if vname and vname != (pv.get("metadata") or {}).get("name"):
            return
        new_pv, new_pvc = pvcontroller.bind_claim(pv, pvc)
        self._put("PersistentVolume", self._versioned(new_pv))
        self._put("PersistentVolumeClaim", self._versioned(new_pvc))

    def _claim_bound_to(self, ref: dict[str, Any], pv: dict[str, Any]) -> bool:
        pvc = self.get("PersistentVolumeClaim", ref.get("namespace") or "", ref.get("name") or "")
        return isinstance(pvc, dict) and (pvc.get("spec") or {}).get("volumeName") == (pv.get("metadata") or {}).get(
            "name") and volumes.ANN_BIND_COMPLETED in ((pvc.get("metadata") or {}).get("annotations") or {})

    def _sync_claim(self, pvc: dict[str, Any]) -> None:
        """Provisioner: a claim with a selected node and a provisioning class gets a PV on that
        node, which the PV controller binds; a claim named by an existing PV's claimRef binds."""
        sc = self.get("StorageClass", "", volumes.claim_class(pvc))
        if pvcontroller.needs_provisioning(pvc, sc if isinstance(sc, dict) else None):
            ann = (pvc.get("metadata") or {}).get("annotations") or {}
            node = self.nodes.get(ann.get(volumes.ANN_SELECTED_NODE, ""))
            node_map = msgspec.to_builtins(node) if node is not None else None
            pv = pvcontroller.provisioned_volume(pvc, sc, node_map)  # type: ignore[arg-type]
            name = pv["metadata"]["name"]
            if self.get("PersistentVolume", "", name) is None:
                pv = self._versioned(pv)
                self._put("PersistentVolume", pv)
                self._sync_volume(pv)

    def _create_ephemeral_claims(self, pod: Pod) -> None:
        """Ephemeral-volume controller: ``<pod>-<volume>`` PVCs for ``spec.volumes[].ephemeral``."""
        meta = pod.metadata
        for vol in pod.spec.volumes:
            eph = getattr(vol, "ephemeral", None)
            if eph is None:
                continue
            pvc = pvcontroller.ephemeral_claim(meta.name, meta.namespace or "", meta.uid or "", vol.name, eph)
            if self.get("PersistentVolumeClaim", meta.namespace or "", pvc["metadata"]["name"]) is None:
                self._put("PersistentVolumeClaim", self._versioned(pvc))

    async def update_resource_claim_status(self, claim: Any) -> None:
        """Replace a ResourceClaim (its status)."""
        self.writes["update_resource_claim_status"] += 1
        self._put("ResourceClaim", claim)

    async def update_resource_claim(self, claim: Any) -> Any:
        """Replace a ResourceClaim (metadata/spec: finalizers); returns it."""
        self.writes["update_resource_claim"] += 1
        self._put("ResourceClaim", claim)
        return claim

    async def create_resource_claim(self, claim: Any) -> Any:
        """Create a ResourceClaim (a mapping) named from ``metadata.generateName`` as the API
        server does (the base cut to 58 characters + 5 random characters; the suffix is drawn from
        a generator seeded by the namespace and base, so runs repeat); returns the stored claim.
        409 (``BindError``) when the claim carries a name that exists."""
        self.writes["create_resource_claim"] += 1
        claim = copy.deepcopy(claim if isinstance(claim, dict) else msgspec.to_builtins(claim))
        meta = claim.setdefault("metadata", {})
        ns = str(meta.get("namespace") or "")
        name = meta.get("name")
        if name:
            if self.get("ResourceClaim", ns, name) is not None:
                raise BindError(f'resourceclaims.resource.k8s.io "{name}" already exists', 409)
        else:
            base = str(meta.get("generateName") or "")[:58]
            rng = random.Random(f"{ns}/{base}")
            while True:
                name = base + "".join(rng.choices(ALPHANUMS, k=5))
                if self.get("ResourceClaim", ns, name) is None:
                    break
            meta["name"] = name
        claim = self._versioned(claim)
        self._put("ResourceClaim", claim)
        return claim

    async def delete_resource_claim(self, claim: Any) -> None:
        """Delete a ResourceClaim (no-op when it is gone)."""
        self.writes["delete_resource_claim"] += 1
        meta = (claim.get("metadata") if isinstance(claim, dict) else msgspec.to_builtins(claim.metadata)) or {}
        self.remove_object("ResourceClaim", str(meta.get("namespace") or ""), str(meta.get("name") or ""))

    async def update_pod_extended_resource_claim_status(self, pod: Pod, status: dict[str, Any]) -> None:
        """Set the pod's ``status.extendedResourceClaimStatus`` (404 when the pod is gone)."""
        self.writes["update_pod_extended_resource_claim_status"] += 1
        cur = self.pods.get(pod_key(pod))
        if cur is None:
            raise BindError(f'pods "{pod.metadata.name}" not found', 404)
        new = msgspec.structs.replace(
            cur, status=msgspec.structs.replace(cur.status, extended_resource_claim_status=copy.deepcopy(status)))
        raw = self._raw_pod(cur)
        if raw is not None:
            raw.setdefault("status", {})["extendedResourceClaimStatus"] = copy.deepcopy(status)
        self._replace_pod(cur, new)

    def patch_pod_group_condition(self, pod_group: dict[str, Any], condition: dict[str, Any]) -> None:
        """Set ``condition`` on the stored PodGroup's ``status.conditions`` (replacing the one of
        its type, in place; ``lastTransitionTime`` kept when the status is unchanged, otherwise
        left unset: the simulator has no wall clock). No-op when nothing changes or the object is
        gone; else the object gets a new ``resourceVersion`` and its informer update is queued."""
        self.writes["patch_pod_group_condition"] += 1
        meta = pod_group.get("metadata") or {}
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        objs = self.objects.get("PodGroup", {})
        cur = objs.get((ns, name))
        if not isinstance(cur, dict):
            return
        status = cur.get("status") if isinstance(cur.get("status"), dict) else {}
        conds = [c for c in (status or {}).get("conditions") or [] if isinstance(c, dict)]
        cond = dict(condition)
        for i, c in enumerate(conds):
            if c.get("type") != cond.get("type"):
                continue
            if all(c.get(k) == cond.get(k) for k in ("status", "reason", "message", "observedGeneration")):
                return
            if c.get("status") == cond.get("status") and "lastTransitionTime" in c:
                cond["lastTransitionTime"] = c["lastTransitionTime"]
            conds[i] = cond
            break
        else:
            conds.append(cond)
        order = ("type", "status", "observedGeneration", "lastTransitionTime", "reason", "message")
        conds = [{k: c[k] for k in order if k in c} | {k: v for k, v in c.items() if k not in order}
                 if c.get("type") == cond.get("type") else c for c in conds]
        rv = str((cur.get("metadata") or {}).get("resourceVersion") or "")
        if rv.isdigit():  # the new version must differ from the stored one (the informer drops equal ones)
            self._rv = max(self._rv, int(rv))
        # a new object over the old one's unchanged parts (stored objects are never changed in
        # place: the informer's old object stays as it was); the conditions are fresh dicts
        new = self._versioned({**cur, "status": {**(status or {}), "conditions": [dict(c) for c in conds]}})
        objs[(ns, name)] = new
        self._revisions["PodGroup"] += 1
        if ("PodGroup", ns, name) in self.raw:
            self.raw[("PodGroup", ns, name)] = new
        if self.scheduler is not None:
            self._emit(self.scheduler.on_object_event, "PodGroup", cur, new)

    def put_object(self, kind: str, obj: Any) -> None:
        """A simulated controller creates or replaces an object (typed or a raw mapping); the
        informer event is queued like a write's."""
        self._put(kind, obj)

    def remove_object(self, kind: str, namespace: str, name: str) -> Any | None:
        """The driver (or a simulated controller) deletes an object of a kind without a typed
        view; the delete event is queued like a write."""
        obj = self.objects.get(kind, {}).pop((namespace or "", name), None)
        self._revisions[kind] += 1
        if obj is not None and self.scheduler is not None:
            self._emit(self.scheduler.on_object_event, kind, obj, None)
        return obj


class _Driving:
    __slots__ = ("store",)

    def __init__(self, store: ClusterStore) -> None:
        self.store = store

    def __enter__(self) -> None:
        self.store._driving += 1

    def __exit__(self, *exc: object) -> None:
        st = self.store
        st._driving -= 1
        if not st._driving:
            st.flush()


def _set_condition(raw: dict[str, Any], cond: dict[str, Any]) -> None:
    status = raw.get("status")
    if not isinstance(status, dict):
        status = raw["status"] = {}
    conds = [c for c in status.get("conditions") or [] if not (isinstance(c, dict) and c.get("type") == cond["type"])]
    conds.append(cond)
    status["conditions"] = conds
