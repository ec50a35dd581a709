"""The DRA scheduler_perf workloads (``kubesched.sim.bench_dra``): small variants end to end —
every pod gets its own device, steady state frees devices as pods go, init claims are allocated."""

from __future__ import annotations

import dataclasses

from kubesched.sim.bench import WORKLOADS, execute
from kubesched.sim.bench_dra import _SETUPS, DRASetup


def _devices(store):
    out = []
    for c in store.list("ResourceClaim"):
        alloc = (c.get("status") or {}).get("allocation")
        if alloc:
            out += [(r["driver"], r["pool"], r["device"]) for r in alloc["devices"]["results"]]
    return out


def test_template_workload_fast():
    seen = {}

    def inspect(store, sched):
        seen["devices"] = _devices(store)
        seen["claims"] = len(store.list("ResourceClaim", "test"))

    res = execute(WORKLOADS["SchedulingWithResourceClaimTemplate/fast"], seed=1, inspect=inspect)
    assert res.scheduled == 10 and res.unschedulable_pods == 0 and res.attempts["error"] == 0
    assert seen["claims"] == 10 and len(seen["devices"]) == len(set(seen["devices"])) == 10


def test_steady_state_fast_frees_devices():
    seen = {}

    def inspect(store, sched):
        seen["devices"] = _devices(store)
        seen["in_use"] = set(sched.dra_manager.in_use)

    w = dataclasses.replace(WORKLOADS["SteadyStateClusterResourceClaimTemplate/fast"], name="fast-short")
    # bounded by a pod count, not by time: 25 pods through one node with 10 devices
    _SETUPS[w.key] = dataclasses.replace(_SETUPS["SteadyStateClusterResourceClaimTemplate/fast"], steady_s=120.0,
                                         steady_pods=25)
    res = execute(w, seed=1, inspect=inspect)
    # more than 10 pods went through, so devices were freed and reused
    assert res.scheduled == 25 and res.attempts["error"] == 0
    assert len(seen["devices"]) == len(set(seen["devices"])) <= 10
    assert seen["in_use"] == set(seen["devices"])


def test_init_claims_are_allocated():
    seen = {}

    def inspect(store, sched):
        seen["init"] = [c for c in store.list("ResourceClaim", "init")]

    w = dataclasses.replace(WORKLOADS["SteadyStateClusterResourceClaimTemplate/fast"], name="full-small")
    _SETUPS[w.key] = DRASetup(nodes_with_dra=2, nodes_without_dra=0, max_claims_per_node=10, init_claims=19,
                              steady_s=120.0, steady_pods=5)
    res = execute(w, seed=1, inspect=inspect)
    assert len(seen["init"]) == 19 and all(c["status"]["allocation"] for c in seen["init"])
    # one device is left: the 10 pods take it in turn (each freed when its pod is deleted)
    assert res.attempts["error"] == 0 and res.scheduled == 5
