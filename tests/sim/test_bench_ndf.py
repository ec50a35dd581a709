"""scheduler_perf's v1.37 ``nodedeclaredfeatures`` topic in ``kubesched bench`` (``kubesched.sim.bench_ndf``).

The table is checked against upstream's own ``performance-config.yaml`` and templates (when the
v1.37.2 module source is on this machine); the small workload runs end to end, and without the
nodes' declared features its pods cannot schedule (the mock features are really required).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
import yaml

from kubesched.sim.bench import WORKLOADS, CreateNodes, CreatePods, execute
from kubesched.sim.bench_ndf import NDF_TEMPLATES, NDF_WORKLOADS, mock_features

PERF = Path(os.environ.get("KUBESCHED_UPSTREAM_K8S", "/root/go/pkg/mod/k8s.io/kubernetes@v1.37.2")) / \
    "test/integration/scheduler_perf"
needs_upstream = pytest.mark.skipif(not PERF.is_dir(), reason="k8s.io/kubernetes@v1.37.2 module source not present")
TOPIC = "nodedeclaredfeatures"


@needs_upstream
@pytest.mark.parametrize("path", sorted(NDF_TEMPLATES))
def test_templates_are_upstream_verbatim(path):
    assert NDF_TEMPLATES[path].splitlines() == (PERF / path).read_text().splitlines()


@needs_upstream
def test_workloads_match_performance_config():
    """Every workload of the topic, with upstream's labels, threshold, gates, ops, counts,
    namespaces, templates and number of declared features."""
    cases = yaml.safe_load((PERF / TOPIC / "performance-config.yaml").read_text())
    keys = set()
    for case in cases:
        default_pod = case.get("defaultPodTemplatePath")
        for wl in case["workloads"]:
            key = f"{case['name']}/{wl['name']}"
            keys.add(key)
            w = NDF_WORKLOADS[key]
            params = wl["params"]
            assert set(w.labels) == set(wl.get("labels") or []), key
            assert w.threshold == wl.get("threshold"), key
            assert wl.get("featureGates") == {"NodeDeclaredFeatures": True}, key
            ops = case["workloadTemplate"]
            assert len(ops) == len(w.ops), key
            for up, mine in zip(ops, w.ops, strict=True):
                count = up["count"] if "count" in up else params[up["countParam"][1:]]
                if up["opcode"] == "createNodes":
                    assert isinstance(mine, CreateNodes) and mine.count == count, key
                    assert mine.template == f"{TOPIC}/{up['nodeTemplatePath']}", key
                    n = params["numNodeDeclaredFeatures"]
                    assert mine.declared_features == tuple(sorted(f"Feature{i}" for i in range(1, n + 1))), key
                else:
                    assert up["opcode"] == "createPods" and isinstance(mine, CreatePods), key
                    assert (mine.count, mine.namespace) == (count, up["namespace"]), key
                    assert mine.template == f"{TOPIC}/{up.get('podTemplatePath') or default_pod}", key
                    assert mine.collect_metrics == bool(up.get("collectMetrics")), key
    assert keys == set(NDF_WORKLOADS)


def test_registered_in_bench():
    for key, w in NDF_WORKLOADS.items():
        assert WORKLOADS[key] is w


def test_mock_features_require_pod_level_resources():
    from kubesched.testing.wrappers import MakePod

    f = mock_features(3)
    assert [x.name for x in f] == ["Feature1", "Feature2", "Feature3"]
    plain = MakePod().name("p").req(cpu="1").obj()
    assert not any(x.infer_for_scheduling(plain.spec) for x in f)


def test_small_workload_end_to_end():
    res = execute(NDF_WORKLOADS["NodeDeclaredFeaturesEnabled/5Nodes5DeclaredFeatures"])
    assert (res.scheduled, res.unschedulable_pods) == (10, 0)


def test_nodes_without_the_declared_features_reject_the_pods():
    w = NDF_WORKLOADS["NodeDeclaredFeaturesEnabled/5Nodes5DeclaredFeatures"]
    nodes = dataclasses.replace(w.ops[0], declared_features=("Feature1", "Feature2"))  # missing 3..5
    res = execute(dataclasses.replace(w, ops=(nodes, *w.ops[1:])))
    assert res.scheduled == 0 and res.unschedulable_pods == 10


@needs_upstream
def test_coverage_script_smoke():
    """benchmarks/scheduler_perf_coverage.py keeps running: it lists this topic as fully covered."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "scheduler_perf_coverage.py"
    out = subprocess.run([sys.executable, str(script), "--missing", "--thresholds"], capture_output=True,
                         text=True, check=True).stdout
    assert "| nodedeclaredfeatures | NodeDeclaredFeaturesEnabled | 4/4 | – |" in out
    assert "| NodeDeclaredFeaturesEnabled/5000Nodes20DeclaredFeatures | 890 | 2670 | yes |" in out
