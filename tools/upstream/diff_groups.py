"""Pod groups in the differential harness (``diff.py --groups``) and the hand-written scenarios
whose upstream truths ``tests/upstream/data/podgroup_truths.yaml`` records.

Upstream side. v1.37.2 serves ``scheduling.k8s.io/v1beta1`` (Workload, PodGroup) only when
GenericWorkload is on **and** the beta API is enabled: kube-apiserver needs
``--runtime-config=scheduling.k8s.io/v1beta1=true`` (beta APIs are off by default; without it
``GET /apis/scheduling.k8s.io/v1beta1`` is 404 even with the gate on). kube-apiserver and
kube-scheduler both get ``--feature-gates`` :data:`GROUP_GATES`. The bootstrap RBAC of
``system:kube-scheduler`` then grants podgroups get/list/watch and podgroups/status patch
(plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go L686-689).

A **step** is either a whole group — the PodGroup, then all its member pods, held by a
scheduling gate until the scheduler has queued them all (:func:`create_step` says why) — or
one single pod. :func:`settle_step` waits until
every pod of the step has settled:

- bound; or
- pending with ``PodScheduled=False`` and no pod anywhere Terminating (a member waiting on
  Permit has a ``status.nominatedNodeName`` and no condition yet: NominatedNodeNameForExpectation
  patches it before WaitOnPermit, schedule_one.go L399ff — not settled; one marked unschedulable
  that still carries a nomination counts as a preemption: 10 s quiet); or
- pending with no PodScheduled condition at all — a gang whose quorum never arrived is held by
  GangScheduling's PreEnqueue ("waiting for minCount pods from a gang to appear in scheduling
  queue"), which writes nothing to the pod; only a group's member, and (with the scheduler's
  metrics) only while its queue counts at least that many pods ``gated``: a pod outside any
  group, or members assumed and still binding, have no condition either but are in flight
  (seen at load 45: seed 19 single-08 and seed 17 pg-01 "settled" unbound);

and nothing of the step (pods, PodGroup) changed for ``stable`` seconds (10 s once a preemption
was seen, to outlast the preemptor's backoff). A gang that cannot complete is recognised without
waiting for Permit's 5-minute timeout: the pod-group cycle dry-runs the whole group first
(schedule_one_podgroup.go), so such a group is rejected at once — every member gets
``PodScheduled=False`` and the PodGroup ``PodGroupInitiallyScheduled=False/Unschedulable`` — and
no member is ever assumed. Members only wait on Permit when the real assume of a dry-run-feasible
group fails part-way; the ``timeout`` bounds that case (reported as ``settled: false``).

Engine side: :func:`engine_group_step` replays a step through kubesched's engine — a Scheduler
with the same gates over the simulator's store, holding upstream's nodes, bound pods and the
PodGroups as upstream stored them (raw dicts, ``store.put_object("PodGroup", raw)`` so the
scheduler sees ``on_object_event("PodGroup", None, raw)``), then the step's pods, run until
idle. :func:`compare_group` compares the whole-group outcome (bound count, PodGroup condition),
every pod's message and every pod's node.

Not replayed (as in ``diff.py``'s single-pod steps): pods of earlier steps still pending upstream
(an unschedulable gang, a preemptor) are not handed to the engine, nor nominated pods to its
nominator; when one of them is bound while a step settles, the step is reported as ``raced``.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")
if os.path.isdir(_SRC) and _SRC not in sys.path:
    sys.path.insert(0, _SRC)

from kubesched.testing.upstream import ControlPlane  # noqa: E402

NS = "default"
#: the gates ``--groups`` turns on, on kube-apiserver, kube-scheduler and kubesched alike
GROUP_GATES: dict[str, bool] = {
    "GenericWorkload": True,
    "TopologyAwareWorkloadScheduling": True,
    "PodGroupPreemptionPolicy": True,
}
#: kube-apiserver flags that serve the beta scheduling API (off by default in 1.37)
GROUP_APISERVER_ARGS = ["--runtime-config=scheduling.k8s.io/v1beta1=true"]
PG_API = "/apis/scheduling.k8s.io/v1beta1"
RACK, BLOCK = "example.com/rack", "example.com/block"
GPU = "nvidia.com/gpu"
#: seconds kube-scheduler's informers get to observe deletions the harness made before a step
#: ends (as diff.py's ``OBSERVE_S``)
OBSERVE_S = 0.5
#: virtual seconds without a scheduling attempt that end an engine step (upstream's settle waits
#: 10 s of quiet after a preemption; the queue's longest backoff is 10 s) ...
SETTLE_VIRTUAL_S = 11.0
#: ... and at most this long in all (upstream's step timeout is 60 s)
MAX_VIRTUAL_S = 60.0


def start_control_plane(version: str = "1.37", gates: dict[str, bool] | None = None) -> ControlPlane:
    """etcd + kube-apiserver with :data:`GROUP_GATES` (plus ``gates``) and the v1beta1 API."""
    return ControlPlane.start(version=version, feature_gates={**GROUP_GATES, **(gates or {})},
                              extra_apiserver_args=GROUP_APISERVER_ARGS)


# --------------------------------------------------------------------------- objects


def api_path(obj: dict[str, Any]) -> str:
    """Collection path of ``obj`` (the kinds the group harness creates)."""
    kind, ns = obj["kind"], obj["metadata"].get("namespace", NS)
    paths = {
        "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
        "Node": "/api/v1/nodes",
        "Pod": f"/api/v1/namespaces/{ns}/pods",
        "PodGroup": f"{PG_API}/namespaces/{ns}/podgroups",
        "Workload": f"{PG_API}/namespaces/{ns}/workloads",
        "Namespace": "/api/v1/namespaces",
    }
    if kind not in paths:
        raise ValueError(f"unsupported kind {kind}")
    return paths[kind]


def create(cp: ControlPlane, obj: dict[str, Any]) -> dict[str, Any]:
    status, _, body = cp.request("POST", api_path(obj), obj)
    if status != 201:
        raise RuntimeError(f"create {obj['kind']} {obj['metadata']['name']}: HTTP {status}: {body}")
    return dict(body)


#: the longest :func:`create_step` waits for the scheduler to have queued a step's members
MEMBERS_OBSERVE_TIMEOUT_S = 20.0


class SchedulerMetrics:
    """Reads a running scheduler's ``/metrics`` (kube-scheduler's or ``kubesched run``'s: both
    serve ``scheduler_pending_pods{queue}``, v1.37 with the pod-group pools ``incomplete`` and
    ``pending``), authenticated as the control plane's admin."""

    def __init__(self, cp: ControlPlane, proc: Any) -> None:
        import ssl

        args = list(getattr(getattr(proc, "popen", None), "args", None) or [])
        port = next((a.split("=", 1)[1] for a in args if str(a).startswith("--secure-port=")), None)
        self.url = f"https://127.0.0.1:{port}/metrics" if port else None
        self.token = cp.tokens.get("kubesched")
        self.ctx = ssl.create_default_context()
        self.ctx.check_hostname = False
        self.ctx.verify_mode = ssl.CERT_NONE

    def pending(self, queue: str) -> float | None:
        """``scheduler_pending_pods{queue="<queue>"}``, or None when it cannot be read."""
        from kubesched.testing.upstream import http_request

        if self.url is None:
            return None
        try:
            status, _, body = http_request(self.url, self.token, self.ctx, "GET", headers={"Accept": "text/plain"},
                                           timeout=5.0)
        except OSError:
            return None
        if status != 200 or not isinstance(body, bytes):
            return None
        m = re.search(rf'^scheduler_pending_pods{{queue="{queue}"}} (\S+)$', body.decode(errors="replace"), re.M)
        return float(m.group(1)) if m else None


