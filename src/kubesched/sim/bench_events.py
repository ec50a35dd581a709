"""scheduler_perf's v1.37.2 ``event_handling`` and ``default_preemption`` topics and the remaining
``misc``/``affinity`` test cases (churn, gated pods, deleted pods with finalizers, extended resources,
the feature-gate variants of SchedulingBasic) for ``kubesched bench``.

The templates are upstream's, verbatim (:mod:`kubesched.sim.bench_events_templates`, registered into
:data:`~kubesched.sim.bench_podgroup.TEMPLATES_137`); the workloads are upstream's
``performance-config.yaml`` op lists, one op here per upstream op (so that ``namespace-<op index>``
comes out the same), run by :func:`execute_events` — :class:`~kubesched.sim.bench_podgroup.WorkloadRun`'s
loop plus the ops it lacks, as upstream's executor (v1.37.2 ``executor.go``, ``update.go``) runs them:

* :class:`StartCollecting` / :class:`StopCollecting` — ``startCollectingMetrics`` /
  ``stopCollectingMetrics``: the throughput counts every pod of ``namespaces`` matching
  ``label_selector`` that gets a node between the two (``throughputCollector``), whatever op created
  it; the measured wall/CPU time is the whole span (creations, updates and barriers included, as
  upstream's collector runs beside the executor).
* :class:`DeletePods` — ``deletePods``: the pods of ``namespace`` matching ``label_selector`` when the
  op runs, deleted one per ``1/per_second`` s (a ticker: the first after one interval) or all at once
  (``DeleteCollection``); ``skip_wait`` runs the deletions in the background. A delete is the API
  server's: a pod with finalizers, or a bound pod with a non-zero grace period (there is no kubelet),
  only gets ``metadata.deletionTimestamp``; any other pod is removed.
* :class:`UpdateAny` — ``updateAny``: object ``Index`` 0…count-1 rendered from the template and
  written as an ``Update`` then ``UpdateStatus`` of the stored object, ``per_second`` a second (0: all
  at once); the op returns when all are written. A Node takes the template's labels, annotations,
  spec and status; a Pod its labels, annotations, tolerations and scheduling gates (the fields a pod
  update may change), or with ``subresources: [resize]`` its containers' resources. Simplification:
  a pod's status is left as it was (upstream's ``UpdateStatus`` writes the template's empty status).
* ``churn`` in ``create`` mode and with several templates (Nodes, Pods, Services), and ``barrier``
  with namespaces and a label selector: :class:`~kubesched.sim.bench_podgroup.Churn`,
  :class:`~kubesched.sim.bench_podgroup.Barrier`.
* ``createPods`` with ``persistentVolumeTemplatePath``: per pod ``i`` PVC ``pvc-<i>`` and PV
  ``<namespace>-vol-<i>`` (CSI ``volumeHandle`` = the PV's name) bound to each other
  (``runners.go`` ``CreatePodWithPersistentVolume``); a pod with scheduling gates is created with the
  ``PodScheduled=False/SchedulingGated`` condition the API server adds.

Time: a workload with a ticker (churn, a rate) runs on wall time as
:mod:`kubesched.sim.bench_podgroup` describes, or on a :class:`~kubesched.sim.bench_podgroup.VirtualTimer`
(``execute(..., timer=VirtualTimer())``, the tests), where the same ticks fall between the same
scheduling attempts whatever the machine's load.

Feature-gate variants (``_AsyncAPICallsEnabled``, ``_AsyncPreemptionEnabled``, …) run with their
gates set; kubesched's API calls and preemption are synchronous whatever those gates say, so they run
the same code as the workload without the suffix.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import msgspec

from kubesched.api.objects import Node, Pod, PodCondition, decode, pod_key
from kubesched.features import FeatureGate
from kubesched.scheduler import Attempt
from kubesched.sim.bench_events_templates import EVENTS_TEMPLATES
from kubesched.sim.bench_podgroup import (
    TEMPLATES_137,
    Barrier,
    Churn,
    CountingStore,
    CreatePodGroups,
    NodesOp,
    Params,
    PodsOp,
    VirtualTimer,
    WorkloadRun,
    register_cases,
    render_object,
    selector_matches,
)
from kubesched.sim.bench_runner import (
    IT_LABELS,
    PERF_LABELS,
    BenchResult,
    Workload,
    end_measured,
    finish,
    upstream_threshold,
)

__all__ = [
    "EVENTS_WORKLOADS",
    "DeletePods",
    "StartCollecting",
    "StopCollecting",
    "UpdateAny",
    "execute_events",
    "span_counts",
    "with_runner",
]

for _path, _text in EVENTS_TEMPLATES.items():
    if TEMPLATES_137.get(_path, _text) != _text:  # pragma: no cover
        raise ValueError(f"template {_path!r} registered twice with different contents")
TEMPLATES_137.update(EVENTS_TEMPLATES)


# ───────────────────────────── ops ─────────────────────────────


@dataclass(frozen=True)
class StartCollecting:
    """``startCollectingMetrics``: ``name`` labels the DataItem."""

    namespaces: tuple[str, ...]
    label_selector: Params = ()
    name: str = ""


@dataclass(frozen=True)
class StopCollecting:
    """``stopCollectingMetrics``."""


@dataclass(frozen=True)
class DeletePods:
    """``deletePods`` (see the module docstring)."""

    namespace: str
    label_selector: Params = ()
    per_second: int = 0
    skip_wait: bool = False


@dataclass(frozen=True)
class UpdateAny:
    """``updateAny`` (see the module docstring); ``namespace`` empty: a cluster-scoped kind."""

    path: str
    count: int = 1
    namespace: str = ""
    per_second: int = 0
    subresources: tuple[str, ...] = ()


# ───────────────────────────── running ─────────────────────────────


class _EventsStore(CountingStore):
    """The counting store plus the driver's own updates of a pod or node (delivered at once)."""

    def replace_pod(self, new: Pod) -> None:
        key = pod_key(new)
        old = self.pods[key]
        self.pods[key] = new
        if self.scheduler is not None:
            self._deliver_now(self.scheduler.on_pod_update, old, new)

    def replace_node(self, new: Node) -> None:
        old = self.nodes[new.metadata.name]
        self.nodes[new.metadata.name] = new
        if self.scheduler is not None:
            self._deliver_now(self.scheduler.on_node_update, old, new)


