"""kubesched.controllers.workloadstatus: workload ``.status`` as kube-controller-manager writes it.

``max_unavailable``'s table is upstream's ``TestMaxUnavailable``
(pkg/controller/deployment/util/deployment_util_test.go:996); the rest states upstream's
documented behaviour (sync.go calculateStatus, progress.go syncRolloutStatus,
replica_set_utils.go calculateStatus, job_controller.go's SuccessCriteriaMet → Complete).
The same code is exercised with kubectl in tests/apiserver/test_realism_kubectl.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubesched.controllers.workloadstatus import max_unavailable, workload_statuses

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def _deploy(replicas: int, max_unav: Any, strategy: str = "RollingUpdate") -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": replicas, "strategy": {"type": strategy}}
    if strategy == "RollingUpdate":
        spec["strategy"]["rollingUpdate"] = {"maxSurge": 1, "maxUnavailable": max_unav}
    return {"kind": "Deployment", "spec": spec}


@pytest.mark.parametrize("replicas,mu,strategy,want", [
    (10, 5, "RollingUpdate", 5), (10, 10, "RollingUpdate", 10), (5, 10, "RollingUpdate", 5),
    (0, 10, "RollingUpdate", 0), (10, 5, "Recreate", 0), (10, "50%", "RollingUpdate", 5),
    (10, "100%", "RollingUpdate", 10), (5, "100%", "RollingUpdate", 5),
])
def test_max_unavailable_upstream_table(replicas: int, mu: Any, strategy: str, want: int) -> None:
    assert max_unavailable(_deploy(replicas, mu, strategy)) == want


def test_max_unavailable_defaults_and_both_zero() -> None:
    assert max_unavailable({"spec": {"replicas": 3}}) == 0  # 25% of 3, rounded down
    assert max_unavailable({"spec": {"replicas": 4}}) == 1
    both_zero = {"spec": {"replicas": 4, "strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}}
    assert max_unavailable(both_zero) == 1


def _pod(name: str, owner_uid: str, *, ready: bool, since: datetime = NOW - timedelta(hours=1),
         phase: str = "Running", labels: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    conds = [{"type": "Ready", "status": "True" if ready else "False",
              "lastTransitionTime": since.strftime("%Y-%m-%dT%H:%M:%SZ")}]
    return {"kind": "Pod", "metadata": {"name": name, "labels": labels or {"app": "web"}, **extra,
                                        "ownerReferences": [{"controller": True, "uid": owner_uid}]},
            "spec": {"nodeName": "n1"}, "status": {"phase": phase, "conditions": conds}}


TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}


def _rs(uid: str, replicas: int, owner: str | None = None, min_ready: int = 0) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"web-{uid}", "uid": uid, "generation": 1}
    if owner:
        meta["ownerReferences"] = [{"controller": True, "uid": owner}]
    return {"kind": "ReplicaSet", "metadata": meta,
            "spec": {"replicas": replicas, "minReadySeconds": min_ready, "template": TEMPLATE}}


def test_replicaset_counts_and_min_ready_seconds() -> None:
    rs = _rs("rs1", 3, min_ready=30)
    pods = [_pod("a", "rs1", ready=True), _pod("b", "rs1", ready=True, since=NOW - timedelta(seconds=10)),
            _pod("c", "rs1", ready=False), _pod("d", "rs1", ready=True, phase="Succeeded"),
            _pod("e", "rs1", ready=True, deletionTimestamp="2026-01-01T11:59:00Z")]
    [(_, st)], recheck = workload_statuses([rs], pods, now=NOW)
    # active: a, b, c (d terminal, e terminating); available: Ready for 30 s — only a
    assert st == {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 2, "availableReplicas": 1,
                  "terminatingReplicas": 1, "observedGeneration": 1}
    assert recheck == NOW + timedelta(seconds=20)  # b becomes available then


def test_deployment_conditions_through_a_rollout() -> None:
    d = {"kind": "Deployment", "metadata": {"name": "web", "uid": "d1", "generation": 2},
         "spec": {"replicas": 3, "template": TEMPLATE}}
    rs = _rs("rs1", 3, owner="d1")
    ups, _ = workload_statuses([d, rs], [], now=NOW)  # the ReplicaSet was just created: no pods yet
    st = next(s for w, s in ups if w is d)
    assert [c["type"] for c in st["conditions"]] == ["Progressing", "Available"]
    prog, avail = st["conditions"]
    assert (prog["reason"], prog["message"]) == ("NewReplicaSetCreated", 'Created new replica set "web-rs1"')
    assert (avail["status"], avail["reason"]) == ("False", "MinimumReplicasUnavailable")
    assert st["unavailableReplicas"] == 3 and st["observedGeneration"] == 2
    # a pod appears: updatedReplicas grew → ReplicaSetUpdated, moved last
    d["status"], rs["status"] = st, next(s for w, s in ups if w is rs)
    ups, _ = workload_statuses([d, rs], [_pod("a", "rs1", ready=False)], now=NOW)
    st = next(s for w, s in ups if w is d)
    assert [(c["type"], c["reason"]) for c in st["conditions"]] == [
        ("Available", "MinimumReplicasUnavailable"), ("Progressing", "ReplicaSetUpdated")]
    assert st["conditions"][1]["message"] == 'ReplicaSet "web-rs1" is progressing.'
    # pods get Ready: counts move (ReplicaSetUpdated), then all available → NewReplicaSetAvailable, last
    d["status"], rs["status"] = st, next(s for w, s in ups if w is rs)
    later = NOW + timedelta(seconds=5)
    pods = [_pod(n, "rs1", ready=True) for n in "abc"]
    ups, _ = workload_statuses([d, rs], pods, now=later)
    st = next(s for w, s in ups if w is d)
    assert [c["type"] for c in st["conditions"]] == ["Available", "Progressing"]
    avail, prog = st["conditions"]
    assert (avail["status"], avail["reason"]) == ("True", "MinimumReplicasAvailable")
    assert (prog["reason"], prog["message"]) == ("NewReplicaSetAvailable",
                                                 'ReplicaSet "web-rs1" has successfully progressed.')
    assert prog["lastTransitionTime"] == "2026-01-01T12:00:00Z"  # still True: transition time kept
    assert (st["replicas"], st["updatedReplicas"], st["readyReplicas"], st["availableReplicas"]) == (3, 3, 3, 3)
    assert "unavailableReplicas" not in st
    # nothing changes: no update
    d["status"], rs["status"] = st, next(s for w, s in ups if w is rs)
    assert workload_statuses([d, rs], pods, now=later + timedelta(seconds=5))[0] == []


def test_job_completes_with_success_criteria_met_first() -> None:
    job = {"kind": "Job", "metadata": {"name": "pi", "uid": "j1"}, "spec": {"completions": 2, "parallelism": 2}}
    pods = [_pod("a", "j1", ready=True), _pod("b", "j1", ready=False, phase="Succeeded")]
    [(_, st)], _ = workload_statuses([job], pods, now=NOW)
    assert st == {"startTime": "2026-01-01T12:00:00Z", "active": 1, "succeeded": 1, "terminating": 0,
                  "uncountedTerminatedPods": {}, "ready": 1}
    job["status"] = st
    pods[0]["status"]["phase"] = "Succeeded"
    [(_, st)], _ = workload_statuses([job], pods, now=NOW + timedelta(seconds=3))
    assert [c["type"] for c in st["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert {c["reason"] for c in st["conditions"]} == {"CompletionsReached"}
    assert st["completionTime"] == "2026-01-01T12:00:03Z" and st["startTime"] == "2026-01-01T12:00:00Z"
    assert st["succeeded"] == 2 and "active" not in st


def test_indexed_job_completed_indexes() -> None:
    job = {"kind": "Job", "metadata": {"name": "ix", "uid": "j2"},
           "spec": {"completions": 5, "parallelism": 5, "completionMode": "Indexed"}}
    pods = [_pod(f"p{i}", "j2", ready=False, phase="Succeeded",
                 annotations={"batch.kubernetes.io/job-completion-index": str(i)}) for i in (0, 1, 3)]
    [(_, st)], _ = workload_statuses([job], pods, now=NOW)
    # indexed_job_utils.go:165: a pair of neighbours is written "0,1", a longer run "a-b"
    assert st["completedIndexes"] == "0,1,3" and st["succeeded"] == 3 and "conditions" not in st
    pods.append(_pod("p2", "j2", ready=False, phase="Succeeded",
                     annotations={"batch.kubernetes.io/job-completion-index": "2"}))
    [(_, st)], _ = workload_statuses([job], pods, now=NOW)
    assert st["completedIndexes"] == "0-3"
