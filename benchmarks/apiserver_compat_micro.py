"""Micro benchmark of the box's compatibility modules on the write path: admission of a pod
create (decode check, defaulting, Priority, validation), the scheduler's status strategic-merge
patch, unknown-field detection, a 1,000-pod Table, and building the OpenAPI documents. Prints µs
per call; not a test.

    PYTHONPATH=src /work/venv/bin/python benchmarks/apiserver_compat_micro.py [--n 5000]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from kubesched.api import schemas
from kubesched.apiserver import openapi
from kubesched.apiserver.admission import admit
from kubesched.apiserver.fieldvalidation import unknown_fields
from kubesched.apiserver.patch import STRATEGIC_MERGE_PATCH, apply_patch
from kubesched.apiserver.tables import to_table

POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web", "tier": "fe"}},
    "spec": {
        "containers": [{"name": "c", "image": "nginx:1.27", "ports": [{"containerPort": 80}],
                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}}}],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "podAffinityTerm": {"topologyKey": "topology.kubernetes.io/zone",
                                               "labelSelector": {"matchLabels": {"app": "web"}}}}]}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                       "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "web"}}}],
    },
}
STATUS_PATCH = orjson.dumps({"status": {
    "$setElementOrder/conditions": [{"type": "PodScheduled"}],
    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                    "message": "0/5000 nodes are available: 5000 Insufficient cpu."}],
}})


def per_call(fn: Callable[[int], object], n: int) -> float:
    fn(0)
    t = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - t) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    n = ap.parse_args().n

    t = time.perf_counter()
    schemas.definitions()
    print(f"load v1.34 definitions (first use): {(time.perf_counter() - t) * 1e3:.0f} ms")

    def create(i: int) -> object:
        POD["metadata"]["name"] = f"p{i}"
        return admit("pods", POD, None, operation="CREATE", lookup=lambda r, ns, name: None, list_objects=lambda r: [])

    print(f"admit pod CREATE: {per_call(create, n):.0f} us")
    stored = create(0)
    print(f"unknown_fields(pod): {per_call(lambda i: unknown_fields(('', 'v1', 'Pod'), stored), n):.0f} us")
    print(f"status SMP patch: {per_call(lambda i: apply_patch(STRATEGIC_MERGE_PATCH, stored, STATUS_PATCH, gvk=('', 'v1', 'Pod')), n):.0f} us")
    items = [stored] * 1000
    now = datetime.now(UTC)
    print(f"Table of 1,000 pods: {per_call(lambda i: to_table('pods', items, now=now), 20) / 1e3:.1f} ms")
    t = time.perf_counter()
    body = openapi.v3_group_version("", "v1")
    print(f"OpenAPI v3 api/v1 (first build): {(time.perf_counter() - t) * 1e3:.0f} ms, {len(body or b'') / 1e3:.0f} kB")
    t = time.perf_counter()
    doc = openapi.v2_document()
    print(f"OpenAPI v2 (first build): {(time.perf_counter() - t) * 1e3:.0f} ms, {len(doc) / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