@dataclass
class _Ticker:
    """A rate-limited op: ``actions`` run one per ``interval`` s from ``next_tick`` on."""

    actions: list[Callable[[], None]]
    interval: float
    next_tick: float
    pos: int = 0

    @property
    def done(self) -> bool:
        return self.pos >= len(self.actions)


@dataclass
class _Span:
    """The metrics collection in progress."""

    res: BenchResult
    cpu0: float
    t0: float
    collector: Any


_SCHEDULING_GATED = PodCondition(type="PodScheduled", status="False", reason="SchedulingGated",
                                 message="Scheduling is blocked due to non-empty scheduling gates")
"""What the API server sets on a pod created with scheduling gates (``applySchedulingGatedCondition``)."""


class EventsRun(WorkloadRun):
    """:class:`~kubesched.sim.bench_podgroup.WorkloadRun` plus the ops of this module."""

    store_factory = _EventsStore

    def __init__(self, workload: Workload, seed: int, registry: dict[str, Any] | None,
                 features: FeatureGate | None, progress: bool, timer: VirtualTimer | None = None) -> None:
        super().__init__(workload, seed, registry, features, progress, timer)
        self.estore = cast(_EventsStore, self.store)
        self.tickers: list[_Ticker] = []
        self.terminating_by_delete: dict[str, tuple[bool, int]] = {}
        """Pod key → (has finalizers, terminationGracePeriodSeconds) as created."""

    @staticmethod
    def timed(op: Any) -> bool:
        return isinstance(op, Churn) or (isinstance(op, DeletePods | UpdateAny) and op.per_second > 0)

    # -- pods --

    def add_pod(self, op: PodsOp, namespace: str, index: int, raw: dict[str, Any]) -> str:
        """``createPods``' pod ``index`` (see the module docstring for volumes, gates and what a later
        delete does)."""
        if op.pv_template:
            self._volume(op, namespace, index, raw)
        pod = decode(Pod, raw)
        if pod.spec.scheduling_gates:
            pod = msgspec.structs.replace(pod, status=msgspec.structs.replace(
                pod.status, conditions=[*pod.status.conditions, _SCHEDULING_GATED]))
        grace = (raw.get("spec") or {}).get("terminationGracePeriodSeconds")
        key = pod_key(pod)
        self.terminating_by_delete[key] = (bool((raw.get("metadata") or {}).get("finalizers")),
                                           30 if grace is None else int(grace))
        self.store.add("Pod", pod)
        return key

    def _volume(self, op: PodsOp, namespace: str, i: int, raw: dict[str, Any]) -> None:
        pv_tpl = render_object(op.pv_template or "", {})
        pvc_tpl = render_object(op.pvc_template or "templates/pvc.yaml", {})
        pvc_name = f"pvc-{i}"
        pv_name = f"{namespace}-vol-{i}"
        spec = dict(pv_tpl.get("spec") or {})
        if "csi" in spec:
            spec["csi"] = {**spec["csi"], "volumeHandle": pv_name}
        elif "awsElasticBlockStore" in spec:
            spec["awsElasticBlockStore"] = {**spec["awsElasticBlockStore"], "volumeID": f"vol-{i}"}
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": pvc_name,
                            "apiVersion": "v1"}
        self.store.add_raw("PersistentVolume", {"apiVersion": "v1", "kind": "PersistentVolume",
                                                "metadata": {"name": pv_name}, "spec": spec,
                                                "status": {"phase": "Bound"}})
        meta = {**(pvc_tpl.get("metadata") or {}), "name": pvc_name, "namespace": namespace}
        self.store.add_raw("PersistentVolumeClaim", {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
            "spec": {**(pvc_tpl.get("spec") or {}), "volumeName": pv_name}, "status": {"phase": "Bound"}})
        raw.setdefault("spec", {})["volumes"] = [{"name": "vol", "persistentVolumeClaim": {"claimName": pvc_name}}]

    def delete_pod(self, key: str) -> None:
        """The API server's delete of pod ``key`` (see the module docstring)."""
        pod = self.store.pods.get(key)
        if pod is None:
            return
        finalizers, grace = self.terminating_by_delete.get(key, (False, 30))
        if finalizers or (pod.spec.node_name and grace != 0):
            if pod.metadata.deletion_timestamp is None:
                self.estore.replace_pod(msgspec.structs.replace(pod, metadata=msgspec.structs.replace(
                    pod.metadata, deletion_timestamp=f"{self.now():.3f}")))
            return
        self.store.remove_pod(key)

    # -- the ops --

    def extra_op(self, op: Any, index: int, begin: Callable[[Sequence[str], Params, str], None],
                 end: Callable[[], None]) -> bool:
        """Run ``op`` (the workload's op ``index``) if it is one of a subclass's ops and return True;
        ``begin``/``end`` start and stop the measurement (``startCollectingMetrics`` arguments)."""
        return False

    def delete_pods(self, op: DeletePods) -> _Ticker | None:
        self.ensure_ns(op.namespace)
        keys = [k for k, p in self.store.pods.items() if p.metadata.namespace == op.namespace
                and selector_matches(op.label_selector, p.metadata.labels)]
        if op.per_second <= 0:
            for k in keys:
                self.delete_pod(k)
            return None
        return self.start_ticker([functools.partial(self.delete_pod, k) for k in keys], op.per_second)

    def update_any(self, op: UpdateAny) -> _Ticker | None:
        if op.namespace:
            self.ensure_ns(op.namespace)
        acts = [functools.partial(self.update_one, op, i) for i in range(op.count)]
        if op.per_second <= 0:
            for act in acts:
                act()
            return None
        return self.start_ticker(acts, op.per_second)

    def update_one(self, op: UpdateAny, index: int) -> None:
        raw = render_object(op.path, {"Index": index, "Count": op.count})
        kind = raw.get("kind")
        replace = msgspec.structs.replace
        tpl_meta = raw.get("metadata") or {}
        if kind == "Node":
            if op.namespace:
                raise ValueError(f"{op.path}: namespace {op.namespace!r} set for the cluster-scoped Node")
            tpl = decode(Node, raw)
            old = self.store.nodes[tpl.metadata.name]
            meta = replace(old.metadata, labels=dict(tpl.metadata.labels), annotations=dict(tpl.metadata.annotations))
            self.estore.replace_node(replace(old, metadata=meta, spec=tpl.spec, status=tpl.status))
        elif kind == "Pod":
            tpl_pod = decode(Pod, raw)
            key = f"{op.namespace}/{tpl_meta.get('name')}"
            old_pod = self.store.pods[key]
            if "resize" in op.subresources:
                by_name = {c.name: c for c in tpl_pod.spec.containers}
                ctrs = [replace(c, resources=by_name[c.name].resources) if c.name in by_name else c
                        for c in old_pod.spec.containers]
                new = replace(old_pod, spec=replace(old_pod.spec, containers=ctrs))
            else:
                meta = replace(old_pod.metadata, labels=dict(tpl_pod.metadata.labels),
                               annotations=dict(tpl_pod.metadata.annotations))
                new = replace(old_pod, metadata=meta, spec=replace(
                    old_pod.spec, tolerations=list(tpl_pod.spec.tolerations),
                    scheduling_gates=list(tpl_pod.spec.scheduling_gates)))
            self.estore.replace_pod(new)
        else:
            raise ValueError(f"{op.path}: updateAny of kind {kind} is not supported")

    def start_ticker(self, actions: Sequence[Callable[[], None]], per_second: int) -> _Ticker:
        interval = 1.0 / per_second
        t = _Ticker(list(actions), interval, self.now() + interval)
        self.tickers.append(t)
        return t

    # -- time --

    def tick(self) -> None:
        super().tick()
        if not self.tickers:
            return
        now = self.now()
        for t in self.tickers:
            while not t.done and t.next_tick <= now:
                t.actions[t.pos]()
                t.pos += 1
                t.next_tick += t.interval
        self.tickers = [t for t in self.tickers if not t.done]

    def idle_until(self) -> float | None:
        cands = [t.next_tick for t in self.tickers]
        base = super().idle_until()
        if base is not None:
            cands.append(base)
        return min(cands) if cands else None

    def wait_ticker(self, t: _Ticker | None, what: str) -> None:
        if t is not None:
            self.schedule_until(lambda: t.done, what, check_every=1)


