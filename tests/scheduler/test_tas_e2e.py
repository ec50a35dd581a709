"""Topology-aware workload placement end to end (issue 15 item 2): ``kubesched simulate`` with
GenericWorkload and TopologyAwareWorkloadScheduling places a gang whose PodGroup asks for
``schedulingConstraints.topology[{key: rack}]`` inside one rack (upstream v1.37.2
schedule_one_podgroup.go podGroupSchedulingPlacementAlgorithm: one placement per rack, each
dry-run, the feasible ones scored by NodeResourcesFit's MostAllocated placement score +
PodGroupPodsCount, the best kept).

Each case runs twice: on the simulator's store directly and through ``simulate``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import main

GATES = "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"
RACKS = ("r1", "r2", "r3", "r4")


def node(name: str, rack: str, cpu: str = "8") -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "rack": rack}},
            "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def pod(name: str, cpu: str, node_name: str | None = None, group: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "trainer:1",
                                  "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}
    if node_name:
        spec["nodeName"] = node_name
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def pod_group(name: str, min_count: int, key: str = "rack") -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}},
                     "schedulingConstraints": {"topology": [{"key": key}]}}}


def simulate(tmp_path: Path, docs: list[dict]) -> dict[str, dict]:
    """``kubesched simulate -f <docs> -o yaml``: the pods of the output by name."""
    f = tmp_path / "cluster.yaml"
    f.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    r = CliRunner().invoke(main, ["simulate", "-f", str(f), "-o", "yaml", "--seed", "1", "--feature-gates", GATES],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    return {i["metadata"]["name"]: i for i in yaml.safe_load(r.stdout)["items"] if i["kind"] == "Pod"}


def in_store(tmp_path: Path, docs: list[dict]) -> dict[str, dict]:
    """The same cluster run by a Scheduler on the simulator's store directly (PodGroups through
    ``put_object``, independent of ``simulate``'s manifest loading): the pods by name, as
    ``{"spec": {"nodeName": …}}``."""
    from kubesched.api import objects as o
    from kubesched.features import FeatureGate
    from kubesched.scheduler import Scheduler
    from kubesched.sim.store import ClusterStore

    store = ClusterStore()
    sched = Scheduler(client=store, lister=store, seed=1, features=FeatureGate(
        overrides={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}))
    store.scheduler = sched
    for d in docs:
        if d["kind"] == "Node":
            store.add("Node", o.decode(o.Node, d), d)
    for d in docs:
        if d["kind"] == "PodGroup":
            store.put_object("PodGroup", d)
    store.flush()
    for d in docs:
        if d["kind"] == "Pod":
            store.add("Pod", o.decode(o.Pod, d), d)
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    return {key.split("/", 1)[1]: {"spec": {"nodeName": p.spec.node_name}} for key, p in store.pods.items()}


@pytest.fixture(params=[in_store, simulate], ids=["store", "simulate"])
def run(request: pytest.FixtureRequest):  # noqa: ANN201
    return request.param


def cluster() -> list[dict]:
    """4 racks × 4 nodes of 8 cpu, named ``<rack>-n<i>``."""
    return [node(f"{rack}-n{i}", rack) for rack in RACKS for i in range(4)]


def rack_of(name: str) -> str:
    return name.split("-")[0]


def test_gang_lands_in_the_only_rack_that_holds_it(tmp_path: Path, run) -> None:  # noqa: ANN001
    # every rack but r3 has a node already full: a gang of 4 × 6 cpu (one per node) fits only in r3
    busy = [pod(f"busy-{rack}", "7", node_name=f"{rack}-n0") for rack in RACKS if rack != "r3"]
    workers = [pod(f"worker-{i}", "6", group="train") for i in range(4)]
    pods = run(tmp_path, [*cluster(), *busy, pod_group("train", 4), *workers])
    nodes = [pods[f"worker-{i}"]["spec"].get("nodeName") for i in range(4)]
    assert all(nodes), nodes
    assert {rack_of(n) for n in nodes} == {"r3"}
    assert len(set(nodes)) == 4


def test_gang_prefers_the_fuller_feasible_rack(tmp_path: Path, run) -> None:  # noqa: ANN001
    # racks r1 and r2 both hold the gang (2 × 4 cpu per node fit next to 2 cpu); r2 is more allocated:
    # NodeResourcesFit's placement score (MostAllocated over the rack) picks it, PodGroupPodsCount ties;
    # r3 and r4 cannot hold 4 members (3 nodes full)
    busy = [pod(f"busy-r2-{i}", "2", node_name=f"r2-n{i}") for i in range(4)]
    busy += [pod(f"full-{rack}-{i}", "8", node_name=f"{rack}-n{i}") for rack in ("r3", "r4") for i in range(1, 4)]
    workers = [pod(f"worker-{i}", "4", group="train") for i in range(4)]
    pods = run(tmp_path, [*cluster(), *busy, pod_group("train", 4), *workers])
    nodes = [pods[f"worker-{i}"]["spec"].get("nodeName") for i in range(4)]
    assert all(nodes), nodes
    assert {rack_of(n) for n in nodes} == {"r2"}


def test_gang_that_fits_no_single_rack_stays_pending(tmp_path: Path, run) -> None:  # noqa: ANN001
    # 16 free nodes, but a rack has 4: a gang of 5 × 6 cpu fits the cluster and no rack → none bound
    workers = [pod(f"worker-{i}", "6", group="train") for i in range(5)]
    pods = run(tmp_path, [*cluster(), pod_group("train", 5), *workers])
    assert all(not pods[f"worker-{i}"]["spec"].get("nodeName") for i in range(5))
