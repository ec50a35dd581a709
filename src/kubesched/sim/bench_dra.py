"""scheduler_perf's DRA workloads (upstream ``test/integration/scheduler_perf/dra/performance-config.yaml``
and ``dra.go``) for ``kubesched bench``.

Ops, as upstream:

* ``createNodes`` with ``templates/node-with-dra-test-driver.yaml`` (``scheduler-perf-dra-<i>``);
* ``createResourceDriver``: one ResourceSlice per node matching ``scheduler-perf-dra-*`` (name,
  pool and nodeName = the node; ``maxClaimsPerNode`` devices ``instance-<i>`` with the attributes
  ``model``, ``family``, ``driverVersion``, ``dra.example.com/numa`` and ``memory`` capacity;
  the binding-condition fields are dropped, as the apiserver does with that gate off);
* ``createAny`` of ``deviceclass.yaml`` (selector ``device.driver == "test-driver.cdi.k8s.io"``),
  ``resourceclaimtemplate.yaml``, ``resourceclaim.yaml`` × ``initClaims``;
* ``allocResourceClaims``: each unallocated claim is allocated by the structured allocator on the
  first node of a random node order where it fits (nodes without a free device are skipped
  without asking the allocator: the outcome is the same);
* ``createPods`` with ``pod-with-claim-template.yaml``: the simulated resourceclaim controller
  creates each pod's claim when the pod is created; the measured op is timed as in
  :mod:`kubesched.sim.bench_runner`;
* steady state (``createPods`` with ``steadyState: true``, ``count: 10``, ``duration``): 10 pods
  exist at all times; each one scheduled is deleted (its generated claim with it: the device is
  freed) and replaced, for ``duration`` seconds of wall time.

Only the steady-state cases live here (SteadyStateClusterResourceClaimTemplate…); v1.37.2's
SchedulingWithResourceClaimTemplate and the other ``dra/`` topics run through the generic runner
(:mod:`kubesched.sim.bench_dra137`).

kubesched runs with queueing hints (v1.34's default), so each workload's floor is the threshold of
upstream's ``_QueueingHintsEnabled`` variant where it is higher than the hints-off one.
"""

from __future__ import annotations

import dataclasses
import random
import time
from dataclasses import dataclass
from typing import Any

import msgspec
import yaml

from kubesched.api.objects import Namespace, Node, ObjectMeta, Pod, decode
from kubesched.plugins.dra_structured import Allocator
from kubesched.scheduler import Attempt
from kubesched.sim.bench_runner import (
    IT_LABELS,
    PERF_LABELS,
    BenchResult,
    CreateNodes,
    CreatePods,
    Names,
    Progress,
    Workload,
    begin_measured,
    end_measured,
    finish,
    new_run,
)
from kubesched.sim.resourceclaims import create_pod_claims, release_pod_claims
from kubesched.sim.store import ClusterStore

__all__ = ["DRA_WORKLOADS", "execute_dra"]

DRIVER = "test-driver.cdi.k8s.io"

_NODE = """
apiVersion: v1
kind: Node
metadata:
  name: scheduler-perf-dra-0
spec: {}
status:
  capacity:
    pods: "110"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
"""

_DEVICE_CLASS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: test-class
spec:
  selectors:
  - cel:
      expression: device.driver == "test-driver.cdi.k8s.io"
"""

_CLAIM_TEMPLATE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: test-claim-template
spec:
  spec:
    devices:
      requests:
      - name: req-0
        exactly:
          deviceClassName: test-class
"""

_CLAIM_TEMPLATE_FIRST_AVAILABLE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: test-claim-template
spec:
  spec:
    devices:
      requests:
      - name: req-0
        firstAvailable:
        - name: sub-0
          deviceClassName: no-such-class
        - name: sub-1
          deviceClassName: test-class
"""

_CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: test-claim-0
spec:
  devices:
    requests:
    - name: req-0
      exactly:
        deviceClassName: test-class
"""

_POD = """
apiVersion: v1
kind: Pod
metadata:
  generateName: test-dra
spec:
  schedulerName: default-scheduler
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      claims:
      - name: resource
  resourceClaims:
  - name: resource
    resourceClaimTemplateName: test-claim-template
"""