def _spec_labels(path: str, params: Params) -> dict[str, str]:
    if not path:
        return {}
    raw = render_object(path, {**dict(params), "Index": 0, "Count": 1})
    return dict((raw.get("metadata") or {}).get("labels") or {})


def span_counts(ops: Sequence[Any]) -> tuple[int, int] | None:
    """``(measured, other)`` pods of a workload measured by a ``startCollectingMetrics`` span: the
    pods created in the span in its namespaces whose template labels match its selector, and every
    other pod created; None when there is no span (a measured ``createPods`` instead)."""
    start = next((i for i, op in enumerate(ops) if isinstance(op, StartCollecting)), None)
    if start is None:
        return None
    sc = ops[start]
    assert isinstance(sc, StartCollecting)
    stop = next((i for i, op in enumerate(ops) if isinstance(op, StopCollecting)), len(ops))
    measured = other = 0
    for i, op in enumerate(ops):
        if not isinstance(op, PodsOp):
            continue
        ns = op.namespace if op.namespace is not None else f"namespace-{i}"
        if (start < i < stop and ns in sc.namespaces
                and selector_matches(sc.label_selector, _spec_labels(op.path, op.params))):
            measured += op.count
        else:
            other += op.count
    return measured, other


def execute_events(workload: Workload, *, seed: int = 0, progress: bool = False,
                   registry: dict[str, Any] | None = None, inspect: Any = None, profiler: Any = None,
                   features: FeatureGate | None = None, timer: VirtualTimer | None = None,
                   run_cls: type[EventsRun] | None = None) -> BenchResult:
    """Run one workload of :data:`EVENTS_WORKLOADS` (its ``runner``): every op in order, measured by
    its ``startCollectingMetrics`` span or its measured ``createPods`` op (whose pods are created
    before the measurement starts, as :mod:`kubesched.sim.bench_runner` measures). ``run_cls``: an
    :class:`EventsRun` subclass whose :meth:`EventsRun.extra_op` runs more ops. Raises
    RuntimeError when a wait times out (upstream's 10 minutes) or nothing can change any more."""
    t_begin = time.perf_counter()
    run = (run_cls or EventsRun)(workload, seed, registry, features, progress, timer)
    store, sched, ui = run.store, run.sched, run.ui
    res = BenchResult(workload.key, upstream_threshold(workload, features), workload.target, workload.rss_target_mib,
                      nodes=workload.num_nodes, init_pods=workload.num_init_pods,
                      measured_pods=workload.num_measured_pods)
    span: _Span | None = None
    attempts: dict[str, int] = {"scheduled": 0, "unschedulable": 0, "error": 0, "skipped": 0}

    def on_attempt(a: Attempt) -> None:
        if span is not None:
            attempts[a.result] = attempts.get(a.result, 0) + 1

    def observe() -> None:
        if span is not None:
            span.collector.observe(run.clock_now(), store.collected)

    sched.on_attempt = on_attempt
    run.on_progress = observe

    def begin(namespaces: Sequence[str], selector: Params, name: str) -> None:
        nonlocal span
        store.collect = frozenset(namespaces)
        store.collect_selector = selector
        store.collected = 0
        res.init_attempts = run.attempts
        run.attempts = 0
        res.namespace = name
        t_create = time.perf_counter()
        res.setup_s = t_create - t_begin
        cpu0, t0, collector = run.begin_measured(res, t_create, profiler)
        span = _Span(res, cpu0, t0, collector)

    def end() -> None:
        nonlocal span
        if span is None:
            return
        end_measured(res, span.cpu0, span.t0, run.clock_now(), span.collector, dict(attempts), profiler)
        res.scheduled = store.collected
        res.unschedulable_pods = max(res.measured_pods - res.scheduled, 0)
        span = None

    try:
        for i, op in enumerate(workload.ops):
            if run.extra_op(op, i, begin, end):
                continue
            if isinstance(op, NodesOp):
                task = ui.task("nodes", op.count)
                run.nodes(op, i)
                ui.update(task, op.count)
            elif isinstance(op, StartCollecting):
                begin(op.namespaces, op.label_selector, op.name)
            elif isinstance(op, StopCollecting):
                end()
            elif isinstance(op, Churn):
                run.start_churn(op)
            elif isinstance(op, CreatePodGroups):
                run.pod_groups(op)
            elif isinstance(op, Barrier):
                run.barrier(op)
            elif isinstance(op, DeletePods):
                ticker = run.delete_pods(op)
                if not op.skip_wait:
                    run.wait_ticker(ticker, f"deletePods in {op.namespace}")
            elif isinstance(op, UpdateAny):
                run.wait_ticker(run.update_any(op), f"updateAny {op.path}")
            elif isinstance(op, PodsOp):
                ns = op.namespace if op.namespace is not None else f"namespace-{i}"
                if op.collect_metrics:
                    _measured_op(run, op, ns, begin, end)
                    continue
                task = ui.task(f"pods ({ns})", op.count)
                run.pods(op, ns)
                if op.skip_wait:
                    run.wait_counts[ns] = run.wait_counts.get(ns, 0) + op.count
                else:
                    run.wait_scheduled({ns: op.count})
                ui.update(task, op.count)
            else:
                raise TypeError(f"{workload.key}: op {op!r} is not supported here")
        end()
        if inspect is not None:
            inspect(store, sched)
    finally:
        ui.stop()
    return finish(res, t_begin)


