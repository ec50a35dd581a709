"""The box's garbage collector, pod GC and node-deletion cleanup (with ``--simulate-kubelets``).

**Deletion propagation at the API** (:func:`~kubesched.apiserver.registry.deletion_finalizers`,
called by the registry's DELETE; re-exported here): as ``k8s.io/apiserver/pkg/registry/generic/registry/store.go``
``deletionFinalizersForGarbageCollection`` — ``propagationPolicy: Orphan`` (or the deprecated
``orphanDependents: true``) adds the ``orphan`` finalizer, ``Foreground`` adds
``foregroundDeletion``, ``Background`` neither; without a policy, a finalizer already on the
object decides, then the kind's default (``DefaultGarbageCollectionPolicy``: Orphan for
``batch/v1`` Jobs and ``v1`` ReplicationControllers, Background for everything else).

**Garbage collector** (:class:`GarbageCollector`, ``pkg/controller/garbagecollector/
garbagecollector.go`` ``attemptToDeleteItem`` / ``processDeletingDependentsItem`` /
``orphanDependents``), driven by the store's events:

- when an owner is deleted, each object naming it (``metadata.ownerReferences``) whose owners
  are then all gone — absent, or present with another uid — is deleted (Background, unless its
  own finalizers ask otherwise); one with some owners left loses the references to the gone
  ones; an owner whose kind the box does not serve counts as present (upstream cannot resolve it
  either and leaves the dependent); an object created naming an owner deleted earlier goes too;
- unlike upstream, an object created with references to owners the box never had (a cluster
  dump loaded with ``up -f``: pods of ReplicaSets and DaemonSets left out) is kept — upstream's
  collector would delete it at once;
- an owner being deleted with ``orphan``: its dependents lose their references to it, then the
  finalizer goes (and with the last finalizer, the object);
- an owner being deleted with ``foregroundDeletion``: its dependents are deleted (Foreground when
  their reference has ``blockOwnerDeletion``), and the finalizer goes once no dependent with
  ``blockOwnerDeletion: true`` is left.

**Pod GC** (:class:`PodGC`, ``pkg/controller/podgc/gc_controller.go``): when a Node is deleted,
its pods are marked ``Failed`` with a ``DisruptionTarget`` condition (reason
``DeletionByPodGC``) and force-deleted (``gcOrphaned``; upstream waits out a 40 s quarantine and
re-checks the node first: the box acts at once); terminated pods (Succeeded/Failed) beyond
``terminated_threshold`` (kube-controller-manager ``--terminated-pod-gc-threshold``, 12,500) are
deleted oldest first (``gcTerminated``). Not modelled: ``gcTerminating`` (out-of-service nodes)
and pods bound to a node that never existed.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

import orjson

from kubesched.apiserver import resources as res
from kubesched.apiserver.controllers import DebouncedController
from kubesched.apiserver.managers import CONTROLLER_MANAGER, track_write
from kubesched.apiserver.registry import FOREGROUND, ORPHAN, deletion_finalizers, now_rfc3339
from kubesched.apiserver.storage import Conflict, Event, KeyNotFound

if TYPE_CHECKING:
    from kubesched.apiserver.registry import Registry
    from kubesched.apiserver.resources import ResourceInfo

__all__ = ["FOREGROUND", "ORPHAN", "GarbageCollector", "PodGC", "attach_gc", "deletion_finalizers"]

log = logging.getLogger("kubesched.apiserver.gc")

_OWNER_REFS = re.compile(rb'"ownerReferences":\[(.*?)\]')
_UID = re.compile(rb'"uid":"([^"]+)"')


def _owner_uids(data: bytes) -> list[bytes]:
    """The uids an object's serialized ``ownerReferences`` name (a regex, no JSON parse)."""
    m = _OWNER_REFS.search(data)
    return _UID.findall(m.group(1)) if m else []


def _info_for(api_version: str, kind: str) -> ResourceInfo | None:
    """The served resource of an ownerReference's ``apiVersion``/``kind`` (any version of its group)."""
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    for r in res.RESOURCES:
        if r.group == group and r.kind == kind and r.plural != "bindings" and r.group != "events.k8s.io":
            return r
    return None


