"""What explaining costs: ``simulate -o table`` against ``-o wide``, ``--report`` and ``--explain``
on one synthetic cluster (N nodes in 3 zones, P pending pods of mixed sizes, JSON input).

Prints wall seconds, CPU seconds (user + system) and peak RSS (MiB) of each run (one process each,
``/usr/bin/time``-free: ``resource.getrusage`` of the child), the load average beside each, and the
report's size. ``--explain (N pods)`` asks for every P/N-th pod (``--explain-pods``, output piped as
in a script). Figures, not assertions::

    PYTHONPATH=src python benchmarks/explain_report.py --nodes 1000 --pods 3000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time


def cluster(nodes: int, pods: int, seed: int = 1) -> dict:
    rnd = random.Random(seed)
    items: list[dict] = []
    for i in range(nodes):
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": f"node-{i}", "labels": {"topology.kubernetes.io/zone": f"z{i % 3}",
                                                                   "kubernetes.io/hostname": f"node-{i}"}},
                      "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}})
    for j in range(pods):
        req = {"cpu": rnd.choice(["100m", "500m", "1", "2"]), "memory": rnd.choice(["256Mi", "1Gi", "4Gi"])}
        items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{j}", "namespace": "default"},
                      "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                                "resources": {"requests": req}}]}})
    return {"apiVersion": "v1", "kind": "List", "items": items}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=3000)
    ap.add_argument("--explain-pods", type=int, default=300, help="pods of the many-pod --explain run (0: none)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "c.json")
        with open(src, "w") as f:
            json.dump(cluster(args.nodes, args.pods), f)
        report = os.path.join(d, "r.html")
        runs = {"-o table": ["-o", "table"], "-o wide": ["-o", "wide"],
                "--report": ["-o", "table", "--report", report],
                "--explain (1 pod)": ["-o", "table", "--explain", f"p-{args.pods - 1}"]}
        if args.explain_pods:
            step = max(1, args.pods // args.explain_pods)
            many = [a for j in range(0, args.pods, step)[:args.explain_pods] for a in ("--explain", f"p-{j}")]
            runs[f"--explain ({len(many) // 2} pods)"] = ["-o", "table", *many]
        print(f"{args.nodes} nodes, {args.pods} pending pods; load average {os.getloadavg()[0]:.1f}")
        base_cpu = None
        for label, extra in runs.items():
            t0 = time.perf_counter()
            ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-m", "kubesched.cli.main", "simulate", "-f", src, *extra],
                           check=True, stdout=subprocess.DEVNULL)
            wall = time.perf_counter() - t0
            ru = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (ru.ru_utime - ru0.ru_utime) + (ru.ru_stime - ru0.ru_stime)
            base_cpu = base_cpu or cpu
            peak = f"{ru.ru_maxrss / 1024:.0f} MiB" if ru.ru_maxrss > ru0.ru_maxrss else "≤ previous"
            print(f"  {label:20s} {wall:7.2f} s wall  {cpu:7.2f} CPU s  ({cpu / base_cpu:.2f}× -o table)"
                  f"   peak RSS {peak}   load {os.getloadavg()[0]:.1f}", flush=True)
        print(f"  report size        {os.path.getsize(report) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