def _measured_op(run: EventsRun, op: PodsOp, ns: str, begin: Callable[..., None], end: Callable[[], None]) -> None:
    """A ``createPods`` with ``collectMetrics``: create, then measure until ``count`` pods of the
    namespace are scheduled (``waitUntilPodsScheduledInNamespace``) — or have been: a measured pod
    evicted by a churn pod's preemption (default_preemption/PreemptionAsync on a loaded machine, where
    the measured phase lasts long enough for the 5/s preemptors to reach nodes holding measured
    pods) counts as scheduled, where upstream's wait would never end."""
    run.pods(op, ns)
    begin((ns,), (), ns)
    store = run.store
    try:
        run.schedule_until(lambda: store.collected >= op.count or run.scheduled_in(ns) >= op.count,
                           f"{op.count} scheduled pods in {ns}", check_every=1024)
    except RuntimeError as e:
        if "nothing left to schedule" not in str(e):
            raise
    end()


# ───────────────────────────── the catalogue ─────────────────────────────

_E = "event_handling/templates/"
_DP = "default_preemption/templates/"
_T = "templates/"
_UNSCHED = (("type", "unsched"),)
_BLOCKER = (("type", "blocker"),)


def _pod_delete(p: dict[str, Any]) -> list[Any]:
    m, b = p["measurePods"], p["blockerPods"]
    nss = ("blockertopologyportsresources", "blockeraffinity", "nodeports", "noderesources", "nodevolumelimits",
           "interpodaffinity")
    return [
        NodesOp(p["initNodes"], path=_T + "node-default.yaml",
                node_allocatable=(("attachable-volumes-csi-ebs.csi.aws.com", "20"),),
                csi_node_allocatable=(("ebs.csi.aws.com", 20),)),
        PodsOp(b, namespace="blockertopologyportsresources",
               path=_E + "poddelete-pod-blocker-topology-ports-resources.yaml", pv_template=_T + "pv-csi.yaml",
               pvc_template=_T + "pvc.yaml"),
        PodsOp(b, namespace="blockeraffinity", path=_E + "poddelete-pod-blocker-affinity.yaml",
               pv_template=_T + "pv-csi.yaml", pvc_template=_T + "pvc-once-pod.yaml"),
        StartCollecting(nss, _UNSCHED, "unschedPods"),
        PodsOp(m, namespace="blockertopologyportsresources", path=_E + "poddelete-pod-podtopologyspread.yaml",
               skip_wait=True),
        PodsOp(b, namespace="blockeraffinity", path=_E + "poddelete-pod-volumerestrictions.yaml", skip_wait=True),
        PodsOp(m, namespace="nodeports", path=_E + "poddelete-pod-nodeports.yaml", skip_wait=True),
        PodsOp(m, namespace="noderesources", path=_E + "poddelete-pod-noderesources.yaml", skip_wait=True),
        PodsOp(b, namespace="nodevolumelimits", path=_E + "poddelete-pod-nodevolumelimits.yaml",
               pv_template=_T + "pv-csi.yaml", pvc_template=_T + "pvc.yaml", skip_wait=True),
        PodsOp(m, namespace="interpodaffinity", path=_E + "poddelete-pod-interpodaffinity.yaml", skip_wait=True),
        Barrier("Attempted", label_selector=_UNSCHED),
        DeletePods("blockertopologyportsresources", _BLOCKER, 100, skip_wait=True),
        DeletePods("blockeraffinity", _BLOCKER, 100, skip_wait=True),
        Barrier(label_selector=_UNSCHED),
        StopCollecting(),
    ]


