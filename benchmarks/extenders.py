"""Scheduler-extender overhead: pods/s through the engine with an HTTP extender on 127.0.0.1.

Schedules ``--pods`` pods on ``--nodes`` nodes (the simulate path: ClusterStore + Scheduler)
with no extender, then with a filter+prioritize extender (``kubesched.testing.extender_server``)
sending whole nodes, then node names only (``nodeCacheCapable``). Prints pods/s and the mean
time per pod; the extender's own work is trivial, so the difference is the protocol cost
(JSON encoding of the pod and nodes, two HTTP round trips on a kept-alive connection). The
extender server (aiohttp, stdlib JSON) runs in a separate process, as a real extender would.

    .venv/bin/python benchmarks/extenders.py --nodes 500 --pods 300
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
from typing import Any

from kubesched.config import decode_config
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore
from kubesched.testing.extender_server import ExtenderServer
from kubesched.testing.wrappers import MakeNode, MakePod


def run(nodes: int, pods: int, extenders: list[dict[str, Any]]) -> float:
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "extenders": extenders})
    store = ClusterStore()
    sched = Scheduler(cfg, client=store, lister=store, seed=1)
    store.scheduler = sched
    for i in range(nodes):
        store.add("Node", MakeNode().name(f"n{i:05d}").label("topology.kubernetes.io/zone", f"z{i % 3}")
                  .capacity(cpu="32", memory="128Gi", pods="110").obj())
    for i in range(pods):
        store.add("Pod", MakePod().name(f"p{i:05d}").namespace("default").uid(f"u{i}").req(cpu="100m").obj())
    t0 = time.perf_counter()
    n = sched.run_until_idle(after_each=store.flush)
    dt = time.perf_counter() - t0
    assert n == pods and sched.stats.bound == pods, (n, sched.stats.bound)
    sched.close()
    return dt


def _prefer_first(pod: Any, names: list[str]) -> dict[str, int]:
    return {names[0]: 10} if names else {}


def _serve(urls: Any, stop: Any) -> None:
    with ExtenderServer(prioritize=_prefer_first) as srv:
        urls.put(srv.url)
        stop.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods", type=int, default=300)
    a = ap.parse_args()
    urls: Any = mp.Queue()
    stop = mp.Event()
    server = mp.Process(target=_serve, args=(urls, stop), daemon=True)
    server.start()
    try:
        url = urls.get(timeout=30)
        cases = [("no extender", []),
                 ("filter+prioritize, whole nodes", [{"urlPrefix": url, "filterVerb": "filter",
                                                       "prioritizeVerb": "prioritize", "weight": 1}]),
                 ("filter+prioritize, nodeCacheCapable", [{"urlPrefix": url, "filterVerb": "filter",
                                                           "prioritizeVerb": "prioritize", "weight": 1,
                                                           "nodeCacheCapable": True}])]
        print(f"{a.pods} pods on {a.nodes} nodes (numFeasibleNodesToFind nodes sent per pod)")
        for label, exts in cases:
            dt = run(a.nodes, a.pods, exts)
            print(f"  {label:40s} {a.pods / dt:8.1f} pods/s   {1000 * dt / a.pods:7.2f} ms/pod")
    finally:
        stop.set()
        server.join(10)


if __name__ == "__main__":
    main()
