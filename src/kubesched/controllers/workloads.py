"""Workload controllers: the pods (and ReplicaSets, PVCs) their controllers create, for the simulator and the box.

Pure and level-triggered, like the controllers of kube-controller-manager: :meth:`Controllers.sync`
takes the workload objects, the pods and the nodes *as they are now* and returns what the
controllers would create in one pass (plus the ReplicaSets they scale and the objects they
delete). Calling it again after the scheduler has bound the new pods creates nothing more, except for StatefulSets with
``podManagementPolicy: OrderedReady``, which create the next ordinal only once the previous one
is Running and Ready.

Ready in the simulator: there is no kubelet, so a pod counts as Running and Ready once it is
bound (``spec.nodeName`` set) and not terminal — unless its ``status.conditions`` carry a
``Ready`` condition (a dumped cluster), which then decides. The box (``ready_when_bound=False``)
waits for its simulated kubelets' ``Ready`` condition.

What each controller does (upstream ``pkg/controller/...``, behaviour ported, not code):

* **Deployment** (``deployment/sync.go``, ``rolling.go``, ``recreate.go``, ``deployment/util``;
  pure pieces in :mod:`kubesched.controllers.deployments`): finds its new ReplicaSet (the oldest it
  controls whose template equals the Deployment's, ignoring ``pod-template-hash`` and empty
  fields) or creates ``<deployment>-<hash>`` with the hash label in its template and selector,
  the Deployment's annotations and ``deployment.kubernetes.io/{revision,desired-replicas,
  max-replicas}``; an old ReplicaSet brought back (``kubectl rollout undo``) takes the next
  revision and records ``revision-history``. RollingUpdate grows the new ReplicaSet within
  ``maxSurge`` (default 25 %, rounded up) and shrinks the old ones within ``maxUnavailable``
  (25 %, rounded down; unavailable old pods first); Recreate scales the old ones to 0 and
  creates the new one once their pods are gone; paused Deployments and scaling events scale
  proportionally (``max-replicas``); once complete, old ReplicaSets beyond
  ``revisionHistoryLimit`` (default 10) are deleted (:attr:`SyncResult.deleted`).
* **ReplicaSet / ReplicationController** (``replicaset/replica_set.go``): creates
  ``replicas - active`` pods named ``<owner>-<5 random chars>``, or deletes the surplus ranked
  by ``ActivePodsWithRanks`` (unassigned, pending, not ready, lower deletion cost, doubled up
  on a node with related pods, ready for less time, more restarts, newer first). Active pods
  are the pods it controls (ownerReference with ``controller: true``) plus orphans its selector
  matches (which it would adopt); Succeeded, Failed and terminating pods do not count.
* **StatefulSet** (``statefulset/stateful_set_utils.go``, ``stateful_set_control.go``): pods
  ``<set>-<ordinal>`` from ``spec.ordinals.start``, labels
  ``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index``,
  ``controller-revision-hash``, ``hostname`` = pod name, ``subdomain`` = ``serviceName``; for
  each ``volumeClaimTemplates`` entry a PVC ``<template>-<set>-<ordinal>`` (labels: the
  template's plus the selector's ``matchLabels``; created only if absent) and a pod volume of the
  template's name pointing at it. OrderedReady: stop at the first ordinal that is missing (create
  it) or not Running and Ready; Parallel: create every missing ordinal. Failed pods are deleted
  (then recreated); with every ordinal Running and Ready, ordinals beyond ``replicas`` are
  deleted highest first (OrderedReady: one at a time) and a RollingUpdate deletes the highest
  ordinal at or above ``partition`` whose ``controller-revision-hash`` is not the template's.
* **DaemonSet** (``daemon/daemon_controller.go`` ``nodeShouldRunDaemonPod``,
  ``daemon/util/daemonset_util.go``): one pod per node that should run it — ``nodeName`` of the
  template (if any) equal to the node, ``nodeSelector`` and required node affinity match, and no
  NoSchedule/NoExecute taint left untolerated by the template's tolerations plus the ones the
  controller adds (``AddOrUpdateDaemonPodTolerations``: not-ready and unreachable NoExecute;
  disk-, memory-, pid-pressure and unschedulable NoSchedule; network-unavailable with
  ``hostNetwork``). The pod's required node affinity terms are replaced by one term
  ``matchFields: metadata.name In [node]`` (``ReplaceDaemonSetPodNodeNameNodeAffinity``); labels
  ``controller-revision-hash`` and ``pod-template-generation``. Nodes that already hold one of
  its pods (``nodeName`` or that matchFields target) are skipped. In the box (not in
  ``simulate``, where a dumped DaemonSet's pods carry upstream's hash, not ours) it also deletes
  failed pods, pods on nodes that no longer qualify, all but the oldest pod of a node, and
  rolls a RollingUpdate (``maxUnavailable`` default 1) over pods of an older template.
* **Job** (``job/job_controller.go``, ``job/indexed_job_utils.go``): ``suspend`` or finished
  (a ``Complete``/``Failed`` condition) → nothing;
  active wanted = ``min(parallelism, completions - succeeded)`` (without ``completions``:
  ``parallelism`` until one pod succeeded). Pods carry the ``batch.kubernetes.io/job-tracking``
  finalizer and the ``batch.kubernetes.io/controller-uid``/``job-name`` labels (and their legacy
  ``controller-uid``/``job-name`` twins) the API server adds to a Job's template. Indexed: the
  lowest indexes neither succeeded (``status.completedIndexes`` or a Succeeded pod) nor active,
  each pod with ``generateName`` ``<job>-<index>-``, ``hostname`` ``<job>-<index>``, the
  ``batch.kubernetes.io/job-completion-index`` annotation and label and the
  ``JOB_COMPLETION_INDEX`` env var. More failed pods than ``backoffLimit`` (default 6): the
  active pods are deleted and none created. In ``simulate`` pods never finish (no run time is modelled),
  so a Job there has at most ``parallelism`` pods; in the box, pods finish when the simulated
  kubelets complete them and the next pass creates the following ones.
* **CronJob**: not expanded (it creates Jobs on a schedule); a notice says so.

Names from ``generateName`` are the prefix (cut to 58 characters) plus 5 characters drawn from
apimachinery's ``rand.String`` alphabet ``bcdfghjklmnpqrstvwxz2456789`` by a ``random.Random``
seeded with the simulation seed; UIDs are drawn from the same generator, so a run is
reproducible. ``pod-template-hash`` is upstream ``controller.ComputeHash``'s *shape* — FNV-1a
32-bit over the template (plus ``collisionCount`` as 8 little-endian bytes), the decimal sum
rendered with ``rand.SafeEncodeString`` — but the template is hashed as canonical JSON, not as Go's
``spew`` dump of the Go struct, so the value differs from the one a real cluster would show.

Invalid workloads raise :class:`WorkloadError` carrying the API server's message
(``Deployment.apps "web" is invalid: spec.selector: Required value``), from
:func:`kubesched.api.validation.validate_workload`.
"""

from __future__ import annotations

import copy
import random
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kubesched.api import validation
from kubesched.api.hashing import ALPHANUMS, compute_hash, fnv32a, safe_encode_string, statefulset_revision_hash
from kubesched.api.nodeselector import RequiredNodeAffinity
from kubesched.api.objects import Node, Pod, Toleration, decode
from kubesched.api.taints import find_matching_untolerated_taint
from kubesched.controllers import deployments as dep
from kubesched.controllers.successpolicy import match_success_policy
from kubesched.controllers.workloadstatus import is_pod_available
from kubesched.errors import InputError

if TYPE_CHECKING:
    from kubesched.features import FeatureGate

__all__ = [
    "ALPHANUMS",
    "POD_CLAIM_NAME_ANNOTATION",
    "WORKLOAD_KINDS",
    "Controllers",
    "SyncResult",
    "WorkloadError",
    "claim_name_prefix",
    "compute_hash",
    "daemon_pod_tolerations",
    "fnv32a",
    "generate_name",
    "owner_of",
    "safe_encode_string",
]

#: ``names.MaxGeneratedNameLength``: 63 - 5 random characters.
MAX_GENERATED_NAME_LENGTH = 58

#: Kinds this module expands (CronJob is recognised and skipped with a notice).
WORKLOAD_KINDS = frozenset({"Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet",
                            "Job", "CronJob"})

_GROUPS = {"Deployment": "apps", "ReplicaSet": "apps", "StatefulSet": "apps", "DaemonSet": "apps",
           "ReplicationController": "", "Job": "batch", "CronJob": "batch"}
_API_VERSIONS = {"apps": "apps/v1", "batch": "batch/v1", "": "v1"}

POD_TEMPLATE_HASH = "pod-template-hash"
CONTROLLER_REVISION_HASH = "controller-revision-hash"
STS_POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
#: Annotation on a claim the resourceclaim controller created: the pod's claim entry name.
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"

