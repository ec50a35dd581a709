"""``kubesched bench``: upstream scheduler_perf workloads, reproduced in-process.

Upstream's harness (``test/integration/scheduler_perf``) starts an apiserver and a real
scheduler, creates fake nodes and pods from YAML templates, and samples the scheduling
throughput every second. Here the same workloads run through the same engine path as
``kubesched simulate``: a :class:`~kubesched.sim.store.ClusterStore` (the API server) and a
:class:`~kubesched.scheduler.Scheduler` built from the default KubeSchedulerConfiguration, with
bindings going through the store exactly as in a simulation.

Workloads
    :data:`WORKLOADS` maps ``"Case/Workload"`` (upstream's test case and workload names) to a
    :class:`Workload`: a list of ops as in upstream's ``workloadTemplate`` (``createNodes`` with
    an optional ``labelNodePrepareStrategy``, ``createNamespaces``, ``createAny``,
    ``createPods``) with the ``params`` of that workload, the upstream ``threshold`` (the CI
    floor, compared with the Average) and the kubesched target from the project issues.
    Templates are upstream's YAML (``templates/*.yaml``), decoded once and copied with
    :func:`msgspec.structs.replace` per object. Nodes are named as upstream's node preparer
    names them (``generateName`` + 5 random characters, plus the ``kubernetes.io/hostname``
    label); pods get ``generateName`` names. A ``createPods`` op without a namespace uses
    ``namespace-<op index>`` as upstream does. The feature-gate variants of v1.37.2's files
    (``_AsyncAPICallsEnabled``, ``_NodeDeclaredFeaturesDisabled``, …) are in ``bench_events``
    and run with their gates. :data:`WORKLOADS` lists each test case's workloads together.

Measurement, ops and the run loop live in :mod:`kubesched.sim.bench_runner` (the one runner);
    the DRA, pod-group/batching/starvation, nodedeclaredfeatures and event_handling/
    default_preemption/misc topics in ``bench_dra``, ``bench_podgroup``, ``bench_ndf`` and
    ``bench_events`` (their templates, workloads and op handlers). This module merges their
    workloads into :data:`WORKLOADS` and holds the CLI. For peak RSS to belong to one
    workload, :func:`run_workload` runs a workload in a fresh subprocess whenever this process has
    already run one (``isolate=None``); pass ``isolate=True`` to always do so.

Run ``python -m kubesched.sim.bench --list`` or see ``benchmarks/scheduler_perf.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

from kubesched.features import FeatureGate
from kubesched.sim.bench_dra import DRA_WORKLOADS
from kubesched.sim.bench_dra137 import DRA137_WORKLOADS
from kubesched.sim.bench_events import EVENTS_WORKLOADS
from kubesched.sim.bench_ndf import NDF_WORKLOADS
from kubesched.sim.bench_podgroup import V137_WORKLOADS
from kubesched.sim.bench_runner import (
    IT_LABELS,
    PERF_LABELS,
    TEMPLATES,
    BenchResult,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    Op,
    ThroughputCollector,
    Workload,
    execute,
    percentile,
    throughput_data,
    upstream_threshold,
)

__all__ = [
    "TEMPLATES",
    "WORKLOADS",
    "BenchResult",
    "CreateAny",
    "CreateNamespaces",
    "CreateNodes",
    "CreatePods",
    "ThroughputCollector",
    "Workload",
    "execute",
    "main",
    "percentile",
    "run_workload",
    "throughput_data",
    "upstream_threshold",
]

# ───────────────────────────── the catalogue (upstream */performance-config.yaml) ─────────────────────────────

def _case(case: str, template: Callable[[dict[str, int]], list[Op]],
          workloads: Sequence[tuple[str, dict[str, int], float | None, float | None, tuple[str, ...]]],
          rss: dict[str, float] | None = None) -> dict[str, Workload]:
    out: dict[str, Workload] = {}
    for name, params, threshold, target, labels in workloads:
        w = Workload(case, name, tuple(template(params)), threshold, target,
                     (rss or {}).get(name), labels)
        out[w.key] = w
    return out


def _basic(p: dict[str, int]) -> list[Op]:
    return [CreateNodes(p["initNodes"]), CreatePods(p["initPods"]),
            CreatePods(p["measurePods"], collect_metrics=True)]


def _daemonset(p: dict[str, int]) -> list[Op]:
    return [CreateNodes(1, "node-with-name.yaml"), CreateNodes(p["initNodes"]),
            CreatePods(p["measurePods"], "daemonset-pod.yaml", collect_metrics=True)]


def _node_affinity(p: dict[str, int]) -> list[Op]:
    tpl = "pod-with-node-affinity.yaml"
    return [CreateNodes(p["initNodes"], label_key="topology.kubernetes.io/zone", label_values=("zone1",)),
            CreatePods(p["initPods"], tpl), CreatePods(p["measurePods"], tpl, collect_metrics=True)]


def _inter_pod(tpl: str, zone: bool) -> Callable[[dict[str, int]], list[Op]]:
    def ops(p: dict[str, int]) -> list[Op]:
        nodes = (CreateNodes(p["initNodes"], label_key="topology.kubernetes.io/zone", label_values=("zone1",))
                 if zone else CreateNodes(p["initNodes"]))
        return [nodes, CreateNamespaces("sched", 2), CreatePods(p["initPods"], tpl, "sched-0"),
                CreatePods(p["measurePods"], tpl, "sched-1", collect_metrics=True)]
    return ops


def _matching_anti_affinity(p: dict[str, int]) -> list[Op]:
    """affinity/ SchedulingPodMatchingAntiAffinity: init pods with required anti-affinity to
    ``color: green`` in sched-0, measured pods carrying that label (no affinity) in sched-1."""
    return [CreateNodes(p["initNodes"]), CreateNamespaces("sched", 2),
            CreatePods(p["initPods"], "pod-with-pod-anti-affinity.yaml", "sched-0"),
            CreatePods(p["measurePods"], "pod-with-pod-anti-affinity-label.yaml", "sched-1", collect_metrics=True)]


def _mixed_base_pod(p: dict[str, int]) -> list[Op]:
    """affinity/ MixedSchedulingBasePod: zone-labelled nodes; in sched-0 ``initPods`` each of
    default, required affinity, required anti-affinity, preferred affinity and preferred
    anti-affinity pods; the measured default pods in ``namespace-7`` (op 7)."""
    init = [CreatePods(p["initPods"], tpl, "sched-0") for tpl in (
        "pod-default.yaml", "pod-with-pod-affinity.yaml", "pod-with-pod-anti-affinity.yaml",
        "pod-with-preferred-pod-affinity.yaml", "pod-with-preferred-pod-anti-affinity.yaml")]
    return [CreateNodes(p["initNodes"], label_key="topology.kubernetes.io/zone", label_values=("zone1",)),
            CreateNamespaces("sched", 1), *init, CreatePods(p["measurePods"], collect_metrics=True)]


def _ns_selector(tpl: str, zone: bool) -> Callable[[dict[str, int]], list[Op]]:
    """affinity/ Scheduling*WithNSSelector: ``initNamespaces`` + 1 namespaces labelled
    ``team: devops`` (namespace-with-labels.yaml); ``createPodSets`` — ``initPodsPerNamespace``
    pods in each ``init-ns-<i>`` (one createPods op per namespace, as upstream's executor expands
    it) — then the measured pods in ``measure-ns-0``; the pods' (anti-)affinity terms select the
    labelled namespaces."""
    def ops(p: dict[str, int]) -> list[Op]:
        nodes = (CreateNodes(p["initNodes"], label_key="topology.kubernetes.io/zone", label_values=("zone1",))
                 if zone else CreateNodes(p["initNodes"]))
        ns_tpl = "namespace-with-labels.yaml"
        sets = [CreatePods(p["initPodsPerNamespace"], tpl, f"init-ns-{i}") for i in range(p["initNamespaces"])]
        return [nodes, CreateNamespaces("init-ns", p["initNamespaces"], ns_tpl),
                CreateNamespaces("measure-ns", 1, ns_tpl), *sets,
                CreatePods(p["measurePods"], tpl, "measure-ns-0", collect_metrics=True)]
    return ops


def _ns_p(nodes: int, per_ns: int, namespaces: int, measure: int) -> dict[str, int]:
    return {"initNodes": nodes, "initPodsPerNamespace": per_ns, "initNamespaces": namespaces, "measurePods": measure}


_MOONS = ("moon-1", "moon-2", "moon-3")


def _spreading(tpl: str) -> Callable[[dict[str, int]], list[Op]]:
    def ops(p: dict[str, int]) -> list[Op]:
        return [CreateNodes(p["initNodes"], label_key="topology.kubernetes.io/zone", label_values=_MOONS),
                CreatePods(p["initPods"]), CreatePods(p["measurePods"], tpl, collect_metrics=True)]
    return ops


def _default_spreading(p: dict[str, int]) -> list[Op]:
    return [CreateNodes(p["initNodes"], label_key="topology.kubernetes.io/zone", label_values=_MOONS),
            CreateAny("service.yaml", "service-ns"), CreatePods(p["initPods"]),
            CreatePods(p["measurePods"], "pod-with-label.yaml", "service-ns", collect_metrics=True)]


def _node_inclusion(p: dict[str, int]) -> list[Op]:
    """topology_spreading/ SchedulingWithNodeInclusionPolicy: plain nodes, then NoSchedule-tainted
    ones; the measured pods spread over hostnames with ``nodeTaintsPolicy: Honor`` (the tainted
    nodes are not domains) and ``nodeAffinityPolicy: Honor``."""
    return [CreateNodes(p["normalNodes"]), CreateNodes(p["taintNodes"], "node-with-taint.yaml"),
            CreatePods(p["measurePods"], "pod-with-node-inclusion-policy.yaml", collect_metrics=True)]


def _basic_tpl(tpl: str) -> Callable[[dict[str, int]], list[Op]]:
    def ops(p: dict[str, int]) -> list[Op]:
        return [CreateNodes(p["initNodes"]), CreatePods(p["initPods"], tpl),
                CreatePods(p["measurePods"], tpl, collect_metrics=True)]
    return ops


_EBS_LIMITS = dict(node_allocatable=(("attachable-volumes-csi-ebs.csi.aws.com", "39"),),
                   csi_node_allocatable=(("ebs.csi.aws.com", 39),))


def _pv_case(pv_tpl: str, migrated: tuple[str, ...] | None = None) -> Callable[[dict[str, int]], list[Op]]:
    """SchedulingInTreePVs (``migrated`` None: plain nodes), SchedulingMigratedInTreePVs and
    SchedulingCSIPVs (nodes with the EBS attach limit 39 and a CSINode)."""
    def ops(p: dict[str, int]) -> list[Op]:
        nodes = (CreateNodes(p["initNodes"]) if migrated is None
                 else CreateNodes(p["initNodes"], migrated_plugins=migrated, **_EBS_LIMITS))  # type: ignore[arg-type]
        return [nodes, CreatePods(p["initPods"], pv_template=pv_tpl, pvc_template="pvc.yaml"),
                CreatePods(p["measurePods"], pv_template=pv_tpl, pvc_template="pvc.yaml", collect_metrics=True)]
    return ops


def _preemption_pvs(p: dict[str, int]) -> list[Op]:
    return [CreateNodes(p["initNodes"]), CreatePods(p["initPods"], "pod-low-priority.yaml"),
            CreatePods(p["measurePods"], "pod-high-priority.yaml", pv_template="pv-aws.yaml",
                       pvc_template="pvc.yaml", collect_metrics=True)]


def _p(nodes: int, init: int, measure: int) -> dict[str, int]:
    return {"initNodes": nodes, "initPods": init, "measurePods": measure}



WORKLOADS: dict[str, Workload] = {
    # misc/performance-config.yaml
    **_case("SchedulingBasic", _basic, [
        ("5Nodes", _p(5, 5, 10), None, None, IT_LABELS),
        ("500Nodes", _p(500, 500, 1000), None, None, ()),
        ("5000Nodes", _p(5000, 1000, 1000), None, None, ()),
        ("5000Nodes_10000Pods", _p(5000, 1000, 10000), 680, 1500, PERF_LABELS),
        ("5000Nodes_50000Pods", _p(5000, 5000, 50000), 810, None, PERF_LABELS),
    ], rss={"5000Nodes_10000Pods": 1024}),
    **_case("SchedulingDaemonset", _daemonset, [
        ("5Nodes", {"initNodes": 5, "measurePods": 10}, None, None, IT_LABELS),
        ("15000Nodes", {"initNodes": 15000, "measurePods": 30000}, 1100, 1500, PERF_LABELS),
    ]),
    # affinity/performance-config.yaml
    **_case("SchedulingNodeAffinity", _node_affinity, [
        ("5Nodes", _p(5, 5, 10), None, None, IT_LABELS),
        ("500Nodes", _p(500, 500, 1000), None, None, ()),
        ("5000Nodes", _p(5000, 5000, 1000), None, None, ()),
        ("5000Nodes_10000Pods", _p(5000, 5000, 10000), 220, 1000, PERF_LABELS),
    ]),
    **_case("SchedulingPodAntiAffinity", _inter_pod("pod-with-pod-anti-affinity.yaml", False), [
        ("5Nodes", _p(5, 1, 4), None, None, IT_LABELS),
        ("500Nodes", _p(500, 100, 400), None, None, ()),
        ("5000Nodes", _p(5000, 1000, 1000), None, None, ()),
        ("5000Nodes_2000Pods", _p(5000, 1000, 2000), 60, 600, PERF_LABELS),
    ]),
    **_case("SchedulingPodMatchingAntiAffinity", _matching_anti_affinity, [
        ("5Nodes", _p(5, 1, 4), None, None, IT_LABELS),
        ("500Nodes", _p(500, 100, 400), None, None, ()),
        ("5000Nodes_5000Pods", _p(5000, 1000, 5000), 540, None, PERF_LABELS),  # threshold: v1.37.2's file
    ]),
    **_case("SchedulingPodAffinity", _inter_pod("pod-with-pod-affinity.yaml", True), [
        ("5Nodes", _p(5, 5, 10), None, None, IT_LABELS),
        ("500Nodes", _p(500, 500, 1000), None, None, ()),
        ("5000Nodes", _p(5000, 5000, 1000), None, None, ("performance", "short")),
        ("5000Nodes_5000Pods", _p(5000, 5000, 5000), 35, 350, PERF_LABELS),
    ]),
    **_case("SchedulingPreferredPodAffinity", _inter_pod("pod-with-preferred-pod-affinity.yaml", False), [
        ("5Nodes", _p(5, 5, 10), None, None, IT_LABELS),
        ("500Nodes", _p(500, 500, 1000), None, None, ()),
        ("5000Nodes", _p(5000, 5000, 1000), None, None, ()),
        ("5000Nodes_5000Pods", _p(5000, 5000, 5000), 90, 600, PERF_LABELS),
    ]),
    **_case("SchedulingPreferredPodAntiAffinity", _inter_pod("pod-with-preferred-pod-anti-affinity.yaml", False), [
        ("5Nodes", _p(5, 5, 10), None, None, IT_LABELS),
        ("500Nodes", _p(500, 500, 1000), None, None, ()),
        ("5000Nodes", _p(5000, 5000, 1000), None, None, ("performance", "short")),
        ("5000Nodes_5000Pods", _p(5000, 5000, 5000), 90, 600, PERF_LABELS),
    ]),
    **_case("MixedSchedulingBasePod", _mixed_base_pod, [
        ("5Nodes", _p(5, 2, 10), None, None, IT_LABELS),
        ("500Nodes", _p(500, 200, 1000), None, None, ()),
        ("5000Nodes", _p(5000, 2000, 1000), None, None, ()),
        ("5000Nodes_5000Pods", _p(5000, 2000, 5000), 540, None, PERF_LABELS),
    ]),
    **_case("SchedulingRequiredPodAntiAffinityWithNSSelector",
            _ns_selector("pod-anti-affinity-ns-selector.yaml", False), [
        ("10Nodes", _ns_p(10, 2, 2, 6), None, None, IT_LABELS),
        ("500Nodes", _ns_p(500, 4, 10, 100), None, None, ()),
        ("5000Nodes", _ns_p(5000, 40, 100, 1000), None, None, PERF_LABELS),
        ("5000Nodes_2000Pods", _ns_p(6000, 40, 100, 2000), 140, None, PERF_LABELS),
    ]),
    **_case("SchedulingPreferredAntiAffinityWithNSSelector",
            _ns_selector("pod-preferred-anti-affinity-ns-selector.yaml", False), [
        ("10Nodes", _ns_p(10, 2, 2, 10), None, None, IT_LABELS),
        ("500Nodes", _ns_p(500, 4, 10, 100), None, None, ()),
        ("5000Nodes", _ns_p(5000, 40, 100, 1000), None, None, PERF_LABELS),
        ("5000Nodes_2000Pods", _ns_p(5000, 40, 100, 2000), 180, None, PERF_LABELS),
    ]),
    **_case("SchedulingRequiredPodAffinityWithNSSelector",
            _ns_selector("pod-affinity-ns-selector.yaml", True), [
        ("10Nodes", _ns_p(10, 2, 2, 10), None, None, IT_LABELS),
        ("500Nodes", _ns_p(500, 4, 10, 100), None, None, ()),
        ("5000Nodes", _ns_p(5000, 50, 100, 1000), None, None, PERF_LABELS),
        ("5000Nodes_2000Pods", _ns_p(5000, 50, 100, 2000), 180, None, PERF_LABELS),
    ]),
    **_case("SchedulingPreferredAffinityWithNSSelector",
            _ns_selector("pod-preferred-affinity-ns-selector.yaml", False), [
        ("10Nodes", _ns_p(10, 2, 2, 10), None, None, IT_LABELS),
        ("500Nodes", _ns_p(500, 4, 10, 100), None, None, ()),
        ("5000Nodes", _ns_p(5000, 50, 100, 1000), None, None, ()),
        ("5000Nodes_5000Pods", _ns_p(5000, 50, 100, 5000), 190, None, PERF_LABELS),
    ]),
    # topology_spreading/performance-config.yaml
    **_case("TopologySpreading", _spreading("pod-with-topology-spreading.yaml"), [
        ("5Nodes", _p(5, 10, 10), None, None, IT_LABELS),
        ("500Nodes", _p(500, 1000, 1000), None, None, ()),
        ("5000Nodes", _p(5000, 5000, 2000), None, None, ("performance", "short")),
        ("5000Nodes_5000Pods", _p(5000, 5000, 5000), 460, 1000, PERF_LABELS),
    ]),
    **_case("PreferredTopologySpreading", _spreading("pod-with-preferred-topology-spreading.yaml"), [
        ("5Nodes", _p(5, 10, 10), None, None, IT_LABELS),
        ("500Nodes", _p(500, 1000, 1000), None, None, ()),
        ("5000Nodes", _p(5000, 5000, 2000), None, None, PERF_LABELS),
        ("5000Nodes_5000Pods", _p(5000, 5000, 5000), 340, 1000, PERF_LABELS),
    ]),
    **_case("DefaultTopologySpreading", _default_spreading, [
        ("5Nodes", _p(5, 10, 10), None, None, IT_LABELS),
        ("500Nodes", _p(500, 1000, 1000), None, None, ()),
        ("5000Nodes_10000Pods", _p(5000, 5000, 10000), None, None, PERF_LABELS),
        ("5000Nodes_50000Pods", _p(5000, 5000, 50000), 160, 800, PERF_LABELS),
    ]),
    **_case("SchedulingWithNodeInclusionPolicy", _node_inclusion, [
        ("5Nodes", {"taintNodes": 1, "normalNodes": 4, "measurePods": 4}, None, None, IT_LABELS),
        ("500Nodes", {"taintNodes": 100, "normalNodes": 400, "measurePods": 400}, None, None, ()),
        ("5000Nodes", {"taintNodes": 1000, "normalNodes": 4000, "measurePods": 4000}, 270, None,
         ("performance", "short")),
    ]),
    # volumes/performance-config.yaml
    **_case("SchedulingSecrets", _basic_tpl("pod-with-secret-volume.yaml"), [
        ("5Nodes", _p(5, 5, 10), None, None, IT_LABELS),
        ("500Nodes", _p(500, 500, 1000), None, None, ()),
        ("5000Nodes", _p(5000, 5000, 1000), None, None, ()),
        ("5000Nodes_10000Pods", _p(5000, 1000, 10000), 790, 2370, PERF_LABELS),
    ]),
    **_case("SchedulingInTreePVs", _pv_case("pv-aws.yaml"), [
        ("5Nodes", _p(5, 5, 10), None, None, IT_LABELS),
        ("500Nodes", _p(500, 500, 1000), None, None, ()),
        ("5000Nodes", _p(5000, 5000, 1000), None, None, PERF_LABELS),
        ("5000Nodes_2000Pods", _p(5000, 1000, 2000), 290, 870, PERF_LABELS),
    ]),
    **_case("SchedulingMigratedInTreePVs", _pv_case("pv-aws.yaml", migrated=("kubernetes.io/aws-ebs",)), [
        ("5Nodes", _p(5, 5, 10), None, None, IT_LABELS),
        ("500Nodes", _p(500, 500, 1000), None, None, ()),
        ("5000Nodes", _p(5000, 5000, 1000), None, None, PERF_LABELS),
        ("5000Nodes_5000Pods", _p(5000, 5000, 5000), 100, 300, PERF_LABELS),
    ]),
    **_case("SchedulingCSIPVs", _pv_case("pv-csi.yaml", migrated=()), [
        ("5Nodes", _p(5, 5, 10), None, None, IT_LABELS),
        ("500Nodes", _p(500, 500, 1000), None, None, ()),
        ("5000Nodes", _p(5000, 5000, 1000), None, None, PERF_LABELS),
        ("5000Nodes_5000Pods", _p(5000, 5000, 5000), 100, 300, PERF_LABELS),
    ]),
    **_case("PreemptionPVs", _preemption_pvs, [
        ("5Nodes", _p(5, 20, 5), None, None, IT_LABELS),
        ("1000Nodes", _p(1000, 4000, 1000), None, None, ("performance", "short")),
    ]),
}
"""Every reproduced workload by ``"Case/Workload"``."""
WORKLOADS.update(DRA_WORKLOADS)
WORKLOADS.update(DRA137_WORKLOADS)  # v1.37.2's dra/ topics, SchedulingWithResourceClaimTemplate among them
WORKLOADS.update(V137_WORKLOADS)
WORKLOADS.update(NDF_WORKLOADS)
WORKLOADS.update(EVENTS_WORKLOADS)


def _group_by_case(workloads: dict[str, Workload]) -> None:
    """Reorder ``workloads`` in place so that each test case's workloads are together (cases in the
    order they first appear, workloads in their order within it): ``--list`` reads case by case
    although a topic module may add a variant of another module's case (SchedulingBasic)."""
    first: dict[str, int] = {}
    for w in workloads.values():
        first.setdefault(w.case, len(first))
    items = sorted(workloads.items(), key=lambda kv: first[kv[1].case])
    workloads.clear()
    workloads.update(items)


