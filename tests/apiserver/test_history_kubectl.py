"""Issue 17: StatefulSet and DaemonSet ControllerRevisions with kubectl against the box
(``--simulate-kubelets``): ``kubectl rollout history|undo sts/ds`` as upstream's controllers keep
the history (``pkg/controller/history``, ``statefulset/stateful_set_control.go``
``getStatefulSetRevisions``/``truncateHistory``, ``daemon/update.go``
``constructHistory``/``cleanupHistory``, v1.37.2) and kubectl reads it (``history.go``
``controlledHistoryV1``, ``rollback.go``). Skipped without kubectl on the PATH."""

# ruff: noqa: F811 - the tests take the imported fixture "box" as their parameter
from __future__ import annotations

from typing import Any

import pytest
from apiserver_helpers import until
from test_realism_kubectl import KUBECTL, Kubectl, _statefulset, _template, box  # noqa: F401 - the shared fixture

from kubesched.apiserver.history import plan_history
from kubesched.apiserver.launcher import ServerHandle

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on the PATH")

Box = tuple[ServerHandle, Kubectl]
PAUSE = "registry.k8s.io/pause:3.9"
BUSY = "busybox:1.36"


def _revisions(kc: Kubectl, app: str) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["name"]: r for r in kc.json("get", "controllerrevisions", "-l", f"app={app}")["items"]}


def _history(kc: Kubectl, ref: str) -> list[str]:
    out = kc.run("rollout", "history", ref)
    return [ln.split()[0] for ln in out.splitlines()[2:] if ln.strip()]


def _images(kc: Kubectl, app: str) -> set[str]:
    return {p["spec"]["containers"][0]["image"] for p in kc.json("get", "pods", "-l", f"app={app}")["items"]
            if not p["metadata"].get("deletionTimestamp")}


def test_statefulset_history_and_undo(box: Box) -> None:
    _, kc = box
    kc.run("create", "-f", "-", stdin=_statefulset("db", 2))
    kc.run("rollout", "status", "statefulset/db", "--timeout=60s")
    sts = kc.json("get", "statefulset", "db")
    [first] = until(lambda: _revisions(kc, "db") or None, "first revision")
    rev = _revisions(kc, "db")[first]
    # NewControllerRevision: controller ref, template labels + hash, the template as a replace patch
    assert rev["revision"] == 1
    assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"] == first
    assert rev["metadata"]["labels"]["app"] == "db"
    # history.ControllerRevisionHashLabel (the pods' controller-revision-hash is the revision name)
    assert first == f"db-{rev['metadata']['labels']['controller.kubernetes.io/hash']}"
    [owner] = rev["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == ("StatefulSet", "db",
                                                                                 sts["metadata"]["uid"], True)
    assert rev["data"]["spec"]["template"]["$patch"] == "replace"
    assert rev["data"]["spec"]["template"]["spec"]["containers"][0]["image"] == sts["spec"]["template"]["spec"][
        "containers"][0]["image"]
    kc.run("set", "image", "statefulset/db", f"c={PAUSE}")
    kc.run("rollout", "status", "statefulset/db", "--timeout=90s")
    assert until(lambda: _history(kc, "statefulset/db") == ["1", "2"] or None, "revision 2")
    second = kc.json("get", "statefulset", "db")["status"]["updateRevision"]
    assert _revisions(kc, "db")[second]["revision"] == 2
    # undo: the revision of the first template comes back as revision 3 (renumbered, not copied)
    out = kc.run("rollout", "undo", "statefulset/db")
    assert "statefulset.apps/db rolled back" in out
    kc.run("rollout", "status", "statefulset/db", "--timeout=90s")
    until(lambda: _revisions(kc, "db").get(first, {}).get("revision") == 3 or None, "first renumbered 3")
    assert set(_revisions(kc, "db")) == {first, second}
    assert _history(kc, "statefulset/db") == ["2", "3"]
    st = kc.json("get", "statefulset", "db")["status"]
    assert st["currentRevision"] == st["updateRevision"] == first
    assert until(lambda: PAUSE not in _images(kc, "db") or None, "pods back at the first template")
    # cascades: the revisions go with their StatefulSet (garbage collector)
    kc.run("delete", "statefulset", "db")
    until(lambda: not _revisions(kc, "db") or None, "revisions deleted with the StatefulSet")


