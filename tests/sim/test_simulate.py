"""``kubesched simulate`` end to end: the contract of issue #2 §3, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import main

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def write(tmp_path: Path, name: str, docs: list[dict]) -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return p


def node(name: str, cpu: str = "4", memory: str = "8Gi", labels: dict | None = None, taints: list | None = None,
         unschedulable: bool = False) -> dict:
    d = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
         "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}
    if taints:
        d["spec"]["taints"] = taints
    if unschedulable:
        d["spec"]["unschedulable"] = True
    return d


def pod(name: str, cpu: str = "100m", memory: str = "128Mi", node_name: str | None = None, **spec) -> dict:
    d = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
                                  "resources": {"requests": {"cpu": cpu, "memory": memory}}}], **spec}}
    if node_name:
        d["spec"]["nodeName"] = node_name
    return d


def items_by_name(out: str) -> dict[str, dict]:
    doc = yaml.safe_load(out)
    assert doc["apiVersion"] == "v1" and doc["kind"] == "List"
    return {i["metadata"]["name"]: i for i in doc["items"]}


def test_quickstart_yaml_output_binds_and_explains(tmp_path: Path) -> None:
    code, out, err = run("simulate", "-f", str(QUICKSTART), "-o", "yaml", "--seed", "1")
    assert code == 0, err
    items = items_by_name(out)
    pods = [i for i in items.values() if i["kind"] == "Pod"]
    bound = [p for p in pods if p["spec"].get("nodeName")]
    failed = [p for p in pods if any(c.get("type") == "PodScheduled" and c.get("status") == "False"
                                      and c.get("reason") == "Unschedulable"
                                      for c in (p.get("status") or {}).get("conditions") or [])]
    assert len(bound) > 150
    # the example's README lists the pods that cannot fit anywhere
    assert failed, "the quickstart has pods that cannot fit"
    for p in failed:
        msg = next(c["message"] for c in p["status"]["conditions"] if c["type"] == "PodScheduled")
        assert msg.startswith("0/50 nodes are available: ")
    genome = next(p for p in pods if p["metadata"]["name"].startswith("genome-assembly"))
    assert not genome["spec"].get("nodeName")


def test_same_seed_same_result() -> None:
    a = run("simulate", "-f", str(QUICKSTART), "-o", "json", "--seed", "7")[1]
    b = run("simulate", "-f", str(QUICKSTART), "-o", "json", "--seed", "7")[1]
    assert a == b


def test_placed_pods_affect_later_ones_and_message_format(tmp_path: Path) -> None:
    f = write(tmp_path, "c.yaml", [
        node("n1", cpu="1"), node("n2", cpu="1"),
        node("cp", cpu="8", labels={"node-role.kubernetes.io/control-plane": ""},
             taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]),
        pod("a", cpu="600m"), pod("b", cpu="600m"), pod("c", cpu="600m"),
    ])
    code, out, err = run("simulate", "-f", str(f), "-o", "yaml")
    assert code == 0, err
    items = items_by_name(out)
    assert {items["a"]["spec"].get("nodeName"), items["b"]["spec"].get("nodeName")} == {"n1", "n2"}
    cond = items["c"]["status"]["conditions"][-1]
    assert cond["reason"] == "Unschedulable"
    # DynamicResources' PostFilter runs before DefaultPreemption's; since 1.37 it adds no text
    # for a pod without claims (v1.34: "no new claims to deallocate, preemption: ...")
    assert cond["message"] == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
        "preemption: 0/3 nodes are available: "
        "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.")


def test_priority_class_resolution_orders_the_queue(tmp_path: Path) -> None:
    f = write(tmp_path, "c.yaml", [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        node("n1", cpu="1"),
        pod("low", cpu="1"),
        pod("urgent", cpu="1", priorityClassName="high"),
    ])
    items = items_by_name(run("simulate", "-f", str(f), "-o", "yaml")[1])
    assert items["urgent"]["spec"]["nodeName"] == "n1"
    assert not items["low"]["spec"].get("nodeName")


def test_record_results_annotations(tmp_path: Path) -> None:
    f = write(tmp_path, "c.yaml", [node("n1"), node("n2", unschedulable=True), pod("p")])
    items = items_by_name(run("simulate", "-f", str(f), "-o", "yaml", "--record-results")[1])
    ann = items["p"]["metadata"]["annotations"]
    assert ann["kubesched.io/selected-node"] == "n1"
    filt = json.loads(ann["kubesched.io/filter-result"])
    # v1.37 runs NodeName before NodeUnschedulable (default_plugins.go L37-38); v1.34 the other way round
    assert filt["n2"] == {"NodeName": "passed", "NodeUnschedulable": ["node(s) were unschedulable"]}
    assert all(v == "passed" for v in filt["n1"].values())
    assert list(filt["n1"])[:2] == ["NodeName", "NodeUnschedulable"]  # plugins in the order they ran
    items = items_by_name(run("simulate", "-f", str(f), "-o", "yaml", "--record-results",
                              "--emulated-version", "1.34")[1])
    filt = json.loads(items["p"]["metadata"]["annotations"]["kubesched.io/filter-result"])
    assert filt["n2"] == {"NodeUnschedulable": ["node(s) were unschedulable"]}
    assert list(filt["n1"])[0] == "NodeUnschedulable"
    # one feasible node: no scoring, as upstream
    assert json.loads(ann["kubesched.io/score-result"]) == {}


def test_results_file_streams_every_attempt(tmp_path: Path) -> None:
    f = write(tmp_path, "c.yaml", [node("n1"), node("n2"), pod("p1"), pod("p2", cpu="64")])
    out = tmp_path / "records.jsonl"
    code, _, err = run("simulate", "-f", str(f), "-o", "json", "--results-file", str(out))
    assert code == 0, err
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    by_pod = {r["pod"]: r for r in recs}
    assert by_pod["default/p1"]["result"] == "scheduled"
    assert set(by_pod["default/p1"]["final_score"]) == {"n1", "n2"}
    assert by_pod["default/p2"]["result"] == "unschedulable"
    assert by_pod["default/p2"]["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")


def test_other_scheduler_pods_are_left_alone(tmp_path: Path) -> None:
    f = write(tmp_path, "c.yaml", [node("n1"), pod("mine"), pod("theirs", schedulerName="other")])
    code, out, _ = run("simulate", "-f", str(f), "-o", "table")
    assert code == 0
    assert "default/theirs" in out and "notice: 1 pending pod(s)" in out
    code, out, err = run("simulate", "-f", str(f), "-o", "yaml")
    assert code == 0 and "notice: 1 pending pod(s)" in err and "notice" not in out


@pytest.mark.parametrize(
    ("docs", "needle"),
    [
        ([node("n1"), pod("p", cpu="12x")], "quantities must match the regular expression"),
        ([node("n1"), pod("p", priorityClassName="nope")], "no PriorityClass with name nope was found"),
        ([node("n1"), node("n1")], "duplicate Node n1"),
        ([node("n1"), pod("p", node_name="ghost")], 'bound to node "ghost", which is not in the input'),
    ],
    ids=["bad-quantity", "missing-priorityclass", "duplicate", "unknown-node"],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, docs: list[dict], needle: str) -> None:
    f = write(tmp_path, "bad.yaml", docs)
    code, out, err = run("simulate", "-f", str(f))
    assert code == 2
    assert needle in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "bad.yaml:" in err


def test_malformed_yaml_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "broken.yaml"
    p.write_text("apiVersion: v1\nkind: Node\nmetadata:\n  name: [unclosed\n")
    code, _, err = run("simulate", "-f", str(p))
    assert code == 2 and "broken.yaml:" in err and "Traceback" not in err


def test_invalid_config_and_unknown_plugin(tmp_path: Path) -> None:
    f = write(tmp_path, "c.yaml", [node("n1")])
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    filter:\n"
                   "      enabled:\n      - name: NoSuchPlugin\n")
    code, _, err = run("simulate", "-f", str(f), "--config", str(cfg))
    assert code == 2
    assert 'profiles[0].plugins.filter.enabled[0].name: plugin "NoSuchPlugin" does not exist' in err
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "percentageOfNodesToScore: 101\n")
    code, _, err = run("simulate", "-f", str(f), "--config", str(cfg))
    assert code == 2 and "percentageOfNodesToScore" in err


def test_preemption_completes_in_one_run(tmp_path: Path) -> None:
    """A high-priority pod preempts a low-priority one; its victims' deletion (an event that
    arrives during its own cycle) requeues it, and it lands on the nominated node. A
    lower-priority pod arriving after it cannot take the freed space (nominated pods count)."""
    f = write(tmp_path, "c.yaml", [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
        node("n1", cpu="1"),
        pod("victim", cpu="800m", node_name="n1", priorityClassName="low"),
        pod("vip", cpu="800m", priorityClassName="high"),
    ])
    code, out, err = run("simulate", "-f", str(f), "-o", "yaml", "--record-results")
    assert code == 0, err
    items = items_by_name(out)
    assert "victim" not in items  # deleted by preemption
    assert items["vip"]["spec"]["nodeName"] == "n1"
    # v1.35+ kube-apiserver (ClearingNominatedNodeNameAfterBinding): the binding clears the nomination
    assert not items["vip"]["status"].get("nominatedNodeName")


def test_nominated_pod_holds_its_node(tmp_path: Path) -> None:
    from kubesched.api.objects import Node, Pod, decode
    from kubesched.framework.node_info import PodInfo
    from kubesched.sim.manifests import load_manifests
    from kubesched.sim.simulate import simulate

    f = write(tmp_path, "c.yaml", [
        node("n1", cpu="1"),
        # nominated to n1 by an earlier preemption, not yet scheduled; priority 100
        {**pod("nominee", cpu="800m", priority=100), "status": {"nominatedNodeName": "n1"}},
    ])
    raws = load_manifests([str(f)])
    res = simulate(raws)
    store, sched = res.store, res.scheduler
    assert store.pods["default/nominee"].spec.node_name == "n1"
    # now a nominated high-priority pod that cannot be placed yet blocks a lower one
    store.add("Node", decode(Node, node("n2", cpu="1")))
    blocker = decode(Pod, {**pod("big", cpu="800m", priority=100), "status": {"nominatedNodeName": "n2"}})
    small = decode(Pod, pod("small", cpu="800m", priority=1))
    sched.queue.add_nominated_pod(PodInfo(blocker), "n2")
    store.add("Pod", small)
    a = sched.schedule_one()
    assert a.pod_key == "default/small" and a.result == "unschedulable"
    assert "2 Insufficient cpu" in a.message


def test_objects_without_a_typed_view_reach_the_plugins(tmp_path: Path) -> None:
    """PersistentVolumes/Claims in the input are visible to VolumeBinding through the lister: a
    pod whose bound claim's PV is pinned to zone b lands in zone b."""
    docs = [node("n1", labels={"topology.kubernetes.io/zone": "a"}),
            node("n2", labels={"topology.kubernetes.io/zone": "b"}),
            {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
             "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "local": {"path": "/mnt"},
                      "claimRef": {"namespace": "default", "name": "data"},
                      "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                          {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]}]}}}},
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": "data", "namespace": "default",
                          "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
             "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": "pv1",
                      "resources": {"requests": {"storage": "1Gi"}}},
             "status": {"phase": "Bound"}},
            pod("db", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])]
    items = items_by_name(run("simulate", "-f", str(write(tmp_path, "c.yaml", docs)), "-o", "yaml")[1])
    assert items["db"]["spec"]["nodeName"] == "n2"
    assert items["data"]["kind"] == "PersistentVolumeClaim"  # passed through unchanged


