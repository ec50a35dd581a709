"""kubectl (the client no one here wrote) against the box, unmodified and with no extra flags.

Each test gets its own server on 127.0.0.1:0, its own kubeconfig and its own discovery cache.
Skipped with a clear message when ``kubectl`` is not on the PATH.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.apiserver.launcher import ServerHandle, run_server

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on the PATH: kubectl compatibility not tested")

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


class Kubectl:
    def __init__(self, srv: ServerHandle, tmp: Path) -> None:
        assert srv.kubeconfig_path is not None
        self.srv = srv
        self.env = {**os.environ, "KUBECONFIG": str(srv.kubeconfig_path), "HOME": str(tmp)}
        self.cache = str(tmp / "kube-cache")

    def run(self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 120) -> str:
        assert KUBECTL is not None
        p = subprocess.run([KUBECTL, "--cache-dir", self.cache, *args], input=stdin, capture_output=True,
                           text=True, env=self.env, timeout=timeout, check=False)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        return p.stdout + (p.stderr if not check or p.returncode else "")

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json"))

    def popen(self, *args: str) -> subprocess.Popen[str]:
        assert KUBECTL is not None
        return subprocess.Popen([KUBECTL, "--cache-dir", self.cache, *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env)


@pytest.fixture
def kubelet_srv(tmp_path: Path) -> Iterator[ServerHandle]:
    with run_server(tmp_path / "kubeconfig", simulate_kubelets=True) as s:
        yield s


@pytest.fixture
def kc(kubelet_srv: ServerHandle, tmp_path: Path) -> Kubectl:
    return Kubectl(kubelet_srv, tmp_path)


def _wait(pred: Any, what: str, timeout: float = 60) -> None:
    """Poll ``pred``; ``timeout`` is a generous bound for a loaded machine, not a speed figure."""
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


NODE = """
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{kubernetes.io/hostname: {name}, zone: a}}
status:
  capacity: {{cpu: "4", memory: 8Gi, pods: "110"}}
"""

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default
  labels: {{app: {app}}}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: 100m}}}}}}]
"""


def _bind(srv: ServerHandle, name: str, node: str, ns: str = "default") -> None:
    from apiserver_helpers import Client

    code, body = Client.of(srv).req("POST", f"/api/v1/namespaces/{ns}/pods/{name}/binding",
                                    {"metadata": {"name": name}, "target": {"kind": "Node", "name": node}})
    assert code == 201, body


def test_apply_quickstart_get_and_reapply(kc: Kubectl) -> None:
    out = kc.run("apply", "-f", str(QUICKSTART))
    assert "created" in out
    nodes = kc.json("get", "nodes")["items"]
    assert len(nodes) > 0
    pods = kc.json("get", "pods", "-A")["items"]
    assert len(pods) > 0
    assert all(p["status"]["phase"] in ("Pending", "Running") for p in pods)
    rvs = {n["metadata"]["name"]: n["metadata"]["resourceVersion"] for n in nodes}
    # re-applying the same files changes nothing
    files = [str(QUICKSTART / f) for f in ("00-namespaces.yaml", "01-priorityclasses.yaml", "10-nodes.yaml")]
    again = kc.run("apply", *[a for f in files for a in ("-f", f)])
    assert again and all(line.endswith("unchanged") for line in again.splitlines()), again
    assert {n["metadata"]["name"]: n["metadata"]["resourceVersion"] for n in kc.json("get", "nodes")["items"]} == rvs
    assert len(kc.json("get", "pods", "-A")["items"]) == len(pods)


