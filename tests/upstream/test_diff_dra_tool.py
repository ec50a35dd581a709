"""tools/upstream/diff.py's DRA generator (issue 14 "Proof": DRA incl. extended resources),
without binaries: the third seeded stream only adds objects (the first two streams' clusters
are unchanged), the new objects have the ``resource.k8s.io/v1`` shapes the API server accepts
(checked by kubesched's strict manifest validation, which follows the served schemas), the
extended resources stay out of 1.34 (DRAExtendedResource is alpha and off there), and the
allocation comparison reads claims shaped as upstream's ResourceClaimStatus."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kubesched.features import FeatureGate
from kubesched.sim.manifests import dump_yaml_all, parse_manifest_text
from kubesched.sim.validate import validate_inputs

DIFF_PY = Path(__file__).resolve().parents[2] / "tools" / "upstream" / "diff.py"
SEEDS = range(1, 60)


@pytest.fixture(scope="module")
def diff() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kubesched_diff_tool_dra", DIFF_PY)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _is_dra(o: dict[str, Any]) -> bool:
    return o["apiVersion"].startswith("resource.k8s.io/") or o["metadata"]["name"].startswith(("dra-", "gpu-"))


def test_generation_is_deterministic_and_dra_only_adds(diff: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """A seed generates the same cluster twice; with the DRA stream switched off (share 0) every
    seed generates exactly what it generates without the DRA objects and pods — the first two
    streams' draws do not move, and the pods keep their order."""
    with_dra = {s: diff.generate(s) for s in SEEDS}
    assert with_dra[7] == diff.generate(7)
    monkeypatch.setattr(diff, "DRA_SHARE", 0.0)
    dra_clusters = 0
    for s in SEEDS:
        objs, pods, areas = with_dra[s]
        base_objs, base_pods, base_areas = diff.generate(s)
        assert [o for o in objs if not _is_dra(o)] == base_objs
        assert [p for p in pods if not _is_dra(p)] == base_pods
        assert {k: v for k, v in areas.items() if not k.startswith(("dra-", "gpu-"))} == base_areas
        dra_clusters += any(_is_dra(o) for o in objs)
    assert 0.2 * len(SEEDS) < dra_clusters < 0.6 * len(SEEDS)


def test_dra_objects_shapes(diff: ModuleType) -> None:
    ext_pods = claim_pods = selectors = 0
    for s in SEEDS:
        objs, pods, areas = diff.generate(s)
        kinds = {o["kind"] for o in objs if _is_dra(o)}
        if not kinds:
            continue
        classes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "DeviceClass"}
        assert classes[diff.DRIVER]["spec"]["selectors"] == [
            {"cel": {"expression": 'device.driver == "gpu.example.com"'}}]
        nodes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Node"}
        slices = [o for o in objs if o["kind"] == "ResourceSlice"]
        assert len(slices) <= len(nodes)
        for sl in slices:
            spec = sl["spec"]
            assert spec["driver"] == diff.DRIVER and spec["nodeName"] in nodes
            assert spec["pool"] == {"name": spec["nodeName"], "generation": 1, "resourceSliceCount": 1}
            assert 1 <= len(spec["devices"]) <= 4
            for d in spec["devices"]:
                assert set(d["attributes"]) == {"model", "index"} and set(d["capacity"]) == {"memory"}
        claims = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ResourceClaim"}
        for p in pods:
            name = p["metadata"]["name"]
            if name.startswith("dra-"):
                claim_pods += 1
                assert areas[name] == {"resources", "dra"}
                [rc] = p["spec"]["resourceClaims"]
                [req] = claims[rc["resourceClaimName"]]["spec"]["devices"]["requests"]
                ex = req["exactly"]
                assert ex["deviceClassName"] == diff.DRIVER and ex["allocationMode"] == "ExactCount"
                assert ex["count"] in (1, 2)
                selectors += "selectors" in ex
                assert p["spec"]["containers"][0]["resources"]["claims"] == [{"name": rc["name"]}]
            elif name.startswith("gpu-"):
                ext_pods += 1
                assert areas[name] == {"resources", "dra-extended"}
                res = p["spec"]["containers"][0]["resources"]
                assert res["requests"][diff.EXT_RESOURCE] == res["limits"][diff.EXT_RESOURCE]
                assert classes[diff.EXT_CLASS]["spec"]["extendedResourceName"] == diff.EXT_RESOURCE
        # the extended resource is backed by devices only: no node advertises it
        for n in nodes.values():
            assert diff.EXT_RESOURCE not in n["status"]["allocatable"]
    assert claim_pods > 20 and ext_pods > 5 and selectors > 3