def test_daemonset_history_undo_to_revision_and_limit(box: Box) -> None:
    _, kc = box
    kc.run("create", "-f", "-", stdin=f"""
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: agent}}
spec:
  revisionHistoryLimit: 1
  selector: {{matchLabels: {{app: agent}}}}
  template:{_template("agent")}""")
    kc.run("rollout", "status", "daemonset/agent", "--timeout=60s")
    [first] = until(lambda: _revisions(kc, "agent") or None, "first revision")
    h = _revisions(kc, "agent")[first]["metadata"]["labels"]["controller-revision-hash"]
    pods = kc.json("get", "pods", "-l", "app=agent")["items"]
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods} == {h}
    assert first == f"agent-{h}"
    kc.run("set", "image", "daemonset/agent", f"c={PAUSE}")
    kc.run("rollout", "status", "daemonset/agent", "--timeout=90s")
    kc.run("set", "image", "daemonset/agent", f"c={BUSY}")
    kc.run("rollout", "status", "daemonset/agent", "--timeout=90s")
    # revisionHistoryLimit 1: of the two old revisions (no pod uses them) the oldest is deleted
    until(lambda: _history(kc, "daemonset/agent") == ["2", "3"] or None, "history 2, 3")
    assert first not in _revisions(kc, "agent")
    out = kc.run("rollout", "undo", "daemonset/agent", "--to-revision=2")
    assert "daemonset.apps/agent rolled back" in out
    kc.run("rollout", "status", "daemonset/agent", "--timeout=90s")
    until(lambda: _images(kc, "agent") == {PAUSE} or None, "pods at revision 2's template")
    until(lambda: _history(kc, "daemonset/agent") == ["3", "4"] or None, "revision 2 renumbered 4")


def _parent(kind: str, limit: int, status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
            "spec": {"revisionHistoryLimit": limit, "template": {"metadata": {"labels": {"a": "b"}}}},
            "status": status or {}}


def _rev(name: str, n: int, h: str = "") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "labels": {"controller-revision-hash": h or name},
                         "ownerReferences": [{"uid": "u1", "controller": True}]}, "revision": n}


def _pod(label: str) -> dict[str, Any]:
    return {"metadata": {"labels": {"controller-revision-hash": label},
                         "ownerReferences": [{"uid": "u1", "controller": True}]}}


def test_truncation_spares_live_revisions_as_upstream() -> None:
    # truncateHistory: live = current/update revisions and pods' revisions; the limit counts the rest
    sts = _parent("StatefulSet", 1, {"currentRevision": "p-old1"})
    plan = plan_history(sts, [_rev("p-old1", 1), _rev("p-old2", 2), _rev("p-old3", 3), _rev("p-old4", 4)],
                        [_pod("p-old2")])
    assert [c["revision"] for c in plan.create] == [5]
    assert [r["metadata"]["name"] for r in plan.delete] == ["p-old3"]  # old4 kept (limit 1)
    # cleanupHistory: toKill = len(old) - limit, live pod hashes skipped without counting
    ds = _parent("DaemonSet", 1)
    plan = plan_history(ds, [_rev("p-a", 1, "a"), _rev("p-b", 2, "b"), _rev("p-c", 3, "c")], [_pod("a")])
    assert [r["metadata"]["name"] for r in plan.delete] == ["p-b", "p-c"]
    # a rollback: the current template's revision exists but is older → renumbered max + 1
    from kubesched.apiserver.history import revision_name

    cur = revision_name(ds)
    plan = plan_history(ds, [_rev(cur, 1, cur[2:]), _rev("p-b", 2, "b")], [])
    assert [(r["metadata"]["name"], n) for r, n in plan.renumber] == [(cur, 3)]
    assert not plan.create
    # a negative limit keeps everything
    assert not plan_history(_parent("DaemonSet", -1), [_rev("p-a", 1), _rev("p-b", 2)], []).delete


def test_statefulset_revision_name_is_upstreams(box: Box) -> None:
    """HashControllerRevision over the getPatch bytes + collisionCount: the name the real
    kube-controller-manager v1.37.2 gave this exact StatefulSet (observed: ``web-865bd89565``,
    label ``controller.kubernetes.io/hash: 865bd89565``; Go's JSON escaping of ``<&>`` included)."""
    _, kc = box
    kc.run("create", "-f", "-", stdin="""
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, annotations: {a: "<b>&"}}
spec:
  replicas: 0
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: "nginx:1", env: [{name: X, value: "<&>"}]}]}""")
    [name] = until(lambda: _revisions(kc, "web") or None, "first revision")
    rev = _revisions(kc, "web")[name]
    assert name == "web-865bd89565"
    assert rev["metadata"]["labels"] == {"app": "web", "controller.kubernetes.io/hash": "865bd89565"}
    assert rev["metadata"]["annotations"] == {"a": "<b>&"}
    until(lambda: kc.json("get", "statefulset", "web")["status"].get("updateRevision") == name, "updateRevision")
    assert kc.json("get", "statefulset", "web")["status"]["collisionCount"] == 0  # as upstream writes it
