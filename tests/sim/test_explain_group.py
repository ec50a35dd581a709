"""``simulate --explain`` for a member of a PodGroup (issue "Workload-aware scheduling", item 3): the
group's decision — policy, outcome, the placements TopologyAwareWorkloadScheduling generated with
their feasibility and scores, the chosen one — and why a member that never left PreEnqueue stayed
pending (GangScheduling's quorum, upstream gangscheduling.go L208-250)."""

from __future__ import annotations

import pytest

from kubesched.cli.explain_view import group_lines
from kubesched.config import default_config
from kubesched.errors import InputError
from kubesched.features import FeatureGate
from kubesched.sim.explain import explain_pod
from kubesched.sim.manifests import parse_manifest_text
from kubesched.sim.simulate import SimulationResult, simulate

GATES = {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}


def _node(name: str, rack: str, cpu: int) -> str:
    return f"""---
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{rack: {rack}, kubernetes.io/hostname: {name}}}}}
status:
  capacity: {{cpu: "{cpu}", memory: 16Gi, pods: "110"}}
  allocatable: {{cpu: "{cpu}", memory: 16Gi, pods: "110"}}
"""


def _group(name: str, min_count: int, topology: bool) -> str:
    cons = "\n  schedulingConstraints:\n    topology: [{key: rack}]" if topology else ""
    return f"""---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {{name: {name}, namespace: default}}
spec:
  schedulingPolicy:
    gang: {{minCount: {min_count}}}{cons}
"""


def _pod(name: str, group: str, cpu: int) -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  schedulingGroup: {{podGroupName: {group}}}
  containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


def _run(text: str, gates: dict[str, bool]) -> SimulationResult:
    features = FeatureGate(overrides=gates)
    raws = parse_manifest_text(text, "<test>")
    return simulate(raws, default_config(features), features=features, record=True)


def test_explain_shows_the_placements_and_the_chosen_rack() -> None:
    # rack a: 2 nodes with 4 CPU; rack b: 2 nodes with 8 CPU; c: 1 node (too small for a gang of 2 × 3 CPU)
    text = (_node("a1", "a", 4) + _node("a2", "a", 4) + _node("b1", "b", 8) + _node("b2", "b", 8)
            + _node("c1", "c", 4) + _group("train", 2, True) + _pod("w0", "train", 3) + _pod("w1", "train", 3))
    res = _run(text, GATES)
    ex = explain_pod(res, "default/w0")
    g = ex.group
    assert g is not None
    assert g["podGroup"] == "default/train" and g["policy"] == "gang" and g["minCount"] == 2
    assert g["result"] == "scheduled" and g["members"] == 2
    by_name = {p["name"]: p for p in g["placements"]}
    assert set(by_name) == {"a", "b", "c"}  # one placement per rack value
    assert by_name["a"]["feasible"] and by_name["b"]["feasible"] and not by_name["c"]["feasible"]
    assert "minCount (2) cannot be satisfied" in by_name["c"]["status"]
    # the feasible placements were scored (NodeResourcesFit's MostAllocated + PodGroupPodsCount):
    # rack a ends fuller (6 of 8 CPU) than rack b (6 of 16), so a wins
    assert by_name["a"]["total"] > by_name["b"]["total"]
    assert g["chosenPlacement"] == "a" and by_name["a"].get("chosen")
    assert {res.store.pods[k].spec.node_name for k in ("default/w0", "default/w1")} <= {"a1", "a2"}
    text_lines = "\n".join(group_lines(g))
    assert "placements generated: 3; chosen: a" in text_lines and "← chosen" in text_lines


def test_explain_of_an_unschedulable_gang_gives_the_group_message() -> None:
    text = _node("n1", "a", 4) + _group("big", 2, False) + _pod("p0", "big", 3) + _pod("p1", "big", 3)
    res = _run(text, {"GenericWorkload": True})
    ex = explain_pod(res, "default/p0")
    assert ex.group is not None and ex.group["result"] == "unschedulable"
    assert "minCount (2) cannot be satisfied" in ex.group["message"]
    assert "placements" not in ex.group  # no topology-aware placement without its gate


def test_a_member_held_by_the_gang_quorum_is_explained() -> None:
    text = _node("n1", "a", 8) + _group("wait", 3, False) + _pod("q0", "wait", 1) + _pod("q1", "wait", 1)
    res = _run(text, {"GenericWorkload": True})
    with pytest.raises(InputError) as ei:
        explain_pod(res, "default/q0")
    assert ("it never left PreEnqueue: GangScheduling: waiting for minCount pods from a gang to appear in "
            "scheduling queue") in str(ei.value)