_group_by_case(WORKLOADS)


_RUNS_IN_PROCESS = 0


def run_workload(name: str, *, seed: int = 0, progress: bool = False, isolate: bool | None = None,
                 features: FeatureGate | None = None) -> BenchResult:
    """Run the workload ``name`` (a key of :data:`WORKLOADS`) and return its figures.

    ``isolate``: run in a fresh ``python -m kubesched.sim.bench`` subprocess so that peak RSS is
    this workload's alone. None (default) isolates every workload but the first one run by
    this process.
    """
    global _RUNS_IN_PROCESS
    workload = WORKLOADS[name]
    if isolate is None:
        isolate = _RUNS_IN_PROCESS > 0
    if not isolate:
        _RUNS_IN_PROCESS += 1
        return execute(workload, seed=seed, progress=progress, features=features)
    cmd = [sys.executable, "-m", "kubesched.sim.bench", "--child", name, "--seed", str(seed)]
    if features is not None:
        cmd += _feature_args(features)
    if progress:
        cmd.append("--progress")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"workload {name} failed in its subprocess (exit code {proc.returncode})")
    res = BenchResult.from_dict(json.loads(proc.stdout.strip().splitlines()[-1]))
    res.isolated = True
    return res


def _feature_args(features: FeatureGate) -> list[str]:
    """``--emulated-version``/``--feature-gates`` flags that rebuild ``features`` in a child process."""
    v = features.emulated_version
    out = ["--emulated-version", f"{v[0]}.{v[1]}"]
    gates = features.explicitly_set()
    if gates:
        out += ["--feature-gates", ",".join(f"{k}={str(b).lower()}" for k, b in sorted(gates.items()))]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kubesched.sim.bench [--workload NAME|all ...] [--label L] [--json] [--list]``."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m kubesched.sim.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--workload", "-w", action="append", default=[],
                    help="Case/Workload, 'all', or a prefix ending in '/' (e.g. SchedulingBasic/). Repeatable.")
    ap.add_argument("--label", action="append", default=[],
                    help="select workloads carrying this upstream label (performance, integration-test, short)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="one JSON object per workload (DataItems + extras)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--no-isolate", action="store_true", help="run every workload in this process")
    ap.add_argument("--progress", action="store_true", help="force the progress display")
    ap.add_argument("--profile", metavar="FILE",
                    help="profile the measured loop of one workload (in this process): FILE.prof → cProfile "
                         "stats, FILE.html / FILE.txt → pyinstrument (pip install pyinstrument)")
    ap.add_argument("--emulated-version", default=None, help="decide as kube-scheduler of this release (1.34–1.37)")
    ap.add_argument("--feature-gates", action="append", default=[], help="Key=bool,... (repeatable)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    from kubesched.errors import ConfigError

    try:
        features = FeatureGate.from_flags(args.emulated_version, args.feature_gates)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.profile:
        if len(args.workload) != 1 or args.workload[0] not in WORKLOADS:
            print("error: --profile takes exactly one --workload Case/Workload", file=sys.stderr)
            return 2
        return _profile(args.workload[0], args.profile, args.seed, args.progress or sys.stderr.isatty())
    if args.child:
        res = execute(WORKLOADS[args.child], seed=args.seed, progress=args.progress, features=features)
        sys.stdout.write(json.dumps(res.to_dict()) + "\n")
        return 0
    if args.list:
        width = max(55, *(len(k) for k in WORKLOADS))
        for key, w in WORKLOADS.items():
            thr = upstream_threshold(w, features)
            floor = f"floor {thr:g}" if thr is not None else ""
            target = f"target {w.target:g}" if w.target is not None else ""
            print(f"{key:{width}s} {w.num_nodes:6d} nodes {w.num_init_pods:6d} init {w.num_measured_pods:6d} "
                  f"measured  {floor:11s} {target:11s} {','.join(w.labels)}")
        return 0
    names: list[str] = []
    for sel in args.workload or ([] if args.label else ["SchedulingBasic/5000Nodes_10000Pods"]):
        if sel == "all":
            found = list(WORKLOADS)
        elif sel.endswith("/"):
            found = [k for k in WORKLOADS if k.startswith(sel)]
        else:
            found = [sel] if sel in WORKLOADS else []
        if not found:
            print(f"error: unknown workload {sel!r}; see --list", file=sys.stderr)
            return 2
        names += [n for n in found if n not in names]
    for label in args.label:
        names += [k for k, w in WORKLOADS.items() if label in w.labels and k not in names]
    if args.label and args.workload:
        names = [n for n in names if all(lb in WORKLOADS[n].labels for lb in args.label)]
    progress = args.progress or sys.stderr.isatty()
    for n in names:
        res = run_workload(n, seed=args.seed, progress=progress,
                           isolate=False if args.no_isolate else (None if len(names) > 1 else False),
                           features=features)
        print(json.dumps(res.to_dict()) if args.json else res.summary(), flush=True)
    return 0


class _CProfile:
    def __init__(self) -> None:
        import cProfile

        self.p = cProfile.Profile()

    def start(self) -> None:
        self.p.enable()

    def stop(self) -> None:
        self.p.disable()


def _profile(name: str, out: str, seed: int, progress: bool) -> int:
    if out.endswith(".prof"):
        prof: Any = _CProfile()
    else:
        from pyinstrument import Profiler

        prof = Profiler(interval=0.001)
    res = execute(WORKLOADS[name], seed=seed, progress=progress, profiler=prof)
    print(res.summary() + "  [profiled: figures include profiler overhead]")
    if isinstance(prof, _CProfile):
        prof.p.dump_stats(out)
        import pstats

        pstats.Stats(out).sort_stats("cumulative").print_stats(40)
    else:
        with open(out, "w", encoding="utf-8") as f:
            f.write(prof.output_html() if out.endswith(".html") else prof.output_text(unicode=True, show_all=False))
        print(prof.output_text(unicode=True, show_all=False))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