def test_out_of_tree_python_plugin_loads_without_rebuilding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO))
    f = write(tmp_path, "c.yaml", [
        node("plain"), node("preferred", labels={"example.com/preferred": "true"}),
        node("draining", labels={"example.com/preferred": "true", "example.com/draining": "true"}),
        pod("p"),
    ])
    cfg = REPO / "examples" / "plugins" / "prefer-labelled.yaml"
    code, out, err = run("simulate", "-f", str(f), "--config", str(cfg), "-o", "yaml", "--record-results",
                         "--plugin", "PreferLabelled=examples.plugins.prefer_labelled:new")
    assert code == 0, err
    p = items_by_name(out)["p"]
    assert p["spec"]["nodeName"] == "preferred"
    ann = p["metadata"]["annotations"]
    assert json.loads(ann["kubesched.io/filter-result"])["draining"]["PreferLabelled"] == ["node(s) are draining"]
    assert json.loads(ann["kubesched.io/finalscore-result"])["preferred"]["PreferLabelled"] == 500
    # without --plugin the profile names an unknown plugin: one clear error
    code, _, err = run("simulate", "-f", str(f), "--config", str(cfg))
    assert code == 2 and 'plugin "PreferLabelled" does not exist' in err
    # a bad reference is one clear error too
    code, _, err = run("simulate", "-f", str(f), "--config", str(cfg), "--plugin", "PreferLabelled=nope.mod:new")
    assert code == 2 and "cannot load plugin 'PreferLabelled'" in err


