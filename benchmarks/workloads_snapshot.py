"""Figures for the workload controllers in ``simulate`` and for ``kubesched snapshot``.

    PYTHONPATH=src python benchmarks/workloads_snapshot.py [--nodes 1000] [--deployments 200] \
        [--snapshot-nodes 500] [--snapshot-pods 5000]

1. ``simulate`` of N nodes, D Deployments x 10 replicas, 5 OrderedReady StatefulSets x 20 and
   one DaemonSet: wall time of the whole run (controller passes + scheduling).
2. A box API server (in-process thread, HTTPS on 127.0.0.1) holding M nodes and P pods
   (half bound): wall time of ``kubesched snapshot`` and of ``simulate -f`` on its folder.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kubesched.apiserver.launcher import run_server
from kubesched.cli.main import main
from kubesched.sim.manifests import parse_manifest_text
from kubesched.sim.simulate import simulate


def _node(i: int) -> dict[str, Any]:
    name = f"n{i:05d}"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": f"z{i % 3}"}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                       "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}


def _template(app: str, cpu: str = "100m") -> dict[str, Any]:
    return {"metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "i",
                                     "resources": {"requests": {"cpu": cpu, "memory": "100Mi"}}}]}}


def workloads(nodes: int, deployments: int) -> None:
    docs: list[dict[str, Any]] = [_node(i) for i in range(nodes)]
    for d in range(deployments):
        docs.append({"apiVersion": "apps/v1", "kind": "Deployment",
                     "metadata": {"name": f"d{d}", "namespace": f"ns{d % 20}"},
                     "spec": {"replicas": 10, "selector": {"matchLabels": {"app": f"d{d}"}},
                              "template": _template(f"d{d}")}})
    for s in range(5):
        docs.append({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": f"s{s}"},
                     "spec": {"replicas": 20, "serviceName": "s", "selector": {"matchLabels": {"app": f"s{s}"}},
                              "template": _template(f"s{s}")}})
    docs.append({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"},
                 "spec": {"selector": {"matchLabels": {"app": "ds"}}, "template": _template("ds", "50m")}})
    raws = parse_manifest_text(yaml.safe_dump_all(docs))
    t = time.perf_counter()
    r = simulate(raws)
    wall = time.perf_counter() - t
    print(f"simulate workloads: nodes={nodes} deployments={deployments} (x10) statefulsets=5 (x20, OrderedReady) "
          f"daemonset=1 -> pods={len(r.outcomes)} scheduled={sum(1 for o in r.outcomes if o.node)} "
          f"wall={wall:.2f}s")


def snapshot(nodes: int, pods: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, run_server(Path(tmp) / "kc") as srv:
        def load(s: Any) -> None:
            for i in range(nodes):
                s.create_manifest(_node(i))
            for i in range(pods):
                p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i:06d}", "namespace": "default"},
                     "spec": _template("x")["spec"]}
                if i % 2:
                    p["spec"]["nodeName"] = f"n{i % nodes:05d}"
                s.create_manifest(p)

        srv.call(load, timeout=600)
        out = Path(tmp) / "snap"
        t = time.perf_counter()
        r = CliRunner().invoke(main, ["snapshot", "--kubeconfig", str(srv.kubeconfig_path), "-o", str(out)])
        snap_wall = time.perf_counter() - t
        assert r.exit_code == 0, r.stderr
        size = sum(p.stat().st_size for p in out.iterdir())
        t = time.perf_counter()
        r = CliRunner().invoke(main, ["simulate", "-f", str(out), "-o", "json"])
        sim_wall = time.perf_counter() - t
        assert r.exit_code == 0, r.stderr
    print(f"snapshot: nodes={nodes} pods={pods} ({pods // 2} bound) -> {size / 1e6:.1f} MB JSON in "
          f"{snap_wall:.2f}s; simulate -f DIR -o json {sim_wall:.2f}s")


def cli() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--deployments", type=int, default=200)
    ap.add_argument("--snapshot-nodes", type=int, default=500)
    ap.add_argument("--snapshot-pods", type=int, default=5000)
    a = ap.parse_args()
    workloads(a.nodes, a.deployments)
    snapshot(a.snapshot_nodes, a.snapshot_pods)


if __name__ == "__main__":
    cli()