def _pod_update(p: dict[str, Any]) -> list[Any]:
    m, b = p["measurePods"], p["blockerPods"]
    nss = ("nodeunschedulable", "tainttoleration", "blocker", "interpodaffinity", "noderesources", "schedulinggates")
    return [
        StartCollecting(nss, _UNSCHED),
        NodesOp(1, path=_E + "podupdate-node-unschedulable.yaml"),
        PodsOp(m, namespace="nodeunschedulable", path=_E + "podupdate-pod-nodeunschedulable.yaml", skip_wait=True),
        NodesOp(1, path=_E + "podupdate-node-with-taint.yaml"),
        PodsOp(m, namespace="tainttoleration", path=_E + "podupdate-pod-tainttoleration.yaml", skip_wait=True),
        Barrier("Attempted"),
        UpdateAny(_E + "podupdate-pod-nodeunschedulable-update.yaml", m, "nodeunschedulable", 100),
        UpdateAny(_E + "podupdate-pod-tainttoleration-update.yaml", m, "tainttoleration", 100),
        Barrier(),
        NodesOp(1, path=_T + "node-with-name.yaml"),
        PodsOp(b, namespace="blocker", path=_E + "podupdate-pod-blocker.yaml"),
        PodsOp(m, namespace="interpodaffinity", path=_E + "podupdate-pod-interpodaffinity.yaml", skip_wait=True),
        PodsOp(m, namespace="noderesources", path=_E + "podupdate-pod-noderesources.yaml", skip_wait=True),
        PodsOp(b, namespace="blocker", path=_E + "podupdate-pod-podtopologyspread.yaml", skip_wait=True),
        PodsOp(m, namespace="schedulinggates", path=_E + "podupdate-pod-schedulinggates.yaml", skip_wait=True),
        Barrier("Attempted", label_selector=_UNSCHED),
        UpdateAny(_E + "podupdate-pod-blocker-update.yaml", b, "blocker", 100),
        UpdateAny(_E + "podupdate-pod-blocker-scale-down.yaml", b, "blocker", 100, ("resize",)),
        UpdateAny(_E + "podupdate-pod-schedulinggates-update.yaml", m, "schedulinggates", 100),
        Barrier(label_selector=_UNSCHED),
        StopCollecting(),
    ]


def _node_add(p: dict[str, Any]) -> list[Any]:
    m, n = p["measurePods"], p["nodes"]
    nss = ("nodeunschedulable", "noderesources", "interpodaffinity", "nodeaffinity", "podtopologyspread",
           "tainttoleration")
    return [
        StartCollecting(nss, (), "unschedPods"),
        NodesOp(1, path=_E + "nodeadd-node-unschedulable.yaml"),
        PodsOp(m, namespace="nodeunschedulable", path=_E + "nodeadd-pod-nodeunschedulable.yaml", skip_wait=True),
        Barrier("Attempted"),
        NodesOp(1, path=_E + "nodeadd-node-low-capacity.yaml"),
        PodsOp(m, namespace="noderesources", path=_E + "nodeadd-pod-noderesources.yaml", skip_wait=True),
        Barrier("Attempted"),
        NodesOp(n, path=_E + "nodeadd-node-high-capacity.yaml"),
        Barrier(),
        PodsOp(m, namespace="interpodaffinity", path=_E + "nodeadd-pod-interpodaffinity.yaml", skip_wait=True),
        PodsOp(m, namespace="nodeaffinity", path=_E + "nodeadd-pod-nodeaffinity.yaml", skip_wait=True),
        PodsOp(m, namespace="podtopologyspread", path=_E + "nodeadd-pod-podtopologyspread.yaml", skip_wait=True),
        Barrier("Attempted"),
        NodesOp(n, path=_E + "nodeadd-node-with-labels.yaml"),
        Barrier(),
        PodsOp(m, namespace="tainttoleration", path=_E + "nodeadd-pod-tainttoleration.yaml", skip_wait=True),
        Barrier("Attempted"),
        NodesOp(n, path=_E + "nodeadd-node-with-taint.yaml"),
        Barrier(),
        StopCollecting(),
    ]


def _pod_add(p: dict[str, Any]) -> list[Any]:
    m = p["measurePods"]
    return [
        NodesOp(2, path=_E + "podadd-node.yaml"),
        PodsOp(1, namespace="podtopologyspread", path=_E + "podadd-pod-with-label.yaml"),
        StartCollecting(("podtopologyspread", "interpodaffinity"), _UNSCHED, "unschedPods"),
        PodsOp(m, namespace="podtopologyspread", path=_E + "podadd-pod-podtopologyspread.yaml", skip_wait=True),
        PodsOp(m, namespace="interpodaffinity", path=_E + "podadd-pod-interpodaffinity.yaml", skip_wait=True),
        Barrier("Attempted", label_selector=_UNSCHED),
        PodsOp(m, namespace="podtopologyspread", path=_E + "podadd-pod-unblocker-topology.yaml"),
        PodsOp(m, namespace="interpodaffinity", path=_E + "podadd-pod-unblocker-affinity.yaml"),
        Barrier(label_selector=_UNSCHED),
        StopCollecting(),
    ]


