"""scheduler_perf's v1.37.2 DRA test cases for ``kubesched bench``: ``dra/performance-config.yaml``
(PublishResourceSlices, SchedulingWithResourceClaimTemplate, SchedulingWithResourceClaim) and the
``dra/<topic>/performance-config.yaml`` files (compatibilitygroups, consumablecapacity, devicetaints,
extendedresource, extendedresource/scoring, listattributes, partitionabledevices, prioritizedlist,
workloadresourceclaims).

The templates are upstream's, verbatim (:mod:`kubesched.sim.bench_dra_templates`, registered into
:data:`~kubesched.sim.bench_podgroup.TEMPLATES_137`, rendered by
:mod:`kubesched.sim.bench_gotemplate`); each workload is its test case's ``workloadTemplate``, one op
here per upstream op, with ``templateParams`` resolved as ``operations.go``
``resolveTemplateParams`` does (``$param``, ``$param|default`` with a YAML default). They run on
:func:`kubesched.sim.bench_events.execute_events` with :class:`DRARun`, which adds, as v1.37.2's
executor runs them:

* :class:`AnyOp` — ``createAny``: ``count`` objects from the template (``Index`` 0…count-1,
  ``Count``, the params), in ``namespace`` if set (ResourceSlices, DeviceClasses, ResourceClaims,
  ResourceClaimTemplates, DeviceTaintRules), stored as the API serves them; the scheduler's informers
  see them before the next op.
* :class:`AllocClaims` — ``allocResourceClaims`` (``dra.go`` ``allocResourceClaimsOp``): every
  unallocated claim of the namespace, one at a time, is allocated by the structured allocator (with
  the DRA gates of the run) on the first node of a fresh random order of all nodes where it fits; the
  allocation is written to the claim's status before the next claim. Nodes whose own devices are all
  allocated are skipped without asking the allocator (they cannot fit a claim: same outcome).
* ``createPods`` (:class:`DRAPodsOp`): the resourceclaim controller creates each pod's claims from its
  templates when the pod is created (:func:`~kubesched.sim.resourceclaims.create_pod_claims`, the
  PodGroup's claim with DRAWorkloadResourceClaims); ``createPodGroups`` creates a PodGroup's template
  claims (:func:`~kubesched.sim.resourceclaims.create_pod_group_claims`).
* steady state (``steadyState: true``, ``duration``; ``executor.go`` ``createPodsSteadily``): the
  measurement starts, ``count`` pods are created; each one scheduled is deleted (its generated claim
  with it: the devices are freed) and replaced, until ``duration`` seconds of wall time have passed
  (or the timer's virtual time, in tests).

Upstream quirk: ``SchedulingWithResourceClaimTemplate/empty_100nodes`` and ``empty_200nodes`` set no
``measurePods`` (upstream's executor would stop on the missing parameter; no CI job runs them): they
run with their siblings' 10.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import yaml

from kubesched.api.objects import Pod, decode, pod_key
from kubesched.features import FeatureGate
from kubesched.plugins.dra_structured import Allocator, Features
from kubesched.sim.bench_dra_templates import DRA_TEMPLATES
from kubesched.sim.bench_events import (
    EventsRun,
    StartCollecting,
    StopCollecting,
    _EventsStore,
    execute_events,
    with_runner,
)
from kubesched.sim.bench_podgroup import (
    TEMPLATES_137,
    CreatePodGroups,
    NodesOp,
    Params,
    PodsOp,
    VirtualTimer,
    register_cases,
    render_object,
)
from kubesched.sim.bench_runner import IT_LABELS, PERF_LABELS, BenchResult, CreateAny, Workload
from kubesched.sim.resourceclaims import create_pod_claims, create_pod_group_claims, release_pod_claims

__all__ = ["DRA137_WORKLOADS", "AllocClaims", "AnyOp", "DRAPodsOp", "DRARun", "execute_dra137", "resolve_param"]

for _path, _text in DRA_TEMPLATES.items():
    if TEMPLATES_137.get(_path, _text) != _text:  # pragma: no cover
        raise ValueError(f"template {_path!r} registered twice with different contents")
TEMPLATES_137.update(DRA_TEMPLATES)


# ───────────────────────────── ops ─────────────────────────────


@dataclass(frozen=True)
class AnyOp(CreateAny):
    """``createAny`` of ``count`` objects from ``path`` (``template`` is unused)."""

    template: str = ""
    path: str = ""
    count: int = 1
    params: Params = ()


@dataclass(frozen=True)
class AllocClaims:
    """``allocResourceClaims`` in ``namespace``."""

    namespace: str


@dataclass(frozen=True)
class DRAPodsOp(PodsOp):
    """``createPods`` with ``steadyState``/``duration`` (seconds)."""

    steady_state: bool = False
    duration_s: float = 0.0


def resolve_param(value: Any, params: dict[str, Any]) -> Any:
    """``resolveTemplateParams`` for one value: ``"$name"`` is the workload parameter, ``"$name|d"``
    falls back to ``d`` decoded as YAML (empty: null); anything else is itself. Raises KeyError for a
    missing parameter without a default."""
    if not (isinstance(value, str) and value.startswith("$")):
        return value
    key, sep, default = value[1:].partition("|")
    if key in params:
        return params[key]
    if sep:
        return yaml.safe_load(default)
    raise KeyError(f"parameter {key!r} not found")


def _tp(p: dict[str, Any], **kw: Any) -> Params:
    return tuple((k, resolve_param(v, p)) for k, v in kw.items())


# ───────────────────────────── running ─────────────────────────────


def _allocator_features(fg: FeatureGate) -> Features:
    """The ``structured.Features`` ``allocResourceClaimsOp`` passes (its gates; the rest off)."""
    return Features(prioritized_list=fg.enabled("DRAPrioritizedList"), admin_access=fg.enabled("DRAAdminAccess"),
                    device_taints=fg.enabled("DRADeviceTaints"),
                    partitionable_devices=fg.enabled("DRAPartitionableDevices"),
                    consumable_capacity=fg.enabled("DRAConsumableCapacity"),
                    compatibility_groups=fg.enabled("DRADeviceCompatibilityGroups"),
                    list_type_attributes=fg.enabled("DRAListTypeAttributes"))


class _DRAStore(_EventsStore):
    """The events store, noting the pods of ``steady_ns`` that get a node (``createPodsSteadily``'s
    informer handler)."""

    def __init__(self) -> None:
        super().__init__()
        self.steady_ns = ""
        self.just_scheduled: list[str] = []

    def _notify_pod_update(self, old: Pod, new: Pod) -> None:
        if not old.spec.node_name and new.spec.node_name and new.metadata.namespace == self.steady_ns:
            self.just_scheduled.append(pod_key(new))
        super()._notify_pod_update(old, new)


class DRARun(EventsRun):
    """:class:`~kubesched.sim.bench_events.EventsRun` plus the DRA ops (see the module docstring)."""

    store_factory = _DRAStore

    def __init__(self, workload: Workload, seed: int, registry: dict[str, Any] | None,
                 features: FeatureGate | None, progress: bool, timer: VirtualTimer | None = None) -> None:
        super().__init__(workload, seed, registry, features, progress, timer)
        self.dstore = cast(_DRAStore, self.store)
        self.workload_claims = self.fg.enabled("DRAWorkloadResourceClaims")
        self.generic_workload = self.fg.enabled("GenericWorkload")
        self.claim_rng = random.Random(seed)
        self.store.pod_delete_hooks.append(lambda p: release_pod_claims(self.store, p))  # preemption victims

    # -- objects --

    def add_pod(self, op: PodsOp, namespace: str, index: int, raw: dict[str, Any]) -> str:
        pod = decode(Pod, raw)
        if pod.spec.resource_claims:
            pod = create_pod_claims(self.store, pod, raw, self.claim_rng, self.workload_claims, self.generic_workload)
        self.store.add("Pod", pod)
        return pod_key(pod)

    def pod_groups(self, op: CreatePodGroups) -> None:
        super().pod_groups(op)
        if not self.workload_claims:
            return
        for pg in list(self.store.list("PodGroup", op.namespace)):
            updated = create_pod_group_claims(self.store, pg, self.claim_rng)
            if updated is not pg:
                self.store.put_object("PodGroup", updated)
        self.store.flush()

    def create_any(self, op: AnyOp) -> None:
        """``createAny`` (see the module docstring)."""
        if op.namespace:
            self.ensure_ns(op.namespace)
        params = dict(op.params)
        for i in range(op.count):
            raw = render_object(op.path, {**params, "Index": i, "Count": op.count})
            kind = raw.get("kind")
            if not isinstance(kind, str) or not kind:
                raise ValueError(f"{op.path}: the rendered object has no kind")
            meta = raw.setdefault("metadata", {})
            if op.namespace:
                meta["namespace"] = op.namespace
            meta.setdefault("uid", f"{self.rng.getrandbits(128):032x}")
            meta.setdefault("generation", 1)
            self.store.put_object(kind, raw)
        self.store.flush()

    def alloc_claims(self, op: AllocClaims) -> None:
        """``allocResourceClaims`` (see the module docstring). Raises RuntimeError when a claim fits
        on no node, as upstream's op fails."""
        store = self.store
        slices = store.list("ResourceSlice")
        classes = {c["metadata"]["name"]: c for c in store.list("DeviceClass")}
        node_devices: dict[str, list[tuple[str, str, str]]] = {}
        for s in slices:
            spec = s.get("spec") or {}
            if spec.get("nodeName"):
                pool = (spec.get("pool") or {}).get("name", "")
                node_devices.setdefault(spec["nodeName"], []).extend(
                    (spec.get("driver", ""), pool, d.get("name", "")) for d in spec.get("devices") or ())
        used: set[tuple[str, str, str]] = set()
        for claim in store.list("ResourceClaim"):
            for r in ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or ():
                used.add((r["driver"], r["pool"], r["device"]))
        features = _allocator_features(self.fg)
        skip_full = not any(not (s.get("spec") or {}).get("nodeName") for s in slices)  # no network slices
        nodes = list(store.nodes.values())
        claims = sorted(store.list("ResourceClaim", op.namespace), key=lambda c: c["metadata"]["name"])
        for n, claim in enumerate(claims):
            if (claim.get("status") or {}).get("allocation") is not None:
                continue
            allocator = Allocator([claim], used, classes.get, slices, features)
            self.rng.shuffle(nodes)
            for node in nodes:
                own = node_devices.get(node.metadata.name)
                if own is not None and all(d in used for d in own) and skip_full:
                    continue
                result = allocator.allocate(node)
                if result is not None:
                    c = dict(claim)
                    c["status"] = {**(claim.get("status") or {}), "allocation": result[0]}
                    store.put_object("ResourceClaim", c)
                    used.update((r["driver"], r["pool"], r["device"]) for r in result[0]["devices"]["results"])
                    break
            else:
                raise RuntimeError(f"{self.workload.key}: could not allocate claim {n} out of {len(claims)}")
        store.flush()

    # -- the ops --

    def extra_op(self, op: Any, index: int, begin: Callable[[Sequence[str], Params, str], None],
                 end: Callable[[], None]) -> bool:
        if isinstance(op, AnyOp):
            self.create_any(op)
        elif isinstance(op, AllocClaims):
            self.alloc_claims(op)
        elif isinstance(op, DRAPodsOp) and op.steady_state:
            self.steady(op, begin, end)
        else:
            return False
        return True

    def steady(self, op: DRAPodsOp, begin: Callable[[Sequence[str], Params, str], None],
               end: Callable[[], None]) -> None:
        """``createPodsSteadily`` (see the module docstring)."""
        ns = op.namespace or "default"
        self.ensure_ns(ns)
        begin((ns,), (), ns)
        store = self.dstore
        store.steady_ns = ns
        store.just_scheduled.clear()
        self.pods(op, ns)
        deadline = self.now() + op.duration_s
        params = dict(op.params)
        made = [op.count]

        def done() -> bool:
            while store.just_scheduled:
                pod = store.remove_pod(store.just_scheduled.pop())
                if pod is not None:
                    release_pod_claims(store, pod)
                self.add_pod(op, ns, made[0], self.pod_raw(op.path, params, ns, made[0], op.count,
                                                           op.signature_batch_size))
                made[0] += 1
            return self.now() >= deadline

        try:
            self.schedule_until(done, f"the steady state's {op.duration_s:g} s", check_every=1)
        except RuntimeError as e:
            if "nothing left to schedule" not in str(e):
                raise
        store.steady_ns = ""
        end()


