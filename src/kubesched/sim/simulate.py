"""``kubesched simulate``: schedule the pending pods of a set of manifests, as a live cluster would.

All pending pods arrive together; pods placed earlier in the run occupy their nodes for the
later ones (assumed and bound in the in-memory store). Queue order is PrioritySort's: priority
(``spec.priority``, resolved from ``priorityClassName`` or the global default PriorityClass as
the Priority admission plugin does), then ``metadata.creationTimestamp``, then input order.
The store delivers each attempt's writes as informer events before the next attempt. Pods that
wait on Permit (out-of-tree plugins) wait in virtual time: once nothing else can be scheduled,
the clock moves to the next Permit timeout.

Workloads (Deployment, ReplicaSet, ReplicationController, StatefulSet, DaemonSet, Job) are
expanded into the pods their controllers would create (:mod:`kubesched.controllers.workloads`), before
the run and again whenever the run goes idle (a StatefulSet with ``OrderedReady`` creates its
next ordinal once the previous one is bound), until the controllers create nothing more. The
created objects (ReplicaSets, PVCs, pods) come back in the output after the input objects,
each pod with its controller's ``ownerReferences``.

Input errors raise :class:`~kubesched.errors.ManifestError` naming ``file:line`` and the field.
"""

from __future__ import annotations

import contextlib
import gc
import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec

from kubesched.api import podgroups
from kubesched.api.objects import (
    KINDS,
    Node,
    ObjectMeta,
    Pod,
    PodSpec,
    PriorityClass,
    decode,
    node_allocatable,
    pod_key,
)
from kubesched.api.quantity import to_int
from kubesched.api.resources import pod_requests
from kubesched.api.strategy import prepare_pod_for_create
from kubesched.config import KubeSchedulerConfiguration
from kubesched.controllers import pvcontroller
from kubesched.controllers.workloads import WORKLOAD_KINDS, Controllers, WorkloadError
from kubesched.errors import InputError, ManifestError
from kubesched.features import FeatureGate
from kubesched.framework.clock import ManualClock
from kubesched.framework.record import DecisionRecord
from kubesched.scheduler import Attempt, Scheduler
from kubesched.sim.manifests import RawObject, locate
from kubesched.sim.resourceclaims import create_pod_claims, create_pod_group_claims, release_pod_claims
from kubesched.sim.store import ClusterStore

__all__ = ["ANNOTATION_PREFIX", "SYSTEM_PRIORITY_CLASSES", "PodOutcome", "SimulationResult", "build_store",
           "is_terminal", "mark_gated_pods", "simulate"]

ANNOTATION_PREFIX = "kubesched.io/"
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"


@dataclass
class PodOutcome:
    """Where a pending pod ended: ``node`` or the FailedScheduling ``message``."""

    key: str
    node: str | None
    message: str
    attempts: int
    owner: str = ""
    """``Kind/name`` of the pod's controller (from its ownerReferences), or ``""``."""


