"""The box serves the API of its emulated version (``APIServer(features=...)``): decoding with the
release's schemas, gated fields dropped as ``pkg/api/pod/util.go`` / node ``strategy.go`` drop
them, ``matchLabelKeys`` merged on create (``pkg/registry/core/pod/strategy.go`` L932-950), and
ClearingNominatedNodeNameAfterBinding in pods/binding (``pkg/registry/core/pod/storage/storage.go``
L246-249; β on since 1.35)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from apiserver_helpers import Client, node, pod

from kubesched.apiserver.admission import AdmissionError, admit
from kubesched.apiserver.launcher import run_server
from kubesched.features import FeatureGate

PODS = "/api/v1/namespaces/default/pods"
V134 = FeatureGate(emulated_version=(1, 34))
V137 = FeatureGate()


def _admit(obj: dict[str, Any], features: FeatureGate, *, resource: str = "pods", operation: str = "CREATE",
           old: dict[str, Any] | None = None) -> dict[str, Any]:
    return admit(resource, obj, old, operation=operation, lookup=lambda *_: None, list_objects=lambda _r: [],
                 features=features)


def _pod(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web", "hash": "abc"}},
                            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    body["spec"].update(spec)
    return body


SPREAD = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
           "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["hash"]}]


@pytest.mark.parametrize("features", [V134, V137], ids=["1.34", "1.37"])
def test_match_label_keys_merged_on_create_only(features: FeatureGate) -> None:
    stored = _admit(_pod(topologySpreadConstraints=SPREAD), features)
    sel = stored["spec"]["topologySpreadConstraints"][0]["labelSelector"]
    assert sel == {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "hash", "operator": "In",
                                                                        "values": ["abc"]}]}
    # an update keeps the stored selector (no second merge) and passes the preferred rule
    upd = _admit({**stored, "metadata": {**stored["metadata"], "labels": {"app": "web", "hash": "abc", "x": "y"}}},
                 features, operation="UPDATE", old=stored)
    assert upd["spec"]["topologySpreadConstraints"][0]["labelSelector"] == sel


def test_scheduling_group_per_version_and_gate() -> None:
    p = _pod(schedulingGroup={"podGroupName": "pg"})
    assert "schedulingGroup" not in _admit(p, V137)["spec"]  # GenericWorkload off: dropped
    on = V137.with_overrides(GenericWorkload=True)
    assert _admit(p, on)["spec"]["schedulingGroup"] == {"podGroupName": "pg"}
    assert "schedulingGroup" not in _admit(p, V134)["spec"]  # not a v1.34 field: pruned by decoding


def test_lt_toleration_rejected_unless_the_gate_is_on() -> None:
    p = _pod(tolerations=[{"key": "sla", "operator": "Gt", "value": "950", "effect": "NoSchedule"}])
    with pytest.raises(AdmissionError) as e:
        _admit(p, V137)
    assert e.value.status["message"] == ('Pod "p" is invalid: spec.tolerations[0].operator: Unsupported value: "Gt": '
                                         'supported values: "Equal", "Exists", "Lt", "Gt"')
    assert _admit(p, V137.with_overrides(TaintTolerationComparisonOperators=True))["spec"]["tolerations"][0] == \
        {"key": "sla", "operator": "Gt", "value": "950", "effect": "NoSchedule"}


def test_declared_features_per_version() -> None:
    n = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"declaredFeatures": ["FeatureA"], "capacity": {"cpu": "1"}}}
    assert _admit(n, V137, resource="nodes")["status"]["declaredFeatures"] == ["FeatureA"]
    assert "declaredFeatures" not in _admit(n, FeatureGate(emulated_version=(1, 35)), resource="nodes")["status"]
    assert "declaredFeatures" not in _admit(n, V134, resource="nodes")["status"]


@pytest.fixture(params=[(1, 34), (1, 37)], ids=["1.34", "1.37"])
def versioned(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[tuple[Client, tuple[int, int]]]:
    version = request.param
    with run_server(tmp_path / "kubeconfig", features=FeatureGate(emulated_version=version)) as s:
        yield Client.of(s), version


def test_binding_clears_the_nominated_node_from_1_35(versioned: tuple[Client, tuple[int, int]]) -> None:
    client, version = versioned
    client.create("/api/v1/nodes", node("n1"))
    p = client.create(PODS, pod("b"))
    p["status"]["nominatedNodeName"] = "n1"
    code, body = client.req("PUT", f"{PODS}/b/status", p)
    assert code == 200 and body["status"]["nominatedNodeName"] == "n1"
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b"},
               "target": {"kind": "Node", "name": "n1"}}
    assert client.req("POST", f"{PODS}/b/binding", binding)[0] == 201
    got = client.get(f"{PODS}/b")
    assert got["spec"]["nodeName"] == "n1"
    assert got["status"].get("nominatedNodeName") == (None if version >= (1, 35) else "n1")


def test_strict_field_validation_and_version_follow_the_release(versioned: tuple[Client, tuple[int, int]]) -> None:
    client, version = versioned
    body = pod("s")
    body["spec"]["schedulingGroup"] = {"podGroupName": "pg"}
    code, out = client.req("POST", f"{PODS}?fieldValidation=Strict", body)
    if version == (1, 34):
        assert code == 400
        assert out["message"] == ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
                                  'unknown field "spec.schedulingGroup"')
    else:
        assert code == 201 and "schedulingGroup" not in out["spec"]  # known, dropped: GenericWorkload is off
    info = client.get("/version")
    assert (info["emulationMajor"], info["emulationMinor"]) == ("1", str(version[1]))
    doc = client.get("/openapi/v3/api/v1")
    assert doc["info"]["version"] == f"v1.{version[1]}.0"
    spec_props = doc["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]
    assert ("schedulingGroup" in spec_props) == (version >= (1, 36))


def test_pod_topology_labels_admission_from_1_35(versioned: tuple[Client, tuple[int, int]]) -> None:
    """PodTopologyLabels admission (beta, on since 1.35): pods/binding and a pod created with
    spec.nodeName get the node's topology.kubernetes.io/zone and /region labels, overwriting."""
    client, version = versioned
    n = node("tz")
    n["metadata"]["labels"] = {"topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r1", "o": "x"}
    client.create("/api/v1/nodes", n)
    p = pod("tb")
    p["metadata"]["labels"] = {"app": "a", "topology.kubernetes.io/zone": "mine"}
    client.create(PODS, p)
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "tb"},
               "target": {"kind": "Node", "name": "tz"}}
    assert client.req("POST", f"{PODS}/tb/binding", binding)[0] == 201
    topo = {"topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r1"}
    want = {"app": "a", **topo} if version >= (1, 35) else {"app": "a", "topology.kubernetes.io/zone": "mine"}
    assert client.get(f"{PODS}/tb")["metadata"]["labels"] == want
    q = pod("tc")
    q["spec"]["nodeName"] = "tz"
    created = client.create(PODS, q)
    assert (created["metadata"].get("labels") or {}) == (topo if version >= (1, 35) else {})
