"""What-if analyses (issue #10 §4): ``capacity``, ``simulate --add-nodes``, ``compare``.

Expected numbers are worked out by hand from the inputs (node sizes, requests, the plugins'
rules), not read back from a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.config import decode_config
from kubesched.errors import ManifestError
from kubesched.sim.autoscale import add_nodes, load_node_template
from kubesched.sim.capacity import capacity, format_quantity, load_template_pod
from kubesched.sim.compare import compare
from kubesched.sim.manifests import load_manifests, parse_manifest_text
from kubesched.sim.simulate import simulate

NO_POSTFILTER = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    postFilter:
      disabled: [{name: "*"}]
"""


def scoring(strategy: str) -> Any:
    return decode_config(f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: {strategy}
""")


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", labels: dict | None = None,
         taints: list | None = None) -> dict:
    d: dict[str, Any] = {"apiVersion": "v1", "kind": "Node",
                         "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
                         "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}}
    if taints:
        d["spec"]["taints"] = taints
    return d


def pod(name: str, cpu: str = "1", memory: str = "1Gi", node_name: str | None = None, labels: dict | None = None,
        **spec: Any) -> dict:
    d: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
                         "spec": {"containers": [{"name": "c", "image": "nginx",
                                                  "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
                                  **spec}}
    if node_name:
        d["spec"]["nodeName"] = node_name
    return d


def raws(*docs: dict) -> list:
    return parse_manifest_text(yaml.safe_dump_all(list(docs)), "cluster.yaml")


def template(doc: dict) -> Any:
    return load_template_pod(parse_manifest_text(yaml.safe_dump(doc), "pod.yaml"), "pod.yaml")


def node_template(doc: dict) -> Any:
    return load_node_template(parse_manifest_text(yaml.safe_dump(doc), "node.yaml"), "node.yaml")


# ───────────────────────────── capacity ─────────────────────────────


def test_capacity_three_nodes_of_4_cpu_take_12_one_cpu_replicas() -> None:
    cluster = raws(node("n0"), node("n1"), node("n2"))
    res = capacity(cluster, template(pod("web")))
    assert res.replicas == 12
    assert res.fail_type == "Unschedulable"
    assert res.fail_message.startswith("0/3 nodes are available: 3 Insufficient cpu.")
    assert dict(res.replicas_on_nodes()) == {"n0": 4, "n1": 4, "n2": 4}
    for n in res.nodes:  # 8Gi − 4 × 1Gi memory, 110 − 4 pods, no cpu
        assert n.remaining == {"cpu": 0, "memory": 4 << 30, "pods": 106}
    review = res.to_dict()
    assert review["status"]["replicas"] == 12
    assert review["status"]["failReason"]["failType"] == "Unschedulable"
    assert review["status"]["nodes"][0]["remaining"] == {"cpu": "0", "memory": "4Gi", "pods": "106"}
    assert review["spec"]["podRequirements"][0]["resources"]["primaryResources"] == {"cpu": "1", "memory": "1Gi"}


def test_capacity_respects_the_configuration() -> None:
    # without PostFilter plugins the message is the bare FitError of upstream
    cluster = raws(node("n0"), node("n1"), node("n2"))
    res = capacity(cluster, template(pod("web")), decode_config(NO_POSTFILTER))
    assert res.replicas == 12
    assert res.fail_message == "0/3 nodes are available: 3 Insufficient cpu."


def test_capacity_max_stops_with_limit_reached() -> None:
    res = capacity(raws(node("n0"), node("n1"), node("n2")), template(pod("web")), max_replicas=5)
    assert res.replicas == 5
    assert (res.fail_type, res.fail_message) == ("LimitReached", "Maximum number of pods simulated: 5")


def test_capacity_counts_what_is_already_running_and_pending_pods_first() -> None:
    cluster = raws(node("n0"), node("n1"),
                   pod("running", cpu="2500m", node_name="n0"),   # n0: 1.5 cpu left → 1 replica
                   pod("waiting", cpu="3"))                        # pending: goes to n1 first → 1 left
    res = capacity(cluster, template(pod("web")), decode_config(NO_POSTFILTER))
    assert res.pending_scheduled == 1
    assert dict(res.replicas_on_nodes()) == {"n0": 1, "n1": 1}
    by_name = {n.name: n for n in res.nodes}
    assert by_name["n0"].remaining["cpu"] == 500
    assert by_name["n1"].remaining["cpu"] == 0


def test_capacity_follows_selectors_taints_and_pod_count() -> None:
    cluster = raws(node("a", labels={"disk": "ssd"}), node("b"),
                   node("c", labels={"disk": "ssd"}, taints=[{"key": "x", "effect": "NoSchedule"}]),
                   node("d", labels={"disk": "ssd"}, pods="2"))
    res = capacity(cluster, template(pod("web", cpu="100m", memory="1Mi", nodeSelector={"disk": "ssd"})),
                   decode_config(NO_POSTFILTER))
    # a: 4 cpu / 100m = 40; d: only 2 pods allowed; b has no ssd, c is tainted
    assert dict(res.replicas_on_nodes()) == {"a": 40, "d": 2}
    assert "1 node(s) didn't match Pod's node affinity/selector" in res.fail_message
    assert "1 node(s) had untolerated taint" in res.fail_message
    assert "1 Insufficient cpu" in res.fail_message and "1 Too many pods" in res.fail_message


def test_capacity_with_hostname_anti_affinity_is_one_per_node() -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    res = capacity(raws(node("n0"), node("n1"), node("n2")),
                   template(pod("web", cpu="100m", labels={"app": "web"}, affinity=anti)),
                   decode_config(NO_POSTFILTER))
    assert res.replicas == 3
    assert "didn't match pod anti-affinity rules" in res.fail_message


def test_capacity_replicas_are_named_like_cluster_capacity() -> None:
    cluster = raws(node("n0"), pod("web-1", cpu="1", node_name="n0"))
    with pytest.raises(ManifestError, match="replica name default/web-1 is taken"):
        capacity(cluster, template(pod("web")))


def test_capacity_preempting_replica_reports_nomination_and_ignores_the_victims() -> None:
    cluster = raws(node("n0"),
                   {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                    "value": 1000},
                   pod("low", cpu="2", node_name="n0"))
    res = capacity(cluster, template(pod("web", priorityClassName="high")))
    assert res.replicas == 2                    # 4 − 2 cpu
    assert res.nominated_node == "n0"           # the third replica preempts "low"
    assert res.nodes[0].remaining["cpu"] == 0   # the table is taken before that preemption


def test_capacity_template_errors() -> None:
    with pytest.raises(ManifestError, match="expected exactly one Pod, found 2"):
        load_template_pod(parse_manifest_text(yaml.safe_dump_all([pod("a"), pod("b")]), "p.yaml"), "p.yaml")
    with pytest.raises(ManifestError, match="expected a Pod, found Node n0"):
        template(node("n0"))
    bad = pod("web", cpu="lots")
    with pytest.raises(ManifestError, match=r"requests\[cpu\]"):
        capacity(raws(node("n0")), template(bad))


def test_format_quantity() -> None:
    assert [format_quantity("cpu", v) for v in (0, 2000, 1500)] == ["0", "2", "1500m"]
    assert [format_quantity("memory", v) for v in (4 << 30, 1536 << 20, 1000)] == ["4Gi", "1536Mi", "1000"]
    assert format_quantity("pods", 106) == "106"


# ───────────────────────────── simulate --add-nodes ─────────────────────────────


def test_add_nodes_two_pending_3_cpu_pods_need_two_4_cpu_nodes() -> None:
    result = simulate(raws(node("small", cpu="1"), pod("a", cpu="3"), pod("b", cpu="3")))
    est = add_nodes(result, node_template(node("big")))
    assert est.nodes == ["big-0", "big-1"]
    assert sorted(est.placements) == [("default/a", "big-0"), ("default/b", "big-1")]
    assert est.unplaced == []
    out = {(o["kind"], o["metadata"]["name"]): o for o in result.output_objects()}
    assert out[("Node", "big-1")]["metadata"]["labels"]["kubernetes.io/hostname"] == "big-1"
    assert out[("Pod", "a")]["spec"]["nodeName"] == "big-0"


def test_add_nodes_first_fit_decreasing() -> None:
    # 3 + 1 + 2 + 2 + 1 + 3 cpu on 4-cpu nodes: FFD order 3,3,2,2,1,1 → [3,1] [3,1] [2,2] = 3 nodes
    sizes = {"p0": "3", "p1": "1", "p2": "2", "p3": "2", "p4": "1", "p5": "3"}
    result = simulate(raws(node("tiny", cpu="500m"), *[pod(k, cpu=v, memory="1Mi") for k, v in sizes.items()]))
    est = add_nodes(result, node_template(node("t")))
    assert len(est.nodes) == 3
    on = est.pods_on()
    for pods in on.values():
        assert sum(int(sizes[p.split("/")[1]]) for p in pods) <= 4
    assert est.placements[0] == ("default/p0", "t-0") and est.placements[1] == ("default/p5", "t-1")


def test_add_nodes_reports_pods_the_template_cannot_take_without_adding_nodes_for_them() -> None:
    result = simulate(raws(node("n0", cpu="1"), pod("huge", cpu="64"),
                           pod("picky", nodeSelector={"gpu": "yes"})))
    est = add_nodes(result, node_template(node("big")))
    assert est.nodes == []
    reasons = dict(est.unplaced)
    assert reasons["default/huge"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert reasons["default/picky"] == "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
    assert not any(o["kind"] == "Node" and o["metadata"]["name"].startswith("big")
                   for o in result.output_objects())


def test_add_nodes_hostname_follows_the_new_name() -> None:
    # required anti-affinity on the hostname: one pod per node, possible only if every new node
    # has its own hostname label (the template's "big" would make them one domain)
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    pods = [pod(f"db{i}", cpu="100m", labels={"app": "db"}, affinity=anti) for i in range(3)]
    result = simulate(raws(node("n0", labels={"role": "other"}), pod("fill", cpu="4", node_name="n0"), *pods))
    est = add_nodes(result, node_template(node("big")))
    assert est.nodes == ["big-0", "big-1", "big-2"]
    assert sorted(n for _, n in est.placements) == ["big-0", "big-1", "big-2"]


def test_add_nodes_skips_taken_names_and_leaves_gated_pods() -> None:
    result = simulate(raws(node("big-0", cpu="1"), pod("a", cpu="3"),
                           pod("gated", cpu="3", schedulingGates=[{"name": "wait"}])))
    est = add_nodes(result, node_template(node("big")))
    assert est.nodes == ["big-1"]
    assert est.pending == 1


def _ds_pod(ds: str, node_name: str, cpu: str, **spec: Any) -> dict:
    d = pod(f"{ds}-x1", cpu=cpu, memory="1Mi", node_name=node_name, **spec)
    d["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds, "uid": ds,
                                         "controller": True}]
    d["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}}
    return d


def test_add_nodes_counts_the_daemonset_pods_each_new_node_runs() -> None:
    # two pending 2-cpu pods: one 4-cpu node would do, but every node also runs a 1-cpu
    # DaemonSet pod → 1 + 2 on each of two nodes; the "gpu-agent" DaemonSet only runs on gpu nodes
    cluster = raws(node("n0", cpu="1"), _ds_pod("proxy", "n0", "1"),
                   _ds_pod("gpu-agent", "n0", "100m", nodeSelector={"gpu": "yes"}),
                   pod("a", cpu="2", memory="1Mi"), pod("b", cpu="2", memory="1Mi"))
    result = simulate(cluster)
    est = add_nodes(result, node_template(node("big")))
    assert est.nodes == ["big-0", "big-1"]
    assert est.daemonsets == ["default/proxy"]
    bound = {p.metadata.name: p.spec.node_name for p in result.store.pods.values()}
    assert bound["proxy-big-0"] == "big-0" and bound["proxy-big-1"] == "big-1"
    assert "gpu-agent-big-0" not in bound
    affinity = next(o for o in result.output_objects() if o["metadata"]["name"] == "proxy-big-1")["spec"]["affinity"]
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms[0]["matchFields"][0]["values"] == ["big-1"]


def test_add_nodes_template_errors_name_the_field() -> None:
    with pytest.raises(ManifestError, match=r"status\.allocatable: Required value"):
        node_template({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "t"}})
    with pytest.raises(ManifestError, match=r"status\.allocatable\[cpu\]"):
        node_template(node("t", cpu="four"))
    with pytest.raises(ManifestError, match="expected a Node template, found Pod default/x"):
        node_template(pod("x"))


# ───────────────────────────── compare ─────────────────────────────


def _spread_cluster() -> list:
    return raws(*[node(f"n{i}", labels={"topology.kubernetes.io/zone": f"z{i % 2}"}) for i in range(4)],
                *[pod(f"p{i}", cpu="500m", memory="512Mi") for i in range(6)])


def test_compare_least_vs_most_allocated_places_pods_differently() -> None:
    res = compare(_spread_cluster(), scoring("LeastAllocated"), scoring("MostAllocated"), labels=("least", "most"))
    a, b = res.a, res.b
    assert a.scheduled == b.scheduled == 6 and a.unschedulable == b.unschedulable == 0
    # same total requests: 6 × 500m of 16 cpu
    assert a.utilisation["cpu"] == b.utilisation["cpu"] == pytest.approx(3000 / 16000)
    # LeastAllocated spreads (2,2,1,1), MostAllocated packs one node (6)
    assert a.nodes_used == 4 and a.node_skew == 1
    assert b.nodes_used == 1 and b.node_skew == 6 and b.zone_skew == 6
    assert res.differences
    for d in res.differences:
        assert d.nodes[0] != d.nodes[1]
        if "tie" not in d.why[0]:
            assert "NodeResourcesFit" in d.why[0]
        assert "NodeResourcesFit" in d.why[1]
        mine, other = d.nodes[1], d.nodes[0]
        sb = d.scores[1]
        assert sum(sb[mine].values()) > sum(sb[other].values())


def test_compare_same_configuration_has_no_difference() -> None:
    res = compare(_spread_cluster(), scoring("LeastAllocated"), scoring("LeastAllocated"))
    assert res.differences == []
    assert res.a.to_dict() | {"label": ""} == res.b.to_dict() | {"label": ""}


def test_compare_reports_pods_pending_under_one_profile() -> None:
    # B's Filter set lacks TaintToleration: the pod A leaves pending runs under B
    no_taints = decode_config("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      disabled: [{name: TaintToleration}]
""")
    cluster = raws(node("n0", taints=[{"key": "x", "effect": "NoSchedule"}]), pod("p"))
    res = compare(cluster, None, no_taints)
    assert (res.a.scheduled, res.b.scheduled) == (0, 1)
    [d] = res.differences
    assert d.nodes == (None, "n0")
    assert "untolerated taint" in d.why[0]


def test_compare_pod_for_a_profile_only_one_configuration_has() -> None:
    two = decode_config("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: batch
""")
    res = compare(raws(node("n0"), pod("job", schedulerName="batch")), two, None)
    [d] = res.differences
    assert d.nodes == ("n0", None)
    assert "no profile of this configuration has the pod's schedulerName" in d.why[1]
    with pytest.raises(ManifestError, match='schedulerName "batch", which no profile'):
        capacity(raws(node("n0")), template(pod("job", schedulerName="batch")))


def test_examples_directory_runs(tmp_path: Path) -> None:
    ex = Path(__file__).resolve().parents[2] / "examples" / "whatif"
    cluster = load_manifests([str(ex / "cluster.yaml")])
    res = capacity(cluster, load_template_pod(load_manifests([str(ex / "pod.yaml")]), "pod.yaml"))
    assert res.replicas > 0