@pytest.mark.parametrize("version", ["1.34", "1.37"])
def test_generated_dra_clusters_pass_strict_validation(diff: ModuleType, version: str) -> None:
    """As the API server of ``version`` would take them (kubesched's strict validation, the
    emulated version's schemas); 1.34 gets no extended resources."""
    features = FeatureGate.from_flags(emulated_version=version)
    checked = 0
    for s in SEEDS:
        objs, pods, _ = diff.generate(s, version)
        if not any(_is_dra(o) for o in objs):
            continue
        if version == "1.34":
            assert not any(o["metadata"]["name"] == diff.EXT_CLASS for o in objs)
            assert not any(p["metadata"]["name"].startswith("gpu-") for p in pods)
        validate_inputs(parse_manifest_text(dump_yaml_all(objs + pods), f"<seed {s}>"), features=features)
        checked += 1
    assert checked > 10


def _claim(name: str, results: list[dict[str, str]] | None) -> dict[str, Any]:
    status = {"allocation": {"devices": {"results": results}}} if results is not None else {}
    return {"metadata": {"name": name}, "status": status}


def test_allocations_read_claim_status_and_extended_claim(diff: ModuleType) -> None:
    """k8s.io/api@v0.37.2 resource/v1 DeviceRequestAllocationResult {request, driver, pool,
    device}; the pod's extended-resource claim is named by status.extendedResourceClaimStatus."""
    pod = {"spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": "dra-00-gpu"},
                                       {"name": "tpl", "resourceClaimTemplateName": "t"}]},
           "status": {"extendedResourceClaimStatus": {"resourceClaimName": "p-extended-resources-abcde",
                                                      "requestMappings": []}}}
    claims = {
        "dra-00-gpu": _claim("dra-00-gpu", [
            {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-1"},
            {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]),
        "p-extended-resources-abcde": _claim("x", [
            {"request": "container-0-request-0", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-2"}]),
    }
    assert diff.allocations(pod, claims) == {
        "gpu": ["gpu gpu.example.com/node-1/gpu-0", "gpu gpu.example.com/node-1/gpu-1"],
        "extended": ["container-0-request-0 gpu.example.com/node-1/gpu-2"]}
    claims["dra-00-gpu"] = _claim("dra-00-gpu", None)  # not allocated
    assert set(diff.allocations(pod, claims)) == {"extended"}
    assert diff.allocations(None, claims) == {}


def test_devices_compared_only_on_the_same_node(diff: ModuleType) -> None:
    a = {"gpu": ["gpu gpu.example.com/node-1/gpu-0"]}
    b = {"gpu": ["gpu gpu.example.com/node-1/gpu-1"]}
    c = {"gpu": ["gpu gpu.example.com/node-2/gpu-0"]}
    same = diff.compare("p", {"dra"}, ("node-1", "", []), ("node-1", "", []), ["node-1"], "kubesched")
    tie = diff.compare("p", {"dra"}, ("node-1", "", []), ("node-2", "", []), ["node-1", "node-2"], "kubesched")
    assert diff.compare_devices(same, a, dict(a), "kubesched").agree
    assert diff.compare_devices(same, a, b, "kubesched").kind == "devices"
    assert diff.compare_devices(tie, a, c, "kubesched").agree  # tied nodes: devices not comparable
    assert diff.compare_devices(tie, a, {}, "kubesched").kind == "claims"