def _node_update(p: dict[str, Any]) -> list[Any]:
    m, n = p["measurePods"], p["nodes"]
    nss = ("nodeunschedulable", "noderesources", "interpodaffinity", "nodeaffinity", "podtopologyspread",
           "tainttoleration")
    return [
        StartCollecting(nss, (), "unschedPods"),
        NodesOp(n, path=_E + "nodeupdate-node-unschedulable.yaml"),
        PodsOp(m, namespace="nodeunschedulable", path=_E + "nodeupdate-pod-nodeunschedulable.yaml", skip_wait=True),
        Barrier("Attempted"),
        UpdateAny(_E + "nodeupdate-node-unschedulable-update.yaml", n, per_second=100),
        Barrier(),
        NodesOp(n, path=_E + "nodeupdate-node-low-capacity.yaml"),
        PodsOp(m, namespace="noderesources", path=_E + "nodeupdate-pod-noderesources.yaml", skip_wait=True),
        Barrier("Attempted"),
        UpdateAny(_E + "nodeupdate-node-low-capacity-update.yaml", n, per_second=100),
        Barrier(),
        NodesOp(n, path=_E + "nodeupdate-node-without-labels.yaml"),
        PodsOp(m, namespace="interpodaffinity", path=_E + "nodeupdate-pod-interpodaffinity.yaml", skip_wait=True),
        PodsOp(m, namespace="nodeaffinity", path=_E + "nodeupdate-pod-nodeaffinity.yaml", skip_wait=True),
        PodsOp(m, namespace="podtopologyspread", path=_E + "nodeupdate-pod-podtopologyspread.yaml", skip_wait=True),
        Barrier("Attempted"),
        UpdateAny(_E + "nodeupdate-node-without-labels-update.yaml", n, per_second=100),
        Barrier(),
        NodesOp(n, path=_E + "nodeupdate-node-without-taints.yaml"),
        PodsOp(m, namespace="tainttoleration", path=_E + "nodeupdate-pod-tainttoleration.yaml", skip_wait=True),
        Barrier("Attempted"),
        UpdateAny(_E + "nodeupdate-node-without-taints-update.yaml", n, per_second=100),
        Barrier(),
        StopCollecting(),
    ]


def _preemption_basic(p: dict[str, Any]) -> list[Any]:
    return [NodesOp(p["initNodes"]), PodsOp(p["initPods"], path=_T + "pod-low-priority.yaml"),
            PodsOp(p["measurePods"], path=_DP + "pod-high-priority.yaml", collect_metrics=True)]


def _churn_create(tpl: str, init_tpl: str) -> Callable[[dict[str, Any]], list[Any]]:
    """default_preemption/ PreemptionAsync and Unschedulable: init pods, then a pod from ``tpl`` every
    200 ms (churn ``create``, namespace-2) while the measured default pods are scheduled."""
    def ops(p: dict[str, Any]) -> list[Any]:
        return [NodesOp(p["initNodes"]), PodsOp(p["initPods"], path=init_tpl),
                Churn(0, 200, "namespace-2", tpl, mode="create"),
                PodsOp(p["measurePods"], path=_T + "pod-default.yaml", collect_metrics=True)]
    return ops


def _disruption_mode(p: dict[str, Any]) -> list[Any]:
    """default_preemption/ PreemptionPodGroupDisruptionMode: low-priority gangs (or, with an empty
    ``disruptionMode``, plain pods) fill the nodes, then 3970m preemptors each evict a node's victims."""
    per, low, mode = p["podsPerGroup"], p["lowPriorityGroups"], p["disruptionMode"]
    return [NodesOp(p["initNodes"], path=_T + "node-default.yaml"),
            CreatePodGroups(low, "gang-preempt-1", _T + "podgroup.yaml",
                            (("minCount", per), ("priority", 1000), ("disruptionMode", mode))),
            PodsOp(low * per, namespace="gang-preempt-1", path=_DP + "gang-pod.yaml",
                   params=(("podsPerGroup", per), ("cpuRequest", p["lowPriorityCpuRequest"]), ("priority", 1000),
                           ("disruptionMode", mode))),
            Barrier("Scheduled"),
            PodsOp(p["measurePods"], namespace="gang-preempt-0", path=_DP + "pod-high-priority.yaml",
                   collect_metrics=True)]


def _dm(nodes: int, groups: int, per: int, measure: int, mode: str, cpu: str) -> dict[str, Any]:
    return {"initNodes": nodes, "lowPriorityGroups": groups, "podsPerGroup": per, "measurePods": measure,
            "disruptionMode": mode, "lowPriorityCpuRequest": cpu}


def _basic_variant(p: dict[str, Any]) -> list[Any]:
    tpl = _T + "pod-default.yaml"
    return [NodesOp(p["initNodes"]), PodsOp(p["initPods"], path=tpl),
            PodsOp(p["measurePods"], path=tpl, collect_metrics=True)]


def _mixed_churn(p: dict[str, Any]) -> list[Any]:
    return [NodesOp(p["initNodes"]),
            Churn(1, 1000, "namespace-1", _T + "churn/node-default.yaml", extra_paths=(
                _T + "pod-high-priority-large-cpu.yaml", _T + "churn/service-default.yaml")),
            PodsOp(p["measurePods"], path=_T + "pod-default.yaml", collect_metrics=True)]


