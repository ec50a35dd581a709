"""kubesched.apiserver.tables: server-side Tables as pkg/printers/internalversion/printers.go."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubesched.apiserver.tables import human_duration, short_human_duration, to_table

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def ts(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(status: dict[str, Any] | None = None, *, spec: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "creationTimestamp": ts(90), "uid": "u1", "resourceVersion": "7", **meta},
        "spec": spec or {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]},
        "status": status or {"phase": "Pending"},
    }


def cells(resource: str, obj: dict[str, Any]) -> list[Any]:
    return to_table(resource, [obj], now=NOW)["rows"][0]["cells"]


@pytest.mark.parametrize(
    ("seconds", "human", "short"),
    [(0, "0s", "0s"), (-0.5, "0s", "0s"), (-5, "<invalid>", "<invalid>"), (59, "59s", "59s"), (119, "119s", "1m"),
     (150, "2m30s", "2m"), (600, "10m", "10m"), (3 * 3600, "3h", "3h"), (3 * 3600 + 120, "3h2m", "3h"),
     (30 * 3600, "30h", "1d"), (50 * 3600, "2d2h", "2d"), (10 * 86400, "10d", "10d"), (800 * 86400, "2y70d", "2y"),
     (9 * 365 * 86400, "9y", "9y")],
)
def test_durations(seconds: float, human: str, short: str) -> None:
    assert human_duration(seconds) == human
    assert short_human_duration(seconds) == short


def test_pod_columns_and_pending_row() -> None:
    table = to_table("pods", [pod()], now=NOW)
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    names = [(c["name"], c["priority"]) for c in table["columnDefinitions"]]
    assert names == [("Name", 0), ("Ready", 0), ("Status", 0), ("Restarts", 0), ("Age", 0), ("IP", 1), ("Node", 1),
                     ("Nominated Node", 1), ("Readiness Gates", 1)]
    assert table["rows"][0]["cells"] == ["p", "0/2", "Pending", "0", "90s", "<none>", "<none>", "<none>", "<none>"]
    assert table["rows"][0]["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                          "metadata": pod()["metadata"]}


def test_pod_container_creating_running_nominated() -> None:
    status = {"phase": "Pending", "nominatedNodeName": "n2", "containerStatuses": [
        {"name": "a", "ready": False, "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}},
        {"name": "b", "ready": False, "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}]}
    assert cells("pods", pod(status))[:3] == ["p", "0/2", "ContainerCreating"]
    assert cells("pods", pod(status))[7] == "n2"
    running = {"phase": "Running", "podIPs": [{"ip": "10.0.0.5"}], "containerStatuses": [
        {"name": "a", "ready": True, "restartCount": 2, "state": {"running": {}},
         "lastState": {"terminated": {"exitCode": 1, "finishedAt": ts(300)}}},
        {"name": "b", "ready": True, "restartCount": 0, "state": {"running": {}}}]}
    spec = {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"}
    assert cells("pods", pod(running, spec=spec)) == ["p", "2/2", "Running", "2 (5m ago)", "90s", "10.0.0.5", "n1", "<none>", "<none>"]


def test_pod_completed_and_completed_with_running_container() -> None:
    done = {"phase": "Succeeded", "containerStatuses": [
        {"name": "a", "ready": False, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}
    table = to_table("pods", [pod(done, spec={"containers": [{"name": "a"}]})], now=NOW)
    assert table["rows"][0]["cells"][:3] == ["p", "0/1", "Completed"]
    assert table["rows"][0]["conditions"] == [{"type": "Completed", "status": "True", "reason": "Succeeded",
                                                "message": "The pod has completed successfully."}]
    mixed = {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}], "containerStatuses": [
        {"name": "a", "ready": False, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
        {"name": "b", "ready": True, "state": {"running": {}}}]}
    assert cells("pods", pod(mixed))[1:3] == ["1/2", "NotReady"]
    mixed["conditions"] = [{"type": "Ready", "status": "True"}]
    assert cells("pods", pod(mixed))[2] == "Running"


def test_pod_error_exit_code_and_terminating_and_gated() -> None:
    crashed = {"phase": "Running", "containerStatuses": [{"name": "a", "state": {"terminated": {"exitCode": 137}}}]}
    assert cells("pods", pod(crashed, spec={"containers": [{"name": "a"}]}))[2] == "ExitCode:137"
    assert cells("pods", pod({"phase": "Running"}, deletionTimestamp=ts(1)))[2] == "Terminating"
    assert cells("pods", pod({"phase": "Succeeded"}, deletionTimestamp=ts(1)))[2] == "Succeeded"
    gated = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}
    assert cells("pods", pod(gated))[2] == "SchedulingGated"


def test_pod_init_containers() -> None:
    spec = {"initContainers": [{"name": "i1"}, {"name": "i2"}], "containers": [{"name": "a"}]}
    status = {"phase": "Pending", "initContainerStatuses": [
        {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
        {"name": "i2", "state": {"waiting": {"reason": "PodInitializing"}}}]}
    assert cells("pods", pod(status, spec=spec))[1:3] == ["0/1", "Init:1/2"]
    status["initContainerStatuses"][1] = {"name": "i2", "state": {"waiting": {"reason": "ImagePullBackOff"}}}
    assert cells("pods", pod(status, spec=spec))[2] == "Init:ImagePullBackOff"
    status["initContainerStatuses"][1] = {"name": "i2", "state": {"terminated": {"exitCode": 2}}}
    assert cells("pods", pod(status, spec=spec))[2] == "Init:ExitCode:2"
    sidecar = {"initContainers": [{"name": "s", "restartPolicy": "Always"}], "containers": [{"name": "a"}]}
    st = {"phase": "Running", "conditions": [{"type": "Initialized", "status": "True"}],
          "initContainerStatuses": [{"name": "s", "started": True, "ready": True, "state": {"running": {}}}],
          "containerStatuses": [{"name": "a", "ready": True, "state": {"running": {}}}]}
    assert cells("pods", pod(st, spec=sidecar))[1:3] == ["2/2", "Running"]


def test_readiness_gates() -> None:
    spec = {"containers": [{"name": "a"}], "readinessGates": [{"conditionType": "x/ok"}, {"conditionType": "x/two"}]}
    status = {"phase": "Running", "conditions": [{"type": "x/ok", "status": "True"}]}
    assert cells("pods", pod(status, spec=spec))[8] == "1/2"


def node(**over: Any) -> dict[str, Any]:
    n: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "n1", "creationTimestamp": ts(3 * 86400),
                     "labels": {"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/worker": "",
                                "kubernetes.io/role": "edge"}},
        "spec": {},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
                   "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "Hostname", "address": "n1"}],
                   "nodeInfo": {"kubeletVersion": "v1.34.0", "osImage": "Ubuntu", "kernelVersion": "6.8", "containerRuntimeVersion": "containerd://2.0"}},
    }
    n.update(over)
    return n


def test_node_row() -> None:
    table = to_table("nodes", [node()], now=NOW)
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"]
    assert table["rows"][0]["cells"] == ["n1", "Ready", "control-plane,edge,worker", "3d", "v1.34.0", "10.0.0.1", "<none>",
                                         "Ubuntu", "6.8", "containerd://2.0"]


def test_node_cordoned_not_ready_unknown() -> None:
    n = node(spec={"unschedulable": True})
    assert cells("nodes", n)[1] == "Ready,SchedulingDisabled"
    n["status"]["conditions"] = [{"type": "Ready", "status": "Unknown"}]
    assert cells("nodes", n)[1] == "NotReady,SchedulingDisabled"
    bare = {"metadata": {"name": "n2"}, "status": {}}
    assert cells("nodes", bare) == ["n2", "Unknown", "<none>", "<unknown>", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"]


def test_events_core_and_events_api() -> None:
    core = {"metadata": {"name": "p.1"}, "type": "Warning", "reason": "FailedScheduling",
            "involvedObject": {"kind": "Pod", "name": "p"}, "source": {"component": "default-scheduler"},
            "message": " 0/3 nodes are available ", "firstTimestamp": ts(600), "lastTimestamp": ts(60), "count": 4}
    assert cells("events", core) == ["60s", "Warning", "FailedScheduling", "pod/p", "", "default-scheduler",
                                     "0/3 nodes are available", "10m", 4, "p.1"]
    new = {"metadata": {"name": "p.2"}, "type": "Normal", "reason": "Scheduled", "regarding": {"kind": "Pod", "name": "p"},
           "reportingController": "default-scheduler", "reportingInstance": "sched-1", "note": "Successfully assigned",
           "eventTime": ts(30)}
    assert cells("events", new) == ["30s", "Normal", "Scheduled", "pod/p", "", "default-scheduler, sched-1",
                                    "Successfully assigned", "30s", 1, "p.2"]
    stored_core = {"metadata": {"name": "p.3"}, "involvedObject": {"kind": "Pod", "name": "p"}, "source": {},
                   "reportingComponent": "default-scheduler", "reportingInstance": "sched-1", "eventTime": ts(30)}
    assert cells("events", stored_core)[5] == "default-scheduler, sched-1"


def test_other_printers_and_fallback() -> None:
    dep = {"metadata": {"name": "web", "creationTimestamp": ts(5)}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
           "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
           "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}
    assert cells("deployments", dep) == ["web", "2/3", 3, 2, "5s", "c", "nginx", "app=web"]
    pcl = {"metadata": {"name": "high", "creationTimestamp": ts(5)}, "value": 1000, "globalDefault": False, "preemptionPolicy": "Never"}
    assert cells("priorityclasses", pcl) == ["high", 1000, False, "5s", "Never"]
    assert cells("leases", {"metadata": {"name": "kube-scheduler"}, "spec": {"holderIdentity": "me"}}) == ["kube-scheduler", "me", "<unknown>"]
    assert cells("namespaces", {"metadata": {"name": "default", "creationTimestamp": ts(5)}, "status": {"phase": "Active"}}) == ["default", "Active", "5s"]
    table = to_table("widgets", [{"metadata": {"name": "w", "creationTimestamp": ts(5)}}], now=NOW)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert table["rows"][0]["cells"] == ["w", "5s"]


def test_include_object_modes() -> None:
    p = pod()
    assert to_table("pods", [p], now=NOW, include_object="None")["rows"][0]["object"] is None
    assert to_table("pods", [p], now=NOW, include_object="Object")["rows"][0]["object"] == p
    with pytest.raises(ValueError):
        to_table("pods", [p], now=NOW, include_object="Everything")
    t = to_table("pods", [], now=NOW, list_meta={"resourceVersion": "9", "continue": "abc"})
    assert t["metadata"] == {"resourceVersion": "9", "continue": "abc"} and t["rows"] == []