@dataclass
class SimulationResult:
    store: ClusterStore
    scheduler: Scheduler
    raws: list[RawObject]
    outcomes: list[PodOutcome]
    other_scheduler_pods: list[str] = field(default_factory=list)
    records: dict[str, DecisionRecord] = field(default_factory=dict)
    """Last DecisionRecord per pod (with recording on)."""
    attempts: int = 0
    notices: list[str] = field(default_factory=list)
    """One line each: things the run did not model (CronJobs, Deployment rollouts)."""

    def output_objects(self) -> list[dict[str, Any]]:
        """Every input object after the run (bound pods carry ``spec.nodeName`` and conditions);
        pods deleted during the run (preemption victims) are left out; Succeeded/Failed pods come
        back as they were (the scheduler never sees them)."""
        raw = self.store.raw
        out: list[dict[str, Any]] = []
        seen: set[tuple[str, str, str]] = set()
        for r in self.raws:
            if r.kind == "Pod" and ("Pod", r.namespace or "", r.name) not in raw and not is_terminal(r.data):
                continue
            cur = self.store.get(r.kind, r.namespace or "", r.name) if r.kind in _STORAGE_KINDS else None
            out.append(cur if isinstance(cur, dict) else r.data)
            seen.add((r.kind, r.namespace or "", r.name))
        for kind in _STORAGE_KINDS:  # created during the run: provisioned PVs, ephemeral PVCs
            for (ns, name), obj in self.store.objects.get(kind, {}).items():
                if (kind, ns, name) not in seen and isinstance(obj, dict):
                    out.append({"apiVersion": "v1", "kind": kind, **obj})
        # the workload API's objects as the run left them (PodGroup status conditions)
        wl = {kind: objs for kind in podgroups.KINDS if (objs := self.store.objects.get(kind))}
        if wl:
            out = [wl[k].get((str((o.get("metadata") or {}).get("namespace") or ""),
                              str((o.get("metadata") or {}).get("name") or "")), o)
                   if isinstance(o, dict) and (k := str(o.get("kind") or "")) in wl else o for o in out]
        claims = self.store.objects.get("ResourceClaim")
        if claims:
            # DRA: claim writes replace the object (allocation, reservedFor); claims the simulated
            # resourceclaim controller generated from templates are appended
            inputs = {(r.namespace or "", r.name) for r in self.raws if r.kind == "ResourceClaim"}
            out = [claims.get((str((o.get("metadata") or {}).get("namespace") or ""),
                               str((o.get("metadata") or {}).get("name") or "")), o)
                   if isinstance(o, dict) and o.get("kind") == "ResourceClaim" else o for o in out]
            out += [c for k, c in claims.items() if k not in inputs and isinstance(c, dict)]
        groups = self.store.objects.get("PodGroup")
        if groups:
            # GenericWorkload: the scheduler's status writes (PodGroupInitiallyScheduled) replace the object
            out = [groups.get((str((o.get("metadata") or {}).get("namespace") or ""),
                               str((o.get("metadata") or {}).get("name") or "")), o)
                   if isinstance(o, dict) and o.get("kind") == "PodGroup" else o for o in out]
        return out


#: kinds the simulated storage controllers write (bindings, provisioned PVs, ephemeral PVCs)
_STORAGE_KINDS = ("PersistentVolume", "PersistentVolumeClaim")


def _parse_ts(ts: str | None) -> float:
    if not ts:
        return float("inf")
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return float("inf")


#: The PriorityClasses the API server creates at start (``pkg/apis/scheduling/types.go``).
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}
TERMINAL_PHASES = ("Succeeded", "Failed")


def is_terminal(raw: dict[str, Any]) -> bool:
    """A Succeeded or Failed pod: the scheduler's pod informer never sees it (upstream
    ``pkg/scheduler/scheduler.go`` lists pods with the field selector
    ``status.phase!=Succeeded,status.phase!=Failed``), so it holds no resources and is neither
    scheduled nor a preemption victim. Terminating pods (``deletionTimestamp``) are not terminal."""
    status = raw.get("status")
    return isinstance(status, dict) and status.get("phase") in TERMINAL_PHASES


def _resolve_priority(pod: Pod, classes: dict[str, PriorityClass], default: PriorityClass | None,
                      where: str) -> Pod:
    """The Priority admission plugin: ``priorityClassName`` → ``spec.priority`` (+ preemptionPolicy).

    A pod that already exists (it has ``metadata.uid``: a cluster dump) and carries
    ``spec.priority`` keeps it, as the API server admitted it once: its class may be missing
    from the input or have changed since."""
    spec = pod.spec
    name = spec.priority_class_name
    if spec.priority is not None and pod.metadata.uid:
        if spec.preemption_policy:
            return pod
        return msgspec.structs.replace(pod, spec=msgspec.structs.replace(
            spec, preemption_policy=DEFAULT_PREEMPTION_POLICY))
    if name:
        pc = classes.get(name)
        if pc is None:
            raise ManifestError(f"no PriorityClass with name {name} was found", where)
    elif spec.priority is not None:
        return pod
    else:
        pc = default
    if pc is None:
        return pod
    if spec.priority is not None and spec.priority != pc.value:
        raise ManifestError(f"the integer value of priority ({spec.priority}) must not be provided in pod spec; "
                            f"priority admission controller computed {pc.value} from the given PriorityClass name",
                            where)
    policy = spec.preemption_policy or pc.preemption_policy or DEFAULT_PREEMPTION_POLICY
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(spec, priority=pc.value, preemption_policy=policy))


