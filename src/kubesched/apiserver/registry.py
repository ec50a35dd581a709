"""The generic registry store of the box: create, update, delete with graceful deletion and
finalizers, per-kind strategies, admission, CRDs, namespaces — everything a write does below HTTP.

Follows ``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go`` (Create,
Update, Delete, ``deletionFinalizersForGarbageCollection``, graceful deletion) and the kinds'
``strategy.go`` (``PrepareForCreate``: pods, namespaces, workloads, PVs/PVCs, CRDs). Controllers
(:mod:`kubesched.apiserver.controllers`, :mod:`~kubesched.apiserver.gc`,
:mod:`~kubesched.apiserver.workloadcontrollers`, :mod:`~kubesched.apiserver.kubelet`) write
through a :class:`Registry` (the server is one), never through HTTP: ``create_manifest``,
``create_object``, ``commit_update``, ``delete_object``, ``write_fault``, ``spawn``.
Errors are :class:`~kubesched.apiserver.errors.APIError` (an upstream ``Status``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import orjson

from kubesched.api import podgroups, schemas
from kubesched.api.hashing import ALPHANUMS
from kubesched.apiserver import admission as admission_plugins
from kubesched.apiserver import apply as ssa
from kubesched.apiserver import crd as crdmod
from kubesched.apiserver import rbac
from kubesched.apiserver import resources as res
from kubesched.apiserver.errors import APIError
from kubesched.apiserver.eventsconv import core_to_events, events_to_core
from kubesched.apiserver.faults import Faults
from kubesched.apiserver.metatime import now_rfc3339, parse_time
from kubesched.apiserver.resources import ResourceInfo
from kubesched.apiserver.storage import Conflict, Entry, KeyExists, KeyNotFound, Store
from kubesched.features import FeatureGate, default_feature_gate

__all__ = ["FOREGROUND", "ORPHAN", "SYSTEM_NAMESPACES", "Registry", "by_plural", "deletion_finalizers",
           "info_for_object", "namespace_terminating", "now_rfc3339", "parse_time"]

log = logging.getLogger("kubesched.apiserver")

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
#: ``cacher.DefaultEventFreshDuration`` (bookmark frequency 1 min + 15 s): how long watch events stay in memory
WATCH_HISTORY_SECONDS = 75.0
_UNDELETABLE_NAMESPACES = ("default", "kube-system", "kube-public")


def namespace_terminating(data: bytes) -> bool:
    """Whether the stored Namespace ``data`` is in phase ``Terminating`` (upstream's NamespaceLifecycle
    admission refuses new content then). Decoded only when the bytes hold ``"Terminating"``: a
    create in an active namespace reads no JSON."""
    if b'"Terminating"' not in data:
        return False
    return bool((orjson.loads(data).get("status") or {}).get("phase") == "Terminating")


def _rand_suffix(n: int = 5) -> str:
    # upstream utilrand.String: consonants and digits without vowels/ambiguous characters
    return "".join(random.choice(ALPHANUMS) for _ in range(n))


#: random bytes for uids, read from the OS 4 KiB at a time (a uuid4 each read 16 bytes with a syscall)
_uid_pool: list[Any] = [b"", 0]


def new_uid() -> str:
    """A random (version 4) UUID as text, as ``uuid.uuid4()`` from the same OS randomness, in a
    third of its time (every create stamps one)."""
    pool, i = _uid_pool
    if i + 16 > len(pool):
        pool, i = _uid_pool[0], _uid_pool[1] = os.urandom(4096), 0
    _uid_pool[1] = i + 16
    b = bytearray(pool[i:i + 16])
    b[6] = (b[6] & 0x0F) | 0x40  # version 4
    b[8] = (b[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _generate_job_selector(job: dict[str, Any]) -> None:
    """The Job strategy's ``generateSelectorIfNeeded`` (pkg/registry/batch/job/strategy.go:200):
    unless ``spec.manualSelector``, the template gets the ``job-name`` / ``controller-uid`` labels
    (legacy and ``batch.kubernetes.io/`` keys, user values kept) and the selector matches the uid."""
    spec = job.get("spec")
    if not isinstance(spec, dict) or spec.get("manualSelector") is True:
        return
    md = job.get("metadata") or {}
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    tmeta = template.setdefault("metadata", {})
    if not isinstance(tmeta, dict):
        return
    labels = tmeta.get("labels")
    if not isinstance(labels, dict):
        labels = tmeta["labels"] = {}
    for key in ("job-name", "batch.kubernetes.io/job-name"):
        labels.setdefault(key, md.get("name") or "")
    for key in ("controller-uid", "batch.kubernetes.io/controller-uid"):
        labels.setdefault(key, md.get("uid") or "")
    sel = spec.get("selector")
    if not isinstance(sel, dict):
        sel = spec["selector"] = {}
    ml = sel.get("matchLabels")
    if not isinstance(ml, dict):
        ml = sel["matchLabels"] = {}
    ml.setdefault("batch.kubernetes.io/controller-uid", md.get("uid") or "")


def info_for_object(obj: dict[str, Any]) -> ResourceInfo:
    """The served resource for an object's ``apiVersion`` and ``kind``; raises :class:`APIError`
    (404, as the API server's "no matches for kind") when the box does not serve it."""
    av, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    group, _, version = av.rpartition("/")
    for r in res.RESOURCES:
        if r.group == group and r.version == version and r.kind == kind and r.plural != "bindings":
            return r
    raise APIError.method_status(404, "NotFound", f'no matches for kind "{kind}" in version "{av}"')


def _trim_heap() -> None:
    """Return freed heap to the OS (glibc ``malloc_trim``): request bursts otherwise leave RSS high."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def by_plural(plural: str) -> ResourceInfo | None:
    """The first served resource named ``plural`` (events: the core one), or None."""
    return _BY_PLURAL.get(plural)


_BY_PLURAL: dict[str, ResourceInfo] = {}
for _r in res.RESOURCES:
    if _r.group != "events.k8s.io":
        _BY_PLURAL.setdefault(_r.plural, _r)


@lru_cache(maxsize=len(schemas.SUPPORTED_VERSIONS))
def _builtin_resolver(api: schemas.Version) -> ssa.CachedResolver:
    """The ``$ref`` resolver of the built-in kinds' definitions of the API release ``api``, one per
    release so its lookups are remembered across requests."""
    return ssa.CachedResolver(lambda s: schemas.resolve(s, api))


def _qos_class(spec: dict[str, Any]) -> str:
    """Upstream ``qos.GetPodQOS`` (simplified to cpu/memory requests and limits)."""
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    any_set = False
    guaranteed = True
    for c in containers:
        r = c.get("resources") or {}
        req, lim = r.get("requests") or {}, r.get("limits") or {}
        for k in ("cpu", "memory"):
            if k in req or k in lim:
                any_set = True
            if k not in lim or (k in req and req[k] != lim[k]):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


#: ``metav1.FinalizerOrphanDependents``
ORPHAN = "orphan"
#: ``metav1.FinalizerDeleteDependents``
FOREGROUND = "foregroundDeletion"

#: kinds whose ``DefaultGarbageCollectionPolicy`` is OrphanDependents (for that group/version)
_ORPHAN_BY_DEFAULT = {("batch", "Job"), ("", "ReplicationController")}
#: kinds whose strategy answers ``rest.Unsupported`` (no GC finalizers ever)
_GC_UNSUPPORTED = {("", "Event"), ("events.k8s.io", "Event")}


def deletion_finalizers(info: ResourceInfo, obj: dict[str, Any], opts: dict[str, Any]) -> list[str] | None:
    """The object's finalizers after a DELETE with ``opts`` (DeleteOptions as a mapping), or None
    when they do not change (``deletionFinalizersForGarbageCollection``)."""
    if (info.group, info.kind) in _GC_UNSUPPORTED or info.kind == "Namespace":
        return None
    fins = list((obj.get("metadata") or {}).get("finalizers") or [])
    policy = opts.get("propagationPolicy")
    orphan_opt = opts.get("orphanDependents")
    if orphan_opt is not None:
        orphan, foreground = bool(orphan_opt), False
    elif policy in ("Orphan", "Background", "Foreground"):
        orphan, foreground = policy == "Orphan", policy == "Foreground"
    elif ORPHAN in fins or FOREGROUND in fins:
        orphan, foreground = ORPHAN in fins, FOREGROUND in fins and ORPHAN not in fins
    else:
        orphan, foreground = (info.group, info.kind) in _ORPHAN_BY_DEFAULT, False
    new = [f for f in fins if f not in (ORPHAN, FOREGROUND)]
    if orphan:
        new.append(ORPHAN)
    if foreground:
        new.append(FOREGROUND)
    return None if set(new) == set(fins) else new


class Registry:
    """The objects of the box and every write to them, below HTTP (upstream's generic registry
    ``Store`` with the kinds' strategies, one for all resources).

    ``store``: the revision log (:class:`~kubesched.apiserver.storage.Store`). ``faults``: fault
    injection (:meth:`write_fault`). ``compaction_window``: how many recent revisions the periodic
    compactor keeps (every ``compaction_interval`` s). ``admission``: run the admission plugins
    (:mod:`kubesched.apiserver.admission`). ``event_ttl``: seconds after which Events are removed
    (kube-apiserver ``--event-ttl``, 1 h). ``features``: ``--emulated-version`` and
    ``--feature-gates`` (None: v1.37 defaults) — which release's schemas decode, which gated fields
    are dropped or merged on write. ``on_started``: callables run with the server once it serves
    (controllers attach there: post-start hooks). Methods that write run on the server's loop.
    """

    def __init__(self, store: Store, *, faults: Faults | None = None, compaction_window: int = 10000,
                 compaction_interval: float = 60.0, admission: bool = True, event_ttl: float = 3600.0,
                 features: FeatureGate | None = None) -> None:
        self.store = store
        self.features = features if features is not None else default_feature_gate()
        #: the API release served: ``(major, minor)`` of the emulated version
        self.api_version = self.features.emulated_version
        self.faults = faults or Faults()
        self.compaction_window = compaction_window
        self.compaction_interval = compaction_interval
        self.use_admission = admission
        self.event_ttl = event_ttl
        #: seconds of events the watch ring keeps in memory beyond which, at each compactor tick,
        #: they are read back from SQLite (the watch cache's ``eventFreshDuration``, 75 s)
        self.watch_history_seconds = WATCH_HISTORY_SECONDS
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopping = False
        self.loop: asyncio.AbstractEventLoop | None = None
        self.on_started: list[Callable[[Any], Any]] = []
        #: decoded PriorityClasses as of a revision of their space (every pod create reads them all)
        self._priority_classes: tuple[int, list[dict[str, Any]]] = (-1, [])
        #: a built-in kind's apply schema and resolver by (info, API release): one lookup per kind
        self._ssa_schemas: dict[tuple[ResourceInfo, Any], tuple[Any, Callable[[Any], Any]]] = {}
        #: the custom resources the Established CRDs define (kubesched.apiserver.crd)
        self.crds = crdmod.Registry()
        self._bootstrap()
        self._rebuild_crds()

    async def _stop_background(self) -> None:
        """Stop graceful-deletion timers and cancel (then await) the background tasks."""
        for h in self._timers.values():
            h.cancel()
        self._timers.clear()
        for t in list(self._tasks):
            t.cancel()
        for t in list(self._tasks):
            try:
                await t
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - shutting down
                pass

    def _bootstrap(self) -> None:
        """System namespaces and PriorityClasses, as kube-apiserver creates them at start
        (``pkg/controlplane/controller/systemnamespaces``, ``pkg/registry/scheduling/rest``)."""
        ns_info = res.find("", "v1", "namespaces")
        pc_info = res.find("scheduling.k8s.io", "v1", "priorityclasses")
        assert ns_info is not None and pc_info is not None
        for ns in SYSTEM_NAMESPACES:
            if self.store.get(ns_info.key, "", ns) is None:
                obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                self._fill_create(ns_info, obj, "")
                self._prepare_create(ns_info, obj)
                self.store.create(ns_info.key, "", ns, obj)
        for robj in rbac.bootstrap_objects():  # the RBAC bootstrap policy (storage_rbac.go PostStartHook)
            ri = info_for_object(robj)
            rns: str = robj["metadata"].get("namespace", "") if ri.namespaced else ""
            if self.store.get(ri.key, rns, robj["metadata"]["name"]) is None:
                self._fill_create(ri, robj, rns)
                self.store.create(ri.key, rns, robj["metadata"]["name"], robj)
        for name, pc in admission_plugins.SYSTEM_PRIORITY_CLASSES.items():
            if self.store.get(pc_info.key, "", name) is None:
                obj = {**pc, "metadata": dict(pc["metadata"])}
                self._fill_create(pc_info, obj, "")
                self.store.create(pc_info.key, "", name, obj)

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        """Run a background task owned by the server (cancelled at :meth:`stop`)."""
        return self._spawn(coro)

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        t = asyncio.ensure_future(coro)
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)
        return t

    async def _compactor(self) -> None:
        while True:
            await asyncio.sleep(self.compaction_interval)
            try:
                self.expire_events()
                self.store.compact_window(self.compaction_window)
                self.store.expire_ring(self.watch_history_seconds)
            except Exception:  # pragma: no cover - logged, retried next tick
                log.exception("compaction failed")
            _trim_heap()

    def expire_events(self, now: datetime | None = None) -> int:
        """Delete Events last seen more than ``event_ttl`` ago (upstream stores them with an etcd
        lease of ``--event-ttl``); returns how many."""
        now = now or datetime.now(UTC)
        info = res.find("", "v1", "events")
        assert info is not None
        n = 0
        for e in self.store.list(info.key):
            ev = e.obj()
            series = ev.get("series") or {}
            seen = (series.get("lastObservedTime") or ev.get("lastTimestamp") or ev.get("eventTime")
                    or ev["metadata"].get("creationTimestamp") or "")
            t = parse_time(seen)
            if t is not None and (now - t).total_seconds() > self.event_ttl:
                md = ev["metadata"]
                try:
                    self.store.delete(info.key, md.get("namespace", ""), md["name"], expect_rv=e.rv)
                    n += 1
                except (KeyNotFound, Conflict):
                    pass
        return n

    def compact_now(self) -> int:
        """Compact to the current revision (fault injection / tests)."""
        return self.store.compact()

    def _find_info(self, group: str, version: str, plural: str) -> ResourceInfo | None:
        """The built-in resource, else the custom resource served at ``group/version/plural``."""
        info = res.find(group, version, plural)
        if info is None:
            cr = self.crds.find(group, version, plural)
            info = cr.info if cr is not None else None
        return info

    def _all_infos(self) -> list[ResourceInfo]:
        return [*res.RESOURCES, *self.crds.infos()]

    def _groups(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*res.GROUPS, *(r.group for r in self.crds.infos())]))

    def _rebuild_crds(self) -> None:
        """Serve what the stored, Established CRDs define (after every CRD write, and at start)."""
        self.crds.rebuild(e.obj() for e in self.store.list(f"{crdmod.CRD_GROUP}/customresourcedefinitions"))

    def _crd_established(self, entry: Entry) -> Entry:
        """The naming and establishing controllers, at once: write the CRD's status if it changed."""
        obj = entry.obj()
        key = f"{crdmod.CRD_GROUP}/customresourcedefinitions"
        others = [e.obj() for e in self.store.list(key)]
        status = crdmod.crd_status(obj, others, now_rfc3339())
        if status != obj.get("status"):
            obj["status"] = status
            try:
                entry = self.store.update(key, "", obj["metadata"]["name"], obj, expect_rv=entry.rv)
            except (Conflict, KeyNotFound):
                pass
        self._rebuild_crds()
        return entry

    def _delete_crd(self, info: ResourceInfo, name: str, entry: Entry) -> Entry:
        """A CRD goes Terminating with the cleanup finalizer; its objects are deleted, then it is
        (``customresourcedefinition/etcd.go`` Delete + ``pkg/controller/finalizer``)."""
        obj = entry.obj()
        md = obj["metadata"]
        if md.get("deletionTimestamp"):
            return entry
        md["deletionTimestamp"] = now_rfc3339()
        md["deletionGracePeriodSeconds"] = 0
        md["finalizers"] = [*(md.get("finalizers") or []), crdmod.CRD_FINALIZER] \
            if crdmod.CRD_FINALIZER not in (md.get("finalizers") or []) else md["finalizers"]
        conds = [c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") != "Terminating"]
        conds.append({"type": "Terminating", "status": "True", "lastTransitionTime": now_rfc3339(),
                      "reason": "InstanceDeletionInProgress", "message": "CustomResource deletion is in progress"})
        obj.setdefault("status", {})["conditions"] = conds
        e = self.store.update(info.key, "", name, obj, expect_rv=entry.rv)
        loop = self.loop or asyncio.get_event_loop()
        loop.call_soon(self._finalize_crd, name)
        return e

    def _finalize_crd(self, name: str) -> None:
        """Delete every object of a Terminating CRD, then drop the finalizer (the CRD goes)."""
        key = f"{crdmod.CRD_GROUP}/customresourcedefinitions"
        entry = self.store.get(key, "", name)
        if entry is None:
            return
        obj = entry.obj()
        spec = obj.get("spec") or {}
        space = f"{spec.get('group')}/{(spec.get('names') or {}).get('plural')}"
        for e in self.store.list(space):
            md = e.obj()["metadata"]
            try:
                self.store.delete(space, md.get("namespace", ""), md["name"], expect_rv=e.rv)
            except (KeyNotFound, Conflict):
                pass
        md = obj["metadata"]
        md["finalizers"] = [f for f in md.get("finalizers") or [] if f != crdmod.CRD_FINALIZER]
        try:
            if md["finalizers"]:
                self.store.update(key, "", name, obj, expect_rv=entry.rv)
            else:
                self.store.delete(key, "", name, expect_rv=entry.rv)
        except (KeyNotFound, Conflict):
            pass
        self._rebuild_crds()

    def _admit_custom(self, cr: crdmod.CustomResource, obj: dict[str, Any], old: dict[str, Any] | None,
                      sub: str) -> dict[str, Any]:
        out, _unknown, errs = crdmod.admit_custom_resource(cr, obj, old, sub)
        if errs:
            name = str((out.get("metadata") or {}).get("name") or "")
            raise APIError(crdmod.invalid_status(cr.info.kind, cr.info.group, name, errs))
        return out

    def _priority_class_list(self, space: str) -> list[dict[str, Any]]:
        """All PriorityClasses decoded, kept until the next write to ``space``; callers only read them."""
        rev = self.store.space_rev(space)
        if self._priority_classes[0] != rev:
            self._priority_classes = (rev, [e.obj() for e in self.store.list(space)])
        return self._priority_classes[1]

    def served(self, info: ResourceInfo) -> bool:
        """Whether this server serves ``info`` at its emulated version and gates: the workload API
        (``scheduling.k8s.io/v1beta1``, ``v1alpha3``) only with its gates
        (:func:`kubesched.api.podgroups.served_api`); everything else always."""
        if info.group == podgroups.GROUP and info.version != "v1":
            return podgroups.served_api(info.kind, self.features) == info.api_version
        return True

    @staticmethod
    def _space_ns(info: ResourceInfo, ns: str | None) -> str:
        return (ns or "") if info.namespaced else ""

    def _out(self, info: ResourceInfo, data: bytes) -> bytes:
        """Stored bytes → the bytes served for ``info`` (events.k8s.io view conversion)."""
        if info.group == "events.k8s.io":
            return orjson.dumps(core_to_events(orjson.loads(data)))
        if info.storage and (cr := self.crds.of_info(info)) is not None and \
                b'"apiVersion":"' + info.api_version.encode() + b'"' not in data:
            obj = orjson.loads(data)  # another served version of the same custom resource (strategy None)
            from kubesched.apiserver.crd_conversion import check_conversion

            check_conversion(self, cr, str(obj.get("apiVersion") or "").rpartition("/")[2])
            obj["apiVersion"] = info.api_version
            return orjson.dumps(obj)
        return data

    def _check_type(self, info: ResourceInfo, obj: dict[str, Any], kind: str | None = None) -> None:
        want_kind = kind or info.kind
        av = obj.get("apiVersion")
        k = obj.get("kind")
        if av is not None and av != info.api_version:
            raise APIError.bad_request(f"the API version in the data ({av}) does not match the expected "
                                       f"API version ({info.api_version})")
        if k is not None and k != want_kind:
            raise APIError.bad_request(f"the kind in the data ({k}) does not match the expected kind ({want_kind})")
        obj["apiVersion"] = info.api_version
        obj["kind"] = want_kind

    def write_fault(self, info: ResourceInfo, sub: str, verb: str) -> None:
        if not self.faults.write_faults:
            return
        code = self.faults.write_fault(info.plural, sub, verb)
        if code == 409:
            raise APIError.conflict(info.plural, info.group, "", "injected conflict (fault injection)")
        if code == 503:
            raise APIError.method_status(503, "ServiceUnavailable", "injected unavailability (fault injection)")
        if code is not None:
            raise APIError.internal("injected failure (fault injection)")

    def _namespace_ok(self, ns: str, name: str, info: ResourceInfo) -> None:
        ns_entry = self.store.get("namespaces", "", ns)
        if ns_entry is None:
            raise APIError.not_found("namespaces", "", ns)
        if namespace_terminating(ns_entry.data):
            raise APIError.forbidden(info.plural, info.group, name,
                                     f"unable to create new content in namespace {ns} because it is being "
                                     f"terminated",
                                     [{"reason": "NamespaceTerminating",
                                       "message": f"namespace {ns} is being terminated",
                                       "field": "metadata.namespace"}])

    def _fill_create(self, info: ResourceInfo, obj: dict[str, Any], ns: str) -> dict[str, Any]:
        md = obj.get("metadata")
        if not isinstance(md, dict):
            md = obj["metadata"] = {}
        if info.namespaced:
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
        md["uid"] = new_uid()
        md["creationTimestamp"] = now_rfc3339()
        md.pop("resourceVersion", None)
        md.pop("deletionTimestamp", None)
        md.pop("deletionGracePeriodSeconds", None)
        md.pop("selfLink", None)
        if info.generation:
            md["generation"] = 1
        else:
            md.pop("generation", None)
        return md

    def _prepare_create(self, info: ResourceInfo, obj: dict[str, Any]) -> None:
        """Per-kind create strategy (upstream ``PrepareForCreate``)."""
        k = info.kind
        if k == "CustomResourceDefinition" and info.group == crdmod.CRD_GROUP:
            crdmod.default_crd(obj)  # v1 defaults; status reset (the controllers write it after)
            stored = [v["name"] for v in (obj.get("spec") or {}).get("versions") or []
                      if isinstance(v, dict) and v.get("storage") is True and isinstance(v.get("name"), str)]
            obj["status"] = {"conditions": [], "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": stored}
        elif k == "Namespace":
            spec = obj.setdefault("spec", {})
            fins = spec.get("finalizers") or []
            if "kubernetes" not in fins:
                spec["finalizers"] = [*fins, "kubernetes"]
            obj["status"] = {"phase": "Active"}
            labels = obj["metadata"].setdefault("labels", {})
            labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
        elif k == "Pod":
            st = obj.get("status") or {}
            obj["status"] = {"phase": "Pending", **({"qosClass": st["qosClass"]} if "qosClass" in st else {})}
            spec = obj.setdefault("spec", {})
            spec.setdefault("schedulerName", "default-scheduler")
            spec.setdefault("terminationGracePeriodSeconds", 30)
            spec.setdefault("restartPolicy", "Always")
            spec.setdefault("dnsPolicy", "ClusterFirst")
            spec.setdefault("securityContext", {})
            if not obj["status"].get("qosClass"):
                obj["status"]["qosClass"] = _qos_class(spec)
        elif k == "Node":
            st = obj.setdefault("status", {})
            if "capacity" in st and "allocatable" not in st:
                st["allocatable"] = dict(st["capacity"])
        elif k == "PersistentVolume":  # persistentvolume/strategy.go PrepareForCreate
            obj["status"] = {"phase": "Pending", "lastPhaseTransitionTime": now_rfc3339()}
        elif k == "PersistentVolumeClaim":  # status reset; served with the defaulted phase Pending
            obj["status"] = {"phase": "Pending"}
        elif k in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob",
                   "PodDisruptionBudget", "ReplicationController"):
            obj.pop("status", None)
            if k == "Job":
                _generate_job_selector(obj)
            if k == "PodDisruptionBudget":
                obj["status"] = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                                 "expectedPods": 0}

    def _admit(self, info: ResourceInfo, obj: dict[str, Any], old: dict[str, Any] | None, op: str,
               sub: str = "") -> dict[str, Any]:
        cr = self.crds.of_info(info)
        if cr is not None:  # custom resources: pruning, defaulting, schema validation
            return self._admit_custom(cr, obj, old, sub)
        if info.kind == "CustomResourceDefinition" and info.group == crdmod.CRD_GROUP and sub == "":
            crdmod.default_crd(obj)
            errs = crdmod.validate_crd(obj, old)
            if errs:
                name = str((obj.get("metadata") or {}).get("name") or "")
                raise APIError(crdmod.invalid_status(info.kind, info.group, name, errs))
        if not self.use_admission:
            return obj

        def lookup(resource: str, ns: str, name: str) -> dict[str, Any] | None:
            ri = by_plural(resource)
            if ri is None:
                return None
            e = self.store.get(ri.key, ns if ri.namespaced else "", name)
            return None if e is None else e.obj()

        def list_objects(resource: str) -> list[dict[str, Any]]:
            ri = by_plural(resource)
            if ri is None:
                return []
            if resource == "priorityclasses":  # read only (the Priority plugin's global default)
                return self._priority_class_list(ri.key)
            return [e.obj() for e in self.store.list(ri.key)]

        try:
            out: dict[str, Any] = admission_plugins.admit(f"{info.plural}/{sub}" if sub else info.plural, obj, old,
                                                  operation=op, lookup=lookup, list_objects=list_objects,
                                                  features=self.features)
        except admission_plugins.AdmissionError as e:
            raise APIError(e.status) from None
        return out

    def _validate_meta(self, info: ResourceInfo, obj: dict[str, Any]) -> None:
        md = obj["metadata"]
        if not md.get("name") and not md.get("generateName"):
            raise APIError.invalid(info.kind, info.group, "", [(
                "FieldValueRequired", "metadata.name",
                "metadata.name: Required value: name or generateName is required")])

    def create_object(self, info: ResourceInfo, ns: str, obj: dict[str, Any], *, dry_run: bool = False,
                      manager: str | None = None) -> Entry:
        """Create ``obj`` as ``POST`` would (metadata, strategy, namespace checks, generateName,
        admission, validation); call on the server's loop. Returns the stored entry (for
        events.k8s.io, the stored core/v1 form). Raises :class:`APIError` (AlreadyExists,
        NotFound namespace, Invalid, Forbidden, BadRequest)."""
        if info.key == "events" and info.group == "events.k8s.io":
            self._check_type(info, obj)
            obj = events_to_core(obj)
            store_info = res.find("", "v1", "events")
            assert store_info is not None
        else:
            self._check_type(info, obj)
            store_info = info
        md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else None
        if info.namespaced and md is not None and md.get("namespace") and md["namespace"] != ns:
            raise APIError.bad_request("the namespace of the provided object does not match the namespace sent "
                                       "on the request")
        md = self._fill_create(info, obj, ns)
        self._validate_meta(info, obj)
        name = md.get("name") or ""
        if info.namespaced:
            self._namespace_ok(ns, name, info)
        gen = md.get("generateName") if not name else None
        if gen:  # upstream BeforeCreate generates the name before validation
            name = gen[:58] + _rand_suffix()
            md["name"] = name
        self._prepare_create(info, obj)
        if (cr := self.crds.of_info(info)) is not None and info.version != cr.storage_version:
            from kubesched.apiserver.crd_conversion import check_conversion

            check_conversion(self, cr, info.version, write=True)  # a Webhook strategy's webhook is unreachable
        decoded = obj
        obj = self._admit(info, obj, None, "CREATE")
        if manager is not None:  # create.go: the creator's Update entry, of the decoded (defaulted) object
            from kubesched.apiserver.managers import track_create

            track_create(self, info, decoded, obj, manager)
        space_ns = ns if info.namespaced else ""
        for attempt in range(8 if gen else 1):
            if attempt:
                assert gen is not None
                name = gen[:58] + _rand_suffix()
                obj["metadata"]["name"] = name
            if dry_run:
                if self.store.get(store_info.key, space_ns, name) is not None:
                    raise APIError.already_exists(info.plural, info.group, name)
                obj["metadata"]["resourceVersion"] = ""
                return Entry(0, orjson.dumps(obj), {}, {})
            try:
                entry = self.store.create(store_info.key, space_ns, name, obj)
                break
            except KeyExists:
                if attempt == (7 if gen else 0):
                    raise APIError.already_exists(info.plural, info.group, name) from None
        self._after_write(info, entry)
        return entry

    def create_manifest(self, obj: dict[str, Any]) -> Entry:
        """Create one manifest object (``apiVersion``/``kind``, namespace from ``metadata.namespace``,
        default ``default``) as ``kubectl create -f`` would. Raises :class:`APIError`, and
        NotFound for a kind the box does not serve."""
        av, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
        cr = self.crds.find_kind(av.rpartition("/")[0], av.rpartition("/")[2], kind) if "/" in av else None
        info = cr.info if cr is not None else info_for_object(obj)
        if not self.served(info):
            raise APIError.method_status(404, "NotFound", f'no matches for kind "{info.kind}" in version '
                                         f'"{info.api_version}"')
        ns = ((obj.get("metadata") or {}).get("namespace") or "default") if info.namespaced else ""
        return self.create_object(info, ns, obj)

    def commit_update(self, info: ResourceInfo, ns: str, name: str, new: dict[str, Any], old_entry: Entry,
                       sub: str, precondition: int | None, dry: bool = False, *, manager: str | None = None,
                       manager_sub: str | None = None) -> Entry:
        """Apply update strategy + admission and write (unless a no-op). Shared by PUT and PATCH."""
        old = old_entry.obj()
        if info.group == "events.k8s.io":
            new = events_to_core(new)
            info_kind = "Event"
        else:
            info_kind = info.kind
        if precondition is not None and precondition != old_entry.rv:
            raise APIError.modified(info.plural, info.group, name)
        nmd = new.get("metadata")
        if not isinstance(nmd, dict):
            nmd = new["metadata"] = {}
        omd = old["metadata"]
        if nmd.get("name", name) != name:
            raise APIError.bad_request(f'the name of the object ({nmd.get("name")}) does not match the name on '
                                       f'the URL ({name})')
        for k in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                  "generation"):
            if k in omd:
                nmd[k] = omd[k]
            else:
                nmd.pop(k, None)
        nmd.pop("resourceVersion", None)
        new["kind"] = info_kind
        new["apiVersion"] = old.get("apiVersion", info.api_version)
        has_status = "status" in info.subresources
        if sub == "status":
            status = new.get("status")
            keep_md = nmd
            new = dict(old)
            if status is None:
                new.pop("status", None)
            else:
                new["status"] = status
            md2 = dict(old["metadata"])
            for k in ("labels", "annotations"):  # status updates may touch labels/annotations (pods)
                if k in keep_md:
                    md2[k] = keep_md[k]
            new["metadata"] = md2
        elif has_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        if info.generation and sub == "" and (new.get("spec") != old.get("spec") if self.crds.of_info(info) is None
                                              else crdmod.generation_changed(old, new)):
            new["metadata"]["generation"] = int(omd.get("generation", 1)) + 1
        new = self._admit(info, new, old, "UPDATE", sub)  # incl. ValidatePodUpdate's spec rules
        if manager is not None:  # the updater's managedFields entry (update.go, patch.go)
            schema, resolve = self._ssa_schema(info)
            ssa.track_update(old, new, schema, resolve, manager=manager, api_version=info.api_version,
                             now=now_rfc3339(), subresource=sub if manager_sub is None else manager_sub,
                             strip_status=sub == "" and has_status)
        cmp_old = dict(old)
        cmp_old["metadata"] = {k: v for k, v in omd.items() if k != "resourceVersion"}
        if new == cmp_old:
            return old_entry
        md = new["metadata"]
        if md.get("deletionTimestamp") and not md.get("finalizers") and not self._grace_pending(info, new):
            # last finalizer removed: the object goes away
            if dry:
                return old_entry
            try:
                e = self.store.update(info.key, ns, name, new, expect_rv=old_entry.rv)
                return self._finish_delete(info, ns, name, e)
            except Conflict:
                raise APIError.modified(info.plural, info.group, name) from None
        if dry:
            return Entry(old_entry.rv, orjson.dumps(new), old_entry.labels, old_entry.fields)
        try:
            entry = self.store.update(info.key, ns, name, new, expect_rv=old_entry.rv)
        except Conflict:
            raise APIError.modified(info.plural, info.group, name) from None
        self._after_write(info, entry)
        return entry

    def _ssa_schema(self, info: ResourceInfo) -> tuple[Any, Callable[[Any], Any]]:
        """The schema server-side apply reads list and map types from, and its ``$ref`` resolver."""
        cr = self.crds.of_info(info)
        if cr is not None:
            return cr.schema, lambda s: s
        api = self.api_version
        hit = self._ssa_schemas.get((info, api))
        if hit is not None:
            return hit
        name = schemas.definition_for_gvk(info.group, info.version, info.kind, api=api)
        schema = schemas.definitions(api).get(name) if name else None
        out = self._ssa_schemas[(info, api)] = (schema, _builtin_resolver(api))
        return out

    def _grace_pending(self, info: ResourceInfo, obj: dict[str, Any]) -> bool:
        """A pod in graceful deletion whose grace period has not ended."""
        if info.kind != "Pod":
            return False
        md = obj["metadata"]
        ts = md.get("deletionTimestamp")
        if not ts or not md.get("deletionGracePeriodSeconds"):
            return False
        t = parse_time(ts)
        return t is not None and t > datetime.now(UTC)

    def delete_object(self, info: ResourceInfo, ns: str, name: str, opts: dict[str, Any] | None = None,
                      entry: Entry | None = None) -> Entry:
        """Delete as the API would (graceful pods, finalizers, namespaces); returns the answered state.

        Raises :class:`APIError` (NotFound, Conflict on failed preconditions, Forbidden).
        """
        opts = opts or {}
        entry = entry or self.store.get(info.key, ns, name)
        if entry is None:
            raise APIError.not_found(info.plural, info.group, name)
        obj = entry.obj()
        md = obj["metadata"]
        pre = opts.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != md.get("uid"):
            raise APIError.conflict(info.plural, info.group, name,
                                    f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: "
                                    f"{md.get('uid')}")
        if pre.get("resourceVersion") and pre["resourceVersion"] != md.get("resourceVersion"):
            raise APIError.conflict(info.plural, info.group, name,
                                    f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']},"
                                    f" ResourceVersion in object meta: {md.get('resourceVersion')}")
        if info.kind == "Namespace":
            return self._delete_namespace(info, name, entry, obj)
        if info.kind == "CustomResourceDefinition" and info.group == crdmod.CRD_GROUP:
            return self._delete_crd(info, name, entry)
        grace = self._grace_period(info, obj, opts)
        # orphan / foregroundDeletion when a garbage collector runs (--enable-garbage-collector; apiserver/gc.py)
        gc_fins = deletion_finalizers(info, obj, opts) if getattr(self, "garbage_collector", None) else None
        if gc_fins is not None:
            md["finalizers"] = gc_fins
        if md.get("deletionTimestamp"):
            if gc_fins is not None:  # a new propagation policy for an object being deleted
                return self.store.update(info.key, ns, name, obj, expect_rv=entry.rv)
            # already terminating: a shorter grace period may be requested
            cur = md.get("deletionGracePeriodSeconds")
            if grace is not None and cur is not None and grace < cur:
                if grace == 0 and not md.get("finalizers"):
                    return self._remove(info, ns, name, entry)
                md["deletionGracePeriodSeconds"] = grace
                md["deletionTimestamp"] = now_rfc3339(grace)
                e = self.store.update(info.key, ns, name, obj, expect_rv=entry.rv)
                self._schedule_reap(info, ns, name, md.get("uid", ""), grace)
                return e
            return entry
        fins = md.get("finalizers") or []
        if grace:
            md["deletionTimestamp"] = now_rfc3339(grace)
            md["deletionGracePeriodSeconds"] = grace
            if info.generation:
                md["generation"] = int(md.get("generation", 1)) + 1
            e = self.store.update(info.key, ns, name, obj, expect_rv=entry.rv)
            self._schedule_reap(info, ns, name, md.get("uid", ""), grace)
            return e
        if fins:
            md["deletionTimestamp"] = now_rfc3339()
            md["deletionGracePeriodSeconds"] = 0
            if info.generation:
                md["generation"] = int(md.get("generation", 1)) + 1
            return self.store.update(info.key, ns, name, obj, expect_rv=entry.rv)
        return self._remove(info, ns, name, entry)

    def _grace_period(self, info: ResourceInfo, obj: dict[str, Any], opts: dict[str, Any]) -> int | None:
        """Upstream pod strategy ``CheckGracefulDeleteStrategy``: unscheduled or terminal pods go at once."""
        if info.kind != "Pod":
            return None
        g = opts.get("gracePeriodSeconds")
        spec = obj.get("spec") or {}
        if g is None:
            g = spec.get("terminationGracePeriodSeconds", 30)
        g = int(g or 0)
        if g < 0:
            g = 1
        if not spec.get("nodeName") or (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            g = 0
        return g

    def _remove(self, info: ResourceInfo, ns: str, name: str, entry: Entry) -> Entry:
        try:
            e = self.store.delete(info.key, ns, name, expect_rv=entry.rv)
        except KeyNotFound:
            raise APIError.not_found(info.plural, info.group, name) from None
        except Conflict:
            raise APIError.modified(info.plural, info.group, name) from None
        self._timers.pop((info.key, f"{ns}/{name}"), None)
        return e

    def _finish_delete(self, info: ResourceInfo, ns: str, name: str, e: Entry) -> Entry:
        return self._remove(info, ns, name, e)

    def _schedule_reap(self, info: ResourceInfo, ns: str, name: str, uid: str, grace: float) -> None:
        loop = self.loop or asyncio.get_event_loop()
        key = (info.key, f"{ns}/{name}")
        old = self._timers.pop(key, None)
        if old is not None:
            old.cancel()
        self._timers[key] = loop.call_later(max(grace, 0.0), self._reap, info, ns, name, uid)

    def _reap(self, info: ResourceInfo, ns: str, name: str, uid: str) -> None:
        """The grace period ended (as the kubelet would): remove the pod unless finalizers hold it."""
        self._timers.pop((info.key, f"{ns}/{name}"), None)
        entry = self.store.get(info.key, ns, name)
        if entry is None:
            return
        obj = entry.obj()
        md = obj["metadata"]
        if md.get("uid") != uid or not md.get("deletionTimestamp"):
            return
        if md.get("finalizers"):
            md["deletionGracePeriodSeconds"] = 0
            self.store.update(info.key, ns, name, obj, expect_rv=entry.rv)
            return
        try:
            self._remove(info, ns, name, entry)
        except APIError:
            pass

    def _resume_graceful_deletions(self) -> None:
        info = res.find("", "v1", "pods")
        assert info is not None
        now = datetime.now(UTC)
        for e in self.store.list(info.key):
            obj = e.obj()
            md = obj["metadata"]
            ts = md.get("deletionTimestamp")
            if ts and md.get("deletionGracePeriodSeconds"):
                t = parse_time(ts) or now
                self._schedule_reap(info, md.get("namespace", ""), md["name"], md.get("uid", ""),
                                    max(0.0, (t - now).total_seconds()))

    def _delete_namespace(self, info: ResourceInfo, name: str, entry: Entry, obj: dict[str, Any]) -> Entry:
        if name in _UNDELETABLE_NAMESPACES:
            raise APIError.forbidden("namespaces", "", name, "this namespace may not be deleted")
        md = obj["metadata"]
        if md.get("deletionTimestamp"):
            return entry
        md["deletionTimestamp"] = now_rfc3339()
        md["deletionGracePeriodSeconds"] = 0
        obj.setdefault("status", {})["phase"] = "Terminating"
        e = self.store.update(info.key, "", name, obj, expect_rv=entry.rv)
        loop = self.loop or asyncio.get_event_loop()
        loop.call_soon(self._finalize_namespace, name)
        return e

    def _finalize_namespace(self, name: str) -> None:
        """The namespace controller, in one step: delete every namespaced object, then the namespace."""
        for info in self._all_infos():
            if not info.namespaced or info.group == "events.k8s.io":
                continue
            for e in self.store.list(info.key, name):
                o = e.obj()
                md = o["metadata"]
                try:
                    if md.get("finalizers"):
                        md["finalizers"] = []
                        md.setdefault("deletionTimestamp", now_rfc3339())
                        e = self.store.update(info.key, name, md["name"], o, expect_rv=e.rv)
                    self._remove(info, name, md["name"], e)
                except (APIError, KeyNotFound, Conflict):
                    pass
        ns_info = res.find("", "v1", "namespaces")
        assert ns_info is not None
        nse = self.store.get(ns_info.key, "", name)
        if nse is not None:
            o = nse.obj()
            o.setdefault("spec", {})["finalizers"] = []
            if o["metadata"].get("finalizers"):
                self.store.update(ns_info.key, "", name, o, expect_rv=nse.rv)
                return
            try:
                self._remove(ns_info, "", name, nse)
            except APIError:
                pass

    def _after_write(self, info: ResourceInfo, entry: Entry) -> None:
        """Called after a successful create/update through the API (extension point)."""
        if info.kind == "CustomResourceDefinition" and info.group == crdmod.CRD_GROUP:
            self._crd_established(entry)
