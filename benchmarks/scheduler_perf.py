#!/usr/bin/env python
"""Upstream scheduler_perf workloads through kubesched's engine; prints SchedulingThroughput.

    python benchmarks/scheduler_perf.py --list
    python benchmarks/scheduler_perf.py --workload SchedulingBasic/5000Nodes_10000Pods
    python benchmarks/scheduler_perf.py --workload all --json > results.jsonl
    python benchmarks/scheduler_perf.py --label performance          # the CI set
    python benchmarks/scheduler_perf.py --workload SchedulingBasic/   # every workload of a case

Thin wrapper over :func:`kubesched.sim.bench.main` (same code as ``kubesched bench``). With
more than one workload, each after the first runs in a fresh subprocess so that peak RSS is
per workload. See benchmarks/README.md for the method and the figures.
"""

import os
import sys

try:
    from kubesched.sim.bench import main
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    from kubesched.sim.bench import main

if __name__ == "__main__":
    sys.exit(main())
