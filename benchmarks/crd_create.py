"""CPU per create of a custom resource (kube-prometheus' ServiceMonitor, pruned, defaulted and
validated against its CRD's schema: kubesched.apiserver.crd) versus a ConfigMap, through
``APIServer.create_manifest`` in-process (no HTTP).

    PYTHONPATH=src python benchmarks/crd_create.py --n 2000

Prints µs of CPU (user+sys, getrusage) and wall time per create, and the load average.
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import time
from pathlib import Path
from typing import Any

from kubesched.apiserver.launcher import run_server
from kubesched.sim.manifests import load_manifests

ROOT = Path(__file__).resolve().parents[1]
KP = ROOT / "tests" / "data" / "public" / "kube-prometheus"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="objects created per kind")
    n = ap.parse_args().n
    crd = load_manifests([str(KP / "setup-0servicemonitorCustomResourceDefinition.yaml")])[0].data
    sm = load_manifests([str(KP / "prometheusOperator-serviceMonitor.yaml")])[0].data
    kinds: list[tuple[str, Any]] = [
        ("ServiceMonitor (custom resource)",
         lambda i: {**copy.deepcopy(sm), "metadata": {"name": f"sm-{i}", "namespace": "monitoring"}}),
        ("ConfigMap", lambda i: {"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": f"cm-{i}", "namespace": "monitoring"}, "data": {"a": "b"}}),
    ]
    with run_server(None) as srv:
        srv.call(lambda s: s.create_manifest(copy.deepcopy(crd)))
        srv.call(lambda s: s.create_manifest({"apiVersion": "v1", "kind": "Namespace",
                                              "metadata": {"name": "monitoring"}}))
        for label, make in kinds:
            objs = [make(i) for i in range(n)]

            def run(s: Any, objs: list[dict[str, Any]] = objs) -> None:
                for o in objs:
                    s.create_manifest(o)

            c0, w0 = _cpu(), time.perf_counter()
            srv.call(run)
            c1, w1 = _cpu(), time.perf_counter()
            print(f"{label}: {n} creates, {1e6 * (c1 - c0) / n:.0f} µs CPU/create, "
                  f"{1e6 * (w1 - w0) / n:.0f} µs wall/create")
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
