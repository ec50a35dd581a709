"""``kubesched simulate``: schedule the pending pods of a set of manifests, as a live cluster would.

All pending pods arrive together; pods placed earlier in the run occupy their nodes for the
later ones (assumed and bound in the in-memory store). Queue order is PrioritySort's: priority
(``spec.priority``, resolved from ``priorityClassName`` or the global default PriorityClass as
the Priority admission plugin does), then ``metadata.creationTimestamp``, then input order.
The store delivers each attempt's writes as informer events before the next attempt. Pods that
wait on Permit (out-of-tree plugins) wait in virtual time: once nothing else can be scheduled,
the clock moves to the next Permit timeout.

Input errors raise :class:`~kubesched.errors.ManifestError` naming ``file:line`` and the field.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec

from kubesched.api.objects import (
    KINDS,
    Node,
    Pod,
    PriorityClass,
    decode,
    node_allocatable,
    pod_key,
)
from kubesched.api.quantity import to_int
from kubesched.api.resources import pod_requests
from kubesched.config import KubeSchedulerConfiguration
from kubesched.errors import InputError, ManifestError
from kubesched.framework.clock import ManualClock
from kubesched.framework.record import DecisionRecord
from kubesched.scheduler import Attempt, Scheduler
from kubesched.sim.manifests import RawObject
from kubesched.sim.store import ClusterStore

__all__ = ["ANNOTATION_PREFIX", "PodOutcome", "SimulationResult", "build_store", "simulate"]

ANNOTATION_PREFIX = "kubesched.io/"
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"


@dataclass
class PodOutcome:
    """Where a pending pod ended: ``node`` or the FailedScheduling ``message``."""

    key: str
    node: str | None
    message: str
    attempts: int


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

    def output_objects(self) -> list[dict[str, Any]]:
        """Every input object after the run (bound pods carry ``spec.nodeName`` and conditions);
        pods deleted during the run (preemption victims) are left out."""
        raw = self.store.raw
        return [r.data for r in self.raws if r.kind != "Pod" or ("Pod", r.namespace or "", r.name) in raw]


def _parse_ts(ts: str | None) -> float:
    if not ts:
        return float("inf")
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return float("inf")


def _resolve_priority(pod: Pod, classes: dict[str, PriorityClass], default: PriorityClass | None,
                      where: str) -> Pod:
    """The Priority admission plugin: ``priorityClassName`` → ``spec.priority`` (+ preemptionPolicy)."""
    spec = pod.spec
    name = spec.priority_class_name
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


def build_store(raws: list[RawObject]) -> tuple[ClusterStore, list[tuple[Pod, dict]], list[tuple[Pod, dict]],
                                                list[tuple[Node, dict]]]:
    """Decode the raw objects into a store (not yet attached to a scheduler).

    Returns ``(store, bound pods, pending pods, nodes)`` with their raw mappings; pending pods
    in queue-arrival order (creationTimestamp, then input order).
    """
    store = ClusterStore()
    typed: list[tuple[RawObject, Any]] = []
    for r in raws:
        cls = KINDS.get(r.kind)
        if cls is None:
            # no typed view (PersistentVolumeClaim, StorageClass, ResourceClaim, …): plugins that
            # read such objects through the lister get the raw mapping
            store.add_raw(r.kind, r.data)
            continue
        try:
            obj: Any = decode(cls, r.data)  # the typed view of one of several kinds
        except InputError as e:
            raise ManifestError(f"{r.describe()}: {e.path + ': ' if e.path else ''}{e.message}", r.source) from None
        try:
            _check_quantities(r.kind, obj)
        except InputError as e:
            raise ManifestError(f"{r.describe()}: {e.path + ': ' if e.path else ''}{e.message}", r.source) from None
        typed.append((r, obj))
    classes = {o.metadata.name: o for r, o in typed if r.kind == "PriorityClass"}
    defaults = [o for o in classes.values() if o.global_default]
    if len(defaults) > 1:
        raise ManifestError("more than one PriorityClass has globalDefault: true: "
                            + ", ".join(sorted(o.metadata.name for o in defaults)))
    default = defaults[0] if defaults else None
    nodes: list[tuple[Node, dict]] = []
    bound: list[tuple[Pod, dict]] = []
    pending: list[tuple[float, int, Pod, dict]] = []
    node_names: set[str] = set()
    for r, obj in typed:
        if r.kind == "Node":
            nodes.append((obj, r.data))
            node_names.add(obj.metadata.name)
        elif r.kind == "Pod":
            pod = obj
            if not pod.spec.scheduler_name:
                spec = msgspec.structs.replace(pod.spec, scheduler_name="default-scheduler")
                pod = msgspec.structs.replace(pod, spec=spec)
            pod = _resolve_priority(pod, classes, default, r.source)
            if pod.spec.node_name:
                bound.append((pod, r.data))
            else:
                pending.append((_parse_ts(pod.metadata.creation_timestamp), r.index, pod, r.data))
        else:
            store.add(r.kind, obj, r.data)
    for pod, raw in bound:
        if pod.spec.node_name not in node_names:
            src = next((r.source for r in raws if r.data is raw), "")
            raise ManifestError(f'pod {pod_key(pod)} is bound to node "{pod.spec.node_name}", '
                                "which is not in the input", src)
    pending.sort(key=lambda t: (t[0], t[1]))
    return store, bound, [(p, raw) for _, _, p, raw in pending], nodes


def simulate(raws: list[RawObject], config: KubeSchedulerConfiguration | None = None, *, seed: int = 0,
             record: bool = False, registry: dict[str, Any] | None = None,
             on_record: Callable[[DecisionRecord], None] | None = None,
             timings: dict[str, float] | None = None, freeze_gc: bool = False) -> SimulationResult:
    """Run the scheduler over the manifests until no pod can make progress.

    ``timings``, when given, receives the wall and CPU time in seconds of the ``build`` (decode
    and store) and ``schedule`` phases (keys ``build``, ``build_cpu``, ``schedule``,
    ``schedule_cpu``). ``freeze_gc`` (for one-shot processes such as the CLI)
    moves everything alive once the cluster is built into the collector's permanent generation
    (``gc.freeze()``): the millions of objects of a large input are then not traversed again by
    every full collection while pods are scheduled. Cyclic garbage among them is never freed.

    Raises :class:`ManifestError` for bad input and
    :class:`~kubesched.errors.ConfigError` / ``PluginConfigError`` for a bad configuration.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    store, bound, pending, nodes = build_store(raws)
    clock = ManualClock()
    sched = Scheduler(config, client=store, lister=store, clock=clock, seed=seed,
                      registry=registry, record=record or on_record is not None)
    store.scheduler = sched
    for node, raw in nodes:
        store.add("Node", node, raw)
    for pod, raw in bound:
        store.add("Pod", pod, raw)
    others: list[str] = []
    for pod, raw in pending:
        if not sched.responsible_for(pod):
            others.append(pod_key(pod))
        store.add("Pod", pod, raw)
    if freeze_gc:
        gc.freeze()
    t1, c1 = time.perf_counter(), time.process_time()
    records: dict[str, DecisionRecord] = {}
    attempts_by_pod: dict[str, int] = {}

    def on_attempt(a: Attempt) -> None:
        attempts_by_pod[a.pod_key] = attempts_by_pod.get(a.pod_key, 0) + 1
        if a.record is not None:
            records[a.pod_key] = a.record
            if on_record is not None:
                on_record(a.record)

    sched.on_attempt = on_attempt
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
    for qpi in list(sched.queue.pending()):
        if qpi.gated and qpi.pod.spec.scheduling_gates:
            # the apiserver sets this condition on pods created with scheduling gates
            store.update_pod_condition(qpi.pod, "False", "SchedulingGated",
                                       "Scheduling is blocked due to non-empty scheduling gates")
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
        outcomes.append(PodOutcome(key, cur.spec.node_name or None, msg, attempts_by_pod.get(key, 0)))
    result = SimulationResult(store, sched, raws, outcomes, others, records, n)
    if record:
        annotate(result)
    if timings is not None:
        timings["build"] = t1 - t0
        timings["build_cpu"] = c1 - c0
        timings["schedule"] = time.perf_counter() - t1
        timings["schedule_cpu"] = time.process_time() - c1
    return result


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
        ann[ANNOTATION_PREFIX + "filter-result"] = json.dumps(rec.filter, separators=(",", ":"))
        ann[ANNOTATION_PREFIX + "score-result"] = json.dumps(rec.score, separators=(",", ":"))
        ann[ANNOTATION_PREFIX + "finalscore-result"] = json.dumps(rec.final_score, separators=(",", ":"))
