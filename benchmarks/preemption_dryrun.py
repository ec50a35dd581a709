#!/usr/bin/env python
"""CPU per preemptor in the engine: scheduler_perf's PreemptionBasic shape in process (issue 18 §1).

    PYTHONPATH=src python benchmarks/preemption_dryrun.py --nodes 1000 --preemptors 300
    PYTHONPATH=/path/to/other/checkout/src python benchmarks/preemption_dryrun.py ...   # before/after

``--nodes`` nodes from ``node-default.yaml`` (4 cpu), four low-priority pods of 900m on each
(``pod-low-priority.yaml``), then ``--preemptors`` high-priority pods of 3 cpu
(``pod-high-priority.yaml``): each one's first cycle fails, DefaultPreemption dry-runs the
candidates (``max(10 % of the nodes, 100)``), evicts three victims on the chosen node and the
pod binds there on its next attempt. Runs :func:`kubesched.sim.bench.execute` (the simulated
store, no API server) and prints the process's CPU seconds (user + system) and wall time for the
whole workload, with the load average; ``--profile FILE`` writes cProfile stats. Nothing is
asserted.

``--shape e2e`` is ``e2e_upstream.py --shape preemption`` in process instead: 1-cpu nodes each
holding one 900m low-priority pod, preemptors of 1 cpu (priority 10), one victim each.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from kubesched.sim import bench
from kubesched.sim.bench_runner import TEMPLATES, register_templates

_E2E = {  # e2e_upstream.py's preemption shape as scheduler_perf templates
    "e2e-preemption/node.yaml": TEMPLATES["node-default.yaml"].replace('cpu: "4"', 'cpu: "1"'),
    "e2e-preemption/pod-low.yaml": TEMPLATES["pod-low-priority.yaml"],
    "e2e-preemption/pod-high.yaml": TEMPLATES["pod-high-priority.yaml"].replace("cpu: 3000m", "cpu: 1000m"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--preemptors", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shape", choices=("basic", "e2e"), default="basic",
                    help="basic: PreemptionBasic (4 victims a node); e2e: e2e_upstream.py's shape (1 a node)")
    ap.add_argument("--profile", metavar="FILE", help="cProfile stats of the scheduling loop to FILE")
    args = ap.parse_args()
    if args.shape == "e2e":
        register_templates(_E2E)
        w = bench.Workload("PreemptionE2E", f"{args.nodes}Nodes_{args.preemptors}Preemptors", (
            bench.CreateNodes(args.nodes, "e2e-preemption/node.yaml"),
            bench.CreatePods(args.nodes, "e2e-preemption/pod-low.yaml"),
            bench.CreatePods(args.preemptors, "e2e-preemption/pod-high.yaml", collect_metrics=True)))
    else:
        w = bench.Workload("PreemptionBasic", f"{args.nodes}Nodes_{args.preemptors}Preemptors", (
            bench.CreateNodes(args.nodes), bench.CreatePods(4 * args.nodes, "pod-low-priority.yaml"),
            bench.CreatePods(args.preemptors, "pod-high-priority.yaml", collect_metrics=True)))
    prof = bench._CProfile() if args.profile else None
    load0 = os.getloadavg()[0]
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    res = bench.execute(w, seed=args.seed, profiler=prof)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    print(res.summary())
    print(f"{args.nodes} nodes, {args.preemptors} preemptors: {cpu:.2f} CPU-s ({1000 * cpu / args.preemptors:.1f} ms "
          f"per preemptor, set-up included), {wall:.1f} s wall; load average {load0:.1f} → {os.getloadavg()[0]:.1f}")
    if prof is not None:
        prof.p.dump_stats(args.profile)


if __name__ == "__main__":
    main()
