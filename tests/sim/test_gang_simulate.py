"""A gang end to end in the simulator's store (GenericWorkload on): ``data/gang/`` holds a PodGroup
(as the API serves it, minCount 4) and 4 pods of 3 CPU, on 4 nodes of 4 CPU (``fits.yaml``) or 3
(``three-fit.yaml``). Upstream v1.37.2 (schedule_one_podgroup.go, gangscheduling.go): all or
nothing — 3 of 4 fitting binds none, the PodGroup's ``PodGroupInitiallyScheduled`` condition is
False/Unschedulable and the members' FailedScheduling messages are the group's ("pod group is
unschedulable, …") and the unfitting member's own FitError.

The store is built here from the YAML (PodGroups through ``put_object``, delivered to the
scheduler like a watch event), independent of ``simulate``'s manifest loading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kubesched.api import objects as o
from kubesched.features import FeatureGate
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore

DATA = Path(__file__).parent / "data" / "gang"


def _run(name: str) -> tuple[Scheduler, ClusterStore, list[Any]]:
    docs = [d for d in yaml.safe_load_all((DATA / name).read_text()) if d]
    store = ClusterStore()
    sched = Scheduler(client=store, lister=store, seed=1, features=FeatureGate(overrides={"GenericWorkload": True}))
    store.scheduler = sched
    attempts: list[Any] = []
    sched.on_attempt = attempts.append
    for d in docs:
        if d["kind"] == "Node":
            store.add("Node", o.decode(o.Node, d), d)
    for d in docs:
        if d["kind"] == "PodGroup":
            store.put_object("PodGroup", d)
    store.flush()
    for d in docs:
        if d["kind"] == "Pod":
            store.add("Pod", o.decode(o.Pod, d), d)
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    return sched, store, attempts


def _condition(store: ClusterStore) -> dict[str, Any]:
    pg = store.objects["PodGroup"][("default", "trainer")]
    return next(c for c in pg["status"]["conditions"] if c["type"] == "PodGroupInitiallyScheduled")


def _failed_scheduling(store: ClusterStore, pod: str) -> list[str]:
    return [msg for _t, reason, key, msg in store.events if reason == "FailedScheduling" and key.endswith(pod)]


def test_gang_all_fit_all_bound() -> None:
    sched, store, attempts = _run("fits.yaml")
    nodes = sorted(store.pods[f"default/trainer-{i}"].spec.node_name for i in range(4))
    assert nodes == ["node-0", "node-1", "node-2", "node-3"]
    assert sorted(a.result for a in attempts) == ["scheduled"] * 4
    c = _condition(store)
    assert (c["status"], c["reason"], c["observedGeneration"]) == ("True", "Scheduled", 1)
    assert store.event_counts["Scheduled"] == 4 and store.event_counts["FailedScheduling"] == 0
    # the PodGroup's status write is a new version the scheduler observed
    assert store.objects["PodGroup"][("default", "trainer")]["metadata"]["resourceVersion"] != "100"
    assert sched.pod_group_manager.pod_group("default", "trainer")["status"]["conditions"][0]["status"] == "True"


def test_gang_three_of_four_fit_none_bound() -> None:
    sched, store, attempts = _run("three-fit.yaml")
    assert all(not store.pods[f"default/trainer-{i}"].spec.node_name for i in range(4))
    assert store.bind_count == 0 and sched.cache.assumed_count() == 0
    assert sorted(a.result for a in attempts) == ["unschedulable"] * 4
    group = "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"
    c = _condition(store)
    assert (c["status"], c["reason"], c["observedGeneration"]) == ("False", "Unschedulable", 1)
    assert c["message"].startswith(group)
    for i in range(3):  # placed in the simulation, rejected with the group
        (msg,) = _failed_scheduling(store, f"trainer-{i}")
        assert msg.startswith(f"pod group is unschedulable, {group}")
    assert _failed_scheduling(store, "trainer-3") == ["0/3 nodes are available: 3 Insufficient cpu."]
    assert sched.pod_group_attempts == {"unschedulable": 1}
