"""``kubesched sweep``: one process vs Ray, and what Ray adds per run.

    python benchmarks/sweep.py example  [--spec examples/sweep/spec.yaml] [--workers 2]
    python benchmarks/sweep.py overhead [--runs 60]
    python benchmarks/sweep.py overhead --runs 2 --no-ray   # the smoke test (tests/sweep)

``example``: the spec's whole sweep twice, each into a fresh output folder — ``--serial`` (every
run in this process, one after the other) and on a Ray cluster on loopback with ``--workers``
CPUs (one head node, :class:`kubesched.testing.raycluster.LocalRayCluster`; the cluster's
start is not timed). Prints wall seconds, this process's CPU seconds (user+sys), the runs' own
CPU seconds (``run_cpu_s`` summed: the scheduling work), and the load average.

``overhead``: ``--runs`` runs of a tiny input (one node, one pod: a run is ~all overhead), serial
and on a 1-CPU Ray node (one run at a time, as serial), twice: the first time the worker process
starts (a cold worker imports kubesched), the second is measured: (Ray wall − serial wall) ÷ runs is
what Ray adds to a run (task submission, the input fetched from the object store and decoded, the
result back, the driver's ``ray.wait`` loop).

Figures: benchmarks/README.md, "kubesched sweep".
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from kubesched.sweep.execute import run_plan  # noqa: E402
from kubesched.sweep.spec import load_spec  # noqa: E402
from kubesched.testing.raycluster import LocalRayCluster  # noqa: E402

TINY = """\
apiVersion: v1
kind: Node
metadata: {name: n0, labels: {kubernetes.io/hostname: n0}}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p0, namespace: default}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
"""


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _measure(label: str, spec: str, **kw: object) -> float:
    plan = load_spec(spec)
    out = tempfile.mkdtemp(prefix="sweep-bench-")
    c0, t0 = _cpu(), time.perf_counter()
    res = run_plan(plan, out, **kw)  # type: ignore[arg-type]
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    runs_cpu = sum(r["metrics"]["run_cpu_s"] for r in res.results.values() if r.get("status") == "ok")
    print(f"{label:<22} {len(plan.runs):>4} runs  wall {wall:7.1f}s  driver cpu {cpu:6.1f}s  "
          f"runs' cpu {runs_cpu:6.1f}s  failed {len(res.failed)}  load {os.getloadavg()[0]:.1f}", flush=True)
    return wall


def _cluster(cpus: int) -> LocalRayCluster:
    c = LocalRayCluster(str(ROOT / "src"))
    c.start_head(num_cpus=cpus)
    c.wait(1)
    return c


def example(spec: str, workers: int) -> None:
    print(f"# {spec}; load average before: {os.getloadavg()}")
    serial = _measure("serial (1 process)", spec, serial=True)
    c = _cluster(workers)
    try:
        ray = _measure(f"ray ({workers} workers)", spec, address=c.address)
    finally:
        c.stop()
    print(f"speed-up {serial / ray:.2f}x")


def overhead(runs: int, use_ray: bool = True) -> None:
    d = Path(tempfile.mkdtemp(prefix="sweep-overhead-"))
    (d / "tiny.yaml").write_text(TINY)
    (d / "spec.yaml").write_text(textwrap.dedent(f"""\
        apiVersion: kubesched.io/v1alpha1
        kind: Sweep
        name: overhead
        inputs: [{{name: tiny, files: [tiny.yaml]}}]
        seeds: {list(range(runs))}
        metrics: [scheduled]
        """))
    spec = str(d / "spec.yaml")
    serial = _measure("serial (1 process)", spec, serial=True)
    if not use_ray:
        return
    c = _cluster(1)
    try:
        _measure("ray, cold worker", spec, address=c.address)  # the worker process starts, imports kubesched
        ray = _measure("ray (1 worker)", spec, address=c.address)
    finally:
        c.stop()
    print(f"Ray adds {(ray - serial) / runs * 1000:.1f} ms per run ({runs} runs)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    e = sub.add_parser("example")
    e.add_argument("--spec", default=str(ROOT / "examples" / "sweep" / "spec.yaml"))
    e.add_argument("--workers", type=int, default=2)
    o = sub.add_parser("overhead")
    o.add_argument("--runs", type=int, default=60)
    o.add_argument("--no-ray", action="store_true", help="the serial half only")
    a = ap.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # the loopback cluster's driver
    if a.what == "example":
        example(a.spec, a.workers)
    else:
        overhead(a.runs, use_ray=not a.no_ray)


if __name__ == "__main__":
    main()
