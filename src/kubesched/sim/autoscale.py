"""``simulate --add-nodes``: how many nodes of a template shape the pending pods need.

Follows cluster-autoscaler's binpacking estimate (``cluster-autoscaler/estimator/
binpacking_estimator.go`` and ``decreasing_pod_orderer.go``), with kubesched's own PreFilter
and Filter plugins as the predicates (the same profile, plugins and ``--config`` the
simulation ran with; Score plugins play no part, as in the estimator):

* the pods still pending after the simulation (not gated, not bound) are ordered by decreasing
  ``cpu request / template cpu + memory request / template memory`` (First-Fit Decreasing),
  ties in queue order;
* each pod goes to the first added node that passes the predicates (in the order the nodes
  were added); otherwise a fresh node of the template is added and the pod is checked on it;
* a pod that does not pass on a fresh, empty template node cannot be helped by this template:
  it is reported with the FailedScheduling-style message of that one-node check
  (``0/1 nodes are available: 1 Insufficient cpu.``), the empty node is kept for the next pod
  (as the estimator does) and dropped at the end if it stays empty.

A placed pod is bound in the store (``spec.nodeName``), so the next pods see it (resources,
ports, affinity, spreading). Added nodes are named ``<template name>-<i>`` from 0 (skipping names
already taken); their ``kubernetes.io/hostname`` label is the new name (the estimator's
``FreshNodeInfoFromTemplateNodeInfo``).

Like a template NodeInfo in cluster-autoscaler, each added node first runs the DaemonSets'
pods: for every DaemonSet with a pod bound in the cluster (a pod whose controller
ownerReference is a DaemonSet), a copy of that pod — named ``<daemonset>-<node>``, its
``metadata.name`` node-affinity field pointed at the new node, as the DaemonSet controller does —
is bound to the new node when it passes the predicates there.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from kubesched.api.objects import KINDS, Node, Pod, decode, node_allocatable
from kubesched.api.quantity import to_int
from kubesched.errors import ManifestError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis, fit_error_message
from kubesched.framework.interface import Status
from kubesched.framework.node_info import PodInfo, QueuedPodInfo
from kubesched.scheduler.schedule_one import drive
from kubesched.sim.manifests import RawObject
from kubesched.sim.simulate import SimulationResult, build_store

__all__ = ["AddNodesResult", "HOSTNAME_LABEL", "add_nodes", "load_node_template"]

HOSTNAME_LABEL = "kubernetes.io/hostname"
ADDED_ANNOTATION = "kubesched.io/added-from-template"
_DROP_META = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "selfLink")


@dataclass
class AddNodesResult:
    """``nodes``: the added nodes (each holds at least one pod), in order; ``placements``:
    ``(pod key, node)`` in placement order; ``unplaced``: ``(pod key, reason)`` for pods the
    template cannot take; ``pending``: how many pods were pending before."""

    template: str
    nodes: list[str] = field(default_factory=list)
    placements: list[tuple[str, str]] = field(default_factory=list)
    unplaced: list[tuple[str, str]] = field(default_factory=list)
    pending: int = 0
    daemonsets: list[str] = field(default_factory=list)
    """``namespace/name`` of the DaemonSets whose pods run on every added node."""

    def pods_on(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {n: [] for n in self.nodes}
        for key, node in self.placements:
            out.setdefault(node, []).append(key)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"template": self.template, "pendingPods": self.pending, "nodesNeeded": len(self.nodes),
                "nodes": [{"name": n, "pods": pods} for n, pods in self.pods_on().items()],
                "placements": [{"pod": k, "node": n} for k, n in self.placements],
                "unplaced": [{"pod": k, "reason": r} for k, r in self.unplaced],
                "daemonSets": self.daemonsets}


def load_node_template(objs: list[RawObject], where: str) -> RawObject:
    """The one Node of the ``--add-nodes`` file, checked as ``simulate`` checks nodes, without
    the fields a new node would not carry (uid, resourceVersion, creationTimestamp, …).

    Raises :class:`ManifestError` (``file:line`` and the field) unless the file holds exactly
    one Node with a valid, non-empty ``status.allocatable``."""
    if len(objs) != 1:
        kinds = ", ".join(o.describe() for o in objs) or "nothing"
        raise ManifestError(f"expected exactly one Node template, found {len(objs)} object(s): {kinds}", where)
    r = objs[0]
    if r.kind != "Node":
        raise ManifestError(f"expected a Node template, found {r.describe()}", r.source)
    data = copy.deepcopy(r.data)
    meta = data.setdefault("metadata", {})
    for k in _DROP_META:
        meta.pop(k, None)
    status = data.get("status")
    alloc = status.get("allocatable") if isinstance(status, dict) else None
    if not isinstance(alloc, dict) or not alloc:
        raise ManifestError(f"{r.describe()}: status.allocatable: Required value: a node template needs its "
                            "allocatable resources (cpu, memory, pods)", r.source)
    tpl = RawObject(r.kind, r.api_version, data, r.source, r.index)
    build_store([tpl])  # decode + quantity checks, errors with the field path
    return tpl


def _score(qpi: QueuedPodInfo, cpu: int, mem: int) -> float:
    """``decreasing_pod_orderer``: cpu/node cpu + memory/node memory of the pod's requests."""
    req = qpi.pod_info.requests
    s = 0.0
    if cpu > 0:
        s += req.get("cpu", 0) / cpu
    if mem > 0:
        s += req.get("memory", 0) / mem
    return s