#: the scheduling gate :func:`create_step` holds a group's members with until all are queued
HOLD_GATE = "kubesched.io/diff-hold"


def create_step(cp: ControlPlane, group: dict[str, Any] | None, pods: list[dict[str, Any]],
                metrics: SchedulerMetrics | None = None) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """Create one step's objects so that a group's first cycle sees every member; returns (the
    PodGroup, the pods) as stored at the end (without the hold gate).

    A group step: the PodGroup, then its members each with the scheduling gate
    :data:`HOLD_GATE`; once the scheduler has queued them all (``metrics``: its
    ``scheduler_pending_pods{queue="gated"}`` grew by the members, at most
    :data:`MEMBERS_OBSERVE_TIMEOUT_S`; without metrics 0.5 s) the gates are removed one by one,
    and (with metrics) the function returns once the gated count is back where it was.
    v1.37.2 gates a whole group entity while any member is gated ("If any pod is gated, the whole
    entity is gated", scheduling_queue.go ``runPreEnqueuePlugins`` L707-729), so the entity
    becomes active only with its last member ungated, holding all of them.

    Why: created plainly, the first member observed makes a new entity that is moved to activeQ
    and popped at once (``addPodGroupMember`` L922-926) while later members wait in
    ``pendingPodGroupPods`` for the next cycle (L914-919) — a race with the HTTP requests and the
    informers. Seen: a basic group placed by its first member alone in the densest rack, a gang
    bound 2/6 (seeds 56, 11), a gang whose cycle ran with 6 of 16 members (seeds 62, 63, 65).
    Creating the members before the PodGroup does not close it: ``AddPodGroup`` moves the
    members from ``incompletePodGroupPods`` one at a time and the first move already pops the
    entity (seen with -v=5: ``unscheduledPodsCount=1``, then DynamicResources' PodGroupPostFilter
    failing "not found" and a SchedulerError condition). kubesched's replay hands the engine the
    whole group, as this makes upstream see it."""
    if group is None:
        return None, [create(cp, p) for p in pods]
    stored_group = create(cp, group)
    before = metrics.pending("gated") if metrics is not None else None
    held = []
    for p in pods:
        q = copy.deepcopy(p)
        q["spec"]["schedulingGates"] = [*(q["spec"].get("schedulingGates") or []), {"name": HOLD_GATE}]
        held.append(create(cp, q))
    if held:
        if metrics is not None and before is not None:
            deadline = time.monotonic() + MEMBERS_OBSERVE_TIMEOUT_S
            while time.monotonic() < deadline:
                now = metrics.pending("gated")
                if now is not None and now >= before + len(held):
                    break
                time.sleep(0.05)
        else:
            time.sleep(0.5)
    created = []
    for p in held:
        gates = [g for g in p["spec"].get("schedulingGates") or [] if g.get("name") != HOLD_GATE]
        name, ns = p["metadata"]["name"], p["metadata"].get("namespace", NS)
        status, _, body = cp.request("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}",
                                     {"spec": {"schedulingGates": gates or None}},
                                     headers={"Content-Type": "application/merge-patch+json"})
        if status != 200:
            raise RuntimeError(f"ungate pod {name}: HTTP {status}: {body}")
        created.append(dict(body))
    if created and metrics is not None and before is not None:
        # settle_step reads the creation-time SchedulingGated condition as quiet: wait until the
        # scheduler has seen the gates go (a slow one — kubesched run on a loaded machine — had
        # not, and the step "settled" with nothing tried)
        deadline = time.monotonic() + MEMBERS_OBSERVE_TIMEOUT_S
        while time.monotonic() < deadline:
            now = metrics.pending("gated")
            if now is not None and now <= before:
                break
            time.sleep(0.05)
    return stored_group, created


def node(name: str, cpu: str = "4", memory: str = "16Gi", labels: dict[str, str] | None = None,
         gpu: int = 0) -> dict[str, Any]:
    cap = {"cpu": cpu, "memory": memory, "pods": "110", **({GPU: str(gpu)} if gpu else {})}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": {}, "status": {"capacity": cap, "allocatable": dict(cap),
                                   "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, cpu: str = "1", memory: str = "128Mi", *, group: str | None = None,
        priority_class: str | None = None, gpu: int = 0, labels: dict[str, str] | None = None,
        node_name: str | None = None) -> dict[str, Any]:
    req = {"cpu": cpu, "memory": memory, **({GPU: str(gpu)} if gpu else {})}
    res: dict[str, Any] = {"requests": req}
    if gpu:
        res["limits"] = {GPU: str(gpu)}  # extended resources need limits == requests
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": res}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": dict(labels or {})}, "spec": spec}


def pod_group(name: str, min_count: int | None = None, *, topology: str | None = None,
              priority_class: str | None = None, disruption_all: bool = False,
              preemption_policy: str | None = None) -> dict[str, Any]:
    """A v1beta1 PodGroup: gang with ``min_count``, or basic when None."""
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if disruption_all:
        spec["disruptionMode"] = {"all": {}}
    if preemption_policy:
        spec["preemptionPolicy"] = preemption_policy
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": NS}, "spec": spec}


def priority_class(name: str, value: int, preemption_policy: str | None = None) -> dict[str, Any]:
    pc: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": name}, "value": value}
    if preemption_policy:
        pc["preemptionPolicy"] = preemption_policy
    return pc


# --------------------------------------------------------------------------- generator


@dataclass
class Step:
    """One step: a whole group (``group`` set, ``pods`` its members) or a single pod."""

    pods: list[dict[str, Any]]
    group: dict[str, Any] | None = None
    areas: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.group["metadata"]["name"] if self.group else self.pods[0]["metadata"]["name"]


def generate(seed: int) -> tuple[list[dict[str, Any]], list[Step]]:
    """(PriorityClasses, nodes and pre-bound pods; steps) of group cluster ``seed``.

    Nodes in racks of 2–4 and blocks of 2 racks (labels :data:`RACK`, :data:`BLOCK`), a third of
    the clusters with GPUs; steps are groups (gang sizes 2–16, ``minCount`` ≤ members, sometimes
    basic, sometimes fewer members than ``minCount``; topology rack/block; priority classes, one
    with ``preemptionPolicy: Never``; ``disruptionMode: all``) and competing single pods."""
    rnd = random.Random(f"groups-{seed}")
    objs: list[dict[str, Any]] = [
        priority_class("low", 10), priority_class("mid", 100), priority_class("high", 1000),
        priority_class("high-never", 1000, "Never"),
    ]
    gpus = rnd.random() < 0.35
    racks = rnd.randint(2, 3)
    per_rack = rnd.randint(2, 3)
    names = []
    for r in range(racks):
        for i in range(per_rack):
            name = f"node-r{r}-{i}"
            names.append(name)
            objs.append(node(name, cpu=rnd.choice(["4", "8"]), memory=rnd.choice(["16Gi", "32Gi"]),
                             labels={RACK: f"rack-{r}", BLOCK: f"block-{r // 2}"},
                             gpu=rnd.choice([4, 8]) if gpus else 0))
    for i in range(rnd.randint(0, 3)):  # pre-bound low-priority pods
        objs.append(pod(f"existing-{i}", cpu=rnd.choice(["500m", "1", "2"]), priority_class="low",
                        node_name=rnd.choice(names), labels={"app": "existing"}))
    steps: list[Step] = []
    for s in range(rnd.randint(5, 10)):
        if rnd.random() < 0.55:
            steps.append(_group_step(rnd, s, gpus))
        else:
            prio = rnd.choice([None, "low", "mid", "high"])
            p = pod(f"single-{s:02d}", cpu=rnd.choice(["1", "2", "3"]), priority_class=prio,
                    gpu=rnd.choice([0, 1, 2]) if gpus else 0, labels={"app": "single"})
            steps.append(Step([p], None, {"single"} | ({"priorities"} if prio else set())))
    return objs, steps