_NO_EXECUTE = "NoExecute"
_NO_SCHEDULE = "NoSchedule"


class WorkloadError(InputError):
    """An invalid workload object; ``message`` is the API server's ``... is invalid: ...``."""


# --------------------------------------------------------------------------- names

def generate_name(prefix: str, rng: random.Random) -> str:
    """``names.SimpleNameGenerator.GenerateName``: prefix (cut to 58 chars) + 5 random chars."""
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = prefix[:MAX_GENERATED_NAME_LENGTH]
    return prefix + "".join(rng.choice(ALPHANUMS) for _ in range(5))


def claim_name_prefix(pod_name: str, claim_name: str) -> str:
    """The ``generateName`` the resourceclaim controller gives a pod's claim from a template:
    ``<pod>-<claim>-``, both parts cut in proportion when longer than 57 characters (upstream
    ``pkg/controller/resourceclaim/controller.go`` ``handleClaim``)."""
    gen = f"{pod_name}-{claim_name}-"
    max_base = 57
    if len(gen) > max_base:
        gen = (pod_name[:len(pod_name) * max_base // len(gen)] + "-"
               + claim_name[:len(claim_name) * max_base // len(gen)])
    return gen


def _pods_prefix(controller_name: str) -> str:
    """``getPodsPrefix``: ``<name>-`` when that is a valid pod name prefix, else ``<name>``."""
    prefix = controller_name + "-"
    return prefix if not validation.is_dns1123_subdomain(prefix + "x") else controller_name


# --------------------------------------------------------------------------- small helpers

def _map(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    return _map(obj.get("metadata"))


def _int(v: Any, default: int) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def owner_of(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The controller ownerReference (``controller: true``) of ``obj``, or None."""
    for ref in _list(_meta(obj).get("ownerReferences")):
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def _is_active(pod: Mapping[str, Any]) -> bool:
    """``controller.IsPodActive``: not Succeeded/Failed and not being deleted."""
    phase = _map(pod.get("status")).get("phase")
    return phase not in ("Succeeded", "Failed") and not _meta(pod).get("deletionTimestamp")


def _is_running_ready(pod: Mapping[str, Any], ready_when_bound: bool) -> bool:
    """Running and Ready: a ``Ready`` condition decides when there is one; without one, a bound
    pod counts as Ready only when ``ready_when_bound`` (the simulator, which has no kubelet)."""
    if not _is_active(pod) or not _map(pod.get("spec")).get("nodeName"):
        return False
    status = _map(pod.get("status"))
    for c in _list(status.get("conditions")):
        if isinstance(c, dict) and c.get("type") == "Ready":
            return c.get("status") == "True"
    return ready_when_bound and status.get("phase") in (None, "", "Pending", "Running")


def _selector_matches(sel: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """A LabelSelector (matchLabels + matchExpressions) against labels; an empty one matches nothing
    here (controllers never adopt with an empty selector: validation rejects it)."""
    if not _map(sel.get("matchLabels")) and not _list(sel.get("matchExpressions")):
        return False
    return validation.label_selector_matches(sel, labels)


def _template_equal(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """``EqualIgnoreHash``: two pod templates equal once ``pod-template-hash`` is dropped."""
    return dep.template_key(a) == dep.template_key(b)


def _parse_index_ranges(s: Any) -> set[int]:
    """``status.completedIndexes`` (``"1,3-5"``) → ``{1, 3, 4, 5}``; malformed parts are ignored."""
    out: set[int] = set()
    if not isinstance(s, str):
        return out
    for part in s.split(","):
        m = re.fullmatch(r"\s*(\d+)(?:-(\d+))?\s*", part)
        if m:
            lo = int(m.group(1))
            hi = int(m.group(2)) if m.group(2) else lo
            out.update(range(lo, hi + 1))
    return out


# --------------------------------------------------------------------------- DaemonSet helpers

#: ``AddOrUpdateDaemonPodTolerations`` (daemon/util/daemonset_util.go), in upstream's order.
_DAEMON_TOLERATIONS: tuple[tuple[str, str], ...] = (
    ("node.kubernetes.io/not-ready", _NO_EXECUTE),
    ("node.kubernetes.io/unreachable", _NO_EXECUTE),
    ("node.kubernetes.io/disk-pressure", _NO_SCHEDULE),
    ("node.kubernetes.io/memory-pressure", _NO_SCHEDULE),
    ("node.kubernetes.io/pid-pressure", _NO_SCHEDULE),
    ("node.kubernetes.io/unschedulable", _NO_SCHEDULE),
)


def daemon_pod_tolerations(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pod spec's tolerations after ``AddOrUpdateDaemonPodTolerations``.

    Each added toleration (``operator: Exists``) replaces a toleration matching it on key,
    operator, value and effect (``AddOrUpdateTolerationInPodSpec``), else is appended.
    """
    tols = [dict(t) for t in _list(spec.get("tolerations")) if isinstance(t, dict)]
    wanted = list(_DAEMON_TOLERATIONS)
    if spec.get("hostNetwork") is True:
        wanted.append(("node.kubernetes.io/network-unavailable", _NO_SCHEDULE))
    for key, effect in wanted:
        new = {"key": key, "operator": "Exists", "effect": effect}
        for i, old in enumerate(tols):
            if (old.get("key", ""), old.get("operator") or "Equal", old.get("value", ""), old.get("effect", "")) \
                    == (key, "Exists", "", effect):
                tols[i] = new
                break
        else:
            tols.append(new)
    return tols


def _node_name_affinity(affinity: Any, node_name: str) -> dict[str, Any]:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity``: required node affinity := one matchFields term."""
    aff = copy.deepcopy(affinity) if isinstance(affinity, dict) else {}
    na = aff.get("nodeAffinity")
    if not isinstance(na, dict):
        na = aff["nodeAffinity"] = {}
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(req, dict):
        req = na["requiredDuringSchedulingIgnoredDuringExecution"] = {}
    req["nodeSelectorTerms"] = [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]
    return aff


def _daemon_target_node(pod: Mapping[str, Any]) -> str | None:
    """``util.GetTargetNodeName``: ``spec.nodeName``, else the single matchFields metadata.name value."""
    spec = _map(pod.get("spec"))
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    req = _map(_map(_map(spec.get("affinity")).get("nodeAffinity"))
               .get("requiredDuringSchedulingIgnoredDuringExecution"))
    for term in _list(req.get("nodeSelectorTerms")):
        for mf in _list(_map(term).get("matchFields")):
            mf = _map(mf)
            values = _list(mf.get("values"))
            if mf.get("key") == "metadata.name" and mf.get("operator") == "In" and len(values) == 1:
                return str(values[0])
    return None


# --------------------------------------------------------------------------- the controllers

class _Pods:
    """The pods of one pass, indexed as the controllers look them up: by namespace, by
    controller (``(namespace, kind, name)`` of the controller ownerReference) and orphans."""

    def __init__(self, pods: Iterable[Mapping[str, Any]]) -> None:
        self.by_ns: dict[str, list[Mapping[str, Any]]] = {}
        self.by_owner: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
        self.orphans: dict[str, list[Mapping[str, Any]]] = {}
        for p in pods:
            self.append(p)

    def append(self, pod: Mapping[str, Any]) -> None:
        ns = str(_meta(pod).get("namespace") or "")
        self.by_ns.setdefault(ns, []).append(pod)
        ref = owner_of(pod)
        if ref is None:
            self.orphans.setdefault(ns, []).append(pod)
        else:
            self.by_owner.setdefault((ns, str(ref.get("kind")), str(ref.get("name"))), []).append(pod)

    def in_namespace(self, ns: Any) -> list[Mapping[str, Any]]:
        return self.by_ns.get(str(ns or ""), [])

    def owned_by(self, owner: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """Candidates controlled by ``owner`` (same namespace, kind and name; uid not checked)."""
        m = _meta(owner)
        return self.by_owner.get((str(m.get("namespace") or ""), str(owner.get("kind")), str(m.get("name"))), [])


@dataclass
class SyncResult:
    """What one controller pass created or changed.

    ``created``: new objects in creation order (``ReplicaSet``, ``PersistentVolumeClaim`` and
    ``Pod`` mappings, each with ``apiVersion``/``kind``), each paired with the index of the input
    workload that caused it (into the list given to :class:`Controllers`). ``updated``: input
    objects replaced by a new mapping (a ReplicaSet scaled by its Deployment), same pairing.
    ``notices``: one line each (CronJobs skipped, rollouts not simulated).
    """

    created: list[tuple[dict[str, Any], int]] = field(default_factory=list)
    updated: list[tuple[dict[str, Any], int]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    deleted: list[tuple[dict[str, Any], int]] = field(default_factory=list)
    """Objects the controllers delete (surplus pods of a scale-down, old ReplicaSets beyond a
    Deployment's ``revisionHistoryLimit``), same pairing."""
    revisions: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    """``(Deployment, revision)``: the ``deployment.kubernetes.io/revision`` annotation to set."""
    events: list[tuple[dict[str, Any], str, str, str]] = field(default_factory=list)
    """Events the controllers record: ``(involved object, type, reason, message)`` (the Job
    controller's ``WorkloadCreated`` / ``PodGroupCreated``)."""


class Controllers:
    """The workload controllers over a fixed set of workload objects.

    ``workloads`` are mappings of the kinds in :data:`WORKLOAD_KINDS` (namespace already set);
    they are validated at construction (:class:`WorkloadError` with the index of the bad one in
    ``WorkloadError.path`` as ``"#<index>"``, for the caller to turn into a file:line). The
    objects are not mutated. Objects without ``metadata.uid`` get one drawn from ``seed`` (stable
    for the life of this instance); :meth:`sync` is the controllers' pass. ``ready_when_bound``:
    a bound pod without a ``Ready`` condition counts as Running and Ready (the simulator); the
    box, whose kubelets report ``Ready``, passes False.
    """

    def __init__(self, workloads: list[dict[str, Any]], *, seed: int = 0, ready_when_bound: bool = True,
                 features: FeatureGate | None = None) -> None:
        self.features = features
        """The kube-controller-manager's gates: WorkloadWithJob (with GenericWorkload) makes the
        Job controller create a Workload and a PodGroup per Job (None: the v1.37 defaults, off)."""
        self._scheduling: list[dict[str, Any]] = []
        self.rng = random.Random(seed)
        self.now = datetime.now(UTC)
        """The time of the current pass (pod availability, scale-down ranking)."""
        self.ready_when_bound = ready_when_bound
        self.workloads = list(workloads)
        self._uids: dict[tuple[str, str, str], str] = {}
        self._notified: set[str] = set()
        self._created_rs: list[tuple[dict[str, Any], int]] = []
        self._created_pvcs: set[tuple[str, str]] = set()
        for i, w in enumerate(self.workloads):
            kind = str(w.get("kind"))
            errs = validation.validate_workload(w)
            if errs:
                name = str(_meta(w).get("name") or "")
                raise WorkloadError(validation.invalid_message(kind, name, errs, group=_GROUPS.get(kind, "")), f"#{i}")

    # ---- identity

    def uid(self, obj: Mapping[str, Any]) -> str:
        meta = _meta(obj)
        if meta.get("uid"):
            return str(meta["uid"])
        key = (str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name")))
        if key not in self._uids:
            self._uids[key] = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        return self._uids[key]

    def generated_uid(self, obj: Mapping[str, Any]) -> str | None:
        """The uid drawn for ``obj`` (an input without ``metadata.uid``) if a pass used one."""
        meta = _meta(obj)
        return self._uids.get((str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name"))))

    def _controller_ref(self, owner: Mapping[str, Any]) -> dict[str, Any]:
        """``metav1.NewControllerRef``."""
        kind = str(owner.get("kind"))
        return {"apiVersion": _API_VERSIONS[_GROUPS[kind]], "kind": kind, "name": _meta(owner).get("name"),
                "uid": self.uid(owner), "controller": True, "blockOwnerDeletion": True}

    def _controls(self, owner: Mapping[str, Any], obj: Mapping[str, Any]) -> bool:
        ref = owner_of(obj)
        if ref is None:
            return False
        if ref.get("kind") != owner.get("kind") or ref.get("name") != _meta(owner).get("name"):
            return False
        own_uid = _meta(owner).get("uid")  # an input without uids is matched by kind and name
        return not (ref.get("uid") and own_uid and ref.get("uid") != own_uid)

    def _claimed(self, owner: Mapping[str, Any], pods: _Pods,
                 selector: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """``ClaimPods``: pods ``owner`` controls plus orphans its selector matches (adopted)."""
        out = [p for p in pods.owned_by(owner) if self._controls(owner, p)]
        out.extend(p for p in pods.orphans.get(str(_meta(owner).get("namespace") or ""), [])
                   if _selector_matches(selector, _map(_meta(p).get("labels"))))
        return out

    # ---- pod construction

    def _pod_from_template(self, template: Mapping[str, Any], owner: Mapping[str, Any],
                           generate_prefix: str, taken: set[tuple[str, str]],
                           name: str | None = None) -> dict[str, Any]:
        """``GetPodFromTemplate``: labels, annotations, finalizers and spec from the template, a
        controller ownerReference, ``generateName`` and a name (``name`` or prefix + 5 random chars)."""
        tmeta = _map(template.get("metadata"))
        ns = str(_meta(owner).get("namespace") or "default")
        meta: dict[str, Any] = {}
        if name is None:
            while True:
                name = generate_name(generate_prefix, self.rng)
                if (ns, name) not in taken:
                    break
            meta["generateName"] = generate_prefix[:MAX_GENERATED_NAME_LENGTH]
        meta["name"] = name
        meta["namespace"] = ns
        meta["uid"] = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        if tmeta.get("labels"):
            meta["labels"] = copy.deepcopy(tmeta["labels"])
        if tmeta.get("annotations"):
            meta["annotations"] = copy.deepcopy(tmeta["annotations"])
        if tmeta.get("finalizers"):
            meta["finalizers"] = list(tmeta["finalizers"])
        meta["ownerReferences"] = [self._controller_ref(owner)]
        taken.add((ns, name))
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                "spec": copy.deepcopy(_map(template.get("spec"))), "status": {"phase": "Pending"}}

    # ---- the pass

    def sync(self, pods: list[dict[str, Any]], nodes: list[dict[str, Any]],
             claims: Iterable[Mapping[str, Any]] = (),
             scheduling: Iterable[Mapping[str, Any]] = ()) -> SyncResult:
        """One pass of every controller over the current ``pods``, ``nodes`` and PVCs (``claims``).

        ReplicaSets created or scaled by earlier passes are remembered by this instance; pods
        and PVCs created by earlier passes must be passed back in. ``scheduling``: the
        Workloads and PodGroups that exist (the Job controller's informers); those created by
        earlier passes are remembered. Returns the :class:`SyncResult`; nothing passed in is
        mutated.
        """
        res = SyncResult()
        self.now = datetime.now(UTC)
        known = {(str(o.get("kind")), str(_meta(o).get("namespace") or ""), str(_meta(o).get("name")))
                 for o in scheduling}
        self._scheduling = [dict(o) for o in scheduling] + [
            o for o in self._scheduling
            if (str(o.get("kind")), str(_meta(o).get("namespace") or ""), str(_meta(o).get("name"))) not in known]
        taken = {(str(_meta(p).get("namespace") or ""), str(_meta(p).get("name"))) for p in pods}
        index = _Pods(pods)
        node_cache: dict[str, Node | None] = {}
        # Deployments first: the ReplicaSets they create or scale are synced in the same pass
        rs_by_owner: dict[tuple[str, str], list[tuple[dict[str, Any], int, bool]]] = {}
        rs_names: set[tuple[str, str]] = set()
        for rs, k, made in self._replicasets():
            ns = str(_meta(rs).get("namespace") or "")
            rs_names.add((ns, str(_meta(rs).get("name"))))
            ref = owner_of(rs)
            if ref is not None and ref.get("kind") == "Deployment":
                rs_by_owner.setdefault((ns, str(ref.get("name"))), []).append((rs, k, made))
        for i, w in enumerate(self.workloads):
            if w.get("kind") == "Deployment":
                self._sync_deployment(w, i, rs_by_owner.get((str(_meta(w).get("namespace") or ""),
                                                             str(_meta(w).get("name"))), []), rs_names, index, res)
        for i, w in enumerate(self.workloads):
            if w.get("kind") == "ReplicaSet":
                self._sync_replicas(w, i, index, taken, res)
        for rs, i in self._created_rs:
            self._sync_replicas(rs, i, index, taken, res)
        pvcs = {(str(_meta(o).get("namespace")), str(_meta(o).get("name"))) for o in claims} | self._created_pvcs
        for i, w in enumerate(self.workloads):
            kind = w.get("kind")
            if kind == "ReplicationController":
                self._sync_replicas(w, i, index, taken, res)
            elif kind == "StatefulSet":
                self._sync_statefulset(w, i, index, taken, pvcs, res)
            elif kind == "DaemonSet":
                self._sync_daemonset(w, i, index, nodes, node_cache, taken, res)
            elif kind == "Job":
                self._sync_job(w, i, index, taken, res)
            elif kind == "CronJob":
                self._notice(res, f"CronJob {_meta(w).get('namespace')}/{_meta(w).get('name')}: not expanded "
                                  "(a CronJob creates Jobs on its schedule; give its Job to simulate it)")
        return res

    def _notice(self, res: SyncResult, text: str) -> None:
        if text not in self._notified:
            self._notified.add(text)
            res.notices.append(text)

    def _replicasets(self) -> list[tuple[dict[str, Any], int, bool]]:
        """Every ReplicaSet known: ``(object, index, created)`` — input ones (index: their own)
        and those created by passes (index: their Deployment's)."""
        out = [(w, i, False) for i, w in enumerate(self.workloads) if w.get("kind") == "ReplicaSet"]
        out.extend((rs, i, True) for rs, i in self._created_rs)
        return out

    def _rs_pods(self, rs: Mapping[str, Any], pods: _Pods) -> list[Mapping[str, Any]]:
        """The active pods ``rs`` controls."""
        return [p for p in pods.owned_by(rs) if self._controls(rs, p) and _is_active(p)]

    def _available(self, pod: Mapping[str, Any], min_ready: int) -> bool:
        """Available: Ready for ``min_ready`` seconds (simulator: bound counts as Ready, at once)."""
        if self.ready_when_bound:
            return _is_running_ready(pod, True)
        return _is_running_ready(pod, False) and is_pod_available(pod, min_ready, self.now)

    def _sync_deployment(self, d: dict[str, Any], i: int, candidates: list[tuple[dict[str, Any], int, bool]],
                         rs_names: set[tuple[str, str]], pods: _Pods, res: SyncResult) -> None:
        """``syncDeployment`` (deployment_controller.go): paused and scaling events → ``sync``
        (proportional scaling), else ``rolloutRecreate`` / ``rolloutRolling``; old ReplicaSets
        beyond ``revisionHistoryLimit`` are deleted once the rollout is complete.

        ``candidates``: ReplicaSets whose controller reference names this Deployment;
        ``rs_names``: every ReplicaSet's ``(namespace, name)`` (for hash collisions)."""
        meta, spec = _meta(d), _map(d.get("spec"))
        want = _int(spec.get("replicas"), 1)
        template = _map(spec.get("template"))
        owned = [(rs, k, created) for rs, k, created in candidates if self._controls(d, rs)]
        views = [copy.deepcopy(rs) for rs, _, _ in owned]
        origin = {id(v): o for v, o in zip(views, owned, strict=True)}
        new = next((v for v in sorted(views, key=dep.by_creation)
                    if _template_equal(_map(_map(v.get("spec")).get("template")), template)), None)
        olds = [v for v in views if v is not new]
        changed: set[int] = set()
        surge = dep.max_surge(d)
        min_ready = _int(spec.get("minReadySeconds"), 0)
        avail_cache: dict[int, int] = {}

        def available(rs: Mapping[str, Any]) -> int:
            if id(rs) not in avail_cache:
                avail_cache[id(rs)] = sum(self._available(p, min_ready) for p in self._rs_pods(rs, pods))
            return avail_cache[id(rs)]

        def scale(rs: dict[str, Any], n: int, force: bool = False) -> bool:
            """``scaleReplicaSet``: True when the size changed."""
            if not force and dep.replicas(rs) == n:
                return False
            size = dep.replicas(rs) != n
            if dep.set_replicas_annotations(rs, want, want + surge) or size:
                rs.setdefault("spec", {})["replicas"] = n
                changed.add(id(rs))
            return size

        def active(rss: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [r for r in rss if dep.replicas(r) > 0]

        def new_revision() -> int:
            return 1 + max((r for o in olds if (r := dep.revision(o)) is not None), default=0)

        if new is not None:  # getNewReplicaSet on the existing new ReplicaSet
            upd = dep.set_new_rs_annotations(d, new, new_revision(), exists=True)
            if upd or _int(_map(new.get("spec")).get("minReadySeconds"), 0) != min_ready:
                if min_ready:
                    new["spec"]["minReadySeconds"] = min_ready
                else:
                    new["spec"].pop("minReadySeconds", None)
                changed.add(id(new))
            self._note_revision(d, new, res)

        def create_new(n: int) -> dict[str, Any]:
            rs = self._new_replica_set(d, i, template, n, new_revision(), rs_names, res)
            self._note_revision(d, rs, res)
            return rs

        def cleanup() -> None:
            """``cleanupDeployment``: old ReplicaSets beyond revisionHistoryLimit, oldest revision first."""
            limit = spec.get("revisionHistoryLimit")
            if not isinstance(limit, int):
                limit = 10
            alive = [o for o in olds if not _meta(o).get("deletionTimestamp")]
            for o in dep.by_revision(alive)[:max(0, len(alive) - limit)]:
                st = _map(o.get("status"))
                if (self._rs_pods(o, pods) or dep.replicas(o) != 0
                        or _int(_meta(o).get("generation"), 0) > _int(st.get("observedGeneration"), 0)):
                    continue
                res.deleted.append((origin[id(o)][0], i))

        def complete() -> bool:
            st = _map(d.get("status"))
            return (_int(st.get("updatedReplicas"), 0) == want and _int(st.get("replicas"), 0) == want
                    and _int(st.get("availableReplicas"), 0) == want
                    and _int(st.get("observedGeneration"), 0) >= _int(meta.get("generation"), 0))

        def proportional() -> None:
            """``scale``: the active (or latest) ReplicaSet takes the new size, or every one its share."""
            every = [r for r in [*olds, new] if r is not None]
            act = active(every)
            target: dict[str, Any] | None = None
            if len(act) == 1:
                target = act[0]
            elif not act:
                latest = sorted(olds, key=dep.by_creation, reverse=True)
                target = new if new is not None else (latest[0] if latest else None)
            if target is not None or (not act and not olds and new is None):
                if target is not None and dep.replicas(target) != want:
                    scale(target, want)
                return
            ann = _map(_meta(new).get("annotations")) if new is not None else {}
            if new is not None and dep.replicas(new) == want and ann.get(dep.DESIRED_REPLICAS) == str(want) \
                    and available(new) == want:  # IsSaturated
                for o in active(olds):
                    scale(o, 0)
                return
            if not dep.is_rolling(d):
                return
            allowed = want + surge if want > 0 else 0
            to_add = allowed - sum(dep.replicas(r) for r in act)
            if to_add > 0:
                act = dep.by_size_newer(act)
            elif to_add < 0:
                act = dep.by_size_older(act)
            added = 0
            sizes = []
            for r in act:
                prop = dep.replica_set_proportion(r, d, to_add, added) if to_add else 0
                sizes.append(dep.replicas(r) + prop)
                added += prop
            for k, r in enumerate(act):
                n = sizes[k]
                if k == 0 and to_add:
                    n = max(0, n + to_add - added)
                scale(r, n, force=True)

        scaling = any(_map(_meta(r).get("annotations")).get(dep.DESIRED_REPLICAS, str(want)) != str(want)
                      for r in active([x for x in [*olds, new] if x is not None]))
        if spec.get("paused") is True or scaling:
            proportional()
            if spec.get("paused") is True:
                cleanup()
        elif not dep.is_rolling(d):  # rolloutRecreate
            scaled_down = False
            for o in active(olds):
                scaled_down = scale(o, 0) or scaled_down
            if not scaled_down and not any(p for o in olds for p in pods.owned_by(o) if self._controls(o, p)
                                           and _map(p.get("status")).get("phase") not in ("Succeeded", "Failed")):
                if new is None:
                    create_new(want)
                else:
                    scale(new, want)
                if complete():
                    cleanup()
        else:  # rolloutRolling
            if new is None:
                new = create_new(dep.new_rs_new_replicas(d, olds, 0))
                created_now = True
            else:
                created_now = False
            if not created_now and self._reconcile_new(d, new, olds, scale):
                pass
            elif not self._reconcile_old(d, new, olds, scale, available, created_now):
                if complete():
                    cleanup()
        for v in views:
            if id(v) not in changed:
                continue
            rs, k, created = origin[id(v)]
            if created:
                self._created_rs = [(v if r is rs else r, j) for r, j in self._created_rs]
            else:
                self.workloads[k] = v
                res.updated.append((v, k))

    @staticmethod
    def _reconcile_new(d: Mapping[str, Any], new: dict[str, Any], olds: list[dict[str, Any]], scale: Any) -> bool:
        """``reconcileNewReplicaSet``: grow the new ReplicaSet within ``maxSurge`` (True: scaled)."""
        want = dep.replicas(d)
        if dep.replicas(new) == want:
            return False
        if dep.replicas(new) > want:
            return bool(scale(new, want))
        return bool(scale(new, dep.new_rs_new_replicas(d, [*olds, new], dep.replicas(new))))

    @staticmethod
    def _reconcile_old(d: Mapping[str, Any], new: dict[str, Any], olds: list[dict[str, Any]], scale: Any,
                       available: Any, new_is_fresh: bool) -> bool:
        """``reconcileOldReplicaSets``: shrink old ReplicaSets within ``maxUnavailable`` — first
        their unavailable pods (``cleanupUnhealthyReplicas``), then down to the minimum available
        (``scaleDownOldReplicaSetsForRollingUpdate``). True: something scaled."""
        old_count = sum(dep.replicas(o) for o in olds)
        if old_count == 0:
            return False
        min_available = dep.replicas(d) - dep.max_unavailable(d)
        new_available = 0 if new_is_fresh else available(new)
        max_down = old_count + dep.replicas(new) - min_available - (dep.replicas(new) - new_available)
        if max_down <= 0:
            return False
        cleaned = 0
        for o in sorted((o for o in olds if dep.replicas(o) > 0), key=dep.by_creation):
            if cleaned >= max_down:
                break
            unhealthy = dep.replicas(o) - available(o)
            if unhealthy <= 0:
                continue
            k = min(max_down - cleaned, unhealthy)
            scale(o, dep.replicas(o) - k)
            cleaned += k
        total_available = sum(available(o) for o in olds) + new_available
        done = 0
        if total_available > min_available:
            goal = total_available - min_available
            for o in sorted((o for o in olds if dep.replicas(o) > 0), key=dep.by_creation):
                if done >= goal:
                    break
                k = min(dep.replicas(o), goal - done)
                scale(o, dep.replicas(o) - k)
                done += k
        return cleaned + done > 0

    def _note_revision(self, d: Mapping[str, Any], rs: Mapping[str, Any], res: SyncResult) -> None:
        """``SetDeploymentRevision``: the Deployment's revision annotation follows its new ReplicaSet."""
        rev = _map(_meta(rs).get("annotations")).get(dep.REVISION)
        if rev is not None and _map(_meta(d).get("annotations")).get(dep.REVISION) != rev:
            res.revisions.append((dict(d), str(rev)))

    def _new_replica_set(self, d: Mapping[str, Any], i: int, template: Mapping[str, Any], replicas: int,
                         revision: int, rs_names: set[tuple[str, str]], res: SyncResult) -> dict[str, Any]:
        """``getNewReplicaSet`` creating ``<deployment>-<pod-template-hash>``."""
        meta, spec = _meta(d), _map(d.get("spec"))
        ns, name = str(meta.get("namespace")), str(meta.get("name"))
        status_cc = _map(d.get("status")).get("collisionCount")
        collision: int | None = status_cc if isinstance(status_cc, int) else None
        while True:
            h = compute_hash(template, collision)
            rs_name = f"{name}-{h}"
            if (ns, rs_name) not in rs_names:
                break
            collision = (collision or 0) + 1  # a ReplicaSet of that name with another template
        rs_template = copy.deepcopy(dict(template))
        tmeta = rs_template.setdefault("metadata", {})
        tmeta["labels"] = {**_map(tmeta.get("labels")), POD_TEMPLATE_HASH: h}
        selector = copy.deepcopy(_map(spec.get("selector")))
        selector["matchLabels"] = {**_map(selector.get("matchLabels")), POD_TEMPLATE_HASH: h}
        rs_meta: dict[str, Any] = {
            "name": rs_name, "namespace": ns,
            "uid": str(uuid.UUID(int=self.rng.getrandbits(128), version=4)),
            "labels": dict(tmeta["labels"]),
            "annotations": {},
            "ownerReferences": [self._controller_ref(d)],
        }
        rs_spec: dict[str, Any] = {"replicas": replicas, "selector": selector, "template": rs_template}
        if spec.get("minReadySeconds"):
            rs_spec["minReadySeconds"] = spec["minReadySeconds"]
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": rs_meta, "spec": rs_spec}
        dep.set_new_rs_annotations(d, rs, revision, exists=False)
        self._created_rs.append((rs, i))
        rs_names.add((ns, rs_name))
        res.created.append((rs, i))
        return rs

    def _sync_replicas(self, rs: Mapping[str, Any], i: int, pods: _Pods,
                       taken: set[tuple[str, str]], res: SyncResult) -> None:
        """ReplicaSet and ReplicationController: ``manageReplicas`` (creations only)."""
        spec = _map(rs.get("spec"))
        sel = spec.get("selector")
        template = _map(spec.get("template"))
        if rs.get("kind") == "ReplicationController":
            sel = {"matchLabels": _map(sel) or _map(_map(template.get("metadata")).get("labels"))}
        active = [p for p in self._claimed(rs, pods, _map(sel)) if _is_active(p)]
        diff = _int(spec.get("replicas"), 1) - len(active)
        if diff < 0:  # manageReplicas: delete the surplus, lowest-ranked first
            owner = owner_of(rs)
            related = active
            if owner is not None and owner.get("uid"):
                siblings = [r for r, _, _ in self._replicasets() if (owner_of(r) or {}).get("uid") == owner.get("uid")]
                related = [p for r in siblings for p in self._rs_pods(r, pods)]
            gate = self.features is None or self.features.enabled("PodDeletionCost")
            for p in dep.pods_to_delete(active, related, -diff, now=self.now, deletion_cost=gate):
                res.deleted.append((dict(p), i))
            return
        prefix = _pods_prefix(str(_meta(rs).get("name")))
        for _ in range(diff):
            pod = self._pod_from_template(template, rs, prefix, taken)
            pods.append(pod)
            res.created.append((pod, i))

    def _sync_statefulset(self, s: dict[str, Any], i: int, pods: _Pods,
                          taken: set[tuple[str, str]], pvcs: set[tuple[str, str]], res: SyncResult) -> None:
        meta, spec = _meta(s), _map(s.get("spec"))
        ns, name = str(meta.get("namespace")), str(meta.get("name"))
        replicas = _int(spec.get("replicas"), 1)
        start = _int(_map(spec.get("ordinals")).get("start"), 0)
        parallel = spec.get("podManagementPolicy") == "Parallel"
        template = _map(spec.get("template"))
        revision = f"{name}-{statefulset_revision_hash(template, _map(s.get('status')).get('collisionCount'))}"
        by_name = {str(_meta(p).get("name")): p for p in pods.in_namespace(ns)
                   if self._controls(s, p) or owner_of(p) is None}
        claim_templates = [c for c in _list(spec.get("volumeClaimTemplates")) if isinstance(c, dict)]
        sel_labels = _map(_map(spec.get("selector")).get("matchLabels"))
        retention = _map(spec.get("persistentVolumeClaimRetentionPolicy"))
        for ordinal in range(start, start + replicas):  # a failed or succeeded pod is deleted, then recreated
            existing = by_name.get(f"{name}-{ordinal}")
            if existing is not None and _map(existing.get("status")).get("phase") in ("Succeeded", "Failed") \
                    and not _meta(existing).get("deletionTimestamp"):
                res.deleted.append((dict(existing), i))
        blocked = False
        for ordinal in range(start, start + replicas):
            pod_name = f"{name}-{ordinal}"
            existing = by_name.get(pod_name)
            if existing is not None and _is_active(existing):
                if not parallel and not _is_running_ready(existing, self.ready_when_bound):
                    blocked = True  # OrderedReady: wait for this one
                    break
                continue
            if existing is not None and not parallel:
                blocked = True  # a terminal pod is deleted and recreated by the controller; it waits for that
                break
            if existing is not None:
                continue
            # storage first (createPersistentVolumeClaims), then the pod
            volumes: list[dict[str, Any]] = []
            for ct in claim_templates:
                cmeta = _map(ct.get("metadata"))
                tname = str(cmeta.get("name") or "")
                claim_name = f"{tname}-{name}-{ordinal}"
                volumes.append({"name": tname, "persistentVolumeClaim": {"claimName": claim_name}})
                if (ns, claim_name) in pvcs:
                    continue
                pmeta: dict[str, Any] = {"name": claim_name, "namespace": ns,
                                         "uid": str(uuid.UUID(int=self.rng.getrandbits(128), version=4))}
                labels = {**_map(cmeta.get("labels")), **sel_labels}
                if labels:
                    pmeta["labels"] = labels
                if cmeta.get("annotations"):
                    pmeta["annotations"] = copy.deepcopy(cmeta["annotations"])
                if retention.get("whenDeleted") == "Delete":
                    pmeta["ownerReferences"] = [self._controller_ref(s)]
                pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": pmeta,
                       "spec": copy.deepcopy(_map(ct.get("spec"))), "status": {"phase": "Pending"}}
                pvcs.add((ns, claim_name))
                self._created_pvcs.add((ns, claim_name))
                res.created.append((pvc, i))
            pod = self._pod_from_template(template, s, _pods_prefix(name), taken, name=pod_name)
            pod["metadata"]["generateName"] = _pods_prefix(name)
            labels = pod["metadata"].setdefault("labels", {})
            labels[STS_POD_NAME] = pod_name
            labels[POD_INDEX] = str(ordinal)
            labels[CONTROLLER_REVISION_HASH] = revision
            pspec = pod["spec"]
            pspec["hostname"] = pod_name
            if spec.get("serviceName"):
                pspec["subdomain"] = spec["serviceName"]
            if volumes:
                names = {v["name"] for v in volumes}
                pspec["volumes"] = volumes + [v for v in _list(pspec.get("volumes"))
                                              if _map(v).get("name") not in names]
            pods.append(pod)
            res.created.append((pod, i))
            if not parallel:
                blocked = True  # OrderedReady: the next one once this one is Running and Ready
                break
        if not blocked:
            st = _map(s.get("status"))
            # the revision a dumped StatefulSet's status names is its pods' (upstream's hash is not ours)
            if st.get("updateRevision") and _int(st.get("observedGeneration"), 0) >= _int(meta.get("generation"), 1):
                revision = str(st["updateRevision"])
            self._statefulset_delete(s, i, by_name, revision, res)

    def _statefulset_delete(self, s: dict[str, Any], i: int, by_name: dict[str, Mapping[str, Any]],
                            revision: str, res: SyncResult) -> None:
        """``updateStatefulSet``'s deletions (stateful_set_control.go) once every wanted ordinal
        exists: scale-down removes the ordinals beyond ``replicas``, highest first (OrderedReady:
        one at a time, only while all others are Running and Ready; Parallel: all at once); then a
        RollingUpdate deletes the highest ordinal ``>= partition`` not at the update revision, one
        at a time while every pod is Running and Ready (it is recreated at the new revision)."""
        meta, spec = _meta(s), _map(s.get("spec"))
        name = str(meta.get("name"))
        replicas = _int(spec.get("replicas"), 1)
        start = _int(_map(spec.get("ordinals")).get("start"), 0)
        parallel = spec.get("podManagementPolicy") == "Parallel"
        mine: dict[int, Mapping[str, Any]] = {}
        for pod_name, p in by_name.items():
            suffix = pod_name[len(name) + 1:]
            if pod_name.startswith(name + "-") and suffix.isdigit() and self._controls(s, p):
                mine[int(suffix)] = p
        if any(_meta(p).get("deletionTimestamp") for p in mine.values()) and not parallel:
            return  # wait for the pod being deleted
        healthy = all(_is_running_ready(p, self.ready_when_bound) for k, p in mine.items()
                      if start <= k < start + replicas)
        condemned = sorted((k for k, p in mine.items() if not start <= k < start + replicas
                            and not _meta(p).get("deletionTimestamp")), reverse=True)
        if condemned:
            if parallel:
                res.deleted.extend((dict(mine[k]), i) for k in condemned)
            elif healthy:
                res.deleted.append((dict(mine[condemned[0]]), i))
            return
        strategy = _map(spec.get("updateStrategy"))
        if strategy.get("type", "RollingUpdate") != "RollingUpdate" or not healthy:
            return
        partition = _int(_map(strategy.get("rollingUpdate")).get("partition"), 0)
        for k in range(start + replicas - 1, start + partition - 1, -1):
            stale = mine.get(k)
            if stale is not None and _map(_meta(stale).get("labels")).get(CONTROLLER_REVISION_HASH) != revision:
                res.deleted.append((dict(stale), i))
                return

    def _sync_daemonset(self, ds: dict[str, Any], i: int, pods: _Pods, nodes: list[dict[str, Any]],
                        node_cache: dict[str, Node | None], taken: set[tuple[str, str]], res: SyncResult) -> None:
        meta, spec = _meta(ds), _map(ds.get("spec"))
        ns, name = str(meta.get("namespace")), str(meta.get("name"))
        template = copy.deepcopy(_map(spec.get("template")))
        tspec = template.setdefault("spec", {})
        tspec["tolerations"] = daemon_pod_tolerations(tspec)
        h = compute_hash(_map(spec.get("template")), _map(ds.get("status")).get("collisionCount"))
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**_map(tmeta.get("labels")), CONTROLLER_REVISION_HASH: h,
                           # GetTemplateGeneration: the annotation the API server sets to 1 on create
                           "pod-template-generation": str(_map(meta.get("annotations")).get(
                               "deprecated.daemonset.template.generation", "1"))}
        where = f"DaemonSet {ns}/{name}"
        try:
            probe: Pod = decode(Pod, {"metadata": {"name": name, "namespace": ns}, "spec": tspec})
        except InputError as e:
            raise WorkloadError(f"{where}: spec.template.{e}", f"#{i}") from None
        affinity = RequiredNodeAffinity(probe)
        tolerations: list[Toleration] = list(probe.spec.tolerations or [])
        claimed = self._claimed(ds, pods, _map(spec.get("selector")))
        by_node: dict[str, list[Mapping[str, Any]]] = {}
        for p in claimed:
            if _is_active(p) and (t := _daemon_target_node(p)) is not None:
                by_node.setdefault(t, []).append(p)
        served = set(by_node)
        fixed = tspec.get("nodeName")

        def should_run(raw_node: Mapping[str, Any]) -> bool:
            """``nodeShouldRunDaemonPod``: name, required node affinity, untolerated taints."""
            node_name = str(_meta(raw_node).get("name"))
            if fixed and fixed != node_name:
                return False
            if node_name not in node_cache:
                try:
                    node_cache[node_name] = decode(Node, raw_node)
                except InputError:
                    node_cache[node_name] = None  # the simulator reports bad nodes itself
            node = node_cache[node_name]
            if node is None or not affinity.match(node.metadata.labels or {}, node_name):
                return False
            return find_matching_untolerated_taint(node.spec.taints or [], tolerations,
                                                   lambda t: t.effect in (_NO_SCHEDULE, _NO_EXECUTE)) is None

        if not self.ready_when_bound:  # the box: pods that should not be where they are go
            self._daemonset_delete(ds, i, spec, h, by_node, claimed, {str(_meta(n).get("name")): should_run(n)
                                                                      for n in nodes if _meta(n).get("name") in served},
                                   res)
        for raw_node in nodes:
            node_name = str(_meta(raw_node).get("name"))
            if node_name in served or not should_run(raw_node):
                continue
            pod = self._pod_from_template(template, ds, _pods_prefix(name), taken)
            pod["spec"]["affinity"] = _node_name_affinity(pod["spec"].get("affinity"), node_name)
            pods.append(pod)
            res.created.append((pod, i))

    def _daemonset_delete(self, ds: Mapping[str, Any], i: int, spec: Mapping[str, Any], h: str,
                          by_node: dict[str, list[Mapping[str, Any]]], claimed: list[Mapping[str, Any]],
                          eligible: dict[str, bool], res: SyncResult) -> None:
        """The DaemonSet controller's deletions (daemon_controller.go ``podsShouldBeOnNode``,
        update.go ``rollingUpdate``): failed pods; pods on nodes that should no longer run one;
        all but the oldest of several on one node; then, for a RollingUpdate (maxUnavailable
        default 1, rounded up; maxSurge 0), pods of an old template (``IsPodUpdated``: neither the
        hash nor ``pod-template-generation`` matches) — unavailable ones at once, available ones
        while fewer than maxUnavailable nodes lack an available pod."""
        for p in claimed:
            if _map(p.get("status")).get("phase") == "Failed" and not _meta(p).get("deletionTimestamp"):
                res.deleted.append((dict(p), i))
        gen = _map(_meta(ds).get("annotations")).get("deprecated.daemonset.template.generation")
        keep: list[Mapping[str, Any]] = []
        for node_name, on_node in by_node.items():
            if not eligible.get(node_name, True):
                res.deleted.extend((dict(p), i) for p in on_node if not _meta(p).get("deletionTimestamp"))
                continue
            ordered = sorted(on_node, key=lambda p: (str(_meta(p).get("creationTimestamp") or "9999"),
                                                     str(_meta(p).get("name"))))
            res.deleted.extend((dict(p), i) for p in ordered[1:])
            keep.append(ordered[0])
        strategy = _map(spec.get("updateStrategy"))
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        desired = sum(eligible.values())
        ru = _map(strategy.get("rollingUpdate"))
        max_unavailable = dep.int_or_percent(ru.get("maxUnavailable", 1), desired, True) or 1
        min_ready = _int(spec.get("minReadySeconds"), 0)

        def updated(p: Mapping[str, Any]) -> bool:
            labels = _map(_meta(p).get("labels"))
            return labels.get(CONTROLLER_REVISION_HASH) == h or (
                gen is not None and labels.get("pod-template-generation") == str(gen))

        unavailable = desired - sum(self._available(p, min_ready) for p in keep)  # nodes without one available
        for p in sorted(keep, key=lambda p: str(_meta(p).get("name"))):
            if updated(p) or _meta(p).get("deletionTimestamp"):
                continue
            if not self._available(p, min_ready):
                res.deleted.append((dict(p), i))
            elif unavailable < max_unavailable:
                res.deleted.append((dict(p), i))
                unavailable += 1

    def _sync_job(self, job: dict[str, Any], i: int, pods: _Pods,
                  taken: set[tuple[str, str]], res: SyncResult) -> None:
        meta, spec, status = _meta(job), _map(job.get("spec")), _map(job.get("status"))
        if any(_map(c).get("type") in ("Complete", "Failed") and _map(c).get("status") == "True"
               for c in _list(status.get("conditions"))):
            return  # finished: its controller creates nothing more
        name = str(meta.get("name"))
        uid = self.uid(job)
        pod_group = self._ensure_workload_and_pod_group(job, i, pods, res)
        if spec.get("suspend") is True:
            return
        template = copy.deepcopy(_map(spec.get("template")))
        tmeta = template.setdefault("metadata", {})
        if pod_group is not None:
            # job_controller.go L1870: the pods name their PodGroup. The non-controller ownerReference
            # to it that L1876 appends to the template's metadata is lost in v1.37.2:
            # controller.GetPodFromTemplate (controller_utils.go L567) copies labels, annotations and
            # finalizers of the template, not its ownerReferences — so the pods carry none, as upstream
            template.setdefault("spec", {})["schedulingGroup"] = {"podGroupName": _meta(pod_group).get("name")}
        if spec.get("manualSelector") is not True:
            tmeta["labels"] = {**_map(tmeta.get("labels")),
                               "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                               "controller-uid": uid, "job-name": name}
        fins = [f for f in _list(tmeta.get("finalizers")) if f != JOB_TRACKING_FINALIZER]
        tmeta["finalizers"] = [*fins, JOB_TRACKING_FINALIZER]
        selector = _map(spec.get("selector")) or {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        owned = self._claimed(job, pods, selector)
        active = [p for p in owned if _is_active(p)]
        failed = max(sum(_map(p.get("status")).get("phase") == "Failed" for p in owned), _int(status.get("failed"), 0))
        met = any(_map(c).get("type") == "SuccessCriteriaMet" and _map(c).get("status") == "True"
                  for c in _list(status.get("conditions")))
        if not met and failed > _int(spec.get("backoffLimit"), 6):  # BackoffLimitExceeded: the active pods go
            res.deleted.extend((dict(p), i) for p in active)
            return
        succeeded_pods = [p for p in owned if _map(p.get("status")).get("phase") == "Succeeded"]
        parallelism = _int(spec.get("parallelism"), 1)
        completions = spec.get("completions") if isinstance(spec.get("completions"), int) else None
        indexed = spec.get("completionMode") == "Indexed"
        done: set[int] = set()
        if indexed:
            done = _parse_index_ranges(status.get("completedIndexes"))
            done |= {int(x) for p in succeeded_pods
                     if str(x := _map(_meta(p).get("annotations")).get(JOB_COMPLETION_INDEX, "")).isdigit()}
            succeeded = len(done)
            if not met and completions is not None:
                met = match_success_policy(_map(spec.get("successPolicy")), completions,
                                           {k for k in done if k < completions}) is not None
        else:
            succeeded = max(len(succeeded_pods), _int(status.get("succeeded"), 0))
        if met:  # success_policy.go: SuccessCriteriaMet, the remaining pods are deleted, none come
            res.deleted.extend((dict(p), i) for p in active)
            return
        if completions is None:
            want = parallelism if succeeded == 0 else len(active)
        else:
            want = max(0, min(parallelism, completions - succeeded))
        diff = want - len(active)
        if diff <= 0:
            return
        if not indexed:
            for _ in range(diff):
                pod = self._pod_from_template(template, job, _pods_prefix(name), taken)
                pods.append(pod)
                res.created.append((pod, i))
            return
        busy = {int(x) for p in active
                if str(x := _map(_meta(p).get("annotations")).get(JOB_COMPLETION_INDEX, "")).isdigit()}
        free = [k for k in range(completions or 0) if k not in done and k not in busy][:diff]
        for k in free:
            t = copy.deepcopy(template)
            tm = t["metadata"]
            tm["annotations"] = {**_map(tm.get("annotations")), JOB_COMPLETION_INDEX: str(k)}
            tm["labels"] = {**_map(tm.get("labels")), JOB_COMPLETION_INDEX: str(k)}
            ts = t.setdefault("spec", {})
            ts["hostname"] = f"{name}-{k}"
            for group in ("containers", "initContainers"):
                for c in _list(ts.get(group)):
                    if isinstance(c, dict) and not any(_map(e).get("name") == "JOB_COMPLETION_INDEX"
                                                       for e in _list(c.get("env"))):
                        c["env"] = [*_list(c.get("env")), {"name": "JOB_COMPLETION_INDEX", "valueFrom": {
                            "fieldRef": {"fieldPath": f"metadata.annotations['{JOB_COMPLETION_INDEX}']"}}}]
            append = f"-{k}-"
            prefix = name + append
            if len(prefix) > MAX_GENERATED_NAME_LENGTH:
                prefix = prefix[:MAX_GENERATED_NAME_LENGTH - len(append)] + append
            pod = self._pod_from_template(t, job, prefix, taken)
            pods.append(pod)
            res.created.append((pod, i))


    # ---- the Job controller's Workload and PodGroup (WorkloadWithJob)

    def _ensure_workload_and_pod_group(self, job: dict[str, Any], i: int, pods: _Pods,
                                       res: SyncResult) -> dict[str, Any] | None:
        """``ensureWorkloadAndPodGroup`` (job_scheduling_manager.go L117): the PodGroup the Job's
        pods join, creating the Workload and PodGroup for a Job that never started, or None."""
        mode = _management_mode(job, self.features)
        if mode is None:
            return None
        meta = _meta(job)
        ns = str(meta.get("namespace") or "default")
        status = _map(job.get("status"))
        new_job = (not pods.owned_by(job) and not status.get("startTime") and not status.get("succeeded")
                   and not status.get("failed")
                   and not any(_map(c).get("type") == "Suspended" for c in _list(status.get("conditions"))))
        if mode == "podgroup":
            return self._delegated_pod_group(job, i, ns, new_job, res)
        workloads = [o for o in self._scheduling if o.get("kind") == "Workload" and _meta(o).get("namespace") == ns
                     and _workload_job_name(o) == meta.get("name") and self._controls(job, o)]
        if len(workloads) > 1:
            return None  # "found %d Workloads referencing Job", default scheduling
        if workloads:
            wl = workloads[0]
            if len(_list(_map(wl.get("spec")).get("podGroupTemplates"))) != 1:
                return None  # validateWorkloadStructure: an error, the Job is retried
        elif not new_job:
            return None
        else:
            wl = self._new_workload(job)
            self._scheduling.append(wl)
            res.created.append((wl, i))
            res.events.append((job, "Normal", "WorkloadCreated",
                               f"Created Workload {_meta(wl)['name']} for Job {meta.get('name')}"))
        pgs = [o for o in self._scheduling if o.get("kind") == "PodGroup" and _meta(o).get("namespace") == ns
               and _map(_map(o.get("spec")).get("workloadRef")).get("workloadName") == _meta(wl).get("name")
               and self._controls(job, o)]
        if len(pgs) > 1:
            return None
        if pgs:
            pg = pgs[0]
        elif not new_job:
            return None
        else:
            pg = self._new_pod_group(job, wl, "", link_workload=True)
            self._scheduling.append(pg)
            res.created.append((pg, i))
            res.events.append((job, "Normal", "PodGroupCreated",
                               f"Created PodGroup {_meta(pg)['name']} for Job {meta.get('name')}"))
        self._sync_gang_min_count(job, wl, pg, i, res)
        return pg

    def _delegated_pod_group(self, job: dict[str, Any], i: int, ns: str, new_job: bool,
                             res: SyncResult) -> dict[str, Any] | None:
        """``getOrCreateDelegatedPodGroup`` (L273): a child Job whose parent's Workload has the
        template named by its ``scheduling.k8s.io/group-template-name`` annotation."""
        parent = owner_of(job) or {}
        group = str(parent.get("apiVersion") or "").rpartition("/")[0]
        wl = next((o for o in self._scheduling if o.get("kind") == "Workload" and _meta(o).get("namespace") == ns
                   and _map(_map(o.get("spec")).get("controllerRef")) .get("apiGroup", "") == group
                   and _map(_map(o.get("spec")).get("controllerRef")).get("kind") == parent.get("kind")
                   and _map(_map(o.get("spec")).get("controllerRef")).get("name") == parent.get("name")), None)
        if wl is None:
            return None
        tname = _map(_meta(job).get("annotations")).get(GROUP_TEMPLATE_NAME_ANNOTATION, "")
        templates = [_map(t) for t in _list(_map(wl.get("spec")).get("podGroupTemplates"))]
        template = next((t for t in templates if t.get("name") == tname), None) if tname else \
            (templates[0] if templates else None)
        if template is None:
            return None
        pg = next((o for o in self._scheduling if o.get("kind") == "PodGroup" and _meta(o).get("namespace") == ns
                   and _map(_map(o.get("spec")).get("workloadRef")).get("workloadName") == _meta(wl).get("name")
                   and self._controls(job, o)), None)
        if pg is None and new_job:
            pg = self._new_pod_group(job, wl, tname, link_workload=False)
            self._scheduling.append(pg)
            res.created.append((pg, i))
            res.events.append((job, "Normal", "PodGroupCreated",
                               f"Created PodGroup {_meta(pg)['name']} for Job {_meta(job).get('name')}"))
        gang = _map(_map(template.get("schedulingPolicy")).get("gang"))
        if pg is not None and gang and _map(_map(_map(pg.get("spec")).get("schedulingPolicy")).get("gang")):
            self._set_min_count(pg, int(gang.get("minCount") or 0), i, res)
        return pg

    def _new_workload(self, job: dict[str, Any]) -> dict[str, Any]:
        """``generateWorkload`` (L450): one PodGroupTemplate ``<job>-pgt-0`` from
        ``Job.spec.scheduling`` (Basic unless it says gang; a gang without ``minCount`` gets
        ``max(1, parallelism)``) and the pod template's ``priorityClassName``."""
        meta, spec = _meta(job), _map(job.get("spec"))
        template: dict[str, Any] = {"name": f"{meta.get('name')}-pgt-0",
                                    "schedulingPolicy": job_scheduling_policy(job)}
        sched = _map(spec.get("scheduling"))
        topo = _list(_map(sched.get("schedulingConstraints")).get("topology"))
        if topo:
            template["schedulingConstraints"] = {"topology": [{"key": _map(t).get("key", "")} for t in topo]}
        dm = _map(sched.get("disruptionMode"))
        if sched.get("disruptionMode") is not None:
            template["disruptionMode"] = {"all": {}} if dm.get("all") is not None else {"single": {}}
        claims = _list(sched.get("resourceClaims"))
        if claims:
            template["resourceClaims"] = copy.deepcopy(claims)
        pcn = _map(_map(spec.get("template")).get("spec")).get("priorityClassName")
        if pcn:
            template["priorityClassName"] = pcn
        return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
                "metadata": {"name": workload_name(str(meta.get("name")), self.uid(job)),
                             "namespace": str(meta.get("namespace") or "default"),
                             "ownerReferences": [self._controller_ref(job)]},
                "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": meta.get("name")},
                         "podGroupTemplates": [template]}}

    def _new_pod_group(self, job: dict[str, Any], wl: dict[str, Any], template_name: str, *,
                       link_workload: bool) -> dict[str, Any]:
        """``createPodGroup`` (L560) + workloadbuilder ``newPodGroup``: the template's policy,
        constraints, disruption mode, priority fields and claims; owned by the Job (controller)
        and, for a root Job, by the Workload."""
        templates = [_map(t) for t in _list(_map(wl.get("spec")).get("podGroupTemplates"))]
        tmpl = next((t for t in templates if t.get("name") == template_name), None) if template_name \
            else templates[0]
        assert tmpl is not None
        wmeta = _meta(wl)
        spec: dict[str, Any] = {"workloadRef": {"workloadName": wmeta.get("name"), "templateName": tmpl.get("name")},
                                "schedulingPolicy": copy.deepcopy(tmpl.get("schedulingPolicy"))}
        for k in ("schedulingConstraints", "resourceClaims", "disruptionMode", "priorityClassName", "priority"):
            if tmpl.get(k) not in (None, "", []):
                spec[k] = copy.deepcopy(tmpl[k])
        owners = [self._controller_ref(job)]
        if link_workload:
            owners.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "name": wmeta.get("name"),
                           "uid": self.uid(wl)})
        return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                "metadata": {"name": pod_group_name(str(wmeta.get("name")), str(tmpl.get("name"))),
                             "namespace": wmeta.get("namespace"), "ownerReferences": owners},
                "spec": spec}

    def _sync_gang_min_count(self, job: dict[str, Any], wl: dict[str, Any], pg: dict[str, Any], i: int,
                             res: SyncResult) -> None:
        """``syncGangMinCount`` (L167): a changed gang size of the Job reaches its Workload and PodGroup."""
        gang = _map(job_scheduling_policy(job).get("gang"))
        if not gang:
            return
        want = int(gang.get("minCount") or 0)
        templates = _list(_map(wl.get("spec")).get("podGroupTemplates"))
        if len(templates) == 1 and _map(_map(_map(templates[0]).get("schedulingPolicy")).get("gang")):
            self._set_min_count(wl, want, i, res)
        if _map(_map(_map(pg.get("spec")).get("schedulingPolicy")).get("gang")):
            self._set_min_count(pg, want, i, res)

    def _set_min_count(self, obj: dict[str, Any], want: int, i: int, res: SyncResult) -> None:
        spec = _map(obj.get("spec"))
        pol = _map(_list(spec.get("podGroupTemplates"))[0]).get("schedulingPolicy") if obj.get("kind") == "Workload" \
            else spec.get("schedulingPolicy")
        gang = _map(_map(pol).get("gang"))
        if int(gang.get("minCount") or 0) == want:
            return
        new = copy.deepcopy(obj)
        nspec = new["spec"]
        target = nspec["podGroupTemplates"][0] if new.get("kind") == "Workload" else nspec
        target["schedulingPolicy"]["gang"]["minCount"] = want
        key = (str(new.get("kind")), str(_meta(new).get("namespace") or ""), str(_meta(new).get("name")))
        self._scheduling = [new if (str(o.get("kind")), str(_meta(o).get("namespace") or ""),
                                    str(_meta(o).get("name"))) == key else o for o in self._scheduling]
        res.updated.append((new, i))


#: ``scheduling.k8s.io/group-template-name``: a child Job's PodGroupTemplate in its parent's Workload
GROUP_TEMPLATE_NAME_ANNOTATION = "scheduling.k8s.io/group-template-name"


def _management_mode(job: Mapping[str, Any], features: FeatureGate | None) -> str | None:
    """``getManagementMode`` (L71): ``"both"`` (a Job without a controller owner), ``"podgroup"``
    (a child Job delegated a PodGroupTemplate), or None (gate off, the template names its own
    ``schedulingGroup``, or a parent manages everything)."""
    if features is None or not features.enabled("WorkloadWithJob") or not features.enabled("GenericWorkload"):
        return None
    if _map(_map(_map(job.get("spec")).get("template")).get("spec")).get("schedulingGroup") is not None:
        return None
    if owner_of(job) is None:
        return "both"
    if GROUP_TEMPLATE_NAME_ANNOTATION in _map(_meta(job).get("annotations")):
        return "podgroup"
    return None


def _workload_job_name(wl: Mapping[str, Any]) -> str:
    ref = _map(_map(wl.get("spec")).get("controllerRef"))
    if ref.get("apiGroup") != "batch" or ref.get("kind") != "Job":
        return ""
    return str(ref.get("name") or "")


def job_scheduling_policy(job: Mapping[str, Any]) -> dict[str, Any]:
    """The PodGroupTemplate policy of a Job (``WorkloadItemForJob`` + ``defaultMinCountForJob``,
    pkg/api/job/util.go L95-124): ``Job.spec.scheduling.schedulingPolicy``, Basic when absent; a
    gang without ``minCount`` gets ``max(1, parallelism)`` (parallelism defaults to 1)."""
    spec = _map(job.get("spec"))
    pol = _map(_map(spec.get("scheduling")).get("schedulingPolicy"))
    if pol.get("gang") is not None:
        n = _map(pol["gang"]).get("minCount")
        if n is None:
            n = max(1, _int(spec.get("parallelism"), 1))
        return {"gang": {"minCount": int(n)}}
    return {"basic": {}}


def workload_name(job_name: str, job_uid: str) -> str:
    """``computeWorkloadName`` (L612): ``<job name>-<hash>``, the hash FNV-1a 32 of the spew dump of
    the Job's UID (``(types.UID)<uid>``) through ``rand.SafeEncodeString``, the name cut to fit 253."""
    h = safe_encode_string(str(fnv32a(f"(types.UID){job_uid}".encode())))
    return f"{job_name[:253 - len(h) - 1]}-{h}"


def pod_group_name(workload: str, template: str) -> str:
    """``computePodGroupName`` (L625): ``<workload>-<template>-<hash of both names>``, cut to 253."""
    h = safe_encode_string(str(fnv32a(workload.encode() + template.encode())))
    avail = 253 - len(h) - 2
    wl, tpl = workload, template
    if len(wl) + len(tpl) > avail:
        half = avail // 2
        if len(wl) <= half:
            tpl = tpl[:avail - len(wl)]
        elif len(tpl) <= half:
            wl = wl[:avail - len(tpl)]
        else:
            wl, tpl = wl[:avail - half], tpl[:half]
    return f"{wl}-{tpl}-{h}"