def add_nodes(result: SimulationResult, template: RawObject) -> AddNodesResult:
    """Add template nodes to the simulation's cluster until every pending pod is placed or
    known not to fit (see the module docstring). Mutates ``result``: the store holds the added
    nodes and the placed pods bound to them, and ``result.raws`` gets the added nodes, so
    ``result.output_objects()`` is the cluster after the scale-up."""
    store, sched = result.store, result.scheduler
    table = sched.table
    tname = template.name
    alloc = node_allocatable(decode(KINDS["Node"], template.data))
    cpu = to_int("cpu", alloc["cpu"]) if "cpu" in alloc else 0
    mem = to_int("memory", alloc["memory"]) if "memory" in alloc else 0
    order = {o.key: i for i, o in enumerate(result.outcomes)}
    pending = [q for q in sched.queue.pending()
               if not q.gated and not q.pod.spec.node_name and q.key in order]
    pending.sort(key=lambda q: (-_score(q, cpu, mem), order[q.key]))
    out = AddNodesResult(template=tname, pending=len(pending))
    new_rows: list[int] = []
    used: set[int] = set()
    index = 0
    next_raw_index = max((r.index for r in result.raws), default=-1) + 1

    exemplars = _daemonset_exemplars(store)
    ds_on_new: dict[str, list[str]] = {}

    def add_node() -> int:
        nonlocal index, next_raw_index
        while f"{tname}-{index}" in store.nodes:
            index += 1
        name = f"{tname}-{index}"
        index += 1
        data = copy.deepcopy(template.data)
        meta = data["metadata"]
        meta["name"] = name
        meta["labels"] = {**(meta.get("labels") or {}), HOSTNAME_LABEL: name}
        meta["annotations"] = {**(meta.get("annotations") or {}), ADDED_ANNOTATION: tname}
        node: Node = decode(KINDS["Node"], data)
        store.add("Node", node, data)
        result.raws.append(RawObject("Node", template.api_version, data, f"{template.source} ({name})",
                                     next_raw_index))
        next_raw_index += 1
        row = table.row_of[name]
        new_rows.append(row)
        for ds, ex in exemplars:
            if _add_daemon_pod(store, sched, ex, name, result):
                ds_on_new.setdefault(ds, []).append(name)
        return row

    for qpi in pending:
        fit, msg = _first_fit(sched, qpi, new_rows)
        if fit is None:
            last = new_rows[-1] if new_rows else None
            if last is not None and last not in used:
                out.unplaced.append((qpi.key, msg))  # did not pass on an empty template node
                continue
            row = add_node()
            fit, msg = _first_fit(sched, qpi, [row])
            if fit is None:
                out.unplaced.append((qpi.key, msg))
                continue
        node_name = table.names[fit]
        task = drive(store.bind(qpi.pod, node_name))
        store.flush()
        task.result()
        used.add(fit)
        out.placements.append((qpi.key, node_name))
    for row in [r for r in new_rows if r not in used]:  # at most the last one: a node nobody needed
        name = table.names[row]
        for key in [k for k, p in store.pods.items() if p.spec.node_name == name]:
            store.remove_pod(key)  # its DaemonSet pods
            ns, pname = key.split("/", 1)
            store.raw.pop(("Pod", ns, pname), None)
        store.remove_node(name)
        result.raws[:] = [r for r in result.raws
                          if not (r.kind == "Node" and r.name == name)
                          and not (r.kind == "Pod" and (r.data.get("spec") or {}).get("nodeName") == name)]
    out.nodes = [table.names[r] for r in new_rows if r in used]
    out.daemonsets = sorted(ds for ds, nodes in ds_on_new.items() if set(out.nodes) <= set(nodes)) \
        if out.nodes else []
    return out