def _while_gated(p: dict[str, Any]) -> list[Any]:
    light = _T + "light-pod.yaml"
    return [NodesOp(1, path=_T + "node-with-name.yaml"),
            PodsOp(p["gatedPods"], path=_T + "gated-pod.yaml", skip_wait=True), Barrier("Attempted"),
            PodsOp(p["deletingPods"], path=light), DeletePods("namespace-3", (), 50, skip_wait=True),
            PodsOp(p["measurePods"], path=light, collect_metrics=True)]


def _deleted_with_finalizers(p: dict[str, Any]) -> list[Any]:
    return [NodesOp(p["initNodes"]), PodsOp(p["deletingPods"], path=_T + "pod-with-finalizer.yaml", skip_wait=True),
            DeletePods("namespace-1", (), 100, skip_wait=True),
            PodsOp(p["measurePods"], path=_T + "light-pod.yaml", collect_metrics=True)]


def _extended_resource(p: dict[str, Any]) -> list[Any]:
    return [NodesOp(p["nodesWithoutExtendedResource"]),
            NodesOp(p["nodesWithExtendedResource"], path="misc/templates/node-with-extended-resource.yaml"),
            PodsOp(p["measurePods"], namespace="test", path="misc/templates/pod-with-extended-resource.yaml",
                   collect_metrics=True)]


def _gated_affinity(p: dict[str, Any]) -> list[Any]:
    return [NodesOp(1, path=_T + "node-with-name.yaml"),
            PodsOp(p["gatedPods"], path=_T + "gated-pod-with-pod-affinity.yaml", skip_wait=True), Barrier("Attempted"),
            PodsOp(p["measurePods"], path=_T + "pod-with-label.yaml", collect_metrics=True)]


def _p3(nodes: int, init: int, measure: int) -> dict[str, int]:
    return {"initNodes": nodes, "initPods": init, "measurePods": measure}


_SYNC, _ASYNC = {"SchedulerAsyncAPICalls": False}, {"SchedulerAsyncAPICalls": True}


def with_runner(cases: dict[str, Workload], runner: Callable[..., BenchResult] | None = None) -> dict[str, Workload]:
    """``cases`` run by ``runner`` (default :func:`execute_events`), with the pod counts of a
    ``startCollectingMetrics`` span where there is one (:func:`span_counts`)."""
    runner = runner or execute_events
    out = {}
    for k, w in cases.items():
        counts = span_counts(w.ops)
        extra: dict[str, Any] = {}
        if counts is not None:
            extra = {"measured_count": counts[0], "init_count": counts[1]}
        out[k] = dataclasses.replace(w, runner=runner, **extra)
    return out