def test_deleted_pods_leave_the_output_other_objects_of_the_same_name_stay(tmp_path: Path) -> None:
    f = write(tmp_path, "c.yaml", [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        node("n1", cpu="1"),
        pod("victim", cpu="800m", node_name="n1"),
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "victim", "namespace": "default"},
         "spec": {"selector": {"app": "victim"}, "ports": [{"port": 80}]}},
        pod("vip", cpu="800m", priorityClassName="high"),
    ])
    out = yaml.safe_load(run("simulate", "-f", str(f), "-o", "yaml")[1])
    kinds = {(i["kind"], i["metadata"]["name"]) for i in out["items"]}
    assert ("Pod", "victim") not in kinds  # preempted
    assert ("Service", "victim") in kinds


def test_unchanged_failure_condition_sends_no_update_so_simulate_terminates(tmp_path) -> None:
    """Upstream ``updatePod``: when the PodScheduled condition (status, reason, message) and the
    nomination are unchanged, no patch is sent, so no pod update event follows. A Filter plugin
    without ``events_to_register`` is woken by every event; were the unchanged condition written
    again, its own update would requeue the pod forever."""
    import yaml as _yaml

    from kubesched.config import decode_config
    from kubesched.framework.interface import Code, Status
    from kubesched.plugins.registry import in_tree_registry
    from kubesched.sim.manifests import load_manifests
    from kubesched.sim.simulate import simulate
    from kubesched.testing.wrappers import MakeNode, MakePod

    cfg = decode_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {
            "multiPoint": {"disabled": [{"name": "*"}]},
            "queueSort": {"enabled": [{"name": "PrioritySort"}]},
            "bind": {"enabled": [{"name": "DefaultBinder"}]},
            "filter": {"enabled": [{"name": "Never"}]}}}]})

    class Never:
        name = "Never"
        calls = 0

        def filter(self, state, pod, ni):
            Never.calls += 1
            assert Never.calls < 100, "the pod is requeued by its own unchanged condition"
            return Status.of(Code.UNSCHEDULABLE, "no")

    objs = [MakeNode().name(f"node-{i}").raw() for i in range(3)] + [MakePod().name("p").uid("p").raw()]
    f = tmp_path / "c.yaml"
    f.write_text(_yaml.safe_dump_all(objs))
    res = simulate(load_manifests([str(f)]), cfg, registry={**in_tree_registry(), "Never": lambda a, h: Never()})
    (outcome,) = res.outcomes
    assert outcome.node is None and outcome.message == "0/3 nodes are available: 3 no."


