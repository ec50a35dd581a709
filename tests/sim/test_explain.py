"""``kubesched.sim.explain``: explanations read from the decision records of a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubesched.errors import InputError
from kubesched.sim.explain import ExplanationCollector, explain_pod, explain_record, pod_summaries, report_data
from kubesched.sim.manifests import load_manifests
from kubesched.sim.simulate import simulate


def node(name: str, cpu: str, zone: str, taint: bool = False) -> dict:
    d: dict = {"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                     "topology.kubernetes.io/zone": zone}},
               "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}}}
    if taint:
        d["spec"]["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    return d


def pod(name: str, cpu: str, node_name: str | None = None, **spec: object) -> dict:
    d: dict = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
               "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
                        **spec}}
    if node_name:
        d["spec"]["nodeName"] = node_name
    return d


def cluster() -> list[dict]:
    """n1 (2 cpu, 1.5 used), n2 (4 cpu, 3 used by a low-priority pod), n3 tainted; ``web`` fits
    n1 and n2, ``big`` (priority 1000) needs 2 cpu and preempts ``low2`` on n2, ``huge`` fits nowhere."""
    return [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        node("n1", "2", "a"), node("n2", "4", "b"), node("n3", "8", "b", taint=True),
        pod("low", "1500m", node_name="n1"), pod("low2", "3", node_name="n2"),
        pod("web", "500m"), pod("big", "2", priorityClassName="high"), pod("huge", "64"),
    ]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    p = tmp_path_factory.mktemp("c") / "c.yaml"
    p.write_text(yaml.safe_dump_all(cluster(), sort_keys=False))
    recs: list = []
    result = simulate(load_manifests([str(p)]), on_record=recs.append)
    return result, recs


def test_scheduled_pod_chosen_node_runner_up_and_scores(run) -> None:
    result, _ = run
    ex = explain_pod(result, "default/web")
    assert ex.result == "scheduled" and ex.selected_node == "n2"
    assert (ex.evaluated_nodes, ex.feasible_nodes, ex.total_nodes) == (3, 2, 3)
    by = {n.node: n for n in ex.nodes}
    assert by["n3"].feasible is False and by["n3"].reasons == ["TaintToleration: node(s) had untolerated taint(s)"]
    assert by["n1"].feasible and by["n2"].feasible
    assert ex.runner_up == "n1" and by["n1"].runner_up and by["n2"].selected
    assert by["n2"].rank == 1 and by["n1"].rank == 2
    assert ex.margin == by["n2"].total - by["n1"].total > 0
    # nodes listed best first, rejected last
    assert [n.node for n in ex.nodes] == ["n2", "n1", "n3"]
    for n in (by["n1"], by["n2"]):
        assert n.total == sum(s.weighted for s in n.scores)
        for s in n.scores:
            assert s.weight == ex.weights[s.plugin]
            assert s.weighted == s.normalized * s.weight
            assert 0 <= s.normalized <= 100
    # the weights are the profile's (TaintToleration 3 in the default profile)
    assert ex.weights["TaintToleration"] == 3
    fit = {n.node: next(s for s in n.scores if s.plugin == "NodeResourcesFit") for n in (by["n1"], by["n2"])}
    # LeastAllocated on different free capacity: the raw scores differ
    assert fit["n1"].raw != fit["n2"].raw


def test_preemption_is_recorded_and_explained(run) -> None:
    result, recs = run
    [pre] = result.store.preemptions
    assert (pre.victim, pre.preemptor, pre.node) == ("default/low2", "default/big", "n2")
    assert (pre.victim_priority, pre.preemptor_priority) == (0, 1000)
    history = [r for r in recs if r.pod == "default/big"]
    ex = explain_pod(result, "default/big", history)
    assert ex.result == "scheduled" and ex.selected_node == "n2"
    assert ex.preempted == [pre]
    assert len(ex.history) == 1 and ex.history[0]["result"] == "unschedulable"
    assert ex.history[0]["nominatedNode"] == "n2"
    assert ex.scoring_skipped  # the nominated node alone was evaluated
    victim = explain_pod(result, "default/low2")
    assert victim.result == "preempted" and victim.preempted_by == pre


def test_unschedulable_pod_lists_every_node_with_its_reason(run) -> None:
    result, _ = run
    ex = explain_pod(result, "default/huge")
    assert ex.result == "unschedulable" and ex.selected_node is None and ex.runner_up is None
    assert {n.node: n.reasons for n in ex.nodes} == {
        "n1": ["NodeResourcesFit: Insufficient cpu"], "n2": ["NodeResourcesFit: Insufficient cpu"],
        "n3": ["TaintToleration: node(s) had untolerated taint(s)"]}
    assert ex.message.startswith("0/3 nodes are available")
    assert ex.post_filter["status"]


def test_explain_errors_name_the_reason(run) -> None:
    result, _ = run
    with pytest.raises(InputError, match='"default/nope" is not in the input'):
        explain_pod(result, "default/nope")
    with pytest.raises(InputError, match='already bound to node "n1"'):
        explain_pod(result, "default/low")


def test_pod_summaries_and_report_data(run) -> None:
    result, _ = run
    s = {p.pod: p for p in pod_summaries(result)}
    assert s["default/web"].runner_up == "n1" and s["default/web"].score is not None
    assert s["default/big"].preempted == ["default/low2"]
    assert s["default/huge"].node is None and s["default/huge"].feasible_nodes == 0
    d = report_data(result)
    nodes = {n["name"]: n for n in d["nodes"]}
    # n2 holds web (500m) and big (2): low2 was preempted and holds nothing
    assert nodes["n2"]["requested"]["cpu"] == 2500 and nodes["n2"]["allocatable"]["cpu"] == 4000
    assert nodes["n2"]["utilisation"]["cpu"] == pytest.approx(0.625)
    assert sorted(nodes["n2"]["pods"]) == ["default/big", "default/web"]
    zones = {z["zone"]: z for z in d["zones"]}
    assert zones["b"]["nodes"] == 2 and zones["b"]["allocatable"]["cpu"] == 12000
    assert d["pending"] == [{"reason": s["default/huge"].message, "count": 1, "pods": ["default/huge"]}]
    pods = {p["key"]: p for p in d["pods"]}
    assert pods["default/low2"]["result"] == "preempted"
    assert pods["default/web"]["explanation"]["selected_node"] == "n2"
    assert d["summary"]["preempted"] == 1


def test_report_trims_nodes_but_keeps_chosen_and_runner_up(run) -> None:
    result, _ = run
    d = report_data(result, max_nodes_per_pod=1)
    ex = next(p for p in d["pods"] if p["key"] == "default/web")["explanation"]
    assert [n["node"] for n in ex["nodes"]] == ["n2", "n1"] and ex["nodes_omitted"] == 1


def test_explain_record_without_scores() -> None:
    from kubesched.framework.record import DecisionRecord

    rec = DecisionRecord(pod="ns/p", profile="default-scheduler", attempt=1, time=0.0, selected_node="a",
                         result="scheduled", evaluated_nodes=2, feasible_nodes=1,
                         filter={"a": {"NodeName": "passed"}, "b": {"NodeName": ["node(s) didn't match"]}})
    ex = explain_record(rec, total_nodes=2)
    assert ex.scoring_skipped and ex.runner_up is None
    assert [(n.node, n.feasible, n.total) for n in ex.nodes] == [("a", True, None), ("b", False, None)]
    assert ex.nodes[1].reasons == ["NodeName: node(s) didn't match"]


def test_compact_dict_keeps_scores_aligned_with_plugins(run) -> None:
    result, _ = run
    ex = explain_pod(result, "default/web")
    c = ex.to_compact_dict()
    assert "filter" not in c["nodes"][0]
    for full, small in zip(ex.nodes, c["nodes"]):
        assert small["node"] == full.node and small["total"] == full.total
        by = {s.plugin: [s.raw, s.normalized, s.weighted] for s in full.scores}
        assert small["scores"] == ([by.get(p) for p in c["plugins"]] if full.scores else [])
    json.dumps(c)  # JSON-ready


def test_collector_gives_what_explain_pod_gives(run, tmp_path: Path) -> None:
    """The report's sink (capped explanations built as records arrive, records dropped) agrees
    with explaining from the kept records, history and preemptions included."""
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump_all(cluster(), sort_keys=False))
    col = ExplanationCollector(max_nodes=2)
    res = simulate(load_manifests([str(p)]), on_record=col, keep_records=False)
    assert res.records == {}
    got = col.finish(res)
    result, recs = run
    for key in ("default/web", "default/big", "default/huge"):
        want = explain_pod(result, key, [r for r in recs if r.pod == key], max_nodes=2)
        assert got[key].to_dict() == want.to_dict()
    assert got["default/huge"].nodes_omitted == 1
    assert got["default/huge"].omitted_reasons == {"TaintToleration: node(s) had untolerated taint(s)": 1}


def test_record_pods_limits_recording(tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump_all(cluster(), sort_keys=False))
    seen: list[str] = []
    res = simulate(load_manifests([str(p)]), on_record=lambda r: seen.append(r.pod), keep_records=False,
                   record_pods={"default/big"}.__contains__)
    assert seen == ["default/big", "default/big"]
    assert {o.key: o.node for o in res.outcomes}["default/web"] == "n2"  # same decisions as a full recording


def test_ties_are_counted() -> None:
    from kubesched.framework.record import DecisionRecord

    fin = {"a": {"P": 50}, "b": {"P": 50}, "c": {"P": 40}, "d": {"P": 40}, "e": {"P": 40}}
    rec = DecisionRecord(pod="ns/p", profile="x", attempt=1, time=0.0, selected_node="b", result="scheduled",
                         evaluated_nodes=5, feasible_nodes=5, filter={n: {"F": "passed"} for n in fin},
                         score={n: {"P": v["P"] // 2} for n, v in fin.items()},
                         normalized_score={n: {"P": v["P"] // 2} for n, v in fin.items()}, final_score=fin)
    ex = explain_record(rec)
    assert ex.selected_node == "b" and ex.nodes[0].node == "b" and ex.nodes[0].rank == 1
    assert ex.runner_up == "a" and ex.margin == 0
    assert (ex.selected_ties, ex.runner_up_ties) == (1, 0)
    assert ex.weights == {"P": 2} and ex.nodes[0].scores[0].weight == 2
    rec.selected_node = "a"
    fin["a"] = {"P": 60}
    ex = explain_record(rec)
    assert ex.runner_up == "b" and ex.margin == 10 and (ex.selected_ties, ex.runner_up_ties) == (0, 0)


def test_rejected_nodes_near_misses_first(tmp_path: Path) -> None:
    """An unschedulable pod's capped explanation keeps the nodes that came closest: ten tainted
    nodes (TaintToleration rejects them early) listed before two without room (NodeResourcesFit,
    later in the Filter order, rejects them after TaintToleration passed) — the two are kept,
    the tainted ones summarised."""
    objs = [node(f"t{i}", "64", "a", taint=True) for i in range(10)] + [node("small1", "2", "b"),
                                                                         node("small2", "1", "b")]
    objs.append(pod("wants", "4"))
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    recs: list = []
    result = simulate(load_manifests([str(p)]), on_record=recs.append)
    ex = explain_pod(result, "default/wants", max_nodes=2)
    assert ex.result != "scheduled"
    assert [n.node for n in ex.nodes] == ["small1", "small2"]
    assert all(r.startswith("NodeResourcesFit: Insufficient cpu") for n in ex.nodes for r in n.reasons)
    assert ex.nodes_omitted == 10
    assert ex.omitted_reasons == {"TaintToleration: node(s) had untolerated taint(s)": 10}
