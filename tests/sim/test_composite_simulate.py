"""A CompositePodGroup through ``kubesched simulate`` (GenericWorkload, TopologyAwareWorkloadScheduling
and CompositePodGroup on; ``data/composite/``): a Workload with a composite template ``job``
(``gang.minGroupCount: 2``) over two gang PodGroups ``workers`` and ``ps`` (``minCount: 2`` each).
Upstream v1.37.2 GangScheduling ``preEnqueueWithHierarchies`` / ``isCPGTreeReady``
(gangscheduling.go L231-340): a member enters the queue only when its root CompositePodGroup's tree
meets its quorum — so with one parameter server no pod, not even the complete ``workers`` gang, is
tried; with the second one the whole tree is scheduled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kubesched.cli.main import main

DATA = Path(__file__).parent / "data" / "composite"
GATES = "GenericWorkload=true,TopologyAwareWorkloadScheduling=true,CompositePodGroup=true"


def _simulate(*files: str, gates: str = GATES) -> tuple[int, Any]:
    args = ["simulate", *(x for f in files for x in ("-f", str(DATA / f))), "--feature-gates", gates, "-o", "json"]
    r = CliRunner().invoke(main, args)
    return r.exit_code, (json.loads(r.stdout) if r.exit_code == 0 else r.output)


def _pods(out: Any) -> dict[str, str]:
    return {i["metadata"]["name"]: i["spec"].get("nodeName", "") for i in out["items"] if i["kind"] == "Pod"}


def test_tree_below_quorum_keeps_every_member_out_of_the_queue() -> None:
    code, out = _simulate("cluster.yaml", "pods.yaml")
    assert code == 0, out
    assert _pods(out) == {"w0": "", "w1": "", "ps0": ""}


def test_tree_at_quorum_is_scheduled() -> None:
    code, out = _simulate("cluster.yaml", "pods.yaml", "ps1.yaml")
    assert code == 0, out
    pods = _pods(out)
    assert sorted(pods) == ["ps0", "ps1", "w0", "w1"] and all(pods.values()), pods


def test_composite_pod_group_needs_its_gate() -> None:
    """Without CompositePodGroup the API drops ``compositePodGroupTemplates`` (the Workload is then
    invalid) and does not serve CompositePodGroup — one error line, as kube-apiserver answers."""
    code, out = _simulate("cluster.yaml", "pods.yaml",
                          gates="GenericWorkload=true,TopologyAwareWorkloadScheduling=true")
    assert code != 0
    assert "Workload.scheduling.k8s.io \"train\" is invalid" in out and "Traceback" not in out


def test_explain_shows_the_tree_above_the_group() -> None:
    r = CliRunner().invoke(main, ["simulate", "-f", str(DATA), "--feature-gates", GATES, "--explain", "default/ps1",
                                  "--explain-nodes", "1"])
    assert r.exit_code == 0, r.output
    assert "pod group default/ps (gang minCount=2; 2 member(s) in this cycle): scheduled" in r.output
    assert "in composite pod group job (gang minGroupCount=2)" in r.output


def test_explain_of_a_member_held_by_the_tree_quorum() -> None:
    r = CliRunner().invoke(main, ["simulate", "-f", str(DATA / "cluster.yaml"), "-f", str(DATA / "pods.yaml"),
                                  "--feature-gates", GATES, "--explain", "default/w0"])
    assert r.exit_code != 0
    assert 'waiting for composite pod group "job" tree to meet quorum' in r.output
