"""tools/upstream/diff.py's parts that need no binaries: the generator's additions obey the API
server's validation rules, the random gates are settable at their version, and the comparison
counts exact-node agreement apart from top-score agreement."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from kubesched.api.quantity import parse_quantity
from kubesched.features import FeatureGate
from kubesched.testing.upstream import format_feature_gates

DIFF_PY = Path(__file__).resolve().parents[2] / "tools" / "upstream" / "diff.py"


@pytest.fixture(scope="module")
def diff() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kubesched_diff_tool", DIFF_PY)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _q(text: str) -> float:
    return float(parse_quantity(text))


def test_pod_level_requests_cover_the_containers(diff: ModuleType) -> None:
    """validation.go validatePodResourceConsistency (v1.37.2): the containers' summed requests
    must not exceed the pod-level request of a resource; pod-level limits ≥ requests."""
    seen = 0
    for seed in range(1, 80):
        objs, pods, _ = diff.generate(seed)
        for p in pods + [o for o in objs if o["kind"] == "Pod"]:
            res = p["spec"].get("resources")
            if not res:
                continue
            seen += 1
            for r in ("cpu", "memory"):
                total = sum(_q(c.get("resources", {}).get("requests", {}).get(r, "0")) for c in p["spec"]["containers"])
                assert total <= _q(res["requests"][r]), (seed, p["metadata"]["name"])
                if "limits" in res:
                    assert _q(res["limits"][r]) >= _q(res["requests"][r])
    assert seen > 20


def test_some_clusters_hold_two_prebound_pods_on_one_host_port(diff: ModuleType) -> None:
    shared = 0
    for seed in range(1, 80):
        objs, _, _ = diff.generate(seed)
        holders: dict[tuple[str, int], int] = {}
        for o in objs:
            if o["kind"] != "Pod":
                continue
            assert o["spec"]["nodeName"] and o["spec"]["priorityClassName"] == "low"
            for port in o["spec"]["containers"][0].get("ports", []):
                key = (o["spec"]["nodeName"], port["hostPort"])
                holders[key] = holders.get(key, 0) + 1
        shared += any(n >= 2 for n in holders.values())
    assert shared >= 3


def test_generation_is_deterministic_per_seed(diff: ModuleType) -> None:
    assert diff.generate(5) == diff.generate(5)
    assert diff.generate(5) != diff.generate(6)


@pytest.mark.parametrize("version", ["1.34", "1.37"])
def test_every_gate_choice_is_settable_at_its_version(diff: ModuleType, version: str) -> None:
    """kubesched's gate table is the v1.37.2 kube-scheduler's registrations, so a choice it
    accepts at an emulated version is one the real binaries accept too (for 1.34: not locked,
    not PreAlpha at 1.34)."""
    for entry in diff.GATE_CHOICES["common"] + diff.GATE_CHOICES[version]:
        fg = FeatureGate.from_flags(emulated_version=version, feature_gates=format_feature_gates(entry))
        for gate, value in entry.items():
            assert fg.enabled(gate) is value
            assert FeatureGate.from_flags(emulated_version=version).enabled(gate) is not value, gate
    picks = [diff.random_gates(seed, version, 0.5) for seed in range(40)]
    assert 5 < sum(bool(p) for p in picks) < 35
    assert diff.random_gates(3, version, 0.0) == {}


def test_exact_node_is_counted_apart_from_top_score_agreement(diff: ModuleType) -> None:
    same = diff.compare("p", {"resources"}, ("n1", "", []), ("n1", "", []), ["n1"], "kubesched")
    tie = diff.compare("p", {"resources"}, ("n1", "", []), ("n2", "", []), ["n1", "n2"], "kubesched")
    off = diff.compare("p", {"resources"}, ("n1", "", []), ("n2", "", []), ["n2"], "kubesched")
    unsched = diff.compare("p", {"resources"}, (None, "m", []), (None, "m", []), [], "kubesched")
    assert (same.agree, same.exact) == (True, True)
    assert (tie.agree, tie.exact) == (True, False)
    assert (off.agree, off.exact, off.kind) == (False, False, "node")
    assert (unsched.agree, unsched.exact) == (True, None)
    report = diff.Report([same, tie, off, unsched])
    assert diff.summarize("t", report) == 1