def _check_quantities(kind: str, obj: Any) -> None:
    """Parse every quantity the engine will read, so bad ones are reported with their source."""
    if kind == "Pod":
        pod_requests(obj)  # parses every quantity pod_non_zero_requests reads too
    elif kind == "Node":
        for name, q in node_allocatable(obj).items():
            try:
                to_int(name, q)
            except InputError as e:
                raise type(e)(e.message, f"status.allocatable[{name}]") from None


def _decode_raw(r: RawObject, cls: type) -> Any:
    """The typed view of ``r`` (quantities checked); errors as ManifestError at ``r.source``."""
    try:
        obj: Any = decode(cls, r.data)  # the typed view of one of several kinds
        _check_quantities(r.kind, obj)
    except InputError as e:
        raise ManifestError(f"{r.describe()}: {e.path + ': ' if e.path else ''}{e.message}",
                            locate(r, e.path) if e.path else r.source) from None
    return obj


def _decode_pod(r: RawObject, specs: dict[bytes, PodSpec]) -> Pod:
    """:func:`_decode_raw` for a Pod, its ``spec`` decoded (and its quantities checked) once per
    distinct spec (``nodeName`` aside) and shared: the replicas of a ReplicaSet differ in their
    metadata and status. ``specs``: encoded spec → the shared ``PodSpec`` (``nodeName`` unset)."""
    spec = r.data.get("spec")
    if not isinstance(spec, dict):
        return _decode_raw(r, Pod)
    node_name = spec.get("nodeName")
    if type(node_name) is str:
        spec = {k: v for k, v in spec.items() if k != "nodeName"}
    try:
        key = msgspec.json.encode(spec)
    except (TypeError, ValueError, OverflowError):
        return _decode_raw(r, Pod)
    shared = specs.get(key)
    if shared is None:
        pod: Pod = _decode_raw(r, Pod)
        specs[key] = msgspec.structs.replace(pod.spec, node_name="") if pod.spec.node_name else pod.spec
        return pod
    try:  # the spec's quantities were checked with the first pod of it
        pod = decode(Pod, {k: v for k, v in r.data.items() if k != "spec"})
    except InputError as e:
        raise ManifestError(f"{r.describe()}: {e.path + ': ' if e.path else ''}{e.message}",
                            locate(r, e.path) if e.path else r.source) from None
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(shared, node_name=node_name)
                                   if node_name else shared)


def _prepare_pod(pod: Pod, classes: dict[str, PriorityClass], default: PriorityClass | None, where: str) -> Pod:
    """Defaults the API server would apply before the scheduler sees the pod: schedulerName, priority."""
    if not pod.spec.scheduler_name:
        spec = msgspec.structs.replace(pod.spec, scheduler_name="default-scheduler")
        pod = msgspec.structs.replace(pod, spec=spec)
    return _resolve_priority(pod, classes, default, where)


_WORKLOAD_API_VERSIONS = {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1",
                          "DaemonSet": "apps/v1", "ReplicationController": "v1", "Job": "batch/v1",
                          "CronJob": "batch/v1"}