def test_apply_updates_with_a_three_way_strategic_merge(kc: Kubectl) -> None:
    kc.run("apply", "-f", "-", stdin=NODE.format(name="n1"))
    kc.run("apply", "-f", "-", stdin=POD.format(name="web", app="web"))
    changed = POD.format(name="web", app="web").replace("app: web", "app: web, tier: front")
    out = kc.run("apply", "-f", "-", stdin=changed)
    assert "pod/web configured" in out
    pod = kc.json("get", "pod", "web")
    assert pod["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert "kubectl.kubernetes.io/last-applied-configuration" in pod["metadata"]["annotations"]
    # remove the label from the file: apply removes it from the object
    out = kc.run("apply", "-f", "-", stdin=POD.format(name="web", app="web"))
    assert kc.json("get", "pod", "web")["metadata"]["labels"] == {"app": "web"}


def test_get_wide_shows_node_and_nominated_node(kc: Kubectl, kubelet_srv: ServerHandle) -> None:
    kc.run("create", "-f", "-", stdin=NODE.format(name="n1"))
    kc.run("create", "-f", "-", stdin=POD.format(name="a", app="a"))
    _bind(kubelet_srv, "a", "n1")
    _wait(lambda: kc.json("get", "pod", "a")["status"].get("phase") == "Running", "pod a Running")
    out = kc.run("get", "pods", "-o", "wide")
    header, row = out.splitlines()[:2]
    for col in ("NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"):
        assert col in header
    assert row.split()[:3] == ["a", "1/1", "Running"] and "n1" in row.split()
    nodes = kc.run("get", "nodes", "-o", "wide")
    assert "INTERNAL-IP" in nodes and "Ready" in nodes.splitlines()[1] and "v1.34.0" in nodes
    y = kc.run("get", "pod", "a", "-o", "yaml")
    assert "podIP:" in y and "nodeName: n1" in y


def test_label_patch_cordon_uncordon(kc: Kubectl) -> None:
    kc.run("create", "-f", "-", stdin=NODE.format(name="n1"))
    kc.run("create", "-f", "-", stdin=POD.format(name="a", app="a"))
    kc.run("label", "pod", "a", "team=x")
    assert kc.run("get", "pods", "-l", "team=x", "-o", "name").split() == ["pod/a"]
    kc.run("label", "pod", "a", "team-")
    assert "team" not in kc.json("get", "pod", "a")["metadata"]["labels"]
    kc.run("patch", "pod", "a", "-p", '{"metadata":{"annotations":{"k":"v"}}}')
    kc.run("patch", "pod", "a", "--type=merge", "-p", '{"metadata":{"annotations":{"k2":"v2"}}}')
    kc.run("patch", "pod", "a", "--type=json", "-p", '[{"op":"remove","path":"/metadata/annotations/k"}]')
    assert kc.json("get", "pod", "a")["metadata"]["annotations"] == {"k2": "v2"}
    kc.run("cordon", "n1")
    node = kc.json("get", "node", "n1")
    assert node["spec"]["unschedulable"] is True
    assert "SchedulingDisabled" in kc.run("get", "nodes")
    kc.run("uncordon", "n1")
    assert not kc.json("get", "node", "n1")["spec"].get("unschedulable")


def test_wait_for_pod_scheduled_and_describe(kc: Kubectl, kubelet_srv: ServerHandle) -> None:
    kc.run("create", "-f", "-", stdin=NODE.format(name="n1"))
    kc.run("create", "-f", "-", stdin=POD.format(name="a", app="a"))
    waiter = kc.popen("wait", "--for=condition=PodScheduled", "pod/a", "--timeout=60s")
    time.sleep(0.5)
    _bind(kubelet_srv, "a", "n1")
    out, err = waiter.communicate(timeout=90)
    assert waiter.returncode == 0, err
    assert "pod/a condition met" in out
    uid = kc.json("get", "pod", "a")["metadata"]["uid"]
    ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
          "metadata": {"name": "a.1", "namespace": "default"},
          "eventTime": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime()),
          "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-1",
          "action": "Binding", "reason": "Scheduled", "type": "Normal",
          "note": "Successfully assigned default/a to n1",
          "regarding": {"kind": "Pod", "namespace": "default", "name": "a", "uid": uid, "apiVersion": "v1"}}
    kc.run("create", "-f", "-", stdin=json.dumps(ev))
    desc = kc.run("describe", "pod", "a")
    assert "Node:" in desc and "n1/" in desc
    assert "Successfully assigned default/a to n1" in desc
    events = kc.run("get", "events")
    assert "Scheduled" in events and "pod/a" in events
    nd = kc.run("describe", "node", "n1")
    assert "Ready" in nd and "default" in nd and " a " in nd