def _group_step(rnd: random.Random, s: int, gpus: bool) -> Step:
    size = rnd.choice([2, 2, 3, 4, 4, 5, 6, 8, 12, 16])
    name = f"pg-{s:02d}"
    areas = {"group"}
    r = rnd.random()
    if r < 0.15:
        min_count = None
        areas.add("basic")
    else:
        min_count = size if rnd.random() < 0.6 else rnd.randint(1, size)
        areas.add("gang")
    members = size
    if min_count and min_count > 2 and rnd.random() < 0.08:
        members = rnd.randint(2, min_count - 1)  # short of quorum: PreEnqueue holds them
        areas.add("quorum")
    t = rnd.random()
    topology = RACK if t < 0.35 else BLOCK if t < 0.55 else None
    if topology:
        areas.add("topology")
    prio = rnd.choice([None, None, "low", "mid", "high", "high-never"])
    if prio:
        areas.add("priorities")
    disruption_all = rnd.random() < 0.3
    if disruption_all:
        areas.add("disruption-all")
    # defaulting fills preemptionPolicy PreemptLowerPriority before the Priority admission, which
    # then forbids it for a Never class: such a PodGroup must say Never itself (observed, v1.37.2)
    policy = "Never" if prio == "high-never" else None
    if policy:
        areas.add("preempt-never")
    pg = pod_group(name, min_count, topology=topology, priority_class=prio, disruption_all=disruption_all,
                   preemption_policy=policy)
    cpu = rnd.choice(["500m", "1", "2", "3"])
    gpu = rnd.choice([0, 1, 2, 4]) if gpus else 0
    pods = [pod(f"{name}-{i:02d}", cpu=cpu, group=name, priority_class=prio, gpu=gpu,
                labels={"app": name}) for i in range(members)]
    return Step(pods, pg, areas)


# --------------------------------------------------------------------------- upstream side


def list_pods(cp: ControlPlane, ns: str = NS) -> dict[str, dict[str, Any]]:
    _, _, lst = cp.request("GET", f"/api/v1/namespaces/{ns}/pods")
    return {p["metadata"]["name"]: p for p in lst["items"]}


def list_pod_groups(cp: ControlPlane, ns: str = NS) -> dict[str, dict[str, Any]]:
    _, _, lst = cp.request("GET", f"{PG_API}/namespaces/{ns}/podgroups")
    if not isinstance(lst, dict) or "items" not in lst:
        return {}  # the API is not served (gates off)
    return {g["metadata"]["name"]: g for g in lst["items"]}


def delete_now(cp: ControlPlane, name: str, ns: str = NS) -> None:
    cp.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}",
               {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})


def scheduled_condition(p: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in (p.get("status") or {}).get("conditions") or [] if c["type"] == "PodScheduled"), None)


def group_condition(g: dict[str, Any] | None) -> dict[str, Any] | None:
    if g is None:
        return None
    return next((c for c in (g.get("status") or {}).get("conditions") or []
                 if c["type"] == "PodGroupInitiallyScheduled"), None)


@dataclass
class Settled:
    """What :func:`settle_step` saw: all pods, the step's PodGroup, whether it settled, after
    how many seconds, and whether a preemption was seen."""

    pods: dict[str, dict[str, Any]]
    group: dict[str, Any] | None
    settled: bool
    seconds: float
    preempted: bool
    #: when not settled: what kept it from settling at the end
    why: str = ""


