"""The workload API in the box: ``scheduling.k8s.io/v1beta1`` workloads and podgroups (+/status)
served only with GenericWorkload, admission (defaults, Priority, PodGroupProtection), the status
subresource, Tables as kube-apiserver v1.37.2's printers, kubectl against it, and the
PodGroupProtection / Job controllers of the simulated cluster.

Expected values are those of the real kube-apiserver v1.37.2 (``kubectl get podgroups`` columns
``NAME POLICY WORKLOAD STATUS AGE``; a new PodGroup gets ``disruptionMode: {single: {}}``,
``priority: 0`` and the ``scheduling.k8s.io/podgroup-protection`` finalizer, ``status: {}``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver_helpers import Client

from kubesched.apiserver.launcher import ServerHandle, run_server
from kubesched.features import FeatureGate

ON = FeatureGate().with_overrides(GenericWorkload=True, PodGroupPreemptionPolicy=True)
NS = "/apis/scheduling.k8s.io/v1beta1/namespaces/default"
KUBECTL = shutil.which("kubectl")


def pg(name: str = "pg1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"workloadRef": {"workloadName": "w1", "templateName": "t1"},
                     "schedulingPolicy": {"gang": {"minCount": 4}}, **spec}}


@pytest.fixture
def on(tmp_path: Path) -> Iterator[ServerHandle]:
    with run_server(tmp_path / "kubeconfig", features=ON) as s:
        yield s


def test_not_served_without_generic_workload(srv: ServerHandle) -> None:
    c = Client.of(srv)
    assert c.req("GET", "/apis/scheduling.k8s.io/v1beta1")[0] == 404
    assert c.req("POST", f"{NS}/podgroups", pg())[0] == 404
    group = c.get("/apis/scheduling.k8s.io")
    assert [v["version"] for v in group["versions"]] == ["v1"]


def test_discovery(on: ServerHandle) -> None:
    c = Client.of(on)
    group = c.get("/apis/scheduling.k8s.io")
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
    assert group["preferredVersion"]["version"] == "v1"
    names = [r["name"] for r in c.get("/apis/scheduling.k8s.io/v1beta1")["resources"]]
    assert names == ["podgroups", "podgroups/status", "workloads"]


def test_create_defaults_admission_and_status_cleared(on: ServerHandle) -> None:
    c = Client.of(on)
    obj = pg()
    obj["status"] = {"conditions": [{"type": "X", "status": "True", "reason": "R", "message": "m",
                                     "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
    out = c.create(f"{NS}/podgroups", obj)
    assert out["spec"] == {"workloadRef": {"workloadName": "w1", "templateName": "t1"},
                           "schedulingPolicy": {"gang": {"minCount": 4}}, "disruptionMode": {"single": {}},
                           "priority": 0, "preemptionPolicy": "PreemptLowerPriority"}
    assert out["status"] == {}
    assert out["metadata"]["finalizers"] == ["scheduling.k8s.io/podgroup-protection"]
    assert "generation" not in out["metadata"]


def test_validation_and_forbidden(on: ServerHandle) -> None:
    c = Client.of(on)
    code, body = c.req("POST", f"{NS}/podgroups", pg(schedulingPolicy={"gang": {"minCount": -1}}))
    assert code == 422
    assert body["message"] == ('PodGroup.scheduling.k8s.io "pg1" is invalid: spec.schedulingPolicy.gang.minCount: '
                               "Invalid value: -1: must be greater than or equal to 1")
    assert body["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "spec.schedulingPolicy.gang.minCount",
                                          "message": "Invalid value: -1: must be greater than or equal to 1"}]
    code, body = c.req("POST", f"{NS}/podgroups", pg(priority=5))
    assert (code, body["reason"]) == (403, "Forbidden")
    assert body["message"] == ('podgroups.scheduling.k8s.io "pg1" is forbidden: priority set in the pod group (5) '
                               "must match the priority computed (0) based on the priority class set in the spec")


def test_updates_min_count_mutable_rest_immutable(on: ServerHandle) -> None:
    c = Client.of(on)
    c.create(f"{NS}/podgroups", pg())
    merge = "application/merge-patch+json"
    code, body = c.req("PATCH", f"{NS}/podgroups/pg1", {"spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}},
                       ctype=merge)
    assert code == 200 and body["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}
    code, body = c.req("PATCH", f"{NS}/podgroups/pg1", {"spec": {"workloadRef": {"workloadName": "w2"}}}, ctype=merge)
    assert code == 422
    assert body["message"] == ('PodGroup.scheduling.k8s.io "pg1" is invalid: spec.workloadRef: Invalid value: null: '
                               "field is immutable")
    # status written on the main resource is ignored
    code, body = c.req("PATCH", f"{NS}/podgroups/pg1", {"status": {"conditions": [
        {"type": "A", "status": "True", "reason": "R", "message": "", "lastTransitionTime": "2024-01-01T00:00:00Z"}]}},
        ctype=merge)
    assert code == 200 and body["status"] == {}


def test_status_subresource(on: ServerHandle) -> None:
    c = Client.of(on)
    c.create(f"{NS}/podgroups", pg())
    cond = {"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled", "message": "",
            "lastTransitionTime": "2024-01-01T00:00:00Z"}
    code, body = c.req("PATCH", f"{NS}/podgroups/pg1/status",
                       {"status": {"conditions": [cond]}, "spec": {"schedulingPolicy": {"gang": {"minCount": 9}}},
                        "metadata": {"labels": {"x": "y"}}}, ctype="application/merge-patch+json")
    assert code == 200
    assert body["status"]["conditions"] == [cond]
    assert body["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}  # spec ignored on status writes
    assert "labels" not in body["metadata"]
    code, body = c.req("PATCH", f"{NS}/podgroups/pg1/status",
                       {"status": {"conditions": [{**cond, "status": "Maybe"}]}}, ctype="application/merge-patch+json")
    assert code == 422
    assert body["message"].endswith('status.conditions[0].status: Unsupported value: "Maybe": supported values: '
                                    '"False", "True", "Unknown"')


def test_table(on: ServerHandle) -> None:
    c = Client.of(on)
    c.create(f"{NS}/podgroups", pg())
    c.create(f"{NS}/podgroups", {**pg("basic", schedulingPolicy={"basic": {}})})
    c.req("PATCH", f"{NS}/podgroups/pg1/status", {"status": {"conditions": [
        {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable", "message": "m",
         "lastTransitionTime": "2024-01-01T00:00:00Z"}]}}, ctype="application/merge-patch+json")
    code, table = c.req("GET", f"{NS}/podgroups", accept="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert code == 200
    assert [col["name"] for col in table["columnDefinitions"]] == ["Name", "Policy", "Workload", "Status", "Age"]
    cells = {r["cells"][0]: r["cells"][1:4] for r in table["rows"]}
    assert cells == {"pg1": ["Gang", "w1", "Unschedulable"], "basic": ["Basic", "w1", "Pending"]}
    code, table = c.req("GET", f"{NS}/workloads", accept="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert [col["name"] for col in table["columnDefinitions"]] == ["Name", "Age"]


def test_workload_serves_null_constraints(on: ServerHandle) -> None:
    """``PodGroupTemplate.schedulingConstraints`` has no omitempty: the API serves null."""
    c = Client.of(on)
    out = c.create(f"{NS}/workloads", {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
                                       "metadata": {"name": "w1"},
                                       "spec": {"podGroupTemplates": [
                                           {"name": "t1", "schedulingPolicy": {"basic": {}}}]}})
    assert out["spec"]["podGroupTemplates"] == [{"name": "t1", "schedulingPolicy": {"basic": {}},
                                                 "schedulingConstraints": None}]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on the PATH")
def test_kubectl_apply_and_get_podgroups(on: ServerHandle, tmp_path: Path) -> None:
    assert KUBECTL is not None and on.kubeconfig_path is not None
    env = {**os.environ, "KUBECONFIG": str(on.kubeconfig_path), "HOME": str(tmp_path)}

    def kubectl(*args: str, stdin: str | None = None) -> str:
        p = subprocess.run([KUBECTL, "--cache-dir", str(tmp_path / "cache"), *args], input=stdin,
                           capture_output=True, text=True, env=env, timeout=120, check=False)
        assert p.returncode == 0, p.stderr
        return p.stdout

    manifest = """apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: pg1, namespace: default}