def execute_dra137(workload: Workload, *, seed: int = 0, progress: bool = False,
                   registry: dict[str, Any] | None = None, inspect: Any = None, profiler: Any = None,
                   features: FeatureGate | None = None, timer: VirtualTimer | None = None) -> BenchResult:
    """Run one workload of :data:`DRA137_WORKLOADS` (its ``runner``)."""
    return execute_events(workload, seed=seed, progress=progress, registry=registry, inspect=inspect,
                          profiler=profiler, features=features, timer=timer, run_cls=DRARun)


# ───────────────────────────── the catalogue ─────────────────────────────

_T = "dra/templates/"
_NODE = _T + "node-with-dra-test-driver.yaml"
_POD_TPL = _T + "pod-with-claim-template.yaml"
_DRA = {"DynamicResourceAllocation": True}


def _nodes(p: dict[str, Any], without: bool = True) -> list[Any]:
    out: list[Any] = [NodesOp(p["nodesWithoutDRA"])] if without else []
    return [*out, NodesOp(p["nodesWithDRA"], path=_NODE)]


def _measured(p: dict[str, Any], path: str = _POD_TPL, steady: bool = True) -> DRAPodsOp:
    """The measured ``createPods`` in ``test`` (``steadyStateParam``/``durationParam`` when ``steady``)."""
    dur = str(p.get("duration", "0s"))
    return DRAPodsOp(p.get("measurePods", 10), namespace="test", path=path, collect_metrics=True,
                     steady_state=bool(p.get("steadyState")) if steady else False,
                     duration_s=float(dur.rstrip("s") or 0))