EVENTS_WORKLOADS: dict[str, Workload] = with_runner({
    # event_handling/performance-config.yaml
    **register_cases("EventHandlingPodDelete", {}, _pod_delete, [
        ("2Nodes_20Pods", {"initNodes": 2, "blockerPods": 15, "measurePods": 20}, IT_LABELS),
        ("50Nodes_500Pods", {"initNodes": 50, "blockerPods": 480, "measurePods": 500}, ("performance", "short")),
    ]),
    **register_cases("EventHandlingPodUpdate", {"InPlacePodVerticalScaling": True}, _pod_update, [
        ("1Node_10Pods", {"blockerPods": 10, "measurePods": 10}, IT_LABELS),
        ("1Node_1000Pods", {"blockerPods": 1000, "measurePods": 1000}, ("performance", "short")),
    ]),
    **register_cases("EventHandlingNodeAdd", {}, _node_add, [
        ("2Nodes_20Pods", {"nodes": 2, "measurePods": 20}, IT_LABELS),
        ("100Nodes_1000Pods", {"nodes": 100, "measurePods": 1000}, ("performance", "short")),
    ]),
    **register_cases("EventHandlingPodAdd", {}, _pod_add, [
        ("10Pods", {"measurePods": 10}, IT_LABELS),
        ("1000Pods", {"measurePods": 1000}, ("performance", "short")),
    ]),
    **register_cases("EventHandlingNodeUpdate", {}, _node_update, [
        ("2Nodes_20Pods", {"nodes": 2, "measurePods": 20}, IT_LABELS),
        ("100Nodes_1000Pods", {"nodes": 100, "measurePods": 1000}, ("performance", "short")),
    ]),
    # default_preemption/performance-config.yaml
    **register_cases("PreemptionBasic", {}, _preemption_basic, [
        ("5Nodes", _p3(5, 20, 5), IT_LABELS, _SYNC),
        ("5Nodes_AsyncAPICallsEnabled", _p3(5, 20, 5), IT_LABELS, _ASYNC),
        ("1000Nodes", _p3(1000, 4000, 1000), PERF_LABELS, _SYNC),
        ("1000Nodes_AsyncAPICallsEnabled", _p3(1000, 4000, 1000), PERF_LABELS, _ASYNC),
    ]),
    **register_cases("PreemptionAsync", {}, _churn_create(_DP + "pod-high-priority.yaml",
                                                          _T + "pod-low-priority.yaml"), [
        ("5Nodes", _p3(5, 20, 5), IT_LABELS, _SYNC),
        ("5Nodes_AsyncAPICallsEnabled", _p3(5, 20, 5), IT_LABELS, _ASYNC),
        ("500Nodes", _p3(500, 2000, 500), PERF_LABELS, _SYNC),
        ("5000Nodes", _p3(5000, 20000, 5000), PERF_LABELS, {"SchedulerAsyncPreemption": False}),
        ("5000Nodes_AsyncPreemptionEnabled", _p3(5000, 20000, 5000), PERF_LABELS,
         {"SchedulerAsyncPreemption": True, "SchedulerAsyncAPICalls": False}),
        ("5000Nodes_AsyncAPICallsEnabled", _p3(5000, 20000, 5000), PERF_LABELS, _ASYNC),
    ]),
    **register_cases("Unschedulable", {}, _churn_create(_T + "pod-high-priority-large-cpu.yaml", ""), [
        ("5Nodes/1Init/10Pods", _p3(5, 1, 10), IT_LABELS, _SYNC),
        ("5Nodes/1Init/10Pods_AsyncAPICallsEnabled", _p3(5, 1, 10), IT_LABELS, _ASYNC),
        ("500Nodes/10Init/1kPods", _p3(500, 10, 1000), PERF_LABELS),
        ("5kNodes/100Init/1kPods", _p3(5000, 100, 1000), PERF_LABELS),
        ("5kNodes/100Init/10kPods", _p3(5000, 100, 10000), PERF_LABELS),
        ("5kNodes/100Init/10kPods_AsyncAPICallsEnabled", _p3(5000, 100, 10000), PERF_LABELS, _ASYNC),
        ("5kNodes/20kInit/10kPods", _p3(5000, 20000, 10000), PERF_LABELS),
        ("5kNodes/20kInit/10kPods_AsyncAPICallsEnabled", _p3(5000, 20000, 10000), PERF_LABELS, _ASYNC),
    ]),
    **register_cases("PreemptionPodGroupDisruptionMode", {"GenericWorkload": True, "SchedulerAsyncAPICalls": False},
                     _disruption_mode, [
        ("FastTest_NoPodGroup", _dm(2, 2, 2, 1, "", "1500m"), IT_LABELS),
        ("FastTest_PodGroupDisruptionMode_Single", _dm(2, 2, 2, 1, "single", "1500m"), IT_LABELS),
        ("FastTest_PodGroupDisruptionMode_All", _dm(2, 2, 2, 1, "all", "1500m"), IT_LABELS),
        ("1000Nodes_1000Candidates_NoPodGroup", _dm(1000, 1000, 10, 100, "", "300m"), PERF_LABELS),
        ("1000Nodes_1000Candidates_DisruptionSingle", _dm(1000, 1000, 10, 100, "single", "300m"), PERF_LABELS),
        ("1000Nodes_1000Candidates_DisruptionAll", _dm(1000, 1000, 10, 100, "all", "300m"), PERF_LABELS),
    ]),
    # misc/performance-config.yaml
    **register_cases("SchedulingBasic", {}, _basic_variant, [
        ("5Nodes_AsyncAPICallsEnabled", _p3(5, 5, 10), IT_LABELS, _ASYNC),
        ("5000Nodes_50000Pods_AsyncAPICallsEnabled", _p3(5000, 5000, 50000), PERF_LABELS, _ASYNC),
        ("5000Nodes_50000Pods_NodeDeclaredFeaturesDisabled", _p3(5000, 5000, 50000), PERF_LABELS,
         {"NodeDeclaredFeatures": False}),
    ]),
    **register_cases("SchedulingWithMixedChurn", {}, _mixed_churn, [
        ("10Nodes", {"initNodes": 10, "measurePods": 100}, IT_LABELS),
        ("1000Nodes", {"initNodes": 1000, "measurePods": 1000}, ()),
        ("5000Nodes", {"initNodes": 5000, "measurePods": 2000}, ()),
        ("5000Nodes_10000Pods", {"initNodes": 5000, "measurePods": 10000}, PERF_LABELS),
    ]),
    **register_cases("SchedulingWhileGated", {}, _while_gated, [
        ("1Node_10GatedPods", {"gatedPods": 10, "deletingPods": 10, "measurePods": 10}, IT_LABELS),
        ("1Node_10000GatedPods", {"gatedPods": 10000, "deletingPods": 20000, "measurePods": 20000}, PERF_LABELS),
    ]),
    **register_cases("SchedulingDeletedPodsWithFinalizers", {}, _deleted_with_finalizers, [
        ("10Node_100DeletingPods", {"initNodes": 10, "deletingPods": 10, "measurePods": 10}, IT_LABELS),
        ("1000Node_1000DeletingPods", {"initNodes": 1000, "deletingPods": 1000, "measurePods": 1000}, ()),
        ("5000Node_5000DeletingPods", {"initNodes": 5000, "deletingPods": 5000, "measurePods": 5000}, PERF_LABELS),
    ]),
    **register_cases("SchedulingWithExtendedResource", {"DynamicResourceAllocation": True}, _extended_resource, [
        ("fast_DRAExtendedResourceEnabled",
         {"nodesWithExtendedResource": 10, "nodesWithoutExtendedResource": 1, "measurePods": 10}, IT_LABELS,
         {"DRAExtendedResource": True}),
        ("500pods_500nodes_DRAExtendedResourceEnabled",
         {"nodesWithExtendedResource": 500, "nodesWithoutExtendedResource": 0, "measurePods": 500}, (),
         {"DRAExtendedResource": True}),
        ("5000pods_5000nodes_DRAExtendedResourceEnabled",
         {"nodesWithExtendedResource": 5000, "nodesWithoutExtendedResource": 0, "measurePods": 5000}, PERF_LABELS,
         {"DRAExtendedResource": True}),
    ]),
    # affinity/performance-config.yaml
    **register_cases("SchedulingGatedPodsWithPodAffinityImpactForThroughput", {}, _gated_affinity, [
        ("1Node_10GatedPods", {"gatedPods": 10, "measurePods": 10}, IT_LABELS),
        ("1Node_10000GatedPods", {"gatedPods": 10000, "measurePods": 20000}, PERF_LABELS),
    ]),
})
"""The workloads of this module by ``"Case/Workload"`` (merged into :data:`kubesched.sim.bench.WORKLOADS`)."""
