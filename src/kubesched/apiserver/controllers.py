"""Controllers of the simulated cluster (run with ``--simulate-kubelets``).

:class:`DisruptionController` keeps ``PodDisruptionBudget.status`` current, as
kube-controller-manager's disruption controller does (``pkg/controller/disruption/disruption.go``):
``expectedPods`` (matching, non-terminal pods), ``currentHealthy`` (Ready and not being
deleted), ``desiredHealthy`` (from ``minAvailable`` or ``expectedPods - maxUnavailable``,
percentages rounded up), ``disruptionsAllowed = max(0, currentHealthy - desiredHealthy)``,
``observedGeneration`` and the ``DisruptionAllowed`` condition. The scheduler's preemption
reads ``disruptionsAllowed`` (``filterPodsWithPDBViolation``). Simplification: expected pods
are counted from the pods themselves, not from their controllers' scale.

:class:`ServiceAccountController` gives every namespace its ``default`` ServiceAccount.

:class:`VolumeController` is the minimal storage side of kube-controller-manager plus a CSI
external-provisioner (pure object logic in :mod:`kubesched.controllers.pvcontroller`): the
ephemeral-volume controller creates ``<pod>-<volume>`` PVCs for ``spec.volumes[].ephemeral``;
the PV controller makes a new PV naming no claim ``Available``, gives an unbound claim without a
class the default StorageClass (``assignDefaultStorageClass``, also when that class is created
later), and binds a PV whose ``claimRef`` names an unbound claim (both ``Bound``, the claim
``pv.kubernetes.io/bind-completed``); the provisioner answers a claim annotated
``volume.kubernetes.io/selected-node`` of a class with a provisioner with a PV on that node,
which is then bound. Not modelled: Immediate binding/matching by the PV controller, reclaiming,
provisioning failures.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kubesched.api import podgroups, volumes
from kubesched.api.hashing import ALPHANUMS
from kubesched.api.labels import Selector, make_requirement
from kubesched.apiserver.managers import CONTROLLER_MANAGER, track_write
from kubesched.apiserver.storage import Conflict, Event, KeyExists, KeyNotFound
from kubesched.controllers import pvcontroller
from kubesched.controllers.workloads import POD_CLAIM_NAME_ANNOTATION, claim_name_prefix

if TYPE_CHECKING:
    from kubesched.apiserver.registry import Registry

__all__ = ["DebouncedController", "DisruptionController", "PodGroupProtectionController", "ResourceClaimController",
           "ServiceAccountController", "VolumeController",
           "pdb_selects", "pdb_status"]

log = logging.getLogger("kubesched.apiserver.controllers")

PDBS = "policy/poddisruptionbudgets"
PVS = "persistentvolumes"
PVCS = "persistentvolumeclaims"
SCS = "storage.k8s.io/storageclasses"


def _ready(pod: dict[str, Any]) -> bool:
    st = pod.get("status") or {}
    if st.get("phase") != "Running" or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in st.get("conditions") or [])


def pdb_selects(pdb: dict[str, Any], pod: dict[str, Any]) -> bool:
    """Whether the PDB's label selector selects ``pod`` (policy/v1: ``{}`` selects all, null none)."""
    sel = (pdb.get("spec") or {}).get("selector")
    if sel is None:
        return False
    labels = (pod.get("metadata") or {}).get("labels") or {}
    reqs = [make_requirement(k, "=", (v,)) for k, v in (sel.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for ex in sel.get("matchExpressions") or []:
        reqs.append(make_requirement(ex["key"], ops.get(ex.get("operator", ""), "in"), ex.get("values") or ()))
    return Selector(reqs).matches(labels)  # policy/v1: an empty selector selects every pod


def pdb_status(pdb: dict[str, Any], pods: list[dict[str, Any]], now: str) -> dict[str, Any]:
    """The status the disruption controller computes for ``pdb`` over the namespace's ``pods``."""
    live = [p for p in pods if pdb_selects(pdb, p)
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    expected = len(live)
    healthy = sum(1 for p in live if _ready(p))
    spec = pdb.get("spec") or {}

    def resolve(v: Any) -> int:
        if isinstance(v, str) and v.endswith("%"):
            return math.ceil(int(v[:-1]) * expected / 100)
        return int(v)

    if spec.get("maxUnavailable") is not None:
        desired = max(0, expected - resolve(spec["maxUnavailable"]))
    elif spec.get("minAvailable") is not None:
        desired = resolve(spec["minAvailable"])
    else:
        desired = expected
    allowed = max(0, healthy - desired)
    gen = (pdb.get("metadata") or {}).get("generation", 1)
    old = pdb.get("status") or {}
    ok = allowed > 0
    cond = {"type": "DisruptionAllowed", "status": "True" if ok else "False",
            "reason": "SufficientPods" if ok else "InsufficientPods", "message": "",
            "observedGeneration": gen, "lastTransitionTime": now}
    for c in old.get("conditions") or []:
        if c.get("type") == "DisruptionAllowed" and c.get("status") == cond["status"]:
            cond["lastTransitionTime"] = c.get("lastTransitionTime", now)
    return {"observedGeneration": gen, "disruptionsAllowed": allowed, "currentHealthy": healthy,
            "desiredHealthy": desired, "expectedPods": expected, "conditions": [cond]}


class DebouncedController:
    """A controller woken by store events and run in debounced passes: :meth:`start` subscribes
    :meth:`_on_event` to :attr:`spaces`, queues the work already stored (:meth:`_prime`) and
    spawns the loop; each wake-up waits ``period`` seconds (so a burst of events makes one pass),
    then runs :meth:`_pass`. The loop ends when the server cancels it, and unsubscribes then.
    Subclasses set :attr:`spaces` and implement :meth:`_pass` (which must not raise)."""

    spaces: tuple[str, ...] = ()

    def __init__(self, server: Registry, period: float) -> None:
        self.server = server
        self.period = period
        self._wake = asyncio.Event()

    async def start(self) -> None:
        for space in self.spaces:
            self.server.store.subscribe(space, self._on_event)
        self._prime()
        self._wake.set()
        self.server.spawn(self._run())

    def _prime(self) -> None:
        """Queue the work the objects stored before :meth:`start` ask for (nothing by default)."""

    def _on_event(self, ev: Event) -> None:
        self._wake.set()

    async def _run(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                await asyncio.sleep(self.period)
                await self._pass()
        finally:
            for space in self.spaces:
                self.server.store.unsubscribe(space, self._on_event)

    async def _pass(self) -> None:
        raise NotImplementedError


class DisruptionController(DebouncedController):
    """Recomputes PDB statuses of namespaces whose pods or PDBs changed (debounced)."""

    spaces = ("pods", PDBS)

    def __init__(self, server: Registry, period: float = 0.1) -> None:
        super().__init__(server, period)
        self._dirty: set[str] = set()

    def _prime(self) -> None:
        for e in self.server.store.list(PDBS):
            self._dirty.add(e.obj()["metadata"].get("namespace", ""))

    def _on_event(self, ev: Event) -> None:
        if ev.space == PDBS and ev.type == "MODIFIED" and ev.prev is not None:
            # our own status writes: only spec/metadata changes matter
            new, old = ev.entry.obj(), ev.prev.obj()
            if new.get("spec") == old.get("spec") and new["metadata"].get("generation") == \
                    old["metadata"].get("generation"):
                return
        if ev.ns not in self._dirty:
            self._dirty.add(ev.ns)
            self._wake.set()

    async def _pass(self) -> None:
        dirty, self._dirty = self._dirty, set()
        for ns in dirty:
            try:
                self._sync(ns)
            except Exception:  # keep the controller alive
                log.exception("disruption controller failed on namespace %s", ns)

    def _sync(self, ns: str) -> None:
        store = self.server.store
        pdbs = store.list(PDBS, ns)
        if not pdbs:
            return
        pods = [e.obj() for e in store.list("pods", ns)]
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for e in pdbs:
            pdb = e.obj()
            status = pdb_status(pdb, pods, now)
            if status == pdb.get("status"):
                continue
            pdb["status"] = status
            track_write(self.server, PDBS, e.obj(), pdb, CONTROLLER_MANAGER, "status")
            try:
                store.update(PDBS, ns, pdb["metadata"]["name"], pdb, expect_rv=e.rv)
            except (Conflict, KeyNotFound):
                self._dirty.add(ns)
                self._wake.set()


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


PODGROUPS = "scheduling.k8s.io/podgroups"


class PodGroupProtectionController(DebouncedController):
    """kube-controller-manager's PodGroupProtection controller
    (``pkg/controller/scheduling/podgroupprotection``, GenericWorkload): a PodGroup being deleted
    loses its ``scheduling.k8s.io/podgroup-protection`` finalizer once no non-terminal pod names it
    in ``spec.schedulingGroup.podGroupName`` (then the API server removes it)."""

    spaces = ("pods", PODGROUPS)

    def __init__(self, server: Registry, period: float = 0.05) -> None:
        super().__init__(server, period)

    async def _pass(self) -> None:
        if podgroups.served_api("PodGroup", self.server.features) is None:
            return
        try:
            self._sync()
        except Exception:  # keep the controller alive
            log.exception("podgroup protection controller failed")

    def _sync(self) -> None:
        from kubesched.apiserver import resources as res
        from kubesched.apiserver.errors import APIError

        store = self.server.store
        info = res.find(podgroups.GROUP, "v1beta1", "podgroups")
        assert info is not None
        for e in store.list(PODGROUPS):
            pg = e.obj()
            meta = pg["metadata"]
            ns = meta.get("namespace", "")
            if not podgroups.protection_finalizer_removable(pg, [p.obj() for p in store.list("pods", ns)]):
                continue
            new = dict(pg)
            new["metadata"] = {**meta, "finalizers": [f for f in meta.get("finalizers") or []
                                                      if f != podgroups.PROTECTION_FINALIZER]}
            try:  # an Update through the API (the last finalizer gone: the object is deleted)
                self.server.commit_update(info, ns, meta["name"], new, e, "", None, manager=CONTROLLER_MANAGER)
            except APIError:
                self._wake.set()


class VolumeController:
    """Ephemeral-volume controller, PV controller (binding) and provisioner of the box (see the
    module docstring). Store events only queue work; one task does the writes, retrying a key
    after a conflict."""

    def __init__(self, server: Registry) -> None:
        self.server = server
        self._work: list[tuple[str, str, str]] = []
        self._queued: set[tuple[str, str, str]] = set()
        self._wake = asyncio.Event()

    async def start(self) -> None:
        store = self.server.store
        store.subscribe(SCS, self._on_class_event)
        for space in ("pods", PVS, PVCS):
            store.subscribe(space, self._on_event)
            for e in store.list(space):
                o = e.obj()["metadata"]
                self._enqueue(space, o.get("namespace") or "", o.get("name") or "")
        self.server.spawn(self._run())

    def _enqueue(self, space: str, ns: str, name: str) -> None:
        key = (space, ns, name)
        if key not in self._queued:
            self._queued.add(key)
            self._work.append(key)
            self._wake.set()

    def _on_event(self, ev: Event) -> None:
        if ev.type != "DELETED":
            self._enqueue(ev.space, ev.ns, ev.name)

    def _on_class_event(self, ev: Event) -> None:
        """A StorageClass changed: a new default may be assigned to waiting claims (upstream's PV
        controller finds them at its periodic resync)."""
        if ev.type != "DELETED":
            for e in self.server.store.list(PVCS):
                o = e.obj()["metadata"]
                self._enqueue(PVCS, o.get("namespace") or "", o.get("name") or "")

    async def _run(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                work, self._work = self._work, []
                for key in work:
                    self._queued.discard(key)
                    try:
                        self._sync(*key)
                    except (Conflict, KeyNotFound, KeyExists):
                        self._enqueue(*key)  # an object changed under us: look again
                    except Exception:  # keep the controller alive
                        log.exception("volume controller failed on %s %s/%s", *key)
                await asyncio.sleep(0)
        finally:
            for space in ("pods", PVS, PVCS):
                self.server.store.unsubscribe(space, self._on_event)
            self.server.store.unsubscribe(SCS, self._on_class_event)

    def _get(self, space: str, ns: str, name: str) -> tuple[dict[str, Any], int] | None:
        e = self.server.store.get(space, ns, name)
        return (e.obj(), e.rv) if e is not None else None

    def _sync(self, space: str, ns: str, name: str) -> None:
        if space == "pods":
            self._sync_pod(ns, name)
        elif space == PVS:
            self._sync_volume(name)
        else:
            self._sync_claim(ns, name)

    def _sync_pod(self, ns: str, name: str) -> None:
        hit = self._get("pods", ns, name)
        if hit is None:
            return
        pod = hit[0]
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            return
        for pvc in pvcontroller.ephemeral_claims(pod):
            cname = pvc["metadata"]["name"]
            if self.server.store.get(PVCS, ns, cname) is None:
                pvc["metadata"].update({"uid": str(uuid.uuid4()), "creationTimestamp": _now()})
                self.server.store.create(PVCS, ns, cname, pvc)

    def _sync_volume(self, name: str) -> None:
        hit = self._get(PVS, "", name)
        if hit is None:
            return
        pv, pv_rv = hit
        ref = (pv.get("spec") or {}).get("claimRef")
        if not ref:
            if (pv.get("status") or {}).get("phase") in (None, "", "Pending"):  # a new PV becomes Available
                pv["status"] = {**(pv.get("status") or {}), "phase": "Available"}
                self.server.store.update(PVS, "", name, pv, expect_rv=pv_rv)
            return
        chit = self._get(PVCS, ref.get("namespace") or "", ref.get("name") or "")
        if chit is None:
            return
        pvc, pvc_rv = chit
        if not volumes.claim_ref_matches(pv, pvc):
            return
        vname = (pvc.get("spec") or {}).get("volumeName")
        bound = volumes.ANN_BIND_COMPLETED in ((pvc.get("metadata") or {}).get("annotations") or {})
        if vname and (vname != name or (bound and (pv.get("status") or {}).get("phase") == "Bound")):
            return
        new_pv, new_pvc = pvcontroller.bind_claim(pv, pvc)
        store = self.server.store
        store.update(PVS, "", name, new_pv, expect_rv=pv_rv)
        ns, cname = volumes.claim_key(pvc)
        store.update(PVCS, ns, cname, new_pvc, expect_rv=pvc_rv)

    def _sync_claim(self, ns: str, name: str) -> None:
        hit = self._get(PVCS, ns, name)
        if hit is None:
            return
        pvc, pvc_rv = hit
        store = self.server.store
        if not (pvc.get("spec") or {}).get("volumeName"):
            # pv_controller.go:968 assignDefaultStorageClass: an unbound claim without a class
            new = pvcontroller.with_default_class(pvc, (e.obj() for e in store.list(SCS)))
            if new is not None:
                store.update(PVCS, ns, name, new, expect_rv=pvc_rv)
                return
        sc_entry = store.get(SCS, "", volumes.claim_class(pvc))
        sc = sc_entry.obj() if sc_entry is not None else None
        if pvcontroller.needs_provisioning(pvc, sc):
            selected = ((pvc.get("metadata") or {}).get("annotations") or {}).get(volumes.ANN_SELECTED_NODE, "")
            node_entry = store.get("nodes", "", selected)
            pv = pvcontroller.provisioned_volume(pvc, sc, node_entry.obj() if node_entry else None,  # type: ignore[arg-type]
                                                 _now())
            pv["metadata"]["uid"] = str(uuid.uuid4())
            pv_name = pv["metadata"]["name"]
            if store.get(PVS, "", pv_name) is None:
                store.create(PVS, "", pv_name, pv)
            self._sync_volume(pv_name)
            return
        for e in store.list(PVS):  # a PV created first, pre-bound to this claim
            ref = (e.obj().get("spec") or {}).get("claimRef") or {}
            if ref.get("name") == name and (ref.get("namespace") or "") == ns:
                self._sync_volume(e.obj()["metadata"]["name"])


CLAIMS = "resource.k8s.io/resourceclaims"
CLAIM_TEMPLATES = "resource.k8s.io/resourceclaimtemplates"
POD_GROUPS = "scheduling.k8s.io/podgroups"


class ResourceClaimController:
    """The part of kube-controller-manager's resourceclaim controller the scheduler depends on
    (``pkg/controller/resourceclaim/controller.go``): for a pod's ``resourceClaimTemplateName``
    entries without a ``status.resourceClaimStatuses`` entry it creates the ResourceClaim
    (``<pod>-<claim>-`` + 5 random characters, truncated as upstream; the pod as controlling owner;
    the ``resource.kubernetes.io/pod-claim-name`` annotation; the template's spec) and records it in
    the pod's status; when a pod is gone, the claims it owns are deleted (the garbage collector's
    part, finalizers not waited for) and other claims drop it from ``reservedFor`` (deallocated
    when nobody is left).

    With DRAWorkloadResourceClaims (v1.37.2 ``syncPodGroup`` / ``handlePodGroupClaim``): a
    PodGroup's template entries get claims the PodGroup owns (``<podgroup>-<claim>-`` + 5
    characters), recorded in its ``status.resourceClaimStatuses``; a member's entry the PodGroup
    shares (``resourceclaim.BindTo``) names the PodGroup's claim instead of getting its own; a
    deleted PodGroup's reservations are dropped and the claims it owns deleted."""

    def __init__(self, server: Registry) -> None:
        self.server = server
        self._queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self.generic_workload = server.features.enabled("GenericWorkload")
        self.workload_claims = self.generic_workload and server.features.enabled("DRAWorkloadResourceClaims")

    async def start(self) -> None:
        store = self.server.store
        store.subscribe("pods", self._on_event)
        if self.generic_workload:
            store.subscribe(POD_GROUPS, self._on_group_event)
            for e in store.list(POD_GROUPS):
                self._queue.put_nowait(("group", e.obj()))
        for e in store.list("pods"):
            self._queue.put_nowait(("sync", e.obj()))
        self.server.spawn(self._run())

    def _on_event(self, ev: Event) -> None:
        obj = ev.entry.obj()
        if not (obj.get("spec") or {}).get("resourceClaims"):
            return
        self._queue.put_nowait(("gone" if ev.type == "DELETED" else "sync", obj))

    def _on_group_event(self, ev: Event) -> None:
        obj = ev.entry.obj()
        self._queue.put_nowait(("group-gone" if ev.type == "DELETED" else "group", obj))

    async def _run(self) -> None:
        try:
            while True:
                what, obj = await self._queue.get()
                try:
                    if what == "sync":
                        self._sync(obj)
                    elif what == "gone":
                        self._release(obj)
                    elif what == "group":
                        self._sync_group(obj)
                    else:
                        self._release_group(obj)
                except Exception:  # keep the controller alive
                    log.exception("resourceclaim controller failed on %s", (obj.get("metadata") or {}).get("name"))
        finally:
            self.server.store.unsubscribe("pods", self._on_event)
            if self.generic_workload:
                self.server.store.unsubscribe(POD_GROUPS, self._on_group_event)

    # ── PodGroups (DRAWorkloadResourceClaims) ──

    def _group_claim(self, ns: str, group: dict[str, Any], claim_name: str) -> str | None:
        """Upstream ``findPodGroupResourceClaim``: the claim the PodGroup controls whose
        ``resource.kubernetes.io/pod-claim-name`` annotation is ``claim_name``."""
        uid = (group.get("metadata") or {}).get("uid")
        for e in self.server.store.list(CLAIMS, ns):
            cm = e.obj().get("metadata") or {}
            if (cm.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) != claim_name:
                continue
            if any(o.get("controller") and o.get("kind") == "PodGroup" and o.get("uid") == uid
                   for o in cm.get("ownerReferences") or ()):
                return str(cm.get("name"))
        return None

    @staticmethod
    def _shared(group: dict[str, Any] | None, rc: dict[str, Any]) -> bool:
        """``resourceclaim.BindTo`` names the PodGroup for the pod's entry ``rc``."""
        return group is not None and any(
            e.get("name") == rc.get("name") and e.get("resourceClaimName") == rc.get("resourceClaimName")
            and e.get("resourceClaimTemplateName") == rc.get("resourceClaimTemplateName")
            for e in (group.get("spec") or {}).get("resourceClaims") or ())

    def _sync_group(self, group: dict[str, Any]) -> None:
        store = self.server.store
        md = group.get("metadata") or {}
        ns, name = md.get("namespace", ""), md.get("name", "")
        if md.get("deletionTimestamp"):
            return
        if not self.workload_claims:
            self._sync_members(ns, name)  # pods that waited for their PodGroup
            return
        statuses = list((group.get("status") or {}).get("resourceClaimStatuses") or [])
        done = {s.get("name") for s in statuses}
        added = False
        for e in (group.get("spec") or {}).get("resourceClaims") or []:
            tname = e.get("resourceClaimTemplateName")
            if tname is None or e.get("name") in done:
                continue
            cname = self._group_claim(ns, group, e.get("name", ""))
            if cname is None:
                tpl = store.get(CLAIM_TEMPLATES, ns, tname)
                if tpl is None:
                    continue  # upstream: a FailedResourceClaimCreation event
                cname = self._claim_from_template(
                    ns, tpl.obj(), name, e.get("name", ""),
                    {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "name": name,
                     "uid": md.get("uid", ""), "controller": True})
            statuses.append({"name": e.get("name", ""), "resourceClaimName": cname})
            added = True
        if not added:
            self._sync_members(ns, name)
            return
        cur = store.get(POD_GROUPS, ns, name)
        if cur is None:
            return
        obj = cur.obj()
        if (obj.get("metadata") or {}).get("uid") != md.get("uid"):
            return
        obj.setdefault("status", {})["resourceClaimStatuses"] = statuses
        try:
            store.update(POD_GROUPS, ns, name, obj, expect_rv=cur.rv)
        except (Conflict, KeyNotFound):
            self._queue.put_nowait(("group", obj))
            return
        self._sync_members(ns, name)

    def _sync_members(self, ns: str, name: str) -> None:
        """Requeue the PodGroup's members with claims (they waited for it or its claims)."""
        for p in self.server.store.list("pods", ns):
            pod = p.obj()
            spec = pod.get("spec") or {}
            if (spec.get("schedulingGroup") or {}).get("podGroupName") == name and spec.get("resourceClaims"):
                self._queue.put_nowait(("sync", pod))

    def _release_group(self, group: dict[str, Any]) -> None:
        """Upstream ``syncClaim`` (``podgroups`` reservations of a gone PodGroup) and the garbage
        collector (claims the PodGroup owns)."""
        if not self.workload_claims:
            return
        store = self.server.store
        md = group.get("metadata") or {}
        ns, uid = md.get("namespace", ""), md.get("uid", "")
        for e in store.list(CLAIMS, ns):
            claim = e.obj()
            try:
                st = claim.get("status") or {}
                reserved = [r for r in st.get("reservedFor") or [] if r.get("uid") != uid]
                if len(reserved) != len(st.get("reservedFor") or []):
                    st["reservedFor"] = reserved
                    if not reserved:
                        st.pop("reservedFor", None)
                        st.pop("allocation", None)
                        claim["metadata"]["finalizers"] = [f for f in claim["metadata"].get("finalizers") or []
                                                           if f != "resource.kubernetes.io/delete-protection"]
                    claim["status"] = st
                    e = store.update(CLAIMS, ns, claim["metadata"]["name"], claim, expect_rv=e.rv)
                if any(o.get("controller") and o.get("uid") == uid
                       for o in (claim.get("metadata") or {}).get("ownerReferences") or ()):
                    store.delete(CLAIMS, ns, claim["metadata"]["name"], expect_rv=e.rv)
            except (Conflict, KeyNotFound):
                continue

    def _sync(self, pod: dict[str, Any]) -> None:
        store = self.server.store
        md = pod.get("metadata") or {}
        ns, name = md.get("namespace", ""), md.get("name", "")
        if md.get("deletionTimestamp"):
            return
        statuses = list((pod.get("status") or {}).get("resourceClaimStatuses") or [])
        done = {s.get("name") for s in statuses}
        added = False
        group: dict[str, Any] | None = None
        group_name = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        if self.generic_workload and group_name:
            # upstream syncPod: getPodGroup fails while the PodGroup is missing (nothing is created)
            ge = store.get(POD_GROUPS, ns, group_name)
            if ge is None:
                return
            group = ge.obj() if self.workload_claims else None
        for rc in (pod.get("spec") or {}).get("resourceClaims") or []:
            tname = rc.get("resourceClaimTemplateName")
            if tname is None or rc.get("name") in done:
                continue
            if group is not None and self._shared(group, rc):
                shared = self._group_claim(ns, group, rc.get("name", ""))
                if shared is not None:  # else: the PodGroup's claim comes first
                    statuses.append({"name": rc.get("name", ""), "resourceClaimName": shared})
                    added = True
                continue
            tpl = store.get(CLAIM_TEMPLATES, ns, tname)
            if tpl is None:
                continue  # upstream: an event; the pod waits
            cname = self._claim_from_template(
                ns, tpl.obj(), name, rc.get("name", ""),
                {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": md.get("uid", ""),
                 "controller": True, "blockOwnerDeletion": True})
            statuses.append({"name": rc.get("name", ""), "resourceClaimName": cname})
            added = True
        if not added:
            return
        cur = store.get("pods", ns, name)
        if cur is None:
            return
        obj = cur.obj()
        if (obj.get("metadata") or {}).get("uid") != md.get("uid"):
            return
        obj.setdefault("status", {})["resourceClaimStatuses"] = statuses
        track_write(self.server, "pods", cur.obj(), obj, CONTROLLER_MANAGER, "status")
        try:
            store.update("pods", ns, name, obj, expect_rv=cur.rv)
        except (Conflict, KeyNotFound):
            self._queue.put_nowait(("sync", obj))

    def _claim_from_template(self, ns: str, template: dict[str, Any], owner_name: str, entry: str,
                             owner_ref: dict[str, Any]) -> str:
        """Create the ResourceClaim of ``owner_name``'s claim entry ``entry`` from a
        ResourceClaimTemplate (resourceclaim controller ``handleClaim``: name
        ``<owner>-<entry>-<5 random>``, the template's labels and annotations plus the pod-claim-name
        annotation, ``owner_ref`` as controller); returns its name."""
        from kubesched.apiserver.registry import now_rfc3339

        store = self.server.store
        tspec = template.get("spec") or {}
        gen = claim_name_prefix(owner_name, entry)
        while True:
            cname = gen + "".join(random.choices(ALPHANUMS, k=5))
            if store.get(CLAIMS, ns, cname) is None:
                break
        tmeta = tspec.get("metadata") or {}
        meta: dict[str, Any] = {
            "name": cname, "generateName": gen, "namespace": ns, "uid": str(uuid.uuid4()),
            "creationTimestamp": now_rfc3339(), "generation": 1,
            "annotations": {**(tmeta.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: entry},
            "ownerReferences": [owner_ref]}
        if tmeta.get("labels"):
            meta["labels"] = dict(tmeta["labels"])
        store.create(CLAIMS, ns, cname, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                         "metadata": meta, "spec": tspec.get("spec") or {}})
        return cname

    def _release(self, pod: dict[str, Any]) -> None:
        store = self.server.store
        md = pod.get("metadata") or {}
        ns, uid = md.get("namespace", ""), md.get("uid", "")
        names = [s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []]
        names += [rc.get("resourceClaimName") for rc in (pod.get("spec") or {}).get("resourceClaims") or []]
        for cname in filter(None, names):
            e = store.get(CLAIMS, ns, cname)
            if e is None:
                continue
            claim = e.obj()
            owners = (claim.get("metadata") or {}).get("ownerReferences") or []
            try:
                if any(o.get("controller") and o.get("uid") == uid for o in owners):
                    if (claim.get("status") or {}).get("allocation") is not None:
                        claim["status"].pop("reservedFor", None)  # deallocate first: an update event
                        claim["status"].pop("allocation", None)
                        e = store.update(CLAIMS, ns, cname, claim, expect_rv=e.rv)
                    store.delete(CLAIMS, ns, cname, expect_rv=e.rv)
                    continue
                st = claim.get("status") or {}
                reserved = [r for r in st.get("reservedFor") or [] if r.get("uid") != uid]
                if len(reserved) == len(st.get("reservedFor") or []):
                    continue
                st["reservedFor"] = reserved
                if not reserved:
                    st.pop("reservedFor", None)
                    st.pop("allocation", None)
                    fins = [f for f in (claim["metadata"].get("finalizers") or [])
                            if f != "resource.kubernetes.io/delete-protection"]
                    claim["metadata"]["finalizers"] = fins
                claim["status"] = st
                store.update(CLAIMS, ns, cname, claim, expect_rv=e.rv)
            except (Conflict, KeyNotFound):
                continue


class ServiceAccountController(DebouncedController):
    """kube-controller-manager's serviceaccount controller (``pkg/controller/serviceaccount/
    serviceaccounts_controller.go``): every active namespace has a ``default`` ServiceAccount,
    created when missing (also after it is deleted), through the server's create path."""

    spaces = ("namespaces", "serviceaccounts")

    def __init__(self, server: Registry, period: float = 0.05) -> None:
        super().__init__(server, period)

    async def _pass(self) -> None:
        from kubesched.apiserver.errors import APIError

        store = self.server.store
        for e in store.list("namespaces"):
            ns = e.obj()
            meta = ns.get("metadata") or {}
            name = meta.get("name") or ""
            if meta.get("deletionTimestamp") or (ns.get("status") or {}).get("phase") == "Terminating":
                continue
            if store.get("serviceaccounts", name, "default") is not None:
                continue
            try:
                self.server.create_manifest({"apiVersion": "v1", "kind": "ServiceAccount",
                                             "metadata": {"name": "default", "namespace": name}})
            except APIError as err:  # created meanwhile, or the namespace went away
                log.debug("serviceaccount controller: %s: %s", name, err)
