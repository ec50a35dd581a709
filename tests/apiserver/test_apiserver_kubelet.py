"""Simulated kubelets: nodes Ready, bound pods Running, annotated pods complete, deletions finish."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver_helpers import Client, node, pod

from kubesched.apiserver.kubelet import (
    COMPLETE_AFTER_ANNOTATION,
    COMPLETE_PHASE_ANNOTATION,
)
from kubesched.apiserver.launcher import ServerHandle, run_server

PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
def ksrv(tmp_path: Path) -> Iterator[ServerHandle]:
    with run_server(tmp_path / "kc", simulate_kubelets=True) as s:
        yield s


def _until(client: Client, path: str, pred: Any, timeout: float = 60) -> dict[str, Any]:
    """Poll until ``pred`` holds; ``timeout`` is a generous bound for a loaded machine."""
    deadline = time.monotonic() + timeout
    while True:
        code, obj = client.req("GET", path)
        if code == 200 and pred(obj):
            return obj
        assert time.monotonic() < deadline, f"timed out on {path}: {obj}"
        time.sleep(0.05)


def _bind(c: Client, name: str, node_name: str) -> None:
    code, body = c.req("POST", f"{PODS}/{name}/binding", {"metadata": {"name": name}, "target": {"name": node_name}})
    assert code == 201, body


def test_nodes_become_ready_with_addresses_and_a_lease(ksrv: ServerHandle) -> None:
    c = Client.of(ksrv)
    c.create("/api/v1/nodes", node("n1"))
    n = _until(c, "/api/v1/nodes/n1", lambda o: any(
        x["type"] == "Ready" and x["status"] == "True" for x in o["status"].get("conditions", [])))
    assert n["status"]["addresses"][0]["type"] == "InternalIP"
    assert n["status"]["nodeInfo"]["kubeletVersion"] == "v1.34.0"
    assert n["status"]["allocatable"] == n["status"]["capacity"]
    lease = _until(c, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", lambda o: True)
    assert lease["spec"]["holderIdentity"] == "n1"


def test_bound_pods_run_and_unbound_pods_wait(ksrv: ServerHandle) -> None:
    c = Client.of(ksrv)
    c.create("/api/v1/nodes", node("n1"))
    c.create(PODS, pod("a"))
    c.create(PODS, pod("b"))
    _bind(c, "a", "n1")
    a = _until(c, f"{PODS}/a", lambda o: o["status"]["phase"] == "Running")
    conds = {x["type"]: x["status"] for x in a["status"]["conditions"]}
    assert conds == {"PodReadyToStartContainers": "True", "Initialized": "True", "Ready": "True",
                     "ContainersReady": "True", "PodScheduled": "True"}
    assert a["status"]["podIP"].startswith("10.244.") and a["status"]["podIPs"] == [{"ip": a["status"]["podIP"]}]
    assert a["status"]["containerStatuses"][0]["ready"] is True
    time.sleep(0.3)
    assert c.get(f"{PODS}/b")["status"]["phase"] == "Pending"
    # a pod bound to a node that does not exist stays Pending (no kubelet there) until the node comes
    c.create(PODS, pod("ghost", nodeName="later"))
    time.sleep(0.3)
    assert c.get(f"{PODS}/ghost")["status"]["phase"] == "Pending"
    c.create("/api/v1/nodes", node("later"))
    _until(c, f"{PODS}/ghost", lambda o: o["status"]["phase"] == "Running")


def test_annotated_pods_complete_and_leave_the_schedulers_watch(ksrv: ServerHandle) -> None:
    c = Client.of(ksrv)
    c.create("/api/v1/nodes", node("n1"))
    for name, phase in (("ok", None), ("bad", "Failed")):
        p = pod(name, restartPolicy="Never")
        p["metadata"]["annotations"] = {COMPLETE_AFTER_ANNOTATION: "0.5"}
        if phase:
            p["metadata"]["annotations"][COMPLETE_PHASE_ANNOTATION] = phase
        c.create(PODS, p)
    rv = c.get(PODS)["metadata"]["resourceVersion"]
    w = c.watch(f"/api/v1/pods?watch=1&resourceVersion={rv}"
                "&fieldSelector=status.phase!%3DSucceeded,status.phase!%3DFailed", timeout=60)
    _bind(c, "ok", "n1")
    _bind(c, "bad", "n1")
    ok = _until(c, f"{PODS}/ok", lambda o: o["status"]["phase"] == "Succeeded")
    assert ok["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    bad = _until(c, f"{PODS}/bad", lambda o: o["status"]["phase"] == "Failed")
    assert bad["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 1
    seen: dict[str, list[str]] = {"ok": [], "bad": []}
    while any(not v or v[-1] != "DELETED" for v in seen.values()):
        ev = w.next()
        assert ev is not None
        seen[ev["object"]["metadata"]["name"]].append(ev["type"])
    assert all(v.count("DELETED") == 1 and v[-1] == "DELETED" for v in seen.values()), seen
    w.close()


def test_deleted_running_pods_go_after_their_grace_period(ksrv: ServerHandle) -> None:
    c = Client.of(ksrv)
    c.create("/api/v1/nodes", node("n1"))
    c.create(PODS, pod("a", terminationGracePeriodSeconds=1))
    _bind(c, "a", "n1")
    _until(c, f"{PODS}/a", lambda o: o["status"]["phase"] == "Running")
    code, body = c.req("DELETE", f"{PODS}/a")
    assert code == 200 and body["metadata"]["deletionGracePeriodSeconds"] == 1
    deadline = time.monotonic() + 60
    while c.req("GET", f"{PODS}/a")[0] != 404:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_completion_survives_a_restart(tmp_path: Path) -> None:
    """A pod a kubelet started completes after a restart, from its persisted ``startTime``.

    Deterministic on a loaded machine: the pod is started without the completion annotation
    (nothing can complete it before the first server stops — with the annotation, ``startTime``
    has whole seconds, so the pod could stay Running for only a few ms and a poll could miss
    it), the annotation is added while no kubelet runs, and only the restarted kubelets can
    complete it (when they re-sync running pods at start)."""
    data = tmp_path / "data"
    with run_server(tmp_path / "kc", data_dir=data, simulate_kubelets=True) as s:
        c = Client.of(s)
        c.create("/api/v1/nodes", node("n1"))
        c.create(PODS, pod("job", restartPolicy="Never"))
        _bind(c, "job", "n1")
        started = _until(c, f"{PODS}/job", lambda o: o["status"]["phase"] == "Running")["status"]["startTime"]
    with run_server(tmp_path / "kc", data_dir=data) as s:  # no kubelets: nothing completes the pod here
        c = Client.of(s)
        code, body = c.req("PATCH", f"{PODS}/job", {"metadata": {"annotations": {COMPLETE_AFTER_ANNOTATION: "1"}}},
                           ctype="application/merge-patch+json")
        assert code == 200 and body["status"]["phase"] == "Running", body
    with run_server(tmp_path / "kc", data_dir=data, simulate_kubelets=True) as s:
        c = Client.of(s)
        done = _until(c, f"{PODS}/job", lambda o: o["status"]["phase"] == "Succeeded", timeout=60)
        assert done["status"]["startTime"] == started
        assert done["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"


def test_disruption_controller_keeps_pdb_status(ksrv: ServerHandle) -> None:
    c = Client.of(ksrv)
    c.create("/api/v1/nodes", node("n1"))
    c.create("/apis/policy/v1/namespaces/default/poddisruptionbudgets",
             {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
              "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "w"}}}})
    for i in range(3):
        p = pod(f"w{i}")
        p["metadata"]["labels"] = {"app": "w"}
        c.create(PODS, p)
        _bind(c, f"w{i}", "n1")
    path = "/apis/policy/v1/namespaces/default/poddisruptionbudgets/pdb"
    st = _until(c, path, lambda o: o["status"].get("currentHealthy") == 3)["status"]
    assert (st["expectedPods"], st["desiredHealthy"], st["disruptionsAllowed"]) == (3, 1, 2)
    assert st["conditions"][0]["type"] == "DisruptionAllowed" and st["conditions"][0]["status"] == "True"
    for i in range(2):
        code, _ = c.req("POST", f"{PODS}/w{i}/eviction", {"apiVersion": "policy/v1", "kind": "Eviction",
                                                         "metadata": {"name": f"w{i}"}})
        assert code == 201
    st = _until(c, path, lambda o: o["status"].get("disruptionsAllowed") == 0)["status"]
    assert st["conditions"][0]["reason"] == "InsufficientPods"
    code, body = c.req("POST", f"{PODS}/w2/eviction", {"apiVersion": "policy/v1", "kind": "Eviction",
                                                      "metadata": {"name": "w2"}})
    assert code == 429 and body["details"]["causes"][0]["reason"] == "DisruptionBudget"


def test_deleting_a_node_removes_its_lease(ksrv: ServerHandle) -> None:
    c = Client.of(ksrv)
    c.create("/api/v1/nodes", node("n1"))
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1"
    _until(c, path, lambda o: True)
    assert c.req("DELETE", "/api/v1/nodes/n1")[0] == 200
    deadline = time.monotonic() + 60
    while c.req("GET", path)[0] != 404:
        assert time.monotonic() < deadline
        time.sleep(0.05)
