"""The Deployment and ReplicaSet controllers' pure pieces (:mod:`kubesched.controllers.deployments`) and
the rollout steps of :class:`kubesched.controllers.workloads.Controllers`, on cases ported from
upstream's tables (k8s.io/kubernetes@v1.37.2): ``deployment/rolling_test.go``
(TestDeploymentController_reconcileNewReplicaSet / _reconcileOldReplicaSets),
``deployment/util/deployment_util_test.go`` (TestResolveFenceposts, TestNewRSNewReplicas) and
``controller_utils_test.go`` (TestSortingActivePodsWithRanks)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubesched.controllers import deployments as dep
from kubesched.controllers.workloads import Controllers

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _d(replicas: int, surge: Any = "25%", unavailable: Any = "25%", kind: str = "RollingUpdate") -> dict[str, Any]:
    strategy: dict[str, Any] = {"type": kind}
    if kind == "RollingUpdate":
        strategy["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    return {"kind": "Deployment", "metadata": {"name": "foo"}, "spec": {"replicas": replicas, "strategy": strategy}}


def _rs(name: str, replicas: int) -> dict[str, Any]:
    return {"kind": "ReplicaSet", "metadata": {"name": name}, "spec": {"replicas": replicas}}


@pytest.mark.parametrize(("surge", "unavailable", "desired", "want"), [
    # TestResolveFenceposts
    ("0%", "0%", 0, (0, 1)),
    ("39%", "39%", 10, (4, 3)),
    # the defaults: surge rounded up, unavailable rounded down
    ("25%", "25%", 4, (1, 1)),
    ("25%", "25%", 2, (1, 0)),
    (0, 0, 10, (0, 1)),
])
def test_resolve_fenceposts(surge: Any, unavailable: Any, desired: int, want: tuple[int, int]) -> None:
    assert dep.resolve_fenceposts(_d(desired, surge, unavailable)) == want


@pytest.mark.parametrize(("strategy", "dep_replicas", "surge", "old", "new", "want"), [
    # TestNewRSNewReplicas: (test name) → expected new ReplicaSet size
    ("RollingUpdate", 10, 3, 5, 0, 8),       # can not scale up - to newRSReplicas
    ("RollingUpdate", 10, 3, 5, 5, 8),       # scale up - to newRSReplicas
    ("RollingUpdate", 10, 3, 10, 3, 3),      # can not scale up - already at max
    ("Recreate", 10, 3, 5, 0, 10),           # Recreate: the Deployment's replicas
])
def test_new_rs_new_replicas(strategy: str, dep_replicas: int, surge: int, old: int, new: int, want: int) -> None:
    d = _d(dep_replicas, surge, 0, strategy)
    assert dep.new_rs_new_replicas(d, [_rs("old", old), _rs("new", new)], new) == want


def _scaler() -> tuple[dict[str, int], Any]:
    done: dict[str, int] = {}

    def scale(rs: dict[str, Any], n: int, force: bool = False) -> bool:
        changed = dep.replicas(rs) != n
        rs["spec"]["replicas"] = n
        if changed:
            done[rs["metadata"]["name"]] = n
        return changed

    return done, scale


@pytest.mark.parametrize(("replicas", "surge", "old", "new", "expected"), [
    (10, 0, 10, 0, None),
    (10, 2, 10, 0, 2),
    (10, 2, 5, 0, 7),
    (10, 2, 10, 2, None),
    (10, 2, 2, 11, 10),  # scales down
])
def test_reconcile_new_replica_set(replicas: int, surge: int, old: int, new: int, expected: int | None) -> None:
    done, scale = _scaler()
    new_rs = _rs("foo-new", new)
    scaled = Controllers._reconcile_new(_d(replicas, surge, 0), new_rs, [_rs("foo-old", old)], scale)
    assert scaled == (expected is not None)
    if expected is not None:
        assert done == {"foo-new": expected}


@pytest.mark.parametrize(("replicas", "unavailable", "old", "new", "ready_old", "ready_new", "expected_old"), [
    (10, 0, 10, 0, 10, 0, 9),
    (10, 2, 10, 0, 10, 0, 8),
    (10, 2, 10, 0, 8, 0, 8),   # the unhealthy old replicas are cleaned up
    (10, 2, 10, 0, 9, 0, 8),   # one unhealthy cleaned up, one ready scaled down
    (10, 2, 8, 2, 8, 0, None),  # the new ReplicaSet's unavailable pods block further scale-down
])
def test_reconcile_old_replica_sets(replicas: int, unavailable: int, old: int, new: int, ready_old: int,
                                    ready_new: int, expected_old: int | None) -> None:
    done, scale = _scaler()
    old_rs, new_rs = _rs("foo-old", old), _rs("foo-new", new)
    available = {id(old_rs): ready_old, id(new_rs): ready_new}
    scaled = Controllers._reconcile_old(_d(replicas, 0, unavailable), new_rs, [old_rs], scale,
                                        lambda rs: available[id(rs)], False)
    assert scaled == (expected_old is not None)
    if expected_old is not None:
        assert old_rs["spec"]["replicas"] == expected_old


def _pod(name: str, node: str, phase: str, ready: bool, restarts: int = 0, side_restarts: int = 0,
         ready_since: datetime | None = None, created: datetime | None = None,
         annotations: dict[str, str] | None = None) -> dict[str, Any]:
    def ts(t: datetime | None) -> str | None:
        return t.strftime("%Y-%m-%dT%H:%M:%SZ") if t else None

    status: dict[str, Any] = {"phase": phase}
    if ready:
        status["conditions"] = [{"type": "Ready", "status": "True", "lastTransitionTime": ts(ready_since)}]
        status["containerStatuses"] = [{"restartCount": restarts}]
        status["initContainerStatuses"] = [{"name": "sidecar", "restartCount": side_restarts}]
    meta: dict[str, Any] = {"name": name, "creationTimestamp": ts(created)}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": {"nodeName": node, "initContainers": [{"name": "sidecar",
                                                                               "restartPolicy": "Always"}]},
            "status": status}


MONTH = NOW - timedelta(days=30)
PODS = {
    "unscheduled": _pod("unscheduled", "", "Pending", False),
    "pending": _pod("pending", "node", "Pending", False),
    "unknown": _pod("unknown-phase", "node", "Unknown", False),
    "not-ready": _pod("not-ready", "node", "Running", False),
    "ready-no-ltt": _pod("ready-no-last-transition-time", "node", "Running", True),
    "ready-now": _pod("ready-now", "node", "Running", True, ready_since=NOW, created=NOW),
    "ready-then": _pod("ready-then", "node", "Running", True, ready_since=MONTH, created=MONTH),
    "high-restarts": _pod("ready-high-restarts", "node", "Running", True, 9001, 0, NOW, NOW),
    "high-side-restarts": _pod("ready-high-restarts", "node", "Running", True, 9001, 9001, NOW, NOW),
    "created-then": _pod("ready-now-created-then", "node", "Running", True, ready_since=NOW, created=MONTH),
    "low-cost": _pod("low-deletion-cost", "node", "Running", True, ready_since=NOW, created=MONTH,
                     annotations={"controller.kubernetes.io/pod-deletion-cost": "10"}),
    "high-cost": _pod("high-deletion-cost", "node", "Running", True, ready_since=NOW, created=MONTH,
                      annotations={"controller.kubernetes.io/pod-deletion-cost": "100"}),
}


@pytest.mark.parametrize(("lesser", "greater", "cost"), [
    (("unscheduled", 1), ("pending", 2), True),
    (("unscheduled", 2), ("pending", 1), True),
    (("pending", 1), ("unknown", 2), True),
    (("unknown", 1), ("not-ready", 2), True),
    (("not-ready", 1), ("ready-no-ltt", 1), True),
    (("ready-no-ltt", 1), ("ready-now", 1), True),
    (("ready-now", 2), ("ready-no-ltt", 1), True),
    (("ready-now", 1), ("ready-then", 1), True),
    (("ready-now", 2), ("ready-then", 1), True),
    (("high-restarts", 1), ("ready-now", 1), True),
    (("high-side-restarts", 1), ("high-restarts", 1), True),
    (("ready-now", 2), ("high-restarts", 1), True),
    (("ready-now", 1), ("created-then", 1), True),
    (("created-then", 2), ("ready-now", 1), True),
    (("low-cost", 2), ("high-cost", 1), True),
    (("high-cost", 2), ("low-cost", 1), False),
])
def test_active_pods_with_ranks_order(lesser: tuple[str, int], greater: tuple[str, int], cost: bool) -> None:
    a, b = (PODS[lesser[0]], lesser[1]), (PODS[greater[0]], greater[1])
    assert dep._less(a, b, NOW, cost)
    assert not dep._less(b, a, NOW, cost)


@pytest.mark.parametrize("name", ["unscheduled", "pending", "not-ready", "ready-now", "ready-then"])
def test_active_pods_with_ranks_equal_to_themselves(name: str) -> None:
    assert not dep._less((PODS[name], 1), (PODS[name], 1), NOW, True)


def test_pods_to_delete_prefers_doubled_up_nodes() -> None:
    """getPodsRankedByRelatedPodsOnSameNode: among equal pods, the one sharing its node with more
    related pods goes first."""
    a = _pod("a", "n1", "Running", True, ready_since=MONTH, created=MONTH)
    b = _pod("b", "n2", "Running", True, ready_since=MONTH, created=MONTH)
    other = _pod("c", "n2", "Running", True, ready_since=MONTH, created=MONTH)
    assert [p["metadata"]["name"] for p in dep.pods_to_delete([a, b], [a, b, other], 1, now=NOW)] == ["b"]


def test_new_rs_annotations_revision_history() -> None:
    """SetNewReplicaSetAnnotations: an old ReplicaSet brought back (rollout undo) takes the next
    revision and remembers its former ones; the Deployment's annotations are copied but for the
    skipped ones."""
    d = {"metadata": {"annotations": {"kubernetes.io/change-cause": "undo", REV: "2"}},
         "spec": {"replicas": 3}}
    rs = {"metadata": {"annotations": {REV: "1"}}, "spec": {"replicas": 0}}
    assert dep.set_new_rs_annotations(d, rs, 3, exists=True)
    ann = rs["metadata"]["annotations"]
    assert ann == {REV: "3", "deployment.kubernetes.io/revision-history": "1", "kubernetes.io/change-cause": "undo"}
    dep.set_new_rs_annotations(d, rs, 5, exists=True)
    assert ann["deployment.kubernetes.io/revision-history"] == "1,3"


REV = "deployment.kubernetes.io/revision"