def test_get_watch_prints_changes(kc: Kubectl) -> None:
    kc.run("create", "-f", "-", stdin=POD.format(name="a", app="a"))
    w = kc.popen("get", "pods", "-w", "-o", "name")
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(x.strip()) for x in w.stdout or ()], daemon=True)
    reader.start()
    seen: list[str] = []

    def until_seen(pred: Any) -> None:  # bounded (60 s for a loaded machine), ends as soon as printed
        deadline = time.monotonic() + 60
        while not pred():
            try:
                seen.append(lines.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                raise AssertionError(f"kubectl get -w printed only {seen}") from None

    try:
        until_seen(lambda: seen)  # the initial list is printed: the watch follows from its resourceVersion
        kc.run("create", "-f", "-", stdin=POD.format(name="b", app="b"))
        kc.run("label", "pod", "a", "x=1")
        until_seen(lambda: "pod/b" in seen and seen.count("pod/a") >= 2)
    finally:
        w.terminate()
        w.wait(timeout=10)
        reader.join(timeout=10)  # it ends at the end of kubectl's output
        for f in (w.stdout, w.stderr):
            if f is not None:
                f.close()
    assert seen[0] == "pod/a"


def test_delete_waits_until_gone_and_force_delete(tmp_path: Path) -> None:
    # kubelets that take the grace period to stop a pod (`kubesched apiserver --pod-termination-seconds -1`;
    # the default stops it at once, as KWOK), so kubectl's wait for the deletion shows
    with run_server(tmp_path / "kubeconfig", simulate_kubelets=True, pod_termination_seconds=None) as srv:
        kc = Kubectl(srv, tmp_path)
        kc.run("create", "-f", "-", stdin=NODE.format(name="n1"))
        for n in ("a", "b"):
            kc.run("create", "-f", "-", stdin=POD.format(name=n, app=n))
            _bind(srv, n, "n1")
        t0 = time.monotonic()
        out = kc.run("delete", "pod", "a")
        assert 'pod "a" deleted' in out
        assert time.monotonic() - t0 >= 0.5  # waited for the 1 s grace period
        assert "NotFound" in kc.run("get", "pod", "a", check=False)
        out = kc.run("delete", "pod", "b", "--grace-period=0", "--force")
        assert 'pod "b" force deleted' in out
        assert "NotFound" in kc.run("get", "pod", "b", check=False)


def test_drain_evicts_and_honours_the_disruption_budget(kc: Kubectl, kubelet_srv: ServerHandle) -> None:
    kc.run("create", "-f", "-", stdin=NODE.format(name="n1"))
    for i in range(3):
        y = POD.format(name=f"w{i}", app="w").replace(
            "  labels:", "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: '1', "
            "controller: true}]\n  labels:")
        kc.run("create", "-f", "-", stdin=y)
        _bind(kubelet_srv, f"w{i}", "n1")
    _wait(lambda: all(p["status"].get("phase") == "Running" for p in kc.json("get", "pods")["items"]), "Running")
    kc.run("create", "-f", "-", stdin="""
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pdb, namespace: default}
spec: {minAvailable: 2, selector: {matchLabels: {app: w}}}
""")
    # the disruption controller has computed the budget (else every eviction is refused: 429)
    _wait(lambda: (kc.json("get", "pdb", "pdb").get("status") or {}).get("disruptionsAllowed") == 1, "PDB status")
    out = kc.run("drain", "n1", "--ignore-daemonsets", "--timeout=4s", check=False)
    assert "Cannot evict pod as it would violate the pod's disruption budget" in out or "timeout" in out, out
    assert kc.json("get", "node", "n1")["spec"]["unschedulable"] is True
    left = kc.json("get", "pods")["items"]
    assert len(left) == 2  # exactly one eviction was allowed
    kc.run("delete", "pdb", "pdb")
    out = kc.run("drain", "n1", "--ignore-daemonsets", "--timeout=20s")
    assert "drained" in out
    assert kc.json("get", "pods")["items"] == []


def test_auth_can_i_list_shows_a_restricted_users_rbac_rules(kc: Kubectl) -> None:
    """``kubectl auth can-i --list --as`` a user with one RoleBinding (SelfSubjectRulesReview answered
    from RBAC as kube-apiserver's ``RulesFor``): the Role's rules in its namespace, the bootstrap
    policy's rules for ``system:authenticated`` (self reviews, discovery URLs), nothing more — and
    only the cluster-wide ones in another namespace."""
    kc.run("create", "namespace", "team")
    kc.run("apply", "-f", "-", stdin="""
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: team}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: erin-reads-pods, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: erin}]
""")
    rows = [line.split() for line in kc.run("auth", "can-i", "--list", "--as", "erin", "-n", "team").splitlines()[1:]]
    assert ["pods", "[]", "[]", "[get", "list]"] in rows
    assert ["selfsubjectrulesreviews.authorization.k8s.io", "[]", "[]", "[create]"] in rows
    assert ["[/apis]", "[]", "[get]"] in rows
    assert not any(r[0] == "*.*" for r in rows)
    elsewhere = kc.run("auth", "can-i", "--list", "--as", "erin", "-n", "default")
    assert "pods " not in elsewhere and "selfsubjectrulesreviews" in elsewhere
    assert kc.run("auth", "can-i", "list", "pods", "--as", "erin", "-n", "team").strip() == "yes"


def test_unknown_kinds_get_upstreams_no_matches_error(kc: Kubectl) -> None:
    out = kc.run("apply", "-f", "-", check=False, stdin="""
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
""")
    assert 'no matches for kind "Widget" in version "example.com/v1"' in out, out


def test_auth_whoami_and_can_i(kc: Kubectl) -> None:
    """``kubectl auth whoami`` (SelfSubjectReview) names the box's token holder, a system:masters admin;
    ``auth can-i`` (SelfSubjectAccessReview) answers from RBAC — with ``--as`` for the impersonated user, who
    has no binding here (``no``, exit 1, as kube-apiserver with RBAC answers); ``can-i --list``
    (SelfSubjectRulesReview) lists everything for the admin; the review kinds are create-only (405 on GET)."""
    out = kc.run("auth", "whoami", "-o", "json")
    info = json.loads(out)["status"]["userInfo"]
    assert info["username"] == "kubesched-admin" and "system:masters" in info["groups"]
    assert kc.run("auth", "can-i", "create", "pods").strip() == "yes"
    assert kc.run("auth", "can-i", "delete", "nodes", "--as", "someone", check=False).split()[0] == "no"
    assert "*.*" in kc.run("auth", "can-i", "--list")
    err = kc.run("get", "tokenreviews", check=False)
    assert "MethodNotAllowed" in err