class GarbageCollector(DebouncedController):
    """Deletes dependents of gone owners and finishes ``orphan``/``foregroundDeletion`` deletions.

    ``owners`` is the set of uids some object's ownerReferences name (kept from the events with a
    regex, so a deletion of an object nothing depends on costs no scan); ``deleted`` counts the
    dependents it deleted, ``orphaned`` the references it removed."""

    def __init__(self, server: Registry, period: float = 0.02) -> None:
        super().__init__(server, period)
        self.spaces = tuple(sorted({r.key for r in res.RESOURCES if r.group != "events.k8s.io"
                                    and r.kind not in res.REVIEW_KINDS and r.plural != "bindings"}))
        self.owners: set[bytes] = set()
        self._gone: set[str] = set()
        self._finalize: set[tuple[str, str, str]] = set()
        self._check: set[tuple[str, str, str]] = set()
        self._dead: set[bytes] = set()
        """uids of deleted objects that own or may own something (not every deleted pod's)."""
        self.deleted = 0
        self.orphaned = 0

    # ---- events
    def _prime(self) -> None:
        store = self.server.store
        for space in self.spaces:
            for e in store.list(space):
                md = e.obj()["metadata"]
                self._note(space, md.get("namespace") or "", md["name"], e.data, "PRIMED")

    def _note(self, space: str, ns: str, name: str, data: bytes, typ: str) -> None:
        if b'"ownerReferences"' in data:
            uids = _owner_uids(data)
            self.owners.update(uids)
            if typ == "ADDED" and self._dead.intersection(uids):  # created for an owner already gone
                self._check.add((space, ns, name))
        if b'"deletionTimestamp"' in data and (b'"orphan"' in data or b'"foregroundDeletion"' in data):
            md = orjson.loads(data)["metadata"]
            if {ORPHAN, FOREGROUND} & set(md.get("finalizers") or ()):
                self._finalize.add((space, ns, name))

    def _on_event(self, ev: Event) -> None:
        data = ev.entry.data
        if ev.type == "DELETED":
            obj = orjson.loads(data)
            md = obj.get("metadata") or {}
            uid = md.get("uid") or ""
            if uid.encode() in self.owners:
                self._gone.add(uid)
            if ev.space != "pods" or uid.encode() in self.owners:
                self._dead.add(uid.encode())
            for ref in md.get("ownerReferences") or ():  # a foreground owner may be waiting for it
                if ref.get("blockOwnerDeletion") and (info := _info_for(ref.get("apiVersion", ""),
                                                                       ref.get("kind", ""))) is not None:
                    self._finalize.add((info.key, ev.ns if info.namespaced else "", ref.get("name", "")))
        else:
            self._note(ev.space, ev.ns, ev.name, data, ev.type)
        if self._gone or self._finalize or self._check:
            self._wake.set()

    # ---- the pass
    async def _pass(self) -> None:
        try:
            self.sync_once()
        except Exception:  # keep the collector alive
            log.exception("garbage collector: pass failed")

    def sync_once(self) -> None:
        gone, self._gone = self._gone, set()
        finalize, self._finalize = self._finalize, set()
        check, self._check = self._check, set()
        if gone:
            for space, ns, name, _ in self._dependents(gone):
                check.add((space, ns, name))
        for space, ns, name in sorted(finalize):
            self._finish(space, ns, name)
        for space, ns, name in sorted(check):
            e = self.server.store.get(space, ns, name)
            if e is not None:
                self._attempt_to_delete(space, e.obj())

    def _dependents(self, uids: set[str]) -> list[tuple[str, str, str, dict[str, Any]]]:
        """``(space, namespace, name, ownerReference)`` of every object naming one of ``uids``."""
        want = {u.encode() for u in uids}
        out = []
        store = self.server.store
        for space in self.spaces:
            for e in store.list(space):
                if b'"ownerReferences"' not in e.data or not want.intersection(_owner_uids(e.data)):
                    continue
                md = e.obj()["metadata"]
                for ref in md.get("ownerReferences") or ():
                    if str(ref.get("uid", "")).encode() in want:
                        out.append((space, md.get("namespace") or "", md["name"], ref))
        return out

    def _owner_state(self, ref: dict[str, Any], ns: str) -> str:
        """``"solid"``, ``"dangling"`` or ``"waiting"`` (being deleted in the foreground)."""
        info = _info_for(str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
        if info is None:
            return "solid"  # not resolvable: left alone
        e = self.server.store.get(info.key, ns if info.namespaced else "", str(ref.get("name") or ""))
        if e is None:
            return "dangling"
        md = e.obj()["metadata"]
        if md.get("uid") != ref.get("uid"):
            return "dangling"
        if md.get("deletionTimestamp") and FOREGROUND in (md.get("finalizers") or ()):
            return "waiting"
        return "solid"

    def _attempt_to_delete(self, space: str, obj: dict[str, Any]) -> None:
        """``attemptToDeleteItem`` for one dependent."""
        md = obj["metadata"]
        refs = md.get("ownerReferences") or []
        if not refs or md.get("deletionTimestamp"):
            return
        ns = md.get("namespace") or ""
        states = [self._owner_state(r, ns) for r in refs]
        if "solid" in states:
            if "dangling" not in states and "waiting" not in states:
                return
            # keep the solid owners: drop dangling references, unblock waiting owners
            new_refs = []
            for r, s in zip(refs, states, strict=True):
                if s == "dangling":
                    self.orphaned += 1
                    continue
                if s == "waiting" and r.get("blockOwnerDeletion"):
                    r = {**r, "blockOwnerDeletion": False}
                new_refs.append(r)
            self._update(space, obj, lambda m: m.__setitem__("ownerReferences", new_refs))
            return
        fins = md.get("finalizers") or ()
        if ORPHAN in fins:
            policy = "Orphan"
        elif FOREGROUND in fins or any(s == "waiting" and r.get("blockOwnerDeletion")
                                       for r, s in zip(refs, states, strict=True)):
            policy = "Foreground"
        else:
            policy = "Background"
        self._delete(space, ns, md["name"], md.get("uid", ""), policy)

    def _finish(self, space: str, ns: str, name: str) -> None:
        """An owner being deleted with the ``orphan`` or ``foregroundDeletion`` finalizer."""
        e = self.server.store.get(space, ns, name)
        if e is None:
            return
        obj = e.obj()
        md = obj["metadata"]
        fins = md.get("finalizers") or []
        uid = md.get("uid", "")
        if not md.get("deletionTimestamp"):
            return
        if ORPHAN in fins:
            for dspace, dns, dname, _ in self._dependents({uid}):
                de = self.server.store.get(dspace, dns, dname)
                if de is None:
                    continue
                dep = de.obj()
                left = [r for r in dep["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
                self.orphaned += 1
                self._update(dspace, dep, lambda m, left=left: m.__setitem__("ownerReferences", left)
                             if left else m.pop("ownerReferences", None))
            self._update(space, obj, lambda m: m.__setitem__("finalizers", [f for f in fins if f != ORPHAN]))
            return
        if FOREGROUND not in fins:
            return
        blocking = False
        for dspace, dns, dname, ref in self._dependents({uid}):
            de = self.server.store.get(dspace, dns, dname)
            if de is None:
                continue
            dep = de.obj()
            if ref.get("blockOwnerDeletion"):
                blocking = True
            if not dep["metadata"].get("deletionTimestamp"):
                self._delete(dspace, dns, dname, dep["metadata"].get("uid", ""),
                             "Foreground" if ref.get("blockOwnerDeletion") else "Background")
        if not blocking:
            self._update(space, obj, lambda m: m.__setitem__("finalizers", [f for f in fins if f != FOREGROUND]))

    # ---- writes (through the server's update/delete paths, as the collector's requests)
    def _info(self, space: str) -> ResourceInfo | None:
        return next((r for r in res.RESOURCES if r.key == space and r.group != "events.k8s.io"), None)

    def _update(self, space: str, obj: dict[str, Any], change: Any) -> None:
        from kubesched.apiserver.errors import APIError

        info = self._info(space)
        md = obj["metadata"]
        ns, name = md.get("namespace") or "", md["name"]
        e = self.server.store.get(space, ns, name)
        if info is None or e is None:
            return
        new = e.obj()
        if new["metadata"].get("uid") != md.get("uid"):
            return
        change(new["metadata"])
        try:
            self.server.commit_update(info, ns, name, new, e, "", None, manager=CONTROLLER_MANAGER)
        except (APIError, Conflict, KeyNotFound) as err:
            log.debug("garbage collector: update %s %s/%s: %s", space, ns, name, err)
            self._check.add((space, ns, name)) if not md.get("deletionTimestamp") else \
                self._finalize.add((space, ns, name))
            self._wake.set()

    def _delete(self, space: str, ns: str, name: str, uid: str, policy: str) -> None:
        from kubesched.apiserver.errors import APIError

        info = self._info(space)
        if info is None:
            return
        try:
            self.server.delete_object(info, ns, name, {"propagationPolicy": policy, "preconditions": {"uid": uid}})
            self.deleted += 1
        except APIError as err:
            log.debug("garbage collector: delete %s %s/%s: %s", space, ns, name, err)


class PodGC(DebouncedController):
    """Pod GC: pods of deleted nodes, and terminated pods over ``terminated_threshold``."""

    spaces = ("nodes", "pods")

    def __init__(self, server: Registry, period: float = 0.02, terminated_threshold: int = 12500) -> None:
        super().__init__(server, period)
        self.terminated_threshold = terminated_threshold
        self._gone_nodes: set[str] = set()
        self._terminated = False
        self.deleted = 0

    def _on_event(self, ev: Event) -> None:
        if ev.space == "nodes":
            if ev.type == "DELETED":
                self._gone_nodes.add(ev.name)
                self._wake.set()
        elif ev.type != "DELETED" and (b'"phase":"Succeeded"' in ev.entry.data or b'"phase":"Failed"' in ev.entry.data):
            self._terminated = True
            self._wake.set()

    async def _pass(self) -> None:
        try:
            self.sync_once()
        except Exception:  # keep it alive
            log.exception("pod GC: pass failed")

    def sync_once(self) -> None:

        store = self.server.store
        gone, self._gone_nodes = self._gone_nodes, set()
        info = res.find("", "v1", "pods")
        assert info is not None
        gone = {n for n in gone if store.get("nodes", "", n) is None}
        if gone:
            for e in store.list("pods"):
                if e.fields.get("spec.nodeName") not in gone:
                    continue
                pod = e.obj()
                md, st = pod["metadata"], pod.setdefault("status", {})
                ns, name = md.get("namespace") or "", md["name"]
                if st.get("phase") not in ("Succeeded", "Failed"):  # markFailedAndDeletePodWithCondition
                    now = now_rfc3339()
                    st["phase"] = "Failed"
                    conds = [c for c in st.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
                    conds.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                                  "lastTransitionTime": now, "reason": "DeletionByPodGC",
                                  "message": "PodGC: node no longer exists"})
                    st["conditions"] = conds
                    track_write(self.server, "pods", e.obj(), pod, CONTROLLER_MANAGER, "status")
                    try:
                        e = store.update("pods", ns, name, pod, expect_rv=e.rv)
                    except (Conflict, KeyNotFound):
                        self._gone_nodes.update(gone)
                        self._wake.set()
                        continue
                self._force_delete(info, ns, name, md.get("uid", ""))
        if self._terminated:
            self._terminated = False
            terminated = [e for e in store.list("pods")
                          if b'"phase":"Succeeded"' in e.data or b'"phase":"Failed"' in e.data]
            excess = len(terminated) - self.terminated_threshold
            if excess > 0:
                objs = [e.obj() for e in terminated]
                objs = [o for o in objs if (o.get("status") or {}).get("phase") in ("Succeeded", "Failed")]
                objs.sort(key=lambda o: (o["metadata"].get("creationTimestamp") or "", o["metadata"]["name"]))
                for o in objs[:excess]:
                    md = o["metadata"]
                    self._force_delete(info, md.get("namespace") or "", md["name"], md.get("uid", ""))

    def _force_delete(self, info: ResourceInfo, ns: str, name: str, uid: str) -> None:
        from kubesched.apiserver.errors import APIError

        try:
            self.server.delete_object(info, ns, name, {"gracePeriodSeconds": 0, "preconditions": {"uid": uid}})
            self.deleted += 1
        except APIError as err:
            log.debug("pod GC: delete %s/%s: %s", ns, name, err)


def attach_gc(server: Registry, terminated_threshold: int = 12500) -> None:
    """Run the garbage collector and pod GC with ``server`` (started with it)."""

    async def start(srv: Registry) -> None:
        gc = GarbageCollector(srv)
        srv.garbage_collector = gc  # type: ignore[attr-defined]
        await gc.start()
        pgc = PodGC(srv, terminated_threshold=terminated_threshold)
        srv.pod_gc = pgc  # type: ignore[attr-defined]
        await pgc.start()

    server.on_started.append(start)
