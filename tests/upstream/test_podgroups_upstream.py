"""The box's workload API answers as the real kube-apiserver v1.37.2 does, request for request.

A real etcd + kube-apiserver is started with GenericWorkload, TopologyAwareWorkloadScheduling,
PodGroupPreemptionPolicy, CompositePodGroup, WorkloadWithJob and DRAWorkloadResourceClaims on
and ``--runtime-config=scheduling.k8s.io/v1beta1=true,scheduling.k8s.io/v1alpha3=true`` (beta
APIs are off by default in kube-apiserver; the box serves v1beta1 with the gate alone); the box
gets the same gates. Each request goes to both; the status code and the message (errors) or the
stored spec, status and finalizers (successes) must be equal. Skipped without ``make upstream``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.apiserver.launcher import ServerHandle, run_server
from kubesched.features import FeatureGate
from kubesched.testing.upstream import ControlPlane, UpstreamNotBuilt, find_binaries, http_request

GATES = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True, "PodGroupPreemptionPolicy": True,
         "CompositePodGroup": True, "WorkloadWithJob": True, "DRAWorkloadResourceClaims": True}
NS = "/apis/scheduling.k8s.io/v1beta1/namespaces/default"
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def real() -> Iterator[ControlPlane]:
    try:
        binaries = find_binaries("1.37")
    except UpstreamNotBuilt as e:
        pytest.skip(str(e))
    cp = ControlPlane.start(binaries=binaries, feature_gates=GATES, extra_apiserver_args=[
        "--runtime-config=scheduling.k8s.io/v1beta1=true,scheduling.k8s.io/v1alpha3=true"])
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    with run_server(tmp_path_factory.mktemp("box") / "kubeconfig",
                    features=FeatureGate().with_overrides(**GATES)) as srv:
        yield srv


Req = Callable[..., tuple[int, Any]]


@pytest.fixture(scope="module")
def both(real: ControlPlane, box: ServerHandle) -> Callable[..., tuple[Any, Any]]:
    def to_real(method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        code, _, out = real.request(method, path, body, headers=headers)
        return code, out

    def to_box(method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        code, _, out = http_request(box.url + path, box.token, box.ssl_context(), method, body, headers=headers)
        return code, out

    def norm(r: tuple[int, Any]) -> Any:
        code, body = r
        if code >= 300:
            return code, body.get("message")
        return (code, body.get("spec"), body.get("status"), sorted(body["metadata"].get("finalizers") or []))

    def call(method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[Any, Any]:
        return norm(to_real(method, path, copy.deepcopy(body), headers)), \
            norm(to_box(method, path, copy.deepcopy(body), headers))

    pcs = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "never"},
            "value": 100, "preemptionPolicy": "Never"},
           {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
            "value": 1000}]
    for pc in pcs:
        for req in (to_real, to_box):
            req("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", pc)
    return call


def pg(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "x", "namespace": "default"},
            "spec": {"workloadRef": {"workloadName": "w", "templateName": "t"},
                     "schedulingPolicy": {"gang": {"minCount": 5}}, **spec}}


PG_CASES: dict[str, dict[str, Any]] = {
    "valid": pg(),
    "status dropped": {**pg(), "status": {"conditions": [{"type": "X", "status": "True", "reason": "R", "message": "m",
                                                          "lastTransitionTime": "2024-01-01T00:00:00Z"}]}},
    "negative minCount": pg(schedulingPolicy={"gang": {"minCount": -1}}),
    "zero minCount": pg(schedulingPolicy={"gang": {"minCount": 0}}),
    "two policies": pg(schedulingPolicy={"gang": {"minCount": 1}, "basic": {}}),
    "no policy": pg(schedulingPolicy={}),
    "two topology constraints": pg(schedulingConstraints={"topology": [{"key": "a"}, {"key": "b"}]}),
    "bad topology key": pg(schedulingConstraints={"topology": [{"key": "foo-"}]}),
    "both disruption modes": pg(disruptionMode={"single": {}, "all": {}}),
    "missing class": pg(priorityClassName="nope"),
    "priority mismatch": pg(priorityClassName="high", priority=5),
    "class Never without policy": pg(priorityClassName="never"),
    "class Never with policy": pg(priorityClassName="never", preemptionPolicy="Never"),
    "bad workloadRef": pg(workloadRef={"workloadName": "W/x", "templateName": "t" * 64}),
    "five claims": pg(resourceClaims=[{"name": f"c{i}", "resourceClaimName": "x"} for i in range(5)]),
    "duplicate claims": pg(resourceClaims=[{"name": "c", "resourceClaimName": "x"},
                                           {"name": "c", "resourceClaimName": "y"}]),
    "claim without source": pg(resourceClaims=[{"name": "c"}]),
    "wrong type": pg(schedulingPolicy={"gang": {"minCount": "x"}}),
}


@pytest.mark.parametrize("case", list(PG_CASES))
def test_pod_group_create(both: Callable[..., tuple[Any, Any]], case: str) -> None:
    real, box = both("POST", f"{NS}/podgroups?dryRun=All", PG_CASES[case])
    assert box == real


def wl(**spec: Any) -> dict[str, Any]:
    base = {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "j"},
            "podGroupTemplates": [{"name": "t1", "schedulingPolicy": {"gang": {"minCount": 2}}}]}
    base.update(spec)
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
            "metadata": {"name": "w", "namespace": "default"}, "spec": {k: v for k, v in base.items() if v is not None}}


def t(name: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "schedulingPolicy": {"basic": {}}, **kw}


WL_CASES: dict[str, dict[str, Any]] = {
    "valid": wl(),
    "no templates": wl(podGroupTemplates=[]),
    "nine templates": wl(podGroupTemplates=[t(f"t{i}") for i in range(9)]),
    "duplicate template": wl(podGroupTemplates=[t("a"), t("a")]),
    "bad template name": wl(podGroupTemplates=[t("A_")]),
    "mixed priorities": wl(podGroupTemplates=[t("a", priority=1), t("b")]),
    "bad preemptionPolicy": wl(podGroupTemplates=[t("a", preemptionPolicy="Bad")]),
    "bad controllerRef": wl(controllerRef={"apiGroup": "B_", "kind": "J/b", "name": "x/y"}),
    "both lists": wl(compositePodGroupTemplates=[t("c", podGroupTemplates=[t("x")])]),
    "composite without child": wl(podGroupTemplates=None, compositePodGroupTemplates=[t("c")]),
    "composite duplicate name": wl(podGroupTemplates=None, compositePodGroupTemplates=[t("c", podGroupTemplates=[
        t("c")])]),
    "composite priority": wl(podGroupTemplates=None, compositePodGroupTemplates=[t("c", priority=1,
                                                                                   podGroupTemplates=[t("x")])]),
}


@pytest.mark.parametrize("case", list(WL_CASES))
def test_workload_create(both: Callable[..., tuple[Any, Any]], case: str) -> None:
    real, box = both("POST", f"{NS}/workloads?dryRun=All", WL_CASES[case])
    assert box == real


UPDATES: dict[str, dict[str, Any]] = {
    "minCount": {"spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}},
    "gang to basic": {"spec": {"schedulingPolicy": {"gang": None, "basic": {}}}},
    "workloadRef": {"spec": {"workloadRef": {"workloadName": "w2"}}},
    "topology": {"spec": {"schedulingConstraints": {"topology": [{"key": "zone"}]}}},
    "priority": {"spec": {"priority": 7}},
    "several": {"spec": {"priority": 7, "workloadRef": {"workloadName": "w2"},
                         "schedulingPolicy": {"gang": {"minCount": -2}}}},
    "status on the main resource": {"status": {"conditions": [
        {"type": "A", "status": "True", "reason": "R", "message": "", "lastTransitionTime": "2024-01-01T00:00:00Z"}]}},
}
STATUS_UPDATES: dict[str, dict[str, Any]] = {
    "condition": {"status": {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "True",
                                             "reason": "Scheduled", "message": "",
                                             "lastTransitionTime": "2024-01-01T00:00:00Z"}]},
                  "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}},
    "bad status": {"status": {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "Maybe",
                                              "reason": "Scheduled", "message": "",
                                              "lastTransitionTime": "2024-01-01T00:00:00Z"}]}},
    "no reason": {"status": {"conditions": [{"type": "A", "status": "True", "reason": "", "message": "",
                                             "lastTransitionTime": "2024-01-01T00:00:00Z"}]}},
    "unknown claim status": {"status": {"resourceClaimStatuses": [{"name": "nope", "resourceClaimName": "x"}]}},
}


@pytest.fixture(scope="module")
def stored(both: Callable[..., tuple[Any, Any]]) -> str:
    obj = pg(schedulingConstraints={"topology": [{"key": "rack"}]}, priorityClassName="high")
    obj["metadata"]["name"] = "upd"
    real, box = both("POST", f"{NS}/podgroups", obj)
    assert box == real and real[0] == 201
    return f"{NS}/podgroups/upd"


@pytest.mark.parametrize("case", list(UPDATES))
def test_pod_group_update(both: Callable[..., tuple[Any, Any]], stored: str, case: str) -> None:
    real, box = both("PATCH", f"{stored}?dryRun=All", UPDATES[case], MERGE)
    assert box == real


@pytest.mark.parametrize("case", list(STATUS_UPDATES))
def test_pod_group_status_update(both: Callable[..., tuple[Any, Any]], stored: str, case: str) -> None:
    real, box = both("PATCH", f"{stored}/status?dryRun=All", STATUS_UPDATES[case], MERGE)
    assert box == real


def test_kubectl_get_podgroups_columns(real: ControlPlane, box: ServerHandle, tmp_path: Path,
                                       stored: str) -> None:
    """``kubectl get podgroups`` prints the same columns and cells (AGE aside)."""
    import shutil
    import subprocess

    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    assert box.kubeconfig_path is not None
    out_real = real.kubectl("get", "podgroups", "upd").stdout.splitlines()
    out_box = subprocess.run(["kubectl", f"--kubeconfig={box.kubeconfig_path}", f"--cache-dir={tmp_path}",
                              "get", "podgroups", "upd"], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    assert [line.split()[:4] for line in out_box] == [line.split()[:4] for line in out_real]
