"""Issue 17 items 7, 8 and 10 with kubectl against the box (``--simulate-kubelets``): Deployment
rollouts as ``pkg/controller/deployment`` (``kubectl set image``, ``rollout
status|history|undo|restart|pause|resume``, scale both ways), ReplicaSet scale-down, the garbage
collector's cascades (``kubectl delete`` Background / Foreground / ``--cascade=orphan``), node
deletion and prompt pod termination (``kubectl delete pod`` and ``kubectl drain`` return at
once). The expectations come from upstream's controllers (v1.37.2) and kubectl's own logic
(``rollout_status.go``, ``history.go``, ``rollback.go``); skipped without kubectl on the PATH.
The fixture (a binder thread standing in for the scheduler) is shared with test_realism_kubectl.
"""

# ruff: noqa: F811 - the tests take the imported fixture "box" as their parameter
from __future__ import annotations

import time
from typing import Any

import pytest
from apiserver_helpers import until as _until_10s
from test_realism_kubectl import KUBECTL, Kubectl, _statefulset, _template, box  # noqa: F401 - the shared fixture

from kubesched.apiserver.launcher import ServerHandle

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on the PATH")

Box = tuple[ServerHandle, Kubectl]


def _until(fn: Any, what: str, timeout: float = 30) -> Any:
    return _until_10s(fn, what, timeout)