class _WorkloadDriver:
    """Runs the workload controllers (:class:`~kubesched.controllers.workloads.Controllers`) for one run:
    the first pass over the input objects, later passes over the store's current objects."""

    def __init__(self, raws: list[RawObject], seed: int, features: FeatureGate | None = None) -> None:
        self.features = features
        self.classes = [r.data for r in raws if r.kind == "StorageClass"]
        self.sources = [r for r in raws if r.kind in WORKLOAD_KINDS
                        and r.api_version == _WORKLOAD_API_VERSIONS.get(r.kind)]
        self.notices: list[str] = [
            f"{r.describe()} ({r.source}): apiVersion {r.api_version} is not {_WORKLOAD_API_VERSIONS[r.kind]}; "
            "not expanded" for r in raws
            if r.kind in _WORKLOAD_API_VERSIONS and r.api_version != _WORKLOAD_API_VERSIONS[r.kind]]
        self.events: list[tuple[str, str, str, str]] = []
        """Events of the controllers (the Job controller's WorkloadCreated, PodGroupCreated)."""
        try:
            self.controllers = Controllers([r.data for r in self.sources], seed=seed, features=features)
        except WorkloadError as e:
            raise ManifestError(e.message, self.sources[int((e.path or "#0")[1:])].source) from None

    def _sync(self, pods: list[dict], nodes: list[dict], claims: list[dict], scheduling: list[dict]) -> Any:
        try:
            res = self.controllers.sync(pods, nodes, claims, scheduling)
        except WorkloadError as e:
            raise ManifestError(e.message, self.sources[int((e.path or "#0")[1:])].source) from None
        self.notices.extend(res.notices)
        for obj, typ, reason, msg in res.events:
            meta = obj.get("metadata") or {}
            self.events.append((typ, reason, f"{meta.get('namespace') or 'default'}/{meta.get('name')}", msg))
        return res

    def _created(self, res: Any, start: int) -> list[RawObject]:
        for d, _ in res.created:
            if d.get("kind") == "Pod":  # created through the API: the pod strategy's PrepareForCreate
                prepare_pod_for_create(d, self.features)
            elif d.get("kind") == "PersistentVolumeClaim":  # a StatefulSet's claim: DefaultStorageClass
                _default_claim_class(d, self.classes)
            elif d.get("kind") in podgroups.KINDS:  # decoding's defaults, admission, the strategy
                podgroups.default_object(d, self.features)
                podgroups.add_protection_finalizer(d, self.features)
                podgroups.prepare_for_create(d, self.features)
                d["metadata"]["uid"] = self.controllers.uid(d)
        return [RawObject(d["kind"], d["apiVersion"], d, self.sources[i].source, start + k)
                for k, (d, i) in enumerate(res.created)]

    def first_pass(self, raws: list[RawObject]) -> list[RawObject]:
        """``raws`` with the objects the controllers update replaced and those they create appended."""
        if not self.sources:
            return raws
        res = self._sync([r.data for r in raws if r.kind == "Pod"], [r.data for r in raws if r.kind == "Node"],
                         [r.data for r in raws if r.kind == "PersistentVolumeClaim"],
                         [r.data for r in raws if r.kind in ("Workload", "PodGroup")
                          and r.api_version == podgroups.V1BETA1])
        out = list(raws)
        pos = {id(r): k for k, r in enumerate(out)}
        for data, i in res.updated:
            if data.get("kind") in podgroups.KINDS:  # the Job controller patched an input's minCount
                meta = data.get("metadata") or {}
                k = next((k for k, r in enumerate(out) if r.kind == data["kind"] and r.name == meta.get("name")
                          and (r.namespace or "") == (meta.get("namespace") or "")), None)
                if k is not None:
                    out[k] = RawObject(out[k].kind, out[k].api_version, data, out[k].source, out[k].index)
                continue
            src = self.sources[i]
            new = RawObject(src.kind, src.api_version, data, src.source, src.index)
            out[pos[id(src)]] = new
            self.sources[i] = new
        gone = {_key(d) for d, _ in res.deleted}  # a ReplicaSet's surplus input pods (scale-down)
        if gone:
            out = [r for r in out if (r.kind, r.namespace or "default", r.name) not in gone]
        out.extend(self._created(res, len(out)))
        for r in self.sources:  # the uid the created objects' ownerReferences name, as the API server gives one
            uid = self.controllers.generated_uid(r.data)
            if uid is not None and not r.data["metadata"].get("uid"):
                r.data["metadata"]["uid"] = uid
        return out

    def next_pass(self, store: ClusterStore, start: int) -> list[RawObject]:
        """The objects the controllers create now, seeing the store (bound pods count as Ready)."""
        if not self.sources:
            return []
        pods = [raw for (kind, _, _), raw in store.raw.items() if kind == "Pod"]
        nodes = [raw for (kind, _, _), raw in store.raw.items() if kind == "Node"]
        claims = list(store.objects.get("PersistentVolumeClaim", {}).values())
        scheduling = [o for kind in ("Workload", "PodGroup") for o in store.objects.get(kind, {}).values()]
        res = self._sync(pods, nodes, claims, scheduling)
        for data, _ in res.deleted:  # a ReplicaSet's scale-down (a rollout): the pod is deleted
            kind, ns, name = _key(data)
            pod = store.pods.get(f"{ns}/{name}") if kind == "Pod" else None
            if pod is not None:
                store.delete_pod(pod)
        for data, _ in res.updated:  # the Job controller patches a gang's minCount
            if data.get("kind") in podgroups.KINDS:
                store.add_object(str(data["kind"]), data)
        return self._created(res, start)


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return str(obj.get("kind")), str(meta.get("namespace") or "default"), str(meta.get("name"))