def resource_slice(node_name: str, capacity: int) -> dict[str, Any]:
    """Upstream ``resourceSlice(driverName, nodeName, capacity)``."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": node_name},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 0, "resourceSliceCount": 1},
                     "devices": [{"name": f"instance-{i}",
                                  "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                                                 "driverVersion": {"version": "1.2.3"},
                                                 "dra.example.com/numa": {"int": i}},
                                  "capacity": {"memory": {"value": "1Gi"}}} for i in range(capacity)]}}


@dataclass(frozen=True)
class DRASetup:
    """The DRA part of a workload: ``nodes_with_dra`` (with ``max_claims_per_node`` devices),
    ``init_claims`` allocated up front, ``steady_s`` > 0 for the steady-state cases,
    ``first_available`` for the firstAvailable claim template."""

    nodes_with_dra: int
    nodes_without_dra: int
    max_claims_per_node: int
    init_claims: int = 0
    steady_s: float = 0.0
    first_available: bool = False
    steady_pods: int = 0
    """Steady state: also stop once this many pods were scheduled (0 = only the duration)."""


_SETUPS: dict[str, DRASetup] = {}


def _steady_case(case: str, name: str, without: int, with_: int, init_claims: int, duration: float,
                 threshold: float | None, labels: tuple[str, ...],
                 first_available: bool = False) -> tuple[str, Workload]:
    w = Workload(case, name, (CreateNodes(without), CreateNodes(with_, "node-with-dra-test-driver.yaml"),
                              CreatePods(10, "pod-with-claim-template.yaml", "test", collect_metrics=True)),
                 threshold, 3 * threshold if threshold else None, None, labels)
    _SETUPS[w.key] = DRASetup(with_, without, 10, init_claims, duration, first_available)
    return w.key, w


_SS = "SteadyStateClusterResourceClaimTemplate"

DRA_WORKLOADS: dict[str, Workload] = dict([
    _steady_case(_SS, "fast", 1, 1, 0, 2.0, None, IT_LABELS),
    _steady_case(_SS, "empty_100nodes", 0, 100, 0, 10.0, None, ()),
    _steady_case(_SS, "empty_500nodes", 0, 500, 0, 10.0, 64, PERF_LABELS),
    _steady_case(_SS, "half_100nodes", 0, 100, 500, 10.0, None, ()),
    _steady_case(_SS, "half_500nodes", 0, 500, 2500, 10.0, 70, PERF_LABELS),
    _steady_case(_SS, "full_100nodes", 0, 100, 990, 10.0, None, ()),
    _steady_case(_SS, "full_500nodes", 0, 500, 4990, 10.0, 60, PERF_LABELS),
    _steady_case(_SS + "FirstAvailable", "fast", 1, 1, 0, 2.0, None, IT_LABELS, True),
])
"""The DRA workloads by ``"Case/Workload"`` (merged into :data:`kubesched.sim.bench.WORKLOADS`)."""


def _obj(text: str) -> dict[str, Any]:
    return yaml.safe_load(text)


def _alloc_claims(store: ClusterStore, namespace: str, nodes: list[Node], rng: random.Random) -> None:
    """Upstream ``allocResourceClaimsOp``: one claim at a time on the first node (random order)
    where the allocator finds devices."""
    slices = store.list("ResourceSlice")
    classes = {c["metadata"]["name"]: c for c in store.list("DeviceClass")}
    free: dict[str, int] = {}
    for s in slices:
        free[s["spec"]["nodeName"]] = free.get(s["spec"]["nodeName"], 0) + len(s["spec"]["devices"])
    used: set[tuple[str, str, str]] = set()
    for claim in list(store.list("ResourceClaim", namespace)):
        if (claim.get("status") or {}).get("allocation") is not None:
            continue
        allocator = Allocator([claim], used, classes.get, slices)
        order = list(nodes)
        rng.shuffle(order)
        for node in order:
            if free.get(node.metadata.name, 0) <= 0:
                continue
            result = allocator.allocate(node)
            if result is not None:
                c = dict(claim)
                c["status"] = {"allocation": result[0]}
                store.put_object("ResourceClaim", c)
                for r in result[0]["devices"]["results"]:
                    used.add((r["driver"], r["pool"], r["device"]))
                free[node.metadata.name] -= len(result[0]["devices"]["results"])
                break
        else:
            raise RuntimeError(f"could not allocate claim {claim['metadata']['name']}")
    store.flush()


def execute_dra(workload: Workload, *, seed: int = 0, progress: bool = False,
                registry: dict[str, Any] | None = None, inspect: Any = None, profiler: Any = None,
                features: Any = None) -> BenchResult:
    """Run one DRA workload (the :class:`~kubesched.sim.bench_runner.Workload` ``runner``)."""
    setup = _SETUPS[workload.key]
    t_begin = time.perf_counter()
    res, store, sched = new_run(workload, seed, registry, features)
    rng = random.Random(seed)
    names = Names(rng)
    ui = Progress(progress, workload.key)
    pod_tpl: Pod = decode(Pod, _obj(_POD))
    replace = msgspec.structs.replace

    def make_pod(ns: str) -> Pod:
        p = replace(pod_tpl, metadata=replace(pod_tpl.metadata, generate_name="", namespace=ns,
                                              name=names.generate("test-dra"),
                                              uid=f"uid-{rng.getrandbits(64):016x}"))
        return create_pod_claims(store, p, None, rng)

    def schedule_all() -> int:
        n = 0
        while sched.queue.has_schedulable():
            if sched.schedule_one() is None:
                break
            store.flush()
            n += 1
        return n

    try:
        for ns in ("init", "test"):
            store.add("Namespace", Namespace(metadata=ObjectMeta(name=ns)))
        base: Node = decode(Node, _obj(_NODE))
        plain = [replace(base, metadata=replace(base.metadata, name=names.generate("scheduler-perf-")))
                 for _ in range(setup.nodes_without_dra)]
        dra_nodes = [replace(base, metadata=replace(base.metadata, name=f"scheduler-perf-dra-{i}"))
                     for i in range(setup.nodes_with_dra)]
        for n in plain + dra_nodes:
            labels = dict(n.metadata.labels)
            labels["kubernetes.io/hostname"] = n.metadata.name
            store.add("Node", replace(n, metadata=replace(n.metadata, labels=labels)))
        for n in dra_nodes:  # createResourceDriver
            store.put_object("ResourceSlice", resource_slice(n.metadata.name, setup.max_claims_per_node))
        store.put_object("DeviceClass", _obj(_DEVICE_CLASS))
        init_attempts = 0
        mi, mop = workload.measured_op
        if setup.steady_s > 0:
            for i in range(setup.init_claims):
                c = _obj(_CLAIM)
                c["metadata"].update(name=f"test-claim-{i}", namespace="init")
                store.put_object("ResourceClaim", c)
            store.flush()
            _alloc_claims(store, "init", list(store.nodes.values()), rng)
        else:
            tpl = _obj(_CLAIM_TEMPLATE)
            tpl["metadata"]["namespace"] = "init"
            store.put_object("ResourceClaimTemplate", tpl)
            for op in workload.ops[:mi]:
                if isinstance(op, CreatePods) and op.count:
                    for _ in range(op.count):
                        store.add("Pod", make_pod("init"))
                    init_attempts += schedule_all()
        tpl = _obj(_CLAIM_TEMPLATE_FIRST_AVAILABLE if setup.first_available else _CLAIM_TEMPLATE)
        tpl["metadata"]["namespace"] = "test"
        store.put_object("ResourceClaimTemplate", tpl)
        store.flush()
        res.init_attempts = init_attempts
        res.namespace = "test"

        # ── measured phase ──
        t_create = time.perf_counter()
        res.setup_s = t_create - t_begin
        steady = setup.steady_s > 0
        for _ in range(mop.count):
            store.add("Pod", make_pod("test"))
        attempts = {"scheduled": 0, "unschedulable": 0, "error": 0, "skipped": 0}
        counter = [0]
        done_keys: list[str] = []

        def on_attempt(a: Attempt) -> None:
            attempts[a.result] = attempts.get(a.result, 0) + 1
            if a.result == "scheduled" and a.pod_key.startswith("test/"):
                counter[0] += 1
                if steady:
                    done_keys.append(a.pod_key)

        sched.on_attempt = on_attempt
        task = ui.task("measured pods (test)", mop.count)
        clock = time.perf_counter
        cpu0, t0, collector = begin_measured(res, t_create, profiler)
        end = t0 + setup.steady_s
        while True:
            if steady and (clock() >= end or (setup.steady_pods and counter[0] >= setup.steady_pods)):
                break
            if not sched.queue.has_schedulable():
                break
            a = sched.schedule_one()
            if a is None:
                break
            store.flush()
            while done_keys:  # steady state: delete what got scheduled, create a replacement
                key = done_keys.pop()
                pod = store.remove_pod(key)
                if pod is not None:
                    release_pod_claims(store, pod)
                store.add("Pod", make_pod("test"))
            if collector.observe(clock(), counter[0]) and progress:
                ui.update(task, counter[0], f"{collector.samples[-1]:.0f} pods/s" if collector.samples else "")
        end_measured(res, cpu0, t0, clock(), collector, attempts, profiler)
        if steady:
            res.scheduled = counter[0]
            res.measured_pods = counter[0]
            res.unschedulable_pods = sum(1 for k, p in store.pods.items()
                                         if k.startswith("test/") and not p.spec.node_name)
        else:
            res.scheduled = sum(1 for k, p in store.pods.items() if k.startswith("test/") and p.spec.node_name)
            res.unschedulable_pods = mop.count - res.scheduled
        if inspect is not None:
            inspect(store, sched)
    finally:
        ui.stop()
    return finish(res, t_begin)


DRA_WORKLOADS = {k: dataclasses.replace(w, runner=execute_dra) for k, w in DRA_WORKLOADS.items()}
