"""The box's workload controllers (``--simulate-kubelets``), over real HTTP: a Deployment gets
its ReplicaSet and pods, a DaemonSet one pod per eligible node, a StatefulSet (OrderedReady)
its next ordinal once the kubelet reports the previous one Ready; injected write failures
are retried and nothing is created twice."""

from __future__ import annotations

import time
from typing import Any

from apiserver_helpers import Client, node
from apiserver_helpers import until as _until

from kubesched.apiserver.launcher import ServerHandle

PODS = "/api/v1/namespaces/default/pods"


def _pods(c: Client) -> list[dict[str, Any]]:
    return c.get(PODS)["items"]


def _template(app: str) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": "100m"}}}]}}


def _deployment(name: str, replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": _template(name)}}


def test_deployment_replicaset_pods_with_owner_uids(ksrv: ServerHandle) -> None:
    c = Client.of(ksrv)
    c.create("/apis/apps/v1/namespaces/default/deployments", _deployment("web", 3))
    pods = _until(lambda: [p for p in _pods(c) if p["metadata"]["name"].startswith("web-")]
                  if len(_pods(c)) >= 3 else None, "3 pods")
    [rs] = c.get("/apis/apps/v1/namespaces/default/replicasets")["items"]
    dep = c.get("/apis/apps/v1/namespaces/default/deployments/web")
    assert rs["metadata"]["ownerReferences"][0]["uid"] == dep["metadata"]["uid"]
    h = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{h}"
    for p in pods:
        assert p["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
        assert p["metadata"]["labels"]["pod-template-hash"] == h
        assert p["status"]["phase"] == "Pending"  # admitted by the server (defaults applied)
    time.sleep(0.5)  # more passes run (every write wakes them): still exactly 3
    assert len(_pods(c)) == 3
    assert ksrv.server.workload_controller.passes >= 2


def test_daemonset_and_ordered_ready_statefulset(ksrv: ServerHandle) -> None:
    c = Client.of(ksrv)
    c.create("/api/v1/nodes", node("n1"))
    tainted = node("n2")
    tainted["spec"] = {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}
    c.create("/api/v1/nodes", tainted)
    c.create("/apis/apps/v1/namespaces/default/daemonsets",
             {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
              "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": _template("agent")}})
    c.create("/apis/apps/v1/namespaces/default/statefulsets",
             {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
              "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                       "template": _template("db")}})
    names = _until(lambda: sorted(p["metadata"]["name"] for p in _pods(c)) if len(_pods(c)) >= 2 else None,
                   "DaemonSet and StatefulSet pods")
    agent = [n for n in names if n.startswith("agent-")]
    assert len(agent) == 1 and "db-0" in names and "db-1" not in names  # db-0 not Ready yet
    ds_pod = c.get(f"{PODS}/{agent[0]}")
    terms = ds_pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["n1"]
    time.sleep(0.3)
    assert "db-1" not in [p["metadata"]["name"] for p in _pods(c)]
    # bind db-0: the kubelet runs it and reports Ready, then the controller creates db-1
    code, body = c.req("POST", f"{PODS}/db-0/binding", {"metadata": {"name": "db-0"}, "target": {"name": "n1"}})
    assert code == 201, body
    _until(lambda: any(p["metadata"]["name"] == "db-1" for p in _pods(c)), "db-1 after db-0 is Ready")
    db0 = c.get(f"{PODS}/db-0")
    assert any(x["type"] == "Ready" and x["status"] == "True" for x in db0["status"]["conditions"])
    db1 = c.get(f"{PODS}/db-1")
    assert db1["spec"]["hostname"] == "db-1" and db1["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "1"


def test_failed_creates_are_retried_and_nothing_is_created_twice(ksrv: ServerHandle) -> None:
    c = Client.of(ksrv)
    ksrv.faults.fail_writes("pods", fraction=1.0)
    c.create("/apis/apps/v1/namespaces/default/deployments", _deployment("web", 6))
    _until(lambda: ksrv.faults.injected >= 6, "failed creates")
    assert _pods(c) == []
    # every pod create failed and nothing else writes: only the controller's retry can create them
    ksrv.faults.clear()
    pods = _until(lambda: _pods(c) if len(_pods(c)) >= 6 else None, "6 pods after the faults")
    time.sleep(0.5)
    assert len(_pods(c)) == 6 == len({p["metadata"]["name"] for p in pods})


def test_job_runs_its_completions_one_after_the_other(ksrv: ServerHandle) -> None:
    c = Client.of(ksrv)
    c.create("/api/v1/nodes", node("n1"))
    tmpl = _template("pi")
    tmpl["metadata"]["annotations"] = {"kubesched.io/complete-after-seconds": "0"}
    tmpl["spec"]["restartPolicy"] = "Never"
    c.create("/apis/batch/v1/namespaces/default/jobs",
             {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
              "spec": {"completions": 3, "parallelism": 1, "template": tmpl}})
    for k in range(3):
        # parallelism 1: one pending pod at a time; bind it, the kubelet completes it
        pending = _until(lambda: [p for p in _pods(c) if not p["spec"].get("nodeName")], f"pod {k + 1}")
        assert len(pending) == 1
        name = pending[0]["metadata"]["name"]
        code, body = c.req("POST", f"{PODS}/{name}/binding", {"metadata": {"name": name}, "target": {"name": "n1"}})
        assert code == 201, body
        _until(lambda n=name: c.get(f"{PODS}/{n}")["status"].get("phase") == "Succeeded", f"{name} Succeeded")
    time.sleep(0.3)
    pods = _pods(c)
    assert len(pods) == 3 and all(p["status"]["phase"] == "Succeeded" for p in pods)