def test_nominated_pod_counts_in_filter_but_not_in_score(tmp_path: Path) -> None:
    """Upstream ``RunFilterPluginsWithNominatedPods`` (pkg/scheduler/framework/runtime/framework.go)
    adds pending pods nominated to a node, of priority ≥ the pod's, to that node's NodeInfo for
    **Filter only**; Score sees the node without them. Found by tools/upstream/diff.py (seed 155):
    with a nominated preemptor pending on node ``a``, kube-scheduler v1.34 still ranks ``a`` as
    the emptiest node for a small pod and binds it there."""
    from kubesched.api.objects import Pod, decode
    from kubesched.framework.node_info import PodInfo
    from kubesched.sim.manifests import load_manifests
    from kubesched.sim.simulate import simulate

    f = write(tmp_path, "c.yaml", [node("a", cpu="4"), node("b", cpu="4"),
                                   pod("on-b", cpu="2", node_name="b", priority=1)])
    res = simulate(load_manifests([str(f)]))
    store, sched = res.store, res.scheduler
    nominee = decode(Pod, {**pod("nominee", cpu="2", priority=100), "status": {"nominatedNodeName": "a"}})
    sched.queue.add_nominated_pod(PodInfo(nominee), "a")
    # Filter: a has 4 - 2 (nominated) = 2 cpu free, enough for 1; Score (LeastAllocated +
    # BalancedAllocation): a counts as empty, so it beats b (2 cpu used)
    store.add("Pod", decode(Pod, pod("small", cpu="1", priority=1)))
    a = sched.schedule_one()
    assert (a.pod_key, a.result) == ("default/small", "scheduled")
    store.flush()
    assert store.pods["default/small"].spec.node_name == "a"
    # Filter does count it: 2.5 cpu would fit a's 3 free cpu, but not with the nominated 2;
    # b has 2 free (and no lower-priority victim)
    store.add("Pod", decode(Pod, pod("big", cpu="2500m", priority=1)))
    a = sched.schedule_one()
    assert a.pod_key == "default/big" and a.result == "unschedulable"
    assert a.message == "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: " \
        "2 No preemption victims found for incoming pod."