def _publish(p: dict[str, Any]) -> list[Any]:
    return [*_nodes(p), StartCollecting(("default",)),
            AnyOp(path=_T + "resourceslice-basic-devices.yaml", count=p["nodesWithDRA"]), StopCollecting()]


def _claim_template(p: dict[str, Any]) -> list[Any]:
    return [*_nodes(p),
            AnyOp(path=_T + "resourceslice-basic-devices.yaml", count=p["nodesWithDRA"],
                  params=_tp(p, numPCIRoots="$numPCIRoots|2", numDevices=10)),
            AnyOp(path=_T + "deviceclass.yaml"),
            AnyOp(path=_T + "resourceclaim.yaml", count=p["initClaims"], namespace="init"),
            AllocClaims("init"),
            AnyOp(path=_T + "resourceclaimtemplate.yaml", namespace="test",
                  params=_tp(p, numRequests="$numRequests|1", selectors="$selectors|", constraints="$constraints|")),
            _measured(p)]


def _claim_ref(p: dict[str, Any]) -> list[Any]:
    pod = _T + "pod-with-claim-ref.yaml"
    return [*_nodes(p),
            AnyOp(path=_T + "resourceslice-basic-devices.yaml", count=p["nodesWithDRA"], params=_tp(p, numDevices=2)),
            AnyOp(path=_T + "deviceclass.yaml"),
            AnyOp(path=_T + "resourceclaim.yaml", count=p["initClaims"], namespace="init"),
            DRAPodsOp(p["initPods"], namespace="init", path=pod),
            AnyOp(path=_T + "resourceclaim.yaml", count=p["measureClaims"], namespace="test"),
            _measured(p, pod, steady=False)]