def _deployment(name: str, replicas: int, extra: str = "") -> str:
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}{extra}
  selector: {{matchLabels: {{app: {name}}}}}
  template:{_template(name)}"""


def _rs(kc: Kubectl) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["name"]: r for r in kc.json("get", "replicasets")["items"]}


def _live_pods(kc: Kubectl, prefix: str) -> list[dict[str, Any]]:
    return [p for p in kc.json("get", "pods")["items"] if p["metadata"]["name"].startswith(prefix)
            and not p["metadata"].get("deletionTimestamp")]


def test_rolling_update_history_undo_restart(box: Box) -> None:
    _, kc = box
    kc.run("create", "-f", "-", stdin=_deployment("web", 4))
    kc.run("rollout", "status", "deployment/web", "--timeout=60s")
    [first] = _rs(kc)
    kc.run("set", "image", "deployment/web", "c=registry.k8s.io/pause:3.9")
    out = kc.run("rollout", "status", "deployment/web", "--timeout=60s")
    assert 'deployment "web" successfully rolled out' in out
    rss = _rs(kc)
    assert len(rss) == 2
    [second] = [n for n in rss if n != first]
    assert rss[first]["spec"]["replicas"] == 0 and rss[second]["spec"]["replicas"] == 4
    assert rss[first]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert rss[second]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    # maxSurge 25 % of 4 = 1 (rounded up), maxUnavailable 25 % = 1 (rounded down)
    assert rss[second]["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] == "5"
    h = rss[second]["metadata"]["labels"]["pod-template-hash"]
    pods = _until(lambda: (p := _live_pods(kc, "web-")) and len(p) == 4 and p, "4 pods of the new template")
    assert {p["metadata"]["labels"]["pod-template-hash"] for p in pods} == {h}
    d = kc.json("get", "deployment", "web")
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    hist = kc.run("rollout", "history", "deployment/web")
    assert [ln.split()[0] for ln in hist.splitlines()[2:] if ln.strip()] == ["1", "2"]
    # undo: the first ReplicaSet is the new one again, as revision 3 (its history: 1)
    kc.run("rollout", "undo", "deployment/web")
    kc.run("rollout", "status", "deployment/web", "--timeout=60s")
    rss = _rs(kc)
    assert rss[first]["spec"]["replicas"] == 4 and rss[second]["spec"]["replicas"] == 0
    ann = rss[first]["metadata"]["annotations"]
    assert ann["deployment.kubernetes.io/revision"] == "3"
    assert ann["deployment.kubernetes.io/revision-history"] == "1"
    hist = kc.run("rollout", "history", "deployment/web")
    assert [ln.split()[0] for ln in hist.splitlines()[2:] if ln.strip()] == ["2", "3"]
    # restart: a third ReplicaSet (the restartedAt annotation changes the template)
    kc.run("rollout", "restart", "deployment/web")
    kc.run("rollout", "status", "deployment/web", "--timeout=60s")
    rss = _rs(kc)
    assert len(rss) == 3
    [third] = [n for n in rss if n not in (first, second)]
    assert rss[third]["spec"]["replicas"] == 4
    assert rss[third]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "4"
    _until(lambda: len(_live_pods(kc, "web-")) == 4 and len(kc.json("get", "pods")["items"]) == 4,
           "old pods gone")
    st = kc.json("get", "deployment", "web")["status"]
    assert (st["replicas"], st["updatedReplicas"], st["availableReplicas"]) == (4, 4, 4)


def test_scale_both_ways_and_pause_resume(box: Box) -> None:
    _, kc = box
    kc.run("create", "-f", "-", stdin=_deployment("api", 2))
    kc.run("rollout", "status", "deployment/api", "--timeout=60s")
    kc.run("scale", "deployment/api", "--replicas=5")
    kc.run("rollout", "status", "deployment/api", "--timeout=60s")
    assert len(_until(lambda: (p := _live_pods(kc, "api-")) and len(p) == 5 and p, "5 pods")) == 5
    kc.run("scale", "deployment/api", "--replicas=1")
    kc.run("rollout", "status", "deployment/api", "--timeout=60s")
    _until(lambda: len(kc.json("get", "pods")["items"]) == 1, "scaled down to 1 pod")
    [rs] = _rs(kc).values()
    assert rs["spec"]["replicas"] == 1
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == "1"
    kc.run("rollout", "pause", "deployment/api")
    kc.run("set", "image", "deployment/api", "c=registry.k8s.io/pause:3.9")
    time.sleep(1)
    assert len(_rs(kc)) == 1  # paused: no new ReplicaSet
    cond = {c["type"]: c for c in kc.json("get", "deployment", "api")["status"]["conditions"]}
    assert cond["Progressing"]["reason"] == "DeploymentPaused"
    kc.run("rollout", "resume", "deployment/api")
    kc.run("rollout", "status", "deployment/api", "--timeout=60s")
    assert len(_rs(kc)) == 2


def test_recreate_and_revision_history_limit(box: Box) -> None:
    _, kc = box
    kc.run("create", "-f", "-", stdin=_deployment("db", 2, """
  revisionHistoryLimit: 1
  strategy: {type: Recreate}"""))
    kc.run("rollout", "status", "deployment/db", "--timeout=60s")
    for tag in ("3.8", "3.9"):
        kc.run("set", "image", "deployment/db", f"c=registry.k8s.io/pause:{tag}")
        kc.run("rollout", "status", "deployment/db", "--timeout=60s")
    # revisionHistoryLimit 1: one old ReplicaSet kept besides the new one
    rss = _until(lambda: (r := _rs(kc)) and len(r) == 2 and r, "history cleaned up")
    revs = sorted(r["metadata"]["annotations"]["deployment.kubernetes.io/revision"] for r in rss.values())
    assert revs == ["2", "3"]


def test_delete_cascades(box: Box) -> None:
    _, kc = box
    for name in ("bg", "fg", "orphan"):
        kc.run("create", "-f", "-", stdin=_deployment(name, 2))
    for name in ("bg", "fg", "orphan"):
        kc.run("rollout", "status", f"deployment/{name}", "--timeout=60s")
    kc.run("delete", "deployment", "bg")  # kubectl's default: --cascade=background
    _until(lambda: not _live_pods(kc, "bg-") and not [n for n in _rs(kc) if n.startswith("bg-")],
           "bg's ReplicaSet and pods gone")
    kc.run("delete", "deployment", "fg", "--cascade=foreground")  # waits for the Deployment to go
    assert not [n for n in _rs(kc) if n.startswith("fg-")]
    assert not _live_pods(kc, "fg-")
    kc.run("delete", "deployment", "orphan", "--cascade=orphan")
    time.sleep(0.5)
    [rs] = [r for n, r in _rs(kc).items() if n.startswith("orphan-")]
    assert "ownerReferences" not in rs["metadata"]
    assert len(_live_pods(kc, "orphan-")) == 2  # the ReplicaSet keeps its pods


def test_delete_pod_and_drain_return_at_once_and_node_deletion(box: Box) -> None:
    srv, kc = box
    kc.run("create", "-f", "-", stdin=_deployment("w", 2))
    kc.run("rollout", "status", "deployment/w", "--timeout=60s")
    victim = _live_pods(kc, "w-")[0]["metadata"]["name"]
    t0 = time.monotonic()
    kc.run("delete", "pod", victim)  # terminationGracePeriodSeconds 30: the kubelet stops it at once
    assert time.monotonic() - t0 < 10
    kc.run("rollout", "status", "deployment/w", "--timeout=60s")  # replaced
    t0 = time.monotonic()
    kc.run("drain", "n1", "--ignore-daemonsets", "--timeout=60s")
    assert time.monotonic() - t0 < 20
    assert kc.json("get", "node", "n1")["spec"]["unschedulable"] is True
    kc.run("uncordon", "n1")
    kc.run("rollout", "status", "deployment/w", "--timeout=60s")
    # a deleted node's pods are deleted (pod GC: marked Failed, then force-deleted), and replaced
    on_n1 = {p["metadata"]["uid"] for p in _live_pods(kc, "w-") if p["spec"].get("nodeName") == "n1"}
    assert on_n1
    kc.run("delete", "node", "n1")
    _until(lambda: not on_n1 & {p["metadata"]["uid"] for p in kc.json("get", "pods")["items"]}, "pods of n1 gone")
    assert srv.server.pod_gc.deleted >= len(on_n1)
    _until(lambda: len(_live_pods(kc, "w-")) == 2, "replacements")


def test_statefulset_rolling_update_and_ordered_scale_down(box: Box) -> None:
    _, kc = box
    kc.run("create", "-f", "-", stdin=_statefulset("db", 3))
    kc.run("rollout", "status", "statefulset/db", "--timeout=60s")
    before = kc.json("get", "statefulset", "db")["status"]["currentRevision"]
    kc.run("set", "image", "statefulset/db", "c=registry.k8s.io/pause:3.9")
    out = kc.run("rollout", "status", "statefulset/db", "--timeout=90s")
    assert "roll out complete" in out
    st = kc.json("get", "statefulset", "db")["status"]
    assert st["currentRevision"] == st["updateRevision"] != before
    assert st["updatedReplicas"] == st["readyReplicas"] == 3
    pods = {p["metadata"]["name"]: p for p in kc.json("get", "pods", "-l", "app=db")["items"]}
    assert sorted(pods) == ["db-0", "db-1", "db-2"]
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods.values()} == {st["updateRevision"]}
    assert {p["spec"]["containers"][0]["image"] for p in pods.values()} == {"registry.k8s.io/pause:3.9"}
    kc.run("scale", "statefulset/db", "--replicas=1")
    _until(lambda: sorted(p["metadata"]["name"] for p in kc.json("get", "pods", "-l", "app=db")["items"])
           == ["db-0"], "db-2 then db-1 deleted")
    kc.run("rollout", "status", "statefulset/db", "--timeout=60s")


def test_daemonset_rolling_update(box: Box) -> None:
    _, kc = box
    kc.run("create", "-f", "-", stdin=f"""
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: agent}}
spec:
  selector: {{matchLabels: {{app: agent}}}}
  template:{_template("agent")}""")
    kc.run("rollout", "status", "daemonset/agent", "--timeout=60s")
    kc.run("set", "image", "daemonset/agent", "c=registry.k8s.io/pause:3.9")
    out = kc.run("rollout", "status", "daemonset/agent", "--timeout=90s")
    assert 'daemon set "agent" successfully rolled out' in out
    pods = _until(lambda: (p := _live_pods(kc, "agent-")) and len(p) == 2
                  and {x["spec"]["containers"][0]["image"] for x in p} == {"registry.k8s.io/pause:3.9"} and p,
                  "both nodes' pods updated")
    st = kc.json("get", "daemonset", "agent")["status"]
    assert (st["desiredNumberScheduled"], st["updatedNumberScheduled"], st["numberAvailable"]) == (2, 2, 2)
    assert len({p["spec"]["nodeName"] for p in pods}) == 2


FAIL_AT_ONCE = '{kubesched.io/complete-after-seconds: "0", kubesched.io/complete-phase: Failed}'


def test_job_backoff_limit_fails_it(box: Box) -> None:
    _, kc = box
    kc.run("create", "-f", "-", stdin=f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: flaky}}
spec:
  backoffLimit: 1
  template:{_template("flaky", restart="Never", annotations=FAIL_AT_ONCE)}""")
    kc.run("wait", "--for=condition=Failed", "job/flaky", "--timeout=60s")
    st = kc.json("get", "job", "flaky")["status"]
    assert st["failed"] == 2 and "active" not in st  # backoffLimit 1: the second failure ends it
    assert [c["type"] for c in st["conditions"]] == ["FailureTarget", "Failed"]
    assert {c["reason"] for c in st["conditions"]} == {"BackoffLimitExceeded"}
    # the job-tracking finalizer is removed from the finished pods
    for p in kc.json("get", "pods", "-l", "job-name=flaky")["items"]:
        assert "batch.kubernetes.io/job-tracking" not in (p["metadata"].get("finalizers") or [])


