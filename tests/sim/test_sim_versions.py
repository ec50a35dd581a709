"""``simulate`` reads its inputs as the API server of the emulated version would: a v1.37 dump
(pods with ``spec.schedulingGroup``, nodes with ``status.declaredFeatures``) loads at 1.37 and is
what a v1.34 API server makes of it at 1.34 (``kubectl apply``'s strict field validation rejects
the unknown fields; ``--validate=ignore`` drops them); a new pod's ``matchLabelKeys`` are merged
into its spread selector as on create (``pkg/registry/core/pod/strategy.go`` L932-950), a dumped
pod's are not merged again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import main


def _node(name: str, zone: str, **status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-{name}",
                         "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}, **status}}


def _pod(name: str, *, uid: bool, node: str | None = None, labels: dict[str, str] | None = None,
         **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": labels or {"app": "web"}}
    if uid:
        meta["uid"] = f"uid-{name}"
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                            "spec": {"containers": [{"name": "c", "image": "nginx",
                                                     "resources": {"requests": {"cpu": "100m"}}}], **spec}}
    if node:
        body["spec"]["nodeName"] = node
        body["status"] = {"phase": "Running"}
    return body


def _dump_137() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": [
        _node("n1", "a", declaredFeatures=["FeatureA"]),
        _node("n2", "b"),
        _pod("running", uid=True, node="n1", schedulingGroup={"podGroupName": "pg"}),
        _pod("pending", uid=False),
    ]}


def _run(tmp_path: Path, doc: dict[str, Any], *args: str) -> tuple[int, str, str]:
    p = tmp_path / "dump.yaml"
    p.write_text(yaml.safe_dump(doc, sort_keys=False))
    r = CliRunner().invoke(main, ["simulate", "-f", str(p), "-o", "json", "--seed", "1", *args])
    return r.exit_code, r.stdout, r.stderr


def _items(out: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in json.loads(out)["items"]}


def test_a_1_37_dump_loads_at_1_37(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path, _dump_137())
    assert code == 0, err
    items = _items(out)
    assert items["n1"]["status"]["declaredFeatures"] == ["FeatureA"]
    assert items["running"]["spec"]["schedulingGroup"] == {"podGroupName": "pg"}  # stored: kept
    assert items["pending"]["spec"]["nodeName"] in ("n1", "n2")


def test_a_new_pod_loses_scheduling_group_while_generic_workload_is_off(tmp_path: Path) -> None:
    doc = _dump_137()
    doc["items"][3]["spec"]["schedulingGroup"] = {"podGroupName": "pg"}
    code, out, err = _run(tmp_path, doc)
    assert code == 0, err
    assert "schedulingGroup" not in _items(out)["pending"]["spec"]


def test_a_1_37_dump_at_1_34_is_what_kubectl_apply_gets_from_a_1_34_server(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path, _dump_137(), "--emulated-version", "1.34")
    assert code == 2 and out == ""
    path = tmp_path / "dump.yaml"
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "declaredFeatures" in t)
    assert err == (f'error: {path}:{line}: Node in version "v1" cannot be handled as a Node: strict decoding error: '
                   'unknown field "status.declaredFeatures"\n')


def test_a_1_37_dump_at_1_34_without_validation_drops_the_new_fields(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path, _dump_137(), "--emulated-version", "1.34", "--validate=ignore")
    assert code == 0, err
    items = _items(out)
    assert "declaredFeatures" not in items["n1"]["status"]
    assert "schedulingGroup" not in items["running"]["spec"]


SPREAD = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
          "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["hash"]}
MERGED = {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "hash", "operator": "In", "values": ["v2"]}]}


@pytest.mark.parametrize("version", ["1.34", "1.37"])
def test_match_label_keys_merged_once_and_placement_unchanged(tmp_path: Path, version: str) -> None:
    """A pod from a manifest is stored merged; the same pod read from a dump (uid, merged by the
    API server) is not merged twice, and both are placed alike: the v2 pods spread among
    themselves (the v1 pods on n1 do not count)."""
    existing = [_pod(f"old-{i}", uid=True, node="n1", labels={"app": "web", "hash": "v1"}) for i in range(3)]
    existing.append(_pod("new-0", uid=True, node="n2", labels={"app": "web", "hash": "v2"},
                         topologySpreadConstraints=[{**SPREAD, "labelSelector": MERGED}]))
    plain = _pod("new-1", uid=False, labels={"app": "web", "hash": "v2"}, topologySpreadConstraints=[dict(SPREAD)])
    dumped = _pod("new-1", uid=True, labels={"app": "web", "hash": "v2"},
                  topologySpreadConstraints=[{**SPREAD, "labelSelector": MERGED}])
    nodes = [_node("n1", "a"), _node("n2", "b")]
    results = []
    for p in (plain, dumped):
        code, out, err = _run(tmp_path, {"apiVersion": "v1", "kind": "List", "items": [*nodes, *existing, p]},
                              "--emulated-version", version)
        assert code == 0, err
        results.append(_items(out)["new-1"])
    for got in results:
        assert got["spec"]["topologySpreadConstraints"][0]["labelSelector"] == MERGED
        assert got["spec"]["nodeName"] == "n1"  # skew among v2 pods: zone a has 0, zone b has 1


def test_pods_a_deployment_creates_are_merged_as_on_create(tmp_path: Path) -> None:
    """The ReplicaSet controller creates its pods through the API: their ``matchLabelKeys:
    [pod-template-hash]`` become ``pod-template-hash In (<hash>)`` in the stored selector."""
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                           "containers": [{"name": "c", "image": "nginx",
                                           "resources": {"requests": {"cpu": "100m"}}}],
                           "topologySpreadConstraints": [{**SPREAD, "matchLabelKeys": ["pod-template-hash"]}]}}}}
    code, out, err = _run(tmp_path, {"apiVersion": "v1", "kind": "List",
                                     "items": [_node("n1", "a"), _node("n2", "b"), deploy]})
    assert code == 0, err
    pods = [o for o in json.loads(out)["items"] if o["kind"] == "Pod"]
    assert len(pods) == 2
    for p in pods:
        h = p["metadata"]["labels"]["pod-template-hash"]
        assert p["spec"]["topologySpreadConstraints"][0]["labelSelector"] == {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "pod-template-hash", "operator": "In", "values": [h]}]}
    assert {p["spec"]["nodeName"] for p in pods} == {"n1", "n2"}


def test_bound_pods_get_the_nodes_topology_labels_from_1_35() -> None:
    """kube-apiserver's PodTopologyLabels admission (gate PodTopologyLabelsAdmission: alpha off in
    1.33-1.34, beta on since 1.35; plugin/pkg/admission/podtopologylabels/admission.go): a binding
    copies the node's topology.kubernetes.io/zone and /region labels onto the pod, overwriting."""
    from kubesched.features import FeatureGate
    from kubesched.sim.manifests import parse_manifest_text
    from kubesched.sim.simulate import simulate

    text = """
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {topology.kubernetes.io/zone: z1, topology.kubernetes.io/region: r1, other: x}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default, labels: {app: a, topology.kubernetes.io/zone: mine}}
spec: {containers: [{name: c, image: i}]}
"""
    for version, want in (((1, 34), {"app": "a", "topology.kubernetes.io/zone": "mine"}),
                          ((1, 37), {"app": "a", "topology.kubernetes.io/zone": "z1",
                                     "topology.kubernetes.io/region": "r1"})):
        res = simulate(parse_manifest_text(text, "in.yaml"), features=FeatureGate(emulated_version=version))
        pod = next(o for o in res.output_objects() if o["kind"] == "Pod")
        assert pod["spec"]["nodeName"] == "n1"
        assert pod["metadata"]["labels"] == want, version
        assert res.store.pods["default/p"].metadata.labels == want