def _partitionable(counters: str, devices: str, claim: str, template: str) -> Callable[[dict[str, Any]], list[Any]]:
    """compatibilitygroups, Partitionable, PartitionableBacktracking: two slices per node."""
    def ops(p: dict[str, Any]) -> list[Any]:
        n = p["nodesWithDRA"]
        return [*_nodes(p), AnyOp(path=_T + counters, count=n), AnyOp(path=_T + devices, count=n),
                AnyOp(path=_T + "deviceclass.yaml"),
                AnyOp(path=_T + claim, count=p["initClaims"], namespace="init"), AllocClaims("init"),
                AnyOp(path=_T + template, namespace="test"), _measured(p)]
    return ops


def _consumable(p: dict[str, Any]) -> list[Any]:
    tpl = _T + "resourceclaimtemplate-consumablecapacity.yaml"
    return [*_nodes(p), AnyOp(path=_T + "resourceslice-consumablecapacity.yaml", count=p["nodesWithDRA"]),
            AnyOp(path=_T + "deviceclass-consumablecapacity.yaml"),
            AnyOp(path=tpl, namespace="test"), AnyOp(path=tpl, namespace="init"),
            DRAPodsOp(p["initPods"], namespace="init", path=_POD_TPL), _measured(p)]


def _taints(p: dict[str, Any]) -> list[Any]:
    tpl = _T + "resourceclaimtemplate-toleration.yaml"
    return [NodesOp(p["nodesWithoutDRA"]), AnyOp(path=_T + "devicetaintrule.yaml"),
            NodesOp(p["nodesWithDRA"], path=_NODE),
            AnyOp(path=_T + "resourceslice-basic-devices.yaml", count=p["nodesWithDRA"], params=_tp(p, numDevices=10)),
            AnyOp(path=_T + "deviceclass.yaml"), AnyOp(path=tpl, namespace="init"),
            DRAPodsOp(p["initPods"], namespace="init", path=_POD_TPL), AnyOp(path=tpl, namespace="test"),
            _measured(p, steady=False)]


