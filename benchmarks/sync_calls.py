"""The informer's initial LIST of nodes as ``kubesched run`` delivers it, in process (no API server;
issue 18 §1, the start-up share of the gang row): ``--nodes`` nodes as ``e2e_upstream.py`` makes
them (4 cpu, 32Gi, 110 pods, Ready, ``kubernetes.io/hostname`` + a zone label), decoded once
by the Node reflector's list decoder, then handed to ``Reflector.replace`` of a fresh Node
informer whose handler is the runner's (``EventHandlers.node_handler`` → ``Scheduler``). Prints the
Python calls per node (cProfile, load-independent) and the CPU-s of the delivery (min of
``--rounds``, load-dependent). Not a test.

    PYTHONPATH=src python benchmarks/sync_calls.py [--nodes 5000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import time
from typing import Any

from kubesched.kube.adapter import EventHandlers
from kubesched.kube.informer import RESOURCES, Informer
from kubesched.scheduler import Scheduler


def node(name: str, zone: str) -> dict[str, Any]:
    cap = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "resourceVersion": "1",
                         "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
            "spec": {}, "status": {"capacity": cap, "allocatable": dict(cap),
                                   "conditions": [{"status": "True", "type": "Ready"}], "phase": "Running"}}


def fresh(payload: bytes) -> tuple[Informer, Scheduler, list[Any]]:
    sched = Scheduler()
    inf = Informer(None, RESOURCES["Node"])  # type: ignore[arg-type]  # no list or watch is made
    inf.add_event_handler(EventHandlers(sched).node_handler())
    items = inf.reflector._decode_list(payload).items
    return inf, sched, items


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    payload = json.dumps({"apiVersion": "v1", "kind": "NodeList", "metadata": {"resourceVersion": "7"},
                          "items": [node(f"node-{i:05d}", f"zone{i % 3}") for i in range(a.nodes)]}).encode()
    inf, sched, items = fresh(payload)
    prof = cProfile.Profile()
    prof.enable()
    inf.reflector.replace(items, "7")
    prof.disable()
    calls = pstats.Stats(prof).total_calls
    assert len(sched.cache.table.row_of) == a.nodes
    cpu = []
    for _ in range(a.rounds):
        inf, sched, items = fresh(payload)
        t = time.process_time()
        inf.reflector.replace(items, "7")
        cpu.append(time.process_time() - t)
    print(f"{a.nodes} nodes: Python calls per node {calls / a.nodes:.1f}; delivery CPU-s min {min(cpu):.4f} "
          f"of {a.rounds} (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