spec:
  schedulingPolicy: {gang: {minCount: 4}}
  workloadRef: {workloadName: w1, templateName: t1}
"""
    assert kubectl("apply", "-f", "-", stdin=manifest).strip() == "podgroup.scheduling.k8s.io/pg1 created"
    lines = kubectl("get", "podgroups").splitlines()
    assert lines[0].split() == ["NAME", "POLICY", "WORKLOAD", "STATUS", "AGE"]
    assert lines[1].split()[:4] == ["pg1", "Gang", "w1", "Pending"]
    assert "podgroup.scheduling.k8s.io/pg1 configured" in kubectl(
        "apply", "-f", "-", stdin=manifest.replace("minCount: 4", "minCount: 3"))


def test_protection_controller_removes_finalizer(tmp_path: Path) -> None:
    with run_server(tmp_path / "kubeconfig", features=ON, simulate_kubelets=True) as s:
        c = Client.of(s)
        c.create(f"{NS}/podgroups", pg())
        c.create("/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "m"},
            "spec": {"schedulingGroup": {"podGroupName": "pg1"}, "containers": [{"name": "c", "image": "x"}]}})
        assert c.req("DELETE", f"{NS}/podgroups/pg1")[0] == 200
        time.sleep(0.5)
        code, body = c.req("GET", f"{NS}/podgroups/pg1")
        assert code == 200 and body["metadata"].get("deletionTimestamp")  # a member still names it
        c.req("DELETE", "/api/v1/namespaces/default/pods/m?gracePeriodSeconds=0")
        deadline = time.monotonic() + 10
        while c.req("GET", f"{NS}/podgroups/pg1")[0] != 404:
            assert time.monotonic() < deadline, "the finalizer was not removed"
            time.sleep(0.1)


def test_job_controller_creates_workload_and_pod_group(tmp_path: Path) -> None:
    features = ON.with_overrides(WorkloadWithJob=True)
    with run_server(tmp_path / "kubeconfig", features=features, simulate_kubelets=True) as s:
        c = Client.of(s)
        c.create("/apis/batch/v1/namespaces/default/jobs", {
            "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"},
            "spec": {"parallelism": 2, "completions": 2, "scheduling": {"schedulingPolicy": {"gang": {}}},
                     "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}})
        deadline = time.monotonic() + 10
        while True:
            pods = c.get("/api/v1/namespaces/default/pods")["items"]
            if len(pods) == 2:
                break
            assert time.monotonic() < deadline
            time.sleep(0.1)
        (wl,) = c.get(f"{NS}/workloads")["items"]
        (group,) = c.get(f"{NS}/podgroups")["items"]
        assert wl["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"gang": {"minCount": 2}}
        refs = {r["kind"]: r["uid"] for r in group["metadata"]["ownerReferences"]}
        assert refs["Workload"] == wl["metadata"]["uid"]
        assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {group["metadata"]["name"]}
        reasons = {e["reason"] for e in c.get("/api/v1/namespaces/default/events")["items"]}
        assert {"WorkloadCreated", "PodGroupCreated"} <= reasons