def _extended(p: dict[str, Any]) -> list[Any]:
    pod = _T + "pod-with-extended-resource.yaml"
    tp = _tp(p, **{"class": "$class", "classes": "$classes"})
    return [*_nodes(p),
            AnyOp(path=_T + "resourceslice-basic-devices.yaml", count=p["nodesWithDRA"], params=_tp(p, numDevices=10)),
            AnyOp(path=_T + "deviceclass-extended-resource.yaml", count=p["classes"],
                  params=_tp(p, **{"class": "$class"})),
            DRAPodsOp(p["initPods"], namespace="init", path=pod, params=tp),
            DRAPodsOp(p["measurePods"], namespace="test", path=pod, params=tp, collect_metrics=True)]


def _extended_scoring(p: dict[str, Any]) -> list[Any]:
    pod = _T + "pod-with-extended-resource-scoring.yaml"
    return [*_nodes(p),
            AnyOp(path=_T + "resourceslice-basic-devices.yaml", count=p["nodesWithDRA"], params=_tp(p, numDevices=10)),
            AnyOp(path=_T + "deviceclass-extended-resource-scoring.yaml", count=p["classes"]),
            DRAPodsOp(p["initPods"], namespace="init", path=pod),
            DRAPodsOp(p["measurePods"], namespace="test", path=pod, collect_metrics=True)]


def _list_attributes(p: dict[str, Any]) -> list[Any]:
    return [*_nodes(p, without=False),
            AnyOp(path=_T + "resourceslice-list-attributes-devices.yaml", count=p["nodesWithDRA"],
                  params=_tp(p, numDevices="$numDevices|64", numNonMatchingDevices="$numNonMatchingDevices|32",
                             numListValues="$numListValues|32")),
            AnyOp(path=_T + "deviceclass.yaml"),
            AnyOp(path=_T + "resourceclaimtemplate.yaml", namespace="test",
                  params=_tp(p, numRequests="$numRequests|1", constraints="$constraints|")),
            _measured(p)]


def _first_available(p: dict[str, Any]) -> list[Any]:
    return [*_nodes(p),
            AnyOp(path=_T + "resourceslice-basic-devices.yaml", count=p["nodesWithDRA"], params=_tp(p, numDevices=10)),
            AnyOp(path=_T + "deviceclass.yaml"), AnyOp(path=_T + "deviceclass-no-devices.yaml"),
            AnyOp(path=_T + "resourceclaim.yaml", count=p["initClaims"], namespace="init"), AllocClaims("init"),
            AnyOp(path=_T + "resourceclaimtemplate-first-available.yaml", namespace="test"),
            DRAPodsOp(10, namespace="test", path=_POD_TPL, collect_metrics=True)]


