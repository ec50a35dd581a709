"""Micro benchmark: PreFilter + Filter + PreScore + Score(+Normalize) of InterPodAffinity for one
pod against 5,000 nodes holding 5,000 existing pods, with upstream scheduler_perf's pod templates
(templates/pod-with-pod-anti-affinity.yaml, pod-with-pod-affinity.yaml,
pod-with-preferred-pod-affinity.yaml, pod-with-preferred-pod-anti-affinity.yaml). Prints µs per
pod; not a test.

    .venv/bin/python benchmarks/interpodaffinity_micro.py [--nodes 5000] [--pods 5000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import NodeTable
from kubesched.plugins import interpodaffinity as ipa
from kubesched.testing.wrappers import MakeNode, MakePod

NS = ["sched-1", "sched-0"]


def template(kind: str, color: str, tk: str, preferred: bool, name: str, ns: str = "sched-0"):
    term = {"labelSelector": {"matchLabels": {"color": color}}, "topologyKey": tk, "namespaces": NS}
    return (MakePod().name(name).namespace(ns).label("color", color).req(cpu="100m", memory="500Mi")
            .pod_affinity(kind, term, weight=1 if preferred else None).obj())


WORKLOADS = {
    # name: (kind, color, topologyKey, preferred, all nodes in one zone?)
    "SchedulingPodAntiAffinity": ("podAntiAffinity", "green", "kubernetes.io/hostname", False, False),
    "SchedulingPodAffinity": ("podAffinity", "blue", "topology.kubernetes.io/zone", False, True),
    "SchedulingPreferredPodAffinity": ("podAffinity", "red", "kubernetes.io/hostname", True, False),
    "SchedulingPreferredPodAntiAffinity": ("podAntiAffinity", "yellow", "kubernetes.io/hostname", True, False),
}


def run(name: str, n_nodes: int, n_pods: int, reps: int) -> None:
    kind, color, tk, preferred, one_zone = WORKLOADS[name]
    table = NodeTable(n_nodes)
    for i in range(n_nodes):
        node = MakeNode().name(f"node-{i}").capacity(cpu="4", memory="32Gi", pods="110")
        if one_zone:
            node = node.label("topology.kubernetes.io/zone", "zone1")
        table.set_node(node.obj())
    plugin = ipa.new(None, Handle(nodes=table))
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for j in range(n_pods):
        p = template(kind, color, tk, preferred, f"init-{j}")
        table.add_pod(PodInfo(p), int(rng.integers(n_nodes)) if kind != "podAntiAffinity" or preferred
                      else j % n_nodes)
    t_init = time.perf_counter() - t0
    rows = table.order()
    times = {"pre_filter": 0.0, "filter": 0.0, "pre_score": 0.0, "score": 0.0}
    for r in range(reps):
        pod = template(kind, color, tk, preferred, f"m-{r}", ns="sched-1")
        state = CycleState(PodInfo(pod))
        a = time.perf_counter()
        _, st = plugin.pre_filter(state, pod, table)
        b = time.perf_counter()
        feasible = rows
        if st is None:
            res = plugin.filter_nodes(state, pod, table, rows)
            if res is not None:
                feasible = rows[res.failed == 0]
        c = time.perf_counter()
        st2 = plugin.pre_score(state, pod, table, feasible)
        d = time.perf_counter()
        if st2 is None:
            sc = plugin.score_nodes(state, pod, table, feasible)
            plugin.normalize_score(state, pod, sc)
        e = time.perf_counter()
        times["pre_filter"] += b - a
        times["filter"] += c - b
        times["pre_score"] += d - c
        times["score"] += e - d
    total = sum(times.values()) / reps * 1e6
    parts = "  ".join(f"{k} {v / reps * 1e6:7.1f}" for k, v in times.items())
    print(f"{name:36s} {n_nodes} nodes / {n_pods} pods: {total:8.1f} µs/pod  ({parts})  "
          f"[index build {t_init / n_pods * 1e6:.1f} µs/pod-add]")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--reps", type=int, default=200)
    a = ap.parse_args()
    for name in WORKLOADS:
        run(name, a.nodes, a.pods, a.reps)


if __name__ == "__main__":
    main()