def _daemonset_exemplars(store: Any) -> list[tuple[str, Pod]]:
    """One bound pod per DaemonSet (by its controller ownerReference), with a raw mapping."""
    seen: dict[str, Pod] = {}
    for pod in store.pods.values():
        if not pod.spec.node_name:
            continue
        ref = next((r for r in pod.metadata.owner_references if r.kind == "DaemonSet" and r.controller), None)
        if ref is None:
            continue
        ds = f"{pod.metadata.namespace}/{ref.name}"
        if ds not in seen and ("Pod", pod.metadata.namespace or "", pod.metadata.name) in store.raw:
            seen[ds] = pod
    return sorted(seen.items())


def _add_daemon_pod(store: Any, sched: Any, exemplar: Pod, node: str, result: SimulationResult) -> bool:
    """Bind a copy of a DaemonSet's pod to the new ``node`` if it passes the predicates there."""
    meta = exemplar.metadata
    ref = next(r for r in meta.owner_references if r.kind == "DaemonSet" and r.controller)
    data = copy.deepcopy(store.raw[("Pod", meta.namespace or "", meta.name)])
    name = f"{ref.name}-{node}"
    if f"{meta.namespace}/{name}" in store.pods:
        return False
    dmeta = data["metadata"]
    dmeta["name"] = name
    for k in _DROP_META:
        dmeta.pop(k, None)
    spec = data.setdefault("spec", {})
    spec.pop("nodeName", None)
    data.pop("status", None)
    if exemplar.spec.priority is not None:
        spec["priority"] = exemplar.spec.priority
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or []:
        for mf in term.get("matchFields") or []:
            if mf.get("key") == "metadata.name":
                mf["values"] = [node]
    pod: Pod = decode(KINDS["Pod"], data)
    pod = msgspec.structs.replace(pod, spec=msgspec.structs.replace(
        pod.spec, scheduler_name=pod.spec.scheduler_name or "default-scheduler"))
    if not sched.responsible_for(pod):
        return False
    fit, _msg = _first_fit(sched, QueuedPodInfo(PodInfo(pod)), [sched.table.row_of[node]])
    if fit is None:
        return False
    spec["nodeName"] = node
    store.add("Pod", msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node)), data)
    result.raws.append(RawObject("Pod", "v1", data, f"{node} (DaemonSet {ref.name})",
                                 max((r.index for r in result.raws), default=-1) + 1))
    return True


def _first_fit(sched: Any, qpi: QueuedPodInfo, rows: list[int]) -> tuple[int | None, str]:
    """The first of ``rows`` (in order) where ``qpi``'s pod passes PreFilter and Filter, or
    None and the one-node FailedScheduling-style message of the last row checked."""
    if not rows:
        return None, ""
    pod = qpi.pod
    fw = sched.profiles[pod.spec.scheduler_name or "default-scheduler"]
    state = CycleState(qpi.pod_info)
    table = sched.table
    pre_res, st, _plugins = fw.run_pre_filter_plugins(state, pod)
    diagnosis = Diagnosis()
    if st is not None and not st.is_success():
        if not st.is_rejected():
            return None, st.message()
        diagnosis.pre_filter_msg = st.message()
        return None, fit_error_message(1, diagnosis)
    cand = rows
    if pre_res is not None and not pre_res.all_nodes():
        allowed = pre_res.node_names or frozenset()
        cand = [r for r in rows if table.names[r] in allowed]
        if not cand:
            return None, "0/1 nodes are available: 1 node(s) didn't satisfy the PreFilter plugins' node list."
    chunk = fw.run_filter_plugins(state, pod, np.asarray(cand, np.int64))
    if isinstance(chunk, Status):  # a Filter plugin's Error
        return None, chunk.message()
    ok = np.flatnonzero(chunk.ok_mask())
    if len(ok):
        return int(chunk.rows[int(ok[0])]), ""
    diagnosis.chunks.append(chunk.truncate(len(cand)) if len(cand) == 1 else _last(chunk))
    return None, fit_error_message(1, diagnosis)


def _last(chunk: Any) -> Any:
    """A chunk holding only the last row of ``chunk`` (the newest node)."""
    from kubesched.framework.diagnosis import FilterChunk

    i = len(chunk.rows) - 1
    return FilterChunk(chunk.rows[i:], chunk.fail_plugin[i:], chunk.fail_key[i:], chunk.plugins, chunk.tables,
                       chunk.skipped, {0: chunk.overrides[i]} if i in chunk.overrides else {})