def _shared_claim(p: dict[str, Any]) -> list[Any]:
    g = p["podGroups"]
    return [*_nodes(p), AnyOp(path=_T + "resourceslice-podgroup.yaml", count=g), AnyOp(path=_T + "deviceclass.yaml"),
            AnyOp(path=_T + "resourceclaim.yaml", count=g, namespace="test"),
            CreatePodGroups(g, "test", _T + "podgroup-with-claim-ref.yaml"),
            DRAPodsOp(p["measurePods"], namespace="test", path=_T + "pod-in-podgroup-with-claim-ref.yaml",
                      params=_tp(p, PodGroupCount="$podGroups"), collect_metrics=True)]


def _shared_template(p: dict[str, Any]) -> list[Any]:
    g = p["podGroups"]
    return [*_nodes(p), AnyOp(path=_T + "resourceslice-podgroup.yaml", count=g), AnyOp(path=_T + "deviceclass.yaml"),
            AnyOp(path=_T + "resourceclaimtemplate.yaml", namespace="init"), AllocClaims("init"),
            AnyOp(path=_T + "resourceclaimtemplate.yaml", namespace="test"),
            CreatePodGroups(g, "test", _T + "podgroup-with-claim-template.yaml"),
            DRAPodsOp(p["measurePods"], namespace="test", path=_T + "pod-in-podgroup-with-claim-template.yaml",
                      params=_tp(p, PodGroupCount="$podGroups"), collect_metrics=True)]


def _d(nodes: int, init: int, measure: int = 10, steady: bool = True, without: int = 0, init_key: str = "initClaims",
       **extra: Any) -> dict[str, Any]:
    return {"nodesWithDRA": nodes, "nodesWithoutDRA": without, init_key: init, "measurePods": measure,
            "steadyState": steady, "duration": "10s" if steady else "0s", **extra}


_SEL = [{"cel": {"expression": 'device.attributes["test-driver.cdi.k8s.io"].driverVersion.major() >= 1 && '
                               'device.capacity["test-driver.cdi.k8s.io"].memory.isGreaterThan(quantity("1Mi"))'}}]
_MATCH: dict[str, Any] = {"numRequests": 5, "numPCIRoots": 2,
                          "constraints": [{"matchAttribute": "resource.kubernetes.io/pciRoot"}]}