def test_delete_without_policy_uses_the_kinds_default(box: Box) -> None:
    """DefaultGarbageCollectionPolicy: a batch/v1 Job deleted through the API without a policy
    orphans its pods (kubectl sends Background, which deletes them); a ReplicaSet's are deleted."""
    srv, kc = box
    from apiserver_helpers import Client

    c = Client.of(srv)
    kc.run("create", "-f", "-", stdin=f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: legacy}}
spec:
  template:{_template("legacy", restart="Never")}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {{name: rs}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: rs}}}}
  template:{_template("rs")}""")
    _until(lambda: len(_live_pods(kc, "legacy-")) == 1 and len(_live_pods(kc, "rs-")) == 2, "pods")
    code, body = c.req("DELETE", "/apis/batch/v1/namespaces/default/jobs/legacy")
    assert code == 200 and "orphan" in body["metadata"]["finalizers"], body
    code, body = c.req("DELETE", "/apis/apps/v1/namespaces/default/replicasets/rs")
    assert code == 200, body
    _until(lambda: c.req("GET", "/apis/batch/v1/namespaces/default/jobs/legacy")[0] == 404, "job gone")
    _until(lambda: not _live_pods(kc, "rs-"), "the ReplicaSet's pods deleted")
    [pod] = _live_pods(kc, "legacy-")
    assert "ownerReferences" not in pod["metadata"]
