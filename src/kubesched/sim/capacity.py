"""``kubesched capacity``: how many more replicas of a pod fit the cluster (cluster-capacity's analysis).

Follows kubernetes-sigs/cluster-capacity (``pkg/framework/simulator.go``, ``report.go``): the
cluster is loaded as ``simulate`` loads it (its pending pods are scheduled first, as a live
scheduler would before any new pod), then copies of the pod — named ``<name>-<i>`` from 0, as
cluster-capacity's pod generator does — are created one at a time and go through the real
scheduler (same :class:`~kubesched.scheduler.Scheduler`, profiles, plugins and
``--config``) until one fails. The stop reason is the failed attempt's ``PodScheduled``
condition, ``<reason>: <message>`` (``Unschedulable: 0/3 nodes are available: 3 Insufficient
cpu. …``), or ``LimitReached: Maximum number of pods simulated: N`` with ``max_replicas``.

The world is built once: each replica is one informer add and one scheduling cycle on the
same NodeTable, so thousands of replicas on thousands of nodes cost one scheduling attempt each.

Per node the report gives the replicas placed and the remaining allocatable (allocatable minus
the requests of every pod on the node), taken before the failed attempt: when that attempt
preempted (the pod's priority allowed it), the victims' deletion is not counted, and the node
it was nominated to is reported.
"""

from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from kubesched.api.objects import Pod
from kubesched.api.resources import pod_requests
from kubesched.config import KubeSchedulerConfiguration
from kubesched.errors import ManifestError
from kubesched.framework.clock import ManualClock
from kubesched.framework.node_table import NodeTable
from kubesched.scheduler import Attempt
from kubesched.sim.manifests import RawObject
from kubesched.sim.simulate import build_store, simulate

__all__ = ["CapacityResult", "NodeCapacity", "capacity", "format_quantity", "load_template_pod"]