def _default_claim_class(pvc: dict[str, Any], classes: list[dict[str, Any]]) -> None:
    """DefaultStorageClass admission on a claim (in place; see
    :func:`kubesched.controllers.pvcontroller.with_default_class`)."""
    new = pvcontroller.with_default_class(pvc, classes)
    if new is not None:
        pvc["spec"] = new["spec"]


def storage_controllers(raws: list[RawObject]) -> None:
    """What the API server and the PV controller do at once to the storage objects of the input,
    written into their data: every unbound claim without a class gets the default StorageClass
    (DefaultStorageClass admission, ``plugin/pkg/admission/storage/storageclass/setdefault/
    admission.go:86``, and the PV controller's retroactive ``assignDefaultStorageClass``,
    ``pv_controller.go:968``), and a PV stored without a phase and not naming a claim becomes
    ``Available`` (``syncVolume``), so WaitForFirstConsumer claims can bind to it."""
    classes = [r.data for r in raws if r.kind == "StorageClass"]
    for r in raws:
        if r.kind == "PersistentVolumeClaim":
            spec = r.data.get("spec")
            if classes and not (isinstance(spec, dict) and spec.get("volumeName")):
                _default_claim_class(r.data, classes)
        elif r.kind == "PersistentVolume":
            phase = pvcontroller.new_volume_phase(r.data)
            status = r.data.get("status")
            if phase is not None and (status is None or isinstance(status, dict)):
                r.data["status"] = {**(status or {}), "phase": phase}


def _owner(pod: Pod) -> str:
    for ref in pod.metadata.owner_references:
        if ref.controller:
            return f"{ref.kind}/{ref.name}"
    return ""


def build_store(raws: list[RawObject], features: FeatureGate | None = None) -> tuple[
        ClusterStore, list[tuple[Pod, dict]], list[tuple[Pod, dict]], list[tuple[Node, dict]]]:
    """Decode the raw objects into a store (not yet attached to a scheduler).

    Returns ``(store, bound pods, pending pods, nodes)`` with their raw mappings; pending pods
    in queue-arrival order (creationTimestamp, then input order).
    """
    store = ClusterStore()
    typed: list[tuple[RawObject, Any]] = []
    groups: list[RawObject] = []
    specs: dict[bytes, PodSpec] = {}
    for r in raws:
        if r.kind == "Pod":
            typed.append((r, _decode_pod(r, specs)))
            continue
        cls = KINDS.get(r.kind)
        if cls is None:
            # no typed view (PersistentVolumeClaim, StorageClass, ResourceClaim, PodGroup, …): plugins
            # that read such objects through the lister get the raw mapping
            store.add_raw(r.kind, r.data)
            if r.kind in ("PodGroup", "CompositePodGroup") and r.api_version.startswith(podgroups.GROUP + "/"):
                groups.append(r)
            continue
        typed.append((r, _decode_raw(r, cls)))
    classes = {o.metadata.name: o for r, o in typed if r.kind == "PriorityClass"}
    for name, value in SYSTEM_PRIORITY_CLASSES.items():
        if name not in classes:
            classes[name] = PriorityClass(metadata=ObjectMeta(name=name), value=value,
                                          preemption_policy=DEFAULT_PREEMPTION_POLICY)
    defaults = [o for o in classes.values() if o.global_default]
    if len(defaults) > 1:
        raise ManifestError("more than one PriorityClass has globalDefault: true: "
                            + ", ".join(sorted(o.metadata.name for o in defaults)))
    default = defaults[0] if defaults else None
    for r in groups:
        _admit_group_priority(r, classes, features)
    nodes: list[tuple[Node, dict]] = []
    bound: list[tuple[Pod, dict]] = []
    pending: list[tuple[float, int, Pod, dict]] = []
    node_names: set[str] = set()
    for r, obj in typed:
        if r.kind == "Node":
            nodes.append((obj, r.data))
            node_names.add(obj.metadata.name)
        elif r.kind == "Pod":
            if is_terminal(r.data):
                continue  # not in the scheduler's informer: kept for output only
            pod = _prepare_pod(obj, classes, default, r.source)
            if pod.spec.node_name:
                bound.append((pod, r.data))
            else:
                pending.append((_parse_ts(pod.metadata.creation_timestamp), r.index, pod, r.data))
        else:
            store.add(r.kind, obj, r.data)
    for pod, raw in bound:
        if pod.spec.node_name not in node_names:
            src = next((locate(r, "spec.nodeName") for r in raws if r.data is raw), "")
            raise ManifestError(f'pod {pod_key(pod)} is bound to node "{pod.spec.node_name}", '
                                "which is not in the input", src)
    pending.sort(key=lambda t: (t[0], t[1]))
    return store, bound, [(p, raw) for _, _, p, raw in pending], nodes