def _sizes(init_key: str, per_node: int) -> list[Any]:
    """The nine sizes of compatibilitygroups / consumablecapacity / partitionabledevices: ``per_node``
    init objects fill one node (half: half the nodes; full: all but the 10 measured pods)."""
    out: list[Any] = [("fast", _d(1, 0, 1, False, 1, init_key), IT_LABELS),
                      ("empty_100nodes", _d(100, 0, init_key=init_key), ()),
                      ("half_100nodes", _d(100, 50 * per_node, init_key=init_key), ())]
    for n in (500, 1000):
        out += [(f"empty_{n}nodes", _d(n, 0, init_key=init_key), PERF_LABELS),
                (f"half_{n}nodes", _d(n, n // 2 * per_node, init_key=init_key), PERF_LABELS),
                (f"full_{n}nodes", _d(n, n * per_node - 10, init_key=init_key), PERF_LABELS)]
    return out


_PART = _sizes("initClaims", 1)
_CONS = [*_sizes("initPods", 8)[:1], ("fast_with_DRAPartitionableDevices", _d(1, 0, 1, False, 1, "initPods"), IT_LABELS,
                                      {"DRAPartitionableDevices": True, "DRAResourceClaimDeviceStatus": True}),
         *_sizes("initPods", 8)[1:]]
_ER = "example.com/gpu"
_ERI = "deviceclass.resource.kubernetes.io/test-class"
_ERG = {"DRAExtendedResource": True}
_WRC = {**_DRA, "DRAWorkloadResourceClaims": True, "GenericWorkload": True}


def _er(cls: str, classes: int, nodes: int, pods: int) -> dict[str, Any]:
    return {"class": cls, "classes": classes, "nodesWithDRA": nodes, "nodesWithoutDRA": 0, "initPods": pods,
            "measurePods": pods}


DRA137_WORKLOADS: dict[str, Workload] = with_runner({
    # dra/performance-config.yaml
    **register_cases("PublishResourceSlices", _DRA, _publish, [
        ("500nodes", {"nodesWithDRA": 500, "nodesWithoutDRA": 0}, PERF_LABELS),
        ("5000nodes", {"nodesWithDRA": 5000, "nodesWithoutDRA": 0}, PERF_LABELS),
    ]),
    **register_cases("SchedulingWithResourceClaimTemplate", _DRA, _claim_template, [
        ("fast", _d(1, 0, 10, False, 1), IT_LABELS),
        ("2000pods_200nodes", _d(200, 1000, 1000, False), ()),
        ("5000pods_500nodes", _d(500, 2500, 2500, False), PERF_LABELS),
        ("empty_100nodes", _d(100, 0), ()),
        ("empty_200nodes", _d(200, 0), ()),
        ("empty_500nodes", _d(500, 0), PERF_LABELS),
        ("half_100nodes", _d(100, 500), ()),
        ("half_200nodes", _d(200, 1000), ()),
        ("half_500nodes", _d(500, 2500), PERF_LABELS),
        ("full_100nodes", _d(100, 990), ()),
        ("full_200nodes", _d(200, 1990), ()),
        ("full_500nodes", _d(500, 4990), PERF_LABELS),
        ("selector_fast", _d(1, 0, 10, False, 1, selectors=_SEL), IT_LABELS),
        ("selector_empty_500nodes", _d(500, 0, selectors=_SEL), PERF_LABELS),
        ("match_fast", _d(1, 0, 2, False, 1, **_MATCH), IT_LABELS),
        ("match_empty_500nodes", _d(500, 0, selectors=None, **_MATCH), PERF_LABELS),
    ]),
    **register_cases("SchedulingWithResourceClaim", _DRA, _claim_ref, [
        ("fast", {"nodesWithDRA": 1, "nodesWithoutDRA": 1, "initPods": 0, "initClaims": 0, "measurePods": 10,
                  "measureClaims": 2}, IT_LABELS),
        ("2000pods_200nodes", {"nodesWithDRA": 200, "nodesWithoutDRA": 0, "initPods": 1000, "initClaims": 200,
                               "measurePods": 1000, "measureClaims": 200}, ()),
        ("5000pods_500nodes", {"nodesWithDRA": 500, "nodesWithoutDRA": 0, "initPods": 2500, "initClaims": 500,
                               "measurePods": 2500, "measureClaims": 500}, ()),
    ]),
    # dra/compatibilitygroups
    **register_cases("CompatibilityGroups",
                     {**_DRA, "DRAPartitionableDevices": True, "DRADeviceCompatibilityGroups": True},
                     _partitionable("resourceslice-partitionable-countersets.yaml",
                                    "resourceslice-compatibilitygroups-devices.yaml",
                                    "resourceclaim-partitionable.yaml",
                                    "resourceclaimtemplate-for-two-devices.yaml"), _PART),
    # dra/consumablecapacity
    **register_cases("ConsumableCapacity", {**_DRA, "DRAConsumableCapacity": True}, _consumable, _CONS),
    # dra/devicetaints
    **register_cases("DeviceTaintToleration", {**_DRA, "DRADeviceTaints": True}, _taints, [
        ("fast", {"nodesWithDRA": 1, "nodesWithoutDRA": 1, "initPods": 0, "measurePods": 10}, IT_LABELS),
    ]),
    # dra/extendedresource
    **register_cases("ExtendedResource", {**_DRA, "DRAExtendedResource": True}, _extended, [
        ("fast", {**_er(_ER, 10, 1, 10), "nodesWithoutDRA": 1, "initPods": 0}, IT_LABELS, _ERG),
        ("Explicit_25classes_2000pods_200nodes", _er(_ER, 25, 200, 1000), ()),
        ("Explicit_25classes_5000pods_500nodes", _er(_ER, 25, 500, 2500), PERF_LABELS),
        ("Explicit_50classes_2000pods_200nodes", _er(_ER, 50, 200, 1000), ()),
        ("Explicit_50classes_5000pods_500nodes", _er(_ER, 50, 500, 2500), PERF_LABELS),
        ("Implicit_25classes_2000pods_200nodes", _er(_ERI, 25, 200, 1000), ()),
        ("Implicit_25classes_5000pods_500nodes", _er(_ERI, 25, 500, 2500), PERF_LABELS),
    ]),
    # dra/extendedresource/scoring
    **register_cases("ExtendedResourceScoring", {**_DRA, "DRAExtendedResource": True}, _extended_scoring, [
        ("fast", {"classes": 2, "nodesWithDRA": 3, "nodesWithoutDRA": 1, "initPods": 0, "measurePods": 10}, IT_LABELS,
         _ERG),
        ("2000pods_200nodes", {"classes": 10, "nodesWithDRA": 200, "nodesWithoutDRA": 0, "initPods": 0,
                               "measurePods": 2000}, ("integration-test", "performance"), _ERG),
        ("5000pods_500nodes", {"classes": 20, "nodesWithDRA": 500, "nodesWithoutDRA": 0, "initPods": 0,
                               "measurePods": 5000}, ("integration-test", "performance"), _ERG),
    ], config="dra/extendedresource/scoring/scheduler-config.yaml"),
    # dra/listattributes
    **register_cases("SchedulingWithResourceClaimTemplateListAttributes", {**_DRA, "DRAListTypeAttributes": True},
                     _list_attributes, [
        ("fast", {"nodesWithDRA": 1, "measurePods": 1, "steadyState": False, "duration": "0s", "numDevices": 64,
                  "numNonMatchingDevices": 32, "numRequests": 32, "numListValues": 47,
                  "constraints": [{"matchAttribute": "dra.example.com/match"}]}, IT_LABELS),
        ("empty_500nodes", {"nodesWithDRA": 500, "measurePods": 500, "steadyState": True, "duration": "10s",
                            "numDevices": 64, "numNonMatchingDevices": 32, "numRequests": 32, "numListValues": 47,
                            "constraints": [{"matchAttribute": "dra.example.com/match"}]}, ()),
    ]),
    # dra/partitionabledevices
    **register_cases("Partitionable", {**_DRA, "DRAPartitionableDevices": True},
                     _partitionable("resourceslice-partitionable-countersets.yaml",
                                    "resourceslice-partitionable-devices.yaml", "resourceclaim-partitionable.yaml",
                                    "resourceclaimtemplate-for-two-devices.yaml"), _PART),
    **register_cases("PartitionableBacktracking", {**_DRA, "DRAPartitionableDevices": True},
                     _partitionable("resourceslice-partitionable-backtracking-countersets.yaml",
                                    "resourceslice-partitionable-backtracking-devices.yaml",
                                    "resourceclaim-partitionable-backtracking.yaml",
                                    "resourceclaimtemplate-backtracking.yaml"), _PART),
    # dra/prioritizedlist
    **register_cases("FirstAvailable", {**_DRA, "DRAPrioritizedList": True}, _first_available, [
        ("fast", {"nodesWithDRA": 1, "nodesWithoutDRA": 1, "initClaims": 0}, IT_LABELS),
    ]),
    # dra/workloadresourceclaims
    **register_cases("SharedPodGroupResourceClaim", _WRC, _shared_claim, [
        ("fast", {"nodesWithDRA": 1, "nodesWithoutDRA": 0, "podGroups": 10, "measurePods": 10}, IT_LABELS),
        ("1podgroup_1000pods", {"nodesWithDRA": 10, "nodesWithoutDRA": 0, "podGroups": 1, "measurePods": 1000},
         IT_LABELS),
        ("100podgroups_5000pods", {"nodesWithDRA": 50, "nodesWithoutDRA": 0, "podGroups": 100, "measurePods": 5000},
         PERF_LABELS),
    ]),
    **register_cases("SharedPodGroupResourceClaimTemplate", _WRC, _shared_template, [
        ("fast", {"nodesWithDRA": 1, "nodesWithoutDRA": 0, "podGroups": 10, "measurePods": 10}, IT_LABELS),
        ("1podgroup_1000pods", {"nodesWithDRA": 10, "nodesWithoutDRA": 0, "podGroups": 1, "measurePods": 1000},
         IT_LABELS),
        ("100podgroups_5000pods", {"nodesWithDRA": 50, "nodesWithoutDRA": 0, "podGroups": 100, "measurePods": 5000},
         PERF_LABELS),
    ]),
}, execute_dra137)
"""The v1.37.2 DRA workloads by ``"Case/Workload"`` (merged into :data:`kubesched.sim.bench.WORKLOADS`,
replacing :mod:`kubesched.sim.bench_dra`'s SchedulingWithResourceClaimTemplate workloads of the same name)."""