def settle_step(cp: ControlPlane, names: list[str], group: str | None, stable: float = 1.0,
                timeout: float = 60.0, on_poll: Any = None, ns: str = NS,
                metrics: SchedulerMetrics | None = None) -> Settled:
    """Wait until every pod of ``names`` has settled (module doc). Terminating pods are deleted
    at once (grace 0), as the kubelet the harness stands in for would confirm them. With
    ``metrics`` the scheduler's queue must also be idle: no pod in ``activeQ`` (about to be
    tried) nor in ``pendingPodGroupPods`` (members that arrived while their group was being
    scheduled and wait for its requeue, scheduling_queue.go L914-919) — they have no condition
    yet and would otherwise pass for members held by PreEnqueue."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    last: tuple[Any, ...] = ()
    since = t0
    initial = set(list_pods(cp, ns)) - set(names)
    preempted = False
    deleted_at = -1.0

    changes = 0

    def done(pods: dict[str, dict[str, Any]], g: dict[str, Any] | None, ok: bool, why: str = "") -> Settled:
        # let kube-scheduler's informers observe the deletions just made before the next step
        # (diff.py OBSERVE_S: the next step is compared against the API server's state)
        wait = deleted_at + OBSERVE_S - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        return Settled(pods, g, ok, time.monotonic() - t0, preempted, why)

    while True:
        pods = list_pods(cp, ns)
        terminating = [n for n, p in pods.items() if p["metadata"].get("deletionTimestamp")]
        for n in terminating:
            delete_now(cp, n, ns)
        if terminating:
            deleted_at = time.monotonic()
        if on_poll is not None:
            on_poll(cp, pods)
        g = list_pod_groups(cp, ns).get(group) if group else None
        mine = [pods.get(n) for n in names]
        sig = (tuple(p["metadata"]["resourceVersion"] if p else "-" for p in mine),
               g["metadata"]["resourceVersion"] if g else "-")
        now = time.monotonic()
        if sig != last:
            last, since = sig, now
            changes += 1
        if all(p is None or p["spec"].get("nodeName") for p in mine):
            return done(pods, g, True)
        noms = [p for p in mine
                if p and not p["spec"].get("nodeName") and (p.get("status") or {}).get("nominatedNodeName")]
        # a nominated member without any condition is on its way to bind (Permit, PreBind); one
        # already marked unschedulable keeps a stale nomination after a failed pod-group
        # preemption (seen on v1.37.2, `diff.py --groups --seed 10`): settled once quiet 10 s
        nominated = any(scheduled_condition(p) is None for p in noms)
        preempted = preempted or bool(noms) or bool(terminating) or bool(initial - set(pods))
        quiet = all(p is None or p["spec"].get("nodeName")
                    or (scheduled_condition(p) or {}).get("status", "False") == "False" for p in mine)
        # a pod with no condition is settled only as a member held by GangScheduling's
        # PreEnqueue, which the queue counts as gated; one outside any group, or more than the
        # queue holds gated, is in flight (popped: in no queue, its cycle or binding still running
        # — seed 19 single-08 "settled" after 1.7 s with no condition on a machine at load 45)
        held = [p for p in mine if p and not p["spec"].get("nodeName") and _unattempted(p)]
        in_flight = any(not (p["spec"].get("schedulingGroup") or {}).get("podGroupName") for p in held)
        need = max(stable, 10.0) if preempted else stable
        if quiet and not nominated and not terminating and not in_flight and now - since >= need:
            busy = [q for q in ("active", "pending") if metrics is not None and (metrics.pending(q) or 0) > 0]
            if held and metrics is not None and not busy:
                gated = metrics.pending("gated")
                if gated is not None and gated < len(held):
                    busy.append("gated")
            if not busy:
                return done(pods, g, True)
            since = now - need + 0.2  # look again shortly
        if now > deadline:
            why = (f"{changes} changes of the step's objects, the last {now - since:.1f} s ago; "
                   f"nominated {sorted(p['metadata']['name'] for p in noms)}; "
                   f"terminating {terminating}; quiet {quiet}")
            return done(pods, g, False, why)
        time.sleep(0.1)


def _unattempted(p: dict[str, Any]) -> bool:
    """No PodScheduled condition from the scheduler: none at all, or only the ``SchedulingGated``
    one the API server set at creation on a pod no longer gated (:func:`create_step`)."""
    c = scheduled_condition(p)
    return c is None or (c.get("reason") == "SchedulingGated" and not p["spec"].get("schedulingGates"))


def outcome(names: list[str], pods: dict[str, dict[str, Any]], group: dict[str, Any] | None,
            before_bound: list[str]) -> dict[str, Any]:
    """The comparable outcome of a step: per pod ``node`` (or None) and ``message``
    (PodScheduled=False's, "" if none — no condition at all, or only the ``SchedulingGated`` one
    the API server set at creation on a pod no longer gated, reads ``"<no condition>"``), the
    PodGroup's ``PodGroupInitiallyScheduled`` condition (status, reason, message), and the
    victims (pods bound before the step that are gone)."""
    per: dict[str, dict[str, Any]] = {}
    for n in names:
        p = pods.get(n)
        if p is None:
            per[n] = {"node": None, "message": "<deleted>"}
            continue
        # the API server's SchedulingGated condition from creation with the hold gate (create_step)
        # reads as none: the scheduler wrote nothing since (PreEnqueue held the ungated group)
        c = None if _unattempted(p) else scheduled_condition(p)
        bound = p["spec"].get("nodeName")
        if bound:
            msg = ""
        else:
            msg = "<no condition>" if c is None else c.get("message", "") if c["status"] == "False" else ""
        per[n] = {"node": bound or None, "message": msg}
    gc = group_condition(group)
    return {
        "pods": per,
        "group_condition": {k: gc.get(k) for k in ("status", "reason", "message")} if gc else None,
        "victims": sorted(n for n in before_bound if n not in pods or pods[n]["metadata"].get("deletionTimestamp")),
    }


# --------------------------------------------------------------------------- scenarios (truths)


def _stamp_start_times(cp: ControlPlane, pods: dict[str, dict[str, Any]], tick: int) -> int:
    """Give bound pods without one a ``status.startTime`` one virtual second apart, in name order,
    as a kubelet would (preemption prefers the victims started last; without a start time
    upstream takes ``time.Now()`` and the choice among equal victims is arbitrary). Returns the
    last tick used."""
    for name, p in sorted(pods.items()):
        if p["spec"].get("nodeName") and not (p.get("status") or {}).get("startTime") \
                and not p["metadata"].get("deletionTimestamp"):
            tick += 1
            t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1767225600 + tick))
            cp.request("PATCH", f"/api/v1/namespaces/{p['metadata'].get('namespace', NS)}/pods/{name}/status",
                       {"status": {"startTime": t}},
                       headers={"Content-Type": "application/strategic-merge-patch+json"})
    return tick


#: a metadata.uid in an event message ("Preempted by podgroup <uid> on node cluster")
_UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def run_scenario(scn: dict[str, Any], *, stable: float = 1.0, timeout: float = 60.0,
                 version: str = "1.37") -> dict[str, Any]:
    """Run one hand-written scenario on the real scheduler and return what it did.

    ``scn``: ``objects`` (PriorityClasses, Nodes, pre-bound Pods: created first), ``steps``
    (each ``{podGroup: {...}?, pods: [...]}``, or ``{group: name, pods: [...]}`` for members
    joining an existing group — the group's still pending members are then part of the step;
    created back to back, then settled), optional
    ``gates`` (on top of :data:`GROUP_GATES`). Returns per step the :func:`outcome` plus
    ``settled``/``seconds``, and the events (reason, involved kind/name, message; deduplicated,
    sorted) and the final PodGroup conditions."""
    cp = start_control_plane(version, scn.get("gates"))
    try:
        for o in scn.get("objects", []):
            create(cp, o)
        cp.start_kube_scheduler({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                 "kind": "KubeSchedulerConfiguration", "parallelism": 1,
                                 "leaderElection": {"leaderElect": False}})
        results = []
        tick = _stamp_start_times(cp, list_pods(cp), 0)
        for step in scn["steps"]:
            before = [n for n, p in list_pods(cp).items()
                      if p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")]
            g = step.get("podGroup")
            stored_spec = None
            if g:
                status, _, body = cp.request("POST", api_path(g), g)
                if status != 201:
                    results.append({"create_error": {"code": status, "message": body.get("message", "")}})
                    continue
                stored_spec = body["spec"]
            # a step of members only ("group": name) also follows the group's earlier, still pending members
            gname = g["metadata"]["name"] if g else step.get("group")
            names = [n for n, p in sorted(list_pods(cp).items())
                     if gname and not p["spec"].get("nodeName")
                     and (p["spec"].get("schedulingGroup") or {}).get("podGroupName") == gname]
            for p in step["pods"]:
                names.append(create(cp, p)["metadata"]["name"])
            st = settle_step(cp, names, gname, stable, timeout)
            tick = _stamp_start_times(cp, st.pods, tick)
            out = outcome(names, st.pods, st.group, before)
            if stored_spec is not None:
                out["stored_pod_group_spec"] = stored_spec  # after defaulting and admission
            out["settled"] = st.settled
            out["seconds"] = round(st.seconds, 1)
            results.append(out)
        _, _, ev = cp.request("GET", f"/api/v1/namespaces/{NS}/events")
        events = sorted({(e["reason"], e["involvedObject"]["kind"], e["involvedObject"]["name"],
                          _UID.sub("<uid>", e.get("message", ""))) for e in ev["items"]
                         if e["involvedObject"]["kind"] in ("Pod", "PodGroup")})
        return {"steps": results,
                "events": [{"reason": r, "kind": k, "name": n, "message": m} for r, k, n, m in events],
                "pod_groups": {n: [{k: v for k, v in c.items() if k != "lastTransitionTime"}
                                   for c in (g.get("status") or {}).get("conditions") or []]
                               for n, g in list_pod_groups(cp).items()}}
    finally:
        cp.stop()


# --------------------------------------------------------------------------- engine side


class EngineUnavailable(RuntimeError):
    """kubesched's engine cannot run pod groups (yet): the reason, one line. ``permanent``: it
    refused to start with the gates (so every later step would fail the same way); else it
    raised while scheduling this step."""

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


@dataclass
class EngineChoices:
    """The choices v1.37.2 makes at random in a pod-group cycle, made explicitly in the engine.

    - The order of the placements: TopologyPlacementGenerator ranges over a Go map
      (topology_placement.go L85-98), so which placement is evaluated *first* is random in every
      cycle — and when none is feasible the group's message reports the first one's status ("0/N
      placements are available, first placement status: …", schedule_one_podgroup.go L1045-1050)
      and its members carry that placement's own failures. kubesched sorts them by domain.
    - Among placements of equal best total score, ``findBestPlacement`` takes the larger
      ``rand.Int()`` randomizer (L1194-1223).
    - A single pod's preemption between candidate nodes that tie on every criterion:
      ``pickOneNodeForPreemption`` ranges over a map (framework/preemption/preemption.go
      L337-345), kubesched takes the first in node order.

    A rejected group is retried after its backoff (``AddAttemptedPodGroupIfNeeded``,
    scheduling_queue.go L1250-1260), each time with fresh random choices; what a step shows is its
    last cycle's. So a choice here applies to every cycle of the step: ``rotation`` — the
    PlacementGenerate calls of the cycles start at their placement of that index (0 = kubesched's
    order), ``preempt_rotation`` the same for the calls of PodGroupPostFilter's re-run; ``pick`` —
    selections take the tied-best placement of that index (None: the engine's own draw);
    ``candidate`` — a preemption takes the tied candidate node of that index. The run records the
    largest number of placements offered (``generated``, ``generated_preempt``), of tied-best
    placements (``tied``) and of tied candidates (``candidates``), which
    :func:`choice_alternatives` enumerates.

    Not random but a race: ``stale_status`` — every ``updatePodGroupCondition`` of the step reads
    the PodGroup's status as it was before the engine's previous call (the informer one write
    behind). Upstream's no-regress check
    (schedule_one_podgroup.go L943-968) reads the informer's PodGroup; a partly placed group's
    leftover members are retried at once (``AddAttemptedPodGroupIfNeeded``) and when that retry
    runs before the informer has delivered the True just patched, its False overwrites the True
    (strategic merge, merge key ``type``; when the stale copy held an Unschedulable condition only
    the message differs, and the True condition gets the failure message). The simulator
    delivers the write before the next cycle;
    ``regressions`` counts the non-True conditions its check dropped (so the race was possible).

    Not a random choice but carried the same way: ``start_index``, the ``nextStartNodeIndex`` the
    engine starts the step with (schedule_one.go L692-695: the node the next Filter pass starts at,
    which orders the feasible nodes and so breaks score ties, upstream-v137 §2.6), and
    ``next_start_index``, where the step left it — the next step's ``start_index``."""

    start_index: int = 0
    next_start_index: int = 0
    #: the cluster's node count (the values ``start_index`` can take)
    nodes: int = 0
    rotation: int = 0
    preempt_rotation: int = 0
    pick: int | None = None
    candidate: int = 0
    generated: int = 0
    generated_preempt: int = 0
    tied: int = 0
    candidates: int = 0
    stale_status: bool = False
    regressions: int = 0

    def describe(self) -> str:
        parts = [f"the Filter pass starts at node #{self.start_index + 1}"] if self.start_index else []
        if self.stale_status:
            parts.append("the retry reads the PodGroup before its own True condition arrived (the condition race)")
        if self.rotation:
            parts.append(f"cycles evaluate placement #{self.rotation + 1} first")
        if self.preempt_rotation:
            parts.append(f"preemption's re-run evaluates placement #{self.preempt_rotation + 1} first")
        if self.pick is not None:
            parts.append(f"tied placement #{self.pick + 1} chosen")
        if self.candidate:
            parts.append(f"tied preemption candidate #{self.candidate + 1} chosen")
        return "; ".join(parts) or "the engine's own choices"


def choice_alternatives(seen: EngineChoices, limit: int = 72) -> list[EngineChoices]:
    """The other combinations of :class:`EngineChoices` that ``seen``'s run offered (at most
    ``limit``): first the random choices from ``seen.start_index``, then every other start index
    with the engine's own choices, then both; when ``seen`` dropped a regressing condition, the
    condition race (``stale_status``) alone and beside each of them.

    The start index is here because upstream's is not observable: the engine carries its own
    from step to step, which stays 0 in these small clusters (every Filter pass processes all
    nodes, schedule_one.go L692-695), while upstream was seen to start elsewhere (seed 2 pg-04:
    equally scored nodes r1-0/r1-2 taken in the other order). Only score ties depend on it."""
    combos = []
    for r in range(max(seen.generated, 1)):
        for rp in range(max(seen.generated_preempt, 1)):
            for pick in [None] if seen.tied < 2 else range(seen.tied):
                for c in range(max(seen.candidates, 1)):
                    combos.append((r, rp, pick, c))
    starts = [k for k in range(seen.nodes) if k != seen.start_index]
    out = [EngineChoices(seen.start_index, 0, 0, *c) for c in combos if c != (0, 0, None, 0)]
    out += [EngineChoices(k, 0, 0) for k in starts]
    out += [EngineChoices(k, 0, 0, *c) for k in starts for c in combos if c != (0, 0, None, 0)]
    out = out[:limit]
    if seen.regressions:  # the condition race, alone and with each of the choices above
        out = [EngineChoices(seen.start_index, stale_status=True)] + [
            x for alt in out for x in (alt, dataclasses.replace(alt, stale_status=True))]
    return out


class _ChoicePatch:
    """Applies :class:`EngineChoices` to the engine for one run (patches TopologyPlacementGenerator,
    the pod-group cycle's ``select_placement`` and, to tell its re-run apart, the framework's
    PodGroupPostFilter; restored on exit)."""

    def __init__(self, choices: EngineChoices) -> None:
        self.choices = choices

    def __enter__(self) -> _ChoicePatch:
        import kubesched.framework.preemption as pre
        import kubesched.plugins.topologyaware as ta
        import kubesched.scheduler.schedule_one_podgroup as sop
        from kubesched.framework.runtime import Framework

        ch = self.choices
        self._saved = (ta.TopologyPlacement.generate_placements, sop.select_placement,
                       Framework.run_pod_group_post_filter_plugins, pre.pick_one_node_for_preemption,
                       sop._update_condition)
        orig_gen, orig_sel, orig_pf, orig_pick, orig_upd = self._saved
        in_pf = [False]
        before_write: dict[str, Any] = {}  # PodGroup → its status before the engine's last write

        def find(status: dict[str, Any], kind: str) -> dict[str, Any] | None:
            return next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)

        def update_condition(sched: Any, pod_group: Any, condition: Any) -> None:
            if pod_group is None:
                return orig_upd(sched, pod_group, condition)
            meta = pod_group.get("metadata") or {}
            status = pod_group.get("status") or {}
            key = f"{meta.get('namespace')}/{meta.get('name')}"
            stale = before_write.get(key, status)
            before_write[key] = copy.deepcopy(status)
            seen = stale if ch.stale_status else status
            if condition["status"] != "True" and (find(seen, condition["type"]) or {}).get("status") == "True":
                ch.regressions += 1
            if not ch.stale_status or sched.client is None:
                return orig_upd(sched, pod_group, condition)
            # PatchPodGroupStatus sends the two-way strategic merge patch from the stale status to
            # the new one: only the condition's fields that differ from the stale copy reach the
            # stored object (a True overwritten by False; or, when the stale copy held an
            # Unschedulable condition, only the message — a True condition with a failure message)
            old_c, cur_c, client = find(stale, condition["type"]), find(status, condition["type"]), sched.client
            orig_patch = client.patch_pod_group_condition

            def patch(pg: Any, cond: dict[str, Any]) -> None:
                if old_c is not None and cur_c is not None:
                    cond = {**cur_c, **{k: v for k, v in cond.items() if old_c.get(k) != v}}
                orig_patch(pg, cond)

            client.patch_pod_group_condition = patch
            try:
                orig_upd(sched, {**pod_group, "status": stale}, condition)
            finally:
                del client.patch_pod_group_condition  # the class's method again

        def generate(plugin: Any, state: Any, pg_info: Any, parent: Any) -> Any:
            placements, st = orig_gen(plugin, state, pg_info, parent)
            n = len(placements)
            if in_pf[0]:
                ch.generated_preempt = max(ch.generated_preempt, n)
                r = ch.preempt_rotation
            else:
                ch.generated = max(ch.generated, n)
                r = ch.rotation
            if r and n:
                r %= n
                placements = placements[r:] + placements[:r]
            return placements, st

        def select(scores: Any, rng: Any) -> int:
            chosen = orig_sel(scores, rng)  # draws the randomizers as the engine would
            best = max(sc.total_score for sc in scores)
            tied = [k for k, sc in enumerate(scores) if sc.total_score == best]
            ch.tied = max(ch.tied, len(tied))
            if ch.pick is not None:
                return tied[ch.pick % len(tied)]
            return int(chosen)

        def post_filter(fw: Any, *args: Any, **kwargs: Any) -> Any:
            in_pf[0] = True
            try:
                return orig_pf(fw, *args, **kwargs)
            finally:
                in_pf[0] = False

        def pick_node(nodes_to_victims: Any, score_funcs: Any = None) -> str:
            names = list(nodes_to_victims)
            # the nodes that tie on every criterion: those some order of the candidates returns first
            tied: list[str] = []
            for k in range(len(names)):
                order = names[k:] + names[:k]
                got = orig_pick({n: nodes_to_victims[n] for n in order}, score_funcs)
                if got not in tied:
                    tied.append(got)
            tied.sort(key=names.index)
            ch.candidates = max(ch.candidates, len(tied))
            if ch.candidate and tied:
                return tied[ch.candidate % len(tied)]
            return str(orig_pick(nodes_to_victims, score_funcs))

        ta.TopologyPlacement.generate_placements = generate  # type: ignore[method-assign]
        sop.select_placement = select
        Framework.run_pod_group_post_filter_plugins = post_filter  # type: ignore[method-assign]
        pre.pick_one_node_for_preemption = pick_node
        sop._update_condition = update_condition
        return self

    def __exit__(self, *exc: Any) -> None:
        import kubesched.framework.preemption as pre
        import kubesched.plugins.topologyaware as ta
        import kubesched.scheduler.schedule_one_podgroup as sop
        from kubesched.framework.runtime import Framework

        (ta.TopologyPlacement.generate_placements, sop.select_placement,  # type: ignore[method-assign]
         Framework.run_pod_group_post_filter_plugins, pre.pick_one_node_for_preemption,
         sop._update_condition) = self._saved


def engine_group_step(config: Any, features: Any, objs: list[dict[str, Any]], nodes: list[dict[str, Any]],
                      bound: list[dict[str, Any]], groups: list[dict[str, Any]], step_group: dict[str, Any] | None,
                      step_pods: list[dict[str, Any]], strip: Any,
                      group_name: str | None = None,
                      choices: EngineChoices | None = None) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Replay one step through kubesched's engine from upstream's state before it; returns
    (:func:`outcome` of the step, pod → top-score nodes where the engine recorded a decision).

    ``groups`` are the PodGroups upstream held before the step (as stored), ``step_group`` the
    step's PodGroup as upstream stored it at creation (defaulted, admitted), ``step_pods`` the
    step's pods as created; ``group_name`` the group whose condition to report when the step
    only adds members to an existing one; ``choices``: the random choices to make as given
    (:class:`EngineChoices`; it records the choices offered). Raises :class:`EngineUnavailable`
    when the engine refuses groups."""
    import yaml

    from kubesched.framework.clock import ManualClock
    from kubesched.scheduler import Scheduler
    from kubesched.sim.manifests import dump_yaml_all, parse_manifest_text
    from kubesched.sim.simulate import build_store, mark_gated_pods

    def clean(g: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(g)
        out["metadata"].pop("managedFields", None)
        return out

    pending = []
    for p in step_pods:
        q = strip(p)
        q["spec"].pop("nodeName", None)
        pending.append(q)
    docs = [o for o in objs if o["kind"] not in ("Node", "Pod")] + nodes + [strip(b) for b in bound] + pending
    raws = parse_manifest_text(dump_yaml_all(docs), "<diff-groups>")
    store, bound_pods, pend, node_objs = build_store(raws)
    try:
        sched = Scheduler(config, client=store, lister=store, clock=ManualClock(), seed=0, record=True,
                          features=features)
    except Exception as e:  # the engine's registry lacks the workload plugins until gang/tas merge
        raise EngineUnavailable(f"{type(e).__name__}: {e}", permanent=True) from e
    store.scheduler = sched
    for n, raw in node_objs:
        store.add("Node", n, raw)
    for p, raw in bound_pods:
        store.add("Pod", p, raw)
    records: dict[str, Any] = {}

    def on_attempt(a: Any) -> None:
        if a.record is not None:
            records[a.pod_key] = a.record

    sched.on_attempt = on_attempt
    if choices is None:
        choices = EngineChoices()
    sched.sampler.next_start_node_index = choices.start_index
    choices.nodes = len(nodes)
    patch = _ChoicePatch(choices)
    try:
        patch.__enter__()
        for g in [*groups, *([step_group] if step_group else [])]:
            store.put_object("PodGroup", clean(g))
        store.flush()
        for p, raw in pend:
            store.add("Pod", p, raw)
        sched.run_until_idle(after_each=store.flush)
        # upstream's step lasted until nothing changed for 1 s (10 s after a preemption): let the
        # same virtual time pass, so backoffs expire and a preemptor (or a group waiting on its
        # victims) is retried as upstream retried it
        clock = sched.clock
        quiet = waited = 0.0
        while quiet < SETTLE_VIRTUAL_S and waited < MAX_VIRTUAL_S:
            clock.advance(1.0)
            waited += 1.0
            sched.queue.flush_backoff_completed()
            store.flush()
            quiet = 0.0 if sched.run_until_idle(after_each=store.flush) else quiet + 1.0
        mark_gated_pods(sched, store)
        store.flush()
    except Exception as e:
        raise EngineUnavailable(f"{type(e).__name__}: {e}") from e
    finally:
        patch.__exit__()
    choices.next_start_index = sched.sampler.next_start_node_index
    names = [p["metadata"]["name"] for p in step_pods]
    pods: dict[str, dict[str, Any]] = {}
    for key, cur in store.pods.items():
        ns, _, name = key.partition("/")
        conds = [{"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
                 for c in cur.status.conditions]
        pods[name] = {"metadata": {"name": name, "resourceVersion": "0"},
                      "spec": {"nodeName": cur.spec.node_name or None},
                      "status": {"conditions": conds}}
    gname = step_group["metadata"]["name"] if step_group else group_name
    g_now = store.get("PodGroup", NS, gname) if gname else None
    out = outcome(names, pods, g_now if isinstance(g_now, dict) else None,
                  [b["metadata"]["name"] for b in bound])
    top: dict[str, list[str]] = {}
    for n in names:
        rec = records.get(f"{NS}/{n}")
        if rec is not None and rec.final_score:
            scores = {k: (v if isinstance(v, (int, float)) else sum(v.values())) for k, v in rec.final_score.items()}
            best = max(scores.values())
            top[n] = sorted(k for k, v in scores.items() if v == best)
    return out, top


# --------------------------------------------------------------------------- comparison


@dataclass
class GroupResult:
    step: str
    areas: set[str]
    agree: bool
    kind: str  # "bound", "unschedulable", "partial", "preempted", or the disagreement kind
    detail: str = ""
    #: pods bound on both sides, and how many of them on the very same node
    both_bound: int = 0
    exact: int = 0
    #: what upstream did with the step (:func:`upstream_kind`)
    upstream_kind: str = ""


def upstream_kind(up: dict[str, Any]) -> str:
    """``preempted`` (victims), ``bound`` (every pod), ``unschedulable`` (none; with a condition),
    ``held`` (none and no condition at all: PreEnqueue), or ``partial``."""
    pods = up["pods"].values()
    if up["victims"]:
        return "preempted"
    if all(v["node"] for v in pods):
        return "bound"
    if not any(v["node"] for v in pods):
        return "held" if all(v["message"] == "<no condition>" for v in pods) else "unschedulable"
    return "partial"


def compare_group(step: str, areas: set[str], up: dict[str, Any], ks: dict[str, Any],
                  top: dict[str, list[str]]) -> GroupResult:
    """Compare one step's outcome upstream with the engine's.

    Whole-group: the same number of members bound, the same PodGroup condition (status, reason,
    message), the same victims. Per pod: bound on both or on neither; unbound pods' messages
    equal. Nodes: a pod agrees when its node is the same, or both are among the engine's
    top-score nodes for it; else the step agrees on nodes when the multisets of nodes are equal
    (members of one group are interchangeable: same spec) — exact-node counts the very same."""
    up_pods, ks_pods = up["pods"], ks["pods"]
    up_bound = {n for n, v in up_pods.items() if v["node"]}
    ks_bound = {n for n, v in ks_pods.items() if v["node"]}
    both = up_bound & ks_bound
    exact = sum(up_pods[n]["node"] == ks_pods[n]["node"] for n in both)
    kind = ("preempted" if up["victims"] else "bound" if up_bound == set(up_pods)
            else "unschedulable" if not up_bound else "partial")
    problems: list[str] = []
    if len(up_bound) != len(ks_bound):
        problems.append(f"outcome: upstream bound {len(up_bound)}/{len(up_pods)}, kubesched {len(ks_bound)}")
    if up["group_condition"] != ks["group_condition"]:
        problems.append(f"condition: upstream {up['group_condition']}, kubesched {ks['group_condition']}")
    if up["victims"] != ks["victims"]:
        problems.append(f"victims: upstream {up['victims']}, kubesched {ks['victims']}")
    for n in sorted(up_pods):
        u, k = up_pods[n], ks_pods.get(n, {"node": None, "message": "<missing>"})
        if not u["node"] and not k["node"] and u["message"] != k["message"]:
            problems.append(f"message {n}: upstream {u['message']!r}, kubesched {k['message']!r}")
    if not problems:
        node_ok = all(up_pods[n]["node"] == ks_pods[n]["node"]
                      or (up_pods[n]["node"] in top.get(n, []) and ks_pods[n]["node"] in top.get(n, []))
                      for n in both)
        if not node_ok and Counter(up_pods[n]["node"] for n in both) != Counter(ks_pods[n]["node"] for n in both):
            problems.append("node: upstream " + ", ".join(f"{n}→{up_pods[n]['node']}" for n in sorted(both))
                            + "; kubesched " + ", ".join(f"{n}→{ks_pods[n]['node']}" for n in sorted(both)))
    if problems:
        dk = problems[0].split(":")[0].split(" ")[0]
        return GroupResult(step, areas, False, dk, "; ".join(problems), len(both), exact)
    return GroupResult(step, areas, True, kind,
                       f"{len(up_bound)}/{len(up_pods)} bound" + (f", condition {up['group_condition']['reason']}"
                                                                   if up["group_condition"] else ""),
                       len(both), exact)


# --------------------------------------------------------------------------- the hand-written scenarios


def _nodes(n: int, cpu: str = "4", prefix: str = "n", labels: Any = None, gpu: int = 0) -> list[dict[str, Any]]:
    return [node(f"{prefix}{i}", cpu=cpu, labels=labels(i) if labels else None, gpu=gpu) for i in range(n)]


def _members(group: str, n: int, cpu: str, prio: str | None = None) -> list[dict[str, Any]]:
    return [pod(f"{group}-{i}", cpu=cpu, group=group, priority_class=prio, labels={"app": group}) for i in range(n)]


def scenarios() -> list[dict[str, Any]]:
    """The hand-written scenarios of ``tests/upstream/data/podgroup_truths.yaml`` (inputs only)."""
    def racks(sizes: dict[str, tuple[int, str]]) -> list[dict[str, Any]]:
        out = []
        for r, (n, cpu) in sizes.items():
            out += [node(f"{r}-n{i}", cpu=cpu, labels={RACK: r, BLOCK: "block-0"}) for i in range(n)]
        return out

    pcs = [priority_class("low", 10), priority_class("high", 1000), priority_class("high-never", 1000, "Never")]
    return [
        {"name": "gang-fits", "doc": "gang of 4 (minCount 4) on 4 nodes, one member per node",
         "objects": _nodes(4), "steps": [{"podGroup": pod_group("g", 4), "pods": _members("g", 4, "3")}]},
        {"name": "gang-4-where-3-fit", "doc": "gang of 4 (minCount 4), only 3 members fit: none bound",
         "objects": _nodes(3), "steps": [{"podGroup": pod_group("g", 4), "pods": _members("g", 4, "3")}]},
        {"name": "gang-4-where-3-fit-without-tas", "doc": "the same with TopologyAwareWorkloadScheduling off: "
         "no placements in the messages",
         "gates": {"TopologyAwareWorkloadScheduling": False},
         "objects": _nodes(3), "steps": [{"podGroup": pod_group("g", 4), "pods": _members("g", 4, "3")}]},
        {"name": "gang-mincount-2-of-4-where-3-fit", "doc": "minCount 2 < 4 members, 3 fit",
         "objects": _nodes(3), "steps": [{"podGroup": pod_group("g", 2), "pods": _members("g", 4, "3")}]},
        {"name": "gang-quorum-not-reached", "doc": "minCount 4 but only 3 members exist: held by PreEnqueue",
         "objects": _nodes(4), "steps": [{"podGroup": pod_group("g", 4), "pods": _members("g", 3, "1")}]},
        {"name": "gang-quorum-arrives-later", "doc": "minCount 2: the first member waits without a condition "
         "until the second arrives, then both are bound",
         "objects": _nodes(2),
         "steps": [{"podGroup": pod_group("g", 2), "pods": _members("g", 1, "1")},
                   {"group": "g", "pods": [pod("g-1", "1", group="g", labels={"app": "g"})]}]},
        {"name": "gang-member-after-quorum", "doc": "minCount 2 met and bound; a third member arriving later is "
         "scheduled on its own",
         "objects": _nodes(3),
         "steps": [{"podGroup": pod_group("g", 2), "pods": _members("g", 2, "1")},
                   {"group": "g", "pods": [pod("g-2", "1", group="g", labels={"app": "g"})]}]},
        {"name": "basic-group-3-where-2-fit", "doc": "basic policy: members placed as far as they fit",
         "objects": _nodes(2), "steps": [{"podGroup": pod_group("g", None), "pods": _members("g", 3, "3")}]},
        {"name": "gang-rack-denser-rack-wins", "doc": "topology rack; both racks fit, rack-a (4 cpu nodes) is "
         "denser than rack-b (8 cpu nodes): NodeResourcesFit PlacementScore (MostAllocated) picks rack-a",
         "objects": racks({"rack-a": (2, "4"), "rack-b": (2, "8")}),
         "steps": [{"podGroup": pod_group("g", 2, topology=RACK), "pods": _members("g", 2, "3")}]},
        {"name": "gang-rack-only-one-fits", "doc": "topology rack; 3 members of 3 cpu fit only in the 3-node rack",
         "objects": racks({"rack-a": (2, "4"), "rack-b": (3, "4")}),
         "steps": [{"podGroup": pod_group("g", 3, topology=RACK), "pods": _members("g", 3, "3")}]},
        {"name": "gang-rack-none-fits", "doc": "topology rack; 3 members fit the cluster but no single rack",
         "objects": racks({"rack-a": (2, "4"), "rack-b": (2, "4")}),
         "steps": [{"podGroup": pod_group("g", 3, topology=RACK), "pods": _members("g", 3, "3")}]},
        {"name": "gang-preempts-low-pods", "doc": "high-priority gang of 2 on 2 full nodes: preempts both low pods",
         "objects": [*pcs, *_nodes(2)],
         "steps": [{"pods": [pod("low-0", "3", priority_class="low")]},
                   {"pods": [pod("low-1", "3", priority_class="low")]},
                   {"podGroup": pod_group("g", 2, priority_class="high"), "pods": _members("g", 2, "3", "high")}]},
        {"name": "podgroup-never-class-refused", "doc": "a PodGroup naming a preemptionPolicy: Never class "
         "without preemptionPolicy: Never is refused by admission (defaulting filled PreemptLowerPriority)",
         "objects": [*pcs, *_nodes(2)],
         "steps": [{"pods": [pod("low-0", "3", priority_class="low")]},
                   {"pods": [pod("low-1", "3", priority_class="low")]},
                   {"podGroup": pod_group("g", 2, priority_class="high-never"),
                    "pods": _members("g", 2, "3", "high-never")}]},
        {"name": "gang-never-class-explicit-policy", "doc": "a Never class on the PodGroup needs an explicit "
         "preemptionPolicy: Never (defaulting fills PreemptLowerPriority first); the gang then does not preempt",
         "objects": [*pcs, *_nodes(2)],
         "steps": [{"pods": [pod("low-0", "3", priority_class="low")]},
                   {"pods": [pod("low-1", "3", priority_class="low")]},
                   {"podGroup": pod_group("g", 2, priority_class="high-never", preemption_policy="Never"),
                    "pods": _members("g", 2, "3", "high-never")}]},
        {"name": "pod-preempts-disruption-all-gang", "doc": "a low gang with disruptionMode all on 2 nodes; a "
         "high single pod needing one node evicts the whole gang (one victim unit)",
         "objects": [*pcs, *_nodes(2)],
         "steps": [{"podGroup": pod_group("g", 2, priority_class="low", disruption_all=True),
                    "pods": _members("g", 2, "3", "low")},
                   {"pods": [pod("high-0", "3", priority_class="high")]}]},
        {"name": "pod-preempts-one-of-disruption-single-gang", "doc": "the same gang with the default "
         "disruptionMode single: only one member is evicted",
         "objects": [*pcs, *_nodes(2)],
         "steps": [{"podGroup": pod_group("g", 2, priority_class="low"), "pods": _members("g", 2, "3", "low")},
                   {"pods": [pod("high-0", "3", priority_class="high")]}]},
        {"name": "gang-priority-mismatch", "doc": "PodGroup priority high, members without a class: the "
         "pod-group cycle's validation fails every member",
         "objects": [*pcs, *_nodes(2)],
         "steps": [{"podGroup": pod_group("g", 2, priority_class="high"), "pods": _members("g", 2, "1")}]},
        {"name": "gang-second-group-waits-for-room", "doc": "two gangs of 2 on 2 nodes, the second does not fit "
         "beside the first: all-or-nothing per group",
         "objects": _nodes(2),
         "steps": [{"podGroup": pod_group("a", 2), "pods": _members("a", 2, "3")},
                   {"podGroup": pod_group("b", 2), "pods": _members("b", 2, "3")}]},
    ]


def run_example(paths: list[str], *, groups: bool, stable: float = 1.0, timeout: float = 60.0) -> dict[str, Any]:
    """Run a manifest set such as ``examples/gang`` on the real v1.37.2: nodes and running pods
    first, then kube-scheduler, then the pending pods in arrival order (``creationTimestamp``,
    then name), one arrival at a time — a PodGroup with its members — each settled before the
    next. ``groups``: with :data:`GROUP_GATES` and the v1beta1 API; without, PodGroups are
    skipped (the API is not served) and the API server drops ``spec.schedulingGroup``.
    Returns pod → node (or its message) and PodGroup → its condition."""
    import yaml

    docs: list[dict[str, Any]] = []
    for path in paths:
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs if f.endswith(".yaml")) \
            if os.path.isdir(path) else [path]
        for fn in files:
            with open(fn) as f:
                docs += [d for d in yaml.safe_load_all(f) if d]
    cp = start_control_plane() if groups else ControlPlane.start(version="1.37")
    try:
        ns = "default"
        for d in docs:
            if d["kind"] == "Namespace":
                create(cp, d)
        for d in docs:
            if d["kind"] in ("Node", "PriorityClass"):
                create(cp, d)
        for d in docs:
            if d["kind"] == "Pod" and d["spec"].get("nodeName"):
                body = copy.deepcopy(d)
                body.pop("status", None)
                create(cp, body)
        cp.start_kube_scheduler({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                 "kind": "KubeSchedulerConfiguration", "parallelism": 1,
                                 "leaderElection": {"leaderElect": False}})
        pending = sorted((d for d in docs if d["kind"] == "Pod" and not d["spec"].get("nodeName")),
                         key=lambda d: (str(d["metadata"].get("creationTimestamp", "")), d["metadata"]["name"]))
        pgs = {d["metadata"]["name"]: d for d in docs if d["kind"] == "PodGroup"}
        arrivals: dict[str, list[dict[str, Any]]] = {}
        for d in pending:
            arrivals.setdefault(str(d["metadata"].get("creationTimestamp", "")), []).append(d)
        timings = []
        for _, batch in sorted(arrivals.items()):
            ns = batch[0]["metadata"].get("namespace", NS)
            group = (batch[0]["spec"].get("schedulingGroup") or {}).get("podGroupName")
            if groups and group in pgs:
                create(cp, pgs[group])
            for d in batch:
                body = copy.deepcopy(d)
                body["metadata"].pop("creationTimestamp", None)
                create(cp, body)
            st = settle_step(cp, [d["metadata"]["name"] for d in batch], group if groups else None,
                             stable, timeout, ns=ns)
            timings.append(round(st.seconds, 1))
        pods = list_pods(cp, ns)
        out = {n: (p["spec"].get("nodeName") or (scheduled_condition(p) or {}).get("message", "<no condition>"))
               for n, p in sorted(pods.items()) if n in {d["metadata"]["name"] for d in pending}}
        conds = {n: group_condition(g) for n, g in list_pod_groups(cp, ns).items()}
        return {"pods": out, "pod_groups": {n: {k: c.get(k) for k in ("status", "reason", "message")} if c else None
                                            for n, c in conds.items()}, "settle_seconds": timings}
    finally:
        cp.stop()


def main(argv: list[str] | None = None) -> int:
    """``python tools/upstream/diff_groups.py --record FILE [--only NAME]``: run the scenarios on
    the real v1.37.2 and write inputs and observations to FILE (YAML)."""
    import argparse

    import yaml

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--record")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--example", action="append", default=[], metavar="PATH",
                    help="instead: run this manifest set (e.g. examples/gang) with and without the gates, print YAML")
    a = ap.parse_args(argv)
    if a.example:
        res = {"without gates": run_example(a.example, groups=False),
               "with " + ",".join(GROUP_GATES): run_example(a.example, groups=True)}
        print(yaml.safe_dump(res, sort_keys=False, width=200))
        return 0
    if not a.record:
        ap.error("--record FILE or --example PATH")
    try:
        with open(a.record) as f:
            doc = yaml.safe_load(f) or {}
    except FileNotFoundError:
        doc = {}
    have = {s["name"]: s for s in doc.get("scenarios", [])}
    out = []
    for scn in scenarios():
        if a.only and scn["name"] not in a.only:
            if scn["name"] in have:
                out.append(have[scn["name"]])
            continue
        t0 = time.monotonic()
        try:
            obs = run_scenario(scn)
        except Exception as e:  # keep the others
            print(f"{scn['name']}: FAILED {e}", flush=True)
            if scn["name"] in have:
                out.append(have[scn["name"]])
            continue
        print(f"{scn['name']}: {time.monotonic() - t0:.0f} s", flush=True)
        out.append({**scn, "observed": obs})
        doc["scenarios"] = out + [have[s["name"]] for s in scenarios()[len(out):] if s["name"] in have]
        _write_truths(a.record, doc)
    doc["scenarios"] = out
    _write_truths(a.record, doc)
    return 0


def _write_truths(path: str, doc: dict[str, Any]) -> None:
    import yaml

    with open(path, "w") as f:
        f.write("# Observed on the real kube-scheduler/kube-apiserver v1.37.2 with GenericWorkload,\n"
                "# TopologyAwareWorkloadScheduling and PodGroupPreemptionPolicy on and\n"
                "# --runtime-config=scheduling.k8s.io/v1beta1=true; written by\n"
                "# `python tools/upstream/diff_groups.py --record tests/upstream/data/podgroup_truths.yaml`.\n"
                "# `seconds`: how long the step took to settle (stable 1 s included; 10 s after a preemption).\n")
        yaml.safe_dump(doc, f, sort_keys=False, width=120)


if __name__ == "__main__":
    sys.exit(main())