def _admit_group_priority(r: RawObject, classes: dict[str, PriorityClass], features: FeatureGate | None) -> None:
    """The Priority admission plugin for a new (Composite)PodGroup (no ``metadata.uid``):
    ``spec.priority`` (and ``preemptionPolicy``) from its PriorityClass
    (:func:`kubesched.api.podgroups.admit_priority`); a refusal is a ManifestError."""
    if (r.data.get("metadata") or {}).get("uid") and (r.data.get("spec") or {}).get("priority") is not None:
        return  # admitted once already (a dump)

    def as_dict(pc: PriorityClass) -> dict[str, Any]:
        return {"metadata": {"name": pc.metadata.name}, "value": pc.value, "globalDefault": pc.global_default,
                "preemptionPolicy": pc.preemption_policy or DEFAULT_PREEMPTION_POLICY}

    def get_class(name: str) -> dict[str, Any] | None:
        pc = classes.get(name)
        return None if pc is None else as_dict(pc)

    try:
        podgroups.admit_priority(r.data, get_class=get_class, list_classes=lambda: [as_dict(c) for c in
                                                                                     classes.values()],
                                 features=features)
    except podgroups.PodGroupAdmissionError as e:
        plural = podgroups.KINDS[r.kind]
        raise ManifestError(f'{plural}.{podgroups.GROUP} "{r.name}" is forbidden: {e}', r.source) from None


_MAX_CONTROLLER_PASSES = 100_000


def _add_created(store: ClusterStore, created: list[RawObject], pending: list[tuple[Pod, dict]],
                 others: list[str], sched: Scheduler) -> None:
    """Add the objects a controller pass created to the store (pods: as the API server admits them)."""
    classes = {pc.metadata.name: pc for pc in store.list("PriorityClass")}
    default = next((pc for pc in classes.values() if pc.global_default), None)
    for r in created:
        cls = KINDS.get(r.kind)
        if r.kind in podgroups.KINDS:  # a Job controller's Workload / PodGroup: admitted, announced
            _admit_group_priority(r, classes, sched.features)
            store.add_object(r.kind, r.data)
            continue
        if cls is None:
            store.add_raw(r.kind, r.data)
            continue
        obj = _decode_raw(r, cls)
        if r.kind == "Pod":
            obj = _prepare_pod(obj, classes, default, r.source)
            if not sched.responsible_for(obj):
                others.append(pod_key(obj))
            pending.append((obj, r.data))
        store.add(r.kind, obj, r.data)


