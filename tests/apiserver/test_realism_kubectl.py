"""Issue 17 item 3 with kubectl against the box (``--simulate-kubelets``): workloads get the
``.status`` upstream's controllers write (:mod:`kubesched.controllers.workloadstatus`), so
``kubectl rollout status``, ``kubectl wait --for=condition=Available|Complete`` and ``kubectl get``
work. A tiny binder thread stands in for the scheduler (it binds each pending pod: daemon pods to
their node-affinity node, others to ``n1``). kubectl's own logic decides when a rollout is done
(``kubectl/pkg/polymorphichelpers/rollout_status.go``); skipped without kubectl on the PATH.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver_helpers import Client

from kubesched.apiserver.launcher import ServerHandle, run_server

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on the PATH")

NODES = """
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {kubernetes.io/hostname: n1}},
   status: {capacity: {cpu: "8", memory: 16Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: n2, labels: {kubernetes.io/hostname: n2}},
   status: {capacity: {cpu: "8", memory: 16Gi, pods: "110"}}}
"""

TEMPLATE = """
    metadata:
      labels: {{app: {app}}}
      annotations: {annotations}
    spec:
      restartPolicy: {restart}
      containers: [{{name: c, image: registry.k8s.io/pause:3.10}}]
"""


def _template(app: str, restart: str = "Always", annotations: str = "{}") -> str:
    return TEMPLATE.format(app=app, restart=restart, annotations=annotations)


def _statefulset(name: str, replicas: int) -> str:
    """A StatefulSet manifest of ``replicas`` pods of :func:`_template` (serviceName = name)."""
    return f"""
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  serviceName: {name}
  selector: {{matchLabels: {{app: {name}}}}}
  template:{_template(name)}"""


class Kubectl:
    def __init__(self, srv: ServerHandle, tmp: Path) -> None:
        assert srv.kubeconfig_path is not None
        self.env = {**os.environ, "KUBECONFIG": str(srv.kubeconfig_path), "HOME": str(tmp)}
        self.cache = str(tmp / "kube-cache")

    def run(self, *args: str, stdin: str | None = None, timeout: float = 90) -> str:
        assert KUBECTL is not None
        p = subprocess.run([KUBECTL, "--cache-dir", self.cache, *args], input=stdin, capture_output=True,
                           text=True, env=self.env, timeout=timeout, check=False)
        assert p.returncode == 0, f"kubectl {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
        return p.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json"))


def _daemon_node(pod: dict[str, Any]) -> str | None:
    req = (((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {})
           .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in req.get("nodeSelectorTerms") or []:
        for f in term.get("matchFields") or []:
            if f.get("key") == "metadata.name":
                return str(f["values"][0])
    return None


@pytest.fixture
def box(tmp_path: Path) -> Iterator[tuple[ServerHandle, Kubectl]]:
    with run_server(tmp_path / "kubeconfig", simulate_kubelets=True) as srv:
        stop = threading.Event()
        c = Client.of(srv)

        def binder() -> None:
            while not stop.wait(0.1):
                code, body = c.req("GET", "/api/v1/pods")
                if code != 200:
                    continue
                for p in body["items"]:
                    if p["spec"].get("nodeName") or p["metadata"].get("deletionTimestamp"):
                        continue
                    node = _daemon_node(p) or "n1"
                    ns, name = p["metadata"]["namespace"], p["metadata"]["name"]
                    c.req("POST", f"/api/v1/namespaces/{ns}/pods/{name}/binding",
                          {"metadata": {"name": name}, "target": {"kind": "Node", "name": node}})

        t = threading.Thread(target=binder, daemon=True)
        t.start()
        kc = Kubectl(srv, tmp_path)
        kc.run("create", "-f", "-", stdin=NODES)
        try:
            yield srv, kc
        finally:
            stop.set()
            t.join(5)


def test_deployment_rollout_status_wait_available_and_get(box: tuple[ServerHandle, Kubectl]) -> None:
    _, kc = box
    kc.run("create", "-f", "-", stdin=f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: web}}}}
  template:{_template("web")}""")
    out = kc.run("rollout", "status", "deployment/web", "--timeout=60s")
    assert 'deployment "web" successfully rolled out' in out
    kc.run("wait", "--for=condition=Available", "deployment/web", "--timeout=30s")
    d = kc.json("get", "deployment", "web")
    st = d["status"]
    assert (st["replicas"], st["updatedReplicas"], st["readyReplicas"], st["availableReplicas"]) == (3, 3, 3, 3)
    assert st["observedGeneration"] == d["metadata"]["generation"]
    conds = {c["type"]: c for c in st["conditions"]}
    assert conds["Available"]["reason"] == "MinimumReplicasAvailable"
    assert conds["Progressing"]["reason"] == "NewReplicaSetAvailable"
    [rs] = kc.json("get", "replicasets")["items"]
    assert conds["Progressing"]["message"] == f'ReplicaSet "{rs["metadata"]["name"]}" has successfully progressed.'
    assert rs["status"]["replicas"] == rs["status"]["readyReplicas"] == 3
    row = kc.run("get", "deployment", "web").splitlines()[1].split()
    assert row[:4] == ["web", "3/3", "3", "3"]


def test_job_wait_complete(box: tuple[ServerHandle, Kubectl]) -> None:
    _, kc = box
    kc.run("create", "-f", "-", stdin=f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: pi}}
spec:
  completions: 2
  parallelism: 2
  template:{_template("pi", restart="Never", annotations='{kubesched.io/complete-after-seconds: "1"}')}""")
    kc.run("wait", "--for=condition=Complete", "job/pi", "--timeout=60s")
    st = kc.json("get", "job", "pi")["status"]
    assert st["succeeded"] == 2 and "active" not in st
    assert [c["type"] for c in st["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert all(c["reason"] == "CompletionsReached" for c in st["conditions"])
    assert st["startTime"] and st["completionTime"]


def test_statefulset_and_daemonset_rollout_status(box: tuple[ServerHandle, Kubectl]) -> None:
    _, kc = box
    kc.run("create", "-f", "-", stdin=_statefulset("db", 2) + f"""
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: agent}}
spec:
  selector: {{matchLabels: {{app: agent}}}}
  template:{_template("agent")}""")
    assert "roll out complete" in kc.run("rollout", "status", "statefulset/db", "--timeout=60s")
    assert 'daemon set "agent" successfully rolled out' in kc.run("rollout", "status", "daemonset/agent",
                                                                   "--timeout=60s")
    sts = kc.json("get", "statefulset", "db")["status"]
    assert sts["readyReplicas"] == sts["replicas"] == 2 and sts["currentRevision"] == sts["updateRevision"]
    ds = kc.json("get", "daemonset", "agent")["status"]
    assert (ds["desiredNumberScheduled"], ds["numberReady"], ds["numberAvailable"]) == (2, 2, 2)