_BINARY = (("Ei", 1 << 60), ("Pi", 1 << 50), ("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10))
_BYTES = frozenset({"memory", "ephemeral-storage"})
_UID_NS = uuid.UUID("6f1c1c56-8a43-4a0e-9a55-7d1e1b0c0a11")


def format_quantity(resource: str, v: int) -> str:
    """A canonical quantity for ``v`` in the engine's units: cpu millicores → ``"2"`` or
    ``"1500m"``; memory / ephemeral-storage bytes → the largest exact binary suffix
    (``"3Gi"``, ``"1536Mi"``) or plain bytes; anything else as an integer."""
    if resource == "cpu":
        return str(v // 1000) if v % 1000 == 0 else f"{v}m"
    if resource in _BYTES and v:
        for suffix, unit in _BINARY:
            if v % unit == 0:
                return f"{v // unit}{suffix}"
    return str(v)


@dataclass
class NodeCapacity:
    """One node of the report: ``replicas`` placed there, ``allocatable`` and ``remaining``
    (allocatable minus all requests on the node) by resource name, in the engine's units
    (cpu millicores, memory bytes, pods a count)."""

    name: str
    replicas: int
    allocatable: dict[str, int]
    remaining: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"nodeName": self.name, "replicas": self.replicas,
                "allocatable": {k: format_quantity(k, v) for k, v in self.allocatable.items()},
                "remaining": {k: format_quantity(k, v) for k, v in self.remaining.items()}}


@dataclass
class CapacityResult:
    """What :func:`capacity` found.

    ``placements``: the node of each replica, in creation order (replica ``i`` is
    ``<name>-<i>``). ``fail_type`` / ``fail_message``: cluster-capacity's ``failReason``
    (``Unschedulable``, ``SchedulerError``, ``LimitReached``, ``NotScheduled``).
    ``nominated_node``: where the failed replica was nominated after preempting, if it did.
    ``pending_scheduled`` / ``pending_unschedulable``: the input's own pending pods, scheduled
    before the first replica.
    """

    template: Pod
    template_raw: dict[str, Any]
    max_replicas: int | None
    placements: list[str]
    fail_type: str
    fail_message: str
    nodes: list[NodeCapacity]
    resources: list[str]
    nominated_node: str | None = None
    pending_scheduled: int = 0
    pending_unschedulable: int = 0
    requests: dict[str, int] = field(default_factory=dict)

    @property
    def replicas(self) -> int:
        return len(self.placements)

    @property
    def pod_name(self) -> str:
        return self.template.metadata.name

    def replicas_on_nodes(self) -> list[tuple[str, int]]:
        """``(node, replicas)`` in the order nodes first received a replica (cluster-capacity's order)."""
        counts: dict[str, int] = {}
        for n in self.placements:
            counts[n] = counts.get(n, 0) + 1
        return list(counts.items())

    def to_dict(self) -> dict[str, Any]:
        """cluster-capacity's ``ClusterCapacityReview`` (``spec``/``status``), plus
        ``status.nodes`` (the per-node table) and ``status.failReason.nominatedNodeName``."""
        primary = {k: format_quantity(k, self.requests.get(k, 0)) for k in ("cpu", "memory")}
        scalar = {k: v for k, v in self.requests.items() if k not in ("cpu", "memory", "ephemeral-storage", "pods")}
        fail: dict[str, Any] = {"failType": self.fail_type, "failMessage": self.fail_message}
        if self.nominated_node:
            fail["nominatedNodeName"] = self.nominated_node
        return {
            "kind": "ClusterCapacityReview",
            "spec": {
                "templates": [self.template_raw],
                "replicas": self.max_replicas or 0,
                "podRequirements": [{
                    "podName": self.pod_name,
                    "resources": {"primaryResources": primary, "scalarResources": scalar or None},
                    "nodeSelectors": dict(self.template.spec.node_selector or {}) or None,
                }],
            },
            "status": {
                "replicas": self.replicas,
                "failReason": fail,
                "pods": [{"podName": self.pod_name,
                          "replicasOnNodes": [{"nodeName": n, "replicas": c} for n, c in self.replicas_on_nodes()],
                          "failSummary": None}],
                "nodes": [n.to_dict() for n in self.nodes],
                "pendingPods": {"scheduled": self.pending_scheduled, "unschedulable": self.pending_unschedulable},
            },
        }


def load_template_pod(objs: list[RawObject], where: str) -> RawObject:
    """The one Pod of ``--pod``'s file, with ``spec.nodeName`` and ``status`` dropped (as
    cluster-capacity resets the node designation). Raises :class:`ManifestError` unless the
    file holds exactly one object, a Pod."""
    if len(objs) != 1:
        kinds = ", ".join(f"{o.kind} {o.name}" for o in objs) or "nothing"
        raise ManifestError(f"expected exactly one Pod, found {len(objs)} object(s): {kinds}", where)
    r = objs[0]
    if r.kind != "Pod":
        raise ManifestError(f"expected a Pod, found {r.describe()} (a workload's spec.template goes in a Pod)",
                            r.source)
    data = copy.deepcopy(r.data)
    spec = data.get("spec")
    if isinstance(spec, dict):
        spec.pop("nodeName", None)
    data.pop("status", None)
    return RawObject(r.kind, r.api_version, data, r.source, r.index)


def _resolve_template(raws: list[RawObject], template: RawObject) -> Pod:
    """Decode, check and admit (priority) the template through ``simulate``'s loading path."""
    classes = [r for r in raws if r.kind == "PriorityClass"]
    _store, _bound, pending, _nodes = build_store([*classes, template])
    pod = next(p for p, raw in pending if raw is template.data)
    if pod.spec.scheduling_gates:
        raise ManifestError("the pod has spec.schedulingGates: no replica would ever be scheduled",
                            template.source)
    return pod


def _run_until_attempted(sched: Any, store: Any, key: str, last: dict[str, Attempt]) -> None:
    """Schedule (pods ahead of it in the queue first) until ``key``'s first attempt is decided,
    then stop, so a failed replica's state is the one right after its failure. Permit waits
    move virtual time on, as in ``simulate``."""
    clock = sched.clock
    while key not in last:
        if sched.queue.has_schedulable() and sched.schedule_one() is not None:
            store.flush()
            continue
        store.flush()
        if key in last or not isinstance(clock, ManualClock) or (due := clock.next_timer()) is None:
            return
        clock.set(due)
        store.flush()


def _node_rows(table: NodeTable) -> list[int]:
    """Alive rows in node-add order (the input order)."""
    return sorted(table.row_of.values())


def capacity(raws: list[RawObject], template: RawObject, config: KubeSchedulerConfiguration | None = None, *,
             seed: int = 0, registry: dict[str, Any] | None = None,
             max_replicas: int | None = None, features: Any = None) -> CapacityResult:
    """Schedule replicas of ``template`` (see :func:`load_template_pod`) onto the cluster of
    ``raws`` until one fails or ``max_replicas`` are placed.

    Raises :class:`ManifestError` / ``ConfigError`` for bad input (as :func:`simulate`), and
    ``ManifestError`` when a replica name is taken by a pod of the input.
    """
    tpl = _resolve_template(raws, template)
    result = simulate(raws, config, seed=seed, registry=registry, features=features)
    store, sched = result.store, result.scheduler
    store.keep_events = False
    if not sched.responsible_for(tpl):
        raise ManifestError(f'the pod names schedulerName "{tpl.spec.scheduler_name}", which no profile of the '
                            "configuration has", template.source)
    table = sched.table
    pending_sched = sum(1 for o in result.outcomes if o.node)
    pending_unsched = len(result.outcomes) - pending_sched

    last: dict[str, Attempt] = {}

    def on_attempt(a: Attempt) -> None:
        # a replica's first attempt decides (cluster-capacity stops at the first Unschedulable
        # condition, even when preemption would make room for a later attempt)
        last.setdefault(a.pod_key, a)

    sched.on_attempt = on_attempt
    placements: list[str] = []
    fail_type, fail_message = "", ""
    nominated: str | None = None
    base = tpl.metadata
    requested_before = table.requested.copy()
    i = 0
    while True:
        if max_replicas is not None and i >= max_replicas:
            fail_type, fail_message = "LimitReached", f"Maximum number of pods simulated: {max_replicas}"
            break
        name = f"{base.name}-{i}"
        key = f"{base.namespace}/{name}"
        if key in store.pods:
            raise ManifestError(f"replica name {key} is taken by a pod of the input; rename the template pod",
                                template.source)
        meta = msgspec.structs.replace(base, name=name, uid=str(uuid.uuid5(_UID_NS, f"{key}/{seed}")))
        pod = msgspec.structs.replace(tpl, metadata=meta)
        requested_before = table.requested.copy()
        store.add("Pod", pod)
        _run_until_attempted(sched, store, key, last)
        att = last.get(key)
        if att is not None and att.result == "scheduled" and att.node:
            placements.append(att.node)
            i += 1
            continue
        cur = store.pods.get(key)
        cond = next((c for c in cur.status.conditions if c.type == "PodScheduled"), None) if cur else None
        if att is None:
            fail_type = "NotScheduled"
            fail_message = (cond.message if cond and cond.message else
                            "the pod was never attempted (held back by a PreEnqueue plugin)")
        else:
            fail_type = (cond.reason if cond and cond.reason else
                         "Unschedulable" if att.result == "unschedulable" else "SchedulerError")
            fail_message = att.message
        if cur is not None and cur.status.nominated_node_name:
            nominated = cur.status.nominated_node_name
        break

    counts: dict[str, int] = {}
    for n in placements:
        counts[n] = counts.get(n, 0) + 1
    reqs = pod_requests(tpl)
    resources = ["cpu", "memory", "pods"]
    for r in reqs:
        if r not in resources and reqs[r] > 0 and r in table.resource_index:
            resources.append(r)
    cols = [table.resource_index[r] for r in resources]
    alloc = table.allocatable[:, cols]
    if requested_before.shape[1] < table.requested.shape[1]:  # a resource column appeared during the run
        pad = np.zeros((requested_before.shape[0], table.requested.shape[1] - requested_before.shape[1]), np.int64)
        requested_before = np.hstack([requested_before, pad])
    remaining = alloc - requested_before[: alloc.shape[0], cols]
    nodes: list[NodeCapacity] = []
    for row in _node_rows(table):
        a = alloc[row].tolist()
        rem = np.asarray(remaining[row]).tolist()
        nm = table.names[row]
        nodes.append(NodeCapacity(nm, counts.get(nm, 0), dict(zip(resources, a, strict=True)),
                                  dict(zip(resources, rem, strict=True))))
    return CapacityResult(tpl, template.data, max_replicas, placements, fail_type, fail_message, nodes, resources,
                          nominated, pending_sched, pending_unsched, reqs)
