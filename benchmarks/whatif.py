"""What-if commands at size: prints wall time and peak RSS; never a timed test.

    PYTHONPATH=src python benchmarks/whatif.py capacity --nodes 5000 --cpu 1      # replicas of a 1-cpu pod
    PYTHONPATH=src python benchmarks/whatif.py add-nodes --nodes 1000 --pending 3000
    PYTHONPATH=src python benchmarks/whatif.py compare --nodes 500 --pending 2000

The cluster: ``--nodes`` nodes of 4 cpu / 16Gi / 110 pods in 3 zones, half of them running one
1-cpu pod. ``add-nodes`` makes the cluster full first (every node runs a 4-cpu pod) so all
``--pending`` pods (250m–2 cpu) need new 8-cpu nodes.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from typing import Any

from kubesched.config import decode_config
from kubesched.sim.autoscale import add_nodes, load_node_template
from kubesched.sim.capacity import capacity, load_template_pod
from kubesched.sim.compare import compare
from kubesched.sim.manifests import RawObject
from kubesched.sim.simulate import simulate


def _node(i: int, cpu: str = "4") -> dict[str, Any]:
    name = f"node-{i}"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def _pod(name: str, cpu: str, node: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "x",
                                                  "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]}}
    if node:
        d["spec"]["nodeName"] = node
    return d


def _raws(docs: list[dict[str, Any]]) -> list[RawObject]:
    return [RawObject(d["kind"], d["apiVersion"], d, f"gen:{i}", i) for i, d in enumerate(docs)]


def _report(what: str, t0: float, extra: str) -> None:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{what}: {time.perf_counter() - t0:.2f} s wall, peak RSS {rss:.0f} MiB; {extra}")


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["capacity", "add-nodes", "compare"])
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--pending", type=int, default=1000)
    ap.add_argument("--cpu", default="1", help="capacity: the replica's cpu request")
    a = ap.parse_args(argv)
    if a.what == "capacity":
        docs = [_node(i) for i in range(a.nodes)] + [_pod(f"run-{i}", "1", f"node-{i}") for i in range(0, a.nodes, 2)]
        tpl = load_template_pod(_raws([_pod("web", a.cpu)]), "gen")
        t0 = time.perf_counter()
        res = capacity(_raws(docs), tpl)
        _report(f"capacity {a.nodes} nodes", t0, f"{res.replicas} replicas ({res.fail_type})")
    elif a.what == "add-nodes":
        sizes = ["250m", "500m", "1", "2"]
        docs = ([_node(i) for i in range(a.nodes)] + [_pod(f"run-{i}", "4", f"node-{i}") for i in range(a.nodes)]
                + [_pod(f"p-{i}", sizes[i % 4]) for i in range(a.pending)])
        tpl = load_node_template(_raws([_node(0, cpu="8") | {"metadata": {"name": "big"}}]), "gen")
        t0 = time.perf_counter()
        result = simulate(_raws(docs))
        t1 = time.perf_counter()
        est = add_nodes(result, tpl)
        _report(f"simulate + add-nodes {a.nodes} nodes, {a.pending} pending", t0,
                f"simulate {t1 - t0:.2f} s; {len(est.nodes)} nodes for {len(est.placements)} pods, "
                f"{len(est.unplaced)} unplaced")
    else:
        docs = ([_node(i) for i in range(a.nodes)] + [_pod(f"run-{i}", "1", f"node-{i}") for i in range(0, a.nodes, 2)]
                + [_pod(f"p-{i}", ["250m", "500m", "1"][i % 3]) for i in range(a.pending)])

        def cfg(t: str) -> Any:
            return decode_config("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                                 "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                                 f"      scoringStrategy: {{type: {t}}}\n")

        t0 = time.perf_counter()
        res = compare(_raws(docs), cfg("LeastAllocated"), cfg("MostAllocated"))
        _report(f"compare {a.nodes} nodes, {a.pending} pending", t0,
                f"{len(res.differences)} placed differently; nodes in use {res.a.nodes_used} vs {res.b.nodes_used}")


if __name__ == "__main__":
    main(sys.argv[1:])