@contextlib.contextmanager
def _collector_paused(pause: bool) -> Iterator[None]:
    """The garbage collector off inside (when ``pause`` and it was on), then everything alive
    moved to the permanent generation (``gc.freeze()``) and the collector back on — even when
    the block raises. The cluster's typed objects (a million containers at 50,000 nodes) would
    otherwise be walked by the full collections their own creation triggers."""
    if not pause:
        yield
        return
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_on:
            gc.enable()


def simulate(raws: list[RawObject], config: KubeSchedulerConfiguration | None = None, *, seed: int = 0,
             record: bool = False, registry: dict[str, Any] | None = None,
             on_record: Callable[[DecisionRecord], None] | None = None, keep_records: bool = True,
             record_pods: Callable[[str], bool] | None = None,
             timings: dict[str, float] | None = None, freeze_gc: bool = False,
             features: FeatureGate | None = None,
             progress: Callable[[int, int], None] | None = None) -> SimulationResult:
    """Run the scheduler over the manifests until no pod can make progress.

    ``progress``: called after every scheduling attempt with (pending pods attempted at least
    once, pending pods of the input) — for a progress bar.

    ``features``: feature gates at the emulated version (default: v1.37's); ``config`` should have
    been defaulted with the same gates (``None`` gives their default configuration).

    ``record``: keep every pod's last DecisionRecord in ``result.records`` and annotate the pods;
    ``on_record`` gets every record as it is made (recording is on when either is given).
    ``keep_records=False`` drops them after ``on_record`` (memory: a record is O(nodes));
    ``record_pods`` limits recording to the pods (``namespace/name``) it accepts.

    ``timings``, when given, receives the wall and CPU time in seconds of the ``build`` (decode
    and store) and ``schedule`` phases (keys ``build``, ``build_cpu``, ``schedule``,
    ``schedule_cpu``). ``freeze_gc`` (for one-shot processes such as the CLI)
    moves everything alive once the cluster is built into the collector's permanent generation
    (``gc.freeze()``): the millions of objects of a large input are then not traversed again by
    every full collection while pods are scheduled; the collector is off while the cluster is
    built. Cyclic garbage among them is never freed.

    Raises :class:`ManifestError` for bad input and
    :class:`~kubesched.errors.ConfigError` / ``PluginConfigError`` for a bad configuration.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    with _collector_paused(freeze_gc):
        storage_controllers(raws)
        driver = _WorkloadDriver(raws, seed, features)
        raws = driver.first_pass(raws)
        store, bound, pending, nodes = build_store(raws, features)
        clock = ManualClock()
        sched = Scheduler(config, client=store, lister=store, clock=clock, seed=seed,
                          registry=registry, record=record or on_record is not None, features=features)
        sched.record_pods = record_pods
        keep_records = keep_records or record
        store.scheduler = sched
        if store.keep_events:
            store.events.extend(driver.events)
            driver.events.clear()
        store.add_nodes(nodes)
        if podgroups.served_api("PodGroup", features):
            # the scheduler's PodGroup (CompositePodGroup) informers: their initial list, before the pods'
            for kind in ("CompositePodGroup", "PodGroup"):
                store.announce(kind)
        for pod, raw in bound:
            store.add("Pod", pod, raw)
        others: list[str] = []
        claim_rng = random.Random(seed)
        store.pod_delete_hooks.append(lambda p: release_pod_claims(store, p))  # preemption victims' claims
        workload_claims = features is not None and features.enabled("DRAWorkloadResourceClaims")
        if workload_claims:  # the resourceclaim controller: the PodGroups' template claims first
            for pg in list(store.list("PodGroup")):
                updated = create_pod_group_claims(store, pg, claim_rng)
                if updated is not pg:
                    store.put_object("PodGroup", updated)
        for i, (pod, raw) in enumerate(pending):
            if not sched.responsible_for(pod):
                others.append(pod_key(pod))
            if pod.spec.resource_claims:  # the resourceclaim controller creates claims from templates
                pod = create_pod_claims(store, pod, raw, claim_rng, workload_claims,
                                        features is not None and features.enabled("GenericWorkload"))
                pending[i] = (pod, raw)
            store.add("Pod", pod, raw)
    t1, c1 = time.perf_counter(), time.process_time()
    records: dict[str, DecisionRecord] = {}
    attempts_by_pod: dict[str, int] = {}

    n_pending = len(pending)

    def on_attempt(a: Attempt) -> None:
        attempts_by_pod[a.pod_key] = attempts_by_pod.get(a.pod_key, 0) + 1
        if progress is not None:
            progress(min(len(attempts_by_pod), n_pending), n_pending)
        if a.record is not None:
            if keep_records:
                records[a.pod_key] = a.record
            if on_record is not None:
                on_record(a.record)

    sched.on_attempt = on_attempt

    def run_phase() -> int:
        n = sched.run_until_idle(after_each=store.flush)
        progressed = True
        while (due := clock.next_timer()) is not None:
            # pods waiting on Permit: virtual time moves to the next timeout; the scheduler runs
            # again only while that makes progress (a bind), then the last timeouts just fire
            clock.set(due)
            store.flush()
            if progressed:
                bound_before = sched.stats.bound
                n += sched.run_until_idle(after_each=store.flush)
                progressed = sched.stats.bound > bound_before
        return n

    n = run_phase()
    # controllers see the result (an OrderedReady StatefulSet creates its next ordinal, a ReplicaSet
    # replaces a preempted pod) and the scheduler runs again, until they create nothing
    for _ in range(_MAX_CONTROLLER_PASSES):
        created = driver.next_pass(store, len(raws))
        if not created:
            break
        raws = raws + created
        _add_created(store, created, pending, others, sched)
        if store.keep_events:
            store.events.extend(driver.events)
        driver.events.clear()
        n += run_phase()
    else:
        driver.notices.append(f"workload controllers still creating pods after {_MAX_CONTROLLER_PASSES} passes; "
                              "stopped there")
    mark_gated_pods(sched, store)
    store.flush()
    outcomes: list[PodOutcome] = []
    for pod, _raw in pending:
        key = pod_key(pod)
        if key in others:
            continue
        cur = store.pods.get(key)
        if cur is None:
            continue
        msg = next((c.message for c in cur.status.conditions if c.type == "PodScheduled" and c.status == "False"), "")
        outcomes.append(PodOutcome(key, cur.spec.node_name or None, msg, attempts_by_pod.get(key, 0),
                                   _owner(cur)))
    result = SimulationResult(store, sched, raws, outcomes, others, records, n, driver.notices)
    if record:
        annotate(result)
    if timings is not None:
        timings["build"] = t1 - t0
        timings["build_cpu"] = c1 - c0
        timings["schedule"] = time.perf_counter() - t1
        timings["schedule_cpu"] = time.process_time() - c1
    return result


def mark_gated_pods(sched: Scheduler, store: ClusterStore) -> None:
    """Give the pods still held by a scheduling gate the ``PodScheduled=False, SchedulingGated``
    condition the API server sets on pods created with gates (the scheduler never attempts
    them, so nothing else would)."""
    for qpi in list(sched.queue.pending()):
        if qpi.gated and qpi.pod.spec.scheduling_gates:
            store.update_pod_condition(qpi.pod, "False", "SchedulingGated",
                                       "Scheduling is blocked due to non-empty scheduling gates")


def annotate(result: SimulationResult) -> None:
    """Write the ``kubesched.io/*`` result annotations on every attempted pod (last attempt)."""
    for key, rec in result.records.items():
        pod = result.store.pods.get(key)
        if pod is None:
            continue
        raw = result.store.raw.get(("Pod", pod.metadata.namespace or "", pod.metadata.name))
        if raw is None:
            continue
        ann = raw.setdefault("metadata", {}).setdefault("annotations", {})
        if ann is None:
            ann = raw["metadata"]["annotations"] = {}
        ann[ANNOTATION_PREFIX + "selected-node"] = rec.selected_node or ""
        ann[ANNOTATION_PREFIX + "filter-result"] = json.dumps(dict(rec.filter), separators=(",", ":"))
        ann[ANNOTATION_PREFIX + "score-result"] = json.dumps(dict(rec.score), separators=(",", ":"))
        ann[ANNOTATION_PREFIX + "finalscore-result"] = json.dumps(dict(rec.final_score), separators=(",", ":"))
