"""The tree-wide cycle of a CompositePodGroup through ``kubesched simulate`` (GenericWorkload,
TopologyAwareWorkloadScheduling and CompositePodGroup on; ``data/composite_tree/``), as upstream
v1.37.2 ``schedule_one_podgroup.go`` (L428-496, L734-806, L1073-1448) schedules it: one cycle for
the root's whole tree, the children tried inside each of the parent's placements, the best subtree
kept, a child below a failed parent failed with the parent's status, conditions per PodGroup.

Cases: upstream's ``TestCPGHierarchicalScheduling_Internal`` (the two-level tree; a fake Filter
there, a nodeSelector nobody matches here), ``TestCPGMinGroupCount_Internal`` (a gang of two
children of which one cannot fit: nothing bound, both PodGroups Unschedulable with the root's
message) and the rack-local placement of the whole tree (``TestCPGSchedulingPlacementAlgorithm``:
the CompositePodGroup's placements are racks, the children evaluated inside each)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kubesched.cli.main import main

DATA = Path(__file__).parent / "data" / "composite_tree"
GATES = "GenericWorkload=true,TopologyAwareWorkloadScheduling=true,CompositePodGroup=true"


def _simulate(*files: str, extra: tuple[str, ...] = ()) -> Any:
    args = ["simulate", *(x for f in files for x in ("-f", str(DATA / f))), "--feature-gates", GATES,
            "-o", "json", *extra]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _pods(out: Any) -> dict[str, str]:
    return {i["metadata"]["name"]: i["spec"].get("nodeName", "") for i in out["items"]
            if i["kind"] == "Pod" and i["metadata"]["name"] != "filler"}


def _condition(out: Any, name: str) -> dict[str, Any]:
    pg = next(i for i in out["items"] if i["kind"] == "PodGroup" and i["metadata"]["name"] == name)
    return next(c for c in pg["status"]["conditions"] if c["type"] == "PodGroupInitiallyScheduled")


def test_multi_level_tree_follows_gang_and_basic_at_each_level() -> None:
    out = _simulate("nested.yaml")
    bound = {p for p, n in _pods(out).items() if n}
    assert bound == {f"{g}-pod-{i}" for g in ("pg1", "pg2", "pg4", "pg5") for i in range(3)}
    for g in ("pg1", "pg2", "pg4", "pg5"):
        assert _condition(out, g)["status"] == "True"
    # pg6 fitted on its own, but its parent cpg-sub3 (minGroupCount 2) failed: the parent's status
    assert _condition(out, "pg6")["status"] == "False"
    assert "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining" in _condition(out, "pg6")["message"]
    assert "minCount (3) cannot be satisfied" in _condition(out, "pg7")["message"]


def test_gang_of_children_is_all_or_nothing_across_the_tree() -> None:
    out = _simulate("rack.yaml", "a.yaml", "b-big.yaml")
    assert _pods(out) == {"a0": "", "a1": "", "b0": "", "b1": ""}
    a, b = _condition(out, "a"), _condition(out, "b")
    assert (a["status"], a["reason"]) == ("False", "Unschedulable")
    assert (b["status"], b["reason"]) == ("False", "Unschedulable")
    # "a" fitted in every rack but the root's minGroupCount was not met: "a" carries the root's status
    assert a["message"].startswith("pod group is unschedulable, 0/2 placements are available, first placement "
                                   "status: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining")


def test_whole_tree_lands_in_the_one_rack_that_holds_it_in_one_cycle() -> None:
    out = _simulate("rack.yaml", "a.yaml", "b.yaml")
    pods = _pods(out)
    assert set(pods.values()) <= {"n3", "n4"} and all(pods.values()), pods
    for g in ("a", "b"):
        assert _condition(out, g)["status"] == "True"


def test_one_scheduling_attempt_for_the_tree() -> None:
    r = CliRunner().invoke(main, ["simulate", "-f", str(DATA / "rack.yaml"), "-f", str(DATA / "a.yaml"),
                                  "-f", str(DATA / "b.yaml"), "--feature-gates", GATES, "-o", "wide"])
    assert r.exit_code == 0, r.output
    assert "# 1 scheduling attempts" in r.output


def test_explain_shows_each_members_own_group() -> None:
    r = CliRunner().invoke(main, ["simulate", "-f", str(DATA / "rack.yaml"), "-f", str(DATA / "a.yaml"),
                                  "-f", str(DATA / "b.yaml"), "--feature-gates", GATES, "--explain", "default/b1",
                                  "--explain-nodes", "1"])
    assert r.exit_code == 0, r.output
    assert "pod group default/b (gang minCount=2; 2 member(s) in this cycle): scheduled" in r.output
    assert "in composite pod group job (gang minGroupCount=2)" in r.output


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gang-composite"


def _example(*files: str) -> dict[str, str]:
    args = ["simulate", *(x for f in files for x in ("-f", str(EXAMPLE / f))), "--feature-gates", GATES, "-o", "json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return {i["metadata"]["name"]: i["spec"].get("nodeName", "") for i in json.loads(r.stdout)["items"]
            if i["kind"] == "Pod" and not i["metadata"]["name"].startswith("inference")}


def test_example_job_lands_in_the_block_that_holds_all_of_it() -> None:
    """examples/gang-composite: block-0 holds the trainer alone, only block-1 the whole job."""
    pods = _example("cluster.yaml", "job.yaml")
    assert len(pods) == 6 and all(int(n.removeprefix("gpu-")) >= 6 for n in pods.values()), pods


def test_example_job_without_a_block_for_it_binds_nothing() -> None:
    pods = _example("cluster.yaml", "job.yaml", "more-inference.yaml")
    assert len(pods) == 6 and not any(pods.values()), pods
