"""``kubesched capacity`` / ``simulate --add-nodes`` / ``compare`` through the real command line
(a subprocess): output, exit codes and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
EX = REPO / "examples" / "whatif"


def kubesched(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "kubesched.cli.main", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=120, check=False)


def three_nodes(tmp_path: Path) -> Path:
    docs = [{"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
             "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}} for i in range(3)]
    p = tmp_path / "cluster.yaml"
    p.write_text(yaml.safe_dump_all(docs))
    return p


def one_cpu_pod(tmp_path: Path) -> Path:
    p = tmp_path / "pod.yaml"
    p.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                                 "spec": {"containers": [{"name": "c", "image": "nginx",
                                                          "resources": {"requests": {"cpu": "1"}}}]}}))
    return p


def test_capacity_table_and_json(tmp_path: Path) -> None:
    cluster, pod = three_nodes(tmp_path), one_cpu_pod(tmp_path)
    r = kubesched("capacity", "-f", str(cluster), "--pod", str(pod))
    assert r.returncode == 0, r.stderr
    assert "The cluster can schedule 12 instance(s) of the pod web." in r.stdout
    assert "Termination reason: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu." in r.stdout
    lines = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("n")]
    assert lines == [["n0", "4", "0", "8Gi", "106"], ["n1", "4", "0", "8Gi", "106"], ["n2", "4", "0", "8Gi", "106"]]
    r = kubesched("capacity", "-f", str(cluster), "--pod", str(pod), "--max", "7", "-o", "json")
    assert r.returncode == 0, r.stderr
    review = json.loads(r.stdout)
    assert review["kind"] == "ClusterCapacityReview"
    assert review["status"]["replicas"] == 7
    assert review["status"]["failReason"] == {"failType": "LimitReached",
                                              "failMessage": "Maximum number of pods simulated: 7"}
    assert sum(x["replicas"] for x in review["status"]["pods"][0]["replicasOnNodes"]) == 7


def test_capacity_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    cluster = three_nodes(tmp_path)
    r = kubesched("capacity", "-f", str(cluster), "--pod", str(cluster))
    assert r.returncode == 2
    assert r.stderr.startswith("error: ") and "expected exactly one Pod, found 3" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: w}\nspec:\n  containers:\n  - name: c\n"
                   "    resources: {requests: {cpu: lots}}\n")
    r = kubesched("capacity", "-f", str(cluster), "--pod", str(bad))
    assert r.returncode == 2 and "requests[cpu]" in r.stderr and "Traceback" not in r.stderr
    r = kubesched("capacity", "-f", str(cluster), "--pod", str(one_cpu_pod(tmp_path)), "--max", "0")
    assert r.returncode == 2


def test_add_nodes_and_bad_template(tmp_path: Path) -> None:
    r = kubesched("simulate", "-f", str(EX / "cluster.yaml"), "--add-nodes", str(EX / "node-template.yaml"),
                  "-o", "table")
    assert r.returncode == 0, r.stderr
    assert "# add-nodes: 2 node(s) of template large-b take 4 of 4 pending pod(s)" in r.stdout
    r = kubesched("simulate", "-f", str(EX / "cluster.yaml"), "--add-nodes", str(EX / "node-template.yaml"),
                  "-o", "json")
    assert r.returncode == 0, r.stderr
    items = json.loads(r.stdout)["items"]
    added = [i["metadata"]["name"] for i in items if i["kind"] == "Node" and i["metadata"]["name"].startswith("large")]
    assert added == ["large-b-0", "large-b-1"]
    assert {i["spec"].get("nodeName") for i in items if i["kind"] == "Pod"} >= {"large-b-0", "large-b-1"}
    assert "add-nodes: 2 node(s)" in r.stderr
    bad = tmp_path / "tpl.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: t}\nstatus:\n  allocatable: {cpu: four}\n")
    r = kubesched("simulate", "-f", str(EX / "cluster.yaml"), "--add-nodes", str(bad))
    assert r.returncode == 2
    assert r.stderr.startswith(f"error: {bad}:1: Node t: status.allocatable[cpu]"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    missing = tmp_path / "empty.yaml"
    missing.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: t}\n")
    r = kubesched("simulate", "-f", str(EX / "cluster.yaml"), "--add-nodes", str(missing))
    assert r.returncode == 2 and "status.allocatable: Required value" in r.stderr


def test_compare_cli(tmp_path: Path) -> None:
    least, most = EX / "least-allocated.yaml", EX / "most-allocated.yaml"
    r = kubesched("compare", "-f", str(EX / "cluster.yaml"), "--config", str(least), "--config", str(most))
    assert r.returncode == 0, r.stderr
    assert "LEAST-ALLOCATED" in r.stdout and "pod(s) placed differently" in r.stdout
    r = kubesched("compare", "-f", str(EX / "cluster.yaml"), "--config", str(least), "--config", str(most),
                  "-o", "json")
    doc = json.loads(r.stdout)
    assert doc["placedDifferently"] == len(doc["differences"]) > 0
    assert doc["a"]["nodeSkew"] < doc["b"]["nodeSkew"]
    r = kubesched("compare", "-f", str(EX / "cluster.yaml"), "--config", str(least))
    assert r.returncode == 2 and "give exactly two --config files, got 1" in r.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    score:\n"
                      "      enabled: [{name: NoSuchPlugin}]\n")
    r = kubesched("compare", "-f", str(EX / "cluster.yaml"), "--config", str(least), "--config", str(broken))
    assert r.returncode == 2 and "NoSuchPlugin" in r.stderr and "Traceback" not in r.stderr


def test_compare_two_releases(tmp_path: Path) -> None:
    """``--versions 1.34,1.37``: the same input decided as v1.34.12 and as v1.37.2. Every pod placed
    differently is explained: a score difference (BalancedAllocation's 1.36 formula moves every
    total) or a tie, broken at random in 1.34 and by the heap order of the feasible nodes since 1.35."""
    r = kubesched("compare", "-f", str(REPO / "examples" / "quickstart"), "--versions", "1.34,1.37", "--seed", "1",
                  "-o", "json", "--limit", "0")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["a"]["label"] == "v1.34" and doc["b"]["label"] == "v1.37"
    assert doc["a"]["scheduled"] == doc["b"]["scheduled"]
    assert doc["differences"]
    for d in doc["differences"]:
        why_a, why_b = d["whyA"], d["whyB"]
        assert "broken at random" in why_a or " vs " in why_a or "rejected" in why_a or "not" in why_a, d
        assert "heap order" in why_b or " vs " in why_b or "rejected" in why_b or "not" in why_b, d
        assert "broken at random" not in why_b, d
    r = kubesched("compare", "-f", str(EX / "cluster.yaml"), "--versions", "1.34")
    assert r.returncode == 2 and "expected two releases" in r.stderr
    r = kubesched("compare", "-f", str(EX / "cluster.yaml"), "--versions", "1.33,1.37")
    assert r.returncode == 2 and "emulation version 1.33 is not between [1.34, 1.37.0]" in r.stderr
